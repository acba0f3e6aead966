"""capacity: the owned fleet holds its jobs, for as long as it is held.

  use_k_c       y[k,c] <= m_k z[g,n]                  (owned candidates: the size n is in use)
  fleet_g_n     N[g] >= n z[g,n]                      (a job of n GPUs needs n bought)
  hold_g        sum_p H[g,p] = N[g]                   (every bought GPU is held until some period p)
  hold_one_g    sum_p K[g,p] <= 1;  hold_g_p: H[g,p] <= cap_g K[g,p]   (a type's GPUs are sold together)
  capacity_g_l  owned GPU-hours of jobs due by L_l <= sum_p (min(L_l, T_p) - A_g)+ H[g,p]
                                                      (a GPU arriving at A_g, held until T_p, works that many
                                                       hours by L_l: solve/constraints/lead_time.py)

A job is due by its own deadline, or the horizon; its GPU-hours are taken at the workload's
confidence quantile against its own deadline (planned GPU-hours), at the estimate against a
makespan cap. Owned serving GPUs are the serving family's (they lend their off-peak hours, and
serve only from their arrival: serve_capacity_g_l).

Jobs with deadlines on bought GPUs hold them at once, or in turn where they fit: at_once.py.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pulp

from advisor.solve.constraints.at_once import at_once_rows, clashes
from advisor.solve.constraints.base import Family
from advisor.solve.rows import GE, LE, affine, row, safe
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.holding import Holding
    from advisor.solve.model import Model
    from advisor.solve.problem import Candidate, Problem
    from advisor.solve.solution import Solution

HOUR_TOLERANCE = 1e-6
UNBOUNDED_GPUS = 1e7  # a bound on any GPU type's fleet when the workload sets none (MAX_GPUS_PER_JOB x jobs)


def held_hours(problem: Problem, sc: Scenario, g: str, limit: float, level: int) -> float:
    """The hours one GPU of type g, arriving at its lead time and held until period `level`, works
    by hour `limit`."""
    return max(0.0, min(limit, problem.holdings[g][level].hours) - _start(problem, sc, g))


def serving_hours(problem: Problem, sc: Scenario, g: str, limit: float, cls: int) -> float:
    """The hours one owned GPU of type g serves class `cls` by hour `limit`, off-peak hours lent to
    training left out: from its arrival (it serves nothing before it exists) to the serving's end."""
    sv = problem.serve_classes[cls]
    busy = max(0.0, min(limit, sv.hours) - _start(problem, sc, g))
    return busy * (1.0 - sv.off_peak_hours / 24.0)


def _start(problem: Problem, sc: Scenario, g: str) -> float:
    arrival = problem.arrival.get(g)
    return arrival.hours * sc.lead_scale if arrival is not None else 0.0


def at_planned_hours(problem: Problem, sc: Scenario) -> list[bool]:
    """Per training class, does a capacity row count its GPU-hours at the workload's confidence
    quantile (planned: due by its own deadline) rather than at the estimate (due by a makespan cap,
    or by the horizon sooner than its deadline)?"""
    due = due_levels(problem, sc)
    return [
        (sc.job_deadline(cls.deadline) or sc.horizon_hours or math.inf) <= due[k]
        for k, cls in enumerate(problem.classes)
    ]


def counted_hours(c: Candidate, planned: bool) -> float:
    """The GPU-hours a capacity row counts for candidate c (`planned`: at_planned_hours of its class)."""
    return c.planned_gpu_hours if planned else c.gpu_hours


def due_levels(problem: Problem, sc: Scenario) -> list[float]:
    """Per training class, the hour by which it must be done: its deadline (and any makespan cap)
    under the scenario, else the horizon (infinite when a diagnosis lifts it)."""
    return [sc.deadline(cls.deadline) or sc.horizon_hours or math.inf for cls in problem.classes]


