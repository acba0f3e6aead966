"""A measured run timed in the layout it ran (docs/model.md §1.8): the rule the calibration bench
(bench/calibration.py) and a user's own calibration (`advisor calibrate`, perf/calibrate.py) share.

A run held its layout on its GPUs, so where the layout is stated the estimator times it there even
when its memory model cannot hold it (the model leaves out savings some runs make: fp8-stored
weights and activations, a pipeline's deallocated stage tensors), with the memory check lifted
(usable memory x MEMORY_CHECK_LIFTED). A run whose layout is not stated is placed by the estimator's
own search, which must find a layout that fits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from advisor.data.catalog_entries import GPU
from advisor.data.estimator import Params
from advisor.perf.estimate import Estimate, evaluate
from advisor.perf.jobspec import JobSpec

LAYOUT_FIELDS = ("strategy", "tensor_parallel", "pipeline_parallel", "micro_batch", "checkpointing")
MEMORY_CHECK_LIFTED = 100.0  # usable memory x this: no stated layout of a real run is held back by it


def stated_layout(job: JobSpec, assumed: Iterable[str] = ()) -> bool:
    """Does the run's source state its layout: sharding, tensor and pipeline parallelism and
    activation recompute given and none of them an assumption (`assumed`: the LAYOUT_FIELDS the
    source does not state)? The micro-batch may be an assumption at its minimum of 1: activation
    memory only grows with it, so if the memory model cannot hold the layout at 1 it cannot hold
    the one that ran either, and lifting the check does not rest on the assumption (its speed
    does, and the row's source notes say so)."""
    unsourced = set(assumed)
    if unknown := unsourced - set(LAYOUT_FIELDS):
        raise ValueError(f"assumed layout fields {sorted(unknown)}: allowed {', '.join(LAYOUT_FIELDS)}")
    if any(getattr(job, k) is None for k in LAYOUT_FIELDS):
        return False
    if "micro_batch" in unsourced and job.micro_batch != 1:
        return False
    return not unsourced - {"micro_batch"}


def run_estimate(job: JobSpec, gpu: GPU, count: int, p: Params, stated: bool) -> tuple[Estimate, bool]:
    """The estimate of a measured run and whether the memory check was lifted for it: the estimator's
    own answer, or, where the layout is `stated` (stated_layout) and the memory model cannot hold
    it, the answer in that layout with the memory check lifted."""
    e = evaluate(job, gpu, count, p)
    if e.fits or not stated:
        return e, False
    lifted = evaluate(job, gpu, count, replace(p, usable_memory_fraction=MEMORY_CHECK_LIFTED))
    return (lifted, True) if lifted.fits else (e, False)
