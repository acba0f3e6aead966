"""A solved problem into the plan contract (advisor/contract/): the explanations asked for, the
costs, what to buy or rent, warnings and sources, with numbers rounded so the same input gives
the same bytes. plan.py runs the flow; this module only assembles its result."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from advisor._version import __version__
from advisor.contract import Plan
from advisor.contract.costs import CostBreakdown
from advisor.contract.numbers import cents, cents_adding_to, rounded
from advisor.data.uncertainty import basis as uncertainty_basis
from advisor.explain.alternatives import alternatives, ordered
from advisor.explain.draws import Prices
from advisor.explain.other_ownership import OtherWay, other_ownership
from advisor.explain.other_ownership import other_way as find_other_way
from advisor.explain.ranges import speed_tasks
from advisor.explain.robustness import Verdict, plan_ranges
from advisor.explain.sensitivity import break_even, marginal_values
from advisor.perf import params_from
from advisor.perf.memory import default_batch_tokens
from advisor.plan_notes import plan_sources, plan_warnings
from advisor.plan_rows import plan_assumptions, plan_jobs, plan_servers, purchase_rows
from advisor.present.constraint_words import (
    binding_row,
    diagnosis_row,
    limit_reason,
    marginal_row,
)
from advisor.solve import ledger, ownership_terms, parallel
from advisor.solve.candidates import build_problem
from advisor.solve.constraints import slacks
from advisor.solve.problem import Problem
from advisor.solve.settings import FLEET_JOBS, SolveSettings, SolveTally
from advisor.solve.solution import Solution

SCHEMA_VERSION = 1
EXPLAIN_LEVELS = ("none", "alternatives", "full")

JSONObject = dict[str, Any]
WORK_PER_ALTERNATIVES = 10  # the sensitivity re-solves' CPU over the alternatives stage's, roughly


def explain_level(explain: bool | str) -> str:
    """True -> "full", False -> "none"; a level name as it is."""
    return {True: "full", False: "none"}[explain] if isinstance(explain, bool) else explain


def _rebuilder(problem: Problem) -> Callable[..., Problem]:
    def rebuild(batch_scale: float | None = None, **deployment_changes: Any) -> Problem:
        """The problem again with another deployment, or every job's global batch x batch_scale."""
        d = problem.workload.deployment.moved_to(**deployment_changes)
        wl = problem.workload.model_copy(update={"deployment": d})
        if batch_scale is not None:
            p = params_from(problem.catalog)
            jobs = [
                job.model_copy(
                    update={
                        "global_batch_tokens": batch_scale
                        * (cls.spec.global_batch_tokens or default_batch_tokens(cls.spec.model, p))
                    }
                )
                for job, cls in ((wl.jobs[j], c) for c in problem.classes for j in c.jobs)
            ]
            order = [j for c in problem.classes for j in c.jobs]
            by_index = dict(zip(order, jobs))
            wl = wl.model_copy(update={"jobs": [by_index.get(i, job) for i, job in enumerate(wl.jobs)]})
        return build_problem(wl, problem.catalog, problem.rules, params_from(problem.catalog), problem.as_of)

    return rebuild


