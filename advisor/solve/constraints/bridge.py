"""bridge: bought serving GPUs serve once they arrive, so rented replicas hold what they hold until
then (solve/serving_bridge.py has the columns and their price; docs/model.md, serving):

  bridge_k_A        sum_j rho_j X[k,A,j] >= sum_{bought i arriving at A} rho_i r[k,i]
  bridge_spare_k_A  (n+1) sum_j rho_j X[k,A,j] - E[k,A] >= sum_{bought i arriving at A} rho_i r[k,i] - D_k
  bridge_uses_k_A_j X[k,A,j] <= U_j v[k,A,j];  bridge_largest_k_A_j  E[k,A] >= rho_j v[k,A,j], v binary
  serve_nodes_k_A_h (a rented type h sold in blocks) its bridge GPUs and their idle ones fill whole nodes

The check of a plan refuses bought serving replicas that arrive late with no bridge holding them,
unless the class cannot be bridged (its job waits: `until_arrival: wait`, or no rented layout is allowed).
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
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution

TOLERANCE = 1e-9


def _rate_row(m: Model, k: int, a: float, name: str) -> pulp.LpAffineExpression:
    """sum_j rho_j X[k,A,j] - sum_{bought i arriving at A} rho_i r[k,i], each coefficient noted for the draws."""
    terms = []
    layouts = m.bridge_layouts[k, a]
    types = layouts[0].bridges or ()
    for i, c in enumerate(m.scands[k]):
        if c.gpu in types and c.ownership == "buy":
            terms.append((m.r[k, i], -m.counted_rate(k, c)))
            m.bridge_rates.append((name, m.r[k, i].name, -1.0, k, c))
    for j, b in enumerate(layouts):
        terms.append((m.bridge[k, a, j], m.counted_rate(k, b)))
        m.bridge_rates.append((name, m.bridge[k, a, j].name, 1.0, k, b))
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


class Bridge(Family):
    name = "bridge"

    def rows(self, m: Model) -> None:
        for k, a in m.bridge_layouts:
            name = f"bridge_{tag(k, a)}"
            m.prob += _rate_row(m, k, a, name) >= 0, name
            if k in m.down:
                spare = f"bridge_spare_{tag(k, a)}"
                m.prob += _rate_row(m, k, a, spare) - _largest(m, k, a) + m.down[k] >= 0, spare
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
