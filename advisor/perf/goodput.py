"""Goodput: the share of a training job's wall-clock time that trains, after failures, restarts
and checkpoints (docs/model.md §1.6). Parameters and their sources: catalog/estimator.yaml `goodput`.

With interruptions arriving at `lambda` per GPU-hour, a job on n GPUs is interrupted at
L = lambda n per hour. Each interruption costs the restart time R plus, on average, half a
checkpoint interval of lost work; each checkpoint stalls training C hours. The interval that
minimises the loss is Young's tau* = sqrt(2 C / L); a job shorter than that needs none, and a
failure then loses half the job so far. Per hour of training the loss is

    C / tau + L (tau / 2 + R),   tau = min(tau*, T)   (no checkpoint term when tau = T)

and goodput = 1 / (1 + loss + evaluation share). The loss grows with n (linearly in L) and, up to
tau*, with the job's length T. Llama 3 405B (466 interruptions in 54 days on 16,384 H100, R = 11
min, C = 10 s) gives 0.900, the paper's "more than 90% effective training time".
"""

from __future__ import annotations

import math

from advisor.data.estimator import Params


def _figures(p: Params) -> dict:
    return p.goodput or {}


def goodput(gpus: int, train_hours: float, p: Params, override: float | None = None) -> float:
    """Share of wall time spent training for a job of `train_hours` failure-free hours on `gpus`
    GPUs; `override` (a workload's `goodput:`) wins."""
    if override is not None:
        return float(override)
    f = _figures(p)
    rate = f["interruptions_per_gpu_hour"] * max(1, gpus)
    if rate <= 0 or train_hours <= 0:
        return 1.0 / (1.0 + f["evaluation_fraction"])
    c = f["checkpoint_hours"]
    best = math.sqrt(2.0 * c / rate) if c > 0 else math.inf
    if train_hours <= best:
        loss = rate * (train_hours / 2.0 + f["restart_hours"])
    else:
        loss = c / best + rate * (best / 2.0 + f["restart_hours"])
    return 1.0 / (1.0 + loss + f["evaluation_fraction"])


def wall_hours(gpus: int, train_hours: float, p: Params, override: float | None = None) -> tuple[float, float]:
    """(wall-clock hours, goodput) for `train_hours` of failure-free training on `gpus` GPUs."""
    g = goodput(gpus, train_hours, p, override)
    return train_hours / g, g
