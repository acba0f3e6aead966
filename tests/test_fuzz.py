"""Fuzzing `advisor plan` with random workload documents (hypothesis).

Each document starts from the fields of a real workload; every field is left out, given a sensible
value or given anything at all (NaN, huge integers, nested lists, text, null, mappings), unknown keys
and keys that are not text are added, and the YAML text itself may then be cut, spliced with tabs,
anchors, tags, NUL bytes or control characters. Whatever comes in, the CLI must exit 0, 2 or 3: a
plan, a clear error naming the file, or a diagnosis; never a traceback or an internal error.

Marked slow (`pytest -m "not slow"` skips them). Their example counts follow the hypothesis profile
(tests/conftest.py: "ci" by default, derandomized, 40 + 10 documents; HYPOTHESIS_PROFILE=long for
thousands); bench/fuzz.py runs 10,000 (results in docs/fuzz.md).
"""
from __future__ import annotations

import collections
import datetime as dt
import json
import os
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import AS_OF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.cli import main

GPUS = ["rtx-4090", "a100-80gb-sxm", "h100-sxm", "l4", "mi300x", "h20"]   # ids the catalog may lack, too
PRESETS = ["gpt2-124m", "gpt2-350m", "gpt2-774m", "llama-3-8b"]
NASTY_TEXT = ["", " ", "10B", "1e400", "-5", "0", "nan", "inf", "-inf", "7d", "0h", "3.6kW", "1,000", "1_0B",
              "10 B", "$30K", "h100-sxm", "H100", "office", "gpt2-124m", "yes", "null", "~", "[", "{a: 1}",
              "ünïcødé", "\u202e", "x" * 300, "%s%n", "${HOME}", "$(rm -rf /)", "`id`", "__import__('os')"]

leaves = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-10, max_value=10**6), st.integers(), st.sampled_from([10**40, -(10**400), 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(NASTY_TEXT), st.text(max_size=12),
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
)
anything = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)


def workloads(wild: bool):
    """Workload documents; with `wild`, any field may hold anything at all."""
    def field(good):
        return st.one_of(good, good, anything) if wild else good

    def fields(required: dict, optional: dict):
        return st.fixed_dictionaries({k: field(v) for k, v in required.items()},
                                     optional={k: field(v) for k, v in optional.items()})

    model = st.one_of(st.sampled_from(PRESETS), fields(
        {"params": st.sampled_from(["124M", "350M", "1.3B", "7B", 5e8])},
        {"layers": st.integers(1, 96), "hidden": st.sampled_from([768, 1024, 4096]),
         "seq_len": st.sampled_from([512, 1024, 2048]), "heads": st.sampled_from([12, 16, 32])}))
    job = {"model": model, "tokens": st.sampled_from(["100M", "1B", "10B", "50B", 2e9])}
    job_optional = {
        "name": st.sampled_from(["pretrain", "finetune", "a", "b"]),
        "kind": st.sampled_from(["pretrain", "finetune", "lora"]),
        "precision": st.sampled_from(["bf16", "fp16", "fp8"]),
        "deadline": st.sampled_from(["12h", "1d", "3d", "7d", "2w", "30d"]),
        "micro_batch": st.sampled_from([1, 4, 16]),
        "checkpointing": st.booleans(),
        "global_batch_tokens": st.sampled_from(["512K", "1M", "4M"]),
        "seq_len": st.sampled_from([1024, 2048]),
        "optimizer": st.sampled_from(["adamw", "adamw-8bit"]),
    }
    deployment = st.one_of(st.sampled_from(["office", "datacenter", "cloud"]), fields(
        {"context": st.sampled_from(["office", "datacenter", "cloud"])},
        {"region": st.sampled_from(["US", "DE", "CN", "us", "ZZ", "USA", "\u0423\u0405", "\uff35\uff33", "HK"]), "ownership": st.sampled_from(["buy", "rent", "any"]),
         "power_limit_kw": st.sampled_from([3.6, "1500W", "2kW", 50]), "electricity_usd_per_kwh": st.just(0.15),
         "pue": st.sampled_from([1.1, 1.5]), "hosting_usd_per_kw_month": st.just(150.0),
         "horizon_months": st.sampled_from([12, 36])}))
    gpus = st.one_of(st.integers(1, 16), fields({}, {
        "count": st.integers(1, 16), "min": st.integers(1, 8), "max": st.integers(1, 64),
        "allow": st.lists(st.sampled_from(GPUS), min_size=1, max_size=3, unique=True),
        "deny": st.lists(st.sampled_from(GPUS), max_size=2, unique=True)}))
    return st.one_of(
        fields({"deployment": deployment, **job},
               {"name": st.just("fuzz"), "gpus": gpus, "budget_usd": st.sampled_from([5000, "50K", "$1M"]),
                **job_optional}),
        fields({"deployment": deployment, "jobs": st.lists(fields(job, job_optional), min_size=1, max_size=3)},
               {"gpus": gpus, "budget_usd": st.sampled_from([20000, "200K"])}),
    )


