"""Shared fixtures: the built-in catalog and rules are loaded once per session."""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from advisor.cli import main
from advisor.data.catalog import load_catalog
from advisor.data.rules import load_rules

# Property tests run a fixed, derandomized set of examples, so CI takes a bounded time and fails the
# same way twice; HYPOTHESIS_PROFILE=long runs many more (bench/, or by hand before a release).
settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None, database=None,
                          suppress_health_check=list(HealthCheck))
settings.register_profile("long", derandomize=False, max_examples=2_000, deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
AS_OF = dt.date(2026, 12, 1)


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(scope="session")
def rules():
    return load_rules()


@pytest.fixture(scope="session")
def plan_validator():
    """A validator for `advisor schema --output plan` (the JSON Schema of `plan --format json`)."""
    import jsonschema

    out = CliRunner().invoke(main, ["schema", "--output", "plan"])
    assert out.exit_code == 0, out.stderr
    schema = json.loads(out.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture
def run():
    """Invoke the CLI; returns (exit code, stdout, stderr)."""
    def invoke(*args):
        result = CliRunner().invoke(main, [str(a) for a in args])
        return result.exit_code, result.stdout, result.stderr
    return invoke


@pytest.fixture
def run_json(run):
    def invoke(*args):
        code, out, err = run(*args, "--format", "json")
        assert code in (0, 3), err
        return code, json.loads(out)
    return invoke


@pytest.fixture
def write(tmp_path):
    """Write a YAML (or any text) file and return its path."""
    def make(text: str, name: str = "workload.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return make