def dominated_by_gpu(problem: Problem, sc: Scenario) -> dict[str, set[int]]:
    """Per buyable GPU type, the holding periods no plan needs under `sc`. A type's GPUs are sold
    together at one period (hold_one), so the periods of use are those up to the first covering
    every hour its training is due by (a later one adds no held hour: each capacity row counts
    min(due, T_p)), and the first covering the hours it serves (serve_fleet needs that one or
    later). Any later period pays at least as much as the useful one below it in every term the
    costs weigh (hosting, energy, support months: more; resale: less), at any price factor, in cash
    and in present value, for no hour a row counts, so bounding it at 0 keeps the optimum and
    spares HiGHS the branching (the 200-job fleet: 11 periods per type where one is of use)."""
    due = due_levels(problem, sc)
    ends: dict[str, tuple[list[float], list[float]]] = {g: ([], []) for g in problem.holdings}
    for k, cands in enumerate(problem.candidates):
        for g in {c.gpu for c in cands if c.ownership == "buy"} & ends.keys():
            ends[g][0].append(due[k])
    for k, serve in enumerate(problem.serve_candidates):
        for g in {c.gpu for c in serve if c.ownership == "buy"} & ends.keys():
            ends[g][1].append(problem.serve_classes[k].hours)
    return {g: _dominated(problem.holdings[g], train, serve) for g, (train, serve) in ends.items()}


def _dominated(levels: list[Holding], train: list[float], serve: list[float]) -> set[int]:
    """The periods of `levels` no plan needs, given the hours training is due by and serving runs."""
    train_end, serve_end = (_first_covering(levels, max(hours)) if hours else -1 for hours in (train, serve))
    if train_end is None or serve_end is None or train_end == serve_end == -1:
        return set()  # some work is due past every period (or never: a diagnosis lifted the limits)
    # every period up to training's end (none without training), and serving's
    useful = sorted({*range(train_end + 1), serve_end} - {-1})
    out = set()
    for lv in range(len(levels)):
        below = max((u for u in useful if u <= lv), default=None)  # (none: a period cheaper than any of use)
        if below is not None and lv not in useful and _costs_more(levels[lv], levels[below]):
            out.add(lv)
    return out


def _first_covering(levels: list[Holding], hours: float) -> int | None:
    """The first holding period ending at or after `hours` (None: none does)."""
    if hours == math.inf:
        return None
    return next((lv for lv, h in enumerate(levels) if h.hours >= hours * (1 - 1e-9)), None)


def _costs_more(later: Holding, keep: Holding) -> bool:
    """Does holding until `later` pay at least what holding until `keep` does, term by term?"""
    return (
        later.hosting_pv_usd >= keep.hosting_pv_usd
        and later.energy_pv_usd >= keep.energy_pv_usd
        and later.months_held_pv >= keep.months_held_pv
        and later.resale_pv_per_usd <= keep.resale_pv_per_usd
        and later.hosting_cash_usd >= keep.hosting_cash_usd
        and later.energy_cash_usd >= keep.energy_cash_usd
        and later.months_held >= keep.months_held
    )


