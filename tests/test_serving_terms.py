"""What a serving plan's cash rests on beyond its replicas (explain/serving.py): bought GPUs serve
once they arrive, so with no rented layout allowed the plan says on which day (the bridge rented
until then: tests/test_serving_bridge.py); a rental sold by whole nodes bills the serving GPUs in whole nodes, and the plan pays for
them (solve/serving_nodes.py). Each figure is re-computed here from the catalog's rate."""

from __future__ import annotations

import dataclasses
import math

import pytest
from conftest import AS_OF

SERVE = (
    "kind: serve\nmodel: llama-3.1-8b\nprecision: fp8\nslo: {ttft_ms: 2000, tpot_ms: 100}\n"
    "traffic: {requests_per_s: 20, input_tokens: 1000, output_tokens: 300}\n"
)


def _warning(plan: dict, code: str) -> str:
    (found,) = [w["message"] for w in plan["warnings"] if w["code"] == code]
    return found


def test_a_buy_only_deployment_is_told_to_plan_the_launch(plan_json, write):
    code, plan = plan_json(write("name: launch\ndeployment: {context: datacenter, ownership: buy}\n" + SERVE))
    assert code == 0 and "No rented layout is allowed here" in _warning(plan, "serving-starts-late")


def test_a_rental_sold_by_whole_nodes_bills_the_serving_gpus_in_whole_nodes(plan_json, write, catalog, run):
    """Nebius rents H200 by the 8-GPU VM: two 1-GPU replicas were priced as 2 GPUs ($183,960 over 36
    months) for an offer that bills 8 ($735,840). The MILP now bills whole nodes (serve_nodes_g), and
    the memo's sentence says what is billed beside the GPU-hours used, so its figures add up."""
    import advisor

    path = write("name: nodes\ndeployment: {context: datacenter, ownership: rent}\ngpus: {allow: [h200-sxm]}\n" + SERVE)
    code, plan = plan_json(path)
    offer = catalog.gpus["h200-sxm"].rental
    used = sum(r["gpu_count"] for r in plan["serving"])
    billed = math.ceil(used / offer.gpus_per_node) * offer.gpus_per_node
    (row,) = plan["purchase"]
    assert code == 0 and offer.whole_nodes and (row["count"], row["billed_gpus"]) == (used, billed)
    hours = max(r["months"] for r in plan["serving"]) * 730
    assert plan["nominal_cost_usd"] == pytest.approx(billed * offer.usd_per_gpu_hour * hours, abs=0.01)
    assert sum(b["total_usd"] for b in plan["bill_of_materials"] if b["total_usd"]) == pytest.approx(
        plan["nominal_cost_usd"], abs=0.01
    )
    text = advisor.memo(plan, path, fmt="md", charts=False).text
    assert f"up to {used} at once, billed as {billed} GPUs (the provider rents whole nodes)" in text
    code, table, _ = run("plan", path, "--as-of", AS_OF, "--section", "buy")
    assert row["billed_gpu_hours"] == pytest.approx(billed * hours)  # the idle GPUs of the node are paid too
    assert code == 0 and f"{billed * hours:,.0f} GPU-hours billed for {row['gpu_hours']:,.0f} used" in table
    assert f"billed as {billed} (whole nodes)" in table


def test_the_plan_check_refuses_serving_gpus_billed_short_of_whole_nodes(catalog, rules):
    """verify's serving family: a plan paying for fewer rented GPUs than the offer bills is refused."""
    from advisor.flow import prepare
    from advisor.inputs.workload import parse_workload
    from advisor.solve.constraints.serving import Serving
    from advisor.solve.milp import solve
    from advisor.solve.scenario import baseline

    problem = prepare(
        parse_workload(
            {
                "name": "nodes",
                "deployment": {"context": "datacenter", "ownership": "rent"},
                "gpus": {"allow": ["h200-sxm"]},
                "kind": "serve",
                "model": "llama-3.1-8b",
                "precision": "fp8",
                "slo": {"ttft_ms": 2000, "tpot_ms": 100},
                "traffic": {"requests_per_s": 20, "input_tokens": 1000, "output_tokens": 300},
            }
        ),
        catalog,
        rules,
        AS_OF,
    )
    sol = solve(problem)
    assert sol.serving_idle and not Serving().violations(problem, sol, baseline(problem))
    short = dataclasses.replace(sol, serving_idle={})
    (msg,) = Serving().violations(problem, short, baseline(problem))
    assert "billed by Nebius (8x H200 SXM VM) as 8, the plan pays for 2" in msg


def test_a_rental_by_the_gpu_carries_no_serving_warning(plan_json, write):
    code, plan = plan_json(
        write("name: by the gpu\ndeployment: {context: datacenter, ownership: rent}\ngpus: {allow: [mi300x]}\n" + SERVE)
    )
    assert code == 0 and not [w for w in plan["warnings"] if w["code"] == "serving-starts-late"]
    assert all(r.get("billed_gpus") == r["count"] for r in plan["purchase"])


def test_a_budget_holds_the_whole_nodes_billed(plan_json, write):
    """The budget row counts the idle GPUs a whole-node offer bills: a budget at the printed cash plans
    the same GPUs, a budget $100 below it (still far above the GPUs the replicas use) has no plan."""
    base = "name: nodes\ndeployment: {context: datacenter, ownership: rent}\ngpus: {allow: [h200-sxm]}\n" + SERVE
    code, plan = plan_json(write(base))
    cash = plan["nominal_cost_usd"]
    used_cash = sum(r["gpu_hours"] * r["unit_price_usd"] for r in plan["purchase"])
    assert code == 0 and used_cash < cash - 100
    code, at = plan_json(write(base + f"budget_usd: {cash:.2f}\n", "at.yaml"))
    assert code == 0 and at["nominal_cost_usd"] <= cash and at["purchase"][0]["billed_gpus"] == 8
    code, _ = plan_json(write(base + f"budget_usd: {cash - 100:.2f}\n", "below.yaml"))
    assert code == 3
