"""serving: every request class's peak rate is sustained under its SLO (docs/model.md "Serving
in the MILP"); owned serving GPUs count in N[g] and lend their off-peak hours to training.

  serve_k             sum_i rate_i r[k,i] - D_k >= peak requests/s of class k (x the scenario's traffic factor),
                      D_k the largest replica the class uses (availability n+1: the peak is held with any one
                      replica down): D_k >= rate_i b[k,i] (uses_k_i), r[k,i] <= R_i b[k,i], b binary; D_k = 0
                      for none. rate_i counts at most the peak (Model.counted_rate)
  serve_fleet_g       GPUs of type g held as long as serving runs >= owned serving GPUs of type g
  serve_fleet_g_n     N[g] >= n z[g,n] + owned serving GPUs not lent to training (off_peak_training_hours 0)
  serve_capacity_g_l  training GPU-hours <= sum_p (min(L, T_p) - A_g)+ H[g,p] - sum over owned serving GPUs of
                      (min(L, S_k) - A_g)+ (1 - h_k/24): each serves from its arrival A_g to its class's end
                      S_k, lending h_k hours a day to training
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import pulp

from advisor.contract.facts import Slack, binds
from advisor.solve.constraints.at_once import deadline_columns, in_turn, lent_hours
from advisor.solve.constraints.base import Family
from advisor.solve.constraints.capacity import at_planned_hours, counted_hours, due_levels, held_hours, serving_hours
from advisor.solve.rows import safe
from advisor.solve.scenario import Scenario
from advisor.solve.serving_nodes import BillKey, bill_key, bill_name, billed_gpus, node_rows, serving_node_offers

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Candidate, Problem
    from advisor.solve.solution import Solution


def _owned_serving(m: Model, g: str, lent: bool | None = None) -> pulp.LpAffineExpression:
    """Owned serving GPUs of type g (lent: only those lent to training off-peak, or only those not)."""
    cls = m.problem.serve_classes
    return pulp.lpSum(
        c.gpus * m.r[k, i]
        for k, i, c in m.serve_pairs()
        if c.gpu == g and c.ownership == "buy" and (lent is None or (cls[k].off_peak_hours > 0) == lent)
    )


def off_peak_too_slow(
    p: Problem, sc: Scenario, g: str, pairs: Iterable[tuple[int, int, Candidate]]
) -> Iterator[tuple[int, int, Candidate, int]]:
    """(k, i, column, share) of the jobs on bought g that cannot finish by their deadlines (a job with none:
    by the makespan cap, else the horizon) in the fewest off-peak hours a day a serving class on g lends
    (review29b: 20B tokens on 5 serving RTX 6000 Ada, 8 h a day, "26.90 days of slack" for a job done on
    day 127 of 120): such a job's GPUs serve no one, N[g] >= its lanes' GPUs + the owned serving GPUs (a
    job of n GPUs runs on n at once, at the pace of the slowest; share: copies a lane runs in turn, so
    y / share lanes at the least)."""
    lend = lent_hours(p, g)
    if lend is None:
        return
    pairs = list(pairs)
    due_columns = {(k, i) for k, i, _ in deadline_columns(p, sc, pairs).get(g, [])}
    for k, i, c in pairs:
        if c.gpu != g or c.ownership != "buy":
            continue
        # by its deadline or the makespan cap (--objective time, frontier), else the horizon (review30: an
        # 8B-token fine-tune in 8-hour nights "finishes in 97.12 days ... within the 3-month horizon (91 days)")
        dated = (k, i) in due_columns
        due = sc.deadline(p.classes[k].deadline if dated else None)
        due = sc.horizon_hours if due is None else due
        if due is not None and c.planned_hours * 24.0 / lend > due * (1 + 1e-9) - c.start_hours * sc.lead_scale:
            yield k, i, c, min(in_turn(p, sc, c), p.classes[k].multiplicity) if dated else 1


def _full_time_rows(m: Model, g: str, sv: pulp.LpAffineExpression) -> None:
    """serve_full_g_k_i: a job that cannot finish in the lent hours runs on GPUs that serve no one."""
    for k, i, c, share in off_peak_too_slow(m.problem, m.sc, g, m.pairs()):
        m.prob += m.N[g] >= c.count / share * m.y[k, i] + sv, f"serve_full_{safe(g)}_{k}_{i}"


def _too_slow_shared(problem: Problem, sol: Solution, sc: Scenario, g: str, n: int, serving: int) -> list[str]:
    """The plan check of _full_time_rows on a solved plan's `n` bought g, `serving` of them serving."""
    pairs = [(c.cls, j, c) for j, (c, _) in enumerate(sol.assignment)]
    return [
        f"{problem.classes[k].name(problem.workload)} cannot finish in time (its deadline, the makespan cap or the "
        f"horizon) in the off-peak hours the "
        f"serving {g} lend, and only {n - serving} of its {c.count} GPUs serve no one"
        for k, j, c, share in off_peak_too_slow(problem, sc, g, pairs)
        if serving and c.count * sol.assignment[j][1] / share + serving > n * (1 + 1e-9)
    ]


