"""Workload files: units, shorthand, presets and the errors a user sees."""
from __future__ import annotations

import pytest

from advisor.errors import InputError
from advisor.inputs import units
from advisor.inputs.workload import parse_workload


@pytest.mark.parametrize("text,value", [("124M", 124e6), ("10B", 1e10), ("1T", 1e12), ("2.5K", 2500),
                                        (1000, 1000), ("10_000", 10000)])
def test_counts(text, value):
    assert units.parse_count(text) == value


@pytest.mark.parametrize("text,hours", [("36h", 36), ("7d", 168), ("2w", 336), ("1.5d", 36)])
def test_durations(text, hours):
    assert units.parse_duration_hours(text) == hours


@pytest.mark.parametrize("text,kw", [("3.6kW", 3.6), ("1500W", 1.5), (2, 2.0), ("1MW", 1000)])
def test_power(text, kw):
    assert units.parse_power_kw(text) == kw


@pytest.mark.parametrize("bad", ["10X", "-5B", "0", "nan", "1e400", "ten"])
def test_bad_counts_refused(bad):
    with pytest.raises(ValueError):
        units.parse_count(bad)


def test_duration_needs_a_unit():
    with pytest.raises(ValueError, match="needs a unit"):
        units.parse_duration_hours(7)


def test_shorthand_expands_to_one_job():
    wl = parse_workload({"deployment": "datacenter", "model": "gpt2-124m", "tokens": "10B", "deadline": "7d",
                         "gpus": 8})
    assert wl.deployment.context == "datacenter" and wl.deployment.region == "US"
    assert len(wl.jobs) == 1 and wl.jobs[0].tokens == 1e10 and wl.jobs[0].deadline == 168
    assert wl.gpus.count == 8 and wl.gpus.lower == wl.gpus.upper == 8


def test_explicit_jobs_and_shape():
    wl = parse_workload({"deployment": {"context": "office", "power_limit_kw": "3.6kW", "region": "de"},
                         "jobs": [{"name": "a", "model": {"params": "7B", "layers": 32, "hidden": 4096},
                                   "tokens": "1T", "kind": "finetune"}]})
    assert wl.deployment.power_limit_kw == 3.6 and wl.deployment.region == "DE"
    assert wl.jobs[0].model.params == 7e9 and wl.jobs[0].kind == "finetune"


def test_shorthand_and_jobs_together_refused():
    with pytest.raises(InputError, match="not both"):
        parse_workload({"deployment": "office", "model": "gpt2-124m", "tokens": "1B",
                        "jobs": [{"model": "gpt2-124m", "tokens": "1B"}]}, "w.yaml")


@pytest.mark.parametrize("doc,field,words", [
    ({"deployment": "office", "model": "gpt2-124m", "tokens": "10B", "deadlin": "7d"}, "deadlin", "did you mean deadline"),
    ({"deployment": {"context": "office", "regon": "US"}, "model": "gpt2-124m", "tokens": "1B"},
     "deployment.regon", "did you mean region"),
    ({"deployment": "office", "model": "gpt2-124m", "tokens": "10Q"}, "tokens", "unknown unit"),
    ({"deployment": "spaceship", "model": "gpt2-124m", "tokens": "1B"}, "deployment", "office"),
    ({"deployment": "office", "model": "gpt2-124m", "tokens": "1B", "gpus": {"min": 9, "max": 2}}, "gpus",
     "above max"),
    ({"model": "gpt2-124m", "tokens": "1B"}, "deployment", "required"),
    ({"deployment": "office", "model": "gpt2-124m", "tokens": "1B", "gpus": 1000000}, "gpus", "less than"),
])
def test_errors_name_file_field_and_what_is_allowed(doc, field, words):
    with pytest.raises(InputError) as info:
        parse_workload(doc, "w.yaml")
    assert info.value.field == field
    assert str(info.value).startswith("w.yaml")
    assert words in str(info.value)


def test_schema_lists_fields(run):
    import json
    code, out, _ = run("schema")
    schema = json.loads(out)
    assert code == 0 and {"deployment", "jobs", "gpus", "budget_usd"} <= set(schema["properties"])
