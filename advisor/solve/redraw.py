"""Many re-solves of one model with only its coefficients changed: real speeds and prices drawn
from their distributions (the robustness verdict, explain/robustness.py).

The MILP is built once from the candidates that could meet their deadlines at the fastest speed
any draw gives (dominated ones dropped on cost *and* time, so a slower draw never needs one that
was dropped). Each draw then changes, in the HiGHS model itself, the objective and budget
coefficients (run cost / speed x rent factor, purchase price x buy factor), the capacity
coefficients (GPU-hours / speed) and the bounds of candidates that miss a deadline at this speed,
and runs HiGHS again: no PuLP model is rebuilt. Without highspy every draw is a full `solve`.
"""
from __future__ import annotations

from collections.abc import Mapping

from advisor.solve.candidates import Candidate, Problem
from advisor.solve.milp import (
    TIE_BREAK_USD_PER_HOUR,
    _Model,
    _run,
    default_gap,
    solve,
    usable_candidates,
)
from advisor.solve.scenario import Scenario


class Redraw:
    """`choice(speed, buy, rent)` -> the plan's (GPU, ownership) pairs and purchase, or None when
    no plan meets the constraints under those factors (GPU id -> factor; 1 when absent)."""

    def __init__(self, problem: Problem, sc: Scenario, fastest: Mapping[str, float], time_limit: float | None):
        self.problem, self.sc, self.time_limit = problem, sc, time_limit
        self.fastest = dict(fastest)
        self.cands = usable_candidates(problem, sc.but(speed_factor=self.fastest), faster_too=True)
        self.model: _Model | None = None
        if any(not cs for cs in self.cands):
            return
        model = _Model(problem, sc, self.cands)
        model.build()
        name, status, _ = _run(model.prob, time_limit, default_gap(problem))   # the plan's own gap: 1% for fleets
        if name != "highs" or status == "Infeasible" or getattr(model.prob, "solverModel", None) is None:
            return  # fall back to full solves
        self.model, self.h = model, model.prob.solverModel
        self._index()

    def _index(self) -> None:
        m = self.model
        assert m is not None
        self.ycol = {(k, i): m.y[k, i].index for k, i, _ in m.pairs()}
        self.ncol = {g: v.index for g, v in m.N.items()}
        self.bounds = {(k, i): (m.y[k, i].lowBound or 0, m.y[k, i].upBound) for k, i, _ in m.pairs()}
        self.obj_n = {g: m.prob.objective.get(v, 0.0) for g, v in m.N.items()}
        self.cap_rows = []     # (row, k, i, coefficient at the fastest speed)
        self.budget_row = None
        where = {m.y[k, i].name: (k, i) for k, i, _ in m.pairs()}
        for con in m.prob.constraints():
            name = con.name
            if name.startswith("capacity_"):
                self.cap_rows += [(con.index, *where[v.name], a) for v, a in con.items() if v.name in where and a]
            elif name == "budget":
                self.budget_row = con
        # cost dominance within a GPU type and ownership is the same at every speed (they all scale
        # alike): per candidate, the fastest candidate that dominates it on cost (None: nothing does)
        self.dominator = {}
        for cs in m.cands:
            groups: dict[tuple, list] = {}
            for c in cs:
                groups.setdefault((c.gpu, c.ownership), []).append(c)
            for group in groups.values():
                for c in group:
                    doms = [o for o in group if o is not c and o.count <= c.count and o.gpu_hours <= c.gpu_hours
                            and o.run_cost_usd <= c.run_cost_usd
                            and (o.count, o.gpu_hours, o.run_cost_usd) != (c.count, c.gpu_hours, c.run_cost_usd)]
                    self.dominator[id(c)] = min(doms, key=lambda o: o.hours) if doms else None
        self._columns()

    def choice(self, speed: Mapping[str, float], buy: Mapping[str, float],
               rent: Mapping[str, float]) -> tuple[frozenset, tuple] | None:
        if self.model is None:
            s = solve(self.problem, self.sc.but(speed_factor=speed, buy_factor=buy, rent_factor=rent),
                      time_limit=self.time_limit)
            if not s.feasible:
                return None
            return frozenset((c.gpu, c.ownership) for c in s.chosen), signature(s.bought, s.assignment)
        import highspy
        import numpy as np

        h, m, p = self.h, self.model, self.problem
        assert m is not None
        rel = {g: speed.get(g, 1.0) / self.fastest.get(g, 1.0) for g in self.fastest}
        # at this draw's speeds: candidates that meet their deadlines, less those another dominates on
        # cost (speed scales a GPU type's candidates alike, so dominance among them is unchanged)
        highs, costs = [], []
        budget = self.budget_row.index if self.budget_row is not None else None
        for col, gpu, hi, run_cost, hours, rent_price, mine, dom in self.columns:
            r = rel.get(gpu, 1.0)
            alive = _meets(mine, r) and not (dom is not None and _meets(dom, r))
            rate = rent_price * rent.get(gpu, 1.0) if rent_price is not None else 1.0
            run = run_cost / r * rate
            highs.append(hi if alive else 0.0)
            costs.append(run + TIE_BREAK_USD_PER_HOUR * hours / r)
            if budget is not None:
                h.changeCoeff(budget, col, run)
        idx = self.col_index
        h.changeColsBounds(len(idx), idx, self.lows, np.array(highs, dtype=float))
        h.changeColsCost(len(idx), idx, np.array(costs, dtype=float))
        for g, col in self.ncol.items():
            extra = (p.unit_price[g] or 0.0) * self.sc.buy_price(g) * (buy.get(g, 1.0) - 1.0)
            h.changeColCost(col, self.obj_n[g] + extra)
            if self.budget_row is not None:
                h.changeCoeff(self.budget_row.index, col, self.budget_row.get(m.N[g], 0.0) + extra)
        for row, k, i, coef in self.cap_rows:
            h.changeCoeff(row, self.ycol[k, i], coef / rel.get(m.cands[k][i].gpu, 1.0))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        x = list(h.getSolution().col_value)
        used = [(c, x[self.ycol[k, i]]) for k, i, c in m.pairs() if x[self.ycol[k, i]] > 1e-6]
        bought = {g: round(x[col]) for g, col in self.ncol.items() if round(x[col]) > 0}
        return frozenset((c.gpu, c.ownership) for c, _ in used), signature(bought, used)

    def _columns(self) -> None:
        """Per y column, what a draw needs, in pairs() order: (column, GPU, upper bound, run cost,
        hours, rental price factor or None when bought, own deadline test, dominator's test)."""
        import numpy as np

        m = self.model
        assert m is not None
        self.columns = []
        for k, i, c in m.pairs():
            dom = self.dominator[id(c)]
            self.columns.append((self.ycol[k, i], c.gpu, self.bounds[k, i][1], c.run_cost_usd, c.hours,
                                 self.sc.rent_price(c.gpu) if c.ownership == "rent" else None,
                                 self._deadline_test(k, c), None if dom is None else self._deadline_test(k, dom)))
        self.col_index = np.array([col for col, *_ in self.columns], dtype=np.int32)
        self.lows = np.array([self.bounds[k, i][0] for k, i, _ in m.pairs()], dtype=float)

    def _deadline_test(self, k: int, c: Candidate) -> tuple:
        """(planned hours, deadline or None, hours, makespan cap or None): `_meets` at a speed."""
        return (c.planned_hours, self.sc.job_deadline(self.problem.classes[k].deadline), c.hours,
                self.sc.makespan_hours)

    def _meets_deadline(self, k: int, c: Candidate, r: float) -> bool:
        due = self.sc.job_deadline(self.problem.classes[k].deadline)
        cap = self.sc.makespan_hours
        return ((due is None or c.planned_hours / r <= due * (1 + 1e-9))
                and (cap is None or c.hours / r <= cap * (1 + 1e-9)))


def _meets(test: tuple, r: float) -> bool:
    """Redraw._meets_deadline from a precomputed `_deadline_test`."""
    planned, due, hours, cap = test
    return ((due is None or planned / r <= due * (1 + 1e-9))
            and (cap is None or hours / r <= cap * (1 + 1e-9)))


def signature(bought: Mapping[str, int], assignment) -> tuple:
    """A purchase as a sorted tuple of (GPU, ownership, count): GPUs bought, or the most rented at once."""
    rented: dict[str, int] = {}
    for c, _ in assignment:
        if c.ownership == "rent":
            rented[c.gpu] = max(rented.get(c.gpu, 0), c.count)
    return tuple(sorted([(g, "buy", n) for g, n in bought.items()] + [(g, "rent", n) for g, n in rented.items()]))


def describe(sig: tuple, names: Mapping[str, str] | None = None) -> str:
    """'8x H100 SXM (buy)' for a purchase signature."""
    names = names or {}
    return " + ".join(f"{n}\u00d7 {names.get(g, g)} ({own})" for g, own, n in sig) or "nothing"
