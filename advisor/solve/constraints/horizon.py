"""horizon: every job finishes within the horizon the plan is costed over (the deployment's
`horizon_months`), held at the workload's confidence quantile of its time; without a deadline the
horizon is the deadline. A plan never runs a job for decades: a workload whose work does not fit
is infeasible, and the diagnosis says how long a horizon it would need.

No row of its own: a candidate that misses the horizon is not a column (its Bounds), and owned
GPU-hours are held by the capacity family's rows at the horizon's level."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Shortfall, Slack, binds
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.constraints.base import Family, Need, Run
from advisor.solve.constraints.deadline import planned_makespan
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


def months_for(hours: float) -> float:
    """The horizon, in whole months, that holds `hours`."""
    return float(math.ceil(hours / HOURS_PER_MONTH - 1e-9))


class Horizon(Family):
    name = "horizon"

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        return {} if sc.horizon_hours is None else {"planned_hours": sc.horizon_hours}

    def structure(self, problem: Problem, sc: Scenario) -> tuple:
        return (sc.horizon_hours,)

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        if sc.horizon_hours is None:
            return []
        return [
            f"{problem.classes[c.cls].name(problem.workload)} is done {c.done_hours(sc.lead_scale):.6g} h from "
            f"today at its confidence quantile, past the {sc.horizon_hours:.6g} h horizon"
            for c, _ in sol.assignment
            if c.done_hours(sc.lead_scale) > sc.horizon_hours * (1 + 1e-6) + 1e-6
        ]

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        """The longest job without a deadline against the horizon (a job with one: the deadline's row)."""
        free = [c for c, _ in sol.assignment if problem.classes[c.cls].deadline is None]
        if not free:
            return []
        longest = max(free, key=lambda c: c.done_hours())
        used, limit = longest.done_hours() / 24, problem.costs.horizon_hours / 24
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
                    "job": problem.classes[longest.cls].name(problem.workload),
                    "months": problem.workload.deployment.horizon_months,
                    "confidence": problem.workload.confidence,
                },
            )
        ]

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
