"""torchtitan's per-op selective activation checkpointing (`selective_ac` op; JobSpec `op_sac`) saves the
reduce-scatters' outputs but not the all-gathers' (parallelize_llama.py `_save_list` at the commits its
benchmark pages name), and torch recomputes what the policy does not save: under tensor parallelism the
forward's two all-gathers a layer run again in the backward. Each is half an all-reduce of the activations
(g bytes an element gathered, g + 2 for a gather and its reduce-scatter): the step's TP time worked by
hand, full checkpointing (which reruns the whole forward, gathers and reduce-scatters) left as it was,
and the column read from a user's runs file (`advisor calibrate`) as from the bench's rows."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import bench_module

from advisor.perf import params_from
from advisor.perf.calibrate import read_runs
from advisor.perf.jobspec import spec_from_flags
from advisor.perf.memory import GB, Layout
from advisor.perf.training import comm_tier, step_time

BATCH = 12 * 8192.0


@pytest.fixture(scope="module")
def p(catalog):
    return params_from(catalog)


def _tp_only(catalog, precision: str, checkpointing: bool):
    """Llama 3 70B at TP 8 on one H100 server, no data parallelism: the step's communication is TP's."""
    job = replace(
        spec_from_flags(catalog, model="llama-3-70b", precision=precision),
        strategy="ddp",
        tensor_parallel=8,
        global_batch_tokens=BATCH,
    )
    lay = Layout(strategy="ddp", tp=8, pp=1, dp=1, micro_batch=1, checkpointing=checkpointing)
    return job, catalog.gpu("h100-sxm"), lay


def _by_hand(job, gpu, p, elements_bytes: float) -> float:
    """Seconds for `elements_bytes` x (t - 1) / t x h bytes a token a layer over NVLink."""
    h, layers = job.model.hidden, job.model.layers
    return BATCH * layers * elements_bytes * 7 / 8 * h / (comm_tier(gpu, 8, 1, p)["intra_gbps"] * GB)


def test_per_op_selective_checkpointing_gathers_the_forwards_activations_twice(catalog, p):
    job, gpu, lay = _tp_only(catalog, "bf16", checkpointing=False)
    plain = step_time(job, gpu, lay, BATCH, p)
    sac = step_time(replace(job, op_sac=True), gpu, lay, BATCH, p)
    # four all-reduces (a 2-byte gather and a 2-byte reduce-scatter each), plus two 2-byte gathers
    assert plain["comm_s"] == pytest.approx(_by_hand(job, gpu, p, 4 * (2 + 2)), rel=1e-12)
    assert sac["comm_s"] == pytest.approx(_by_hand(job, gpu, p, 4 * (2 + 2) + 2 * 2), rel=1e-12)
    assert sac["compute_s"] == plain["compute_s"] and sac["memory_s"] == plain["memory_s"]


def test_the_regathers_move_one_byte_an_element_when_the_gathers_are_fp8(catalog, p):
    job, gpu, lay = _tp_only(catalog, "fp8", checkpointing=False)
    sac = step_time(replace(job, op_sac=True, fp8_tp_gather=True), gpu, lay, BATCH, p)
    assert sac["comm_s"] == pytest.approx(_by_hand(job, gpu, p, 4 * (1 + 2) + 2 * 1), rel=1e-12)


def test_full_checkpointing_already_reruns_the_gathers(catalog, p):
    job, gpu, lay = _tp_only(catalog, "bf16", checkpointing=True)
    assert step_time(replace(job, op_sac=True), gpu, lay, BATCH, p) == step_time(job, gpu, lay, BATCH, p)


def test_the_column_reaches_the_job_from_a_users_runs_and_from_the_benchs_rows(catalog, tmp_path):
    runs = tmp_path / "runs.csv"
    head = "gpu,count,tokens_per_s_per_gpu,model,precision,strategy,tensor_parallel,selective_ac\n"
    runs.write_text(head + "h100-sxm,64,4000,llama-3-8b,bf16,zero3,8,op\nh100-sxm,64,4000,llama-3-8b,bf16,zero3,8,\n")
    assert [r.job.op_sac for r in read_runs(runs, catalog)] == [True, False]
    accuracy = bench_module("accuracy")
    rows = {r["id"]: r for r in accuracy.load_rows()}
    flagged = {i for i, r in rows.items() if accuracy.job_of(r).op_sac}
    assert flagged == {i for i, r in rows.items() if r["selective_ac"] == "op"}
    assert {"R057", "R057a"} <= flagged  # the async-TP page's 8B runs: per-op SAC at TP 8