class _Explained:
    """What the re-solves found: each GPU not chosen, sensitivity, the diagnosis, serving insights,
    and the settings of the explanations' re-solves with their tally (read by the warnings and the
    solver record)."""

    def __init__(
        self,
        problem: Problem,
        sol: Solution,
        objective: str,
        settings: SolveSettings,
        level: str,
        verdict: Verdict | None,
        prices: Prices | None = None,
        other_way: bool = True,
    ) -> None:
        self.verdict = verdict  # the robustness draws, already begun (plan.plan), or None
        self.prices = prices  # the expected prices the plan was chosen at (explain/decision.py), or None
        self.settings = settings.explaining(problem)  # every re-solve below: its gap, limit and tally
        self.rejected: dict[str, JSONObject] = {
            gid: {"gpu": gid, "reasons": ordered(problem, gid, r.reasons), "forced_cost_usd": None}
            for gid, r in problem.rejected.items()
        }
        if not sol.feasible:  # allowed GPUs that could run the job: no plan meets the limits (see diagnosis)
            for gid in problem.considered:
                if gid not in self.rejected:
                    self.rejected[gid] = {
                        "gpu": gid,
                        "forced_cost_usd": None,
                        "reasons": [
                            {
                                "rule": None,
                                "code": "no-plan",
                                "primary": True,
                                "message": "it can run the jobs, but no plan meets every limit (see why no plan exists)",
                            }
                        ],
                    }
        self.sensitivity: dict[str, list[JSONObject]] = {"break_even": [], "marginal": []}
        self.robustness: JSONObject | None = None  # drawn beside the sensitivity re-solves (full level)
        self.other_way: OtherWay | None = None  # the other way to own: beside them too at the full level
        self._find_other: Callable[[], OtherWay | None] | None = (
            (lambda: find_other_way(problem, sol, self.settings, _rebuilder(problem)))
            if level != "none" and objective == "cost" and other_way
            else None
        )
        if sol.feasible and level != "none":
            took = time.process_time()
            alts = alternatives(problem, sol, self.settings)
            took = time.process_time() - took
            for gid, alt in alts.items():
                self.rejected[gid] = {"gpu": gid, **alt}
            if objective == "cost" and level == "full":
                self.sensitivity = self._sensitivity(problem, sol, alts, settings, took)
        self.diagnosis: list[JSONObject] = [] if sol.feasible else _diagnosed(problem, self.settings, level)
        self.insights: JSONObject = (
            _serving().serving_insights(problem, sol, settings)
            if level != "none" and objective == "cost" and _serves(problem, sol)
            else {}
        )
        for entry in self.rejected.values():  # a limit that rules a GPU type out, in words
            name = problem.catalog.gpus[entry["gpu"]].name
            entry["reasons"] = [_worded(r, name) for r in entry["reasons"]]
        if self.insights:
            self.sensitivity["traffic"] = [self.insights["traffic"]]
        if self._find_other is not None:  # not found beside the sensitivity re-solves
            self.other_way = self._find_other()
        self.other_ownership = other_ownership(
            problem, sol, self.other_way, self.settings, purchase_rows, self.prices is not None
        )

    def _sensitivity(
        self, problem: Problem, sol: Solution, alts: dict, settings: SolveSettings, alternatives_s: float
    ) -> dict[str, list[JSONObject]]:
        """Price break-evens, speed break-evens (one bisection per GPU type), marginal values and the
        other way to own (self.other_way, when wanted): independent of each other and of the robustness
        draws, so on two cores (solve/parallel.py) they run beside each other with the verdict's first
        block of draws. They cost more than
        WORK_PER_ALTERNATIVES x the alternatives stage (200-job fleet: ~50 s of CPU against
        1.1-1.8 s; article examples: ~0.05 against ~0.01 s), which decides whether to fork."""
        explaining = self.settings
        # price break-evens re-solve at the plan's own gap (the explanations' 1% returns either of two plans
        # near a tie: the serve-70b example's MI300X rental claimed +24.3% where re-solves at 0.01% put +20.4%),
        # within the explanations' time limit, counted with them
        at_plan_gap = explaining.but(gap=settings.gap_for(problem))
        # speed break-evens too, but for a fleet's (at 1% by default; a tighter --gap does not slow its searches)
        speed_at = at_plan_gap if problem.job_count < FLEET_JOBS else explaining
        prices = self.prices
        # the other way to own first: task 0 is run by the calling process (solve/parallel.run), so the
        # problem it rebuilds, and that problem's models, stay here for the break-evens that read it
        find, self._find_other = self._find_other, None
        tasks: list[Callable[[], Any]] = [
            *([find] if find is not None else []),
            lambda: break_even(problem, sol, alts, at_plan_gap, prices),
            *speed_tasks(problem, sol, alts, speed_at, prices),
            lambda: marginal_values(problem, sol, explaining, prices, _rebuilder(problem)),
        ]
        tally = explaining.tally
        assert tally is not None
        # the robustness verdict's first block of draws (always drawn) joins them: the queue deals the
        # longest first (price break-evens, the speed bisections), then marginal values and the draws
        self.verdict = verdict = self.verdict or Verdict(problem, settings)
        verdict.hold(sol)  # each rate drawn as the plan's rows grade it (an early start's draws may be stale)
        draws = verdict.first_block()  # those an early start (plan.plan) has not begun
        got = parallel.gather(tasks + draws, work_s=WORK_PER_ALTERNATIVES * alternatives_s, **tally.forked())
        if find is not None:
            self.other_way, got = got[0], got[1:]
            tasks = tasks[1:]
        price, *speed, marginal = got[: len(tasks)]
        self.robustness = verdict.verdict(sol, got[len(tasks) :])
        return {
            "break_even": price,
            "marginal": [marginal_row(m) for m in marginal],
            "speed": [e for part in speed for e in part],
        }


