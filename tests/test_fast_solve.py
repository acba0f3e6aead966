"""The fast re-solve path (one HiGHS model per problem, scenarios as cost/bound changes) means
the same as a fresh PuLP build: for each scenario, both agree on feasibility and on the least
cost within the gap, whatever order the scenarios come in. And each break-even a plan reports
holds when re-solved from scratch at the claimed point."""
from __future__ import annotations

import json

import pytest
from conftest import AS_OF, EXAMPLES

from advisor.inputs.workload import load_workload
from advisor.plan import plan, prepare
from advisor.solve.milp import _solve_pulp, solve
from advisor.solve.scenario import baseline

GAP = 1e-4


def _scenarios(problem):
    base = baseline(problem)
    first = solve(problem)
    chosen = min(first.gpu_types())
    others = [g for g in problem.considered if g not in problem.rejected and g != chosen][:3]
    out = [base, base.but(price_factor={chosen: 1.5}), base.but(price_factor={chosen: 4.0}),
           base.but(price_factor={chosen: 0.5}), base.but(budget_usd=None),
           base.but(deadline_scale=1.5), base.but(deadline_scale=0.5),
           base.but(makespan_hours=max(c.hours for c in first.chosen) * 0.8),
           base.but(price_factor={chosen: 1.5}),      # the same scenario again, after others
           base.but(rent_factor={chosen: 2.0}, buy_factor={chosen: 0.7})]
    out += [base.but(only_gpu=g) for g in others]
    out += [base.but(only_gpu=chosen, price_factor={chosen: 3.0})]
    if problem.workload.budget_usd is not None:
        out.append(base.but(budget_usd=problem.workload.budget_usd * 0.5))
    return out


@pytest.mark.parametrize("example", ["article-office", "article-datacenter", "lora-7b-workstation",
                                     "rent-vs-buy-3y", "llama-70b-budget"])
def test_fast_path_agrees_with_a_fresh_build(example, catalog, rules):
    problem = prepare(load_workload(EXAMPLES / f"{example}.yaml"), catalog, rules, AS_OF)
    for sc in _scenarios(problem):
        fast = solve(problem, sc, gap=GAP)
        fresh = _solve_pulp(problem, sc, 30.0, GAP)
        assert fast.feasible == fresh.feasible, sc
        if fresh.feasible:
            assert fast.objective_usd == pytest.approx(fresh.objective_usd, rel=2 * GAP + 1e-9), sc
            assert fast.status == fresh.status


@pytest.mark.parametrize("example", ["article-datacenter", "lora-7b-workstation", "rent-vs-buy-3y"])
def test_each_break_even_flips_the_choice_when_re_solved_from_scratch(example, example_plan, catalog, rules):
    _, p = example_plan(example)   # `advisor plan examples/EXAMPLE.yaml --as-of AS_OF --format json`
    problem = prepare(load_workload(EXAMPLES / f"{example}.yaml"), catalog, rules, AS_OF)
    base = baseline(problem)
    for b in p["sensitivity"]["break_even"]:
        if b["factor"] is None:
            continue
        gpu, f = b["gpu"], b["factor"]
        # the bisection's precision is 1% of the price (0.01 in the factor): step beyond it
        below = _solve_pulp(problem, base.but(price_factor={gpu: f * 0.97 - 0.01}), 30.0, GAP)
        above = _solve_pulp(problem, base.but(price_factor={gpu: f * 1.03 + 0.01}), 30.0, GAP)
        # rise: chosen below the factor, not above; fall: the runner-up chosen at or below it
        assert gpu in below.gpu_types() and gpu not in above.gpu_types(), b


def test_explanation_solves_are_reported(example_plan, catalog, rules):
    _, p = example_plan("article-office")   # the JSON of the plan with every explanation
    ex = p["solver"]["explanations"]
    assert ex["solves"] > 0 and ex["gap_limit"] == 0.01 and ex["approximate"] is False
    none = json.loads(plan(load_workload(EXAMPLES / "article-office.yaml"), catalog=catalog, rules=rules,
                           as_of=AS_OF, explain="alternatives").to_json())   # compared as JSON, like p
    assert none["sensitivity"] == {"break_even": [], "marginal": []}
    assert none["total_cost_usd"] == p["total_cost_usd"]
