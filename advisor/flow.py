"""The flow: advisor.plan(workload) -> Plan, one way, in one function.

workload -> candidates (rules + estimate per job and GPU) -> optimize (MILP) -> explain -> Plan.
A Plan is a typed model of the JSON contract (advisor/contract/, printed by `advisor schema --output plan`) that also reads
like a dict, so a script reads plan["total_cost_usd"] the same way it reads `advisor plan
--format json`. assemble.py turns a solution into the Plan.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from advisor.assemble import (
    EXPLAIN_LEVELS,
    SCHEMA_VERSION,
    assemble,
    explain_level,
)
from advisor.contract import Plan
from advisor.contract.numbers import rounded
from advisor.data.bounds import check_workload_size
from advisor.data.catalog import Catalog, load_catalog
from advisor.data.rules import RuleSet, load_rules
from advisor.errors import InputError
from advisor.explain.decision import Decided, decide
from advisor.explain.robustness import Verdict, range_points
from advisor.explain.tradeoffs import cost_time_points, value_points
from advisor.explain.value_of_information import verify
from advisor.inputs.workload import Workload
from advisor.perf import min_gpus, params_from
from advisor.plan_rows import purchase_rows
from advisor.solve.candidates import build_problem
from advisor.solve.constraints.at_once import makespan_hours
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.run import plan_chosen, stage
from advisor.solve.settings import SolveSettings
from advisor.solve.sweeps import frontier, solve_fastest
from advisor.solve.verify import check

__all__ = ["chart_data", "min_gpus_by_job", "pareto", "plan", "prepare"]


def prepare(
    workload: Workload, catalog: Catalog | None = None, rules: RuleSet | None = None, as_of: dt.date | None = None
) -> Problem:
    """Candidates for every job: rules and estimates applied, nothing solved yet. The workload's size
    is checked against the catalog first (data/bounds.py), so every path to a plan (the library, the
    CLI, bench code) refuses an oversized workload before any estimating."""
    catalog = catalog or load_catalog()
    check_workload_size(workload, catalog.gpus)
    rules = rules or load_rules()
    return build_problem(workload, catalog, rules, params_from(catalog), as_of or dt.date.today())


def _checked_level(objective: str, explain: bool | str, gap: float | None) -> str:
    """The explanation level of plan()'s arguments, each checked before anything is solved (a
    library caller gets the error the CLI's options would have given)."""
    if objective not in ("cost", "time"):
        raise InputError(f"objective is 'cost' or 'time', got {objective!r}", field="objective")
    level = explain_level(explain)
    if level not in EXPLAIN_LEVELS:
        raise InputError(
            f"explain is one of {', '.join(EXPLAIN_LEVELS)} (or true/false), got {explain!r}", field="explain"
        )
    if gap is not None and not 0 <= gap < 1:
        raise InputError(f"gap is a fraction from 0 to below 1 (0.01 = 1%), got {gap!r}", field="gap")
    return level


