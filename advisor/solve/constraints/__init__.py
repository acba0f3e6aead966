"""The constraint families of the MILP, one module each, in docs/model.md's order; every loop over
constraints (the model's rows, the check of a plan, the binding table, the diagnosis, the fast
path's shared models, the candidates a solve may use) is a loop over FAMILIES."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.solve.constraints.assignment import Assignment
from advisor.solve.constraints.base import Bounds, Family
from advisor.solve.constraints.bridge import Bridge
from advisor.solve.constraints.budget import Budget
from advisor.solve.constraints.capacity import Capacity
from advisor.solve.constraints.deadline import Deadline
from advisor.solve.constraints.gpu_count import GpuCount
from advisor.solve.constraints.horizon import Horizon
from advisor.solve.constraints.lead_time import LeadTime
from advisor.solve.constraints.network import Network
from advisor.solve.constraints.power import Power
from advisor.solve.constraints.reservation import Reservation
from advisor.solve.constraints.serving import Serving
from advisor.solve.constraints.slots import Slots
from advisor.solve.constraints.stock import Stock
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.contract.facts import Slack
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution

# rows in this order (the model's rows are built in it); the families with no row of their own (lead
# time, deadline, horizon: their limits filter the candidates) come last, the lead time first, so the
# limits and delays that make a GPU type miss a deadline -- GPU count, power, budget, lead time -- are
# named before the deadline itself
FAMILIES: tuple[Family, ...] = (
    Assignment(),
    Capacity(),
    Serving(),
    Bridge(),
    Slots(),
    Network(),
    Stock(),
    GpuCount(),
    Power(),
    Budget(),
    Reservation(),
    LeadTime(),
    Deadline(),
    Horizon(),
)
UPPER = ("planned_hours", "hours", "max_count")  # Bounds fields where the tightest is the least
LOWER = ("min_count",)  # ... and where it is the greatest


def bounds(problem: Problem, sc: Scenario, k: int) -> Bounds:
    """What class k's candidates must meet under `sc`: every family's part."""
    merged: dict[str, Any] = {}
    for family in FAMILIES:
        for key, value in family.bounds(problem, sc, k).items():
            if value is None:
                continue
            if key in merged and key in UPPER:
                value = min(merged[key], value)
            elif key in merged and key in LOWER:
                value = max(merged[key], value)
            merged[key] = value
    return Bounds(**merged)


def structure_key(problem: Problem, sc: Scenario) -> tuple:
    """What of `sc` decides the model's rows and columns (the rest are coefficients and bounds)."""
    return tuple(part for family in FAMILIES for part in family.structure(problem, sc))


def limit_rows(sc: Scenario) -> dict[str, tuple[float, float]]:
    """Row name -> the right-hand side `sc` sets on the rows the fast path builds unbounded."""
    out: dict[str, tuple[float, float]] = {}
    for family in FAMILIES:
        out.update(family.limits(sc))
    return out


def unbounded(sc: Scenario) -> Scenario:
    """The scenario a shared model is built under: every optional row present with an unbounded
    right-hand side, prices at catalog values, every GPU type."""
    changes: dict[str, Any] = {
        "only_gpu": None,
        "ownership": None,
        "price_factor": {},
        "rent_factor": {},
        "buy_factor": {},
    }
    for family in FAMILIES:
        changes.update(family.unbounded(sc))
    return sc.but(**changes)


def slacks(problem: Problem, sol: Solution) -> list[Slack]:
    """Every constraint of a finished plan with its slack and binding flag (contract/facts.binds),
    measured on the quantity its rows constrain."""
    return [s for family in FAMILIES for s in family.slack(problem, sol)] if sol.feasible else []
