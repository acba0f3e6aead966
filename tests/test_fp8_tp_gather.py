"""A run whose tensor parallelism all-gathers the activations in fp8 (torchao's Float8 TP styles, which
torchtitan applies with Float8 and TP; Transformer Engine under sequence parallelism; JobSpec
`fp8_tp_gather`) moves 3 bytes where a bf16 run moves 4 for each all-reduce of the activations (an
all-gather at 1 byte and a reduce-scatter still at 2): the step's TP time worked by hand, a bf16 run
left as it was, and the column read from a user's runs file (`advisor calibrate`) as from the bench's
rows, set where the run's code and its sequence parallelism are sourced."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from conftest import bench_module

from advisor.perf import params_from
from advisor.perf.calibrate import read_runs
from advisor.perf.jobspec import spec_from_flags
from advisor.perf.memory import GB, Layout
from advisor.perf.training import comm_tier, step_time

BATCH = 16 * 8192.0


@pytest.fixture(scope="module")
def p(catalog):
    return params_from(catalog)


def _tp_only(catalog, precision: str):
    """Llama 3 70B at TP 8 on one H100 server, no data parallelism: the step's communication is TP's."""
    job = replace(
        spec_from_flags(catalog, model="llama-3-70b", precision=precision),
        strategy="ddp",
        tensor_parallel=8,
        global_batch_tokens=BATCH,
    )
    lay = Layout(strategy="ddp", tp=8, pp=1, dp=1, micro_batch=1, checkpointing=True)
    return job, catalog.gpu("h100-sxm"), lay


def test_the_activation_all_gathers_in_fp8_move_three_bytes_of_four(catalog, p):
    job, gpu, lay = _tp_only(catalog, "fp8")
    h, layers = job.model.hidden, job.model.layers
    # six all-reduces a layer with recompute, each (t - 1) / t x 2 x (2 bytes x h) a token, over NVLink
    by_hand = BATCH * layers * 6 * 2 * 7 / 8 * 2 * h / (comm_tier(gpu, 8, 1, p)["intra_gbps"] * GB)
    bf16_bytes = step_time(job, gpu, lay, BATCH, p)
    fp8_bytes = step_time(replace(job, fp8_tp_gather=True), gpu, lay, BATCH, p)
    assert bf16_bytes["comm_s"] == pytest.approx(by_hand, rel=1e-12)
    assert fp8_bytes["comm_s"] == pytest.approx(by_hand * (1 + 2) / (2 + 2), rel=1e-12)
    assert fp8_bytes["compute_s"] == bf16_bytes["compute_s"] and fp8_bytes["memory_s"] == bf16_bytes["memory_s"]


def test_a_bf16_run_has_nothing_to_gather_in_fp8(catalog, p):
    job, gpu, lay = _tp_only(catalog, "bf16")
    assert step_time(replace(job, fp8_tp_gather=True), gpu, lay, BATCH, p) == step_time(job, gpu, lay, BATCH, p)
    assert math.isfinite(step_time(job, gpu, lay, BATCH, p)["comm_s"])


def test_the_column_reaches_the_job_from_a_users_runs_and_from_the_benchs_rows(catalog, tmp_path):
    runs = tmp_path / "runs.csv"
    head = "gpu,count,tokens_per_s_per_gpu,model,precision,strategy,tensor_parallel,fp8_tp_gather\n"
    runs.write_text(head + "h100-sxm,64,800,llama-3-70b,fp8,zero3,8,true\nh100-sxm,64,800,llama-3-70b,fp8,zero3,8,\n")
    assert [r.job.fp8_tp_gather for r in read_runs(runs, catalog)] == [True, False]
    accuracy = bench_module("accuracy")
    rows = {r["id"]: r for r in accuracy.load_rows()}
    flagged = {i for i, r in rows.items() if accuracy.job_of(r).fp8_tp_gather}
    assert {"R052", "R053", "R054", "R055"} <= flagged  # torchtitan's Float8 runs with TP (Tables 4 and 5)
    assert {"NM03", "NM05", "NM06", "NM07", "MB02", "MB03", "MB05"} <= flagged  # TE under sourced sequence parallelism
    assert all(rows[i]["precision"] == "fp8" and int(rows[i]["tensor_parallel"]) > 1 for i in flagged)
    assert not {"BM01", "G003"} & flagged  # sequence parallelism (or the stack's code) not sourced
