"""How far one training estimate's real speed may be from it: the one distribution a job's deadline
and horizon rows (solve/class_candidates.py: its time at the workload's confidence), its printed
P10-P90 time and its cost draws (explain/draws.estimate_speed) all read, so a plan never holds a job
to a band it does not print."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.data.uncertainty import LogDist, measurement_dist, speed_dist
from advisor.perf.estimate import Estimate
from advisor.perf.published_mfu import mfu_cap

SpeedLookup = Callable[[GPU, str, "str | None"], LogDist]  # (GPU, precision, speed evidence) -> log error


def speed_error(
    gpu: GPU, precision: str, e: Estimate, params: Params, count: int, lookup: SpeedLookup = speed_dist
) -> LogDist:
    """The real speed / estimate `e` (of `count` GPUs of `gpu`): the user's own measurement's spread
    when the speed is theirs (`speed_spread`), else the error of its evidence (`speed_evidence`, by
    `lookup`); capped where the job would beat the best MFU ever published on its generation
    (perf/published_mfu.mfu_cap) or the top of the user's measurement, so no quantile is faster than
    physics and the record allow."""
    spread = getattr(e, "speed_spread", None)  # (a serving estimate, or a stand-in, has none)
    if spread is not None:
        return measurement_dist(spread)
    dist = lookup(gpu, precision, getattr(e, "speed_evidence", None))
    best = mfu_cap(gpu, precision, params, count)
    return replace(dist, cap=max(1.0, best / e.mfu)) if best and e.mfu > 0 else dist
