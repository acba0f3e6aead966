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

from advisor.solve import constraints
from advisor.solve.constraints.base import UNBOUNDED
from advisor.solve.formulation import build_model, polish_model
from advisor.solve.highs_model import HighsModel
from advisor.solve.late_cuts import with_late_rows
from advisor.solve.lazy_pairs import FreeRows, free_rows
from advisor.solve.model import (
    IDLE_GPU_TOLERANCE,
    TIE_BREAK_USD_PER_HOUR,
    Model,
    idle_owned_gpus,
)
from advisor.solve.plan_values import cost_gap, plan_cost, plan_hours, run_columns
from advisor.solve.problem import Problem
from advisor.solve.run import check_found, printed_gap
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.solution import Solution, read_solution
from advisor.solve.usable import usable_candidates

KEEP_MODELS = 6  # structures kept per problem and kind (sweeps build many, explanations reuse few)
_INF = math.inf
POLISH_SHARE = 0.2  # of the time limit, for the idle-GPU polish (it only refines a found plan)
POLISH_NODES = 100  # branch-and-bound nodes the polish may use: its result must not depend on load


def structure_key(problem: Problem, sc: Scenario) -> tuple:
    """What decides the model's rows and columns (everything else is a coefficient or a bound):
    the constraint families' parts, the rental offers priced alone (their columns kept beside the others'
    of their GPU: usable.undominated), then the speed ceilings."""
    return (*constraints.structure_key(problem, sc), tuple(sorted(sc.offer_factor)), speed_key(sc))


def speed_key(sc: Scenario) -> tuple | None:
    """None without a speed change; else each GPU type whose speed changes with the speed ceiling
    of the shared model: every factor up to 1 shares one model, factors in (1, 2] another, (2, 4] ..."""
    if all(f == 1.0 for f in sc.speed_factor.values()):
        return None
    return tuple(
        sorted(
            (g, 1.0 if f <= 1.0 else 2.0 ** math.ceil(math.log2(f) - 1e-12))
            for g, f in sc.speed_factor.items()
            if f != 1.0
        )
    )


def speed_candidates(problem: Problem, sc: Scenario, ceiling: dict[str, float]) -> list[list]:
    """The columns of a speed model: for the GPU types whose speed changes, the candidates usable at
    their ceiling, dominated on cost *and* time dropped (a slower speed may need a faster one);
    for the others, those a fresh build keeps."""
    base = usable_candidates(problem, sc.but(only_gpu=None, ownership=None, speed_factor={}))
    fast = usable_candidates(problem, sc.but(only_gpu=None, ownership=None, speed_factor=ceiling), faster_too=True)
    return [[c for c in f if c.gpu in ceiling] + [c for c in b if c.gpu not in ceiling] for f, b in zip(fast, base)]


def solve_fast(
    problem: Problem, sc: Scenario, time_limit: float | None, gap: float, polish: bool = True, lazy: bool = False
) -> Solution:
    """milp.solve through the problem's cached HiGHS model of this structure; `polish`: put idle
    bought GPUs to work (model.polish_model) when a plan leaves some; `lazy`: at_once's pair rows
    only where a plan breaks them (solve/lazy_pairs.py)."""
    key, alone, hm = _shared_model(problem, sc)
    model = hm.model
    no_plan = Solution("infeasible", None, solver={"name": None, "reason": "a job has no usable candidate"})
    if _a_job_has_no_column(model, sc):
        return no_plan
    hm.apply(sc, constraints.limit_rows(sc))
    if hm.ceiling is not None and hm.no_column(sc.only_gpu):
        return no_plan
    pairs = free_rows(hm) if lazy else None
    try:
        status, proven, mip_gap = run_with_late_rows(hm, time_limit, gap, pairs=pairs)
        check_found(status, "highs", time_limit)
        if status == "infeasible":
            return Solution("infeasible", None, solver={"name": "highs", "status": "Infeasible"})
        mip_objective = plan_cost(model)
        if polish and idle_owned_gpus(model):
            pm = _polish_model(problem, sc, key, alone, model)
            model, mip_gap = _polished(pm, hm, sc, time_limit, gap, proven, mip_gap, mip_objective)
        return read_solution(model, "highs", "Optimal", proven, mip_gap, mip_objective)
    finally:
        hm.drop_rows()
        if pairs is not None:
            pairs.restore(hm)


def run_with_late_rows(
    hm: HighsModel, time_limit: float | None, gap: float, nodes: int | None = None, pairs: FreeRows | None = None
) -> tuple[str, bool, float | None]:
    """hm.run (without the pair rows its plans hold, given `pairs`), again with late_cuts' rows while
    its plan has a job late that they catch (the rows stay in hm until its drop_rows)."""
    run = (lambda: hm.run(time_limit, gap, nodes)) if pairs is None else (lambda: pairs.run(hm, time_limit, gap, nodes))
    return with_late_rows(hm.model, run, lambda r: r[0] in ("optimal", "feasible"), hm.add_rows)