def spare_rate(m: Model, k: int) -> pulp.LpVariable:
    """D_k: the requests/s of the largest replica class k uses (what one failed GPU takes down)."""
    down = m.prob.add_variable(f"spare_{k}", lowBound=0)
    for i, c in enumerate(m.scands[k]):
        used = m.uses[k, i] = m.prob.add_variable(f"uses_{k}_{i}", cat="Binary")
        m.prob += m.r[k, i] <= (m.r[k, i].upBound or 0) * used, f"serve_uses_{k}_{i}"
        m.prob += down >= m.counted_rate(k, c) * used, f"serve_spare_{k}_{i}"
    return down


def billed_in_nodes(m: Model, key: BillKey, idle: pulp.LpVariable, name: str) -> None:
    """serve_nodes_g_o (and serve_block_g_o): the serving GPUs of type g rented from one offer o and the idle
    ones billed with them fill whole units of the offer, at least its minimum block (solve/serving_nodes.py)."""
    mine = m.billed_layouts(key)
    offer = mine[0][2].offer.offer if mine and mine[0][2].offer else None
    assert offer is not None  # (Model.billed_nodes makes I[g,o] only for layouts rented from an offer)
    node_rows(m.prob, offer, [(m.r[k, i], c.gpus) for k, i, c in mine], idle, m.nodes[key], name)


def held_with_one_down(sol: Solution, k: int, spare: bool, speed: Mapping[str, float] | None = None) -> float:
    """The requests/s class k's replicas sustain with its largest replica down (n+1), or all up; at the
    `speed` of each GPU (a scenario's speed_factor, as the rows count it: Model.counted_rate)."""
    speed = speed or {}
    mine = [(c.requests_per_s * speed.get(c.gpu, 1.0), n) for c, n in sol.serving if c.cls == k and n > 0]
    total = sum(rate * n for rate, n in mine)
    return total - max((rate for rate, _ in mine), default=0.0) if spare else total


