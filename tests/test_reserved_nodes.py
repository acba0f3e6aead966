"""Jobs that rent on a reservation share its nodes (solve/reserved.py): a reservation is sold in whole
nodes for a term, and two 4-GPU jobs on 1-year terms fit in one 8-GPU node for one term. Review
defect 3: the plan billed each job its own node for its own term ($494,877 where one node holds both
for $247,382). Each figure is checked against an independent re-computation: the offer's price x
node x term by hand, a re-solve with the two jobs merged into one 8-GPU job (a single job: no pool),
the fast path against a fresh build and the robustness draws against full solves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import AS_OF
from test_fleet_size_several_jobs import TWO_RESERVED as TWO_JOBS  # (one copy of the workload)

from advisor.cli import main
from advisor.flow import prepare
from advisor.inputs.units import HOURS_PER_YEAR
from advisor.inputs.workload import load_workload
from advisor.solve.milp import solve

MERGED = """\
name: the two jobs as one 8-GPU job
deployment: {context: cloud, ownership: rent, rent_kinds: [reserved_1y]}
jobs:
  - {name: ab, kind: pretrain, model: llama-3-8b, tokens: 200B, deadline: 240d}
gpus: {allow: [a100-80gb-sxm], count: 8}
decision: point
"""
IN_TURN = """\
name: sixty fine-tunes in turn on one reservation
deployment: {context: cloud, ownership: rent, rent_kinds: [reserved_1y], horizon_months: 12}
jobs:
  - {name: ft, kind: finetune, model: llama-3-8b, tokens: 2B, repeat: 60}
gpus: {allow: [a100-80gb-sxm]}
decision: point
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--as-of", AS_OF.isoformat()], catch_exceptions=False)
    return result.exit_code, result.output


def _plan(path: Path) -> dict[str, Any]:
    code, out = _cli("plan", str(path), "--format", "json")
    assert code == 0, out[:2000]
    return json.loads(out)


def _one_node_term(plan: dict[str, Any]) -> float:
    """By hand: the offer's price x one node's GPUs x the 1-year term (8,760 h)."""
    (row,) = [p for p in plan["purchase"] if p["ownership"] == "rent"]
    assert row["rent_kind"] == "reserved_1y" and row["term_months"] == 12
    return row["unit_price_usd"] * row["gpus_per_node"] * HOURS_PER_YEAR


def test_two_jobs_on_a_reservation_rent_one_node_for_one_term(tmp_path: Path) -> None:
    """Two 4-GPU jobs (deadline 120 days, 84 days each) on a 1-year reservation of 8-GPU nodes: one
    node for one term, $3.53 x 8 x 8,760 = $247,382.40 of rent, and the cash line, the purchase row, the
    bill of materials and the memo say the same."""
    plan = _plan(_write(tmp_path, "two", TWO_JOBS))
    (job,) = plan["jobs"]
    assert job["gpu_count"] * job["copies"] == 8  # both 4-GPU jobs at once: one node's worth
    rent = _one_node_term(plan)
    assert rent == pytest.approx(247_382.40, abs=0.01)
    assert plan["cost_breakdown"]["rental_usd"] == pytest.approx(rent, abs=0.01)
    assert plan["nominal_cost_usd"] == pytest.approx(sum(plan["cost_breakdown"].values()), abs=0.01)
    (row,) = [p for p in plan["purchase"] if p["ownership"] == "rent"]
    assert row["count"] == row["billed_gpus"] == row["gpus_per_node"], row
    assert row["billed_gpu_hours"] == pytest.approx(row["gpus_per_node"] * HOURS_PER_YEAR)
    (line,) = [b for b in plan["bill_of_materials"] if "rented" in b["item"]]
    assert line["total_usd"] == pytest.approx(rent, abs=0.01)
    code, memo = _cli("memo", str(_write(tmp_path, "two", TWO_JOBS)), "-o", "-", "--format", "md")
    assert code == 0, memo[:2000]
    assert f"${plan['nominal_cost_usd']:,.0f} in cash" in memo
    assert f"${rent:,.2f}" in memo and f"{row['billed_gpu_hours']:,.0f} GPU-hours billed" in memo


def test_the_two_jobs_cost_what_one_merged_8_gpu_job_does(tmp_path: Path) -> None:
    """Re-solved as one job of both jobs' tokens on 8 GPUs (a single job: billed its own node, no pool),
    the rent is the same one node for one term."""
    two, merged = _plan(_write(tmp_path, "two", TWO_JOBS)), _plan(_write(tmp_path, "merged", MERGED))
    assert merged["cost_breakdown"]["rental_usd"] == pytest.approx(_one_node_term(merged), abs=0.01)
    assert two["cost_breakdown"]["rental_usd"] == pytest.approx(merged["cost_breakdown"]["rental_usd"], abs=0.01)


def test_a_cash_budget_between_one_and_two_nodes_is_met(tmp_path: Path) -> None:
    """A $300,000 cash cap holds one node's term ($247,494 with the storage) but not two: the plan
    exists and its cash is within the cap (the budget row counts the shared node, as the plan does)."""
    plan = _plan(_write(tmp_path, "capped", TWO_JOBS + "budget_usd: 300000\n"))
    assert plan["nominal_cost_usd"] <= 300_000
    assert plan["cost_breakdown"]["rental_usd"] == pytest.approx(_one_node_term(plan), abs=0.01)


