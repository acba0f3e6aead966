"""The layout search: data parallel (DDP, ZeRO-1/2/3 = FSDP) x tensor parallel x pipeline parallel,
micro-batch and activation checkpointing; the fastest layout that fits, and the fewest GPUs that hold a job."""
from __future__ import annotations

from dataclasses import replace

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.perf.jobspec import JobSpec
from advisor.perf.memo import remembered
from advisor.perf.memory import (
    Layout,
    _memory,
    default_batch_tokens,
    memory_total,
    usable_bytes,
)
from advisor.perf.training import _per_token, _server_size, _time, floor_function

STRATEGIES = ("ddp", "zero1", "zero2", "zero3")
STRATEGY_ALIASES = {"fsdp": "zero3", "full_shard": "zero3", "shard_grad_op": "zero2"}
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16, 32, 64, 128)
MICRO_BATCHES = (128, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1)
MAX_MICRO_BATCH_TOKENS = 65_536       # larger micro-batches buy nothing once the matrices are large
LONG_SEQUENCE = 16_384                # context parallelism is searched from this sequence length up
TP_MARGIN = 0.10                      # tensor parallelism is "needed" (rule INT001) only if >10% faster than without
FLOOR_MARGIN = 1e-12                  # the bound is lowered by this much against any rounding difference


def _strategy(name: str | None) -> str | None:
    if name is None:
        return None
    return STRATEGY_ALIASES.get(name.lower(), name.lower())


def _parallel_sizes(job: JobSpec, gpu: GPU, p: Params) -> tuple[list[int], list[int]]:
    """Tensor-parallel sizes (within a server, dividing the heads) and pipeline sizes to consider."""
    m = job.model
    server = _server_size(gpu, p)
    tps = [job.tensor_parallel] if job.tensor_parallel else [
        t for t in TENSOR_PARALLEL if t <= server and m.heads % t == 0]
    pps = [job.pipeline_parallel] if job.pipeline_parallel else [q for q in PIPELINE_PARALLEL if q <= m.layers]
    return tps, pps