def _worded(reason: JSONObject, name: str) -> JSONObject:
    """A GPU's reason with its constraint fact (explain/alternatives.infeasible_reasons) in words."""
    fact = reason.get("fact")
    if fact is None:
        return reason
    return {**limit_reason(fact, name), "primary": reason["primary"]}


def _serves(problem: Problem, sol: Solution) -> bool:
    return bool(problem.serve_classes or sol.serving)


def _diagnosed(problem: Problem, settings: SolveSettings, level: str) -> list[JSONObject]:
    """Why no plan exists (explain/diagnosis.py, imported only when none does: start-up time of a plan)."""
    from advisor.explain.diagnosis import diagnose

    return [diagnosis_row(d) for d in diagnose(problem, settings, _rebuilder(problem) if level == "full" else None)]


def _serving() -> Any:
    """explain/serving.py, imported only for a workload that serves (it brings the serving estimator:
    start-up time of a training-only plan); every serving key of a training-only plan is empty."""
    import advisor.explain.serving as serving

    return serving


def assemble(
    problem: Problem,
    sol: Solution,
    settings: SolveSettings,
    *,
    objective: str = "cost",
    explain: bool | str = True,
    verdict: Verdict | None = None,
    decision: JSONObject | None = None,
    prices: Prices | None = None,
    other_ownership: bool = True,
    verify: Callable[[Verdict | None], list[JSONObject]] | None = None,
) -> Plan:
    """The Plan of `sol`, with the explanations `explain` asks for (plan.plan's levels). `verdict`:
    the robustness verdict of `problem` under `settings`, its draws begun before `sol` was solved
    (Verdict.begin in plan.plan); None: drawn here. `decision`: how `sol` was chosen
    (explain/decision.py), the plan's `decision` key; `prices`: the expected prices it was chosen at,
    which the sensitivity re-solves use (None: the catalog's). `other_ownership`: False leaves out
    the plan of the other way to own (plan.plan's). `verify`: the decision's inputs worth verifying
    (explain/value_of_information.verify), given the robustness draws once they are made."""
    level = explain_level(explain)
    why = _Explained(problem, sol, objective, settings, level, verdict, prices, other_ownership)
    jobs = plan_jobs(problem, sol)
    data = _plan_fields(problem, sol, settings, objective, why, jobs)
    # the robustness verdict is an explanation: drawn at the full level only (crossover reads none of it)
    data.update(
        plan_ranges(
            problem,
            sol,
            jobs,
            robust=level == "full" and objective == "cost",
            settings=settings,
            verdict=why.robustness,
        )
    )
    data["assumptions"]["uncertainty"] = uncertainty_basis()
    if decision is not None:
        if verify is not None:  # after the draws: their optima are among the plans it prices
            decision["verify"] = verify(why.verdict)
        data["decision"] = decision
    data = _in_cents(rounded(data), sol)
    result = Plan.build(data)  # validated only under GPU_ADVISOR_CHECK_PLANS (the tests): contract/base.py
    result.workload, result.catalog = problem.workload, problem.catalog
    result.rules, result.problem = problem.rules, problem
    return result


