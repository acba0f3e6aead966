"""A training step's parts as printed (`step_breakdown`): the performance model's compute, memory and
communication seconds, then the seconds by which the step at the stated tokens/s departs from their sum,
each under its cause (docs/model.md §1.3): held to a published MFU, a datasheet derating, a measurement.
The parts add up to global_batch_tokens / tokens_per_s."""

from __future__ import annotations

MODEL_PARTS = ("compute_s", "memory_s", "comm_s")
HELD, DERATED, MEASURED = "held_to_mfu_ceiling_s", "datasheet_derating_s", "measured_adjustment_s"
ADJUSTMENTS = (HELD, DERATED, MEASURED)


def model_step(parts: dict) -> float:
    """The performance model's step: its compute, memory and communication seconds."""
    return sum(parts[k] for k in MODEL_PARTS)


def empty_parts() -> dict:
    """The parts of a job that does not run: every one 0."""
    return dict.fromkeys(MODEL_PARTS + ADJUSTMENTS, 0.0)


def held_parts(t: dict, batch: float, model_tps: float, held_tps: float, derated_tps: float) -> dict:
    """The model's parts of step `t` (at `model_tps`), the seconds the hold to the published MFU adds (the
    step at `held_tps` over the model's) and those the datasheet derating adds (at `derated_tps` over
    `held_tps`). A speed not held adds exactly 0."""
    parts = {k: t[k] for k in MODEL_PARTS}
    step = model_step(parts)
    held = batch / held_tps - step if 0 < held_tps < model_tps else 0.0
    derated = batch / derated_tps - batch / held_tps if derated_tps > 0 and held_tps > 0 else 0.0
    return {**parts, HELD: held, DERATED: derated, MEASURED: 0.0}


def measured_parts(parts: dict, batch: float, before_tps: float, factor: float, level: str) -> dict:
    """`parts` with the seconds the job's own measurement moves the step by, from `before_tps` to
    `factor` times it. A speed measured on this GPU and count (`level` measured) replaces the held and
    derated one: the whole difference from the model's step is the measurement's; a moved one
    (transferred) adds to them."""
    after_tps = before_tps * factor
    if after_tps <= 0 or before_tps <= 0:
        return parts
    if level == "measured":
        return {**parts, HELD: 0.0, DERATED: 0.0, MEASURED: batch / after_tps - model_step(parts)}
    return {**parts, MEASURED: parts[MEASURED] + batch / after_tps - batch / before_tps}