def plan(
    workload: Workload,
    *,
    catalog: Catalog | None = None,
    rules: RuleSet | None = None,
    as_of: dt.date | None = None,
    objective: str = "cost",
    time_limit: float | None = 30.0,
    explain: bool | str = True,
    charts: bool = False,
    gap: float | None = None,
    other_ownership: bool = True,
) -> Plan:
    """Choose the cheapest GPU mix for `workload` (or, with objective='time', the fastest one
    within the budget) and say why. charts=True also computes what a memo's charts show (the
    cheapest plan per GPU type under a sweep of completion times, speed per dollar), once.

    explain: "full" (or True) computes every explanation; "alternatives" the forced cost of each
    unchosen GPU and, without a plan, the diagnosis from the workload's own limits, but no
    break-evens, marginal values, robustness draws or re-planning under another deployment or
    batch (what `crossover` reads); "none" (or False) none but, without a plan, the diagnosis from the workload's own limits. gap: the relative MIP gap the plan is proven within (None: 0.01% for a few jobs, 1% for
    fleets of 50 jobs or more; milp.default_gap). other_ownership=False: no plan of the other way to own
    (`other_ownership` null; the problem rebuilt for it and its solves are a sweep's largest explanation,
    which `crossover` does not read)."""
    level = _checked_level(objective, explain, gap)
    problem = prepare(workload, catalog, rules, as_of)
    settings = SolveSettings(gap=gap, time_limit=time_limit)
    # the robustness draws need the candidates, not the plan: on a large model they begin on the
    # other core while the plan is solved (explain/robustness.py)
    drawn = objective == "cost" and level == "full"
    verdict = Verdict.begin(problem, settings) if drawn and workload.decision.basis not in ("p80", "p90") else None
    try:
        sol = solve(problem, settings=settings) if objective == "cost" else solve_fastest(problem, settings=settings)
        if verdict is not None and not sol.feasible:  # no plan to judge: stop the draws before the diagnosis
            verdict.close()
            verdict = None
        check(problem, sol)  # every hard constraint holds, or the plan is refused (solve/verify.py)
        # the plan a buyer gets is the one chosen on the workload's decision basis (explain/decision.py):
        # every explanation below is about it
        decided = decide(problem, sol, settings, verdict) if objective == "cost" and sol.feasible else None
        if decided is not None:
            verdict = verdict or decided.verdict
            sol = decided.chosen
            check(problem, sol)
            plan_chosen(sol.objective_usd, sol.solver.get("gap"))  # the progress line's best: the plan printed
        with stage("explaining"):  # named on the CLI's progress line (solve/run.py)
            result = assemble(
                problem,
                sol,
                settings,
                objective=objective,
                explain=level,
                verdict=verdict,
                decision=decided.record if decided is not None else None,
                prices=decided.prices if decided is not None else None,
                other_ownership=other_ownership,
                # which inputs to verify first, by the value of knowing them (after the robustness draws)
                verify=_verifier(problem, decided, settings) if decided is not None and level == "full" else None,
            )
    finally:
        if verdict is not None:
            verdict.close()  # no plan, or an error: the draws begun are not needed
    if charts:
        result.chart_data = chart_data(problem, settings)
    return result


def _verifier(problem: Problem, decided: Decided, settings: SolveSettings) -> Callable[[Verdict | None], list]:
    """decision.verify as assemble calls it, once the robustness draws are made."""
    return lambda drawn: verify(problem, decided, settings.explaining(problem), drawn)


def chart_data(problem: Problem, settings: SolveSettings) -> dict[str, Any]:
    """What a memo's charts show, computed by re-solving and estimating (explain/tradeoffs.py)."""
    if not problem.classes:
        return {}  # the charts are about training time; a serving-only workload has none
    return {
        "cost_time": cost_time_points(problem, settings),
        "value": value_points(problem, params_from(problem.catalog)),
        "ranges": range_points(problem, settings),
    }


def min_gpus_by_job(problem: Problem, plan: Plan | dict[str, Any]) -> dict[str, int | None]:
    """Job name -> the fewest GPUs of its chosen type that hold it (the memo says whether memory
    size set the GPU count)."""
    params = params_from(problem.catalog)
    out: dict[str, int | None] = {}
    for j in plan["jobs"]:
        cls = next((c for c in problem.classes if c.name(problem.workload) == j["name"]), problem.classes[0])
        out[j["name"]] = min_gpus(cls.spec, problem.catalog.gpus[j["gpu"]], params)
    return out


def pareto(
    workload: Workload,
    *,
    catalog: Catalog | None = None,
    rules: RuleSet | None = None,
    as_of: dt.date | None = None,
    points: int = 24,
    time_limit: float | None = 30.0,
) -> dict[str, Any]:
    """The cost-versus-time Pareto front (`advisor frontier`), from up to `points` makespan caps."""
    problem = prepare(workload, catalog, rules, as_of)
    front: list[dict[str, Any]] = []
    for sol in frontier(problem, SolveSettings(time_limit=time_limit), points=points):
        check(problem, sol)
        front.append(
            {
                "makespan_days": makespan_hours(problem, sol) / 24,
                "total_cost_usd": sol.objective_usd,
                "purchase": purchase_rows(problem, sol),
                "status": sol.status,
            }
        )
    return rounded(
        {"schema_version": SCHEMA_VERSION, "name": workload.name, "as_of": problem.as_of.isoformat(), "points": front}
    )
