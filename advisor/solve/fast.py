"""Re-solving one problem many times, fast: the MILP of a structure is built once (through
model.build_model, so there is one formulation) and handed to HiGHS; a later scenario that differs only
in prices, budget, power limit, GPU-count bounds or a GPU-type restriction becomes changes to
column costs, bounds and coefficients of that same HiGHS model (not warm-started: see run()).
A scenario that changes the structure (deadlines, a makespan cap, and for a single job the
GPU-count bounds, which filter its candidates) gets its own model; a few are kept per problem.

Real speeds (Scenario.speed_factor, the speed break-evens) are coefficient changes too, as in
solve/redraw.py: speed scenarios share a model built from the candidates usable at a speed
ceiling (1 for slower, else the next power of 2), dominated on cost *and* time dropped, so no
column a slower speed needs is missing. At a speed, a GPU type's columns get their run cost,
tie-break and capacity coefficients x 1 / relative speed, and a column is bounded to 0 when it
misses its deadline or a candidate that dominates it on cost meets it: exactly the columns a
fresh build at that speed has.

Equivalence with a fresh build is tested (tests/test_fast_solve.py): status and objective agree
within the gap for price factors, no budget, scaled deadlines, one GPU type and makespan caps.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from advisor.errors import SolverError
from advisor.solve import constraints
from advisor.solve.constraints.base import UNBOUNDED
from advisor.solve.formulation import build_model, polish_model
from advisor.solve.model import (
    IDLE_GPU_TOLERANCE,
    TIE_BREAK_USD_PER_HOUR,
    Model,
    idle_owned_gpus,
)
from advisor.solve.problem import Candidate, Problem
from advisor.solve.run import check_found, quiet_stdout
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.solution import Solution, read_solution
from advisor.solve.speed_model import SpeedColumns
from advisor.solve.usable import usable_candidates

KEEP_MODELS = 6          # structures kept per problem and kind (sweeps build many, explanations reuse few)
_INF = math.inf
POLISH_SHARE = 0.2       # of the time limit, for the idle-GPU polish (it only refines a found plan)
POLISH_NODES = 100       # branch-and-bound nodes the polish may use: its result must not depend on load


def structure_key(problem: Problem, sc: Scenario) -> tuple:
    """What decides the model's rows and columns (everything else is a coefficient or a bound):
    the constraint families' parts, then the speed ceilings."""
    return (*constraints.structure_key(problem, sc), speed_key(sc))


def speed_key(sc: Scenario) -> tuple | None:
    """None without a speed change; else each GPU type whose speed changes with the speed ceiling
    of the shared model: every factor up to 1 shares one model, factors in (1, 2] another, (2, 4] ..."""
    if all(f == 1.0 for f in sc.speed_factor.values()):
        return None
    return tuple(sorted((g, 1.0 if f <= 1.0 else 2.0 ** math.ceil(math.log2(f) - 1e-12))
                        for g, f in sc.speed_factor.items() if f != 1.0))


def speed_candidates(problem: Problem, sc: Scenario, ceiling: dict[str, float]) -> list[list]:
    """The columns of a speed model: for the GPU types whose speed changes, the candidates usable at
    their ceiling, dominated on cost *and* time dropped (a slower speed may need a faster one);
    for the others, those a fresh build keeps."""
    base = usable_candidates(problem, sc.but(only_gpu=None, ownership=None, speed_factor={}))
    fast = usable_candidates(problem, sc.but(only_gpu=None, ownership=None, speed_factor=ceiling), faster_too=True)
    return [[c for c in f if c.gpu in ceiling] + [c for c in b if c.gpu not in ceiling] for f, b in zip(fast, base)]


