"""One layout search's every option at once: (strategy, tp, pp, dp, cp) x checkpointing x
micro-batch as numpy arrays, memory per GPU and tokens/s computed for the whole grid instead of one
Python call per layout (a first `advisor crossover` spent ~1 s of its 1.5 s in those calls).

The arithmetic is `memory._parts` and `training._time`'s, operation for operation and in the same
order, so every figure equals the scalar one to the bit (IEEE division, multiplication and
addition round alike in numpy and Python; integers stay below 2**53; log and sqrt, whose numpy
kernels may differ in the last bit, are taken with `math` once per distinct server count).
tests/test_layout_grid.py checks that. The choice (`fastest`) is the exhaustive scan's: every
layout that fits, in the search's order, a later one winning only if over 1% faster;
perf/layout.py re-times the winners with `_time` for the figures it returns.
"""
from __future__ import annotations

import math
from typing import Any

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.perf.jobspec import JobSpec
from advisor.perf.memory import GB, Layout, _job_figures
from advisor.perf.training import (
    DEQUANT_BYTES,
    OPTIMIZER_STEP_BYTES,
    _once,
    _per_token,
    _server_size,
    _tier,
)

Combo = tuple[str, int, int, int, int]   # (strategy, tp, pp, dp, cp)


def fastest(job: JobSpec, gpu: GPU, p: Params, base: float, cap: float, combos: list[Combo],
            ckpts: list[bool], mbs: tuple[int, ...], start: list[int]) -> tuple[Layout | None, Layout | None]:
    """The fastest fitting layout without and with tensor parallelism (None: none fits). `mbs`:
    the micro-batches, largest first; combination k may use mbs[start[k]:]. Without pipelining
    only the largest micro-batch that fits is a candidate (found by bisection, as the scalar
    search did); with it, every one that fits (smaller ones shrink the bubble)."""
    import numpy as np   # already loaded with pulp/highspy on the plan path; imported here for the rest

    g = grid(job, gpu, p, base, combos, ckpts, mbs)
    K, C, M = len(combos), len(ckpts), len(mbs)
    valid = np.arange(M)[None, None, :] >= np.asarray(start)[:, None, None]
    fits = (g["total"] <= cap) & valid
    pp = np.asarray([c[2] for c in combos])
    sel = fits.copy()
    flat = np.asarray(pp == 1)
    if flat.any():   # without pipelining: the first fitting micro-batch by bisection
        rows = fits[flat]
        rising = (rows[..., :-1] <= rows[..., 1:]).all(axis=-1)   # a monotone row: bisection finds its first True
        first = np.where(rows.any(axis=-1), rows.argmax(axis=-1), M)
        lo = np.asarray(start)[flat][:, None]
        for i, j in zip(*np.nonzero(~rising)):
            first[i, j] = _bisect(rows[i, j], int(lo[i, 0]), M)
        one = np.arange(M)[None, None, :] == first[..., None]
        sel[flat] = one & (first[..., None] < M)
    order = np.flatnonzero(sel.ravel())           # the scan's order: combination, checkpointing, micro-batch
    tp = np.asarray([c[1] for c in combos]).repeat(C * M)[order]
    tps = g["tps"].ravel()
    out: list[Layout | None] = []
    for part in (order[tp == 1], order[tp > 1]):
        if not len(part):
            out.append(None)
            continue
        win = _record(tps[part])
        k, c, m = np.unravel_index(int(part[win]), (K, C, M))
        s, t, q, dp, cp = combos[int(k)]
        out.append(Layout(s, dp, t, q, mbs[int(m)], ckpts[int(c)], cp))
    return out[0], out[1]


