"""gpu_count: the fleet's size within gpus.min / gpus.max (both gpus.count).

  gpu_count_min/max   sum_g N[g] + GPUs rented at once (jobs and replicas) within the bounds

For a single job the bounds also filter its candidates (Bounds: no candidate of more GPUs than
the maximum, nor of fewer than the minimum), which decides the model's columns. With several jobs
a floor (gpus.min or gpus.count) can be met by renting more GPUs at once, so a rented candidate on
more GPUs is not dominated by a cheaper one on fewer (`rented_counts`): the MILP chooses the
per-job counts that fill the fleet.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import pulp

from advisor.contract.facts import Lever, Shortfall, Slack, binds
from advisor.data.uncertainty import LogDist, rate_dist
from advisor.solve.constraints.base import UNBOUNDED, Family, Need, Run
from advisor.solve.reserved import copies_held, in_turn, pool_key, turns
from advisor.solve.scenario import Scenario
from advisor.solve.search import smallest_int

if TYPE_CHECKING:
    from advisor.data.catalog_figures import Confidence
    from advisor.data.catalog_prices import RentalOffer
    from advisor.solve.model import Model
    from advisor.solve.problem import Candidate, Problem
    from advisor.solve.solution import Solution

_INF = float("inf")

RentedCounts = Literal["fewer", "more", "same"]


def rented_counts(problem: Problem) -> RentedCounts:
    """Which GPU count of a rented candidate is as good as another's for the fleet's size (the
    count part of cost dominance, solve/usable.py): "fewer" (no more GPUs) unless several jobs
    share a fleet floor, which renting more GPUs at once helps to meet: then "more" (no fewer
    GPUs), or "same" when a ceiling bounds the fleet too. A single job's candidates are already
    filtered to the bounds (GpuCount.bounds), and owned ones count through N[g], which the MILP
    may raise on its own, so for them fewer GPUs stays as good."""
    sel = problem.workload.gpus
    if problem.job_count == 1 or sel.lower is None:
        return "fewer"
    return "more" if sel.upper is None else "same"


def copies_at_once(problem: Problem, c: Candidate, n: float) -> int:
    """How many of the `n` copies a rented column runs must hold their GPUs at the same time: all of
    them where the job has a deadline (each copy runs from its start, as the plan's times and the RFQ's
    dates assume), where the workload bounds the fleet (gpus.count, min or max: the gpu_count row counts
    every rented copy at once, so the count printed is the count bounded) or where each copy pays a
    minimum term longer than its run (unless the jobs share reserved nodes, solve/reserved.py: then the
    copies run in turn within the term); a job with no deadline runs its copies back to back over the
    horizon, as many side by side as that needs: 36 monthly fine-tunes of 8 GPUs rent 8 at a time, not 288."""
    held = copies_held(n)
    offer = problem.offer_of(c)
    term = offer.term_hours if offer is not None else None
    if term is not None and term > c.hours:
        return held if pool_key(problem, c) is None else math.ceil(held / turns(problem, c))
    return math.ceil(held / in_turn(problem, c))


def held_on(problem: Problem, sol: Solution, gpu: str, provider: str) -> int:
    """GPUs of `gpu` the plan rents at once on `provider`'s offers (held_counts)."""
    return held_counts(problem, sol).get((gpu, provider), 0)


def held_counts(problem: Problem, sol: Solution) -> dict[tuple[str, str], int]:
    """(GPU, provider) -> GPUs the plan rents there at once, as its purchase rows count them
    (solve/redraw.signature per provider): jobs' copies held at once, serving and bridge replicas. One
    pass: a ledger that asked held_on per candidate read a 1,000-job fleet a million times."""
    out: dict[tuple[str, str], int] = {}
    for c, n in sol.assignment:
        if c.ownership == "rent" and c.offer is not None:
            key = (c.gpu, c.offer.offer.provider)
            out[key] = out.get(key, 0) + c.count * copies_at_once(problem, c, float(n))
    for s, n in sol.serving + sol.bridges:
        if s.ownership == "rent" and s.offer is not None:
            key = (s.gpu, s.offer.offer.provider)
            out[key] = out.get(key, 0) + s.gpus * n
    return out


Held = Mapping[tuple[str, str], int]  # held_counts: (GPU, provider) -> GPUs held there at once


def held_at(offer: RentalOffer, c: Any, held: Held | None) -> int:
    """GPUs `held` at once on `offer`'s provider of candidate or layout c's GPU type (0: none given)."""
    return (held or {}).get((c.gpu, offer.provider), 0)


def held_grade(offer: RentalOffer, c: Any, held: Held | None) -> Confidence:
    """The grade of `offer`'s rate for rented candidate or layout c as the plan's rows print it: at c's
    order and the GPUs `held` at once on its provider (RentalOffer.confidence_at)."""
    return offer.confidence_at(c.order_gpus, held_at(offer, c, held))


def draw_band(offer: RentalOffer, c: Any) -> tuple[LogDist, str]:
    """The band a draw prices `offer`'s rate for candidate c in, whatever the GPUs held at once (held_rate):
    rate_dist at c's order (an order above the offer's evidence takes the low band's spread about its own
    grade's mean, not the low grade's band), and for an offer evidenced to a count held at once (a holding can
    move it alone to the low band) the offer itself. Offers drawn in different bands are not comparable on
    cost at catalog prices (review23a #6, review25a)."""
    most = offer.provider_evidenced
    return rate_dist(offer, c.order_gpus), "" if most is None else f"{offer.provider}/{offer.pricing}/{most[0]}"


