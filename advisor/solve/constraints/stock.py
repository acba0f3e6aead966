"""stock: at most the GPUs a workload says are available of a type (gpus.stock: bought or rented).

stock_g   N[g] + GPUs of g rented at once (jobs and replicas) <= stock[g]   and no candidate rents
          more than stock[g] at once (its Bounds)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Slack, binds
from advisor.solve.constraints.base import Family
from advisor.solve.constraints.gpu_count import fleet_size
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
            held = m.rented_gpus(g) + (m.N[g] if g in m.N else 0)
            if len(held):  # (a type with no column holds nothing)
                m.prob += held <= limit, f"stock_{safe(g)}"

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        stock = problem.workload.gpus.stock
        return {"max_count_of": dict(stock)} if stock else {}

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        stock = problem.workload.gpus.stock or {}
        return [
            f"{fleet_size(sol, g)} {g} bought or rented at once, above the stock of {limit}"
            for g, limit in sorted(stock.items())
            if fleet_size(sol, g) > limit
        ]

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        out = []
        for gid, limit in sorted((problem.workload.gpus.stock or {}).items()):
            if gid in sol.gpu_types():
                used = fleet_size(sol, gid)
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