class Capacity(Family):
    name = "capacity"

    def rows(self, m: Model) -> None:
        self._use_and_fleet(m)
        p = m.problem
        idle = dominated_by_gpu(p, m.sc)
        for g in m.owned:
            levels = range(len(p.holdings[g]))
            m.prob += (
                pulp.LpConstraint(affine([(m.H[g, lv], 1) for lv in levels] + [(m.N[g], -1)]), pulp.LpConstraintEQ),
                f"hold_{safe(g)}",
            )
            m.prob += pulp.lpSum(m.K[g, lv] for lv in levels) <= 1, f"hold_one_{safe(g)}"
            cap = m.cap[g] if m.cap[g] < math.inf else UNBOUNDED_GPUS
            for lv in levels:
                m.prob += row([(m.H[g, lv], 1), (m.K[g, lv], -cap)], LE), f"hold_{safe(g)}_{lv}"
            for lv in idle.get(g, ()):  # periods no plan needs: bounded at 0
                m.H[g, lv].upBound = m.K[g, lv].upBound = 0
        at_once_rows(m)
        due, planned = due_levels(p, m.sc), at_planned_hours(p, m.sc)
        owned: dict[str, list[tuple[int, int, Candidate]]] = {g: [] for g in m.owned}
        for k, i, c in m.pairs():
            if c.ownership == "buy":
                owned[c.gpu].append((k, i, c))
        for g in m.owned:
            for level, limit in enumerate(sorted(set(due))):
                if limit == math.inf:
                    continue  # no horizon (a diagnosis lifted it): no capacity level
                terms = [(m.y[k, i], counted_hours(c, planned[k])) for k, i, c in owned[g] if due[k] <= limit]
                if terms:
                    name = f"capacity_{safe(g)}_{level}"
                    held = [(m.H[g, lv], -held_hours(p, m.sc, g, limit, lv)) for lv in range(len(p.holdings[g]))]
                    m.prob += pulp.LpConstraint(affine(terms + held), LE), name  # GPU-hours - held hours <= 0
                    m.capacity_gpu[name] = g

    @staticmethod
    def _use_and_fleet(m: Model) -> None:
        for k, i, c in m.pairs():
            if c.ownership == "buy":
                mult = m.problem.classes[k].multiplicity
                m.prob += row([(m.y[k, i], 1), (m.z[c.gpu, c.count], -mult)], LE), f"use_{k}_{i}"
        for (g, n), z in m.z.items():
            m.prob += row([(m.N[g], 1), (z, -n)], GE), f"fleet_{safe(g)}_{n}"

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out = []
        serve_classes = problem.serve_classes
        for g, n in sol.bought.items():
            used = [c for c, _ in sol.assignment if c.gpu == g and c.ownership == "buy"]
            mine = [(c, m) for c, m in sol.serving if c.gpu == g and c.ownership == "buy"]
            serve_gpus = sum(c.gpus * m for c, m in mine)
            kept = sum(c.gpus * m for c, m in mine if serve_classes[c.cls].off_peak_hours <= 0)
            if used and max(c.count for c in used) + kept > n:
                out.append(
                    f"a job uses {max(c.count for c in used)} {g} beside {kept} serving, but only {n} are bought"
                )
            out += clashes(problem, sol, sc, g, n)
            due = due_levels(problem, sc)
            held = sol.held.get(g, {})
            if sum(held.values()) != n:
                out.append(f"{n} {g} bought but {sum(held.values())} held")
            for limit in sorted({due[c.cls] for c in used} - {math.inf}):
                hours = sum(
                    c.gpu_hours * m
                    for c, m in sol.assignment
                    if c.gpu == g and c.ownership == "buy" and due[c.cls] <= limit
                )
                room = sum(held_hours(problem, sc, g, limit, lv) * k for lv, k in held.items()) - sum(
                    c.gpus * m * serving_hours(problem, sc, g, limit, c.cls) for c, m in mine
                )
                if hours > room + max(HOUR_TOLERANCE * max(1.0, room), 1e-7 * abs(room)):
                    out.append(
                        f"{g}: {hours:.6g} GPU-hours due within {limit:.6g} h on {n} GPUs ({serve_gpus} serving)"
                    )
        return out


def speed_scaled(m: Model, row: dict[str, int], col: dict[str, int]) -> list[tuple[int, str, int, float]]:
    """(row, GPU, column, coefficient at the fastest speed) a draw multiplies by its speed against the
    fastest (solve/redraw.py): a capacity row holds one GPU type's owned jobs, GPU-hours x 1/r <= held hours
    is GPU-hours <= r x held hours, so its holding columns H[g, p]; a serve_capacity row is one too, less
    the hours its owned serving GPUs serve, which scale with the held hours (review29b: left at the fastest
    speed, a draw at 0.6 kept 6 GPUs where a fresh solve needs 7)."""
    out = []
    rows = [(name, g, False) for name, g in m.capacity_gpu.items()]
    rows += [(name, g, True) for name, g in m.serve_capacity_gpu.items()]
    for name, g, serves in rows:
        terms = [m.H[g, lv] for lv in range(len(m.problem.holdings[g]))]
        if serves:
            terms += [m.r[k, i] for k, i, c in m.serve_pairs() if c.gpu == g and c.ownership == "buy"]
        for v in terms:
            if coef := m.prob._constraints[name].get(v, 0.0):
                out.append((row[name], g, col[v.name], coef))
    return out
