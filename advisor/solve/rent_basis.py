"""The rental a bought fleet's break-even is priced against (solve/ownership_terms.break_even): an
offer that can carry the fleet's jobs as the MILP would rent them, not the catalog's cheapest listing
of the type (a one-GPU pod with no fabric cannot run a 64-GPU job). First the offer the plan's own
'Renting instead' re-solve rents the type on (explain/other_ownership.py), so the two lines agree;
else, for the largest job (or serving replica) the fleet runs, the cheapest offer among that job's
rented columns on the type in a problem that may rent (solve/candidates.py has checked their node
size and fabric, rent kinds and the rules, and preferred one within its largest order); else none, and why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from advisor.data.catalog_prices import RentalOffer
from advisor.solve.problem import Problem
from advisor.solve.solution import Solution


@dataclass(frozen=True)
class RentBasis:
    """The offer (None: no rental can run the fleet's jobs) and, in words, where it comes from or why
    there is none."""

    offer: RentalOffer | None
    why: str


@dataclass(frozen=True)
class RentedInstead:
    """The plan's 'Renting instead' re-solve: the problem it solved (one that may rent) and its solution."""

    problem: Problem
    found: Solution


def rent_basis(
    problem: Problem, sol: Solution, gpu: str, instead: RentedInstead | None, renting: Callable[[], Problem]
) -> RentBasis:
    """What renting `gpu`'s bought fleet is priced at. `instead`: the re-solve with every GPU rented
    (None: not made); `renting`: a problem that may rent, built only when needed."""
    if instead is not None:
        if not instead.found.feasible:
            return RentBasis(None, "no plan renting every GPU meets the same limits (see Renting instead)")
        offers = instead.found.rented_offers(gpu)
        if offers:
            return RentBasis(offers[0], "the offer the plan renting every GPU rents them on (Renting instead)")
    there = instead.problem if instead is not None else problem if _rents(problem) else renting()
    return _cheapest_carrying(problem, sol, gpu, there)


def _rents(problem: Problem) -> bool:
    return "rent" in problem.workload.deployment.ownerships


def _cheapest_carrying(problem: Problem, sol: Solution, gpu: str, there: Problem) -> RentBasis:
    """The cheapest offer (on demand first) among the rented columns of the fleet's largest job or
    replica in `there`, the same job on as many GPUs of the type."""
    units = [(c.count, "job", c.cls, c.count) for c, _ in sol.assignment if c.gpu == gpu and c.ownership == "buy"]
    units += [(c.gpus, "serve", c.cls, (c.tp, c.pp)) for c, _ in sol.serving if c.gpu == gpu and c.ownership == "buy"]
    if not units:
        return RentBasis(None, "the plan runs nothing on them")
    count, what, cls, shape = max(units, key=lambda u: (u[0], u[1], u[2]))
    if what == "job":
        cols = [c.offer for c in there.candidates[cls] if c.gpu == gpu and c.ownership == "rent" and c.count == shape]
        name = f"the job '{problem.classes[cls].name(problem.workload)}'"
    else:
        cols = [
            c.offer
            for c in there.serve_candidates[cls]
            if c.gpu == gpu and c.ownership == "rent" and (c.tp, c.pp) == shape
        ]
        name = f"a serving replica of {problem.serve_classes[cls].name}"
    offers = [o.offer for o in cols if o is not None]
    if not offers:
        return RentBasis(
            None,
            f"no rental offer of the type can run {name} on {count} GPUs (each is ruled out by its node size and "
            "fabric, the rent kinds allowed or the rules)",
        )
    best = min(offers, key=lambda o: (o.pricing != "on_demand", o.usd_per_gpu_hour, o.provider))
    return RentBasis(best, f"the cheapest offer that can run {name} on {count} GPUs")
