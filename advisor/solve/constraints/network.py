"""network: a bought job that spans servers needs them networked, and the network is costed at
its size: the NICs and the fabric of its scale band (economics/purchase_bill.py) for the servers
the widest such job spans.

  network_g_n          F[g] >= network_usd(g, n) z[g,n]   (n larger than one server)
  network_unknown_g_n  z[g,n] = 0                        (no sourced network price: the size cannot be costed)
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
            need = math.ceil(widest / per_server) if widest > per_server else 0
            if need and sol.networked.get(g, 0) < need:
                out.append(f"a job spans {need} servers of {g} but {sol.networked.get(g, 0)} are networked")
        return out