def test_copies_with_no_deadline_run_in_turn_within_one_term(tmp_path: Path) -> None:
    """Sixty fine-tunes with no deadline on a 1-year reservation run one after another on one node: one
    term's rent, by hand, where each copy paid its own node for its own term before."""
    plan = _plan(_write(tmp_path, "turn", IN_TURN))
    (job,) = plan["jobs"]
    (row,) = [p for p in plan["purchase"] if p["ownership"] == "rent"]
    assert job["copies"] * job["wall_days_planned"] * 24 <= HOURS_PER_YEAR  # they fit in the term in turn
    assert row["billed_gpus"] == row["gpus_per_node"] and job["gpu_count"] <= row["gpus_per_node"], (row, job)
    assert plan["cost_breakdown"]["rental_usd"] == pytest.approx(_one_node_term(plan), abs=0.01)


@pytest.mark.parametrize("text", [TWO_JOBS, IN_TURN], ids=["at-once", "in-turn"])
def test_speed_scenarios_agree_with_a_fresh_build(tmp_path: Path, text: str) -> None:
    """The fast path's speed models re-count each pooled job's share (fewer copies fit in the term in
    turn when it runs slower; a job slowed past its term leaves its pool): each speed scenario costs
    what a fresh build of it does."""
    from advisor.solve.milp import solve_pulp
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    problem = prepare(load_workload(_write(tmp_path, "w", text)), as_of=AS_OF)
    for factor in (0.05, 0.1, 0.3, 0.6, 1.7, 3.0):
        sc = baseline(problem).but(speed_factor={"a100-80gb-sxm": factor})
        fast = solve(problem, sc, SolveSettings(gap=1e-6))
        fresh = solve_pulp(problem, sc, 60.0, 1e-6)
        assert fast.feasible == fresh.feasible, factor
        if fast.feasible:
            assert fast.objective_usd == pytest.approx(fresh.objective_usd, rel=1e-6), factor


@pytest.mark.parametrize("text", [TWO_JOBS, IN_TURN], ids=["at-once", "in-turn"])
def test_robustness_draws_choose_and_cost_what_a_full_solve_does(tmp_path: Path, text: str) -> None:
    """A draw re-prices the shared model's pools (solve/offer_columns.PoolColumns): each draw's plan
    and its cost are those of a full solve of that draw's speed and rent, and the plan's drawn cost at
    every factor 1 is its own present value (explain/plan_cost.PlanCost: the pool's node, not each job's)."""
    from advisor.explain.plan_cost import PlanCost
    from advisor.solve.redraw import Redraw, signature
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    problem = prepare(load_workload(_write(tmp_path, "w", text)), as_of=AS_OF)
    plan = solve(problem)
    assert PlanCost.of(problem, plan).point == pytest.approx(plan.objective_usd, rel=1e-9)
    g = "a100-80gb-sxm"
    redraw = Redraw(problem, baseline(problem), {g: 1.0}, SolveSettings(gap=1e-6))
    assert redraw.model is not None
    for speed, rent in (((1.0, 1.0)), (0.6, 1.3), (0.3, 0.7), (0.1, 1.0), (0.05, 1.0)):
        sc = baseline(problem).but(speed_factor={g: speed}, rent_factor={g: rent})
        full = solve(problem, sc, SolveSettings(gap=1e-6))
        got = redraw.choice({g: speed}, {}, {g: rent})
        assert (got is None) == (not full.feasible), (speed, rent)
        if got is None:
            continue
        assert got[1] == signature(problem, full.bought, full.assignment, full.serving), (speed, rent)
        drawn = redraw.h.getInfo().objective_function_value  # with the tie-break: 1e-6 $ per hour
        assert drawn == pytest.approx(
            full.objective_usd - full.cost_breakdown["storage_usd"] - full.cost_breakdown["tax_usd"], rel=1e-6
        ), (speed, rent)


def test_team_fleets_a100_40gb_plan_pairs_its_4_gpu_copies_on_capacity_block_nodes() -> None:
    """The one example figure this moves (team-fleet's forced A100 40GB alternative, $10,849 -> $10,596):
    its four 4-GPU llama8b-sft copies (deadline 7 days, 23 h each) on AWS capacity blocks of 8-GPU nodes
    billed by the day pair up, two to a node: 2 nodes x 8 GPUs x 24 h x the offer's rate, by hand."""
    import math

    from advisor.solve.reserved import paid_training, pool_nodes
    from advisor.solve.scenario import baseline

    problem = prepare(load_workload(Path(__file__).parents[1] / "examples" / "team-fleet.yaml"), as_of=AS_OF)
    plan = solve(problem, baseline(problem).but(only_gpu="a100-40gb-sxm"))
    ((nodes, rep),) = pool_nodes(problem, plan.assignment).values()
    (copies,) = [n for c, n in plan.assignment if c.kind == "capacity_block" and c.count == 4]
    assert rep.offer is not None and rep.offer.node_gpus == 8 and rep.billed_hours == 24
    assert nodes == math.ceil(copies * 4 / 8) == 2
    rent = sum(c.run_cost_usd * n for c, n in paid_training(problem, plan.assignment) if c is rep)
    assert rent == pytest.approx(nodes * 8 * 24 * rep.offer.rate, abs=0.01)
