"""Searches for the least value of a limit that gives a plan: each probe is a re-solve, and the
answer is monotone in the value (a looser limit never loses a plan)."""

from __future__ import annotations

import math
from collections.abc import Callable


def smallest(ok: Callable[[float], bool], lo: float, hi: float, steps: int = 12) -> float:
    """Smallest x >= lo with ok(x) (ok monotone), to 0.5%: grow hi until ok, then bisect."""
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > 1e12:
            return math.inf
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        if hi - lo <= 0.005 * hi:
            break
    return hi


def smallest_int(ok: Callable[[int], bool], lo: int, hi: int | None = None) -> int:
    """Smallest n > lo with ok(n), given not ok(lo) (ok monotone): hi when known to be ok, else
    found by doubling from lo."""
    if hi is None:
        hi = max(lo * 2, lo + 1)
        while not ok(hi):
            lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
