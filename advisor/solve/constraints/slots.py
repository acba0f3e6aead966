"""slots: bought GPUs go into servers.

slots_g   N[g] = sum_s slots_s S[g,s]   (HGX and OAM boards come filled: every slot a GPU)
          N[g] <= sum_s slots_s S[g,s]  (PCIe servers and workstations: cards in free slots)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulp

from advisor.solve.constraints.base import Family
from advisor.solve.rows import safe
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


class Slots(Family):
    name = "slots"

    def rows(self, m: Model) -> None:
        for g in m.owned:
            options = m.problem.servers.get(g, [])
            if not options:
                continue
            slots = pulp.lpSum(s.slots * m.S[g, s.id] for s in options)
            if all(s.filled for s in options):
                m.prob += m.N[g] == slots, f"slots_{safe(g)}"
            else:
                m.prob += m.N[g] <= slots, f"slots_{safe(g)}"

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out = []
        for g, n in sol.bought.items():
            slots = sum(s.slots * sol.servers.get(g, {}).get(s.id, 0) for s in problem.servers.get(g, []))
            if problem.servers.get(g) and slots < n:
                out.append(f"{n} {g} bought but servers hold only {slots}")
        return out
