"""A plan's cost in a draw of speeds and prices: what the cost range, the decision and the value of
information price a plan at.

The first stage (GPUs bought, servers, fabric, the jobs' GPU types, counts and rental offers) is
kept as planned; a draw moves what it pays: what scales with the purchase price (the price with
its tax, the support on it, less the discounted resale: Model.per_price_usd) by the GPU's
purchase-price factor, the energy of owned jobs by 1 / speed (a slower GPU runs longer), and
rent by rental-rate factor / speed (training jobs and serving replicas alike: a GPU 10% faster
needs about 10% fewer GPU-hours). Servers, the network, storage, burn-in and hosting are not varied. At every factor 1
the cost is the plan's own present value (`total_cost_usd`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from advisor.explain.draws import Draws
from advisor.solve.model import Model
from advisor.solve.scenario import baseline

if TYPE_CHECKING:
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


@dataclass(frozen=True)
class PlanCost:
    """cost(draw) = fixed + sum_g buy[g] x b_g + energy[g] / s_g + rent[g] x r_g / s_g (present value)."""

    fixed: float
    buy: dict[str, float] = field(default_factory=dict)
    energy: dict[str, float] = field(default_factory=dict)
    rent: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, problem: Problem, sol: Solution) -> PlanCost:
        """The cost model of `sol`, which must be costed at the catalog's figures (a solve under price
        factors is brought back by explain/decision.at_catalog_figures)."""
        m = Model(problem, baseline(problem), [], [])
        buy: dict[str, float] = {}
        for g, n in sol.bought.items():
            upfront, held = m.per_price_usd(g)
            buy[g] = m.price(g) * (upfront * n + sum(held[lv] * k for lv, k in sol.held.get(g, {}).items()))
        energy: dict[str, float] = {}
        rent: dict[str, float] = {}
        for c, n in list(sol.assignment) + sol.paid_serving:
            into = rent if c.ownership == "rent" else energy
            into[c.gpu] = into.get(c.gpu, 0.0) + c.run_cost_usd * n
        total = float(sol.objective_usd or 0.0)
        fixed = total - sum(buy.values()) - sum(energy.values()) - sum(rent.values())
        return cls(fixed, buy, energy, rent)

    def gpus(self) -> set[str]:
        return set(self.buy) | set(self.energy) | set(self.rent)

    def at(self, draws: Draws) -> np.ndarray:
        """The cost in each draw (a GPU type the draws do not cover stays at its point figures)."""
        out = np.full(draws.n, self.fixed)
        for g in sorted(self.gpus()):
            if g not in draws.gpus:
                out += self.buy.get(g, 0.0) + self.energy.get(g, 0.0) + self.rent.get(g, 0.0)
                continue
            j = draws.column(g)
            inv = 1.0 / draws.speed[:, j]
            out += self.buy.get(g, 0.0) * draws.buy[:, j] + self.energy.get(g, 0.0) * inv
            out += self.rent.get(g, 0.0) * draws.rent[:, j] * inv
        return out

    @property
    def point(self) -> float:
        """The cost at every factor 1: the plan's own present value."""
        return self.fixed + sum(self.buy.values()) + sum(self.energy.values()) + sum(self.rent.values())
