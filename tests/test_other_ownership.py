"""The other way to own (issue 29 item 5): every explained plan states the best plan that rents
when it buys, or buys when it rents, and its cost is what planning the workload with that
ownership gives (an independent re-plan from the workload, not the plan's own re-solve)."""

from __future__ import annotations

import copy
import datetime as dt

import pytest
import yaml

import advisor

B200 = {
    "name": "70B on B200 in 60 days",
    "deployment": {"context": "datacenter", "ownership": "buy", "horizon_months": 36, "lead_time_days": 0},
    "gpus": {"allow": ["b200"]},
    "jobs": [{"model": "llama-3-70b", "tokens": "1T", "deadline": "60d"}],
}


def _with(workload: dict, **deployment) -> dict:
    wl = copy.deepcopy(workload)
    wl["deployment"].update(deployment)
    return wl


def _plan(workload: dict, explain: bool | str = True) -> dict:
    return advisor.plan(workload, as_of="2026-12-01", explain=explain).to_dict()


def test_a_bought_cluster_states_its_resale_disposal_month_and_the_rent_instead_cost():
    """The market issue's target: a 70B model on 1T tokens, bought as B200 for a 60-day job, is
    resold when its work is done (resale > 0, a month), and the plan states what renting costs;
    under `ownership: any` renting, which costs less here, is chosen, at that cost."""
    bought = _plan(B200)
    assert bought["purchase"][0]["ownership"] == "buy" and bought["purchase"][0]["lead_time_days"] == 0
    (sold,) = bought["disposal"]
    assert sold["when"] == "after_work" and 0 < sold["month"] <= 3 and sold["resale_usd"] > 0
    other = bought["other_ownership"]
    assert other["ownership"] == "rent" and other["status"] == "optimal"
    assert other["total_cost_usd"] < bought["total_cost_usd"]
    assert f"${other['total_cost_usd']:,.0f} present value" in other["message"]
    assert "deployment.ownership: buy" in other["message"]
    rented = _plan(_with(B200, ownership="rent"))
    assert other["total_cost_usd"] == pytest.approx(rented["total_cost_usd"], rel=2e-4)
    assert other["nominal_cost_usd"] == pytest.approx(rented["nominal_cost_usd"], rel=2e-4)
    chosen = _plan(_with(B200, ownership="any"))
    assert {p["ownership"] for p in chosen["purchase"]} == {"rent"}
    assert chosen["total_cost_usd"] == pytest.approx(rented["total_cost_usd"], rel=2e-4)
    assert chosen["other_ownership"]["ownership"] == "buy"
    assert chosen["other_ownership"]["total_cost_usd"] == pytest.approx(bought["total_cost_usd"], rel=2e-4)


def test_with_both_ownerships_allowed_the_other_way_is_the_plan_of_that_ownership_alone():
    with open("examples/rent-vs-buy-3y.yaml", encoding="utf-8") as f:
        wl = yaml.safe_load(f)
    plan = _plan(wl, "alternatives")
    other = plan["other_ownership"]
    mine = {p["ownership"] for p in plan["purchase"]}
    assert other["ownership"] == ("rent" if "buy" in mine else "buy")
    alone = _plan(_with(wl, ownership=other["ownership"]), "alternatives")
    assert other["total_cost_usd"] == pytest.approx(alone["total_cost_usd"], rel=2e-4)
    assert other["difference_usd"] == pytest.approx(other["total_cost_usd"] - plan["total_cost_usd"], abs=0.01)
    assert other["difference_usd"] >= -plan["solver"]["gap_limit"] * plan["total_cost_usd"]  # a subset of the choices
    assert [(p["gpu"], p["count"], p["ownership"]) for p in other["purchase"]] == [
        (p["gpu"], p["count"], p["ownership"]) for p in alone["purchase"]
    ]


