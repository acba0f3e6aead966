"""A built Model mirrored in a HiGHS object (highspy), with what a later scenario changes: column
costs (prices), column bounds (a GPU type, an ownership, a GPU-count bound), row bounds (budget,
power) and, through SpeedColumns, the coefficients of a speed. solve/fast.py keeps these per problem
and structure; solve/redraw.py draws on one. Each run is a fresh MIP search (see HighsModel.run)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.errors import SolverError
from advisor.solve.constraints.base import UNBOUNDED
from advisor.solve.model import Model
from advisor.solve.reserved import training_terms
from advisor.solve.run import printed_gap, quiet_stdout
from advisor.solve.scenario import Scenario
from advisor.solve.server_terms import slot_share_cost
from advisor.solve.speed_model import SpeedColumns

if TYPE_CHECKING:
    from advisor.solve.late_cuts import Cut

_INF = math.inf


class HighsModel(SpeedColumns):
    """A built Model mirrored in a highspy.Highs object, with the indices needed to re-price and
    re-bound it. The cost rows carry a cost: the budget its basis (cash or present value), the
    idle-GPU cost cap the present value; the objective is cost_weight x the present value + `extra`
    (the tie-break, or the polish's wall time)."""

    def __init__(self, model: Model, extra: dict, cost_weight: float):
        import highspy

        self.model, self.cost_weight = model, cost_weight
        self.dual_bound = -_INF  # HiGHS's lower bound on the objective after the last run
        self.stopped_on_time = False
        prob = model.prob
        self.vars = prob.variables()
        self.col = {v.name: j for j, v in enumerate(self.vars)}
        self.extra = {self.col[name]: w for name, w in extra.items()}
        n = len(self.vars)
        cost = np.zeros(n)
        for v, a in prob.objective.items():
            cost[self.col[v.name]] = a
        lower = np.array([-_INF if v.lowBound is None else v.lowBound for v in self.vars], dtype=float)
        upper = np.array([_INF if v.upBound is None else v.upBound for v in self.vars], dtype=float)
        self.ub0 = upper.copy()
        starts: list[int] = []
        index: list[int] = []
        value: list[float] = []
        rlo: list[float] = []
        rhi: list[float] = []
        self.row: dict[str, int] = {}
        for r, (name, con) in enumerate(prob._constraints.items()):  # (name -> constraint, in order)
            self.row[name] = r
            starts.append(len(index))
            for v, a in con.items():
                if a != 0:
                    index.append(self.col[v.name])
                    value.append(a)
            rhs = -con.constant
            rlo.append(rhs if con.sense >= 0 and rhs > -UNBOUNDED else -_INF)
            rhi.append(rhs if con.sense <= 0 and rhs < UNBOUNDED else _INF)
        with quiet_stdout():
            h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("random_seed", 0)
        h.addCols(
            n,
            cost,
            lower,
            upper,
            0,
            np.array([], dtype=np.int32),
            np.array([], dtype=np.int32),
            np.array([], dtype=float),
        )
        if self.row:
            h.addRows(
                len(rlo),
                np.array(rlo),
                np.array(rhi),
                len(index),
                np.array(starts, dtype=np.int32),
                np.array(index, dtype=np.int32),
                np.array(value, dtype=float),
            )
        ints = np.array([j for j, v in enumerate(self.vars) if v.cat == "Integer"], dtype=np.int32)
        if len(ints):
            h.changeColsIntegrality(len(ints), ints, np.full(len(ints), highspy.HighsVarType.kInteger))
        self.cost = cost
        self.factors: tuple = ((), (), (), ())
        self.bounds = upper.copy()
        self.row_bounds = {name: (rlo[r], rhi[r]) for name, r in self.row.items()}
        # a limit is on the whole cost, the storage every plan pays included (Model.storage_usd); the
        # budget and idle-GPU cost rows hold the costs that vary, so their bounds are set that constant lower
        self.row_shift = {"budget": model.storage_usd, "idle_gpus_cost": model.storage_usd}
        self.only_gpu: str | None = None
        self.ownership: str | None = None
        self.gpu_upper: float = _INF
        self.ceiling: dict[str, float] | None = None  # a speed model's speed ceilings (enable_speed)
        self.dead: set[int] = set()  # y columns off at the current speed
        self.added = 0  # lazy rows in the model now (add_rows)
        self.added_cols: list[str] = []  # ... and the columns they brought
        self.free_rows: Any = None  # lazy_pairs.FreeRows: at_once's pair rows, for re-solves without them

    # ------------------------------------------------------------------ scenario -> changes
    def apply(self, sc: Scenario, rows: dict[str, tuple[float, float]]) -> None:
        m = self.model
        factors = (
            tuple(sorted(sc.price_factor.items())),
            tuple(sorted(sc.rent_factor.items())),
            tuple(sorted(sc.buy_factor.items())),
            tuple(sorted(sc.offer_factor.items())),  # ((GPU, provider), factor): reprices that GPU's columns
        )
        m.sc = sc
        self.recounted = False
        respeed = self._respeed(sc) if self.ceiling is not None else set()
        if factors != self.factors or respeed:
            changed = {g if isinstance(g, str) else g[0] for f in factors + self.factors for g, _ in f} | respeed
            self._reprice(changed)
            self.factors = factors
        if (
            (sc.only_gpu, sc.ownership) != (self.only_gpu, self.ownership)
            or (sc.gpu_upper or _INF) != self.gpu_upper
            or self.recounted
        ):
            self._rebound(sc)
        for name, (lo, hi) in rows.items():
            shift = self.row_shift.get(name, 0.0)
            lo, hi = lo - shift, hi - shift  # (an infinite bound stays infinite)
            if name in self.row and self.row_bounds[name] != (lo, hi):
                self.h.changeRowBounds(self.row[name], lo, hi)
                self.row_bounds[name] = (lo, hi)

    def _coefs(self, g: str, basis: str, terms: list) -> dict[int, float]:
        """Column -> coefficient in the cost (present value or cash), for the columns whose price
        depends on GPU g (`terms`: the model's reserved.training_terms)."""
        m = self.model
        out = {}
        if g in m.N:
            out[self.col[m.N[g].name]] = m.buy_cost(g)
            for level in range(len(m.problem.holdings[g])):
                share = slot_share_cost(m.problem, g, level, basis)  # (its servers' least share a slot)
                out[self.col[m.H[g, level].name]] = m.hold_cost(g, level, basis) + share
        for v, c, w in terms:
            if c.gpu == g:
                out[self.col[v.name]] = m.run_cost(c, basis) * w
        return out

    def _reprice(self, gpus: set[str]) -> None:
        cost_rows = {
            self.row[r]: basis
            for r, basis in (("budget", self.model.sc.budget_basis), ("idle_gpus_cost", "present_value"))
            if r in self.row
        }
        terms = training_terms(self.model)
        for g in sorted(gpus):
            coefs = self._coefs(g, "present_value", terms)
            if not coefs:
                continue
            idx = np.array(sorted(coefs), dtype=np.int32)
            total = np.array([coefs[j] for j in idx])
            obj = self.cost_weight * total + np.array([self.extra.get(int(j), 0.0) for j in idx])
            self.h.changeColsCost(len(idx), idx, obj)
            for r, basis in cost_rows.items():
                row = coefs if basis == "present_value" else self._coefs(g, basis, terms)
                for j in idx:
                    self.h.changeCoeff(r, int(j), float(row[int(j)]))

    def _rebound(self, sc: Scenario) -> None:
        """The columns' upper bounds under the scenario's GPU type, ownership and GPU-count bound (and
        the speed's dead columns), changed in HiGHS only where they differ from the last run's."""
        ub = self.ub0.copy()
        if sc.only_gpu is not None:
            self._bound_to_gpu(ub, sc.only_gpu)
        if sc.ownership is not None:
            self._bound_to_ownership(ub, sc.ownership)
        for j in self.dead:
            ub[j] = 0.0
        upper = sc.gpu_upper or _INF
        self._bound_gpu_count(ub, upper)
        diff = np.nonzero(ub != self.bounds)[0].astype(np.int32)
        if len(diff):
            lower = np.array([0.0 if self.vars[j].lowBound is None else self.vars[j].lowBound for j in diff])
            self.h.changeColsBounds(len(diff), diff, lower, ub[diff])
            self.bounds = ub
        self.only_gpu, self.ownership, self.gpu_upper = sc.only_gpu, sc.ownership, upper

    def _bound_to_gpu(self, ub: np.ndarray, gpu: str) -> None:
        """Every column of another GPU type to 0 in `ub`: its jobs' runs, purchases, fabric, servers
        and holding (the shared model keeps them all, so one type alone is a change of bounds)."""
        m = self.model
        for (k, i), v in m.y.items():
            if m.cands[k][i].gpu != gpu:
                ub[self.col[v.name]] = 0.0
        for group in (m.N, m.F):
            for g, v in group.items():
                if g != gpu:
                    ub[self.col[v.name]] = 0.0
        for group2 in (m.z, m.S, m.H, m.K):
            for (g, _), v in group2.items():
                if g != gpu:
                    ub[self.col[v.name]] = 0.0

    def _bound_to_ownership(self, ub: np.ndarray, ownership: str) -> None:
        """Every run and replica of the other ownership to 0 in `ub`; renting only also buys nothing."""
        m = self.model
        for pairs, var in ((m.pairs(), m.y), (m.serve_pairs(), m.r)):
            for k, i, c in pairs:
                if c.ownership != ownership:
                    ub[self.col[var[k, i].name]] = 0.0
        if ownership == "rent":  # nothing bought: no GPUs, servers, fabric or holding
            for v in [*m.N.values(), *m.F.values(), *m.z.values(), *m.S.values(), *m.H.values(), *m.K.values()]:
                ub[self.col[v.name]] = 0.0

    def _bound_gpu_count(self, ub: np.ndarray, upper: float) -> None:
        """Each GPU type's purchase at most `upper` in `ub`, and its servers at most the ones those
        GPUs fill (so a bound on GPUs does not leave servers free to be bought)."""
        m = self.model
        for g, v in m.N.items():
            j = self.col[v.name]
            ub[j] = min(ub[j], upper)
            for s in m.problem.servers.get(g, []):
                js = self.col[m.S[g, s.id].name]
                ub[js] = min(ub[js], math.ceil(ub[j] / s.slots) if ub[j] < _INF else _INF)

    # ------------------------------------------------------------------ lazy rows (solve/late_cuts.py)
    def add_rows(self, cuts: list[Cut]) -> None:
        """Rows sum(a x) >= b for this solve only (drop_rows takes them out, and any column they
        brought): they are valid for the scenario they were found under, and the model is shared."""
        import highspy

        for _, terms, rhs in cuts:
            coefs: dict[int, float] = {}
            for v, a in terms:
                if v.name not in self.col:  # a column of the rows' own (late_cuts' lane count)
                    self.col[v.name] = self.h.getNumCol()
                    self.h.addCol(0.0, v.lowBound or 0.0, _INF if v.upBound is None else v.upBound, 0, [], [])
                    self.h.changeColIntegrality(self.col[v.name], highspy.HighsVarType.kInteger)
                    self.added_cols.append(v.name)
                coefs[self.col[v.name]] = coefs.get(self.col[v.name], 0.0) + a
            idx = np.array(sorted(coefs), dtype=np.int32)
            self.h.addRow(rhs, _INF, len(idx), idx, np.array([coefs[int(j)] for j in idx]))
            self.added += 1

    def drop_rows(self) -> None:
        """Take out the rows add_rows put in (the last rows of the model) and their columns."""
        if self.added:
            last = self.h.getNumRow()
            self.h.deleteRows(self.added, np.arange(last - self.added, last, dtype=np.int32))
            self.added = 0
        if self.added_cols:
            last = self.h.getNumCol()
            n = len(self.added_cols)
            self.h.deleteCols(n, np.arange(last - n, last, dtype=np.int32))
            for name in self.added_cols:
                del self.col[name]
            self.added_cols = []

    # ------------------------------------------------------------------ run
    def run(self, time_limit: float | None, gap: float, nodes: int | None = None) -> tuple[str, bool, float | None]:
        """('optimal'|'feasible'|'infeasible'|'none', proven within the gap, gap); the PuLP
        variables get the solution's values, so milp's readers work unchanged. `nodes` caps the
        branch-and-bound nodes: a limit on work, so the answer does not depend on the machine's load
        as a time limit's does (HiGHS on one thread is deterministic)."""
        import highspy

        h = self.h
        h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else _INF)
        h.setOptionValue("mip_rel_gap", float(gap))
        h.setOptionValue("mip_max_nodes", int(nodes) if nodes is not None else highspy.kHighsIInf)
        # No warm start: highspy 1.16 given the previous plan through setSolution after a cost
        # change returned it as "optimal" with objective 0 and no search (lora-7b-workstation's
        # break-even); a fresh MIP search on the modified model is correct and still fast.
        # Re-checked with bench/warm_start.py: setSolution(incumbent) after changeColsCost was wrong
        # in 2 of 12 re-pricings of team-fleet; a plain re-run and clearSolver() both matched a
        # fresh solve in 36 of 36.
        with quiet_stdout():
            ran = h.run()
        if ran == highspy.HighsStatus.kError:
            raise SolverError("the highs solver failed: HiGHS returned an error")
        status = h.getModelStatus()
        S = highspy.HighsModelStatus
        self.stopped_on_time = status == S.kTimeLimit  # what it found then depends on the machine's load
        if status in (S.kInfeasible, S.kUnboundedOrInfeasible):
            return "infeasible", False, None
        info = h.getInfo()
        has_solution = info.primal_solution_status == 2 or (status == S.kOptimal)
        if not has_solution or info.objective_function_value == _INF:
            return "none", False, None
        values = list(h.getSolution().col_value)
        for v, x in zip(self.vars, values):
            v.varValue = x
        proven = status == S.kOptimal
        self.dual_bound = float(info.mip_dual_bound)
        gap_now = float(info.mip_gap)
        mip_gap: float | None = printed_gap(gap_now) if math.isfinite(gap_now) and gap_now < 1e9 else None
        if proven and mip_gap is None:
            mip_gap = 0.0
        return ("optimal" if proven else "feasible"), proven, mip_gap
