"""`advisor calibrate` on one software stack's own runs (issue 31: within 5% leave-one-out), as
bench/calibrate_stacks.py measures it: what the runs file says about a run reaches the fit
(torchtitan's selective checkpointing and fp32 gradient reduction; the tensor-parallel overlap a
source states), and a ceiling the shipped estimator derives at fp8 is not lowered to the runs' best."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from advisor.cli import main
from advisor.perf import params_from
from advisor.perf.calibrate import read_runs
from advisor.perf.published_mfu import mfu_cap
from advisor.perf.training import op_sac_recompute_fraction

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import calibrate_stacks  # noqa: E402  (bench/ is not a package)
import calibration  # noqa: E402

RUN = "h100-sxm,8,{tps},llama-3-8b,{prec},zero3,1,1,1,false{extra}\n"
HEAD = "gpu,count,tokens_per_s,model,precision,strategy,tensor_parallel,pipeline_parallel,micro_batch,checkpointing"


def _source(rows: list[dict], source: str) -> list[dict]:
    return calibrate_stacks.stacks(rows)[source]


@pytest.fixture(scope="module")
def measured(catalog) -> dict[str, dict]:
    """bench/calibrate_stacks.py's table, by stack."""
    return {s["stack"]: s for s in calibrate_stacks.measure(calibrate_stacks.load_rows(), catalog)}


