"""The user's own benchmark (issue 31 item 4): a job's `measured:` speeds reach `evaluate` through the
JobSpec, replace the estimate on their GPU and count, narrow its band and move related GPUs by the
stated rule (perf/measured.py); `advisor calibrate` fits an override with a leave-one-out error."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from advisor.data.uncertainty import measurement_dist, speed_dist
from advisor.errors import InputError
from advisor.inputs.jobs import DEFAULT_SPREAD, Job
from advisor.perf import evaluate, job_spec, params_from, resolve_model
from advisor.perf.training import mfu_flops_per_token

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def p(catalog):
    return params_from(catalog)


def _spec(catalog, measured=None, model="llama-3-8b"):
    job = Job(model=model, tokens="10B", global_batch_tokens="2M", measured=measured)
    return job_spec(job, resolve_model(job, catalog, "jobs[0]"))


M = {"gpu": "h100-sxm", "count": 8, "tokens_per_s": 60_000, "date": "2026-11-20", "note": "torchtitan, our cluster"}


def test_a_measured_speed_is_used_exactly_on_its_gpu_and_count(catalog, p):
    spec = _spec(catalog, [M])
    e = evaluate(spec, catalog.gpus["h100-sxm"], 8, p)
    assert e.tokens_per_s == pytest.approx(60_000, rel=1e-12)
    assert e.speed_evidence == "measured" and e.speed_spread == DEFAULT_SPREAD
    assert "your measurement of 8 x h100-sxm on 2026-11-20" in e.speed_source
    assert e.derating is None and e.to_dict()["speed_source"] == e.speed_source


def test_a_measurement_narrows_the_band(catalog):
    generic = speed_dist(catalog.gpus["h100-sxm"], "bf16")
    mine = measurement_dist(DEFAULT_SPREAD)
    assert mine.q90 - mine.q10 < generic.q90 - generic.q10
    assert math.exp(mine.q10) == pytest.approx(0.95) and math.exp(mine.q90) == pytest.approx(1.05)


@pytest.mark.parametrize("speed", [45_000, 90_000])
def test_a_measurement_moves_siblings_the_same_way_and_others_by_the_software_share(catalog, p, speed):
    plain, spec = _spec(catalog), _spec(catalog, [dict(M, tokens_per_s=speed)])
    model_h100 = evaluate(plain, catalog.gpus["h100-sxm"], 8, p).tokens_per_s
    e = math.log(speed / model_h100)
    per_token = mfu_flops_per_token(plain.model, plain.kind)
    run_mfu = speed / 8 * per_token / (catalog.gpus["h100-sxm"].dense_tflops("bf16") * 1e12)  # 90K: 65.9%
    for gid, count, share in (
        ("h100-sxm", 16, 1.0),
        ("h200-sxm", 8, 1.0),
        ("a100-80gb-sxm", 8, p.measured_software_share),
    ):
        before = evaluate(plain, catalog.gpus[gid], count, p)
        after = evaluate(spec, catalog.gpus[gid], count, p)
        assert after.speed_evidence == "transferred" and "8 x h100-sxm" in after.speed_source
        moved = before.tokens_per_s * math.exp(share * e)
        if share * e > 0:  # no faster than the record (the model's upper end) or the run's own MFU went (review20 #3)
            peak = catalog.gpus[gid].dense_tflops("bf16") * 1e12
            moved = min(moved, max(before.tokens_per_s_upper, run_mfu * count * peak / per_token))
        assert after.tokens_per_s == pytest.approx(moved, rel=1e-9), gid
        assert (after.tokens_per_s > before.tokens_per_s) == (speed > model_h100)  # the same direction


def test_each_gpu_takes_its_own_runs_else_its_generations_else_the_software_share_of_all(catalog, p):
    """docs/model.md §1.8's rule (review19 #3): a run of another generation never dilutes a GPU's own
    or its generation's runs. H100 +10% and H200 -20% (Hopper), A100 -50% (Ampere): each measured type
    takes its own offset at another count, another Hopper the mean of the two Hopper runs, a B200 (no
    Blackwell run) 0.17 x the mean of all three. Factors re-computed from the offsets by hand."""
    plain = _spec(catalog)
    runs = {"h100-sxm": 1.10, "h200-sxm": 0.80, "a100-80gb-sxm": 0.50}
    spec = _spec(
        catalog,
        [dict(M, gpu=g, tokens_per_s=f * evaluate(plain, catalog.gpus[g], 8, p).tokens_per_s) for g, f in runs.items()],
    )
    s = p.measured_software_share
    for gid, want in (
        ("h100-sxm", 1.10),
        ("h200-sxm", 0.80),
        ("a100-80gb-sxm", 0.50),
        ("h800-sxm", math.sqrt(1.10 * 0.80)),
        ("b200", math.exp(s * (math.log(1.10) + math.log(0.80) + math.log(0.50)) / 3)),
    ):
        got = (
            evaluate(spec, catalog.gpus[gid], 16, p).tokens_per_s
            / evaluate(plain, catalog.gpus[gid], 16, p).tokens_per_s
        )
        assert got == pytest.approx(want, rel=1e-9), gid


def test_measurements_are_part_of_the_jobspec_and_the_layout_search_ignores_them(catalog, p):
    a, b = _spec(catalog, [M]), _spec(catalog, [dict(M, tokens_per_s=61_000)])
    assert a != b and hash(a) != hash(b) and a == _spec(catalog, [M])
    assert replace(a, measured=()) == _spec(catalog)
    la = evaluate(a, catalog.gpus["a100-80gb-sxm"], 16, p).layout
    assert la == evaluate(_spec(catalog), catalog.gpus["a100-80gb-sxm"], 16, p).layout


def test_bad_measurements_are_refused_naming_the_field(catalog):
    with pytest.raises(ValidationError, match="one speed per GPU type and count"):
        Job(model="gpt2-124m", tokens="1B", measured=[M, dict(M, tokens_per_s=1)])
    with pytest.raises(ValidationError, match="YYYY-MM-DD"):
        Job(model="gpt2-124m", tokens="1B", measured=[dict(M, date="last week")])
    with pytest.raises(ValidationError):
        Job(model="gpt2-124m", tokens="1B", measured=[dict(M, spread=1.5)])
    job = Job(model="gpt2-124m", tokens="1B", measured=[dict(M, gpu="h100-sxn")])
    with pytest.raises(InputError) as exc:
        resolve_model(job, catalog, "jobs[0]")
    assert exc.value.field == "jobs[0].measured[0].gpu" and "h100-sxm" in str(exc.value)


def test_calibrate_reproduces_one_stacks_speeds_within_5_percent_leave_one_out(catalog, tmp_path):
    """The MosaicML llm-foundry A100 80GB table (10 runs of one software stack) as RUNS.csv."""
    from advisor.perf.calibrate import calibrate

    lines = (ROOT / "catalog" / "calibration.csv").read_text().splitlines()
    header = next(line for line in lines if line.startswith("id,"))
    rows = [line for line in lines if ",mosaicml-a100-80," in line]
    path = tmp_path / "runs.csv"
    path.write_text("\n".join([header] + rows) + "\n")
    out = calibrate(path, catalog)
    assert out["runs"] == 10 and out["mape_leave_one_out"] <= 0.05
    fe = out["override"]["estimator"]["framework_efficiency"]["ampere"]["bf16"]
    assert 0 < fe <= 1.5


def test_calibrate_cli_writes_an_override_usable_with_catalog(tmp_path):
    from click.testing import CliRunner

    from advisor.cli import main

    runs = tmp_path / "runs.csv"
    runs.write_text(
        "gpu,count,tokens_per_s,model,global_batch_tokens\n"
        "a100-80gb-sxm,1,180000,gpt2-124m,524288\n"
        "a100-80gb-sxm,8,1500000,gpt2-124m,524288\n"
    )
    out = tmp_path / "mine.yaml"
    r = CliRunner().invoke(main, ["calibrate", str(runs), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "leave-one-out" in r.output and out.exists()
    r2 = CliRunner().invoke(
        main, ["estimate", "--model", "gpt2-124m", "--gpu", "a100-80gb-sxm", "--catalog", str(out), "--format", "json"]
    )
    assert r2.exit_code == 0, r2.output
    bad = tmp_path / "bad.csv"
    bad.write_text("gpu,count,tokens_per_s,model\nh100-sxm,8,abc,gpt2-124m\n")
    r3 = CliRunner().invoke(main, ["calibrate", str(bad), "-o", str(tmp_path / "x.yaml")])
    assert r3.exit_code == 2 and "line 2" in r3.output and "tokens_per_s" in r3.output


def test_a_measured_speed_bounds_the_ranges_and_the_draws(catalog, rules):
    """A speed the user measured on the GPU and count the plan uses: the job's time range and every
    joint draw of that GPU's speed stay within the measurement's own spread (P10-P90 at measured x
    (1 -+ spread), nothing faster than its top), not the estimator's wider generation band."""
    from conftest import AS_OF

    from advisor.explain.draws import joint_draws
    from advisor.flow import plan, prepare
    from advisor.inputs.workload import parse_workload

    doc = {
        "deployment": {"context": "datacenter", "ownership": "rent", "rent_kinds": ["on_demand"]},
        "gpus": {"allow": ["h100-sxm"], "count": 8},
        "jobs": [
            {"model": "llama-3-8b", "tokens": "20B", "global_batch_tokens": "2M", "measured": [dict(M, spread=0.05)]}
        ],
    }
    wl = parse_workload(doc)
    p = plan(wl, catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    (job,) = p["jobs"]
    assert job["speed_evidence"] == "measured" and job["tokens_per_s"] == pytest.approx(60_000, rel=1e-6)
    r = job["wall_days_range"]
    assert r["p10"] == pytest.approx(job["wall_days"] / 1.05, rel=1e-4)
    assert r["p90"] == pytest.approx(job["wall_days"] / 0.95, rel=1e-4)
    draws = joint_draws(prepare(wl, catalog, rules, AS_OF), 2000, 3, gpus=["h100-sxm"])
    assert draws.speed.max() <= 1.05 + 1e-12 and draws.speed.min() < 0.95 < 1.0 < draws.speed.max()


def test_calibrate_reads_a_mixture_of_experts_preset_at_its_active_parameters(catalog, tmp_path):
    """A RUNS.csv row naming an MoE preset is the preset a plan uses (jobspec.preset_spec): its active
    parameters set the FLOPs per token, as catalog/models.yaml gives them, not the whole model's."""
    from advisor.perf.calibrate import read_runs

    path = tmp_path / "runs.csv"
    path.write_text("gpu,count,tokens_per_s,model,precision\nh100-sxm,16,40000,mixtral-8x7b,bf16\n")
    (run,) = read_runs(path, catalog)
    m = catalog.models["mixtral-8x7b"]
    assert run.job.model.active_params == m.active_params < m.params


def test_calibrate_refuses_a_run_the_estimator_cannot_place_and_never_prints_nan(tmp_path):
    """A user's 70B run on 8 H100 (full training state cannot fit in 640 GB: it was LoRA or offloaded)
    made the fit print 'leave-one-out nan%'; it is refused naming its line and what to add. One run
    has no leave-one-out error: 'n/a' and JSON null, never NaN."""
    from click.testing import CliRunner

    from advisor.cli import main

    runs = tmp_path / "runs.csv"
    runs.write_text(
        "gpu,count,tokens_per_s,model\n"
        "h100-sxm,8,60000,llama-3-8b\n"
        "h100-sxm,16,118000,llama-3-8b\n"
        "h100-sxm,8,9000,llama-3-70b\n"
    )
    out = tmp_path / "mine.yaml"
    r = CliRunner().invoke(main, ["calibrate", str(runs), "-o", str(out)])
    assert r.exit_code == 2 and "line 4, field count" in r.output and "no layout" in r.output
    # what the memory model needs and what the GPU lets a job use, and the columns that would place it
    assert "needs 145.3 GB per GPU" in r.output and "lets a job use 76.0 GB" in r.output
    assert "strategy, tensor_parallel, pipeline_parallel, micro_batch, checkpointing missing" in r.output
    assert "nan" not in r.output.lower() and not out.exists()
    one = tmp_path / "one.csv"
    one.write_text("gpu,count,tokens_per_s,model\nh100-sxm,8,60000,llama-3-8b\n")
    r = CliRunner().invoke(main, ["calibrate", str(one), "-o", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON")

    data = json.loads(r.output, parse_constant=refuse)
    assert data["mape_leave_one_out"] is None and data["errors"][0]["leave_one_out"] is None
    assert "leave-one-out MAPE n/a" in out.read_text()
    r = CliRunner().invoke(main, ["calibrate", str(one), "-o", str(out), "--force"])
    assert "leave-one-out n/a" in r.output and "nan" not in r.output.lower()


def test_a_measured_speed_the_job_cannot_run_at_is_refused_at_its_line(tmp_path):
    """70B measured on one RTX 4090 (its training state needs over a terabyte) has no model speed to
    be a ratio of: the plan used to drop it silently; it is refused, naming where it is written."""
    from click.testing import CliRunner

    from advisor.cli import main

    path = tmp_path / "w.yaml"
    path.write_text(
        "name: t\n"
        "deployment: {context: cloud, ownership: rent}\n"
        "jobs:\n"
        "  - name: tr\n"
        "    kind: pretrain\n"
        "    model: llama-3-70b\n"
        "    tokens: 10B\n"
        "    deadline: 30d\n"
        "    measured:\n"
        "      - {gpu: h100-sxm, count: 64, tokens_per_s: 60000, date: 2026-11-01}\n"
        "      - {gpu: rtx-4090, count: 1, tokens_per_s: 100, date: 2026-11-01}\n"
    )
    for command in ("plan", "validate"):
        r = CliRunner().invoke(main, [command, str(path)])
        assert r.exit_code == 2, r.output
        assert f"{path}:11:9: `jobs[0].measured[1]`: the job does not fit on 1 x rtx-4090" in r.output


def test_calibrate_times_a_run_in_the_layout_it_states_with_the_memory_check_lifted(catalog, tmp_path):
    """A run whose layout the user gives in full ran in it, so it held: it is timed there, as the bench
    times its own rows (perf/stated_layout.py), even where the memory model cannot hold it (70B on 16 H100,
    zero3 x tensor parallel 8 without recompute: 96 GB per GPU in the model), and the output says so; it
    used to be refused with a message asking for the very columns it gave."""
    from click.testing import CliRunner

    from advisor.cli import main
    from advisor.perf.calibrate import read_runs
    from advisor.perf.stated_layout import MEMORY_CHECK_LIFTED

    runs = tmp_path / "runs.csv"
    runs.write_text(
        "gpu,count,tokens_per_s,model,global_batch_tokens,strategy,tensor_parallel,pipeline_parallel,micro_batch,"
        "checkpointing\n"
        "h100-sxm,8,60000,llama-3-8b,4000000,,,,,\n"
        "h100-sxm,16,12000,llama-3-70b,4000000,zero3,8,1,1,false\n"
    )
    out = tmp_path / "mine.yaml"
    r = CliRunner().invoke(main, ["calibrate", str(runs), "-o", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert [e["memory_check_lifted"] for e in data["errors"]] == [False, True]
    # the in-sample error re-computed by hand: the fitted override, the stated layout, the check lifted
    (_, big) = read_runs(runs, catalog)
    assert big.stated and not evaluate(big.job, catalog.gpus["h100-sxm"], 16, params_from(catalog)).fits
    from advisor.data.catalog import load_catalog

    q = params_from(load_catalog(str(out)))
    lifted = evaluate(big.job, catalog.gpus["h100-sxm"], 16, replace(q, usable_memory_fraction=MEMORY_CHECK_LIFTED))
    assert lifted.layout["tensor_parallel"] == 8 and lifted.layout["checkpointing"] is False
    assert data["errors"][1]["in_sample"] == pytest.approx(lifted.tokens_per_s / 12000 - 1, abs=1e-4)
    r = CliRunner().invoke(main, ["calibrate", str(runs), "-o", str(out), "--force"])
    assert r.exit_code == 0 and "timed in its stated layout, memory check lifted" in r.output


def test_the_software_share_of_a_measurement_is_the_catalogs(tmp_path, p):
    """catalog/estimator.yaml `measured_software_share` (with its source there), not a constant in code,
    moves a GPU of another generation: an override of it moves the A100 by the override's share."""
    from advisor.data.catalog import load_catalog

    override = tmp_path / "share.yaml"
    override.write_text("estimator:\n  measured_software_share: 0.6\n")
    cat = load_catalog(str(override))
    q = params_from(cat)
    assert q.measured_software_share == 0.6 != p.measured_software_share
    plain, spec = _spec(cat), _spec(cat, [dict(M, tokens_per_s=45_000)])  # slower: no MFU ceiling reached
    e = math.log(45_000 / evaluate(plain, cat.gpus["h100-sxm"], 8, q).tokens_per_s)
    before, after = (evaluate(s, cat.gpus["a100-80gb-sxm"], 8, q).tokens_per_s for s in (plain, spec))
    assert after == pytest.approx(before * math.exp(0.6 * e), rel=1e-9)
    bad = tmp_path / "bad.yaml"
    bad.write_text("estimator:\n  measured_software_share: 1.5\n")
    with pytest.raises(InputError, match="measured_software_share"):
        load_catalog(str(bad))


def test_the_network_fallback_is_the_tables_default(tmp_path):
    """perf/training.default_network_gbps reads estimator.yaml `network_gbps_per_gpu.default` (no literal
    in code): an override of the default moves a GPU the table does not name; a table without one is refused."""
    from advisor.data.catalog import load_catalog
    from advisor.perf.training import default_network_gbps

    override = tmp_path / "net.yaml"
    override.write_text("estimator:\n  network_gbps_per_gpu:\n    default: 12.5\n")
    cat = load_catalog(str(override))
    assert default_network_gbps(cat.gpus["mi300x"], params_from(cat)) == 12.5
    from advisor.data.estimator_check import check_estimator

    with pytest.raises(InputError, match="with a `default`"):
        check_estimator({"network_gbps_per_gpu": {"hopper": 50}}, "x.yaml")


def test_calibrate_refuses_an_unknown_assumed_layout_column(catalog, tmp_path):
    from advisor.perf.calibrate import read_runs

    path = tmp_path / "runs.csv"
    path.write_text("gpu,count,tokens_per_s,model,layout_assumed\nh100-sxm,8,60000,llama-3-8b,microbatch\n")
    with pytest.raises(InputError) as exc:
        read_runs(path, catalog)
    assert exc.value.field == "layout_assumed" and "line 2" in str(exc.value) and "micro_batch" in str(exc.value)


@pytest.mark.parametrize("field, value", [("count", "8.5"), ("tensor_parallel", "2.5"), ("count", "0.5")])
def test_calibrate_refuses_a_count_that_is_not_a_whole_number(catalog, tmp_path, field, value):
    """review19 (minor): a GPU count of 8.5 was read as 8 without a word (0.5 as 0, 'above zero')."""
    from advisor.perf.calibrate import read_runs

    row = {"gpu": "h100-sxm", "count": "8", "tokens_per_s": "60000", "model": "llama-3-8b", "tensor_parallel": "1"}
    row[field] = value
    path = tmp_path / "runs.csv"
    path.write_text(",".join(row) + "\n" + ",".join(row.values()) + "\n")
    with pytest.raises(InputError) as exc:
        read_runs(path, catalog)
    assert exc.value.field == field and "line 2" in str(exc.value)
    assert f"must be a whole number (given {value})" in str(exc.value)


def test_the_quote_to_get_first_does_not_ask_for_a_run_the_user_already_made(run_json, write):
    """A plan resting on the user's own run of 8 H100 whose H100 speed is still worth verifying (the 16
    GPUs a 12-day deadline needs are moved by the run, not measured) says which counts the run covers,
    not 'measure H100's speed on this job (a short run of it)' as if none had been made. (On the measured
    count itself the draws keep the run's spread, explain/plan_cost.py, and its speed is worth no run.)"""
    from conftest import AS_OF

    path = write(
        "deployment: {context: cloud, ownership: rent, region: US}\n"
        "jobs:\n  - name: cpt\n    model: llama-3-8b\n    tokens: 100B\n    deadline: 12d\n"
        "    measured: [{gpu: h100-sxm, count: 8, tokens_per_s: 60000, date: 2026-11-01}]\n"
        "gpus: {max: 64}\n"
    )
    code, plan = run_json("plan", path, "--as-of", AS_OF)
    assert code == 0 and plan["jobs"][0]["speed_evidence"] == "transferred"
    (speed,) = [v for v in plan["decision"]["verify"] if v["input"] == "speed:h100-sxm"]
    assert "your own run does not cover (yours, used as measured: 8)" in speed["message"]
    assert "a short run of it" not in speed["message"]


def test_a_measured_speed_beyond_the_gpus_peak_is_refused_by_plan_validate_and_calibrate(run, write, catalog):
    """95M tokens/s of Llama 3 8B on 8 H100 (the review's input) is 540x their dense bf16 peak on the
    matmuls alone: it was accepted, and the plan rented 4 H100 for 3.5 minutes at an MFU of 700."""
    from advisor.perf.jobspec import preset_spec

    model = preset_spec(catalog, "llama-3-8b")
    most = 8 * catalog.gpus["h100-sxm"].dense_tflops("bf16") * 1e12 / (6 * model.matmul_params)
    for speed, code in ((95_000_000, 2), (round(most * 1.01), 2), (round(most * 0.6), 0)):
        path = write(
            "deployment: {context: cloud, ownership: rent}\n"
            "jobs:\n  - model: llama-3-8b\n    tokens: 10B\n"
            f"    measured: [{{gpu: h100-sxm, count: 8, tokens_per_s: {speed}, date: 2026-11-01}}]\n"
        )
        got, out, err = run("validate", path)
        assert got == code, (speed, err)
        if code:
            assert "measured[0].tokens_per_s" in err and f"at most {most:,.0f} tokens/s" in err
    runs = write(f"gpu,count,tokens_per_s,model\nh100-sxm,8,{round(most * 1.01)},llama-3-8b\n", "runs.csv")
    got, out, err = run("calibrate", runs, "-o", runs.with_suffix(".yaml"))
    assert got == 2 and "line 2, field tokens_per_s" in err and f"at most {most:,.0f}" in err


def test_a_measured_speed_of_a_shape_with_no_matmul_parameters_left_is_not_bounded_by_them(plan_json, write):
    """The fuzzer's case: 124M parameters in one untied layer with 100M active leaves no matmul
    parameter as the shape counts them (0), and the peak check divided by it. (The check runs as the
    candidates are built: planned without the explanations, ~0.3 s of CPU, not ~4 s; an exception fails.)"""
    path = write(
        "deployment: office\nmodel: {params: 124M, layers: 1, active_params: 100M, tied_embeddings: false}\n"
        "tokens: 100M\nmeasured: [{gpu: h100-sxm, count: 1, tokens_per_s: 3000, date: 2026-11-20}]\n"
    )
    code, plan = plan_json(path, as_of=None)
    assert code in (0, 3) and plan["status"]


def test_the_mfu_floor_is_the_lowest_published_runs(catalog, p):
    """catalog/estimator.yaml `measured_mfu_floor` by hand: the lowest MFU (tokens/s per GPU x
    (6N + 12Lsh) / dense peak) of the calibration set's steady-state runs."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import calibration  # noqa: PLC0415  (bench/ is not a package)

    lowest = 1.0
    for r in calibration.load_rows():
        if r["basis"] not in ("measured", "derived"):
            continue
        m, g = calibration.job_of(r).model, catalog.gpus[r["gpu"]]
        n_mm = m.params - (0 if m.tied_embeddings else m.vocab * m.hidden)
        per_token = (4 if r["kind"] == "lora" else 6) * n_mm + 12 * m.layers * m.seq_len * m.hidden
        lowest = min(lowest, float(r["tokens_per_s_per_gpu"]) * per_token / (g.dense_tflops(r["precision"]) * 1e12))
    assert p.measured_mfu_floor == pytest.approx(lowest, abs=1e-4)


@pytest.mark.parametrize("below", [True, False])
def test_a_measurement_below_every_published_runs_mfu_is_questioned_with_its_unit(catalog, p, below):
    """review19 #4: a per-GPU figure entered as the whole run's is 1/count of it. Llama 3 8B at 8,192
    tokens on 8 H100 in bf16: 6N + 12Lsh = 6 x 7,504,924,672 + 12 x 32 x 8,192 x 4,096 FLOPs a token
    (N without the untied input embedding, catalog/models.yaml), so the floor's speed is
    floor x 8 x 989.4e12 / that; a run 1% below it is questioned (once for the job, plan or no plan:
    plan_notes), 1% above not."""
    from advisor.perf.measured import doubts

    n_mm = 8_030_261_248 - 128_256 * 4_096
    at_floor = p.measured_mfu_floor * 8 * 989.4e12 / (6 * n_mm + 12 * 32 * 8_192 * 4_096)
    speed = at_floor * (0.99 if below else 1.01)
    spec = _spec(catalog, [dict(M, tokens_per_s=speed)])
    notes = doubts(spec, mfu_flops_per_token(spec.model, spec.kind), p.measured_mfu_floor)
    doubt = [n for n in notes if "implausibly slow" in n]
    assert bool(doubt) == below and len(doubt) == len(notes), notes
    if below:
        assert "your measurement of 8 x h100-sxm" in doubt[0] and "tokens/s over all 8 GPUs" in doubt[0]
        assert f"the run's is {8 * speed:,.0f}" in doubt[0]


@pytest.mark.parametrize(
    ("date", "said"),
    [
        ("2099-11-01", "is dated after the plan's day (2026-12-01): check its date"),
        ("0001-01-01", "is dated before the NVIDIA H100 SXM5 80GB launched (2022"),
        ("2026-11-20", None),
    ],
)
def test_a_measurement_dated_after_the_plan_or_before_its_gpu_is_doubted(plan_json, write, date, said):
    """A `measured:` run dated 2099-11-01 or 0001-01-01 was taken without a word (audit28): its speed is
    used all the same, and the plan says to check the date, beside the run's other doubts."""
    doc = (
        "deployment: {context: datacenter, ownership: rent}\njobs:\n  - model: gpt2-124m\n    tokens: 1B\n"
        f"    measured:\n      - {{gpu: h100-sxm, count: 1, tokens_per_s: 500000, date: {date}}}\n"
    )
    code, p = plan_json(write(doc))
    doubts = [w["message"] for w in p["warnings"] if w["code"] == "measurement-doubt"]
    assert code == 0
    assert (not doubts) if said is None else any(said in d for d in doubts), doubts