def _context_sizes(job: JobSpec, p: Params) -> list[int]:
    """Context-parallel sizes: only for long sequences (each GPU keeps at least 2,048 tokens of one)."""
    if job.context_parallel:
        return [job.context_parallel]
    s = job.model.seq_len
    if s < LONG_SEQUENCE:
        return [1]
    return [c for c in (1, 2, 4, 8, 16, 32) if c <= p.context_parallel_max and s // c >= 2048]


def _options(job: JobSpec, gpu: GPU, count: int, p: Params) -> list[tuple[str, int, int, int, int]]:
    """(strategy, tp, pp, dp, cp) combinations for `count` GPUs, honouring what the job fixes. When
    tp x pp x cp does not divide `count` the remainder idles (5 GPUs can run tensor parallelism 2
    on 4); such combinations come last, so they win only by being faster."""
    tps, pps = _parallel_sizes(job, gpu, p)
    strategies = [_strategy(job.strategy) or job.strategy] if job.strategy else list(STRATEGIES)
    fixed = job.tensor_parallel or job.pipeline_parallel or job.context_parallel
    out = []
    for c in _context_sizes(job, p):
        for t in tps:
            for q in pps:
                dp = count // (t * q * c)
                if dp < 1 or (count % (t * q * c) and fixed):
                    continue
                for s in strategies:
                    if dp * c == 1 and s != strategies[0] and job.strategy is None:
                        continue  # sharding over one GPU is no sharding
                    if dp * c == 1 < count and job.strategy and s != "ddp":
                        continue  # a sharding strategy the caller asked for needs a group to shard over
                    out.append((s, t, q, dp, c))
    # stable: exact combinations first, then simpler ones (pipelining, then context parallelism last)
    return sorted(out, key=lambda o: (o[1] * o[2] * o[3] * o[4] < count, o[2] > 1, o[4] > 1))


def _micro_batch_options(job: JobSpec, dp: int, batch: float) -> list[int]:
    if job.micro_batch:
        return [job.micro_batch]
    s = job.model.seq_len
    cap = max(1.0, min(MAX_MICRO_BATCH_TOKENS / s, batch / (dp * s)))
    return [b for b in MICRO_BATCHES if b <= cap] or [1]


# a layout to consider: (strategy, tp, pp, dp, cp, checkpointing, micro-batch, the Layout once it is known to fit)
Entry = tuple[str, int, int, int, int, bool, int, "Layout | None"]


def _fitting(job: JobSpec, gpu: GPU, count: int, p: Params, batch: float, combos) -> list[Entry]:
    """For each (strategy, tp, pp, cp) and checkpointing choice, the largest micro-batch that fits
    (with pipelining every one that fits: smaller ones shrink the bubble). Pipelined layouts come
    unchecked (no Layout yet): `_best` tests their memory only if their bound leaves them a
    chance, since most never could win."""
    cap = usable_bytes(gpu, p)
    if cap is None:   # (`_choose_layout` asks only about GPUs of known memory)
        return []
    ckpts = [job.checkpointing] if job.checkpointing is not None else [False, True]
    out: list[Entry] = []
    for s, t, q, dp, c in combos:
        options = _micro_batch_options(job, dp, batch)
        if q > 1 and _state_bytes(job, Layout(s, dp, t, q, options[-1], False, c), p, batch) > cap:
            continue   # the model's state alone overflows, whatever the activations
        for ckpt in ckpts:
            if q == 1:
                lay = _largest_fitting(job, p, batch, cap, [Layout(s, dp, t, q, mb, ckpt, c) for mb in options])
                if lay is not None:
                    out.append((s, t, q, dp, c, ckpt, lay.micro_batch, lay))
                continue
            out.extend((s, t, q, dp, c, ckpt, mb, None) for mb in options)
    return out


def _fits(job: JobSpec, lay: Layout, p: Params, batch: float, cap: float) -> bool:
    return memory_total(job, lay, p, batch) <= cap


def _state_bytes(job: JobSpec, lay: Layout, p: Params, batch: float) -> float:
    """`_memory`'s sum without the activations (which only add, in the same order): a lower bound."""
    mem = _memory(job, lay, p, batch)
    return mem["weights"] + mem["gradients"] + mem["optimizer"] + mem["overhead"]


def _largest_fitting(job: JobSpec, p: Params, batch: float, cap: float, layouts: list[Layout]) -> Layout | None:
    """The first of `layouts` (micro-batches largest first, no pipelining) that fits. Without
    pipelining one micro-batch is in flight, and every term of `_memory` grows with the
    micro-batch through monotone float operations, so the fitting ones are a suffix: bisect."""
    lo, hi = 0, len(layouts)
    while lo < hi:
        mid = (lo + hi) // 2
        if _fits(job, layouts[mid], p, batch, cap):
            hi = mid
        else:
            lo = mid + 1
    return layouts[lo] if lo < len(layouts) else None


def _batch(job: JobSpec, lay: Layout, p: Params) -> float:
    batch = job.global_batch_tokens or default_batch_tokens(job.model, p)
    return max(batch, lay.dp * lay.micro_batch * job.model.seq_len)


def _best(job: JobSpec, gpu: GPU, entries: list[Entry], p: Params, base: float):
    """The fastest layout that fits; a more complex one (listed later) must be over 1% faster to
    win. Branch-and-bound: a layout whose compute alone (`compute_floor`, a lower bound on its
    step) cannot beat the layout in hand by 1% is neither memory-tested nor timed. The incumbent
    only improves, so a skipped layout would not have won: the answer is the full scan's."""
    cap = usable_bytes(gpu, p)
    if cap is None:
        return None
    best = None
    per_token: dict[tuple[int, bool], tuple[float, float]] = {}   # (tp, checkpointing) -> _per_token
    floors: dict[tuple, float] = {}   # the bound holds for every strategy: one per (tp, pp, dp, cp, ckpt, mb)
    seq = job.model.seq_len
    floor_of = None   # training.floor_function's answer, once a floor is needed
    for s, t, q, dp, c, ckpt, mb, lay in entries:
        batch = max(base, dp * mb * seq)   # = _batch(job, lay, p)
        if best is not None:
            key = (t, q, dp, c, ckpt, mb)
            floor = floors.get(key)
            if floor is None:
                rates = per_token.get((t, ckpt))
                if rates is None:
                    rates = per_token[t, ckpt] = _per_token(job, gpu, p, t, ckpt)
                if floor_of is None:
                    floor_of = floor_function(job, gpu, p)
                floor = floors[key] = floor_of(rates, t, q, dp, c, ckpt, mb, batch) * (1.0 - FLOOR_MARGIN)
            if floor > 0 and batch / floor <= best[2] * 1.01:
                continue
        if lay is None:
            lay = Layout(s, dp, t, q, mb, ckpt, c)
            if not _fits(job, lay, p, base, cap):
                continue
        times = _time(job, gpu, lay, batch, p, per_token.get((t, ckpt)))
        tps = batch / (times["compute_s"] + times["memory_s"] + times["comm_s"])
        if best is None or tps > best[2] * 1.01:
            best = (lay, times, tps)
    return best


def choose_layout(job: JobSpec, gpu: GPU, count: int, p: Params):
    """`_choose_layout`, remembered for the process (perf/memo.py): re-planning the same jobs under
    another deployment, budget or batch re-asks the same layouts."""
    return remembered(_choose_layout, "layout", job, gpu, count, p)


def _choose_layout(job: JobSpec, gpu: GPU, count: int, p: Params):
    """The fastest layout that fits on `count` GPUs at the job's global batch, as (layout, times,
    tokens/s, needs_tensor_parallel), or None. Only when no layout holds the batch (too few
    sequences for the data-parallel groups) may the batch grow; `evaluate` says so. Pipelining
    and context parallelism are chosen whenever they are over 1% faster (so a larger model never
    runs faster than a smaller one on the same GPUs), and so is tensor parallelism over NVLink; it
    counts as needed (rule INT001) when the job cannot run without it or runs more than TP_MARGIN
    slower. Over PCIe without peer-to-peer, tensor parallelism only when no layout without it fits."""
    if usable_bytes(gpu, p) is None:
        return None
    base = job.global_batch_tokens or default_batch_tokens(job.model, p)
    s = job.model.seq_len
    combos = _options(job, gpu, count, p)
    p2p = gpu.interconnect.p2p.value is True or gpu.interconnect.link != "none"
    held = [c for c in combos if c[3] * s <= base * 1.0001]   # the batch feeds every data-parallel group
    for stage in (held, [c for c in combos if c not in held]):
        fits = _fitting(job, gpu, count, p, base, stage) if stage else []
        if not fits:
            continue
        no_tp = _best(job, gpu, [f for f in fits if f[1] == 1], p, base)
        with_tp = _best(job, gpu, [f for f in fits if f[1] > 1], p, base)
        if no_tp is None and with_tp is None:
            continue   # no pipelined layout fitted either
        needs = no_tp is None or (with_tp is not None and with_tp[2] > no_tp[2] * (1 + TP_MARGIN))
        if job.tensor_parallel and with_tp is not None:  # fixed by the caller: would the job run (well) without it?
            alt = choose_layout(replace(job, tensor_parallel=1), gpu, count, p)
            return with_tp + (alt is None or with_tp[2] > alt[2] * (1 + TP_MARGIN),)
        if no_tp and (with_tp is None or not p2p or with_tp[2] <= no_tp[2] * 1.01):
            return no_tp + (False,)
        return with_tp + (needs,)
    return None


def _frugal_fits(job: JobSpec, gpu: GPU, dp: int, t: int, q: int, p: Params, cap: float, batch: float) -> bool:
    """Does the least memory-hungry layout with this (dp, tp, pp) fit?"""
    strategies = [_strategy(job.strategy) or job.strategy] if job.strategy else ["zero3" if dp > 1 else "ddp"]
    ckpt = job.checkpointing if job.checkpointing is not None else True
    mb = job.micro_batch or 1
    return any(memory_total(job, Layout(s, dp, t, q, mb, ckpt), p, batch) <= cap for s in strategies)


def min_gpus(job: JobSpec, gpu: GPU, p: Params, limit: int = 100_000) -> int | None:
    """`_min_gpus`, remembered for the process (perf/memo.py)."""
    return remembered(lambda j, g, n, q: _min_gpus(j, g, q, n), "min_gpus", job, gpu, limit, p)


def _min_gpus(job: JobSpec, gpu: GPU, p: Params, limit: int = 100_000) -> int | None:
    """Smallest GPU count on which some layout holds the job, or None (within `limit`)."""
    cap = usable_bytes(gpu, p)
    if cap is None:
        return None
    batch = job.global_batch_tokens or default_batch_tokens(job.model, p)
    tps, pps = _parallel_sizes(job, gpu, p)
    best = None
    for t in tps:
        for q in pps:
            top = limit // (t * q)
            if top < 1 or not _frugal_fits(job, gpu, top, t, q, p, cap, batch):
                continue
            lo, hi = 1, top
            while lo < hi:  # memory per GPU falls as the data-parallel group grows
                mid = (lo + hi) // 2
                if _frugal_fits(job, gpu, mid, t, q, p, cap, batch):
                    hi = mid
                else:
                    lo = mid + 1
            n = lo * t * q
            if best is None or n < best:
                best = n
    return best