def test_the_bench_scores_a_stack_as_the_command_does_and_its_baseline_by_hand(tmp_path, catalog):
    """The table's leave-one-out MAPE is the CLI's on the same rows; the constant-MFU rule is each row
    at the median MFU of the others, worked by hand on three rows."""
    rows = _source(calibrate_stacks.load_rows(), "megatron-core-2024-h100")
    res = calibrate_stacks.calibrate_rows(rows, catalog, tmp_path)
    r = CliRunner().invoke(
        main, ["calibrate", str(tmp_path / "RUNS.csv"), "-o", str(tmp_path / "x.yaml"), "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["mape_leave_one_out"] == res["mape_leave_one_out"]
    assert sorted(res["by_id"]) == sorted(x["id"] for x in rows)
    three = rows[:3]
    mfu = [calibrate_stacks.row_mfu(x, catalog) for x in three]
    by_hand = [statistics.median([mfu[1], mfu[2]]) / mfu[0] - 1, statistics.median([mfu[0], mfu[2]]) / mfu[1] - 1]
    assert calibrate_stacks.constant_mfu(three, catalog)[:2] == by_hand


@pytest.mark.slow
def test_the_megatron_core_table_is_fitted_with_the_tensor_parallel_overlap_its_readme_states(measured):
    """Megatron-LM's README ran the weak-scaling table with `--tp-comm-overlap`; without it the model
    exposed the TP all-reduces, the error grew with TP (TP 1 +14%, TP 8 -23%) and the fit hit its
    framework-efficiency bound (x1.65): 13.7% leave-one-out, worse than one MFU for every row (6.9%)."""
    line = measured["megatron-core-2024-h100"]
    assert line["leave_one_out"] <= 0.07 and abs(line["worst"][1]) <= 0.15


def test_nemos_rows_overlap_their_tp_communication_where_the_configs_with_their_layout_say_so():
    """NeMo 24.07's table states layouts, not TP overlap. The launcher's examples that run its rows set
    it on the Llama 2 and Llama 3 70B configs (`ub_tp_comm_overlap: true`) and off on GPT-3 175B at
    16 nodes; the 512-GPU GPT-3 row has MLPerf's layout (and the table links it there), whose
    config overlaps (`TP_COMM_OVERLAP=True`)."""
    rows = {r["id"]: r for r in calibrate_stacks.load_rows() if r["group"] == "nemo-24.07-h100"}
    overlapped = {i for i, r in rows.items() if r["tp_overlap"] == "true"}
    assert overlapped == {"NM03", "NM05", "NM07"}
    assert all("ub_tp_comm_overlap true" in rows[i]["layout_source"] for i in ("NM03", "NM05"))
    assert "ub_tp_comm_overlap False" in rows["NM06"]["layout_source"]
    assert "TP_COMM_OVERLAP=True" in rows["NM07"]["layout_source"]


@pytest.mark.slow
def test_nemos_table_is_fitted_with_the_tp_overlap_its_configs_state(measured):
    """With every TP all-reduce exposed, the TP 4 70B rows were slow and the TP 1 rows fast in the
    stack's own fit (NM03 -6%, NM01 +9%, NM02 +13% in-sample), the framework efficiency x1.08:
    8.1% leave-one-out; with the overlap the launcher and MLPerf configs set, 4.7% at x0.94."""
    line = measured["nemo-24.07-h100"]
    assert line["leave_one_out"] <= 0.05 and line["scale"]["hopper/fp8"] < 1.0
    assert max(abs(line["errors"][i][0]) for i in ("NM01", "NM03", "NM05", "NM06")) <= 0.05


@pytest.mark.slow
def test_torchtitans_runs_are_fitted_with_their_selective_checkpointing_and_fp8_ceiling(measured):
    """torchtitan's table (11 runs, bf16 and Float8): 8.9% leave-one-out before, its best fp8 run
    (R047) -25% held out, capped at the other fp8 runs' best MFU; 6.5% with the 405B rows as 32
    micro-batches of 1 and per-micro-batch FSDP gathers (R054 +8%, R055 -11%), 5.1% with the pipeline
    as torchtitan ran it, 4.8% (issue 31's 5%) with the Float8 TP rows' activation all-gathers in fp8
    (R052, without async TP, -12.2% -> -8.4%)."""
    line = measured["torchtitan-2024-12"]
    assert line["leave_one_out"] <= 0.05 and abs(line["errors"]["R047"][1]) <= 0.10
    assert abs(line["errors"]["R052"][1]) <= 0.10
    assert max(abs(line["errors"][i][1]) for i in ("R054", "R055")) <= 0.03


def test_torchtitans_405b_pipeline_rows_are_timed_as_its_code_splits_the_batch(catalog):
    """Table 5 (405B, FSDP 8 x TP 8 x PP 8, local batch 32): torchtitan at the page's commit splits the
    local batch into PP-degree micro-batches (8 of 4) and, under PP, gathers the FSDP parameters once a
    step (the model's zero1). With 32 micro-batches of 1 and per-micro-batch gathers the model gave
    interleaved 1F1B (2 stages a rank) 1.06x the speed of 1F1B where the table shows 1.28x."""
    rows = {r["id"]: r for r in calibrate_stacks.load_rows()}
    r54, r55 = rows["R054"], rows["R055"]
    for r in (r54, r55):
        local = (
            float(r["global_batch_tokens"])
            / int(r["seq_len"])
            / (int(r["gpu_count"]) // (int(r["tensor_parallel"]) * int(r["pipeline_parallel"])))
        )
        assert local == 32 and int(r["micro_batch"]) == local / int(r["pipeline_parallel"])  # 4
        assert r["strategy"] == "zero1" and "pp_enabled" in r["layout_source"]
    p = params_from(catalog)
    measured_ratio = float(r55["tokens_per_s_per_gpu"]) / float(r54["tokens_per_s_per_gpu"])  # 128 / 100
    model_ratio = calibration.predict(r55, catalog, p) / calibration.predict(r54, catalog, p)
    assert measured_ratio == 1.28 and abs(model_ratio / measured_ratio - 1) <= 0.03


def test_calibrate_reads_selective_checkpointing_and_the_gradients_reduce_bytes(tmp_path, catalog):
    """A run that recomputes part of its forward (torchtitan's per-op policy) or reduces gradients in
    fp32 is timed so; an unknown policy is refused naming the field."""
    path = tmp_path / "runs.csv"
    path.write_text(
        HEAD
        + ",selective_ac,grad_reduce_bytes\n"
        + RUN.format(tps=50000, prec="bf16", extra=",op,4")
        + RUN.format(tps=60000, prec="bf16", extra=",,"),
        encoding="utf-8",
    )
    sac, plain = (r.job for r in read_runs(path, catalog))
    assert sac.recompute_fraction == op_sac_recompute_fraction(sac.model, "bf16") > 0 and sac.grad_reduce_bytes == 4
    assert plain.recompute_fraction == 0 and plain.grad_reduce_bytes == 2
    path.write_text(HEAD + ",selective_ac\n" + RUN.format(tps=50000, prec="bf16", extra=",layer"), encoding="utf-8")
    r = CliRunner().invoke(main, ["calibrate", str(path), "-o", str(tmp_path / "x.yaml")])
    assert r.exit_code == 2 and "line 2, field selective_ac" in r.stderr and "op" in r.stderr


@pytest.mark.parametrize(("given", "share"), [("0", 0.0), ("0.25", 0.25), ("1", 1.0)])
def test_a_stated_recompute_fraction_is_a_share_from_0_to_1(tmp_path, catalog, given, share):
    """`recompute_fraction` is documented as a share from 0 to 1; an explicit 0 (nothing recomputed) was
    refused as "must be above zero" (review 12). Outside 0 to 1, or not a number, is refused naming it."""
    path = tmp_path / "runs.csv"
    path.write_text(
        HEAD + ",recompute_fraction\n" + RUN.format(tps=50000, prec="bf16", extra=f",{given}"), encoding="utf-8"
    )
    (run,) = read_runs(path, catalog)
    assert run.job.recompute_fraction == share
    for bad in ("1.5", "-0.1", "some"):
        path.write_text(
            HEAD + ",recompute_fraction\n" + RUN.format(tps=50000, prec="bf16", extra=f",{bad}"), encoding="utf-8"
        )
        r = CliRunner().invoke(main, ["calibrate", str(path), "-o", str(tmp_path / "x.yaml")])
        assert r.exit_code == 2 and "line 2, field recompute_fraction" in r.stderr and "0 to 1" in r.stderr


def test_an_fp8_ceiling_derived_from_the_bf16_one_is_not_lowered_by_slower_fp8_runs(tmp_path, catalog):
    """Hopper publishes a bf16 ceiling only; its fp8 ceiling is that x the MAMF fp8/bf16 ratio (43%).
    fp8 runs at 25-30% MFU wrote their own best as Hopper's fp8 ceiling before, so each run held out
    was capped at the others' best."""
    h100 = catalog.gpus["h100-sxm"]
    derived = mfu_cap(h100, "fp8", params_from(catalog))
    path, out = tmp_path / "runs.csv", tmp_path / "x.yaml"
    path.write_text(
        HEAD + "\n" + RUN.format(tps=70000, prec="fp8", extra="") + RUN.format(tps=80000, prec="fp8", extra=""),
        encoding="utf-8",
    )
    r = CliRunner().invoke(main, ["calibrate", str(path), "-o", str(out)])
    assert r.exit_code == 0, r.output
    caps = yaml.safe_load(out.read_text())["estimator"].get("mfu_cap", {}).get("hopper", {})
    assert caps.get("fp8", derived) >= derived > 0.4


def _line(stack: str, loo: float | None, constant: float, pooled: bool = False) -> dict:
    line = {"stack": stack, "rows": 3, "pooled": pooled, "constant_mfu": constant}
    return line if loo is None else dict(line, leave_one_out=loo)


def test_the_verdict_counts_the_single_stacks_within_the_target_from_the_lines():
    """docs/accuracy.md's count of stacks within 5% was written by hand and went stale (it said 5 of 12
    with NeMo out when 6 were in, NeMo among them): the bench now writes it from its own lines. A
    refused stack is out; a pooled publisher is named apart, not counted; 5.0% exactly is within."""
    lines = [
        _line("a", 0.05, 0.04),
        _line("b", 0.0501, 0.09),
        _line("c", None, 0.10),  # refused by advisor calibrate
        _line("d", 0.02, 0.03),
        _line("p (all 2 sources)", 0.03, 0.20, pooled=True),
    ]
    v = calibrate_stacks.verdict(lines)
    assert v.startswith("Within 5.0% leave-one-out: 2 of the 4 single stacks (a, d).")
    # review23b #6: "5.0%" read as within
    assert "Out: b 5.01%, c refused." in v and "Pooled: p (all 2 sources) 3.0%." in v
    assert v.endswith("The constant-MFU rule does better on: a 4.0%.")


@pytest.mark.slow
def test_the_docs_verdict_is_the_measured_one(measured):
    """The line under the table in docs/accuracy.md is the bench's verdict on today's rows."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "accuracy.md").read_text(encoding="utf-8")
    block = doc.split(calibrate_stacks.BEGIN, 1)[1].split(calibrate_stacks.END, 1)[0]
    assert calibrate_stacks.verdict(list(measured.values())) in block.splitlines()


@pytest.mark.slow
def test_megatron_bridges_b200_runs_are_timed_with_the_attention_kernel_they_ran(measured):
    """Megatron-Bridge's B200 rows ran cuDNN attention; timed with the FA2-era share Blackwell took from
    Hopper, the 8B run (attention 54% of its modelled compute) was slow against the 405B (25%): MB04
    -7.4%, MB05 +9.3% in-sample, 6.9% leave-one-out, worse than one MFU for every row (5.4%)."""
    line = measured["megatron-bridge-perf"]
    assert line["leave_one_out"] <= 0.05 and line["leave_one_out"] < line["constant_mfu"]
    assert max(abs(line["errors"][i][0]) for i in ("MB04", "MB05")) <= 0.05