def _shared_model(problem: Problem, sc: Scenario) -> tuple[tuple, bool, HighsModel]:
    """(cache key, kept with the one-GPU-type models?, model) of the scenario's structure: the
    cached one, else built now; either way remembered as the most recently used."""
    key = structure_key(problem, sc)
    ceiling = key[-1]
    # one GPU type under other deadlines or GPU-count bounds (why it cannot be the plan alone): a
    # model of that type's candidates only, rather than of every type with the others bounded to 0
    alone = sc.only_gpu is not None and ceiling is None and key != structure_key(problem, baseline(problem))
    key += ("alone", sc.only_gpu) if alone else ()
    hm = cache_of(problem, alone).get(key)
    if hm is None:
        cands = (
            usable_candidates(problem, sc if alone else sc.but(only_gpu=None, ownership=None))
            if ceiling is None
            else speed_candidates(problem, sc, dict(ceiling))
        )
        model = build_model(problem, constraints.unbounded(sc), cands)
        extra = {name: TIE_BREAK_USD_PER_HOUR * c.hours for name, c in run_columns(model)}
        hm = HighsModel(model, extra, 1.0)
        if ceiling is not None:
            hm.enable_speed(dict(ceiling))
    remember(problem, key, hm, alone)
    return key, alone, hm


def _a_job_has_no_column(model: Model, sc: Scenario) -> bool:
    """A job none of whose model columns the scenario's GPU type and ownership allow: no plan,
    known without a solve (the shared model keeps every type's columns)."""
    return any(
        not cs or all(sc.only_gpu not in (None, c.gpu) or sc.ownership not in (None, c.ownership) for c in cs)
        for cs in model.cands
    )


def _polish_model(problem: Problem, sc: Scenario, key: tuple, alone: bool, model: Model) -> HighsModel:
    """The idle-GPU polish's model for the (GPU, ownership) pairs the solved `model` uses: cached
    next to the model it polishes, else built now."""
    used = {(c.gpu, c.ownership) for k, i, c in model.pairs() if (model.y[k, i].value() or 0) > 1e-6}
    pkey = key + ("polish", frozenset(used), tuple(sorted(sc.speed_factor.items())))
    pm = cache_of(problem, alone).get(pkey)
    if pm is None:
        cands = [
            [c for c in cs if (c.gpu, c.ownership) in used]
            for cs in usable_candidates(problem, sc.but(only_gpu=None), faster_too=True)
        ]
        polished = polish_model(problem, constraints.unbounded(sc), cands, UNBOUNDED)
        pm = HighsModel(polished, {j: c.hours for j, c in run_columns(polished)}, 1e-6)
    remember(problem, pkey, pm, alone)
    return pm


def _polished(
    pm: HighsModel,
    hm: HighsModel,
    sc: Scenario,
    time_limit: float | None,
    gap: float,
    proven: bool,
    mip_gap: float | None,
    mip_objective: float,
) -> tuple[Model, float | None]:
    """(model, gap) of the plan to report: the polish's, run within IDLE_GPU_TOLERANCE of the first
    solve's cost, when it passes the checks below; else the first solve's (hm's)."""
    model = hm.model
    ceiling = mip_objective + max(1.0, IDLE_GPU_TOLERANCE * mip_objective)  # on the whole cost (row_shift)
    pm.apply(sc, {**constraints.limit_rows(sc), "idle_gpus_cost": (-_INF, ceiling)})
    bound = hm.dual_bound + model.storage_usd  # HiGHS's bound counts the variable costs only
    try:
        p_status, p_proven, _ = run_with_late_rows(
            pm, None if time_limit is None else time_limit * POLISH_SHARE, gap, POLISH_NODES
        )
    finally:
        pm.drop_rows()
    if p_proven or (p_status == "feasible" and not pm.stopped_on_time and plan_hours(pm.model) < plan_hours(model)):
        # proven, or stopped at its node limit (not at its time limit: that plan would depend on
        # the load) with a plan that finishes sooner at a cost within IDLE_GPU_TOLERANCE of the
        # least. "optimal" claims the cost: that plan is taken only if its cost is still proven
        # within the gap of the first solve's lower bound, and the gap reported is that plan's
        within = cost_gap(pm.model, bound)
        if not proven or within <= gap:
            return pm.model, (printed_gap(within) if proven else mip_gap)
    return model, mip_gap


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