class HighsModel(SpeedColumns):
    """A built Model mirrored in a highspy.Highs object, with the indices needed to re-price and
    re-bound it. The cost rows carry a cost: the budget its basis (cash or present value), the
    idle-GPU cost cap the present value; the objective is cost_weight x the present value + `extra`
    (the tie-break, or the polish's wall time)."""

    def __init__(self, model: Model, extra: dict, cost_weight: float):
        import highspy

        self.model, self.cost_weight = model, cost_weight
        self.dual_bound = -_INF     # HiGHS's lower bound on the objective after the last run
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
        h.addCols(n, cost, lower, upper, 0, np.array([], dtype=np.int32), np.array([], dtype=np.int32),
                  np.array([], dtype=float))
        if self.row:
            h.addRows(len(rlo), np.array(rlo), np.array(rhi), len(index), np.array(starts, dtype=np.int32),
                      np.array(index, dtype=np.int32), np.array(value, dtype=float))
        ints = np.array([j for j, v in enumerate(self.vars) if v.cat == "Integer"], dtype=np.int32)
        if len(ints):
            h.changeColsIntegrality(len(ints), ints, np.full(len(ints), highspy.HighsVarType.kInteger))
        self.cost = cost
        self.factors: tuple = ((), (), ())
        self.bounds = upper.copy()
        self.row_bounds = {name: (rlo[r], rhi[r]) for name, r in self.row.items()}
        # a limit is on the whole cost, the storage every plan pays included (Model.storage_usd); the
        # budget row holds the costs that vary, so its bounds are set that constant lower
        self.row_shift = {"budget": model.storage_usd}
        self.only_gpu: str | None = None
        self.ownership: str | None = None
        self.gpu_upper: float = _INF
        self.ceiling: dict[str, float] | None = None     # a speed model's speed ceilings (enable_speed)
        self.dead: set[int] = set()                       # y columns off at the current speed

    # ------------------------------------------------------------------ scenario -> changes
    def apply(self, sc: Scenario, rows: dict[str, tuple[float, float]]) -> None:
        m = self.model
        factors = (tuple(sorted(sc.price_factor.items())), tuple(sorted(sc.rent_factor.items())),
                   tuple(sorted(sc.buy_factor.items())))
        m.sc = sc
        self.recounted = False
        respeed = self._respeed(sc) if self.ceiling is not None else set()
        if factors != self.factors or respeed:
            changed = {g for f in factors + self.factors for g, _ in f} | respeed
            self._reprice(changed)
            self.factors = factors
        if ((sc.only_gpu, sc.ownership) != (self.only_gpu, self.ownership) or (sc.gpu_upper or _INF) != self.gpu_upper
                or self.recounted):
            self._rebound(sc)
        for name, (lo, hi) in rows.items():
            shift = self.row_shift.get(name, 0.0)
            lo, hi = lo - shift, hi - shift   # (an infinite bound stays infinite)
            if name in self.row and self.row_bounds[name] != (lo, hi):
                self.h.changeRowBounds(self.row[name], lo, hi)
                self.row_bounds[name] = (lo, hi)

    def _coefs(self, g: str, basis: str) -> dict[int, float]:
        """Column -> coefficient in the cost (present value or cash), for the columns whose price
        depends on GPU g."""
        m = self.model
        out = {}
        if g in m.N:
            out[self.col[m.N[g].name]] = m.buy_cost(g)
            for level in range(len(m.problem.holdings[g])):
                out[self.col[m.H[g, level].name]] = m.hold_cost(g, level, basis)
        for k, i, c in m.pairs():
            if c.gpu == g:
                out[self.col[m.y[k, i].name]] = m.run_cost(c, basis)
        return out

    def _reprice(self, gpus: set[str]) -> None:
        cost_rows = {self.row[r]: basis for r, basis in (("budget", self.model.sc.budget_basis),
                                                         ("idle_gpus_cost", "present_value")) if r in self.row}
        for g in sorted(gpus):
            coefs = self._coefs(g, "present_value")
            if not coefs:
                continue
            idx = np.array(sorted(coefs), dtype=np.int32)
            total = np.array([coefs[j] for j in idx])
            obj = self.cost_weight * total + np.array([self.extra.get(int(j), 0.0) for j in idx])
            self.h.changeColsCost(len(idx), idx, obj)
            for r, basis in cost_rows.items():
                row = coefs if basis == "present_value" else self._coefs(g, basis)
                for j in idx:
                    self.h.changeCoeff(r, int(j), float(row[int(j)]))

    def _rebound(self, sc: Scenario) -> None:
        m, p = self.model, self.model.problem
        ub = self.ub0.copy()
        if sc.only_gpu is not None:
            for (k, i), v in m.y.items():
                if m.cands[k][i].gpu != sc.only_gpu:
                    ub[self.col[v.name]] = 0.0
            for group in (m.N, m.F):
                for g, v in group.items():
                    if g != sc.only_gpu:
                        ub[self.col[v.name]] = 0.0
            for group2 in (m.z, m.S, m.H, m.K):
                for (g, _), v in group2.items():
                    if g != sc.only_gpu:
                        ub[self.col[v.name]] = 0.0
        if sc.ownership is not None:
            for pairs, var in ((m.pairs(), m.y), (m.serve_pairs(), m.r)):
                for k, i, c in pairs:
                    if c.ownership != sc.ownership:
                        ub[self.col[var[k, i].name]] = 0.0
            if sc.ownership == "rent":   # nothing bought: no GPUs, servers, fabric or holding
                for v in [*m.N.values(), *m.F.values(), *m.z.values(), *m.S.values(), *m.H.values(), *m.K.values()]:
                    ub[self.col[v.name]] = 0.0
        for j in self.dead:
            ub[j] = 0.0
        upper = sc.gpu_upper or _INF
        for g, v in m.N.items():
            j = self.col[v.name]
            ub[j] = min(ub[j], upper)
            for s in p.servers.get(g, []):
                js = self.col[m.S[g, s.id].name]
                ub[js] = min(ub[js], math.ceil(ub[j] / s.slots) if ub[j] < _INF else _INF)
        diff = np.nonzero(ub != self.bounds)[0].astype(np.int32)
        if len(diff):
            lower = np.array([0.0 if self.vars[j].lowBound is None else self.vars[j].lowBound for j in diff])
            self.h.changeColsBounds(len(diff), diff, lower, ub[diff])
            self.bounds = ub
        self.only_gpu, self.ownership, self.gpu_upper = sc.only_gpu, sc.ownership, upper

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
        self.stopped_on_time = status == S.kTimeLimit   # what it found then depends on the machine's load
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
        mip_gap: float | None = round(gap_now, 6) if math.isfinite(gap_now) and gap_now < 1e9 else None
        if proven and mip_gap is None:
            mip_gap = 0.0
        return ("optimal" if proven else "feasible"), proven, mip_gap


