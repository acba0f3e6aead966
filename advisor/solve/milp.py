"""One solve of the MILP (solve/model.py, docs/model.md §2.2) under a Scenario and explicit
SolveSettings: through the problem's cached HiGHS model when highspy is there (solve/fast.py),
else a fresh PuLP build solved by CBC. HiGHS runs on one thread (deterministic, and it honours its
time limit). A solution found but not proven optimal is reported with its gap, never as optimal.

What one solve enforces is a Scenario (solve/scenario.py): the workload's limits, or a
counterfactual an explanation asks about.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulp

from advisor.errors import SolverError
from advisor.solve.fast import solve_fast
from advisor.solve.formulation import build_model, polish_model
from advisor.solve.late_cuts import add_to_pulp, with_late_rows
from advisor.solve.model import Model, idle_owned_gpus
from advisor.solve.problem import Candidate, Problem
from advisor.solve.run import (
    check_found,
    count_solve,
    quiet_stdout,
    read_gap,
    solver_for,
    start_from,
)
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution, read_solution
from advisor.solve.usable import usable_candidates, usable_serving


def solve(
    problem: Problem,
    scenario: Scenario | None = None,
    settings: SolveSettings | None = None,
    start: Solution | None = None,
) -> Solution:
    """The least-cost plan under `scenario` (the workload as written by default), proven optimal
    within the settings' relative gap, counted in the settings' tally when it has one. `start`: a
    plan of the same problem (under another scenario) the search starts from, where it is feasible
    (the PuLP path; the fast path re-runs one model, solve/fast.py): the same gap is proven."""
    sc = scenario or baseline(problem)
    s = settings or SolveSettings()
    gap = s.gap_for(problem)
    if solver_for(s.time_limit, gap)[0] == "highs" and not problem.serve_classes:
        # the fast path changes training coefficients in place; serving sections are rebuilt each time
        sol = solve_fast(problem, sc, s.time_limit, gap, polish=s.polishes(problem), lazy=s.lazy_for(problem))
    else:  # highspy missing, or serving: a fresh PuLP build
        sol = solve_pulp(problem, sc, s.time_limit, gap, s.polishes(problem), start.columns if start else None)
    count_solve(sol.objective_usd if sol.feasible else None, sol.solver.get("gap"), s.tally is not None)  # progress
    if s.tally is not None:
        s.tally.solves += 1
        if sol.feasible and not sol.solver.get("proven_optimal"):
            s.tally.unproven += 1
    return sol


def solve_pulp(
    problem: Problem,
    sc: Scenario,
    time_limit: float | None,
    gap: float,
    polish: bool = True,
    start: Mapping[str, float] | None = None,
) -> Solution:
    """A fresh PuLP build and solve (CBC when highspy is missing; the reference the fast path is tested
    against), from `start` (column name -> value) where HiGHS finds it feasible."""
    cands = usable_candidates(problem, sc)
    if any(not cs for cs in cands + usable_serving(problem, sc)):
        return Solution("infeasible", None, solver={"name": None, "reason": "a job has no usable candidate"})
    model = build_model(problem, sc, cands)
    name, status, proven = run_late(model, time_limit, gap, start)
    if status == "Infeasible":
        return Solution("infeasible", None, solver={"name": name, "status": status})
    columns = {v.name: v.varValue for v in model.prob.variables()}
    mip_objective = pulp.value(model.total)
    mip_gap = read_gap(model.prob, name, proven)
    if polish and idle_owned_gpus(model):
        model, name, status, proven = _polished(
            problem, sc, model, mip_objective, time_limit, gap, (name, status, proven)
        )
    sol = read_solution(model, name, status, proven, mip_gap, mip_objective)
    sol.columns = columns
    return sol


def _polished(
    problem: Problem,
    sc: Scenario,
    model: Model,
    least: float,
    time_limit: float | None,
    gap: float,
    ran: tuple[str, str, bool],
) -> tuple[Model, str, str, bool]:
    """The idle-GPU polish of a solved model (model.polish_model) with how its run went, or the
    model as it is with `ran` (solver name, status, proven)."""
    used = {(c.gpu, c.ownership) for k, i, c in model.pairs() if (model.y[k, i].value() or 0) > 1e-6}
    cands: list[list[Candidate]] = [
        [c for c in cs if (c.gpu, c.ownership) in used] for cs in usable_candidates(problem, sc, faster_too=True)
    ]
    polish = polish_model(problem, sc, cands, least)
    try:
        name2, status2, proven2 = run_late(polish, time_limit, gap)
    except SolverError:
        return (model, *ran)
    if status2 == "Infeasible":
        return (model, *ran)
    return polish, name2, status2, ran[2] and proven2


def run_late(
    model: Model, time_limit: float | None, gap: float | None, start: Mapping[str, float] | None = None
) -> tuple[str, str, bool]:
    """run_model, again with late_cuts' rows (kept in the model) while its plan has a job late that
    they catch."""
    return with_late_rows(
        model,
        lambda: run_model(model.prob, time_limit, gap, start),
        lambda r: r[1] != "Infeasible",
        lambda cuts: add_to_pulp(model, cuts),
    )


def run_model(
    prob: pulp.LpProblem, time_limit: float | None, gap: float | None = None, start: Mapping[str, float] | None = None
) -> tuple[str, str, bool]:
    """Solve (HiGHS from `start` when given: run.start_from); (solver name, PuLP status, proven
    optimal). Raises SolverError when no plan was found for a reason other than infeasibility."""
    name, solver = solver_for(time_limit, gap)
    if start and name == "highs":
        start_from(solver, start)
    try:
        with quiet_stdout():
            prob.solve(solver)
    except pulp.PulpSolverError as exc:
        raise SolverError(f"the {name} solver failed: {exc}") from None
    status = pulp.LpStatus[prob.status]
    if prob.sol_status == pulp.LpSolutionInfeasible or status == "Infeasible":
        return name, "Infeasible", False
    if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        check_found("none", name, time_limit)
    return name, status, prob.sol_status == pulp.LpSolutionOptimal
