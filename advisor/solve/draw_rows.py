"""A fleet's robustness draws without at_once's pair rows until a plan breaks one (row generation).

at_once_g_k_k'_s (constraints/at_once.py) holds two jobs' GPUs at once where they cannot run in turn:
one row per job pair and set of clashing columns, 6,857 of the 200-job fleet's 10,356 draw rows. A
draw at a fleet's 1% gap runs with them left out; when its plan breaks some, those are added and the
draw runs again, until none is broken (then every row of the full model holds), and the added rows
are taken out before the next draw, so each draw's model is the same whatever ran before it. The runs
share the draw's time limit (DRAW_TIME_LIMIT, 2 s, on the fleets' models): when it is spent and the
last plan still breaks a row, the draw found no plan within it (redraw.TIMED_OUT), as a draw whose
single run finds none; each run with its own 2 s took up to 6 s of the 200-job fleet's draws.

Why the answer keeps its claim. Without rows the model is a relaxation: its lower bound is at most
the full model's optimum. The plan returned holds every row (it is a plan of the full model), and it
is within the gap of the relaxation's bound, so within the gap of the full optimum: what a draw
claims (proven within the gap, else stopped at its time limit). Which plan within the gap it is may
differ from the full model's search, as a start or a heuristic moves it (solve/draw_start.py); so
only fleets' draws (the plan's gap above the few-jobs gap) run this way. docs/performance.md has the
200-job fleet's draws with and without.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.errors import SolverError
from advisor.solve.constraints.base import UNBOUNDED
from advisor.solve.rows import safe

if TYPE_CHECKING:
    from advisor.solve.model import Model

MAX_ROUNDS = 8  # runs of a draw with broken rows added; then every pair row is added for a last run
TOLERANCE = 1e-6  # HiGHS's primal feasibility tolerance: a row broken by less holds


def run_highs(h: Any) -> None:
    """One HiGHS run of a draw's model; an error of HiGHS's own is a SolverError."""
    import highspy

    if h.run() == highspy.HighsStatus.kError:
        raise SolverError("the highs solver failed: HiGHS returned an error")


def pair_rows(m: Model) -> list[str]:
    """The names of m's at_once pair rows: at_once_{g}_{k}_{k'}_{n} for a GPU type g of the model."""
    prefixes = [f"at_once_{safe(g)}_" for g in m.N]
    out = []
    for name in m.prob._constraints:
        for p in prefixes:
            parts = name[len(p) :].split("_") if name.startswith(p) else []
            if len(parts) == 3 and all(s.isdigit() for s in parts):
                out.append(name)
                break
    return out


class PairTerms:
    """The pair rows of a model, read once from its PuLP constraints: their names, terms (by row, over
    the columns numbered by `col`, name -> index) and bounds, and which of them a plan breaks."""

    def __init__(self, m: Model, col: Mapping[str, int]):
        self.names = pair_rows(m)
        starts, index, value, lower, upper = [0], [], [], [], []
        for name in self.names:
            con = m.prob._constraints[name]
            terms = [(col[v.name], a) for v, a in con.items() if a != 0]
            index += [j for j, _ in terms]
            value += [a for _, a in terms]
            starts.append(len(index))
            rhs = -con.constant
            lower.append(rhs if con.sense >= 0 and rhs > -UNBOUNDED else -np.inf)
            upper.append(rhs if con.sense <= 0 and rhs < UNBOUNDED else np.inf)
        self.starts, self.index = np.array(starts, dtype=np.int64), np.array(index, dtype=np.int32)
        self.value, self.lower, self.upper = np.array(value), np.array(lower), np.array(upper)
        self.count = len(self.names)

    def broken(self, x: np.ndarray) -> np.ndarray:
        """A mask of the pair rows plan `x` (HiGHS's column values) breaks."""
        if not self.count:
            return np.zeros(0, dtype=bool)
        activity = np.add.reduceat(self.value * x[self.index], self.starts[:-1])  # (every row has terms)
        slack = TOLERANCE * np.maximum(1.0, np.abs(activity))
        return (activity < self.lower - slack) | (activity > self.upper + slack)


class LazyRows(PairTerms):
    """The pair rows of a draw model, taken out of its HiGHS model `h` (row indices in `row`, a
    name -> index map, renumbered in place), and put back while a draw's plan breaks them."""

    def __init__(self, h: Any, m: Model, row: dict[str, int]):
        super().__init__(m, {v.name: j for j, v in enumerate(m.prob.variables())})
        gone = sorted(row.pop(name) for name in self.names)
        if gone:
            h.deleteRows(len(gone), np.array(gone, dtype=np.int32))
        for name, r in row.items():  # the rows after each one taken out move up by one
            row[name] = r - int(np.searchsorted(gone, r))
        self.base = h.getNumRow()

    def search(self, h: Any, run: Callable[[], None]) -> bool:
        """`run` (a draw's HiGHS run) again with the rows its plan breaks added, until it breaks
        none or has no plan; after MAX_ROUNDS such runs, once more with every pair row. The runs share
        the draw's time limit (HiGHS's time_limit, set back after): False when it is spent with a plan
        that breaks a row (the draw found no plan in time). restore() takes the added rows out again
        once the answer is read."""
        import highspy

        limit = h.getOptionValue("time_limit")[1]  # (status, value)
        start = time.perf_counter()
        added: set[int] = set()
        try:
            for _ in range(MAX_ROUNDS):
                run()
                if h.getInfo().primal_solution_status != 2:  # no plan (infeasible, or none in time)
                    return True
                x = np.asarray(h.getSolution().col_value)
                broken = [i for i in np.flatnonzero(self.broken(x)).tolist() if i not in added]
                if not broken:
                    return True
                left = limit - (time.perf_counter() - start)
                if h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit or left <= 0:
                    return False
                h.setOptionValue("time_limit", left)
                self._add(h, broken)
                added.update(broken)
            self._add(h, [i for i in range(self.count) if i not in added])
            run()
            return True
        finally:
            h.setOptionValue("time_limit", limit)

    def _add(self, h: Any, rows: list[int]) -> None:
        if not rows:
            return
        starts, index, value = [0], [], []
        for i in rows:
            a, b = self.starts[i], self.starts[i + 1]
            index.append(self.index[a:b])
            value.append(self.value[a:b])
            starts.append(starts[-1] + b - a)
        h.addRows(
            len(rows),
            self.lower[rows],
            self.upper[rows],
            starts[-1],
            np.array(starts[:-1], dtype=np.int32),
            np.concatenate(index).astype(np.int32),
            np.concatenate(value),
        )

    def restore(self, h: Any) -> None:
        """The draw model as before the draw: the rows search() added taken out."""
        extra = h.getNumRow() - self.base
        if extra > 0:
            h.deleteRows(extra, np.arange(self.base, self.base + extra, dtype=np.int32))
