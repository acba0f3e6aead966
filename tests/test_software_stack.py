"""The training software as a stated input (issue 31): a job's `software: public | vendor_tuned` picks
the AMD Instinct derating measured for that stack (catalog/estimator.yaml `datasheet_derating.cdna` and
its `vendor_tuned` part), says which stack the speed assumes, and changes nothing else. The factors are
re-read from the YAML here and recomputed from catalog/calibration.csv; the leave-one-source-out folds
drop a held-out source's pairs with its runs."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest
import yaml

import advisor
from advisor.data.evidence import use_table
from advisor.data.resources import data_dir
from advisor.perf import evaluate, params_from

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import calibration  # noqa: E402  (bench/ is not a package)

LLAMA70B_FP8 = dict(model="llama-3-70b", count=8, precision="fp8")


@pytest.fixture(scope="module")
def cdna() -> dict:
    """The shipped CDNA derating entry, read from the YAML (not through the estimator's loader)."""
    doc = yaml.safe_load((data_dir("catalog") / "estimator.yaml").read_text(encoding="utf-8"))
    return doc["estimator"]["datasheet_derating"]["cdna"] if "estimator" in doc else doc["datasheet_derating"]["cdna"]


@pytest.mark.parametrize("gpu", ["mi300x", "mi325x"])
def test_vendor_tuned_amd_speed_is_public_times_the_ratio_of_the_two_measured_factors(gpu, cdna):
    public = advisor.estimate(gpu=gpu, **LLAMA70B_FP8)
    tuned = advisor.estimate(gpu=gpu, software="vendor_tuned", **LLAMA70B_FP8)
    ratio = cdna["vendor_tuned"]["factor"] / cdna["factor"]
    assert ratio > 1.5  # the premise: AMD's tuned code measured far above the public stack
    assert tuned["tokens_per_s"] == pytest.approx(public["tokens_per_s"] * ratio, rel=1e-3)
    upper = cdna["vendor_tuned"]["upper"] / cdna["upper"]
    assert tuned["tokens_per_s_upper"] == pytest.approx(public["tokens_per_s_upper"] * upper, rel=1e-3)
    assert tuned["speed_evidence"] == public["speed_evidence"] == "datasheet"  # no fitted run either way
    assert tuned["job"]["software"] == "vendor_tuned" and public["job"]["software"] == "public"
    assert tuned["layout"] == public["layout"] and tuned["memory_per_gpu_gb"] == public["memory_per_gpu_gb"]
    # the scored CDNA runs are AMD's vendor-tuned ones: their error is quoted for that stack only
    assert tuned["accuracy_band"]["generation"] == "cdna3" and public["accuracy_band"] is None


def test_the_evidence_note_names_the_stack_a_speed_assumes(cdna):
    public = advisor.estimate(gpu="mi300x", **LLAMA70B_FP8)
    tuned = advisor.estimate(gpu="mi300x", software="vendor_tuned", **LLAMA70B_FP8)
    assert public["derating"]["software"] == "public" and tuned["derating"]["software"] == "vendor_tuned"
    assert "public AMD software stack" in public["evidence_note"] and cdna["stack"] in public["evidence_note"]
    assert f"x {cdna['factor']:.2f} derating" in public["evidence_note"]
    note = tuned["evidence_note"]
    assert "vendor-tuned software" in note and cdna["vendor_tuned"]["stack"] in note
    assert f"x {cdna['vendor_tuned']['factor']:.2f} derating" in note
    assert f"not what the public stack gives (x {cdna['factor']:.2f})" in note  # never silently the public speed
    assert set(tuned["derating"]["source"]) == set(cdna["vendor_tuned"]["source"])


@pytest.mark.parametrize("gpu", ["h100-sxm", "b200", "gaudi2", "rtx-4090", "v100-32gb-sxm2"])
def test_vendor_tuned_changes_no_other_vendors_speed(gpu, catalog):
    """NVIDIA's calibrated rows already are its own stack (MLPerf, NeMo, Megatron tables) and Intel's
    Gaudi rows its own table: the data give no second factor, so the stack changes nothing."""
    if gpu not in catalog.gpus:
        pytest.skip(f"{gpu} not in the catalog")
    job = dict(model="llama-3-8b", count=8, precision="bf16")
    public = advisor.estimate(gpu=gpu, **job)
    tuned = advisor.estimate(gpu=gpu, software="vendor_tuned", **job)
    assert tuned.pop("job") != public.pop("job")  # only the stated input differs
    assert tuned == public


def test_public_is_the_default_and_states_nothing_new(catalog):
    """`software: public` gives the same estimate as no software given, and the NVIDIA note and
    derating keep their words (no stack: one factor for every stack)."""
    assert advisor.estimate(gpu="mi300x", **LLAMA70B_FP8) == advisor.estimate(
        gpu="mi300x", software="public", **LLAMA70B_FP8
    )
    p = params_from(catalog)
    from advisor.perf.jobspec import spec_from_flags

    spec = spec_from_flags(catalog, model="llama-3-8b")
    assert spec.software == "public"
    if "v100-32gb-sxm2" in catalog.gpus:
        e = evaluate(spec, catalog.gpus["v100-32gb-sxm2"], 8, p)
        assert e.derating is None or "software" not in e.derating


WORKLOAD = """\
deployment: {{context: datacenter, ownership: rent, horizon_months: 3}}
{top}jobs:
  - {{name: tune, model: llama-3-70b, kind: lora, precision: fp8, tokens: 2B, deadline: 60d{job}}}
gpus: {{allow: [mi300x]}}
"""


def _plan(write, top: str = "", job: str = "") -> dict:
    path = write(WORKLOAD.format(top=top, job=job))
    return advisor.plan(str(path), explain=False).to_dict()


def test_a_plan_states_the_stack_and_public_stays_the_default(write):
    default = _plan(write)
    assert json.dumps(default, sort_keys=True) == json.dumps(_plan(write, job=", software: public"), sort_keys=True)
    tuned = _plan(write, job=", software: vendor_tuned")
    inherited = _plan(write, top="software: vendor-tuned\n")  # the workload's default, in the user's words
    (d,), (t,), (i,) = default["jobs"], tuned["jobs"], inherited["jobs"]
    assert d["derating"]["software"] == "public" and t["derating"]["software"] == "vendor_tuned"
    assert i["derating"] == t["derating"] and i["tokens_per_s"] == t["tokens_per_s"]
    assert t["tokens_per_s"] / d["tokens_per_s"] == pytest.approx(
        t["derating"]["factor"] / d["derating"]["factor"], rel=1e-3
    )
    assert "vendor-tuned" in t["evidence_note"]
    overridden = _plan(write, top="software: vendor_tuned\n", job=", software: public")
    assert overridden["jobs"][0]["derating"] == d["derating"]  # a job's own word wins


def test_a_bad_software_value_names_file_line_field_and_the_allowed_values(run, write):
    path = write(WORKLOAD.format(top="", job=", software: tuned"))
    code, out, err = run("plan", path)
    assert code == 2
    assert path.name in err and ":3" in err and "software" in err
    assert "public" in err and "vendor_tuned" in err and "Traceback" not in err
    code, _, err = run("estimate", "--model", "llama-3-8b", "--gpu", "mi300x", "--software", "tuned")
    assert code == 2 and "--software" in err and "vendor_tuned" in err


def test_the_vendor_tuned_factor_is_the_median_of_the_vendor_tuned_measurements(catalog, cdna):
    """Recomputed by hand: each vendor-tuned pair's measured ratio over the model's, and each AMD MLPerf
    run's measured tokens/s over the model's estimate without the derating; the median is the factor,
    the best the upper end. The public factor stays the median of every pair."""
    rows = calibration.load_rows()
    p = params_from(catalog)
    bare = calibration.replace(p, datasheet_derating=None)
    with use_table(calibration.evidence_table(rows, catalog)["gpus"]):
        direct = {
            r["id"]: calibration.measured(r)
            / evaluate(calibration.job_of(r), catalog.gpus[r["gpu"]], int(r["gpu_count"]), bare).tokens_per_s_per_gpu
            for r in rows
            if r["id"] in ("A001", "A002", "A003", "A004")
        }
        pairs = calibration.pair_deratings(rows, catalog, p)
    tuned_pairs = [x["derating"] for x in pairs if x["software"] == "vendor_tuned"]
    assert len(tuned_pairs) == 2 and len(direct) == 4
    values = sorted(tuned_pairs + list(direct.values()))
    assert cdna["vendor_tuned"]["factor"] == pytest.approx(statistics.median(values), abs=1e-3)
    assert cdna["vendor_tuned"]["upper"] == pytest.approx(values[-1], abs=1e-3)
    public = [x["derating"] for x in pairs if x["software"] == "public"]  # what a buyer installs
    assert len(public) == 2 and cdna["factor"] == pytest.approx(statistics.median(public), abs=1e-3)
    assert cdna["upper"] == pytest.approx(max(x["derating"] for x in pairs), abs=1e-3)  # the best of any stack
    assert all(r["software"] == "vendor_tuned" for r in rows if r["id"] in direct)


def test_a_held_out_source_does_not_set_its_own_vendor_tuned_factor(catalog):
    """Holding out AMD's MLPerf v5.0 runs (A003, A004) also drops AMD's blog claim about the same
    submissions (pair P007/P008): the fold's factor is the median of what remains, and no held-out
    row's measurement is in it."""
    rows = calibration.load_rows()
    p = params_from(catalog)
    rest = calibration.fold_rows(rows, "mlperf-v5.0-amd-lora")
    kept = {r["id"] for r in rest}
    assert not kept & {"A003", "A004", "P007", "P008"} and {"A001", "A002", "P005", "P006"} <= kept
    with use_table(calibration.evidence_table(rest, catalog)["gpus"]):
        fold = calibration.with_deratings(rest, catalog, p).datasheet_derating["cdna"]
        direct = [x["derating"] for x in calibration.direct_deratings(rest, catalog, p)]
        pairs = calibration.pair_deratings(rest, catalog, p)
    assert sorted(x["group"] for x in pairs) == [
        "amd-dev-gpt2xl-fp8",
        "semianalysis-gpt2xl-bf16",
        "semianalysis-gpt2xl-fp8",
    ]
    values = direct + [x["derating"] for x in pairs if x["software"] == "vendor_tuned"]
    assert len(values) == 3
    assert fold["vendor_tuned"]["factor"] == pytest.approx(statistics.median(values), abs=1e-3)
    public = [x["derating"] for x in pairs if x["software"] == "public"]
    assert fold["factor"] == pytest.approx(statistics.median(public), abs=1e-3)


def test_the_memo_says_a_speed_rests_on_vendor_tuned_software(write, cdna):
    """The memo's jobs table and its 'no measured training run' sentence name the stack, so a
    vendor-tuned AMD speed is not read as the public stack's."""
    from advisor.contract import Plan
    from advisor.present.decision_words import unmeasured
    from advisor.present.plan_sections import jobs_section

    tuned = Plan.build(_plan(write, job=", software: vendor_tuned"))
    public = Plan.build(_plan(write))
    assert f"datasheet x {cdna['vendor_tuned']['factor']:.2f}, vendor-tuned software" in "\n".join(
        jobs_section(tuned, "md")
    )
    assert f"datasheet x {cdna['factor']:.2f}, public software" in "\n".join(jobs_section(public, "md"))
    assert "for the vendor's tuned software" in (unmeasured(tuned) or "")
    assert "for public software" in (unmeasured(public) or "")
