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
from advisor.economics.rental import fabric_fit
from advisor.solve.problem import Candidate, Problem, ServeCandidate
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
    unit = _largest(problem, sol, gpu)
    if unit is None:
        return RentBasis(None, "the plan runs nothing on them")
    if instead is not None:
        if not instead.found.feasible:
            return RentBasis(None, "no plan renting every GPU meets the same limits (see Renting instead)")
        # the re-solve may rent the type only for a smaller job, on an offer that cannot carry this one
        offers = [o for o in instead.found.rented_offers(gpu) if fabric_fit(o, unit.count).carries]
        if offers:
            return RentBasis(offers[0], "the offer the plan renting every GPU rents them on (Renting instead)")
    there = instead.problem if instead is not None else problem if _rents(problem) else renting()
    return _cheapest_carrying(gpu, unit, there)


def _rents(problem: Problem) -> bool:
    return "rent" in problem.workload.deployment.ownerships


@dataclass(frozen=True)
class _Unit:
    """The fleet's largest job (or serving replica): its GPUs, class and shape, in words."""

    count: int
    serves: bool
    cls: int
    shape: int | tuple[int, int]  # a job's GPU count, or a replica's (tp, pp)
    name: str


def _largest(problem: Problem, sol: Solution, gpu: str) -> _Unit | None:
    wl = problem.workload
    units = [
        _Unit(c.count, False, c.cls, c.count, f"the job '{problem.classes[c.cls].name(wl)}'")
        for c, _ in sol.assignment
        if c.gpu == gpu and c.ownership == "buy"
    ]
    units += [
        _Unit(c.gpus, True, c.cls, (c.tp, c.pp), f"a serving replica of {problem.serve_classes[c.cls].name}")
        for c, _ in sol.serving
        if c.gpu == gpu and c.ownership == "buy"
    ]
    return max(units, key=lambda u: (u.count, u.serves, u.cls), default=None)


def _cheapest_carrying(gpu: str, unit: _Unit, there: Problem) -> RentBasis:
    """The cheapest offer (on demand first) among the rented columns of `unit` in `there`: the same
    job (or replica layout) on as many GPUs of the type, as the MILP would rent it."""
    if unit.serves:
        cands: list[Candidate | ServeCandidate] = [
            c for c in there.serve_candidates[unit.cls] if (c.tp, c.pp) == unit.shape
        ]
    else:
        cands = [c for c in there.candidates[unit.cls] if c.count == unit.shape]
    offers = [c.offer.offer for c in cands if c.gpu == gpu and c.ownership == "rent" and c.offer is not None]
    gpus = f"{unit.count} GPU{'s' if unit.count != 1 else ''}"
    if not offers:
        return RentBasis(
            None,
            f"no rental offer of the type can run {unit.name} on {gpus} (each is ruled out by its node size "
            "and fabric, the rent kinds allowed or the rules)",
        )
    best = min(offers, key=lambda o: (o.pricing != "on_demand", o.usd_per_gpu_hour, o.provider))
    return RentBasis(best, f"the cheapest offer that can run {unit.name} on {gpus}")
