"""power: the owned hardware's draw within the power limit in force (the workload's
`deployment.power_limit_kw`, else a `limit` rule's default for the deployment: the office circuit
of its region, PWR001-PWR014, e.g. PWR001's 1.44 kW US circuit, PWR002's 2.3 kW Schuko socket).

  power   kW of owned GPUs and their servers <= the limit
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Shortfall, Slack, binds
from advisor.data.rules import RuleSet, deployment_context
from advisor.inputs.workload import Workload
from advisor.solve.constraints.base import UNBOUNDED, Family, Need, Run
from advisor.solve.problem import PowerLimit
from advisor.solve.scenario import Scenario
from advisor.solve.search import smallest

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution

_INF = float("inf")
KW_TOLERANCE = 1e-3


def power_limit(workload: Workload, rules: RuleSet, as_of: dt.date) -> PowerLimit | None:
    """The workload's own `deployment.power_limit_kw`; else the smallest power_kw any limit rule
    in force sets for this deployment; else none."""
    d = workload.deployment
    if d.power_limit_kw is not None:
        return PowerLimit(d.power_limit_kw, None, "deployment.power_limit_kw in the workload")
    found = [lim for lim in rules.limits({"deployment": deployment_context(d)}, as_of) if lim.limit == "power_kw"]
    if not found:
        return None
    lim = min(found, key=lambda lim: (lim.value, lim.rule))
    return PowerLimit(lim.value, lim.rule, lim.message)


def owned_kw(problem: Problem, sol: Solution) -> float:
    """kW drawn by the bought GPUs and their servers (the `power` row's left-hand side)."""
    kw = sum(problem.gpu_kw[g] * n for g, n in sol.bought.items())
    for g, servers in sol.servers.items():
        opts = {s.id: s for s in problem.servers.get(g, [])}
        kw += sum(opts[sid].overhead_kw * n for sid, n in servers.items())
    return kw


class Power(Family):
    name = "power"

    def rows(self, m: Model) -> None:
        if m.sc.power_limit_kw is not None and m.owned:
            m.prob += m.kw <= m.sc.power_limit_kw, "power"

    def limits(self, sc: Scenario) -> dict[str, tuple[float, float]]:
        return {"power": (-_INF, _INF if sc.power_limit_kw is None else sc.power_limit_kw)}

    def unbounded(self, sc: Scenario) -> dict[str, Any]:
        return {"power_limit_kw": UNBOUNDED}

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        if sc.power_limit_kw is None or not sol.bought:
            return []
        kw = owned_kw(problem, sol)
        if kw > sc.power_limit_kw + max(KW_TOLERANCE, 1e-7 * sc.power_limit_kw):
            return [f"owned hardware draws {kw:.6g} kW, above the {sc.power_limit_kw:g} kW limit"]
        return []

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        if problem.power_limit is None:
            return []
        kw, limit = owned_kw(problem, sol), problem.power_limit.kw
        return [
            Slack(
                self.name,
                "power",
                kw,
                limit,
                limit - kw,
                "kW",
                binds(limit - kw, limit),
                rule=problem.power_limit.rule,
                facts={"origin": problem.power_limit.message},
            )
        ]

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        kw, lim = owned_kw(problem, free), problem.power_limit
        if lim is None or kw <= lim.kw:
            return []
        return [Shortfall(self.name, "shortfall:power", kw, lim.kw, facts={"rule": lim.rule, "origin": lim.message})]

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        if sc.power_limit_kw is None:
            return None
        free = run(problem, sc.but(power_limit_kw=None))
        if not free.feasible:
            return None
        need = (
            smallest(
                lambda kw: run(problem, sc.but(power_limit_kw=kw)).feasible, sc.power_limit_kw, sc.power_limit_kw * 2
            )
            if exact
            else owned_kw(problem, free)
        )
        lim = problem.power_limit
        return Lever(
            self.name,
            "power",
            {"power_limit_kw": round(need, 2)},
            need,
            sc.power_limit_kw,
            rule=lim.rule if lim else None,
            facts={"free_kw": owned_kw(problem, free), "origin": lim.message if lim else None},
        )

    def need(self, problem: Problem, plan: Solution) -> Need | None:
        kw = owned_kw(problem, plan)
        if problem.power_limit_kw is None or kw <= problem.power_limit_kw:
            return None
        need_kw = round(kw + 0.005, 2)
        return Need(self.name, {"power_limit_kw": need_kw}, {"power_limit_kw": need_kw}, need_kw)

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        return None if base.power_limit_kw is None else {"power_limit_kw": base.power_limit_kw}

    def lifted(self) -> dict[str, Any]:
        return {"power_limit_kw": None}
