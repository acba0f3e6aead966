"""A plan's cost in a draw of speeds and prices: what the cost range, the decision and the value of
information price a plan at.

The first stage (GPUs bought, servers, fabric, the jobs' GPU types, counts and rental offers) is
kept as planned; a draw moves what it pays: what scales with the purchase price (the price with
its tax, the support on it, less the discounted resale: Model.per_price_usd) by the GPU's
purchase-price factor, the energy of owned jobs by 1 / speed (a slower GPU runs longer), and each
rented job or serving replica by its offer's rate factor (data/uncertainty.rate_dist: the offer the
plan rents, not the GPU type's cheapest listing) times what it bills at the drawn speed
(Candidate.run_cost_scale: 1 / speed by the hour, a commitment billed in full unchanged while the
job still fits in it). A job measured by the user on its GPU and count draws its speed within the
measurement's spread (explain/draws.estimate_speed), and a serving replica its throughput within the
serving model's error, or its measurement's spread where the user measured it (explain/draws.replica_speed),
both at its GPU type's speed normal. Servers, the network,
storage, burn-in and hosting are not varied. At every factor 1 the cost is the plan's own present
value (`total_cost_usd`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.data.uncertainty import LogDist, rate_dist
from advisor.explain.draws import Draws, estimate_speed, replica_speed
from advisor.solve.constraints.gpu_count import Held, held_counts, held_rate
from advisor.solve.model import Model
from advisor.solve.rental_offers import rent_offers
from advisor.solve.reserved import paid_training
from advisor.solve.scenario import baseline

if TYPE_CHECKING:
    from advisor.solve.problem import Candidate, Problem
    from advisor.solve.solution import Solution


@dataclass(frozen=True)
class RunTerm:
    """One job class's (or serving layout's) run cost in a plan, present value at the estimate and the
    catalog rate, and what a draw moves it by."""

    gpu: str
    usd: float
    rented: bool
    rate: LogDist | None = None  # the rented offer's rate band (None: the GPU type's drawn rent)
    speed: LogDist | None = None  # a measurement's spread, or a replica's throughput error (None: the type's speed)
    cand: Candidate | None = None  # a training job: what it bills at a speed (None: 1 / speed)
    provider: str | None = None  # the rented offer's provider (None: bought)

    def scale(self, speed: np.ndarray) -> np.ndarray:
        """Its run cost at each drawn speed / as planned."""
        return self.cand.run_cost_scale(speed) if self.cand is not None else 1.0 / speed

    def speeds(self, draws: Draws) -> np.ndarray:
        if self.speed is not None:
            return draws.factors(self.speed, self.gpu, "speed")
        return draws.speed[:, draws.column(self.gpu)]

    def rates(self, draws: Draws) -> np.ndarray:
        if not self.rented:
            return np.ones(draws.n)
        if self.rate is not None and draws.rent_z is not None:
            return draws.factors(self.rate, self.gpu, "rent")
        return draws.rent[:, draws.column(self.gpu)]

    def at(self, draws: Draws) -> np.ndarray:
        """Its cost in each draw."""
        return self.usd * self.rates(draws) * self.scale(self.speeds(draws))


def run_term(problem: Problem, c: Any, n: float, held: Held | None = None) -> RunTerm:
    """The run cost of `n` copies of candidate (or serving layout) c as a RunTerm (`held`: the GPUs the
    plan holds at once per (GPU, provider), solve/constraints/gpu_count.held_counts, which its offer's
    rate must be evidenced at too)."""
    rented = c.ownership == "rent"
    opt = getattr(c, "offer", None)
    training = hasattr(c, "estimate")
    measured = training and getattr(c.estimate, "speed_spread", None) is not None
    return RunTerm(
        c.gpu,
        c.run_cost_usd * n,
        rented,
        held_rate(opt.offer, c, held) if rented and opt is not None else None,
        estimate_speed(problem, c) if measured else (None if training else replica_speed(problem, c)),
        c if training else None,
        opt.offer.provider if rented and opt is not None else None,
    )


@dataclass(frozen=True)
class PlanCost:
    """cost(draw) = fixed + sum_g buy[g] x b_g + sum of its run terms, each at its rate and speed
    (present value)."""

    fixed: float
    buy: dict[str, float] = field(default_factory=dict)
    terms: tuple[RunTerm, ...] = ()

    @classmethod
    def of(cls, problem: Problem, sol: Solution) -> PlanCost:
        """The cost model of `sol`, which must be costed at the catalog's figures (a solve under price
        factors is brought back by explain/decision.at_catalog_figures)."""
        m = Model(problem, baseline(problem), [], [])
        buy: dict[str, float] = {}
        for g, n in sol.bought.items():
            upfront, held = m.per_price_usd(g)
            buy[g] = m.price(g) * (upfront * n + sum(held[lv] * k for lv, k in sol.held.get(g, {}).items()))
        paid = paid_training(problem, sol.assignment) + sol.paid_serving
        at_once = held_counts(problem, sol)
        terms = tuple(run_term(problem, c, n, at_once) for c, n in paid)
        total = float(sol.objective_usd or 0.0)
        fixed = total - sum(buy.values()) - sum(t.usd for t in terms)
        return cls(fixed, buy, terms)

    @property
    def energy(self) -> dict[str, float]:
        """Per GPU type, the run cost of its owned jobs (energy) at the estimate."""
        return self._run(rented=False)

    @property
    def rent(self) -> dict[str, float]:
        """Per GPU type, the run cost of its rented jobs and replicas at the estimate and catalog rates."""
        return self._run(rented=True)

    def _run(self, rented: bool) -> dict[str, float]:
        out: dict[str, float] = {}
        for t in self.terms:
            if t.rented == rented:
                out[t.gpu] = out.get(t.gpu, 0.0) + t.usd
        return out

    def gpus(self) -> set[str]:
        return set(self.buy) | {t.gpu for t in self.terms}

    def at(self, draws: Draws) -> np.ndarray:
        """The cost in each draw (a GPU type the draws do not cover stays at its point figures)."""
        out = np.full(draws.n, self.fixed)
        for g in sorted(self.buy):
            out += self.buy[g] * (draws.buy[:, draws.column(g)] if g in draws.gpus else 1.0)
        for t in self.terms:
            out += t.at(draws) if t.gpu in draws.gpus else t.usd
        return out

    @property
    def point(self) -> float:
        """The cost at every factor 1: the plan's own present value."""
        return self.fixed + sum(self.buy.values()) + sum(t.usd for t in self.terms)


def offer_bands(problem: Problem, gpus: Collection[str]) -> dict[tuple[str, str], LogDist]:
    """The rate band of every rental offer of the GPU types `gpus` the problem's candidates (jobs' and
    replicas') rent on, by (GPU, provider): what the expected basis re-solves each offer at
    (explain/draws.Prices; other types at their type-wide factor)."""
    return {k: rate_dist(o) for k, o in rent_offers(problem).items() if k[0] in gpus}
