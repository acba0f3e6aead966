"""A fleet's explanation re-solves without at_once's pair rows until a plan breaks one (row generation
on the fast path's shared HighsModel, as solve/draw_rows.py does for the robustness draws).

at_once_g_k_k'_s (constraints/at_once.py) are 6,310 of the 200-job fleet's 9,567 rows. A re-solve
that asks for it (SolveSettings.lazy_for: a fleet's explanation re-solves; never the plan's own solve
nor the decision's, whose plans can be the one printed) frees them (both bounds infinite: HiGHS's
presolve drops a free row), runs, and puts back the bounds of the rows its plan breaks, until it
breaks none; after MAX_ROUNDS such runs, once more with every row. The rows keep their places, so
once the solve is over (restore) the model is the one the plan's own solve runs, row for row,
whatever ran before.

Why the answer keeps its claim. With rows freed the model is a relaxation: its lower bound is at most
the full model's optimum. The plan returned holds every row (checked here, then by solve/verify.py for
a plan that is printed), so it is a plan of the full model, proven within the gap of the relaxation's
bound, so within the gap of the full optimum: what an explanation re-solve claims (its time limit
aside, as before). Which plan within the gap it is can differ from the full model's search. Under a time limit the rounds share it; a round
stopped on time with a plan that breaks a row is not kept: the solve runs again with every row and the
whole limit, as it would have without this.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from advisor.solve.draw_rows import MAX_ROUNDS, PairTerms

if TYPE_CHECKING:
    from advisor.solve.highs_model import HighsModel

Ran = tuple[str, bool, "float | None"]  # HighsModel.run's answer


class FreeRows(PairTerms):
    """The pair rows of a HighsModel `hm`: their places in it, and their terms and bounds (PairTerms)."""

    def __init__(self, hm: HighsModel):
        super().__init__(hm.model, hm.col)
        self.rows = np.array([hm.row[n] for n in self.names], dtype=np.int32)
        self.back: np.ndarray | None = None  # during a solve: the rows put back (the others are free)

    def run(self, hm: HighsModel, time_limit: float | None, gap: float, nodes: int | None = None) -> Ran:
        """hm.run with the pair rows freed (the first run of a solve), then with those its plans break
        put back (module docstring); the rows put back stay so, for the solve's later runs (late_cuts'),
        until restore()."""
        if not self.count:
            return hm.run(time_limit, gap, nodes)
        if self.back is None:
            self._set(hm, np.ones(self.count, dtype=bool), free=True)
            self.back = np.zeros(self.count, dtype=bool)
        back = self.back
        start = time.perf_counter()
        for rounds in range(MAX_ROUNDS):
            left = None if time_limit is None else time_limit - (time.perf_counter() - start)
            if left is not None and left <= 0:
                break
            got = hm.run(left, gap, nodes)
            if got[0] not in ("optimal", "feasible"):
                if rounds == 0 or got[0] == "infeasible":  # (a relaxation infeasible: so is the full model)
                    return got
                break  # stopped on time without a plan after some rows were put back
            broken = self.broken(np.asarray(hm.h.getSolution().col_value)) & ~back
            if not broken.any():
                return got
            if hm.stopped_on_time:
                break
            self._set(hm, broken, free=False)
            back |= broken
        self._set(hm, ~back, free=False)
        back[:] = True
        return hm.run(time_limit, gap, nodes)

    def restore(self, hm: HighsModel) -> None:
        """Every pair row's own bounds again: the model as the plan's own solve has it."""
        if self.back is not None:
            self._set(hm, ~self.back, free=False)
            self.back = None

    def _set(self, hm: HighsModel, which: np.ndarray, free: bool) -> None:
        rows = self.rows[which]
        if len(rows):
            lower = np.full(len(rows), -np.inf) if free else self.lower[which]
            upper = np.full(len(rows), np.inf) if free else self.upper[which]
            hm.h.changeRowsBounds(len(rows), rows, lower, upper)


def free_rows(hm: HighsModel) -> FreeRows:
    """hm's FreeRows, made on first use and kept with it."""
    if hm.free_rows is None:
        hm.free_rows = FreeRows(hm)
    return hm.free_rows
