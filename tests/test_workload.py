"""Workload files: units, shorthand, presets and the errors a user sees."""

from __future__ import annotations

import pytest

from advisor.errors import InputError
from advisor.inputs import units
from advisor.inputs.workload import parse_workload


@pytest.mark.parametrize(
    "text,value", [("124M", 124e6), ("10B", 1e10), ("1T", 1e12), ("2.5K", 2500), (1000, 1000), ("10_000", 10000)]
)
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
    wl = parse_workload(
        {"deployment": "datacenter", "model": "gpt2-124m", "tokens": "10B", "deadline": "7d", "gpus": 8}
    )
    assert wl.deployment.context == "datacenter" and wl.deployment.region == "US"
    assert len(wl.jobs) == 1 and wl.jobs[0].tokens == 1e10 and wl.jobs[0].deadline == 168
    assert wl.gpus.count == 8 and wl.gpus.lower == wl.gpus.upper == 8


def test_explicit_jobs_and_shape():
    wl = parse_workload(
        {
            "deployment": {"context": "office", "power_limit_kw": "3.6kW", "region": "de"},
            "jobs": [
                {
                    "name": "a",
                    "model": {"params": "7B", "layers": 32, "hidden": 4096},
                    "tokens": "1T",
                    "kind": "finetune",
                }
            ],
        }
    )
    assert wl.deployment.power_limit_kw == 3.6 and wl.deployment.region == "DE"
    assert wl.jobs[0].model.params == 7e9 and wl.jobs[0].kind == "finetune"


def test_shorthand_and_jobs_together_refused():
    with pytest.raises(InputError, match="not both"):
        parse_workload(
            {
                "deployment": "office",
                "model": "gpt2-124m",
                "tokens": "1B",
                "jobs": [{"model": "gpt2-124m", "tokens": "1B"}],
            },
            "w.yaml",
        )


@pytest.mark.parametrize(
    "doc,field,words",
    [
        (
            {"deployment": "office", "model": "gpt2-124m", "tokens": "10B", "deadlin": "7d"},
            "deadlin",
            "did you mean deadline",
        ),
        (
            {"deployment": {"context": "office", "regon": "US"}, "model": "gpt2-124m", "tokens": "1B"},
            "deployment.regon",
            "did you mean region",
        ),
        ({"deployment": "office", "model": "gpt2-124m", "tokens": "10Q"}, "tokens", "unknown unit"),
        ({"deployment": "spaceship", "model": "gpt2-124m", "tokens": "1B"}, "deployment", "office"),
        (
            {"deployment": "office", "model": "gpt2-124m", "tokens": "1B", "gpus": {"min": 9, "max": 2}},
            "gpus",
            "above max",
        ),
        ({"model": "gpt2-124m", "tokens": "1B"}, "deployment", "required"),
        ({"deployment": "office", "model": "gpt2-124m", "tokens": "1B", "gpus": 1000000}, "gpus", "less than"),
    ],
)
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


# ------------------------------------------------------------------ in the user's own words (issue 32 item 5)


def _wl(**fields):
    doc = {"deployment": "office", "model": "gpt2-124m", "tokens": "10B"}
    doc.update(fields)
    return parse_workload(doc, "w.yaml")


def test_thirty_days():
    assert _wl(deadline="30 days").jobs[0].deadline == 720
    assert _wl(deadline="2 weeks").jobs[0].deadline == 336 and _wl(deadline="36 hours").jobs[0].deadline == 36


def test_one_trillion_and_seven_billion():
    assert _wl(tokens="1 trillion").jobs[0].tokens == 1e12
    assert _wl(tokens="7 billion").jobs[0].tokens == 7e9
    assert _wl(model={"params": "7 billion", "layers": 32, "hidden": 4096}).jobs[0].model.params == 7e9


def test_ten_k_and_ten_thousand_dollars():
    assert _wl(tokens="10k").jobs[0].tokens == 10_000
    assert _wl(budget_usd="$10k").budget_usd == 10_000 and _wl(budget_usd="$10,000").budget_usd == 10_000


def test_bf16_in_capitals():
    assert _wl(precision="BF16").jobs[0].precision == "bf16"
    assert _wl(kind="Fine-Tune").jobs[0].kind == "finetune"


def test_datacentre_and_other_spellings_of_an_enum():
    assert _wl(deployment="datacentre").deployment.context == "datacenter"
    assert _wl(deployment="Data Center").deployment.context == "datacenter"
    wl = _wl(deployment={"context": "datacenter", "ownership": "Buy", "rent_kinds": ["On-Demand", "reserved 1y"]})
    assert wl.deployment.ownership == "buy" and wl.deployment.rent_kinds == ["on_demand", "reserved_1y"]


