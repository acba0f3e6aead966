"""What a solved model's plan costs and takes, read from its variables' values: the fast solver
(solve/fast.py) compares the first plan with the idle-GPU polish's on these, and weighs its columns
by them."""

from __future__ import annotations

import math

from advisor.solve.model import Model
from advisor.solve.problem import Candidate
from advisor.solve.reserved import training_terms
from advisor.solve.server_terms import servers_held_value


def plan_cost(model: Model) -> float:
    """The cost of a solved model's plan (run costs and what is owned), without the tie-break."""
    return float(
        sum(model.run_cost(c) * w * (v.value() or 0.0) for v, c, w in training_terms(model)) + owned_value(model)
    )


def cost_gap(model: Model, bound: float) -> float:
    """How far a solved model's plan cost lies above a proven lower bound, relative to the cost."""
    cost = plan_cost(model)
    return max(0.0, (cost - bound) / cost) if cost > 0 and math.isfinite(bound) else math.inf


def plan_hours(model: Model) -> float:
    """The GPU-hours of a solved model's plan: what the idle-GPU polish makes smaller."""
    return float(sum(c.hours * (model.y[k, i].value() or 0.0) for k, i, c in model.pairs()))


def run_columns(model: Model) -> list[tuple[str, Candidate]]:
    """(PuLP variable name of y[k,i], candidate) of a model: the columns the tie-break weighs."""
    return [(model.y[k, i].name, c) for k, i, c in model.pairs()]


def owned_value(model: Model) -> float:
    """Purchase, servers, networking, and holding (hosting less resale) of the model's current
    values, at its scenario's prices, in present value."""
    p = model.problem
    total = 0.0
    for g, n in model.N.items():
        total += model.buy_cost(g) * (n.value() or 0.0)
        for s in p.servers.get(g, []):
            total += model.server_cost(g, s) * (model.S[g, s.id].value() or 0.0)
        if g in model.F:
            total += model.F[g].value() or 0.0
        total += sum(model.hold_cost(g, lv) * (model.H[g, lv].value() or 0.0) for lv in range(len(p.holdings[g])))
    total += servers_held_value(p, model.SX, model.S, (model.H, model.K), "present_value")
    return total + model.storage_usd
