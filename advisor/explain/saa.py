"""The exact sample-average MILP: the reference the decision (explain/decision.py) is checked
against (bench/decision.py, tests/test_decision.py), not part of a plan's flow.

One first-stage decision (GPUs bought, servers, fabric, every job's candidate and every serving
replica) shared by all n draws, each draw's cost a linear expression of it at that draw's factors
(explain/plan_cost.py: purchase x b, owned energy / s, rent x its offer's r x what it bills at s), deadlines held at the
workload's confidence as in every solve:

* mean (the expected basis): minimise (1/n) sum_s cost_s;
* quantile (p80 / p90): minimise t subject to cost_s - t <= M u_s with u_s binary and
  sum_s u_s <= floor((1 - q) n): t is then at least the ceil(q n)-th smallest cost (the draws'
  q-quantile, order-statistic rule). One binary per draw: seconds to minutes;
* cvar: minimise t + sum_s max(0, cost_s - t) / ((1 - q) n), the mean of the worst 1 - q share
  of draws (Rockafellar and Uryasev 2000): a linear program over the same first stage, an upper
  bound on the q-quantile, fast enough to be one of the p80/p90 decision's candidates.
"""

from __future__ import annotations

import math
from typing import Any

import pulp

from advisor.explain.draws import Draws
from advisor.explain.plan_cost import run_term
from advisor.solve.constraints.gpu_count import Held
from advisor.solve.formulation import build_model
from advisor.solve.milp import run_model
from advisor.solve.model import Model
from advisor.solve.problem import Problem
from advisor.solve.reserved import training_terms
from advisor.solve.scenario import baseline
from advisor.solve.solution import Solution, read_solution
from advisor.solve.usable import usable_candidates


def draw_costs(m: Model, draws: Draws, held: Held | None = None) -> list[pulp.LpAffineExpression]:
    """Per draw, the model's present-value cost at that draw's factors (a GPU the draws do not cover
    stays at its catalog figures), each rent drawn at its order and the GPUs `held` at once on its
    provider (gpu_count.held_counts of the plan the search starts from), as that plan's rows grade it."""
    col = {g: draws.column(g) for g in draws.gpus}
    per_price = {g: m.per_price_usd(g) for g in m.N}
    priced = {
        g: [(v, m.price(g) * per_price[g][0])]
        + [(m.H[g, lv], m.price(g) * c) for lv, c in enumerate(per_price[g][1]) if (g, lv) in m.H]
        for g, v in m.N.items()
    }
    purchase = pulp.lpSum(c * v for g in priced for v, c in priced[g])
    bridges = m.bridge_terms()  # rent until bought serving GPUs arrive
    run = (
        pulp.lpSum(c.run_cost_usd * w * v for v, c, w in training_terms(m))
        + pulp.lpSum(c.run_cost_usd * m.r[k, i] for k, i, c in m.serve_pairs())
        + pulp.lpSum(b.run_cost_usd * w * v for v, b, w in bridges)
    )
    fixed = m.total - purchase - run  # servers, fabric, hosting: not drawn
    moved: dict[int, list[float]] = {}  # per candidate (by id): its run cost's factor in each draw

    def factor(c: Any, s: int) -> float:
        if c.gpu not in col:
            return 1.0
        if id(c) not in moved:  # its offer's rate x what it bills at the drawn speed (plan_cost.RunTerm)
            t = run_term(m.problem, c, 1.0, held)
            moved[id(c)] = (t.rates(draws) * t.scale(t.speeds(draws))).tolist()
        return moved[id(c)][s]

    out = []
    for s in range(draws.n):
        terms = [(v, c * (float(draws.buy[s, col[g]]) if g in col else 1.0)) for g in priced for v, c in priced[g]]
        terms += [(v, c.run_cost_usd * w * factor(c, s)) for v, c, w in training_terms(m)]
        terms += [(m.r[k, i], c.run_cost_usd * factor(c, s)) for k, i, c in m.serve_pairs()]
        terms += [(v, b.run_cost_usd * w * factor(b, s)) for v, b, w in bridges]
        out.append(fixed + pulp.LpAffineExpression(terms))
    return out


def saa_plan(
    problem: Problem,
    draws: Draws,
    objective: str = "mean",
    q: float = 0.8,
    time_limit: float | None = 60.0,
    gap: float = 1e-4,
    held: Held | None = None,
) -> Solution | None:
    """The exact sample-average optimum over `draws`, costed at the catalog's figures (None when no
    plan meets the constraints): objective "mean" (the expected basis), "quantile" (the q-quantile of
    cost: p80, p90) or "cvar" (the mean of the worst 1 - q share of draws, an upper bound on the
    q-quantile that needs no binaries: what the p80/p90 decision adds to its candidates). `held`: the GPUs
    held at once per (GPU, provider) each rent is graded at (draw_costs)."""
    sc = baseline(problem)
    cands = usable_candidates(problem, sc)
    if any(not cs for cs in cands):
        return None
    m = build_model(problem, sc, cands, redrawn=True)  # costed at every draw's prices: no bridge dropped on one
    costs = draw_costs(m, draws, held)
    if objective == "cvar":
        t = m.prob.add_variable("saa_t")
        excess = [m.prob.add_variable(f"saa_e_{s}", lowBound=0) for s in range(draws.n)]
        for s, cost in enumerate(costs):
            m.prob += excess[s] >= cost - t, f"saa_excess_{s}"
        m.prob.setObjective(t + pulp.lpSum(excess) * (1.0 / ((1 - q) * draws.n)) + m.tie_break())
    elif objective == "quantile":
        t = m.prob.add_variable("saa_t")
        u = [m.prob.add_variable(f"saa_u_{s}", cat="Binary") for s in range(draws.n)]
        big = _big_m(m, draws)
        for s, cost in enumerate(costs):
            m.prob += cost - t <= big * u[s], f"saa_tail_{s}"
        m.prob += pulp.lpSum(u) <= math.floor((1 - q) * draws.n + 1e-9), "saa_tail_count"
        m.prob.setObjective(t + m.tie_break())
    else:
        m.prob.setObjective(pulp.lpSum(costs) * (1.0 / draws.n) + m.tie_break())
    name, status, proven = run_model(m.prob, time_limit, gap)
    if status == "Infeasible":
        return None
    return read_solution(m, name, status, proven, None, pulp.value(m.total))


def _big_m(m: Model, draws: Draws) -> float:
    """An upper bound on any draw's cost: every variable at its upper bound, at the dearest factors."""
    p = m.problem
    speeds = [draws.speed] + ([draws.serve] if draws.serve is not None else [])  # a replica's throughput too
    worst = float(
        max(draws.buy.max(), *((draws.rent / s).max() for s in speeds), *((1.0 / s).max() for s in speeds), 1.0)
    )
    bound = 0.0
    for v, coef in m.total.items():
        hi = v.upBound if v.upBound is not None else 10 * max(p.job_count, 1) * 1000
        bound += abs(coef) * hi
    return 2.0 * worst * bound