def solve_fast(problem: Problem, sc: Scenario, time_limit: float | None, gap: float, polish: bool = True) -> Solution:
    """milp.solve through the problem's cached HiGHS model of this structure; `polish`: put idle
    bought GPUs to work (model.polish_model) when a plan leaves some."""
    key = structure_key(problem, sc)
    ceiling = key[-1]
    # one GPU type under other deadlines or GPU-count bounds (why it cannot be the plan alone): a
    # model of that type's candidates only, rather than of every type with the others bounded to 0
    alone = sc.only_gpu is not None and ceiling is None and key != structure_key(problem, baseline(problem))
    key += ("alone", sc.only_gpu) if alone else ()
    hm = cache_of(problem, alone).get(key)
    if hm is None:
        cands = (usable_candidates(problem, sc if alone else sc.but(only_gpu=None, ownership=None)) if ceiling is None else
                 speed_candidates(problem, sc, dict(ceiling)))
        model = build_model(problem, constraints.unbounded(sc), cands)
        extra = {name: TIE_BREAK_USD_PER_HOUR * c.hours for name, c in _columns(model)}
        hm = HighsModel(model, extra, 1.0)
        if ceiling is not None:
            hm.enable_speed(dict(ceiling))
    remember(problem, key, hm, alone)
    model = hm.model
    no_plan = Solution("infeasible", None, solver={"name": None, "reason": "a job has no usable candidate"})
    if any(not cs or all(sc.only_gpu not in (None, c.gpu) or sc.ownership not in (None, c.ownership) for c in cs)
           for cs in model.cands):
        return no_plan
    hm.apply(sc, constraints.limit_rows(sc))
    if hm.ceiling is not None and hm.no_column(sc.only_gpu):
        return no_plan
    status, proven, mip_gap = hm.run(time_limit, gap)
    check_found(status, "highs", time_limit)
    if status == "infeasible":
        return Solution("infeasible", None, solver={"name": "highs", "status": "Infeasible"})
    mip_objective = _plan_cost(model)
    if polish and idle_owned_gpus(model):
        used = {(c.gpu, c.ownership) for k, i, c in model.pairs() if (model.y[k, i].value() or 0) > 1e-6}
        pkey = key + ("polish", frozenset(used), tuple(sorted(sc.speed_factor.items())))
        pm = cache_of(problem, alone).get(pkey)
        if pm is None:
            cands = [[c for c in cs if (c.gpu, c.ownership) in used]
                     for cs in usable_candidates(problem, sc.but(only_gpu=None), faster_too=True)]
            polished = polish_model(problem, constraints.unbounded(sc), cands, UNBOUNDED)
            pm = HighsModel(polished, {j: c.hours for j, c in _columns(polished)}, 1e-6)
        remember(problem, pkey, pm, alone)
        # the rows and HiGHS's bound count the variable costs: the storage every plan pays is a constant apart
        fixed = model.storage_usd
        ceiling = mip_objective - fixed + max(1.0, IDLE_GPU_TOLERANCE * mip_objective)
        pm.apply(sc, {**constraints.limit_rows(sc), "idle_gpus_cost": (-_INF, ceiling)})
        bound = hm.dual_bound + fixed
        p_status, p_proven, _ = pm.run(None if time_limit is None else time_limit * POLISH_SHARE, gap, POLISH_NODES)
        if p_proven or (p_status == "feasible" and not pm.stopped_on_time and _hours(pm.model) < _hours(model)):
            # proven, or stopped at its node limit (not at its time limit: that plan would depend on
            # the load) with a plan that finishes sooner at a cost within IDLE_GPU_TOLERANCE of the
            # least. "optimal" claims the cost: that plan is taken only if its cost is still proven
            # within the gap of the first solve's lower bound, and the gap reported is that plan's
            within = _cost_gap(pm.model, bound)
            if not proven or within <= gap:
                model, mip_gap = pm.model, (round(within, 6) if proven else mip_gap)
    return read_solution(model, "highs", "Optimal", proven, mip_gap, mip_objective)


