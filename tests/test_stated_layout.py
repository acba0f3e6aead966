"""The rule a measured run is timed by (advisor/perf/stated_layout.py), shared by the calibration bench
and `advisor calibrate`: a layout its source states is timed there, with the memory check lifted when the
memory model cannot hold it; anything else is placed by the estimator's search."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.perf import JobSpec, evaluate, params_from
from advisor.perf.jobspec import preset_spec
from advisor.perf.stated_layout import MEMORY_CHECK_LIFTED, run_estimate, stated_layout


@pytest.fixture(scope="module")
def job(catalog):
    """Llama 3 70B on 16 H100, zero3 x tensor parallel 8, micro-batch 1, no recompute: 96 GB per GPU in the model."""
    base = JobSpec(model=preset_spec(catalog, "llama-3-70b", None), global_batch_tokens=4e6)
    return replace(base, strategy="zero3", tensor_parallel=8, pipeline_parallel=1, micro_batch=1, checkpointing=False)


def test_a_layout_is_stated_when_every_field_is_given_and_sourced(job):
    assert stated_layout(job)
    assert not stated_layout(replace(job, checkpointing=None))
    assert stated_layout(job, ("micro_batch",))  # assumed at 1: conservative for memory
    assert not stated_layout(replace(job, micro_batch=4), ("micro_batch",))
    assert not stated_layout(job, ("tensor_parallel",))
    with pytest.raises(ValueError, match="allowed strategy"):
        stated_layout(job, ("micro-batch",))


def test_a_stated_layout_the_memory_model_cannot_hold_is_timed_there_with_the_check_lifted(catalog, job):
    p = params_from(catalog)
    gpu = catalog.gpus["h100-sxm"]
    assert not evaluate(job, gpu, 16, p).fits
    e, lifted = run_estimate(job, gpu, 16, p, stated=True)
    by_hand = evaluate(job, gpu, 16, replace(p, usable_memory_fraction=MEMORY_CHECK_LIFTED))
    assert lifted and e.fits and e.tokens_per_s == by_hand.tokens_per_s > 0
    assert e.layout["tensor_parallel"] == 8 and e.layout["checkpointing"] is False
    e, lifted = run_estimate(job, gpu, 16, p, stated=False)
    assert not lifted and not e.fits


def test_the_reason_a_job_does_not_fit_describes_its_own_layout_and_the_usable_memory(catalog, job):
    """It used to describe the widest tensor parallelism (8) for a job stating 2, and compare with the
    GPU's 80 GB without saying the model lets a job use 95% of it."""
    p = params_from(catalog)
    e = evaluate(replace(job, tensor_parallel=2, strategy="zero1"), catalog.gpus["h100-sxm"], 8, p)
    assert not e.fits
    assert "zero1 over 8 GPUs with tensor parallel 2;" in e.reason and "tensor parallel 8" not in e.reason
    assert f"use {80 * p.usable_memory_fraction:.1f} GB" in e.reason and "without checkpointing" in e.reason
    e = evaluate(
        replace(job, tensor_parallel=8, pipeline_parallel=2, strategy="zero1"), catalog.gpus["h100-sxm"], 16, p
    )
    assert "zero1 needs a data-parallel group to shard over" in e.reason
