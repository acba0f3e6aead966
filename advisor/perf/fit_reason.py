"""Why a training job does not fit on n GPUs (`Estimate.reason` when no layout fits): the memory of
the least-memory layout the job allows, in the job's own terms (what it states kept), against the
memory the model lets a job use (`usable_memory_fraction` of the GPU's)."""

from __future__ import annotations

from advisor.data.catalog_entries import GPU
from advisor.data.estimator import Params
from advisor.perf.jobspec import JobSpec
from advisor.perf.layout import TENSOR_PARALLEL, canonical_strategy
from advisor.perf.memory import GB, Layout, default_batch_tokens, layout_memory


def least_memory_layout(job: JobSpec, count: int) -> Layout:
    """The layout the job states, its unstated parts at their least memory: fully sharded (zero3 when
    there is a data-parallel group), with checkpointing, micro-batch 1, at the widest tensor
    parallelism the count and the heads allow, no pipeline or context parallelism."""
    allowed = [t for t in TENSOR_PARALLEL if count % t == 0 and job.model.heads % t == 0]
    tp = job.tensor_parallel or max(allowed, default=1)
    pp, cp = job.pipeline_parallel or 1, job.context_parallel or 1
    dp = max(1, count // (tp * pp * cp))
    strategy = canonical_strategy(job.strategy) or "zero3"
    ckpt = True if job.checkpointing is None else job.checkpointing
    return Layout(strategy if dp * cp > 1 else "ddp", dp, tp, pp, job.micro_batch or 1, ckpt, cp)


def _described(job: JobSpec, lay: Layout) -> tuple[str, str]:
    """(the parallel degrees, ', zero3 over 16 GPUs with tensor parallel 8'-style layout words)."""
    degrees = " x ".join(
        f"{name} {n}"
        for name, n in (("tensor parallel", lay.tp), ("pipeline parallel", lay.pp), ("context parallel", lay.cp))
        if n > 1
    )
    sharded = f"{lay.strategy} " if lay.shard_group > 1 else ""
    split = (f", {sharded}over {lay.count} GPUs" if lay.count > 1 else "") + (f" with {degrees}" if degrees else "")
    return degrees, split


def does_not_fit(job: JobSpec, gpu: GPU, count: int, p: Params) -> tuple[float, str]:
    """(GB per GPU, why) for a job no layout fits: the memory of least_memory_layout against the memory
    the model lets a job use; or, where that is not the reason, what is (a sharding strategy the job
    states with no data-parallel group left to shard over; degrees that do not place it)."""
    lay = least_memory_layout(job, count)
    need = sum(layout_memory(job, lay, p, job.global_batch_tokens or default_batch_tokens(job.model, p)).values()) / GB
    degrees, split = _described(job, lay)
    stated = canonical_strategy(job.strategy)
    if lay.shard_group == 1 < count and stated not in (None, "ddp"):
        return need, f"{stated} needs a data-parallel group to shard over: {degrees} on {count} GPUs leaves none"
    size = float(gpu.memory_gb.value or 0.0)
    usable = size * p.usable_memory_fraction
    has = f"{gpu.name} has {size:g} GB, of which the memory model lets a job use {usable:.1f} GB"
    if need <= usable:  # not memory: the stated degrees do not place it on the GPUs or the heads
        return need, f"no layout{split} places it on {count} GPUs; its least memory, {need:.1f} GB per GPU, fits: {has}"
    how = (
        " even with checkpointing"
        if job.checkpointing is None
        else ("" if lay.checkpointing else " without checkpointing")
    )
    return need, f"needs {need:.1f} GB per GPU{how}{split}; {has} (usable_memory_fraction {p.usable_memory_fraction:g})"
