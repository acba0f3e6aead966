"""budget: the plan's total cost within `budget_usd`.

  budget   total cost <= budget_usd
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Marginal, Shortfall, Slack, binds
from advisor.solve.constraints.base import UNBOUNDED, Family, Need, Run
from advisor.solve.scenario import Scenario, baseline

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution

_INF = float("inf")
USD_TOLERANCE = 0.01      # a cent: HiGHS meets a row to ~1e-6 relative
REL_TOLERANCE = 1e-7
MARGIN = 1.1              # the marginal value of budget: 10% more


class Budget(Family):
    name = "budget"

    def rows(self, m: Model) -> None:
        if m.sc.budget_usd is not None:
            m.prob += m.total <= m.sc.budget_usd, "budget"

    def limits(self, sc: Scenario) -> dict[str, tuple[float, float]]:
        return {"budget": (-_INF, _INF if sc.budget_usd is None else sc.budget_usd)}

    def unbounded(self, sc: Scenario) -> dict[str, Any]:
        return {"budget_usd": UNBOUNDED}

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        total = sum(v or 0.0 for v in (sol.cost_breakdown_pv or sol.cost_breakdown).values())
        objective = sol.objective_usd or 0.0
        out = []
        if abs(total - objective) > max(USD_TOLERANCE, REL_TOLERANCE * abs(total)):
            out.append(f"the cost breakdown sums to {total:.2f}, not the total {objective:.2f}")
        cost = max(total, objective)
        if sc.budget_usd is not None and cost > sc.budget_usd + max(USD_TOLERANCE, REL_TOLERANCE * sc.budget_usd):
            out.append(f"the plan costs ${cost:,.2f}, above the budget of ${sc.budget_usd:,.2f}")
        return out

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        budget = problem.workload.budget_usd
        if budget is None:
            return []
        total = sol.objective_usd or 0.0
        return [Slack(self.name, "budget", total, budget, budget - total, "USD", binds(budget - total, budget))]

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        budget, cost = problem.workload.budget_usd, free.objective_usd or 0.0
        return [Shortfall(self.name, "shortfall:budget", cost, budget)] if budget is not None and cost > budget else []

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        if sc.budget_usd is None:
            return None
        free = run(problem, sc.but(budget_usd=None))
        if not free.feasible:
            return None
        cost = free.objective_usd or 0.0
        need = math.ceil(cost) if exact else cost
        return Lever(self.name, "budget", {"budget_usd": need}, need, sc.budget_usd)

    def need(self, problem: Problem, plan: Solution) -> Need | None:
        budget, cost = problem.workload.budget_usd, plan.objective_usd or 0.0
        if budget is None or cost <= budget:
            return None
        need = math.ceil(cost)
        return Need(self.name, {"budget_usd": need}, {"budget_usd": need}, need)

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        return None if base.budget_usd is None else {"budget_usd": base.budget_usd}

    def lifted(self) -> dict[str, Any]:
        return {"budget_usd": None}

    def marginal(self, problem: Problem, sol: Solution, run: Run, slacks: list[Slack]) -> Marginal | None:
        budget = problem.workload.budget_usd
        mine = [s for s in slacks if s.family == self.name]
        if budget is None or not mine:
            return None
        s = run(problem, baseline(problem).but(budget_usd=budget * MARGIN))
        saving = max((sol.objective_usd or 0.0) - (s.objective_usd or 0.0) if s.feasible else 0.0, 0.0)
        return Marginal(self.name, "budget +10%", round(saving, 2), mine[0].binding, mine[0].slack)
