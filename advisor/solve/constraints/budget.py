"""budget: the plan's cost within `budget_usd`: the nominal cash paid over the horizon (purchases,
servers, network, energy, hosting, rental; resale is not cash in hand), or its present value with
`budget_basis: present_value`. Compared at the precision money is printed with: a budget equal to a
plan's printed total (to the cent, half up) admits that plan; a budget written between cents (9696.079)
admits no plan above it, though the plan's $9,696.08 and the budget print alike.

  budget   cash (or present value) <= cap(budget_usd): the budget, or its whole cents + half a cent
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Marginal, Shortfall, Slack, binds
from advisor.contract.numbers import whole_cents
from advisor.solve.constraints.base import UNBOUNDED, Family, Need, Rebuild, Run
from advisor.solve.scenario import Scenario, baseline

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution

_INF = float("inf")
HALF_CENT = 0.005 - 1e-6  # printed totals are rounded to the cent, half up: x prints as at most B iff x < B + 0.005
USD_TOLERANCE = 0.01  # a cent: HiGHS meets a row to ~1e-6 relative
USD_EPSILON = 1e-6  # a budget between cents admits a plan at it, exactly (the solver's own figure)
REL_TOLERANCE = 1e-7
MARGIN = 1.1  # the marginal value of budget: 10% more


_BASIS = {"cash": "cash", "present_value": "present value"}


def cap(budget: float) -> float:
    """The most a plan may spend against `budget`: for a budget in whole cents every figure that prints
    as it (up to half a cent more); a budget between cents is no higher than written, exactly ($37,930.209
    admits no plan of $37,930.2099, $5.1511 none of $5.1517)."""
    return round(budget, 2) + HALF_CENT if whole_cents(budget) else budget + USD_EPSILON


class Budget(Family):
    name = "budget"

    def rows(self, m: Model) -> None:
        if m.sc.budget_usd is not None:
            cost = m.cash if m.sc.budget_basis == "cash" else m.total
            m.prob += cost <= cap(m.sc.budget_usd), "budget"

    def structure(self, problem: Problem, sc: Scenario) -> tuple:
        return (sc.budget_basis,)

    def limits(self, sc: Scenario) -> dict[str, tuple[float, float]]:
        return {"budget": (-_INF, _INF if sc.budget_usd is None else cap(sc.budget_usd))}

    def unbounded(self, sc: Scenario) -> dict[str, Any]:
        return {"budget_usd": UNBOUNDED}

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        total = sum(v or 0.0 for v in (sol.cost_breakdown_pv or sol.cost_breakdown).values())
        objective = sol.objective_usd or 0.0
        out = []
        if abs(total - objective) > max(USD_TOLERANCE, REL_TOLERANCE * abs(total)):
            out.append(f"the cost breakdown sums to {total:.2f}, not the total {objective:.2f}")
        cost = max(total, objective) if sc.budget_basis == "present_value" else sol.cash_usd
        if sc.budget_usd is not None and cost > sc.budget_usd + max(USD_TOLERANCE, REL_TOLERANCE * sc.budget_usd):
            out.append(
                f"the plan costs ${cost:,.2f} ({_BASIS[sc.budget_basis]}), above the budget of ${sc.budget_usd:,.2f}"
            )
        return out

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        wl = problem.workload
        if wl.budget_usd is None:
            return []
        used = sol.cost(wl.budget_basis)
        return [
            Slack(
                self.name,
                "budget",
                used,
                wl.budget_usd,
                wl.budget_usd - used,
                "USD",
                binds(wl.budget_usd - used, wl.budget_usd),
                facts={"basis": wl.budget_basis},
            )
        ]

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        wl = problem.workload
        cost = free.cost(wl.budget_basis)
        if wl.budget_usd is None or cost <= wl.budget_usd:
            return []
        return [Shortfall(self.name, "shortfall:budget", cost, wl.budget_usd, facts={"basis": wl.budget_basis})]

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        if sc.budget_usd is None:
            return None
        free = run(problem, sc.but(budget_usd=None))
        if not free.feasible:
            return None
        cost = free.cost(sc.budget_basis)
        need = math.ceil(cost) if exact else cost
        facts = {"basis": sc.budget_basis, "cost": cost}  # (the cheapest plan's own cost: the budget's share of it)
        return Lever(self.name, "budget", {"budget_usd": need}, need, sc.budget_usd, facts=facts)

    def need(self, problem: Problem, plan: Solution) -> Need | None:
        wl = problem.workload
        cost = plan.cost(wl.budget_basis)
        if wl.budget_usd is None or cost <= wl.budget_usd:
            return None
        need = math.ceil(cost)
        return Need(self.name, {"budget_usd": need}, {"budget_usd": need}, need)

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        return None if base.budget_usd is None else {"budget_usd": base.budget_usd}

    def lifted(self) -> dict[str, Any]:
        return {"budget_usd": None}

    def marginal(
        self, problem: Problem, sol: Solution, run: Run, slacks: list[Slack], rebuild: Rebuild | None = None
    ) -> Marginal | None:
        budget = problem.workload.budget_usd
        mine = [s for s in slacks if s.family == self.name]
        if budget is None or not mine:
            return None
        s = run(problem, baseline(problem).but(budget_usd=budget * MARGIN))
        saving = max((sol.objective_usd or 0.0) - (s.objective_usd or 0.0) if s.feasible else 0.0, 0.0)
        return Marginal(self.name, "budget +10%", round(saving, 2), mine[0].binding, mine[0].slack)
