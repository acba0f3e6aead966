"""Speed scenarios (Scenario.speed_factor, the speed break-evens) as coefficient changes of one
HiGHS model (solve/highs_model.py's HighsModel), as solve/redraw.py does for the robustness draws.

The model is built from the candidates usable at its speed ceilings (solve/fast.speed_key), with
candidates dominated on cost *and* time dropped: any candidate a fresh build at a slower speed
keeps is a column. At a speed, the columns of a GPU type get their run cost, tie-break and
capacity coefficients x 1 / (speed / ceiling); a column is bounded to 0 when it misses its
deadline (or the makespan cap) at that speed, or when the fastest candidate dominating it on cost
meets it -- so the live columns are exactly those of a fresh build at that speed.
"""

from __future__ import annotations

from typing import Any

from advisor.solve.constraints import bounds
from advisor.solve.constraints.gpu_count import rented_counts
from advisor.solve.model import TIE_BREAK_USD_PER_HOUR
from advisor.solve.reserved import pool_coefs
from advisor.solve.scenario import Scenario
from advisor.solve.usable import at_speed, cost_dominators, timed, within


class SpeedColumns:
    """The speed part of HighsModel (which provides model, h, col, row, extra and dead)."""

    model: Any
    h: Any
    col: dict[str, int]
    row: dict[str, int]
    extra: dict[int, float]
    dead: set[int]
    ceiling: dict[str, float] | None

    def enable_speed(self, ceiling: dict[str, float]) -> None:
        """Make this a speed model (module docstring): its candidates are at the `ceiling` speeds;
        remember them, their capacity coefficients and each one's fastest cost dominator."""
        m = self.model
        self.ceiling, self.ref_cands = dict(ceiling), m.cands
        self.ycol = {(k, i): self.col[m.y[k, i].name] for k, i, _ in m.pairs()}
        self.gpu_cols: dict[str, list[tuple[int, int]]] = {}
        for k, i, c in m.pairs():
            self.gpu_cols.setdefault(c.gpu, []).append((k, i))
        # a capacity row holds one GPU type's owned jobs: GPU-hours x 1/r <= held hours is GPU-hours <= r x held
        # hours, so a speed change scales the row's coefficients on the holding columns H[g, p]
        self.cap_coefs: dict[str, list[tuple[int, int, float]]] = {}  # GPU -> (row, column of H, coefficient)
        for name, g in m.capacity_gpu.items():
            for lv in range(len(m.problem.holdings[g])):
                coef = m.prob._constraints[name].get(m.H[g, lv], 0.0)
                if coef:
                    self.cap_coefs.setdefault(g, []).append((self.row[name], self.col[m.H[g, lv].name], coef))
        # cost dominance within a GPU type and ownership holds at every speed (they all scale alike)
        self.dominator: dict[tuple[int, int], int | None] = {
            (k, i): o
            for k, cs in enumerate(m.cands)
            for i, o in enumerate(cost_dominators(cs, rented_counts(m.problem), timed(m.problem, k)))
        }
        self.rel: dict[str, float] | None = None

    def _respeed(self, sc: Scenario) -> set[str]:
        """Set the speed model's candidates, coefficients and dead columns for `sc`'s speeds; the
        GPU types whose columns changed (their costs are re-priced by the caller)."""
        assert self.ceiling is not None
        m = self.model
        rel = {g: f / self.ceiling.get(g, 1.0) for g, f in sc.speed_factor.items()}
        rel = {g: f for g, f in rel.items() if f != 1.0}
        before = self.rel or {}
        changed = {g for g in set(rel) | set(before) if rel.get(g) != before.get(g)}
        recount = set(self.gpu_cols) if self.rel is None else changed  # the first time: every column's liveness
        self.rel = rel
        if not recount:
            return changed
        m.cands = [[at_speed(c, rel[c.gpu]) if c.gpu in rel else c for c in cs] for cs in self.ref_cands]
        limits = [bounds(m.problem, sc, k) for k in range(len(m.cands))]

        def meets(k: int, i: int) -> bool:
            return within(m.cands[k][i], limits[k])

        for g in recount:
            for k, i in self.gpu_cols.get(g, []):
                j, dom = self.ycol[k, i], self.dominator[k, i]
                if g in changed:
                    self.extra[j] = TIE_BREAK_USD_PER_HOUR * m.cands[k][i].hours
                if meets(k, i) and not (dom is not None and meets(k, dom)):
                    self.dead.discard(j)
                else:
                    self.dead.add(j)
            r = rel.get(g, 1.0)
            for row, j, a in self.cap_coefs.get(g, []) if g in changed else []:
                self.h.changeCoeff(row, j, a * r)
        for name, k, i, coef in pool_coefs(m):  # a pooled job's share of its pool at this speed (reserved.py)
            if m.cands[k][i].gpu in changed:
                self.h.changeCoeff(self.row[name], self.ycol[k, i], coef)
        self.recounted = True
        return changed

    def no_column(self, only_gpu: str | None) -> bool:
        """Does some class have no live column (of `only_gpu`, when given) at the current speed?"""
        m = self.model
        return any(
            all(self.ycol[k, i] in self.dead or (only_gpu is not None and c.gpu != only_gpu) for i, c in enumerate(cs))
            for k, cs in enumerate(m.cands)
        )