class Serving(Family):
    name = "serving"

    def rows(self, m: Model) -> None:
        for k, cs in enumerate(m.scands):
            down = spare_rate(m, k) if m.problem.serve_classes[k].spare else 0
            if not isinstance(down, int):
                m.down[k] = down
            m.prob += (
                pulp.lpSum(m.counted_rate(k, c) * m.r[k, i] for i, c in enumerate(cs)) - down >= m.peak(k),
                f"serve_{k}",
            )
        p = m.problem
        due, planned = due_levels(p, m.sc), at_planned_hours(p, m.sc)
        for g in sorted({c.gpu for _, _, c in m.serve_pairs() if c.ownership == "buy"}):
            sv = _owned_serving(m, g)
            until = max(p.serve_classes[k].hours for k, _, c in m.serve_pairs() if c.gpu == g and c.ownership == "buy")
            held = pulp.lpSum(m.H[g, lv] for lv, h in enumerate(p.holdings[g]) if h.hours >= until * (1 - 1e-9))
            m.prob += held >= sv, f"serve_fleet_{safe(g)}"
            kept = _owned_serving(m, g, lent=False)
            for (gg, n), z in m.z.items():
                if gg == g:
                    m.prob += m.N[g] >= n * z + kept, f"serve_fleet_{safe(g)}_{n}"
            _full_time_rows(m, g, sv)
            for level, limit in enumerate(sorted(set(due) - {math.inf})):
                terms = [
                    counted_hours(c, planned[k]) * m.y[k, i]
                    for k, i, c in m.pairs()
                    if c.gpu == g and c.ownership == "buy" and due[k] <= limit
                ]
                if terms:
                    room = pulp.lpSum(
                        held_hours(p, m.sc, g, limit, lv) * m.H[g, lv] for lv in range(len(p.holdings[g]))
                    )
                    busy = pulp.lpSum(
                        c.gpus * m.r[k, i] * serving_hours(p, m.sc, g, limit, k)
                        for k, i, c in m.serve_pairs()
                        if c.gpu == g and c.ownership == "buy"
                    )
                    m.prob += pulp.lpSum(terms) <= room - busy, f"serve_capacity_{safe(g)}_{level}"
                    m.serve_capacity_gpu[f"serve_capacity_{safe(g)}_{level}"] = g
        for key, idle in m.idle.items():
            billed_in_nodes(m, key, idle, bill_name(key, m.idle))

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out = []
        classes, sel = problem.serve_classes, problem.workload.gpus
        own = problem.workload.deployment.ownership
        for c, _ in sol.serving:
            if (sel.allow is not None and c.gpu not in sel.allow) or c.gpu in sel.deny:
                out.append(f"{c.gpu} serves {classes[c.cls].name} against gpus.allow/deny")
            if own not in ("any", c.ownership):
                out.append(f"{c.gpu} serving is {c.ownership} against deployment.ownership {own}")
            if c.ownership == "rent" and "on_demand" not in problem.workload.deployment.rent_kinds:
                out.append(f"{c.gpu} is rented on demand to serve {classes[c.cls].name} against deployment.rent_kinds")
        for k, cls in enumerate(classes):
            peak, held = cls.peak_rps * sc.traffic_factor, held_with_one_down(sol, k, cls.spare, sc.speed_factor)
            if held < peak * (1 - 1e-9) - 1e-9:
                out.append(
                    f"{cls.name}: replicas sustain {held:.6g} requests/s of the {peak:.6g} at peak"
                    + (" with one replica down (availability n+1)" if cls.spare else "")
                )
        for g, n in sol.bought.items():
            serve_gpus = sol.serving_owned(g)
            if serve_gpus > n:
                out.append(f"serving uses {serve_gpus} {g} but only {n} are bought")
            out += _too_slow_shared(problem, sol, sc, g, n, serve_gpus)
        for key, offer in serving_node_offers(c for c, _ in sol.serving).items():
            used = sum(c.gpus * n for c, n in sol.serving if bill_key(c) == key)
            paid = used + sol.serving_idle.get(key, (0, None))[0]
            if paid < billed_gpus(offer, used):
                out.append(
                    f"{used} {key[0]} rented to serve are billed by {offer.provider} as {billed_gpus(offer, used)}, "
                    f"the plan pays for {paid}"
                )
        return out

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        out = []
        for k, cls in enumerate(problem.serve_classes):
            cap = held_with_one_down(sol, k, cls.spare)
            out.append(
                Slack(
                    self.name,
                    f"serve:{cls.name}",
                    cap,
                    cls.peak_rps,
                    cap - cls.peak_rps,
                    "requests/s",
                    binds(cap - cls.peak_rps, cls.peak_rps),
                    facts={"name": cls.name},
                )
            )
        return out
