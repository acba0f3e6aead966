"""The deadline test of a redraw's columns as arrays: which candidates meet their deadline and the
makespan cap at each draw's relative speed (solve/redraw.py), vectorised over columns and draws."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DeadlineTest = tuple[float, float, float, float]  # Redraw._deadline_test: (planned hours, bound, hours, cap)


def deadline_array(tests: Sequence[DeadlineTest | None]) -> np.ndarray:
    """Redraw._deadline_test's as an (n, 4) array, inf for no deadline or cap (and for no test at all)."""
    import numpy as np

    inf = float("inf")
    return np.array(
        [(0.0, inf, 0.0, inf) if t is None else tuple(inf if x is None else x for x in t) for t in tests], dtype=float
    ).reshape(-1, 4)


def meets_all(tests: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Does each column meet its deadline and the makespan cap at relative speed `r` (a vector, or a
    matrix with a column per draw)? `tests` from deadline_array."""
    planned, due, hours, cap = (x[:, None] if r.ndim == 2 else x for x in tests.T)
    return (planned / r <= due * (1 + 1e-9)) & (hours / r <= cap * (1 + 1e-9))
