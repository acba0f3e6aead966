"""The bridge: bought serving GPUs serve once they arrive (the purchase's lead time, then burn-in:
Problem.arrival), so until then rented replicas hold what they will hold (docs/model.md, serving).

Per request class k and bought GPU type g with arrival A_g > 0, for each of the class's rented
layouts j, a bridge layout: j rented for A_g hours, at j's own rate (its cash over the serving hours
x A_g / those hours; present value as a stream over A_g). The rows (solve/constraints/bridge.py):

  bridge_k_g        sum_j rho_j X[k,g,j] >= sum_{bought i on g} rho_i r[k,i]
  bridge_spare_k_g  (n+1) sum_j rho_j X[k,g,j] - E[k,g] >= sum_{bought i on g} rho_i r[k,i] - D_k,
                    E[k,g] >= rho_j v[k,g,j], X[k,g,j] <= U_j v[k,g,j], v binary

(rho the counted rate, at most the peak; D_k the class's spare). With both, whatever replicas are
up while g's are on their way -- the others and the bridge -- hold the peak with any one down.
This module is the one place a bridge's price is computed (`bridge_layout`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pulp

from advisor.economics.ownership import HOURS_PER_YEAR, stream_factor
from advisor.solve.problem import Problem, ServeCandidate
from advisor.solve.rows import safe
from advisor.solve.scenario import Scenario
from advisor.solve.serving_nodes import block_gpus, serving_node_offers

if TYPE_CHECKING:
    from advisor.solve.model import Model


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


def bridge_layout(problem: Problem, c: ServeCandidate, bought: str) -> ServeCandidate:
    """Rented layout c bridging bought GPU type `bought` until it arrives: c for those hours at its own
    rate, the cash c pays per hour (whole nodes are billed by the rows, as for serving), the present
    value as a stream paid from today."""
    hours = problem.arrival[bought].hours
    cash_per_hour = (c.run_cost_usd if c.run_cost_nominal is None else c.run_cost_nominal) / c.hours
    cash = cash_per_hour * hours
    pv = cash * stream_factor(hours / HOURS_PER_YEAR, problem.costs.discount_rate)
    return dataclasses.replace(c, hours=hours, run_cost_usd=pv, run_cost_nominal=cash, warnings=[], bridges=bought)


def bridge_columns(
    problem: Problem, scands: list[list[ServeCandidate]]
) -> Iterator[tuple[int, str, list[ServeCandidate]]]:
    """(class, bought GPU type arriving late, its bridge layouts) for every class that may be bridged:
    it uses rented layouts too and its job does not wait for the arrival."""
    for k, cs in enumerate(scands):
        rented = [c for c in cs if c.ownership == "rent"]
        if not rented or waits(problem, k):
            continue
        for g in late_types(problem, cs):
            yield k, g, [bridge_layout(problem, c, g) for c in rented]


def can_bridge(problem: Problem, sc: Scenario, k: int) -> bool:
    """Could a solve under `sc` bridge class k (a rented layout allowed, its job not waiting)?"""
    return not waits(problem, k) and any(
        c.ownership == "rent" and serving_allowed(problem, sc, c) for c in problem.serve_candidates[k]
    )


def counted(m: Model, k: int, c: ServeCandidate) -> float:
    """A replica's rate as the rows count it: at most the class's peak (constraints/serving.counted_rate)."""
    return min(c.requests_per_s, m.peak(k))


def add_bridge_columns(m: Model) -> None:
    """X[k,g,j] for every bridge the model may rent, and for a rented type sold in blocks of more than
    one GPU the bridge's idle billed GPUs and nodes (as Model.billed_nodes does for serving)."""
    for k, g, layouts in bridge_columns(m.problem, m.scands):
        m.bridge_layouts[k, g] = layouts
        spare = int(m.problem.serve_classes[k].spare)
        most = sum(
            counted(m, k, c) * (m.r[k, i].upBound or 0)
            for i, c in enumerate(m.scands[k])
            if c.gpu == g and c.ownership == "buy"
        )
        for j, b in enumerate(layouts):
            m.bridge[k, g, j] = m.prob.add_variable(
                f"X_{k}_{safe(g)}_{j}", lowBound=0, upBound=math.ceil(most / counted(m, k, b)) + spare, cat="Integer"
            )
        for h, offer in serving_node_offers(m.problem, layouts).items():
            block = max(block_gpus(offer), offer.min_gpus)
            gpus = sum(b.gpus * (m.bridge[k, g, j].upBound or 0) for j, b in enumerate(layouts) if b.gpu == h)
            tag = f"{k}_{safe(g)}_{safe(h)}"
            m.bridge_idle[k, g, h] = m.prob.add_variable(f"XI_{tag}", lowBound=0, upBound=block, cat="Integer")
            m.bridge_nodes[k, g, h] = m.prob.add_variable(
                f"XB_{tag}", lowBound=0, upBound=math.ceil((gpus + block) / block_gpus(offer)), cat="Integer"
            )


def bridge_terms(m: Model) -> list[tuple[pulp.LpVariable, ServeCandidate, float]]:
    """(column, layout, weight): the bridge's cost is the layout's run cost x weight x the column
    (a replica, or an idle billed GPU as 1 / the layout's GPUs of one)."""
    out = [(v, m.bridge_layouts[k, g][j], 1.0) for (k, g, j), v in m.bridge.items()]
    for (k, g, h), v in m.bridge_idle.items():
        paid_as = next(b for b in m.bridge_layouts[k, g] if b.gpu == h)
        out.append((v, paid_as, 1.0 / paid_as.gpus))
    return out


class BridgeDraw:
    """What a robustness draw changes of the bridge in a HiGHS copy of a model (solve/redraw.py): each
    replica's counted rate in the bridge rows at the draw's speed, and each bridge column's cost (and
    budget coefficient) at the drawn rent."""

    def __init__(self, m: Model, col: dict[str, int], row: dict[str, int], budget: int | None):
        self.m, self.budget = m, budget
        self.rates = [(row[r], col[v], sign, k, c) for r, v, sign, k, c in m.bridge_rates]
        self.costs = [(col[v.name], b, w) for v, b, w in bridge_terms(m)]

    def apply(self, h: Any, speed: Mapping[str, float], rent: Mapping[str, float]) -> None:
        """Set the draw's rates and rents in highspy model `h`."""
        m = self.m
        for r, j, sign, k, c in self.rates:
            h.changeCoeff(r, j, sign * min(c.requests_per_s * speed.get(c.gpu, 1.0), m.peak(k)))
        basis = m.sc.budget_basis
        for j, b, w in self.costs:
            factor = rent.get(b.gpu, 1.0)
            h.changeColCost(j, m.run_cost(b) * w * factor)
            if self.budget is not None:
                h.changeCoeff(self.budget, j, m.run_cost(b, basis) * w * factor)