odd_keys = st.dictionaries(st.one_of(st.sampled_from(["deadlin", "gpu", "modle", "jobs ", "Deployment"]),
                                     st.integers(), st.booleans(), st.none(), st.text(max_size=6)),
                           anything, max_size=2)
SPLICES = ["\t", ": ", "- ", "&a ", "*a", "*nope", "<<: *a\n", "!!python/object/apply:os.system ['id'] ",
           "!custom ", "\x00", "\x07", "\ufeff", "\n---\n", "{", "]", "'", '"', "#", "\n  ", "? ", "%YAML 1.1\n"]
edits = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPLICES + ["<cut>"])), max_size=3)


def render(doc: dict, extra: dict, cuts: list) -> bytes:
    """The document as YAML text, with `extra` keys added and `cuts` applied to the text."""
    text = yaml.safe_dump({**doc, **extra}, allow_unicode=True, sort_keys=False, width=10**6)
    for position, splice in cuts:
        at = position % (len(text) + 1)
        text = text[:at] + text[at + 1 + position % 7:] if splice == "<cut>" else text[:at] + splice + text[at:]
    return text.encode("utf-8", "surrogatepass")


exit_codes: collections.Counter = collections.Counter()


def check(data: bytes) -> int:
    """Run `advisor plan` on `data`; assert the exit contract. Returns the exit code."""
    fd, name = tempfile.mkstemp(prefix="advisor-fuzz-", suffix=".yaml")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        result = CliRunner().invoke(main, ["plan", name, "--format", "json", "--as-of", str(AS_OF),
                                           "--time-limit", "10"])
    finally:
        path.unlink()
    out, err = result.stdout, result.stderr
    exit_codes[result.exit_code] += 1
    assert result.exit_code in (0, 2, 3), f"exit {result.exit_code}: {err or result.exception!r}"
    assert "Traceback" not in out + err and "internal error" not in err
    if result.exit_code == 2:   # one line per mistake, each naming the file
        assert err and out == "" and all(line.startswith(f"error: {path}: ") for line in err.splitlines()), err
    else:
        assert (json.loads(out)["status"] == "infeasible") == (result.exit_code == 3)
    return result.exit_code


# A case is (document, extra keys, text edits): wild ones test the error paths; sane ones, with sensible
# values only, are mostly valid, so that the plan path itself (estimate, rules, MILP, explanations) is fuzzed.
wild = st.tuples(workloads(wild=True), odd_keys, edits)
sane = st.tuples(workloads(wild=False), st.just({}), st.just([]))
FUZZ = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


# CI's share of the fuzzing stays small ("ci" profile, 25: 40 wild and 10 sane documents, about a
# minute of CPU, so the whole CI fits in 10 minutes on a busy 2-core machine); the long runs are
# HYPOTHESIS_PROFILE=long (3,200 and 800) and bench/fuzz.py (10,000).
WILD_EXAMPLES = settings.default.max_examples * 8 // 5
SANE_EXAMPLES = settings.default.max_examples * 2 // 5


@pytest.mark.slow
@settings(max_examples=WILD_EXAMPLES, **FUZZ)
@given(case=wild)
def test_random_workloads_exit_0_2_or_3_never_a_traceback(case):
    check(render(*case))


@pytest.mark.slow
@settings(max_examples=SANE_EXAMPLES, **FUZZ)
@given(case=sane)
def test_well_formed_random_workloads_reach_the_solver(case):
    check(render(*case))
