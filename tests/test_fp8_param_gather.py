"""A run that keeps its fp8 parameters in fp8 and all-gathers them so (Megatron-Core `--fp8-param-gather`,
Megatron-Bridge's fp8 recipes, NVIDIA's MLPerf `FP8_PARAM_GATHER=True`; JobSpec `fp8_param_gather`)
moves 1 byte a parameter in the sharded strategies' parameter all-gather instead of 2: hand-worked
volumes per parameter of a stage, the time it saves where data parallelism is exposed, and the
column read from a user's runs file (`advisor calibrate`) as from the bench's rows."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import bench_module

import advisor.perf.training as training
from advisor.perf import params_from
from advisor.perf.calibrate import read_runs
from advisor.perf.jobspec import spec_from_flags
from advisor.perf.memory import Layout
from advisor.perf.training import step_time


@pytest.fixture(scope="module")
def p(catalog):
    return params_from(catalog)


def _volumes(monkeypatch, job, gpu, lay, p) -> list[float]:
    seen: list[float] = []
    real = training._collective_seconds

    def spy(volume: float, tier: dict) -> float:
        seen.append(volume)
        return real(volume, tier)

    monkeypatch.setattr(training, "_collective_seconds", spy)
    step_time(job, gpu, lay, 64 * 8192.0, p)
    return seen


@pytest.mark.parametrize(
    ("strategy", "bytes_bf16", "bytes_fp8"),
    [
        ("zero1", 2.0 + 2.0, 2.0 + 1.0),  # reduce-scatter of bf16 gradients + all-gather of the parameters
        ("ddp", 2.0 + 2.0, 2.0 + 2.0),  # an all-reduce: nothing is gathered, nothing changes
        ("zero3", 2 * 2.0 + 2.0, 2 * 1.0 + 2.0),  # two gathers of the weights and a reduce-scatter, one micro-batch
    ],
)
def test_the_parameter_all_gather_moves_one_byte_a_parameter_in_fp8(
    catalog, p, monkeypatch, strategy, bytes_bf16, bytes_fp8
):
    job = replace(
        spec_from_flags(catalog, model="llama-3-8b", precision="fp8"),
        strategy=strategy,
        global_batch_tokens=64 * 8192.0,
    )
    gpu = catalog.gpu("h100-sxm")
    lay = Layout(strategy=strategy, tp=1, pp=1, dp=64, micro_batch=1, checkpointing=False)
    per_param = job.model.params  # tp = pp = 1: the stage holds every parameter, all trainable
    bf16 = _volumes(monkeypatch, job, gpu, lay, p)
    fp8 = _volumes(monkeypatch, replace(job, fp8_param_gather=True), gpu, lay, p)
    assert bf16[0] == pytest.approx(bytes_bf16 * per_param, rel=1e-12)
    assert fp8[0] == pytest.approx(bytes_fp8 * per_param, rel=1e-12)


def test_an_exposed_all_gather_in_fp8_shortens_the_step(catalog, p):
    """MLPerf v5.1 Llama 3.1 8B on 64 B200 at CP 2 (row BM03): one micro-batch a step, so the
    distributed optimizer's traffic is exposed; gathering in fp8 shortens the step, never lengthens it."""
    job = replace(
        spec_from_flags(catalog, model="llama-3-8b", precision="fp8"),
        strategy="zero1",
        global_batch_tokens=32 * 8192.0,
        context_parallel=2,
    )
    gpu = catalog.gpu("b200")
    lay = Layout(strategy="zero1", tp=1, pp=1, dp=32, micro_batch=1, checkpointing=False, cp=2)
    bf16 = step_time(job, gpu, lay, 32 * 8192.0, p)
    fp8 = step_time(replace(job, fp8_param_gather=True), gpu, lay, 32 * 8192.0, p)
    assert fp8["comm_s"] < bf16["comm_s"]
    assert fp8["compute_s"] == bf16["compute_s"] and fp8["memory_s"] == bf16["memory_s"]


def test_the_column_reaches_the_job_from_a_users_runs_and_from_the_benchs_rows(catalog, tmp_path):
    runs = tmp_path / "runs.csv"
    head = "gpu,count,tokens_per_s_per_gpu,model,precision,strategy,fp8_param_gather\n"
    runs.write_text(head + "h100-sxm,8,12000,llama-3-8b,fp8,zero1,true\nh100-sxm,8,11000,llama-3-8b,fp8,zero1,\n")
    read = read_runs(runs, catalog)
    assert [r.job.fp8_param_gather for r in read] == [True, False]
    rows = {r["id"]: r for r in bench_module("accuracy").load_rows()}
    job_of = bench_module("accuracy").job_of
    assert job_of(rows["BM03"]).fp8_param_gather and job_of(rows["MB05"]).fp8_param_gather
    assert not job_of(rows["NM05"]).fp8_param_gather  # NeMo 24.07's table does not state it
