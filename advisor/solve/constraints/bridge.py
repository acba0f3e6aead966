"""bridge: bought serving GPUs serve once they arrive, so until then the replicas up -- the rented ones,
the bought ones already arrived, and the rented bridge -- must hold the peak (solve/serving_bridge.py has
the columns and their price; docs/model.md, serving). Per class k and window before each arrival A
(from the arrival before it, or 0):

  bridge_k_A        sum_{up i} rho_i r[k,i] + sum_{A' >= A} sum_j rho_j X[k,A',j] - W[k,A] >= peak_k
  bridge_down_k_A_* (n+1) W[k,A] >= rho_i uses[k,i] (up i), W[k,A] >= E[k,A'] (A' >= A): the largest up
  bridge_uses_k_A_j X[k,A,j] <= U_j v[k,A,j];  bridge_largest_k_A_j  E[k,A] >= rho_j v[k,A,j], v binary
  serve_nodes_k_A_h (a rented type h sold in blocks) its bridge GPUs and their idle ones fill whole nodes

as the plan check asks (Bridge.violations), which refuses bought serving replicas that arrive late
with no bridge holding the peak, unless the class cannot be bridged (its job waits:
`until_arrival: wait`, or no rented layout is allowed).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pulp

from advisor.solve.constraints.base import Family
from advisor.solve.scenario import Scenario
from advisor.solve.serving_bridge import can_bridge, late_types, tag
from advisor.solve.serving_nodes import bill_key, bill_name, billed_gpus, node_rows, serving_node_offers

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem, ServeCandidate
    from advisor.solve.solution import Solution

TOLERANCE = 1e-9


def _arrives(m: Model, c: ServeCandidate) -> float:
    """Hours until layout c serves: a bought type's arrival, 0 when rented."""
    arrival = m.problem.arrival.get(c.gpu) if c.ownership == "buy" else None
    return arrival.hours if arrival is not None else 0.0


def _up_row(m: Model, k: int, start: float, a: float, name: str) -> pulp.LpAffineExpression:
    """The rate of class k's replicas up from `start` to arrival `a`: the serving ones arrived by `start`
    and the bridges of arrivals from `a` on, each coefficient noted for the draws."""
    terms = []
    for i, c in enumerate(m.scands[k]):
        if _arrives(m, c) <= start:
            terms.append((m.r[k, i], m.counted_rate(k, c)))
            m.bridge_rates.append((name, m.r[k, i].name, 1.0, k, c))
    for (kk, later), layouts in sorted(m.bridge_layouts.items()):
        if kk == k and later >= a:
            for j, b in enumerate(layouts):
                terms.append((m.bridge[k, later, j], m.counted_rate(k, b)))
                m.bridge_rates.append((name, m.bridge[k, later, j].name, 1.0, k, b))
    return pulp.LpAffineExpression(terms)


def _largest(m: Model, k: int, a: float) -> pulp.LpVariable:
    """E[k,A]: the rate of the largest bridge replica class k rents until its bought GPUs arrive at A."""
    name = tag(k, a)
    largest = m.prob.add_variable(f"E_{name}", lowBound=0)
    for j, b in enumerate(m.bridge_layouts[k, a]):
        x = m.bridge[k, a, j]
        on = m.prob.add_variable(f"v_{name}_{j}", cat="Binary")
        m.prob += x <= (x.upBound or 0) * on, f"bridge_uses_{name}_{j}"
        row = f"bridge_largest_{name}_{j}"
        m.prob += largest - m.counted_rate(k, b) * on >= 0, row
        m.bridge_rates.append((row, on.name, -1.0, k, b))
    return largest


