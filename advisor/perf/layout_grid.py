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

    st = _static(gpu, p, tuple(combos))
    g = grid(job, gpu, p, base, combos, ckpts, mbs, st)
    K, C, M = len(combos), len(ckpts), len(mbs)
    valid = np.arange(M) >= np.asarray(start)[:, None, None]
    sel = (g["total"] <= cap) & valid
    flat = st["flat"]
    if flat.any():   # without pipelining: the first fitting micro-batch, by bisection
        rows = sel[flat]
        have = rows.any(axis=-1)
        first = np.where(have, rows.argmax(axis=-1), M)
        if M > 1:
            for i, j in zip(*np.nonzero(have & ~(rows[..., :-1] <= rows[..., 1:]).all(axis=-1))):
                first[i, j] = _bisect(rows[i, j], int(start[int(np.flatnonzero(flat)[i])]), M)
        sel[flat] = np.arange(M) == first[..., None]
    order = np.flatnonzero(sel.ravel())           # the scan's order: combination, checkpointing, micro-batch
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


def _static(gpu: GPU, p: Params, combos: tuple[Combo, ...]) -> dict[str, Any]:
    """What depends only on the GPU, the parameters and the combinations (the links each
    collective crosses, the servers spanned), as arrays of shape (combinations, 1, 1): shared by
    every job searched with the same combinations."""
    return _once(_build_static, (gpu, p), (combos,), gpu, p, combos)


_CODES = {"ddp": 0, "zero1": 1, "zero2": 2, "zero3": 3}   # any other name: 4 (as `_time`'s last branch)


def _build_static(gpu: GPU, p: Params, combos: tuple[Combo, ...]) -> dict[str, Any]:
    import numpy as np

    keys = [c[1:] for c in combos]            # (tp, pp, dp, cp)
    arr = np.asarray(keys)
    code = np.asarray([_CODES.get(c[0], 4) for c in combos])[:, None, None]
    t, q, dp, c = (arr[:, i, None, None] for i in range(4))
    out: dict[str, Any] = {"t": t, "q": q, "dp": dp, "c": c, "z": dp * c, "ddp": code == 0, "ddp1": code <= 1,
                           "zero2": code == 2, "zero3": code == 3, "zero23": (code == 2) | (code == 3)}
    out["flat"] = arr[:, 1] == 1
    out["tp_flat"] = arr[:, 0]
    ts = sorted(set(arr[:, 0].tolist()))
    out["t_values"], out["t_index"] = ts, np.searchsorted(ts, arr[:, 0])
    out["any_dp"], out["any_tp"], out["any_cp"] = (bool((x > 1).any()) for x in (out["z"], t, c))
    for name, wanted, members in (("dp_", out["any_dp"], lambda: [(k[2] * k[3], k[0]) for k in keys]),
                                  ("tp_", out["any_tp"], lambda: [(k[0], 1) for k in keys]),
                                  ("cp_", out["any_cp"], lambda: [(k[3], k[0]) for k in keys])):
        if wanted:   # the links of each collective: one `_tier` per distinct (group, stride)
            index: dict[tuple[int, int], int] = {}
            rows = [index.setdefault(m, len(index)) for m in members()]
            table = np.asarray([[r["per_server"], r["servers"], r["intra_gbps"], r["network_gbps"]]
                                for r in (_tier(gpu, g, st, p) for g, st in index)], dtype=float)[rows]
            for i, f in enumerate(("per_server", "servers", "intra_gbps", "network_gbps")):
                out[name + f] = table[:, i, None, None]
    servers = np.ceil(arr.prod(axis=1) / _server_size(gpu, p))   # `_time`'s count / server size
    spans, where = np.unique(servers, return_inverse=True)
    factors = [p.step_jitter * math.sqrt(2.0 * math.log(int(n))) if n > 1 else 0.0 for n in spans.tolist()]
    out["sync"] = np.asarray(factors)[where.reshape(-1)][:, None, None]
    return out


