"""A re-solve handed a start (solve/run.py start_from: the plan of the same problem at other prices,
what the price break-evens start from) proves the same optimum as a cold solve: on a MILP worked by
hand, whatever the start (the old optimum, now dearer; an infeasible one; the optimum itself), and on
a serving example's re-pricings, where the plan found is the cold solve's."""

from __future__ import annotations

import pulp
import pytest
from conftest import AS_OF, EXAMPLES

from advisor.explain.sensitivity import priced
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.milp import run_model, solve
from advisor.solve.settings import SolveSettings

pytest.importorskip("highspy")


def _units(price_b: float) -> tuple[pulp.LpProblem, pulp.LpVariable, pulp.LpVariable]:
    """min 3a + price_b b  s.t. 2a + 4b >= 7, a, b integers in [0, 10]. By hand: at price_b = 5 the
    plans are (0, 2) = 10, (2, 1) = 11, (4, 0) = 12, so (0, 2); at price_b = 7 they cost 14, 13 and 12,
    so (4, 0)."""
    prob = pulp.LpProblem("units", pulp.LpMinimize)
    a = prob.add_variable("a", 0, 10, cat="Integer")
    b = prob.add_variable("b", 0, 10, cat="Integer")
    prob += 3 * a + price_b * b
    prob += 2 * a + 4 * b >= 7, "need"
    return prob, a, b


@pytest.mark.parametrize(
    ("price_b", "start", "want"),
    [
        (7.0, {"a": 0.0, "b": 2.0}, (4, 0, 12.0)),  # the optimum at price 5, feasible and now dearer
        (5.0, {"a": 0.0, "b": 2.0}, (0, 2, 10.0)),  # the optimum itself
        (5.0, {"a": 0.0, "b": 0.0}, (0, 2, 10.0)),  # infeasible: HiGHS drops it
        (7.0, {"a": 10.0, "b": 10.0}, (4, 0, 12.0)),  # feasible, far from the optimum
    ],
)
def test_a_started_solve_proves_the_hand_worked_optimum(price_b, start, want):
    for given in (None, start):
        prob, a, b = _units(price_b)
        name, status, proven = run_model(prob, 30.0, 1e-4, given)
        assert (name, status, proven) == ("highs", "Optimal", True)
        assert (round(a.value()), round(b.value()), pulp.value(prob.objective)) == pytest.approx(want)


def test_re_pricings_started_from_the_plan_find_the_cold_solves_plans(catalog, rules):
    problem = prepare(load_workload(EXAMPLES / "serve-8b-office.yaml"), catalog, rules, AS_OF)
    settings = SolveSettings()
    plan = solve(problem, None, settings)
    assert plan.feasible and plan.columns  # the PuLP path keeps the plan's columns to start from
    gpu, own = next((c.gpu, c.ownership) for c, _ in plan.serving)
    for factor in (0.5, 1.3, 2.0, 8.0):
        sc = priced(problem, gpu, own, factor)
        cold, warm = solve(problem, sc, settings), solve(problem, sc, settings, start=plan)
        assert warm.objective_usd == pytest.approx(cold.objective_usd, rel=1e-9), factor
        assert (warm.bought, warm.serving, warm.assignment) == (cold.bought, cold.serving, cold.assignment), factor
