"""One layout search's every option at once: (strategy, tp, pp, dp, cp) x checkpointing x
micro-batch as numpy arrays, memory per GPU and tokens/s computed for the whole grid instead of one
Python call per layout (a first `advisor crossover` spent ~1 s of its 1.5 s in those calls).

The arithmetic is `memory._parts` and `training.step_time`'s, operation for operation and in the same
order, so every figure equals the scalar one to the bit (IEEE division, multiplication and
addition round alike in numpy and Python; integers stay below 2**53; log and sqrt, whose numpy
kernels may differ in the last bit, are taken with `math` once per distinct server count).
tests/test_layout_grid.py checks that. The choice (`fastest`) is the exhaustive scan's: every
layout that fits, in the search's order, a later one winning only if over 1% faster;
perf/layout.py re-times the winners with `step_time` for the figures it returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.perf.jobspec import JobSpec
from advisor.perf.layout_cache import search_key
from advisor.perf.memory import GB, Layout, job_figures, memory_total
from advisor.perf.training import (
    DEQUANT_BYTES,
    OPTIMIZER_STEP_BYTES,
    comm_tier,
    computed_once,
    elementwise_bytes,
    gathered_bytes,
    seconds_per_token,
    server_size,
    step_time,
    tp_bytes_per_token,
)

Combo = tuple[str, int, int, int, int]  # (strategy, tp, pp, dp, cp)


def fastest(
    job: JobSpec,
    gpu: GPU,
    p: Params,
    base: float,
    cap: float,
    combos: list[Combo],
    ckpts: list[bool],
    mbs: tuple[int, ...],
    start: list[int],
) -> tuple[Layout | None, Layout | None]:
    """The fastest fitting layout without and with tensor parallelism (None: none fits). `mbs`:
    the micro-batches, largest first; combination k may use mbs[start[k]:]. Without pipelining
    only the largest micro-batch that fits is a candidate (found by bisection, as the scalar
    search did); with it, every one that fits (smaller ones shrink the bubble)."""
    import numpy as np  # already loaded with pulp/highspy on the plan path; imported here for the rest

    st = _static(gpu, p, tuple(combos))
    g = grid(job, gpu, p, base, combos, ckpts, mbs, st)
    K, C, M = len(combos), len(ckpts), len(mbs)
    valid = np.arange(M) >= np.asarray(start)[:, None, None]
    sel = (g["total"] <= cap) & valid
    flat = st["flat"]
    if flat.any():  # without pipelining: the first fitting micro-batch, by bisection
        rows = sel[flat]
        have = rows.any(axis=-1)
        first = np.where(have, rows.argmax(axis=-1), M)
        if M > 1:  # a row whose fitting micro-batches are not all those from its first on: bisect as the scan did
            for i, j in zip(*np.nonzero(rows.sum(axis=-1) != M - first)):
                first[i, j] = _bisect(rows[i, j].__getitem__, int(start[int(np.flatnonzero(flat)[i])]), M)
        sel[flat] = np.arange(M) == first[..., None]
    order = np.flatnonzero(sel.ravel())  # the scan's order: combination, checkpointing, micro-batch
    tp = st["tp_flat"][order // (C * M)]
    tps = g["tps"].ravel()
    out: list[Layout | None] = []
    for part in (order[tp == 1], order[tp > 1]):
        if not len(part):
            out.append(None)
            continue
        k, c, m = np.unravel_index(int(part[_record(tps[part])]), (K, C, M))
        s, t, q, dp, cp = combos[int(k)]
        out.append(Layout(s, dp, t, q, mbs[int(m)], ckpts[int(c)], cp))
    return out[0], out[1]


def timed(job: JobSpec, gpu: GPU, p: Params, base: float, lay: Layout) -> tuple[Layout, dict, float]:
    """(layout, the estimator's step times, tokens/s) of one layout at the search's batch."""
    batch = max(base, lay.dp * lay.micro_batch * job.model.seq_len)
    times = step_time(job, gpu, lay, batch, p)
    return lay, times, batch / (times["compute_s"] + times["memory_s"] + times["comm_s"])


def fastest_scalar(
    job: JobSpec,
    gpu: GPU,
    p: Params,
    base: float,
    cap: float,
    combos: list[Combo],
    ckpts: list[bool],
    mbs: tuple[int, ...],
    start: list[int],
) -> tuple[Layout | None, Layout | None]:
    """`fastest`, one layout at a time with `memory_total` and `step_time`, for a process that has not
    loaded numpy: `advisor estimate` loads neither pulp nor numpy, and importing numpy (~0.1 s)
    costs more than its searches. Same scan, same answer (tests/test_layout_grid.py)."""
    best: list[tuple[float, Layout] | None] = [None, None]
    for (s, t, q, dp, c), lo in zip(combos, start):
        for ckpt in ckpts:
            lays = [Layout(s, dp, t, q, mb, ckpt, c) for mb in mbs]
            fits = (
                [memory_total(job, lay, p, base) <= cap if i >= lo else False for i, lay in enumerate(lays)]
                if q > 1
                else None
            )
            if fits is None:  # without pipelining: the first fitting micro-batch, by bisection
                i = _bisect(_fit_test(job, lays, p, base, cap), lo, len(lays))
                chosen = lays[i : i + 1]
            else:
                chosen = [lay for lay, ok in zip(lays, fits) if ok]
            for lay in chosen:
                tps = timed(job, gpu, p, base, lay)[2]
                part = 0 if t == 1 else 1
                held = best[part]
                if held is None or tps > held[0] * 1.01:
                    best[part] = (tps, lay)
    no_tp, with_tp = best
    return None if no_tp is None else no_tp[1], None if with_tp is None else with_tp[1]


def _fit_test(job: JobSpec, lays: list[Layout], p: Params, base: float, cap: float) -> Callable[[int], bool]:
    return lambda i: memory_total(job, lays[i], p, base) <= cap


def _bisect(fits: Callable[[int], bool], lo: int, hi: int) -> int:
    """The bisection the scalar search used over fits(lo..hi-1): the first that fits if they are a suffix."""
    end = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    return min(end, lo)


def _record(tps: Any) -> int:
    """Index of the scan's winner: the first entry, replaced by each later one over 1% faster."""
    best = 0
    while True:
        later = tps[best + 1 :] > tps[best] * 1.01
        if not later.any():
            return best
        best = best + 1 + int(later.argmax())


_STATICS: dict[tuple, dict[str, Any]] = {}  # (GPU figures, parameters, combinations) -> _build_static


def _static(gpu: GPU, p: Params, combos: tuple[Combo, ...]) -> dict[str, Any]:
    """What depends only on the GPU, the parameters and the combinations (the links each
    collective crosses, the servers spanned), as arrays of shape (combinations, 1, 1): shared by
    every job searched with the same combinations, kept by value (a first crossover asks 198
    searches of 94 distinct combination lists, each plan with its own GPU and parameter objects)."""
    key = (*search_key(gpu, p), combos)
    hit = _STATICS.get(key)
    if hit is None:
        if len(_STATICS) > 10_000:
            _STATICS.clear()
        hit = _STATICS[key] = _build_static(gpu, p, combos)
    return hit


_CODES = {"ddp": 0, "zero1": 1, "zero2": 2, "zero3": 3}  # any other name: 4 (as `step_time`'s last branch)


def _tiers(np: Any, gpu: GPU, p: Params, group: Any, stride: Any) -> Any:
    """`comm_tier(gpu, group, stride)`'s (per_server, servers, intra GB/s, network GB/s) per
    combination, one `comm_tier` per distinct (group, stride): an array (combinations, 4)."""
    pairs = group * 1_000_003 + stride
    distinct, where = np.unique(pairs, return_inverse=True)
    rows = []
    for x in distinct.tolist():
        tier = comm_tier(gpu, x // 1_000_003, x % 1_000_003, p)
        rows.append((tier["per_server"], tier["servers"], tier["intra_gbps"], tier["network_gbps"]))
    return np.asarray(rows, dtype=float)[where.reshape(-1)]


def _build_static(gpu: GPU, p: Params, combos: tuple[Combo, ...]) -> dict[str, Any]:
    import numpy as np

    arr = np.asarray([c[1:] for c in combos])  # (tp, pp, dp, cp), integers
    code = np.asarray([_CODES.get(c[0], 4) for c in combos])[:, None, None]
    ti, qi, di, ci = arr.T
    t, q, dp, c = (x.astype(float)[:, None, None] for x in (ti, qi, di, ci))
    z = dp * c
    out: dict[str, Any] = {
        "t": t,
        "q": q,
        "dp": dp,
        "c": c,
        "z": z,
        "ddp": code == 0,
        "ddp1": code <= 1,
        "zero2": code == 2,
    }
    out["split"] = t * q
    out["count"] = dp * t * q * c
    out["s0"] = np.where(code == 3, z, 1)  # ZeRO-3 shards the weights,
    out["s1"] = np.where((code == 2) | (code == 3), z, 1)  # ZeRO-2 and 3 the gradients,
    out["s2"] = np.where(code == 0, 1, z)  # every ZeRO the optimizer state
    out["opt_split"] = out["split"] * out["s2"]  # (tp x pp) x opt_shards, as `_core`
    out["s0_gt1"] = out["s0"] > 1
    out["any_s0"] = bool(out["s0_gt1"].any())
    out["flat"] = qi == 1
    out["tp_flat"] = ti
    ts = sorted(set(ti.tolist()))
    out["t_values"], out["t_index"] = ts, np.searchsorted(ts, ti)
    out["any_dp"], out["any_tp"], out["any_cp"] = (bool((x > 1).any()) for x in (z, t, c))
    if out["any_dp"]:
        k, s, intra, net = (x[:, None, None] for x in _tiers(np, gpu, p, di * ci, ti).T)
        out["dp_k"], out["dp_share"], out["dp_net_share"] = k, (k - 1) / k, (s - 1) / s
        out["dp_intra"], out["dp_net"], out["dp_s1"] = intra * GB, net * GB, s > 1
        out["dp_in"] = (k > 1) & (intra > 0)
    if out["any_tp"]:
        out["tp_intra"] = _tiers(np, gpu, p, ti, np.ones_like(ti))[:, 2, None, None] * GB
    if out["any_cp"]:
        _, s, intra, net = (x[:, None, None] for x in _tiers(np, gpu, p, ci, ti).T)
        out["cp_link"] = np.where(s == 1, intra * GB, net * GB)
        out["cp_share"] = (c - 1) / c
    size = computed_once(server_size, (gpu, p), (), gpu, p)
    spans, where = np.unique(arr.prod(axis=1), return_inverse=True)  # each combination's GPU count
    factors = []
    for n in spans.tolist():
        servers = math.ceil(n / size)  # as `step_time`
        factors.append(p.step_jitter * math.sqrt(2.0 * math.log(servers)) if servers > 1 else 0.0)
    out["sync"] = np.asarray(factors)[where.reshape(-1)][:, None, None]
    out["any_sync"] = any(f > 0.0 for f in factors)
    return out


def grid(
    job: JobSpec,
    gpu: GPU,
    p: Params,
    base: float,
    combos: list[Combo],
    ckpts: list[bool],
    mbs: tuple[int, ...],
    st: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Memory per GPU at the base batch (`total`, as `memory_total`) and the step (`compute_s`,
    `memory_s`, `comm_s`, as `step_time`, and `tps`, the search's tokens/s) for every (combination,
    checkpointing, micro-batch): arrays that broadcast to (combinations, checkpointing, micro-batches)."""
    import numpy as np

    st = st or _static(gpu, p, tuple(combos))
    m = job.model
    layers, split = m.layers, st["split"]
    t, q, c, z = st["t"], st["q"], st["c"], st["z"]
    ckb = np.asarray(ckpts)[:, None]
    ck = np.where(ckb, 1.0, 0.0)
    mb = np.asarray(mbs)
    trainable = job_figures(job)[2]
    with np.errstate(all="ignore"):  # layouts that cannot fit may divide by a zero link rate: never chosen
        total, layers_here, dms = _grid_memory(job, p, base, st, ckb, mb)  # memory._parts at the base batch

        # training._core and training.step_time at the layout's batch
        batch = np.maximum(dms, base)
        tokens_per_gpu = batch / st["count"]
        imbalance = layers_here * q / layers
        rates = np.asarray([[seconds_per_token(job, gpu, p, tt, k) for k in ckpts] for tt in st["t_values"]])
        rates = rates[st["t_index"]]
        dense, attention = rates[:, :, 0:1], rates[:, :, 1:2]
        compute_s = tokens_per_gpu * (dense + attention) * imbalance
        bw = (gpu.memory_bandwidth_gbps.value or 0.0) * GB
        elementwise = elementwise_bytes(job, p, ck)
        opt_state = OPTIMIZER_STEP_BYTES * trainable / st["opt_split"]
        share = batch / dms
        micro = np.maximum(share, 1.0)
        memory_s = tokens_per_gpu * elementwise * imbalance + opt_state
        if job.kind == "qlora":  # (for other kinds `_core` adds a dequantization of 0.0: no change)
            memory_s = memory_s + DEQUANT_BYTES * m.params / split * (2.0 + ck) * micro * imbalance
        memory_s = memory_s / bw
        virtual = job.virtual_stages or p.pipeline_virtual_stages
        chunks = np.where(q > 1, np.maximum(1, np.minimum(virtual, layers // q)), 1)
        bubble = (q - 1) / (micro * chunks)
        core = compute_s + memory_s

        comm: Any = 0.0  # dp_s + tp_s + cp_s + sync_s in `step_time`'s order; a part that is 0.0 everywhere left out
        if st["any_dp"]:  # gradients (and ZeRO-3's gathers) over the data-parallel group
            grads = job.grad_reduce_bytes * trainable / split
            wts = gathered_bytes(job, 2.0) * m.params / split
            gather = np.where(st["ddp"], grads, gathered_bytes(job, job.grad_reduce_bytes) * trainable / split)
            volume = np.where(
                st["ddp1"], grads + gather, np.where(st["zero2"], micro * grads + wts, micro * (2.0 * wts + grads))
            )
            window = np.where(st["ddp1"], core / micro * 2.0 / 3.0, core)
            raw = np.where(st["dp_in"], st["dp_share"] * volume / st["dp_intra"], 0.0)
            raw = raw + np.where(st["dp_s1"], st["dp_net_share"] * volume / st["dp_k"] / st["dp_net"], 0.0)
            # (a combination without data parallelism gets max(-window, 0.0) = 0.0, as `step_time`'s 0.0)
            comm = np.maximum(raw - window, (1.0 - p.comm_overlap) * raw)
        if st["any_tp"]:  # four all-reduces of the activations per layer (six when recomputing)
            per_tok = tp_bytes_per_token(job, p, t, ck)
            comm = comm + np.where(t > 1, (batch / z) * layers_here * per_tok / st["tp_intra"], 0.0)
        if st["any_cp"]:  # the ring's keys and values beyond what attention hides
            kv = (batch / z) * layers_here * 2.0 * m.kv_width * 2.0 / t
            late = st["cp_share"] * kv * (3.0 + ck) / st["cp_link"] - tokens_per_gpu * attention * imbalance
            comm = comm + np.where(c > 1, np.maximum(late, 0.0), 0.0)
        stretch = 1 + bubble
        if st["any_sync"]:
            sync = st["sync"]
            comm = comm + np.where(sync > 0.0, sync * core * stretch, 0.0)
        comp = compute_s * stretch
        mem = memory_s * stretch
        tps = batch / (comp + mem + comm)
    return {"total": total, "compute_s": comp, "memory_s": mem, "comm_s": comm, "tps": tps}


def _grid_memory(job: JobSpec, p: Params, base: float, st: dict[str, Any], ckb: Any, mb: Any) -> tuple[Any, Any, Any]:
    """(memory per GPU, layers per stage, tokens per data-parallel micro-step) of every combination
    at the base batch, as memory._parts: weights, gradients and optimizer by their sharding, the
    activations in flight with or without checkpointing, the logits, the fixed overhead."""
    import numpy as np

    m = job.model
    seq, layers, hidden = m.seq_len, m.layers, m.hidden
    t, q, dp, c = st["t"], st["q"], st["dp"], st["c"]
    _, (bpp_w, bpp_g, bpp_o), trainable, per_token = job_figures(job)
    split = st["split"]
    stage_params = m.params / split
    stage_train = trainable / split
    s0 = st["s0"]
    weights = stage_params * bpp_w / s0
    if st["any_s0"]:  # the layer being computed and the next one gathered in full
        weights = np.where(st["s0_gt1"], weights + 2 * m.params / m.layers / t * bpp_w, weights)
    gradients = stage_train * bpp_g / st["s1"]
    optimizer = stage_train * bpp_o / st["s2"]
    layers_here = np.ceil(layers / q)
    dms = dp * mb * seq
    share = base / dms
    in_flight = np.minimum(q, np.ceil(np.maximum(share, 1.0)))  # (max(1.0, x): no NaN here)
    sb = seq * mb
    full = sb * per_token / t
    act = np.where(ckb, 2.0 * sb * hidden / t * layers_here * in_flight + full, full * layers_here * in_flight)
    act = act / c
    logits = 4.0 * seq * mb * m.vocab / t / c
    total = weights + gradients + optimizer + (act + logits) + p.overhead_gb * GB
    return total, layers_here, dms
