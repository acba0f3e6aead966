"""A plan made with the user's own estimator (`advisor calibrate RUNS.csv -o mine.yaml`, then
`--catalog mine.yaml`) says which speeds are theirs: the override records the runs it was fitted to
(`estimator.calibrated_from`), a speed it set is `measured` on the GPUs of the runs and `transferred`
on their generation's other GPUs, with the runs file as its source, and the memo quotes the fit's own
error. A part with no published run (AMD: a datasheet derating) is fitted without the derating the
runs replace, so the fit reproduces the runs it was given."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from conftest import AS_OF

from advisor.cli import main
from advisor.data.catalog import load_catalog
from advisor.perf import evaluate, job_spec, params_from, resolve_model
from advisor.perf.calibrate import calibrate

HOPPER_RUNS = (
    "gpu,count,tokens_per_s,model,precision\n"
    "h100-sxm,8,60000,llama-3-8b,bf16\n"
    "h100-sxm,16,118000,llama-3-8b,bf16\n"
    "h100-sxm,64,450000,llama-3-8b,bf16\n"
    "a100-80gb-sxm,8,22000,llama-3-8b,bf16\n"
)
AMD_RUNS = "gpu,count,tokens_per_s,model,precision\nmi300x,8,30000,llama-3-8b,bf16\nmi300x,16,58000,llama-3-8b,bf16\n"
WORKLOAD = """\
name: own estimator
deployment: {context: cloud, ownership: rent, region: US}
jobs:
  - {name: cpt, model: llama-3-8b, tokens: 100B, deadline: 30d}