def grid(job: JobSpec, gpu: GPU, p: Params, base: float, combos: list[Combo], ckpts: list[bool],
         mbs: tuple[int, ...], st: dict[str, Any] | None = None) -> dict[str, Any]:
    """Memory per GPU at the base batch (`total`, as `memory_total`) and the step (`compute_s`,
    `memory_s`, `comm_s`, as `_time`, and `tps`, the search's tokens/s) for every (combination,
    checkpointing, micro-batch): arrays that broadcast to (combinations, checkpointing, micro-batches)."""
    import numpy as np

    st = st or _static(gpu, p, tuple(combos))
    m = job.model
    seq, layers, hidden = m.seq_len, m.layers, m.hidden
    t, q, dp, c, z = st["t"], st["q"], st["dp"], st["c"], st["z"]
    ckb = np.asarray(ckpts)[:, None]
    ck = np.where(ckb, 1.0, 0.0)
    mb = np.asarray(mbs)
    _, (bpp_w, bpp_g, bpp_o), trainable, per_token = _job_figures(job)
    with np.errstate(all="ignore"):   # layouts that cannot fit may divide by a zero link rate: never chosen
        # memory._parts at the base batch
        split = t * q
        stage_params = m.params / split
        stage_train = trainable / split
        s0 = np.where(st["zero3"], z, 1)
        weights = stage_params * bpp_w / s0
        weights = np.where(s0 > 1, weights + 2 * m.params / m.layers / t * bpp_w, weights)
        gradients = stage_train * bpp_g / np.where(st["zero23"], z, 1)
        optimizer = stage_train * bpp_o / np.where(st["ddp"], 1, z)
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
        tokens_per_gpu = batch / (dp * t * q * c)
        imbalance = layers_here * q / layers
        rates = np.asarray([[_per_token(job, gpu, p, tt, k) for k in ckpts] for tt in st["t_values"]])
        dense = rates[st["t_index"], :, 0][:, :, None]
        attention = rates[st["t_index"], :, 1][:, :, None]
        compute_s = tokens_per_gpu * (dense + attention) * imbalance
        bw = (gpu.memory_bandwidth_gbps.value or 0.0) * GB
        elementwise = (p.memory_bytes_per_layer_element * m.layers * (m.hidden + m.ffn_width)
                       + p.memory_bytes_per_vocab_element * m.vocab) * (3.0 + ck) / 3.0
        opt_state = OPTIMIZER_STEP_BYTES * trainable / (split * np.where(st["ddp"], 1, z))
        share = batch / dms
        micro = np.where(share > 1.0, share, 1.0)
        dequant: Any = 0.0
        if job.kind == "qlora":
            dequant = DEQUANT_BYTES * m.params / split * (2.0 + ck) * micro * imbalance
        memory_s = (tokens_per_gpu * elementwise * imbalance + opt_state + dequant) / bw
        virtual = job.virtual_stages or p.pipeline_virtual_stages
        chunks = np.where(q > 1, np.maximum(1, np.minimum(virtual, layers // q)), 1)
        bubble = (q - 1) / (micro * chunks)
        core = compute_s + memory_s

        dp_s: Any = 0.0
        if st["any_dp"]:   # gradients (and ZeRO-3's gathers) over the data-parallel group
            k, s = st["dp_per_server"], st["dp_servers"]
            intra, net = st["dp_intra_gbps"], st["dp_network_gbps"]
            grads = job.grad_reduce_bytes * trainable / split
            wts = 2.0 * m.params / split
            volume = np.where(st["ddp1"], 2.0 * grads, np.where(st["zero2"], micro * grads + wts,
                                                                 micro * (2.0 * wts + grads)))
            window = np.where(st["ddp1"], core / micro * 2.0 / 3.0, core)
            raw = 0.0 + np.where((k > 1) & (intra > 0), (k - 1) / k * volume / (intra * GB), 0.0)
            raw = raw + np.where(s > 1, (s - 1) / s * volume / k / (net * GB), 0.0)
            exposed = (1.0 - p.comm_overlap) * raw
            late = raw - window
            dp_s = np.where(z > 1, np.where(exposed > late, exposed, late), 0.0)
        tp_s: Any = 0.0
        if st["any_tp"]:   # four all-reduces of the activations per layer (six when recomputing)
            per_tok = (4.0 + 2.0 * ck) * 2.0 * (t - 1) / t * 2.0 * hidden
            tp_s = np.where(t > 1, (batch / z) * layers_here * per_tok / (st["tp_intra_gbps"] * GB), 0.0)
        cp_s: Any = 0.0
        if st["any_cp"]:   # the ring's keys and values beyond what attention hides
            kv = (batch / z) * layers_here * 2.0 * m.kv_width * 2.0 / t
            link = np.where(st["cp_servers"] == 1, st["cp_intra_gbps"] * GB, st["cp_network_gbps"] * GB)
            late = (c - 1) / c * kv * (3.0 + ck) / link - tokens_per_gpu * attention * imbalance
            cp_s = np.where(c > 1, np.where(late > 0.0, late, 0.0), 0.0)
        sync = st["sync"]
        sync_s = np.where(sync > 0.0, sync * core * (1 + bubble), 0.0)
        comp = compute_s * (1 + bubble)
        mem = memory_s * (1 + bubble)
        comm = dp_s + tp_s + cp_s + sync_s
        tps = batch / (comp + mem + comm)
    return {"total": total, "compute_s": comp, "memory_s": mem, "comm_s": comm, "tps": tps}