def test_uk_is_gb():
    assert _wl(deployment={"context": "office", "region": "UK"}).deployment.region == "GB"
    assert _wl(deployment={"context": "office", "region": "uk"}).deployment.region == "GB"


def test_an_enum_typo_still_fails_and_names_the_near_value():
    with pytest.raises(InputError) as info:
        _wl(deployment={"context": "offise", "ownership": "byu"})
    assert [e.field for e in info.value.errors] == ["deployment.context", "deployment.ownership"]
    assert "did you mean office?" in str(info.value) and "did you mean buy?" in str(info.value)


@pytest.fixture(scope="module")
def known():
    from advisor.api import known_ids

    return known_ids()


def test_gpu_names_as_people_write_them(known):
    def allow(*names):
        return parse_workload(
            {"deployment": "datacenter", "model": "gpt2-124m", "tokens": "1B", "gpus": {"allow": list(names)}},
            "w.yaml",
            known=known,
        ).gpus.allow

    assert allow("H100-SXM", "RTX4090", "h200", "L40S") == ["h100-sxm", "rtx-4090", "h200-sxm", "l40s"]
    wl = parse_workload(
        {"deployment": "datacenter", "model": "gpt2-124m", "tokens": "1B", "gpus": "H100-SXM:8"}, "w.yaml", known=known
    )
    assert wl.gpus.allow == ["h100-sxm"] and wl.gpus.count == 8
    stock = parse_workload(
        {"deployment": "datacenter", "model": "gpt2-124m", "tokens": "1B", "gpus": {"stock": {"H100-SXM": 16}}},
        "w.yaml",
        known=known,
    ).gpus.stock
    assert stock == {"h100-sxm": 16}


def test_a_gpu_name_that_matches_several_asks_which(known):
    with pytest.raises(InputError) as info:
        parse_workload(
            {
                "deployment": "datacenter",
                "model": "gpt2-124m",
                "tokens": "1B",
                "gpus": {"allow": ["H100", "A100-80GB"], "deny": ["h20x"]},
            },
            "w.yaml",
            known=known,
        )
    h100, a100, h20x = info.value.errors
    assert h100.field == "gpus.allow[0]" and "h100-nvl, h100-pcie or h100-sxm" in str(h100)
    assert a100.field == "gpus.allow[1]" and "a100-80gb-pcie or a100-80gb-sxm" in str(a100)
    assert h20x.field == "gpus.deny[0]" and "did you mean h20?" in str(h20x)
    with pytest.raises(InputError) as info:
        parse_workload(
            {"deployment": "datacenter", "model": "gpt2-124m", "tokens": "1B", "gpus": "H100:8"}, "w.yaml", known=known
        )
    assert info.value.field == "gpus" and "h100-nvl, h100-pcie or h100-sxm" in str(info.value)


# ------------------------------------------------------------------ serving written the short way (issue 32 item 4)

SERVE_TOP = {
    "deployment": "datacenter",
    "kind": "serve",
    "model": "llama-3.1-8b",
    "precision": "fp8",
    "traffic": {"requests_per_s": 20, "input_tokens": 1000, "output_tokens": 300},
    "slo": {"ttft_ms": 2000, "tpot_ms": 100},
}


def test_a_serving_job_at_the_top_level_is_one_serving_job():
    wl = parse_workload(SERVE_TOP, "w.yaml")
    (job,) = wl.jobs
    assert job.kind == "serve" and job.traffic.requests_per_s == 20 and job.slo.tpot_ms == 100
    without_kind = parse_workload({k: v for k, v in SERVE_TOP.items() if k != "kind"}, "w.yaml")
    assert without_kind.jobs[0].kind == "serve"  # a job with traffic serves


def test_a_top_level_serving_job_with_a_training_field_names_it():
    with pytest.raises(InputError) as info:
        parse_workload(dict(SERVE_TOP, tokens="10B"), "w.yaml")
    assert [e.field for e in info.value.errors] == ["tokens"] and "unknown field `tokens`" in str(info.value)


def test_the_schema_takes_a_top_level_serving_job(run):
    import json

    import jsonschema

    code, out, _ = run("schema")
    validator = jsonschema.Draft202012Validator(json.loads(out))
    assert [e.message for e in validator.iter_errors(SERVE_TOP)] == []
    assert list(validator.iter_errors(dict(SERVE_TOP, tokens="10B")))  # serving and training fields mixed
