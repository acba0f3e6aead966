"""The layout search evaluated over numpy arrays (perf/layout_grid.py) against the scalar estimator
it replaced in the search (`memory_total`, `step_time`, one call per layout), on a varied set of jobs:
every shipped example's training jobs, a slice of bench/solve.py's 200-job fleet, every row of the
calibration table (fixed pipelines and context parallelism, selective recompute, FlashAttention-2
era, interleaved stages, DeepSeek-V3's MoE as the dense model of its active parameters, which is
how the estimator represents it) and hand-picked pipeline, recompute, QLoRA and fixed-layout cases.

1. Every figure of every grid point - memory per GPU, compute, memory-bound and communication
   seconds and tokens/s - equals the scalar function's to the bit.
2. The search chooses what the exhaustive scalar scan (tests/test_layout_search.py `_scan`) does:
   the same layout, times, tokens/s and tensor-parallel verdict.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import bench_module
from test_layout_search import _scan

from advisor.perf import params_from
from advisor.perf.jobspec import job_spec, resolve_model, spec_from_flags
from advisor.perf.layout import MICRO_BATCHES, TP_MARGIN, _choose_layout, _options
from advisor.perf.layout_grid import grid
from advisor.perf.memory import Layout, default_batch_tokens, memory_total, usable_bytes
from advisor.perf.training import step_time

ROOT = Path(__file__).resolve().parent.parent
GPUS = ("rtx-4090", "h100-sxm", "mi300x", "l40s")
COUNTS = (1, 3, 8, 64, 512)


def _workload_specs(catalog, workload: dict) -> list:
    from advisor.inputs.workload import parse_workload

    wl = parse_workload(workload)
    return [job_spec(j, resolve_model(j, catalog, f"jobs[{i}]")) for i, j in enumerate(wl.jobs) if j.kind != "serve"]


def _example_specs(catalog) -> list:
    out = []
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        out += _workload_specs(catalog, yaml.safe_load(path.read_text()))
    return list(dict.fromkeys(out))


def _hand_specs(catalog) -> list:
    base = spec_from_flags(catalog, model="llama-3-8b")
    seventy = spec_from_flags(catalog, model="llama-3-70b")
    return [
        replace(base, recompute_fraction=0.4),  # selective recompute
        replace(seventy, pipeline_parallel=4, virtual_stages=2),  # fixed interleaved pipeline
        replace(seventy, pipeline_parallel=8, tensor_parallel=8, strategy="zero1"),
        replace(seventy, checkpointing=True, micro_batch=2),
        spec_from_flags(catalog, model="llama-3-8b", seq_len=65536),  # context parallelism searched
        spec_from_flags(catalog, model="llama-3-70b", kind="qlora"),
        spec_from_flags(catalog, model="mpt-30b", kind="lora", precision="fp8"),
        replace(spec_from_flags(catalog, model="gpt2-124m"), global_batch_tokens=4096.0),  # batch too small to share
        replace(spec_from_flags(catalog, model="llama-3-8b", precision="fp8"), fp8_param_gather=True),  # fp8 gathers
        replace(seventy, precision="fp8", strategy="zero3", fp8_param_gather=True),
        replace(seventy, precision="fp8", tensor_parallel=8, fp8_tp_gather=True),  # TP gathers in fp8
    ]


@pytest.fixture(scope="module")
def p(catalog):
    return params_from(catalog)


@pytest.fixture(scope="module")
def cases(catalog):
    """(job, GPU, count) triples: the varied jobs on several GPUs and counts, and each calibration
    row on the GPUs and count it ran."""
    fleet = _workload_specs(catalog, bench_module("solve").fleet(200))
    jobs = _example_specs(catalog) + list(dict.fromkeys(fleet))[:12] + _hand_specs(catalog)
    out = [
        (job, catalog.gpu(g), n)
        for job in jobs
        for g in GPUS
        for n in COUNTS
        if catalog.gpu(g).dense_tflops(job.precision)
    ]
    accuracy = bench_module("accuracy")
    for row in accuracy.load_rows():
        out.append((accuracy.job_of(row), catalog.gpus[row["gpu"]], int(row["gpu_count"])))
    return out


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def test_cases_cover_what_the_search_must_handle(cases):
    jobs = {job for job, _, _ in cases}
    assert len(cases) > 500
    assert any(j.recompute_fraction > 0 for j in jobs)
    assert any(j.pipeline_parallel and j.pipeline_parallel > 1 for j in jobs)
    assert any(j.context_parallel and j.context_parallel > 1 for j in jobs)
    assert any(j.kind == "qlora" for j in jobs) and any(j.kind == "lora" for j in jobs)
    assert any(j.model.name and "deepseek" in j.model.name.lower() for j in jobs)  # the MoE row
    assert any(j.attention_kernel == "fa2" for j in jobs) and any(j.software_era for j in jobs)
    assert any(j.tp_overlap for j in jobs) and any(not j.fused_elementwise for j in jobs)  # TP overlap, eager rows
    assert any(j.fused_elementwise and j.precision == "fp8" for j in jobs)  # fused fp8 casts
    assert any(j.fp8_param_gather and j.strategy in (None, "zero1") for j in jobs)  # ZeRO-1's gathers in fp8
    assert any(j.fp8_param_gather and j.strategy == "zero3" for j in jobs)
    assert any(j.fp8_tp_gather and j.precision == "fp8" and (j.tensor_parallel or 1) > 1 for j in jobs)


def test_every_grid_figure_equals_the_scalar_estimators_to_the_bit(cases, p):
    checked = 0
    for job, gpu, n in cases[::7]:  # every 7th case (7 is prime to the 20 GPU x count pairs of a job): every grid point
        combos = _options(job, gpu, n, p)
        if usable_bytes(gpu, p) is None or not combos:
            continue
        ckpts = [False, True]
        mbs = (job.micro_batch,) if job.micro_batch else MICRO_BATCHES
        base = job.global_batch_tokens or default_batch_tokens(job.model, p)
        shape = (len(combos), len(ckpts), len(mbs))
        arrays = {k: np.broadcast_to(v, shape) for k, v in grid(job, gpu, p, base, combos, ckpts, mbs).items()}
        for k, (s, t, q, dp, c) in enumerate(combos):
            for i, ckpt in enumerate(ckpts):
                for j, mb in enumerate(mbs):
                    lay = Layout(s, dp, t, q, mb, ckpt, c)
                    pick = {name: float(a[k, i, j]) for name, a in arrays.items()}
                    assert pick["total"] == memory_total(job, lay, p, base), (job, gpu.id, n, lay)
                    batch = max(base, dp * mb * job.model.seq_len)
                    times = step_time(job, gpu, lay, batch, p)
                    for part in ("compute_s", "memory_s", "comm_s"):
                        assert _same(pick[part], times[part]), (part, job, gpu.id, n, lay)
                    tps = batch / (times["compute_s"] + times["memory_s"] + times["comm_s"])
                    assert _same(pick["tps"], tps), (job, gpu.id, n, lay)
                    checked += 1
    assert checked > 50_000


def _reference(job, gpu, n, p):
    """`_scan`, with `_choose_layout`'s verdict for a tensor parallelism the job fixes: needed when
    the job cannot run without it or runs over TP_MARGIN slower without it."""
    out = _scan(job, gpu, n, p)
    if out is not None and job.tensor_parallel and out[0].tp > 1:
        alt = _scan(replace(job, tensor_parallel=1), gpu, n, p)
        out = out[:3] + (alt is None or out[2] > alt[2] * (1 + TP_MARGIN),)
    return out


@pytest.mark.slow
def test_search_chooses_what_the_exhaustive_scalar_scan_does(cases, p):
    differ = [
        (job, gpu.id, n)
        for job, gpu, n in cases
        if usable_bytes(gpu, p) is not None and _choose_layout(job, gpu, n, p) != _reference(job, gpu, n, p)
    ]
    assert not differ, differ[:3]


def test_the_scan_without_numpy_chooses_the_same(cases, p, monkeypatch):
    """`advisor estimate` loads no numpy: its search goes one layout at a time (fastest_scalar)."""
    from advisor.perf import layout

    with_numpy = [_choose_layout(job, gpu, n, p) for job, gpu, n in cases[::3] if usable_bytes(gpu, p) is not None]
    monkeypatch.setattr(layout, "fastest", layout.fastest_scalar)
    without = [_choose_layout(job, gpu, n, p) for job, gpu, n in cases[::3] if usable_bytes(gpu, p) is not None]
    assert without == with_numpy


def test_estimate_loads_no_numpy(tmp_path):
    """A command that solves nothing imports neither pulp nor numpy, even on a first run."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; from advisor.cli import main; sys.argv = ['advisor', 'estimate', '--model', 'llama-3-8b', "
        "'--gpu', 'h100-sxm', '--count', '64']\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('numpy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={**os.environ, "GPU_ADVISOR_CACHE": str(tmp_path)},
    )
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_the_tensor_parallel_bytes_are_one_formula_for_a_layout_and_the_grid(catalog, p):
    """Duplicated code: the tensor-parallel bytes per token were written out in both training.step_time
    and the grid; one function now gives both, equal to the bit, and to the hand-worked figure: Llama 3
    8B (hidden 4,096) at TP 8 in bf16, no overlap, no recompute, moves 4 all-reduces x 2 bytes x 2 x 7/8
    x 4,096 = 57,344 bytes a token per layer (six all-reduces, 86,016, recomputing)."""
    from advisor.perf.training import tp_bytes_per_token

    job = spec_from_flags(catalog, model="llama-3-8b")
    assert not job.tp_overlap and job.precision == "bf16"
    assert tp_bytes_per_token(job, p, 8, 0.0) == 4 * 2 * 2 * 7 / 8 * 4096 == 57_344
    assert tp_bytes_per_token(job, p, 8, 1.0) == 86_016
    assert tp_bytes_per_token(job, p, 1, 0.0) == 0.0
    tps, cks = np.asarray([1.0, 2.0, 4.0, 8.0])[:, None], np.asarray([0.0, 1.0])[None, :]
    grid_bytes = tp_bytes_per_token(job, p, tps, cks)
    for i, t in enumerate((1, 2, 4, 8)):
        for j, ck in enumerate((0.0, 1.0)):
            assert grid_bytes[i, j] == tp_bytes_per_token(job, p, t, ck)