def _plan_fields(
    problem: Problem, sol: Solution, settings: SolveSettings, objective: str, why: _Explained, jobs: list[JSONObject]
) -> JSONObject:
    """The plan's keys in the contract's order, before rounding: what is bought or rented and what
    it costs, the jobs and serving, the explanations `why` holds, warnings, the solver and sources."""
    wl, catalog = problem.workload, problem.catalog
    explaining = why.settings
    tally = explaining.tally or SolveTally()
    serves = _serves(problem, sol)
    return {
        "schema_version": SCHEMA_VERSION,
        "name": wl.name,
        "objective": objective,
        "status": sol.status,
        "total_cost_usd": sol.objective_usd,
        "cost_breakdown": sol.cost_breakdown
        or dict.fromkeys(k for k in CostBreakdown.model_fields if k not in ("bridge_usd", "services_tax_usd")),
        "present_value_usd": sol.objective_usd,
        "nominal_cost_usd": sol.cash_usd if sol.feasible else None,
        "residual_value_usd": sol.residual_value_usd if sol.feasible else None,
        "cost_breakdown_pv": sol.cost_breakdown_pv or None,
        "purchase": purchase_rows(problem, sol),
        "servers": plan_servers(problem, sol),
        "bill_of_materials": ledger.bill_of_materials(problem, sol) if sol.feasible else [],
        "break_even_months": _break_even(problem, sol, why),
        "depreciation": ownership_terms.depreciation(problem, sol) if sol.feasible else [],
        "disposal": ownership_terms.disposal(problem, sol) if sol.feasible else [],
        "other_ownership": why.other_ownership,
        "utilization": ownership_terms.utilization(problem, sol) if sol.feasible else None,
        "jobs": jobs,
        "serving": _serving().serving_rows(problem, sol) if serves else [],
        "serving_mix": why.insights.get("mix"),
        "rejected": [{**why.rejected[g], "name": catalog.gpus[g].name} for g in sorted(why.rejected)],
        "binding": [binding_row(s) for s in slacks(problem, sol)],
        "sensitivity": why.sensitivity,
        "diagnosis": why.diagnosis,
        "warnings": plan_warnings(problem, sol, explaining)
        + (_serving().serving_warnings(problem, sol) if serves else []),
        "assumptions": plan_assumptions(problem, sol),
        "solver": {
            **{k: v for k, v in sol.solver.items() if k != "status"},
            "gap_limit": settings.gap_for(problem),
            "explanations": {
                "solves": tally.solves,
                "gap_limit": explaining.gap,
                "time_limit_s": explaining.time_limit,
                "approximate": tally.unproven > 0,
            },
        },
        "sources": plan_sources(problem, sol),
        "as_of": problem.as_of.isoformat(),
        "tool_version": __version__,
        "catalog_digest": catalog.digest,
    }


def _break_even(problem: Problem, sol: Solution, why: _Explained) -> list[JSONObject]:
    """The break-even of each bought type against renting on an offer that can carry its jobs: the
    'Renting instead' re-solve's where it was made, else a problem that may rent (rebuilt only when
    the workload may not, and only when asked)."""
    if not sol.feasible:
        return []
    way = why.other_way.rented() if why.other_way is not None else None
    context = problem.workload.deployment.context
    renting = functools.cache(lambda: _rebuilder(problem)(context=context, ownership="rent"))  # once for every type
    return ownership_terms.break_even(problem, sol, way, renting)


def _in_cents(data: JSONObject, sol: Solution) -> JSONObject:
    """`data` (rounded) with its money to the cent, half up, the parts of each cost breakdown adding
    to its total: the precision a budget is compared at."""
    if sol.objective_usd is not None:
        for key, value in (
            ("total_cost_usd", sol.objective_usd),
            ("present_value_usd", sol.objective_usd),
            ("nominal_cost_usd", sol.cash_usd),
        ):
            data[key] = cents(value)
        data["cost_breakdown"] = ledger.printed_breakdown(sol)  # the bill's lines foot to these parts
        if sol.cost_breakdown_pv:
            data["cost_breakdown_pv"] = cents_adding_to(sol.cost_breakdown_pv, sol.objective_usd)
    return data
