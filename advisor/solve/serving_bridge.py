"""The bridge: bought serving GPUs serve once they arrive (the purchase's lead time, then burn-in:
Problem.arrival), so until then the replicas up, rented bridges among them, must hold the peak
(docs/model.md, serving).

Per request class k and arrival time A > 0 of some bought GPU types (their lead time, then burn-in;
types arriving together share a bridge), for each of the class's rented layouts j (less those another of
its GPU type beats), a bridge layout: j rented for A hours, at j's own rate (its cash over the serving hours
x A_g / those hours; present value as a stream over A_g). The rows (solve/constraints/bridge.py) ask, in
each window before an arrival, that the serving replicas up by then and the bridges still running hold
the peak with any one down, as the plan check does. This module is the one place a bridge's price is
computed (`bridge_layout`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from advisor.economics.ownership import stream_factor
from advisor.inputs.units import HOURS_PER_YEAR
from advisor.solve.problem import Problem, ServeCandidate
from advisor.solve.rows import safe
from advisor.solve.scenario import Scenario
from advisor.solve.serving_nodes import bill_key, bill_name, block_gpus, serving_node_offers

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.redraw_serving import Draw


def waits(problem: Problem, k: int) -> bool:
    """Does class k's job say it launches when its bought GPUs arrive (`until_arrival: wait`)?"""
    job = problem.workload.jobs[problem.serve_classes[k].job]
    return getattr(job, "until_arrival", "rent") == "wait"


def serving_allowed(problem: Problem, sc: Scenario, c: ServeCandidate) -> bool:
    """May a solve under `sc` use layout c (its GPU type, ownership and the stock)?"""
    stock = problem.workload.gpus.stock or {}
    return sc.only_gpu in (None, c.gpu) and sc.ownership in (None, c.ownership) and c.gpus <= stock.get(c.gpu, math.inf)


def late_types(problem: Problem, layouts: list[ServeCandidate]) -> list[str]:
    """The bought GPU types among `layouts` that arrive after today, in order."""
    return sorted(
        {
            c.gpu
            for c in layouts
            if c.ownership == "buy" and c.gpu in problem.arrival and problem.arrival[c.gpu].hours > 0
        }
    )


def arrival_groups(problem: Problem, layouts: list[ServeCandidate]) -> dict[float, tuple[str, ...]]:
    """Hours to arrival -> the late bought GPU types among `layouts` that arrive then: one bridge
    stands in for all of them (their replicas arrive together)."""
    out: dict[float, list[str]] = {}
    for g in late_types(problem, layouts):
        out.setdefault(problem.arrival[g].hours, []).append(g)
    return {hours: tuple(types) for hours, types in sorted(out.items())}


def bridge_layout(problem: Problem, c: ServeCandidate, hours: float, types: tuple[str, ...]) -> ServeCandidate:
    """Rented layout c serving for bought GPU types `types` for the `hours` until they arrive: c at its
    own rate, the cash c pays per hour (whole nodes are billed by the rows, as for serving), the present
    value as a stream paid from today. The one place a bridge is priced."""
    cash_per_hour = (c.run_cost_usd if c.run_cost_nominal is None else c.run_cost_nominal) / c.hours
    cash = cash_per_hour * hours
    pv = cash * stream_factor(hours / HOURS_PER_YEAR, problem.costs.discount_rate)
    return dataclasses.replace(c, hours=hours, run_cost_usd=pv, run_cost_nominal=cash, warnings=[], bridges=types)


def by_the_gpu(c: ServeCandidate) -> bool:
    """Is layout c rented one GPU at a time (its offer sells no whole nodes, no minimum block)?"""
    offer = c.offer.offer if c.offer is not None else None
    return offer is None or max(block_gpus(offer), offer.min_gpus) == 1


def beaten(
    problem: Problem, layouts: list[ServeCandidate], rates: list[float], costs: list[float] | None
) -> list[bool]:
    """Per bridge layout, is it never needed: another has a counted rate no lower and either is of its
    GPU type on no more GPUs, or (given `costs`) costs no more by the hour with both rented by the GPU
    (swapping its replicas for the other's keeps every bridge row, the nodes billed and the spare; ties:
    the first). The first rule holds at any price and speed draw, the second only at the prices given."""
    single = [costs is not None and by_the_gpu(b) for b in layouts]

    def beats(o: int, j: int) -> bool:
        if o == j or rates[o] < rates[j]:
            return False
        if layouts[o].gpu == layouts[j].gpu and layouts[o].gpus <= layouts[j].gpus:
            return (rates[o], -layouts[o].gpus) != (rates[j], -layouts[j].gpus) or o < j
        if not (single[o] and single[j]) or costs is None or costs[o] > costs[j]:
            return False
        return (rates[o], -costs[o]) != (rates[j], -costs[j]) or o < j

    return [any(beats(o, j) for o in range(len(layouts))) for j in range(len(layouts))]