def _bisect(row: Any, lo: int, hi: int) -> int:
    """`_largest_fitting`'s bisection over row[lo:hi] (for a row that is not monotone)."""
    end = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if row[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo if lo < end else end


def _record(tps: Any) -> int:
    """Index of the scan's winner: the first entry, replaced by each later one over 1% faster."""
    best = 0
    while True:
        later = tps[best + 1:] > tps[best] * 1.01
        if not later.any():
            return best
        best = best + 1 + int(later.argmax())


def grid(job: JobSpec, gpu: GPU, p: Params, base: float, combos: list[Combo], ckpts: list[bool],
         mbs: tuple[int, ...]) -> dict[str, Any]:
    """Memory per GPU at the base batch (`total`, as `memory_total`) and the step (`compute_s`,
    `memory_s`, `comm_s`, `tps`, as `_time` and the search's tokens/s) for every
    (combination, checkpointing, micro-batch), arrays of shape (combinations, checkpointing, micro-batches)."""
    import numpy as np

    m = job.model
    seq, layers, hidden = m.seq_len, m.layers, m.hidden
    names = [c[0] for c in combos]
    col = lambda i: np.asarray([c[i] for c in combos], dtype=np.int64)[:, None, None]   # noqa: E731
    t, q, dp, c = col(1), col(2), col(3), col(4)
    zero3 = np.asarray([s == "zero3" for s in names])[:, None, None]
    zero23 = np.asarray([s in ("zero2", "zero3") for s in names])[:, None, None]
    ddp = np.asarray([s == "ddp" for s in names])[:, None, None]
    ddp1 = np.asarray([s in ("ddp", "zero1") for s in names])[:, None, None]
    ckb = np.asarray(ckpts, dtype=bool)[None, :, None]
    ck = np.where(ckb, 1.0, 0.0)
    mb = np.asarray(mbs, dtype=np.int64)[None, None, :]
    _, (bpp_w, bpp_g, bpp_o), trainable, per_token = _job_figures(job)
    err = np.seterr(all="ignore")   # layouts that cannot fit may divide by a zero link rate: never chosen
    try:
        # memory._parts at the base batch
        split = t * q
        stage_params = m.params / split
        stage_train = trainable / split
        z = dp * c
        s0 = np.where(zero3, z, 1)
        s1 = np.where(zero23, z, 1)
        s2 = np.where(ddp, 1, z)
        weights = stage_params * bpp_w / s0
        weights = np.where(s0 > 1, weights + 2 * m.params / m.layers / t * bpp_w, weights)
        gradients = stage_train * bpp_g / s1
        optimizer = stage_train * bpp_o / s2
        layers_here = np.ceil(layers / q)
        dms = dp * mb * seq
        share = base / dms
        in_flight = np.minimum(q, np.ceil(np.where(share > 1.0, share, 1.0)))
        sb = seq * mb
        full = sb * per_token / t
        act = np.where(ckb, 2.0 * sb * hidden / t * layers_here * in_flight + full, full * layers_here * in_flight)
        act = act / c
        logits = 4.0 * seq * mb * m.vocab / t / c
        total = weights + gradients + optimizer + (act + logits) + p.overhead_gb * GB

        # training._core and training._time at the layout's batch
        batch = np.where(dms > base, dms, base)
        count = dp * t * q * c
        tokens_per_gpu = batch / count
        imbalance = np.ceil(layers / q) * q / layers
        tps_list = [int(x) for x in t[:, 0, 0]]
        rates = {(tt, k): _per_token(job, gpu, p, tt, k) for tt in set(tps_list) for k in ckpts}
        dense = np.asarray([[rates[tt, k][0] for k in ckpts] for tt in tps_list])[:, :, None]
        attention = np.asarray([[rates[tt, k][1] for k in ckpts] for tt in tps_list])[:, :, None]
        compute_s = tokens_per_gpu * (dense + attention) * imbalance
        bw = (gpu.memory_bandwidth_gbps.value or 0.0) * GB
        elementwise = (p.memory_bytes_per_layer_element * m.layers * (m.hidden + m.ffn_width)
                       + p.memory_bytes_per_vocab_element * m.vocab) * (3.0 + ck) / 3.0
        opt_shards = np.where(ddp, 1, z)
        opt_state = OPTIMIZER_STEP_BYTES * trainable / (t * q * opt_shards)
        share = batch / dms
        micro = np.where(share > 1.0, share, 1.0)
        dequant: Any = 0.0
        if job.kind == "qlora":
            dequant = DEQUANT_BYTES * m.params / (t * q) * (2.0 + ck) * micro * imbalance
        memory_s = (tokens_per_gpu * elementwise * imbalance + opt_state + dequant) / bw
        virtual = job.virtual_stages or p.pipeline_virtual_stages
        chunks = np.where(q > 1, np.maximum(1, np.minimum(virtual, layers // q)), 1)
        bubble = (q - 1) / (micro * chunks)
        core = compute_s + memory_s

        combos_keys = list(zip(*(x[:, 0, 0].tolist() for x in (t, q, dp, c))))
        dp_s = _data_parallel(np, job, gpu, p, combos_keys, t, q, z, ddp1, zero23 & ~zero3, trainable, core, micro)
        tp_s = _tensor_parallel(np, gpu, p, combos_keys, t, q, z, ck, batch, layers, hidden)
        cp_s = _context_parallel(np, gpu, p, combos_keys, t, q, z, c, ck, batch, layers, m.kv_width,
                                 tokens_per_gpu, attention, imbalance)
        sync = _sync_factor(np, gpu, p, combos_keys)
        sync_s = np.where(sync > 0.0, sync * core * (1 + bubble), 0.0)
        comp = compute_s * (1 + bubble)
        mem = memory_s * (1 + bubble)
        comm = dp_s + tp_s + cp_s + sync_s
        tps = batch / (comp + mem + comm)
    finally:
        np.seterr(**err)
    shape = (len(combos), len(ckpts), len(mbs))
    return {k: np.broadcast_to(v, shape) for k, v in (
        ("total", total), ("compute_s", comp), ("memory_s", mem), ("comm_s", comm), ("tps", tps))}


def _tier_columns(np: Any, gpu: GPU, p: Params, keys: list[tuple[int, int]]) -> tuple[Any, ...]:
    """(per_server, servers, intra GB/s, network GB/s) of `_tier(gpu, group, stride)` per combination."""
    tiers = {k: _tier(gpu, k[0], k[1], p) for k in set(keys)}
    rows = [tiers[k] for k in keys]
    return tuple(np.asarray([r[f] for r in rows])[:, None, None]
                 for f in ("per_server", "servers", "intra_gbps", "network_gbps"))


def _data_parallel(np: Any, job: JobSpec, gpu: GPU, p: Params, keys: list, t: Any, q: Any, z: Any, ddp1: Any,
                   zero2: Any, trainable: float, core: Any, micro: Any) -> Any:
    """`_time`'s dp_s: gradients (and ZeRO-3's gathers) over the data-parallel group, as `_collective_seconds`."""
    if not (z > 1).any():
        return 0.0
    k, s, intra, net = _tier_columns(np, gpu, p, [(kd * kc, kt) for kt, _, kd, kc in keys])
    m = job.model
    grads = job.grad_reduce_bytes * trainable / (t * q)
    weights = 2.0 * m.params / (t * q)
    volume = np.where(ddp1, 2.0 * grads, np.where(zero2, micro * grads + weights, micro * (2.0 * weights + grads)))
    window = np.where(ddp1, core / micro * 2.0 / 3.0, core)
    raw = 0.0 + np.where((k > 1) & (intra > 0), (k - 1) / k * volume / (intra * GB), 0.0)
    raw = raw + np.where(s > 1, (s - 1) / s * volume / k / (net * GB), 0.0)
    hidden_part = (1.0 - p.comm_overlap) * raw
    late = raw - window
    return np.where(z > 1, np.where(hidden_part > late, hidden_part, late), 0.0)


def _tensor_parallel(np: Any, gpu: GPU, p: Params, keys: list, t: Any, q: Any, z: Any, ck: Any, batch: Any,
                     layers: int, hidden: int) -> Any:
    """`_time`'s tp_s: four all-reduces of the activations per layer (six when recomputing)."""
    if not (t > 1).any():
        return 0.0
    _, _, intra, _ = _tier_columns(np, gpu, p, [(kt, 1) for kt, _, _, _ in keys])
    per_token = (4.0 + 2.0 * ck) * 2.0 * (t - 1) / t * 2.0 * hidden
    return np.where(t > 1, (batch / z) * np.ceil(layers / q) * per_token / (intra * GB), 0.0)


def _context_parallel(np: Any, gpu: GPU, p: Params, keys: list, t: Any, q: Any, z: Any, c: Any, ck: Any,
                      batch: Any, layers: int, kv_width: float, tokens_per_gpu: Any, attention: Any,
                      imbalance: Any) -> Any:
    """`_time`'s cp_s: the ring's keys and values beyond what attention hides."""
    if not (c > 1).any():
        return 0.0
    _, servers, intra, net = _tier_columns(np, gpu, p, [(kc, kt) for kt, _, _, kc in keys])
    kv = (batch / z) * np.ceil(layers / q) * 2.0 * kv_width * 2.0 / t
    link = np.where(servers == 1, intra * GB, net * GB)
    raw = (c - 1) / c * kv * (3.0 + ck) / link
    late = raw - tokens_per_gpu * attention * imbalance
    return np.where(c > 1, np.where(late > 0.0, late, 0.0), 0.0)


def _sync_factor(np: Any, gpu: GPU, p: Params, keys: list) -> Any:
    """step_jitter x sqrt(2 ln S) for the S servers each combination spans (0 on one server), with
    `math`'s log and sqrt as `_time` takes them."""
    size = _once(_server_size, (gpu, p), (), gpu, p)
    factors = {}
    for kt, kq, kd, kc in set(keys):
        servers = math.ceil(kd * kt * kq * kc / size)
        factors[kt, kq, kd, kc] = p.step_jitter * math.sqrt(2.0 * math.log(servers)) if servers > 1 else 0.0
    return np.asarray([factors[k] for k in keys])[:, None, None]