def _down(m: Model, k: int, start: float, a: float, largest: dict[float, pulp.LpVariable]) -> pulp.LpVariable:
    """W[k,A]: the rate of the largest replica up from `start` to arrival `a` (what one failure takes down)."""
    name = tag(k, a)
    down = m.prob.add_variable(f"W_{name}", lowBound=0)
    for i, c in enumerate(m.scands[k]):
        if _arrives(m, c) <= start:
            row = f"bridge_down_{name}_{i}"
            m.prob += down - m.counted_rate(k, c) * m.uses[k, i] >= 0, row
            m.bridge_rates.append((row, m.uses[k, i].name, -1.0, k, c))
    for later, e in largest.items():
        if later >= a:
            m.prob += down - e >= 0, f"bridge_down_{name}_{tag(k, later)}"
    return down


class Bridge(Family):
    name = "bridge"

    def rows(self, m: Model) -> None:
        for k in sorted({k for k, _ in m.bridge_layouts}):
            arrivals = sorted(a for kk, a in m.bridge_layouts if kk == k)
            largest = {a: _largest(m, k, a) for a in arrivals} if k in m.down else {}
            start = 0.0
            for a in arrivals:  # the window before arrival a, from the one before it
                name = f"bridge_{tag(k, a)}"
                down = _down(m, k, start, a, largest) if k in m.down else 0
                m.prob += _up_row(m, k, start, a, name) - down >= m.peak(k), name
                start = a
        for (k, a, key), idle in m.bridge_idle.items():
            layouts = m.bridge_layouts[k, a]
            bills = serving_node_offers(layouts)  # (add_bridge_columns makes idle GPUs only for these)
            used = [(m.bridge[k, a, j], b.gpus) for j, b in enumerate(layouts) if bill_key(b) == key]
            node_rows(m.prob, bills[key], used, idle, m.bridge_nodes[k, a, key], f"{tag(k, a)}_{bill_name(key, bills)}")

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out = []
        for k, cls in enumerate(problem.serve_classes):
            mine = [(c, n) for c, n in sol.serving if c.cls == k and n > 0]
            late = late_types(problem, [c for c, _ in mine])
            if not late or not can_bridge(problem, sc, k):
                continue
            peak = cls.peak_rps * sc.traffic_factor
            arrives = {g: problem.arrival[g].hours for g in late}
            for t in sorted({0.0, *arrives.values()} - {max(arrives.values())}):
                up = [(c, n) for c, n in mine if c.ownership == "rent" or arrives.get(c.gpu, 0.0) <= t]
                up += [(b, n) for b, n in sol.bridges if b.cls == k and b.hours > t]
                rates = [(min(c.requests_per_s * sc.speed_factor.get(c.gpu, 1.0), peak), n) for c, n in up]
                held = sum(r * n for r, n in rates) - (max((r for r, _ in rates), default=0.0) if cls.spare else 0.0)
                if held < peak * (1 - TOLERANCE) - TOLERANCE:
                    waiting = [g for g in late if arrives[g] > t]
                    out.append(
                        f"{cls.name}: until its bought {', '.join(waiting)} arrive (day "
                        f"{math.ceil(min(arrives[g] for g in waiting) / 24 - 1e-9)}), the replicas up and the rented "
                        f"bridge hold {held:.6g} of the {peak:.6g} requests/s at peak"
                        + (" with one replica down (availability n+1)" if cls.spare else "")
                    )
        return out + _short_billed(problem, sol)


def _short_billed(problem: Problem, sol: Solution) -> list[str]:
    """Bridge GPUs rented from an offer sold in blocks that the plan pays short of the blocks billed."""
    out = []
    keys = sorted({(b.cls, b.hours, key) for b, _ in sol.bridges if (key := bill_key(b)) is not None})
    for k, a, key in keys:
        mine = [(b, n) for b, n in sol.bridges if (b.cls, b.hours, bill_key(b)) == (k, a, key)]
        for _, offer in serving_node_offers(b for b, _ in mine).items():
            used = sum(b.gpus * n for b, n in mine)
            paid = used + sol.bridge_idle.get((k, a, key), (0, None))[0]
            if paid < billed_gpus(offer, used):
                out.append(
                    f"{used} {key[0]} rented as a bridge are billed by {offer.provider} as "
                    f"{billed_gpus(offer, used)}, the plan pays for {paid}"
                )
    return out
