"""network: a bought job that spans servers needs them networked, and the network is costed at
its size: the NICs and the fabric of its scale band (economics/purchase_bill.py) for the servers
the widest such job spans.

  network_g_n          F[g] >= network_usd(g, n) z[g,n]   (n larger than one server)
  network_unknown_g_n  z[g,n] = 0                        (no sourced network price: the size cannot be costed)
  alone_g_s_n          S[g,s] <= U_s (1 - z[g,n])         (s sources no network, n > slots_s: a job that spans
                                                          servers is not held in one that cannot be joined; U_s
                                                          its bound. A job within one s may still use it)
  alone_g_s_serve_q    S[g,s] <= U_s (1 - w[g,q])         (the same for a bought serving replica of q GPUs,
  serve_wide_g_q       q sum_i r[k,i] <= cap_g w[g,q]     q > slots_s: w[g,q] binary, 1 when a replica i of
                                                          width q on g is bought; cap_g the bound on N[g])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pulp

from advisor.solve.constraints.base import Family
from advisor.solve.rows import safe
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


class Network(Family):
    name = "network"

    def rows(self, m: Model) -> None:
        alone_rows(m)
        for g in m.owned:
            multi = m.multi_server_sizes(g)
            if not multi:
                continue
            if g not in m.F:  # the network joining these servers cannot be costed
                for n in multi:
                    m.prob += m.z[g, n] == 0, f"network_unknown_{safe(g)}_{n}"
                continue
            for n in multi:
                m.prob += m.F[g] >= (m.network_usd(g, n) or 0.0) * m.z[g, n], f"network_{safe(g)}_{n}"

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out = []
        for g in sol.bought:
            options = problem.servers.get(g, [])
            if not options:
                continue
            per_server = max(s.slots for s in options)
            widest = max((c.count for c, _ in sol.assignment if c.gpu == g and c.ownership == "buy"), default=0)
            out += [
                f"a job of {widest} {g} spans servers, and {s.id} (no sourced network) holds some of them"
                for s in options
                if not s.holds(widest) and sol.servers.get(g, {}).get(s.id, 0)
            ]
            replica = max((c.gpus for c, n in sol.serving if c.gpu == g and c.ownership == "buy" and n), default=0)
            out += [
                f"a serving replica of {replica} {g} spans servers, and {s.id} (no sourced network) holds some of them"
                for s in options
                if not s.holds(replica) and sol.servers.get(g, {}).get(s.id, 0)
            ]
            need = math.ceil(widest / per_server) if widest > per_server else 0
            if need and sol.networked.get(g, 0) < need:
                out.append(f"a job spans {need} servers of {g} but {sol.networked.get(g, 0)} are networked")
        return out


def alone_rows(m: Model) -> None:
    """The alone_ rows: a server the catalog sources no network for (the workstation) holds no GPU of a
    type one of whose bought jobs or serving replicas is wider than it, since such a job spans servers
    and this one cannot be joined to the others (its network would be another server's, priced and
    timed unsourced). The slots_g row counts slots only, so without them a replica of 8 GPUs was held in
    two 4-card workstations (review21a #2)."""
    for g in m.owned:
        wide = _replica_widths(m, g)
        for s in m.problem.servers.get(g, []):
            if s.networked:
                continue
            bound = m.S[g, s.id].upBound
            cap = bound if bound is not None else math.ceil(m.cap[g] / s.slots)
            for n in m.sizes[g]:
                if not s.holds(n):
                    m.prob += m.S[g, s.id] + cap * m.z[g, n] <= cap, f"alone_{safe(g)}_{safe(s.id)}_{n}"
            for q, w in wide.items():
                if not s.holds(q):
                    m.prob += m.S[g, s.id] + cap * w <= cap, f"alone_{safe(g)}_{safe(s.id)}_serve_{q}"


def _replica_widths(m: Model, g: str) -> dict[int, pulp.LpVariable]:
    """w[g,q] for each width q of a bought serving replica of type g that some server with no sourced
    network cannot hold, 1 when a replica of that width is bought: serve_wide_g_q, q (the width-q
    replicas) <= cap_g w[g,q], valid in every draw since those GPUs are within N[g] <= cap_g, whose
    bound no draw moves (a replica's own bound does: solve/redraw_serving.py)."""
    lone = [s for s in m.problem.servers.get(g, []) if not s.networked]
    by_width: dict[int, list[pulp.LpVariable]] = {}
    for k, i, c in m.serve_pairs():
        if c.gpu == g and c.ownership == "buy" and not all(s.holds(c.gpus) for s in lone):
            by_width.setdefault(c.gpus, []).append(m.r[k, i])
    out: dict[int, pulp.LpVariable] = {}
    for q, replicas in sorted(by_width.items()):
        w = out[q] = m.prob.add_variable(f"wide_{safe(g)}_{q}", cat="Binary")
        m.prob += q * pulp.lpSum(replicas) <= m.cap[g] * w, f"serve_wide_{safe(g)}_{q}"
    return out