gpus: {allow: [h100-sxm], max: 64}
"""


def _override(tmp_path: Path, runs: str) -> Path:
    csv, out = tmp_path / "runs.csv", tmp_path / "mine.yaml"
    csv.write_text(runs, encoding="utf-8")
    r = CliRunner().invoke(main, ["calibrate", str(csv), "-o", str(out), "--force"])
    assert r.exit_code == 0, r.output
    return out


def _estimate(catalog, gpu: str, count: int):
    job = job_spec(*_job(catalog))
    return evaluate(job, catalog.gpus[gpu], count, params_from(catalog))


def _job(catalog):
    from advisor.inputs.jobs import Job

    job = Job(model="llama-3-8b", tokens="10B")
    return job, resolve_model(job, catalog, "jobs[0]")


def test_the_override_records_its_runs_and_labels_the_speeds_it_sets(tmp_path):
    out = _override(tmp_path, HOPPER_RUNS)
    own = yaml.safe_load(out.read_text())["estimator"]["calibrated_from"]
    assert own["runs_file"] == "runs.csv" and own["runs"] == 4
    assert own["groups"] == {"ampere/bf16": {"a100-80gb-sxm": 1}, "hopper/bf16": {"h100-sxm": 3}}
    mine, shipped = load_catalog(out), load_catalog()
    h100, h200, b200 = (_estimate(mine, g, 8) for g in ("h100-sxm", "h200-sxm", "b200"))
    assert h100.speed_evidence == "measured" and "runs.csv: 3 runs of h100-sxm at bf16" in h100.speed_source
    assert h200.speed_evidence == "transferred" and "runs of h100-sxm" in h200.speed_source
    assert b200.speed_source is None and b200.speed_evidence == _estimate(shipped, "b200", 8).speed_evidence
    # the label changes no NVIDIA figure: the override without its record gives the same speeds
    bare = yaml.safe_load(out.read_text())
    del bare["estimator"]["calibrated_from"]
    (tmp_path / "bare.yaml").write_text(yaml.safe_dump(bare), encoding="utf-8")
    unlabelled = load_catalog(tmp_path / "bare.yaml")
    for gpu in ("h100-sxm", "h200-sxm", "a100-80gb-sxm"):
        assert _estimate(unlabelled, gpu, 8).tokens_per_s == _estimate(mine, gpu, 8).tokens_per_s


def test_a_plan_and_memo_with_the_override_say_the_speed_is_the_users_and_quote_the_fits_error(tmp_path):
    out = _override(tmp_path, HOPPER_RUNS)
    wl = tmp_path / "w.yaml"
    wl.write_text(WORKLOAD, encoding="utf-8")
    args = [str(wl), "--as-of", AS_OF.isoformat(), "--catalog", str(out)]
    r = CliRunner().invoke(main, ["plan", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    job = json.loads(r.stdout)["jobs"][0]
    assert job["speed_evidence"] == "measured" and job["speed_source"].startswith("your calibration (runs.csv")
    text = CliRunner().invoke(main, ["plan", *args]).stdout
    assert "speeds measured (1), 1 from your own runs" in text
    memo = tmp_path / "memo.md"
    r = CliRunner().invoke(main, ["memo", *args, "-o", str(memo)])
    assert r.exit_code == 0, r.output
    body = memo.read_text()
    fit = calibrate(tmp_path / "runs.csv", load_catalog())
    assert f"(advisor calibrate runs.csv, 4 runs): leave-one-out MAPE {100 * fit['mape_leave_one_out']:.1f}%" in body
    assert "Your calibration (runs.csv: 3 runs of h100-sxm at bf16" in body
    # without the override the memo quotes the shipped estimator's error only
    r = CliRunner().invoke(main, ["memo", str(wl), "--as-of", AS_OF.isoformat(), "-o", str(tmp_path / "m2.md")])
    assert r.exit_code == 0 and "your own estimator" not in (tmp_path / "m2.md").read_text()


def test_runs_on_a_part_with_no_published_run_are_reproduced_without_its_datasheet_derating(tmp_path, catalog):
    """The shipped MI300X speed is datasheet x a public-stack derating. Before, the fit kept the
    derating and raised the MFU ceiling to the runs' own MFU, which the derating then cut again: in-sample
    -64%. The runs measured what the derating stands in for."""
    assert _estimate(catalog, "mi300x", 8).derating is not None
    out = _override(tmp_path, AMD_RUNS)
    fit = calibrate(tmp_path / "runs.csv", catalog)
    assert fit["mape_in_sample"] <= 0.05 and fit["mape_leave_one_out"] <= 0.05
    mine = load_catalog(out)
    e = _estimate(mine, "mi300x", 8)
    assert e.derating is None and e.speed_evidence == "measured"
    assert abs(e.tokens_per_s / 30000 - 1) <= 0.05  # the run the user measured, within the fit's error
    sibling = _estimate(mine, "mi325x", 8)
    assert sibling.speed_evidence == "transferred" and "runs of mi300x" in sibling.speed_source


def test_a_malformed_calibration_record_is_refused_naming_the_field(tmp_path, write):
    bad = write(
        "estimator:\n  calibrated_from: {runs_file: r.csv, runs: 3, groups: {hopper/bf16: {h100-sxm: 2}}, "
        "mape_in_sample: 0.01, mape_leave_one_out: null}\n",
        "bad.yaml",
    )
    r = CliRunner().invoke(main, ["estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm", "--catalog", str(bad)])
    assert r.exit_code == 2 and "estimator.calibrated_from" in r.stderr and "runs" in r.stderr


def test_a_ceiling_is_never_lowered_by_runs_below_the_one_it_falls_back_to(tmp_path, catalog):
    """Hopper publishes one MFU ceiling (49%, one server) that multi-server jobs fall back to. Runs across
    servers at a lower MFU wrote a multi-server ceiling of their own best (43%) before: a user's slower
    runs lowered the ceiling every multi-server estimate is held to. A generation with no ceiling of its
    own (CDNA 3 takes `default`) is not given the runs' best either."""
    published = params_from(catalog).mfu_cap
    assert "bf16_multiserver" not in published["hopper"] and "cdna3" not in published
    est = yaml.safe_load(_override(tmp_path, HOPPER_RUNS).read_text())["estimator"]
    hopper = est.get("mfu_cap", {}).get("hopper", {})
    assert hopper.get("bf16_multiserver", published["hopper"]["bf16"]) >= published["hopper"]["bf16"]
    est = yaml.safe_load(_override(tmp_path, AMD_RUNS).read_text())["estimator"]
    assert "cdna3" not in est.get("mfu_cap", {})
