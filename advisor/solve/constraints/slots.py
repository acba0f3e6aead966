"""slots: bought GPUs go into servers.

slots_g        N[g] = sum_s slots_s S[g,s]   (HGX and OAM boards come filled: every slot a GPU)
               N[g] <= sum_s slots_s S[g,s]  (PCIe servers and workstations: cards in free slots)
servers_g_n    sum_s S[g,s] >= ceil(n / P_g) z[g,n]          (a job of n bought GPUs needs their servers)
servers_k_i    sum_s S[g,s] >= ceil(q_i / P_g) r[k,i] / R_i  (an owned serving layout of q_i GPUs on g, R_i its
                                                              replicas' upper bound; P_g: g's largest server's slots)

The servers_ rows are valid inequalities (implied by the integer points of slots_g, fleet_g_n,
serve_fleet_g and hold_g, so no plan is lost) that the LP relaxation lacks: it buys a fraction of a server
with a fraction of a GPU, and they make a job or a replica on g pay its whole servers. The few-jobs
robustness draws' model carries them (server_cuts; docs/performance.md "Heavy examples").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pulp

from advisor.solve.constraints.base import Family
from advisor.solve.rows import GE, row, safe
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


def servers_needed(m: Model, g: str, gpus: int) -> int:
    """The fewest servers of type g any purchase holding `gpus` GPUs of it has: every platform holds
    at most P_g = the largest one's slots, so sum_s S[g,s] >= N[g] / P_g >= gpus / P_g, an integer."""
    return math.ceil(gpus / max(s.slots for s in m.problem.servers[g]))


def serving_server_rows(m: Model) -> list[tuple[str, int, int, int]]:
    """(row, class k, layout i, servers_needed) of the servers_k_i rows: the owned serving layouts on a
    GPU type with servers. A draw (solve/redraw.py) sets the coefficient on r[k,i] to -needed / its bound."""
    return [
        (f"servers_{k}_{i}", k, i, servers_needed(m, c.gpu, c.gpus))
        for k, i, c in m.serve_pairs()
        if m.cuts and c.ownership == "buy" and m.problem.servers.get(c.gpu) and (m.r[k, i].upBound or 0) > 0
    ]


def server_cuts(m: Model) -> None:
    """The servers_ rows (above), in the model of Model.cuts: the robustness draws' of a problem solved to the
    few-jobs gap (0.01%, solve/redraw.py), where a draw's plan is its optimum however HiGHS searches (the same
    purchase in each of 400 draws, bench/draw_gap.py). At a 1% gap -- the explanations' re-solves, a fleet's
    plan and draws -- they move which plan within the gap HiGHS returns (serve-70b-datacenter's forced-GPU
    alternatives moved by -0.5% and +0.5%), and a 200-job fleet's 1,293 more rows took its first 20 draws
    from 5.8 to 8.4 s of CPU (docs/performance.md)."""
    # Valid: z[g,n] = 1 means N[g] >= n (fleet_g_n), so the servers hold n GPUs: at least
    # servers_needed(n) of them; z = 0 asks nothing. Exact at a single job on a filled 8-GPU board.
    for (g, n), z in m.z.items():
        if m.problem.servers.get(g):
            held = [(m.S[g, s.id], 1.0) for s in m.problem.servers[g]]
            m.prob += row([*held, (z, -servers_needed(m, g, n))], GE), f"servers_{safe(g)}_{n}"
    # Valid: class k's columns on g add up to at most m_k jobs (assign_k), and a job of n GPUs on g
    # needs servers_needed(n) servers, so sum_c needed_c y[k,c] / m_k <= the most any used column needs.
    for k, g in sorted({(k, c.gpu) for k, _, c in m.pairs() if c.ownership == "buy" and m.problem.servers.get(c.gpu)}):
        mult = m.problem.classes[k].multiplicity
        jobs = [
            (m.y[k, i], -servers_needed(m, g, c.count) / mult)
            for i, c in enumerate(m.cands[k])
            if c.gpu == g and c.ownership == "buy"
        ]
        held = [(m.S[g, s.id], 1.0) for s in m.problem.servers[g]]
        m.prob += row([*held, *jobs], GE), f"servers_{safe(g)}_class_{k}"
    # Valid: 0 <= r <= R, so r / R <= 1, and r >= 1 means N[g] >= q_i (serve_fleet_g: the GPUs held
    # through serving, within N[g] by hold_g): the servers hold q_i GPUs, servers_needed(q_i) >= that x r / R.
    for name, k, i, need in serving_server_rows(m):
        c = m.scands[k][i]
        held = [(m.S[c.gpu, s.id], 1.0) for s in m.problem.servers[c.gpu]]
        m.prob += row([*held, (m.r[k, i], -need / (m.r[k, i].upBound or 1))], GE), name


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
        if m.cuts:
            server_cuts(m)

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out = []
        for g, n in sol.bought.items():
            slots = sum(s.slots * sol.servers.get(g, {}).get(s.id, 0) for s in problem.servers.get(g, []))
            if problem.servers.get(g) and slots < n:
                out.append(f"{n} {g} bought but servers hold only {slots}")
        return out