def _plan_cost(model: Model) -> float:
    """The cost of a solved model's plan (run costs and what is owned), without the tie-break."""
    return float(sum(model.run_cost(c) * (model.y[k, i].value() or 0.0) for k, i, c in model.pairs())
                 + _owned_value(model))


def _cost_gap(model: Model, bound: float) -> float:
    """How far a solved model's plan cost lies above a proven lower bound, relative to the cost."""
    cost = _plan_cost(model)
    return max(0.0, (cost - bound) / cost) if cost > 0 and math.isfinite(bound) else _INF


def _hours(model: Model) -> float:
    """The GPU-hours of a solved model's plan: what the idle-GPU polish makes smaller."""
    return float(sum(c.hours * (model.y[k, i].value() or 0.0) for k, i, c in model.pairs()))


def _columns(model: Model) -> list[tuple[str, Candidate]]:
    """(PuLP variable name of y[k,i], candidate) of a model: the columns the tie-break weighs."""
    return [(model.y[k, i].name, c) for k, i, c in model.pairs()]


def _owned_value(model: Model) -> float:
    """Purchase, servers, networking, and holding (hosting less resale) of the model's current
    values, at its scenario's prices, in present value."""
    p = model.problem
    total = 0.0
    for g, n in model.N.items():
        total += model.buy_cost(g) * (n.value() or 0.0)
        for s in p.servers.get(g, []):
            total += model.server_cost(g, s) * (model.S[g, s.id].value() or 0.0)
        if g in model.F:
            total += model.F[g].value() or 0.0
        total += sum(model.hold_cost(g, lv) * (model.H[g, lv].value() or 0.0) for lv in range(len(p.holdings[g])))
    return total + model.storage_usd


def cache_of(problem: Problem, alone: bool = False) -> OrderedDict:
    """The problem's built models, least recently used first, KEEP_MODELS of each kind: those of
    one GPU type alone (a deadline bisection builds one per step) kept apart from the others, so
    that they never push the plan's shared model out."""
    return problem.solver_cache.setdefault("alone_models" if alone else "models", OrderedDict())


def remember(problem: Problem, key: tuple, model: HighsModel, alone: bool = False) -> None:
    cache = cache_of(problem, alone)
    cache[key] = model
    cache.move_to_end(key)
    while len(cache) > KEEP_MODELS:
        cache.popitem(last=False)