@pytest.mark.slow
def test_a_cloud_workload_is_told_what_buying_and_hosting_in_a_datacenter_would_cost():
    with open("examples/serve-mixed-requests.yaml", encoding="utf-8") as f:
        wl = yaml.safe_load(f)
    other = _plan(wl, "alternatives")["other_ownership"]  # (the level that states it; no draws needed here)
    assert other["ownership"] == "buy" and other["site"] == "datacenter"
    assert "hosted in a datacenter" in other["message"]
    hosted = _plan(_with(wl, context="datacenter", ownership="buy"), "alternatives")
    assert other["total_cost_usd"] == pytest.approx(hosted["total_cost_usd"], rel=2e-4)


def test_a_cloud_workload_cheaper_bought_is_told_its_context_keeps_buying_out():
    """Where buying would cost less, the sentence says what keeps it out of the plan: for a cloud
    workload (`ownership: any` by default) that is its context, not its ownership."""
    wl = {
        "name": "cloud serving, five years",
        "deployment": {"context": "cloud", "horizon_months": 60},
        "jobs": [
            {
                "name": "chat",
                "kind": "serve",
                "model": "llama-3.1-70b",
                "precision": "fp8",
                "traffic": {"requests_per_s": 200, "input_tokens": 1000, "output_tokens": 300},
                "slo": {"ttft_ms": 2000, "tpot_ms": 100},
            }
        ],
    }
    plan = _plan(wl, "alternatives")
    other = plan["other_ownership"]
    assert other["ownership"] == "buy" and other["total_cost_usd"] < plan["total_cost_usd"]
    assert other["message"].endswith("the workload's deployment.context: cloud keeps it out of this plan")


def test_when_the_other_way_cannot_meet_the_limits_the_plan_says_which_limit_stops_it():
    """Buying cannot meet a 21-day deadline when the GPUs take weeks to arrive: the other-ownership
    line names the lead time, and the cost without it is the plan bought with the deadline moved
    out by the GPUs' arrival (delivery and burn-in), re-planned from the workload."""
    wl = {
        "name": "three weeks",
        "deployment": {"context": "datacenter", "ownership": "any"},
        "gpus": {"allow": ["h100-sxm"]},
        "jobs": [{"model": "llama-3-8b", "tokens": "20B", "deadline": "21d"}],
    }
    plan = _plan(wl)
    assert {p["ownership"] for p in plan["purchase"]} == {"rent"}
    other = plan["other_ownership"]
    assert other["status"] == "infeasible" and other["total_cost_usd"] is None
    assert "without the lead time limit it would cost $" in other["message"]
    no_deadline = copy.deepcopy(wl)
    del no_deadline["jobs"][0]["deadline"]
    ready = _plan(_with(no_deadline, ownership="buy"))["purchase"][0]["ready_days"]
    later = _with(wl, ownership="buy")
    later["jobs"][0]["deadline"] = f"{(21 + ready) * 24:.6f}h"
    moved = _plan(later)
    assert f"without the lead time limit it would cost ${moved['total_cost_usd']:,.0f}" in other["message"]


def test_a_plan_without_the_other_way_to_own_is_the_same_plan_less_that_key():
    # crossover plans with other_ownership=False (no re-planning it would not print): every other key
    # of the plan, forced costs and warnings included, is what the default plan holds
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.flow import plan
    from advisor.inputs.workload import parse_workload

    with open("examples/rent-vs-buy-3y.yaml", encoding="utf-8") as f:
        wl = parse_workload(yaml.safe_load(f))
    catalog, rules = load_catalog(), load_rules()
    as_of = dt.date(2026, 12, 1)
    full = plan(wl, catalog=catalog, rules=rules, as_of=as_of, explain="alternatives").to_dict()
    lean = plan(wl, catalog=catalog, rules=rules, as_of=as_of, explain="alternatives", other_ownership=False).to_dict()
    assert full["other_ownership"] is not None and lean["other_ownership"] is None
    assert {k: v for k, v in lean.items() if k not in ("other_ownership", "solver")} == {
        k: v for k, v in full.items() if k not in ("other_ownership", "solver")
    }
