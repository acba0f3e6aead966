"""stock: at most the GPUs a workload says are available of a type (gpus.stock).

stock_g   N[g] <= stock[g]       and no candidate rents more than stock[g] at once (its Bounds)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Slack, binds
from advisor.solve.constraints.base import Family
from advisor.solve.rows import safe
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


class Stock(Family):
    name = "stock"

    def rows(self, m: Model) -> None:
        for g, limit in sorted((m.problem.workload.gpus.stock or {}).items()):
            if g in m.N:
                m.prob += m.N[g] <= limit, f"stock_{safe(g)}"

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        stock = problem.workload.gpus.stock
        return {"max_count_of": dict(stock)} if stock else {}

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        stock = problem.workload.gpus.stock or {}
        out = [
            f"{n} {g} bought, above the stock of {stock[g]}"
            for g, n in sol.bought.items()
            if g in stock and n > stock[g]
        ]
        out += [
            f"{c.count} {c.gpu} rented at once, above the stock of {stock[c.gpu]}"
            for c, _ in sol.assignment
            if c.ownership == "rent" and c.gpu in stock and c.count > stock[c.gpu]
        ]
        return out

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        out = []
        for gid, limit in sorted((problem.workload.gpus.stock or {}).items()):
            if gid in sol.gpu_types():
                used = sol.bought.get(gid, 0)
                out.append(
                    Slack(
                        self.name,
                        f"stock:{gid}",
                        used,
                        limit,
                        limit - used,
                        "GPUs",
                        binds(limit - used, limit, whole=True),
                        facts={"gpu": gid},
                    )
                )
        return out
