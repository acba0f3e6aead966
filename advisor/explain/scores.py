"""A plan's figure of merit over the draws (its mean cost, or a cost quantile) and the standard error of
the difference of two plans' figures: what the decision (explain/decision.py) chooses and words by."""

from __future__ import annotations

import math

import numpy as np

QUANTILES = {"p80": 0.8, "p90": 0.9}
BOOTSTRAP, BOOTSTRAP_SEED = 200, 7  # resamples (and their seed) for a quantile's standard error


def score(costs: np.ndarray, basis: str) -> float:
    """A plan's figure of merit over the draws: its mean cost, or its cost quantile (p80, p90)."""
    return quantile(costs, QUANTILES[basis]) if basis in QUANTILES else float(costs.mean())


def quantile(values: np.ndarray, q: float) -> float:
    """`float(np.quantile(values, q))` for a 1-D array, to the bit (numpy's default 'linear' method,
    its interpolation written the same way), without what np.quantile imports on first use
    (numpy.ma: ~5 ms of a cold `advisor plan`)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    n = len(ordered)
    if n == 0:
        raise ValueError("quantile of no values")
    if ordered[-1] != ordered[-1]:  # a NaN sorts last: numpy's quantile is NaN then
        return float("nan")
    at = (n - 1) * q
    below, above = math.floor(at), math.floor(at) + 1
    if at >= n - 1:  # numpy interpolates the last value with itself (index -1): inf then gives NaN too
        below = above = -1
    a, b, t = float(ordered[below]), float(ordered[above]), at - below
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


def mean_se(x: np.ndarray) -> float:
    """The Monte-Carlo standard error of the mean of `x` over its draws (0 for one draw)."""
    return float(np.std(x, ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0


def standard_error(a: np.ndarray, b: np.ndarray, basis: str) -> float:
    """The standard error of score(a) - score(b) over the same draws: of the paired mean difference,
    or for a quantile by BOOTSTRAP seeded resamples of the draws."""
    n = len(a)
    if basis not in QUANTILES:
        return mean_se(a - b)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, n, size=(BOOTSTRAP, n))
    q = QUANTILES[basis]
    diffs = np.quantile(a[picks], q, axis=1) - np.quantile(b[picks], q, axis=1)
    return float(np.std(diffs, ddof=1))
