"""The layout search's shortcuts (every layout of a search evaluated at once over numpy arrays,
perf/layout_grid.py; bisected micro-batches) give exactly the answer of the plain exhaustive scan,
which this file re-implements as it stood before them (every layout memory-tested, then timed, in
order, one scalar `step_time` call each)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.perf import params_from
from advisor.perf.jobspec import spec_from_flags
from advisor.perf.layout import TP_MARGIN, _choose_layout, _micro_batch_options, _options
from advisor.perf.memory import Layout, default_batch_tokens, layout_memory, usable_bytes
from advisor.perf.training import step_time

GPUS = ("a100-80gb-sxm", "h100-sxm", "rtx-4090", "mi300x")
COUNTS = (1, 8, 64, 512)
JOBS = (
    dict(model="gpt2-124m"),
    dict(model="llama-3-8b"),
    dict(model="llama-3-70b"),
    dict(model="llama-3.1-405b"),
    dict(model="llama-3-8b", kind="qlora"),
    dict(model="mpt-7b", kind="lora"),
    dict(model="llama-3-8b", precision="fp8"),
    dict(model="llama-3-8b", seq_len=32768),
    dict(model="llama-3-70b", checkpointing=True, micro_batch=1),
)
FIXED = (dict(strategy="zero2"), dict(pipeline_parallel=4), dict(strategy="ddp", pipeline_parallel=2))


@pytest.fixture(scope="module")
def p(catalog):
    return params_from(catalog)


def _scan(job, gpu, count, p):
    """The exhaustive search: every fitting layout timed, a later one winning only if >1% faster."""
    cap = usable_bytes(gpu, p)
    base = job.global_batch_tokens or default_batch_tokens(job.model, p)
    s = job.model.seq_len
    combos = _options(job, gpu, count, p)
    p2p = gpu.interconnect.p2p.value is True or gpu.interconnect.link != "none"
    held = [c for c in combos if c[3] * s <= base * 1.0001]
    for stage in (held, [c for c in combos if c not in held]):
        fits = []
        for st, t, q, dp, c in stage:
            for ckpt in [job.checkpointing] if job.checkpointing is not None else [False, True]:
                for mb in _micro_batch_options(job, dp, base):
                    lay = Layout(st, dp, t, q, mb, ckpt, c)
                    if sum(layout_memory(job, lay, p, base).values()) <= cap:
                        fits.append(lay)
                        if q == 1:
                            break
        if not fits:
            continue

        def best(layouts):
            out = None
            for lay in layouts:
                batch = max(base, lay.dp * lay.micro_batch * s)
                t = step_time(job, gpu, lay, batch, p)
                tps = batch / (t["compute_s"] + t["memory_s"] + t["comm_s"])
                if out is None or tps > out[2] * 1.01:
                    out = (lay, t, tps)
            return out

        no_tp, with_tp = best([x for x in fits if x.tp == 1]), best([x for x in fits if x.tp > 1])
        needs = no_tp is None or (with_tp is not None and with_tp[2] > no_tp[2] * (1 + TP_MARGIN))
        if no_tp and (with_tp is None or not p2p or with_tp[2] <= no_tp[2] * 1.01):
            return no_tp + (False,)
        return with_tp + (needs,)
    return None


@pytest.mark.parametrize("fields", JOBS, ids=lambda f: "-".join(str(v) for v in f.values()))
def test_search_equals_exhaustive_scan(catalog, p, fields):
    job = spec_from_flags(catalog, **fields)
    for gid in GPUS:
        gpu = catalog.gpu(gid)
        if not gpu.dense_tflops(job.precision):
            continue
        for n in COUNTS:
            assert _choose_layout(job, gpu, n, p) == _scan(job, gpu, n, p), (gid, n)


@pytest.mark.parametrize("fixed", FIXED, ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()))
def test_fixed_layout_search_equals_exhaustive_scan(catalog, p, fixed):
    job = replace(spec_from_flags(catalog, model="llama-3-70b"), **fixed)
    for gid in ("h100-sxm", "rtx-4090"):
        for n in (8, 64):
            assert _choose_layout(job, catalog.gpu(gid), n, p) == _scan(job, catalog.gpu(gid), n, p), (gid, n)
