"""The layout search: data parallel (DDP, ZeRO-1/2/3 = FSDP) x tensor parallel x pipeline parallel,
micro-batch and activation checkpointing; the fastest layout that fits, and the fewest GPUs that hold a job."""

from __future__ import annotations

import sys
from dataclasses import replace

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.perf.jobspec import JobSpec
from advisor.perf.layout_cache import remembered
from advisor.perf.layout_grid import fastest, fastest_scalar, timed
from advisor.perf.memory import Layout, default_batch_tokens, memory_total, usable_bytes
from advisor.perf.training import server_size

Timed = tuple[Layout, dict, float]  # (layout, the estimator's step times, tokens/s): layout_grid.timed
Chosen = tuple[Layout, dict, float, bool]  # ... and whether tensor parallelism is needed (rule INT001)

STRATEGIES = ("ddp", "zero1", "zero2", "zero3")
STRATEGY_ALIASES = {"fsdp": "zero3", "full_shard": "zero3", "shard_grad_op": "zero2"}
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16, 32, 64, 128)
MICRO_BATCHES = (128, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1)
MAX_MICRO_BATCH_TOKENS = 65_536  # larger micro-batches buy nothing once the matrices are large
LONG_SEQUENCE = 16_384  # context parallelism is searched from this sequence length up
TP_MARGIN = 0.10  # tensor parallelism is "needed" (rule INT001) only if >10% faster than without


def canonical_strategy(name: str | None) -> str | None:
    if name is None:
        return None
    return STRATEGY_ALIASES.get(name.lower(), name.lower())


def _parallel_sizes(job: JobSpec, gpu: GPU, p: Params) -> tuple[list[int], list[int]]:
    """Tensor-parallel sizes (within a server, dividing the heads) and pipeline sizes to consider."""
    m = job.model
    server = server_size(gpu, p)
    tps = (
        [job.tensor_parallel]
        if job.tensor_parallel
        else [t for t in TENSOR_PARALLEL if t <= server and m.heads % t == 0]
    )
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
    strategies = [canonical_strategy(job.strategy) or job.strategy] if job.strategy else list(STRATEGIES)
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


def _fastest(
    job: JobSpec, gpu: GPU, p: Params, base: float, combos: list[tuple[str, int, int, int, int]]
) -> tuple[Timed | None, ...]:
    """The fastest fitting layout without and with tensor parallelism, each as (layout, times,
    tokens/s) or None: every (combination, checkpointing, micro-batch) evaluated at once
    (perf/layout_grid.py), in the exhaustive scan's order, a later layout winning only if over 1%
    faster; the winners re-timed here by `step_time`, the estimator's own step."""
    cap = usable_bytes(gpu, p)
    if cap is None:  # (`_choose_layout` asks only about GPUs of known memory)
        return None, None
    ckpts = [job.checkpointing] if job.checkpointing is not None else [False, True]
    mbs: tuple[int, ...] = (job.micro_batch,) if job.micro_batch else MICRO_BATCHES
    first: dict[int, int] = {}
    for dp in {c[3] for c in combos}:  # a data-parallel size's micro-batches: a suffix of `mbs` (decreasing)
        first[dp] = len(mbs) - len(_micro_batch_options(job, dp, base))
    lo = min(first.values())  # micro-batches no combination may use are left out
    search = fastest if "numpy" in sys.modules else fastest_scalar  # (see fastest_scalar)
    lays = search(job, gpu, p, base, cap, combos, ckpts, mbs[lo:], [first[c[3]] - lo for c in combos])
    return tuple(None if lay is None else timed(job, gpu, p, base, lay) for lay in lays)


def layout_batch(job: JobSpec, lay: Layout, p: Params) -> float:
    batch = job.global_batch_tokens or default_batch_tokens(job.model, p)
    return max(batch, lay.dp * lay.micro_batch * job.model.seq_len)


def choose_layout(job: JobSpec, gpu: GPU, count: int, p: Params) -> Chosen | None:
    """`_choose_layout`, remembered for the process (perf/layout_cache.py): re-planning the same jobs under
    another deployment, budget or batch re-asks the same layouts."""
    return remembered(_choose_layout, "layout", job, gpu, count, p)


def _choose_layout(job: JobSpec, gpu: GPU, count: int, p: Params) -> Chosen | None:
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
    held = [c for c in combos if c[3] * s <= base * 1.0001]  # the batch feeds every data-parallel group
    for stage in (held, [c for c in combos if c not in held]):
        if not stage:
            continue
        no_tp, with_tp = _fastest(job, gpu, p, base, stage)
        if no_tp is None and with_tp is None:
            continue  # no pipelined layout fitted either
        needs = no_tp is None or (with_tp is not None and with_tp[2] > no_tp[2] * (1 + TP_MARGIN))
        if job.tensor_parallel and with_tp is not None:  # fixed by the caller: would the job run (well) without it?
            alt = choose_layout(replace(job, tensor_parallel=1), gpu, count, p)
            return with_tp + (alt is None or with_tp[2] > alt[2] * (1 + TP_MARGIN),)
        if no_tp and (with_tp is None or not p2p or with_tp[2] <= no_tp[2] * 1.01):
            return no_tp + (False,)
        assert with_tp is not None  # (both None continued above)
        return with_tp + (needs,)
    return None


def _frugal_fits(job: JobSpec, gpu: GPU, dp: int, t: int, q: int, p: Params, cap: float, batch: float) -> bool:
    """Does the least memory-hungry layout with this (dp, tp, pp) fit?"""
    strategies = [canonical_strategy(job.strategy) or job.strategy] if job.strategy else ["zero3" if dp > 1 else "ddp"]
    ckpt = job.checkpointing if job.checkpointing is not None else True
    mb = job.micro_batch or 1
    return any(memory_total(job, Layout(s, dp, t, q, mb, ckpt), p, batch) <= cap for s in strategies)


def min_gpus(job: JobSpec, gpu: GPU, p: Params, limit: int = 100_000) -> int | None:
    """`_min_gpus`, remembered for the process (perf/layout_cache.py)."""
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