def held_rate(offer: RentalOffer, c: Any, held: Held | None) -> LogDist:
    """The band a draw prices `offer`'s rate for c in, graded as held_grade: what every path that draws
    a plan's rents reads (the cost range, the robustness re-solves, the CVaR plan)."""
    return rate_dist(offer, c.order_gpus, held_at(offer, c, held))


def fleet_size(sol: Solution, gpu: str | None = None, problem: Problem | None = None) -> int:
    """GPUs bought, plus rented at once by the jobs and the serving replicas: every rented copy, as the
    row counts them (of type `gpu` only, if given: the stock row's); with `problem`, each job's copies
    as its purchase counts them (copies_at_once: a job with no deadline runs them in turn)."""

    def copies(c: Candidate, n: float) -> int:
        return copies_at_once(problem, c, n) if problem is not None else copies_held(n)

    mine = lambda g: gpu in (None, g)  # noqa: E731
    return (
        sum(n for g, n in sol.bought.items() if mine(g))
        + sum(c.count * copies(c, n) for c, n in sol.assignment if c.ownership == "rent" and mine(c.gpu))
        + sum(c.gpus * n for c, n in sol.serving if c.ownership == "rent" and mine(c.gpu))
        + sum(n for key, (n, _) in sol.serving_idle.items() if mine(key[0]))
    )


class GpuCount(Family):
    name = "gpu_count"

    def rows(self, m: Model) -> None:
        fleet = pulp.lpSum(m.N.values()) + m.rented_gpus()
        if m.sc.gpu_lower is not None:
            m.prob += fleet >= m.sc.gpu_lower, "gpu_count_min"
        if m.sc.gpu_upper is not None:
            m.prob += fleet <= m.sc.gpu_upper, "gpu_count_max"

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        if problem.job_count != 1:
            return {}
        return {"min_count": sc.gpu_lower, "max_count": sc.gpu_upper}

    def structure(self, problem: Problem, sc: Scenario) -> tuple:
        single = problem.job_count == 1
        return (sc.gpu_lower if single else None, sc.gpu_upper if single else None)

    def limits(self, sc: Scenario) -> dict[str, tuple[float, float]]:
        return {
            "gpu_count_min": (-_INF if sc.gpu_lower is None else sc.gpu_lower, _INF),
            "gpu_count_max": (-_INF, _INF if sc.gpu_upper is None else sc.gpu_upper),
        }

    def unbounded(self, sc: Scenario) -> dict[str, Any]:
        return {"gpu_lower": 0 if sc.gpu_lower is None else sc.gpu_lower, "gpu_upper": UNBOUNDED}

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        fleet, out = fleet_size(sol), []
        if sc.gpu_lower is not None and fleet < sc.gpu_lower - 1e-6:
            out.append(f"{fleet:g} GPUs, below the {sc.gpu_lower} asked for")
        if sc.gpu_upper is not None and fleet > sc.gpu_upper + 1e-6:
            out.append(f"{fleet:g} GPUs, above the {sc.gpu_upper} allowed")
        return out

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        sel, fleet = problem.workload.gpus, fleet_size(sol)
        if sel.count is not None:
            return [Slack(self.name, "gpu_count", fleet, sel.count, 0, "GPUs", True, facts={"exact": True})]
        out = []
        if sel.min is not None:
            out.append(
                Slack(
                    self.name,
                    "gpu_count_min",
                    fleet,
                    sel.min,
                    fleet - sel.min,
                    "GPUs",
                    binds(fleet - sel.min, sel.min, whole=True),
                    facts={"bound": "min"},
                )
            )
        if sel.max is not None:
            out.append(
                Slack(
                    self.name,
                    "gpu_count_max",
                    fleet,
                    sel.max,
                    sel.max - fleet,
                    "GPUs",
                    binds(sel.max - fleet, sel.max, whole=True),
                    facts={"bound": "max"},
                )
            )
        return out

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        n, upper = fleet_size(free), problem.workload.gpus.upper
        return [Shortfall(self.name, "shortfall:gpu_count", n, upper)] if upper is not None and n > upper else []

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        if sc.gpu_upper is None:
            return None
        free = run(problem, sc.but(gpu_upper=None))
        if not free.feasible:
            return None
        n = smallest_int(lambda u: run(problem, sc.but(gpu_upper=u)).feasible, sc.gpu_upper, fleet_size(free))
        wl = problem.workload
        return Lever(
            self.name,
            "gpu_count",
            {"gpus.max": n},
            n,
            sc.gpu_upper,
            facts={
                "field": "gpus.count" if wl.gpus.count is not None else "gpus.max",
                "exact": wl.gpus.count is not None,
                "deadlines": any(c.deadline for c in problem.classes),
            },
        )

    def need(self, problem: Problem, plan: Solution) -> Need | None:
        n, upper = fleet_size(plan), problem.workload.gpus.upper
        if upper is None or n <= upper:
            return None
        return Need(self.name, {"gpu_upper": n}, {"gpus.max": n}, n)

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        return None if base.gpu_upper is None else {"gpu_upper": base.gpu_upper}

    def lifted(self) -> dict[str, Any]:
        return {"gpu_upper": None}
