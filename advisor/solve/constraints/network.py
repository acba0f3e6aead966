"""network: a bought job that spans servers needs them networked, and the network is costed at
its size: the NICs and the fabric of its scale band (economics/purchase_bill.py) for the servers
the widest such job spans.

  network_g_n          F[g] >= network_usd(g, n) z[g,n]   (n larger than one server)
  network_unknown_g_n  z[g,n] = 0                        (no sourced network price: the size cannot be costed)
  alone_g_s_n          S[g,s] <= U_s (1 - z[g,n])         (s sources no network, n > slots_s: a job that spans
                                                          servers is not held in one that cannot be joined; U_s
                                                          its bound. A job within one s may still use it)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

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
            need = math.ceil(widest / per_server) if widest > per_server else 0
            if need and sol.networked.get(g, 0) < need:
                out.append(f"a job spans {need} servers of {g} but {sol.networked.get(g, 0)} are networked")
        return out


def alone_rows(m: Model) -> None:
    """The alone_ rows: a server the catalog sources no network for (the workstation) holds no GPU of a
    type one of whose bought jobs is wider than it, since such a job spans servers and this one cannot
    be joined to the others (its network would be another server's, priced and timed unsourced)."""
    for g in m.owned:
        for s in m.problem.servers.get(g, []):
            if s.networked:
                continue
            bound = m.S[g, s.id].upBound
            cap = bound if bound is not None else math.ceil(m.cap[g] / s.slots)
            for n in m.sizes[g]:
                if not s.holds(n):
                    m.prob += m.S[g, s.id] + cap * m.z[g, n] <= cap, f"alone_{safe(g)}_{safe(s.id)}_{n}"
