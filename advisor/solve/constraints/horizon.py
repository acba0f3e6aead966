"""horizon: every job finishes within the horizon the plan is costed over (the deployment's
`horizon_months`), held at the workload's confidence quantile of its time; without a deadline the
horizon is the deadline. A plan never runs a job for decades: a workload whose work does not fit
is infeasible, and the diagnosis says how long a horizon it would need.

No row of its own: a candidate that misses the horizon is not a column (its Bounds), and owned
GPU-hours are held by the capacity family's rows at the horizon's level. A deadline past the horizon
does not move it: bought GPUs are held at most to the horizon, so the horizon's slack is the one
reported for that job, and its marginal value is a re-solve over one more month."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Marginal, Shortfall, Slack, binds
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.constraints.at_once import class_done_hours, spread_factors
from advisor.solve.constraints.base import Family, Need, Rebuild, Run, past
from advisor.solve.constraints.deadline import planned_makespan
from advisor.solve.scenario import Scenario, baseline

if TYPE_CHECKING:
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


def months_for(hours: float) -> float:
    """The horizon, in whole months, that holds `hours`."""
    return float(math.ceil(hours / HOURS_PER_MONTH - 1e-9))


def _within_horizon(problem: Problem, k: int) -> bool:
    """Is class k due by the horizon (it has no deadline, or one past the horizon)?"""
    deadline = problem.classes[k].deadline
    return deadline is None or deadline > problem.costs.horizon_hours * (1 + 1e-9)


def _past_horizon(problem: Problem) -> bool:
    """Does some job's deadline come after the horizon (the horizon, not it, limits the job)?"""
    return any(c.deadline is not None and _within_horizon(problem, k) for k, c in enumerate(problem.classes))


class Horizon(Family):
    name = "horizon"

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        return {} if sc.horizon_hours is None else {"planned_hours": sc.horizon_hours}

    def structure(self, problem: Problem, sc: Scenario) -> tuple:
        return (sc.horizon_hours,)

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        if sc.horizon_hours is None:
            return []
        out = []  # a job in lent off-peak hours is done when they have run it
        for (c, _), f in zip(sol.assignment, spread_factors(problem, sol)):
            done = c.start_hours * sc.lead_scale + c.planned_hours * f
            if past(done, sc.horizon_hours):
                out.append(
                    f"{problem.classes[c.cls].name(problem.workload)} is done {done:.6g} h from today at its "
                    f"confidence quantile, past the {sc.horizon_hours:.6g} h horizon"
                )
        return out

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        """The job done last of those the horizon limits (no deadline, or one past the horizon) against
        the horizon (a job due sooner by its deadline: the deadline's row)."""
        done = class_done_hours(problem, sol)
        held = [k for k in done if _within_horizon(problem, k)]
        if not held:
            return []
        longest = max(held, key=lambda k: done[k])
        used, limit = done[longest] / 24, problem.costs.horizon_hours / 24
        return [
            Slack(
                self.name,
                "horizon",
                used,
                limit,
                limit - used,
                "days",
                binds(limit - used, limit),
                facts={
                    "job": problem.classes[longest].name(problem.workload),
                    "months": problem.workload.deployment.horizon_months,
                    "confidence": problem.workload.confidence,
                },
            )
        ]

    def marginal(
        self, problem: Problem, sol: Solution, run: Run, slacks: list[Slack], rebuild: Rebuild | None = None
    ) -> Marginal | None:
        """What one more month of horizon saves, re-solved on the problem rebuilt over it (its holding
        periods end there), where the horizon stands in for a deadline it comes before."""
        mine = [s for s in slacks if s.family == self.name]
        if not mine or rebuild is None or not _past_horizon(problem):
            return None
        there = rebuild(horizon_months=problem.workload.deployment.horizon_months + 1)
        s = run(there, baseline(there))
        saving = max((sol.objective_usd or 0.0) - (s.objective_usd or 0.0) if s.feasible else 0.0, 0.0)
        return Marginal(self.name, "horizon +1 month", round(saving, 2), mine[0].binding, mine[0].slack)

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        needed, limit = planned_makespan(free), problem.costs.horizon_hours
        if needed <= limit * (1 + 1e-9):
            return []
        return [
            Shortfall(
                self.name,
                "shortfall:horizon",
                needed / 24,
                limit / 24,
                facts={"months": problem.workload.deployment.horizon_months},
            )
        ]

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        if sc.horizon_hours is None:
            return None
        free = run(problem, sc.but(horizon_hours=None))
        if not free.feasible:
            return None
        months = months_for(planned_makespan(free))
        if not run(problem, sc.but(horizon_hours=months * HOURS_PER_MONTH)).feasible:
            return None
        limit = problem.workload.deployment.horizon_months
        return Lever(self.name, "horizon", {"deployment.horizon_months": months}, months, limit)

    def need(self, problem: Problem, plan: Solution) -> Need | None:
        needed = planned_makespan(plan)
        if needed <= problem.costs.horizon_hours * (1 + 1e-9):
            return None
        months = months_for(needed)
        return Need(
            self.name, {"horizon_hours": months * HOURS_PER_MONTH}, {"deployment.horizon_months": months}, months
        )

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        return {"horizon_hours": base.horizon_hours}

    def lifted(self) -> dict[str, Any]:
        return {"horizon_hours": None}