def bridge_columns(m: Model) -> Iterator[tuple[int, float, list[ServeCandidate]]]:
    """(class, hours to arrival, the bridge layouts: each names the late bought types it stands in for) for every class
    that may be bridged: it has rented layouts too and its job does not wait for the arrival."""
    for k, cs in enumerate(m.scands):
        rented = [c for c in cs if c.ownership == "rent"]
        if not rented or waits(m.problem, k):
            continue
        for hours, types in arrival_groups(m.problem, cs).items():
            layouts = [bridge_layout(m.problem, c, hours, types) for c in rented]
            # at the scenario's prices; a model redrawn at other prices keeps each GPU type's best, and each
            # draw bounds the others to 0 (BridgeDraw)
            costs = None if m.redrawn else [m.run_cost(b) for b in layouts]
            out = beaten(m.problem, layouts, [m.counted_rate(k, b) for b in layouts], costs)
            yield k, hours, [b for b, no in zip(layouts, out) if not no]


def tag(k: int, hours: float) -> str:
    """The name part of class k's bridge until `hours`: '0_1752h'."""
    return f"{k}_{safe(f'{hours:g}')}h"


def can_bridge(problem: Problem, sc: Scenario, k: int) -> bool:
    """Could a solve under `sc` bridge class k (a rented layout allowed, its job not waiting)?"""
    return not waits(problem, k) and any(
        c.ownership == "rent" and serving_allowed(problem, sc, c) for c in problem.serve_candidates[k]
    )


def add_bridge_columns(m: Model) -> None:
    """X[k,a,j] for every bridge the model may rent, and for a rented type sold in blocks of more than
    one GPU the bridge's idle billed GPUs and nodes (as Model.billed_nodes does for serving)."""
    for k, hours, layouts in bridge_columns(m):
        m.bridge_layouts[k, hours] = layouts
        spare = int(m.problem.serve_classes[k].spare)  # a bridge holds at most the peak, as a replica class does
        for j, b in enumerate(layouts):
            m.bridge[k, hours, j] = m.prob.add_variable(
                f"X_{tag(k, hours)}_{j}",
                lowBound=0,
                upBound=math.ceil(m.peak(k) / m.least_rate(k, b)) + spare,
                cat="Integer",
            )
        bills = serving_node_offers(layouts)
        for key, offer in bills.items():
            block = max(block_gpus(offer), offer.min_gpus)
            gpus = sum(
                b.gpus * (m.bridge[k, hours, j].upBound or 0) for j, b in enumerate(layouts) if bill_key(b) == key
            )
            name = f"{tag(k, hours)}_{bill_name(key, bills)}"
            m.bridge_idle[k, hours, key] = m.prob.add_variable(f"XI_{name}", lowBound=0, upBound=block, cat="Integer")
            m.bridge_nodes[k, hours, key] = m.prob.add_variable(
                f"XB_{name}", lowBound=0, upBound=math.ceil((gpus + block) / block_gpus(offer)), cat="Integer"
            )


def stands_in_for(b: ServeCandidate, bought: dict[str, int] | set[str]) -> list[str]:
    """The bought GPU types bridge layout b serves for: those of its arrival the plan buys."""
    return [g for g in b.bridges or () if g in bought]


class BridgeDraw:
    """What a robustness draw changes of the bridge in a HiGHS copy of a model (solve/redraw.py): each
    replica's counted rate in the bridge rows at the draw's speed, and each bridge column's cost (and
    budget coefficient) at its own offer's drawn rate, as a serving replica's (Draw.rent_of)."""

    def __init__(self, m: Model, col: dict[str, int], row: dict[str, int], budget: int | None):
        self.m, self.budget = m, budget
        self.rates = [(row[r], col[v], sign, k, c) for r, v, sign, k, c in m.bridge_rates]
        self.costs = [(col[v.name], b, w) for v, b, w in m.bridge_terms()]
        self.groups = [  # per (class, arrival): its bridge layouts, their columns and upper bounds
            (k, layouts, [col[m.bridge[k, a, j].name] for j in range(len(layouts))])
            for (k, a), layouts in m.bridge_layouts.items()
        ]
        self.upper = {j: float(v.upBound or 0) for v in m.bridge.values() for j in [col[v.name]]}

    def apply(self, h: Any, d: Draw) -> None:
        """Set draw `d`'s rates and rents in highspy model `h`."""
        m, speed = self.m, d.served
        for r, j, sign, k, c in self.rates:
            h.changeCoeff(r, j, sign * min(c.requests_per_s * speed.get(c.gpu, 1.0), m.peak(k)))
        basis = m.sc.budget_basis
        for j, b, w in self.costs:
            factor = d.rent_of(b)
            h.changeColCost(j, m.run_cost(b) * w * factor)
            if self.budget is not None:
                h.changeCoeff(self.budget, j, m.run_cost(b, basis) * w * factor)
        self._bound_beaten(h, speed, d)

    def _bound_beaten(self, h: Any, speed: Mapping[str, float], d: Draw) -> None:
        """Bound to 0 the bridge layouts another beats at this draw's speeds and rents (`beaten`): the
        columns a model built at these prices would not have."""
        import numpy as np

        m, cols, ubs = self.m, [], []
        for k, layouts, js in self.groups:
            rates = [min(b.requests_per_s * speed.get(b.gpu, 1.0), m.peak(k)) for b in layouts]
            costs = [m.run_cost(b) * d.rent_of(b) for b in layouts]
            for j, no in zip(js, beaten(m.problem, layouts, rates, costs)):
                cols.append(j)
                ubs.append(0.0 if no else self.upper[j])
        if cols:
            idx = np.array(cols, dtype=np.int32)
            h.changeColsBounds(len(idx), idx, np.zeros(len(idx)), np.array(ubs, dtype=float))
