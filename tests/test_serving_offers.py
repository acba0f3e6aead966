"""A rented serving replica is priced at an offer that sells it (solve/serving_offers.py): the
cheapest dated on-demand offer whose node holds the replica (or whose nodes a published fabric joins,
for pipeline stages), billed as that offer sells. An offer whose node size is unpublished is one GPU
per node, so it never holds a multi-GPU replica. Every rate below is read from catalog/gpus.yaml
itself, not through the library, and each dollar figure re-computed by hand from it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from conftest import AS_OF

ROOT = Path(__file__).resolve().parent.parent
HOURS = 12 * 730.0  # twelve serving months of 730 h
A100 = "a100-80gb-sxm"
WORKLOAD = """name: 70B bf16 served on rented A100
deployment: {{context: cloud, horizon_months: 12}}
gpus: {{allow: [{allow}]}}
jobs:
  - name: chat
    kind: serve
    model: {model}
    precision: bf16
    traffic: {{requests_per_s: 2, input_tokens: 500, output_tokens: 200}}
    slo: {{ttft_ms: 3000, tpot_ms: 80, percentile: 99}}
"""


def _raw_on_demand(gid: str) -> list[dict]:
    """The GPU's dated on-demand offers as catalog/gpus.yaml writes them (dated on or before AS_OF),
    cheapest first (ties by provider)."""
    doc = yaml.safe_load((ROOT / "catalog" / "gpus.yaml").read_text(encoding="utf-8"))
    (gpu,) = [g for g in doc["gpus"] if g["id"] == gid]
    offers = [
        o
        for o in gpu["prices"]["rent"]
        if o["pricing"] == "on_demand" and o["as_of"] and str(o["as_of"]) <= AS_OF.isoformat()
    ]
    return sorted(offers, key=lambda o: (o["usd_per_gpu_hour"], o["provider"]))


def _holding(gid: str, gpus: int) -> dict:
    """The cheapest raw offer whose published node holds `gpus` GPUs (unpublished: one GPU)."""
    return next(o for o in _raw_on_demand(gid) if (o["gpus_per_node"] or 1) >= gpus)


def _problem(catalog, rules, allow: str, model: str = "llama-3.1-70b"):
    from advisor.flow import prepare
    from advisor.inputs.workload import parse_workload

    doc = yaml.safe_load(WORKLOAD.format(allow=allow, model=model))
    return prepare(parse_workload(doc), catalog, rules, AS_OF)


@pytest.mark.slow
def test_a_two_gpu_a100_replica_is_priced_at_the_cheapest_offer_selling_two_in_one_node(catalog, rules):
    """70B bf16 needs 2+ A100 80GB per replica. RunPod's $1.39 (node size unpublished) is not such an
    offer; the cheapest that holds 2 A100 in one node is AWS p4de (8 per node, $3.4309)."""
    problem = _problem(catalog, rules, f"{A100}, mi300x")
    rented = [c for c in problem.serve_candidates[0] if c.gpu == A100 and c.ownership == "rent"]
    assert rented and min(c.gpus for c in rented) == 2
    cheapest = _raw_on_demand(A100)[0]
    assert cheapest["gpus_per_node"] is None  # the rate the plan used to price these replicas at
    for c in rented:
        offer = _holding(A100, c.gpus)
        assert c.offer.offer.provider == offer["provider"] != cheapest["provider"]
        assert c.run_cost_nominal == pytest.approx(c.gpus * HOURS * offer["usd_per_gpu_hour"], rel=1e-12)
    assert _holding(A100, 2)["provider"].startswith("AWS p4de")


def test_the_rented_a100_plan_is_billed_in_the_offers_whole_nodes_and_says_whose(plan_json, write, run):
    path = write(WORKLOAD.format(allow=A100, model="llama-3.1-70b"))
    code, plan = plan_json(path)
    offer = _holding(A100, 2)
    (row,) = plan["purchase"]
    node = offer["gpus_per_node"]
    billed = math.ceil(row["count"] / node) * node
    assert (
        code == 0
        and row["count"] >= 2
        and all(s["tensor_parallel"] * s["pipeline_parallel"] >= 2 for s in plan["serving"])
    )
    assert (row["provider"], row["unit_price_usd"], row["billed_gpus"]) == (
        offer["provider"],
        offer["usd_per_gpu_hour"],
        billed,
    )
    assert plan["nominal_cost_usd"] == pytest.approx(billed * offer["usd_per_gpu_hour"] * HOURS, abs=0.01)
    assert set(offer["source"]) <= {s["id"] for s in plan["sources"]}  # the priced offer's sources are cited
    code, text, _ = run("plan", path, "--as-of", AS_OF)
    decision = next(line for line in text.splitlines() if line.startswith("Decision"))
    assert code == 0 and offer["provider"] in decision and f"${offer['usd_per_gpu_hour']:g}/GPU-hour" in decision


def test_a_one_gpu_replica_still_takes_the_cheapest_offer(plan_json, write):
    """8B bf16 fits one A100: its replicas rent at the cheapest on-demand rate, one GPU per pod."""
    code, plan = plan_json(write(WORKLOAD.format(allow=A100, model="llama-3.1-8b")))
    cheapest = _raw_on_demand(A100)[0]
    (row,) = plan["purchase"]
    assert code == 0 and all(s["tensor_parallel"] * s["pipeline_parallel"] == 1 for s in plan["serving"])
    assert (row["provider"], row["unit_price_usd"], row["billed_gpus"]) == (
        cheapest["provider"],
        cheapest["usd_per_gpu_hour"],
        row["count"],
    )
    assert plan["nominal_cost_usd"] == pytest.approx(row["count"] * cheapest["usd_per_gpu_hour"] * HOURS, abs=0.01)


def test_an_offer_with_an_unpublished_node_size_never_holds_a_multi_gpu_replica(catalog):
    from advisor.economics.rental import RentOption
    from advisor.solve.serving_candidates import SERVE_PP, SERVE_TP
    from advisor.solve.serving_offers import holds

    layouts = [(tp, 1) for tp in SERVE_TP] + [(8, pp) for pp in SERVE_PP]
    unpublished = 0
    for gpu in catalog.gpus.values():
        for offer in gpu.rentals("on_demand"):
            opt = RentOption("on_demand", offer)
            if offer.gpus_per_node is None:
                unpublished += 1
                assert [(tp, pp) for tp, pp in layouts if holds(opt, tp, pp)] == [(1, 1)], offer.provider
            else:  # a published node holds what fits in it
                assert all(holds(opt, tp, 1) == (tp <= offer.gpus_per_node) for tp in SERVE_TP)
    assert unpublished >= 10


def test_mi300x_at_tensorwave_serves_no_multi_gpu_replica_and_says_why(catalog, rules):
    """Every dated on-demand MI300X offer publishes no node size: a model needing several MI300X per
    replica has no rented layout, and the GPU's rejection says which replica no offer holds."""
    assert all(o["gpus_per_node"] is None for o in _raw_on_demand("mi300x"))
    problem = _problem(catalog, rules, "mi300x", model="llama-3.1-405b")
    assert not [c for cs in problem.serve_candidates for c in cs if c.ownership == "rent"]
    messages = [r["message"] for r in problem.rejected["mi300x"].reasons]
    assert any(m.startswith("no on-demand offer of mi300x holds a ") and "-GPU replica" in m for m in messages)


TWO_OFFERS = """
gpus:
  - id: a100-80gb-sxm
    prices:
      rent:
        - {provider: "Test 2x", usd_per_gpu_hour: 2.0, as_of: "2026-06", pricing: on_demand, gpus_per_node: 2,
           confidence: medium, source: [test_quote], fabric: {kind: none, source: [test_quote]}, tier: neocloud}
        - {provider: "Test 8x", usd_per_gpu_hour: 3.0, as_of: "2026-06", pricing: on_demand, gpus_per_node: 8,
           confidence: high, source: [test_quote], fabric: {kind: infiniband, gbps_per_gpu: 200, source: [test_quote]},
           tier: neocloud}
sources:
  test_quote: {url: "https://example.com/quote", title: "a test quote", kind: primary}
"""


@pytest.fixture(scope="module")
def two_offers(tmp_path_factory):
    from advisor.data.catalog import load_catalog

    path = tmp_path_factory.mktemp("serving_offers") / "two.yaml"
    path.write_text(TWO_OFFERS)
    return load_catalog(path)


def test_two_layouts_on_two_whole_node_offers_are_billed_per_offer(two_offers, rules):
    """2-GPU replicas take the 2-GPU nodes at $2; 4- and 8-GPU ones the 8-GPU nodes at $3. Each offer
    bills its own nodes: one 2-GPU and one 4-GPU replica pay 2 + 8 GPUs, and a plan paying for the 4
    used on the 8-GPU offer is refused, naming that offer."""
    import dataclasses

    from advisor.solve.constraints.serving import Serving
    from advisor.solve.milp import solve
    from advisor.solve.model import Model
    from advisor.solve.scenario import baseline

    problem = _problem(two_offers, rules, A100)
    rented = {c.gpus: c for c in problem.serve_candidates[0] if c.ownership == "rent"}
    assert {n: c.offer.offer.provider for n, c in rented.items()} == {2: "Test 2x", 4: "Test 8x", 8: "Test 8x"}
    assert rented[4].run_cost_nominal == pytest.approx(4 * HOURS * 3.0, rel=1e-12)
    m = Model(problem, baseline(problem), [], problem.serve_candidates)
    m.variables()
    assert sorted(m.idle) == [(A100, "Test 2x"), (A100, "Test 8x")]
    sol = solve(problem)
    assert sol.feasible and not Serving().violations(problem, sol, baseline(problem))
    both = dataclasses.replace(sol, serving=[(rented[2], 1), (rented[4], 1)], serving_idle={})
    billing = [m for m in Serving().violations(problem, both, baseline(problem)) if "billed by" in m]
    assert billing == [f"4 {A100} rented to serve are billed by Test 8x as 8, the plan pays for 4"]
    paid = dataclasses.replace(both, serving_idle={(A100, "Test 8x"): (4, rented[4])})
    assert not [m for m in Serving().violations(problem, paid, baseline(problem)) if "billed by" in m]


def test_the_quote_to_ask_is_the_priced_offers(catalog, rules):
    """decision.verify asks for a quote from the provider the plan rents on, at its rate and confidence."""
    from advisor.data.uncertainty import price_dist
    from advisor.explain.decision import Option
    from advisor.explain.value_of_information import Input, priced_offer
    from advisor.solve.milp import solve

    problem = _problem(catalog, rules, A100)
    sol = solve(problem)
    priced = priced_offer(Input("rental_rate", A100), [Option.of(problem, "chosen", sol)])
    expected = _holding(A100, 2)
    assert priced is not None
    offer, band, _ = priced
    assert (offer.provider, offer.usd_per_gpu_hour, offer.confidence) == (
        expected["provider"],
        expected["usd_per_gpu_hour"],
        expected["confidence"],
    )
    assert band == price_dist(expected["confidence"])  # a replica within one node: the offer's own grade


@pytest.fixture(scope="module")
def a100_or_mi300x(catalog, rules, tmp_path_factory):
    """(workload file, its plan in full): 70B bf16 served on the A100 80GB SXM or the MI300X, planned once
    for the tests below (each only reads it)."""
    from advisor.flow import plan
    from advisor.inputs.workload import load_workload

    path = tmp_path_factory.mktemp("a100_or_mi300x") / "workload.yaml"
    path.write_text(WORKLOAD.format(allow=f"{A100}, mi300x", model="llama-3.1-70b"), encoding="utf-8")
    return path, plan(load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF)


def test_the_plan_is_deterministic(catalog, rules, a100_or_mi300x):
    from advisor.flow import plan
    from advisor.inputs.workload import load_workload

    path, first = a100_or_mi300x
    second = plan(load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF)
    assert first.to_json() == second.to_json()


def test_the_memo_prices_a_costlier_gpu_at_the_offer_its_best_plan_rents(a100_or_mi300x):
    """The not-chosen A100 is costed on p4de (its 2-GPU replicas): the memo says so, not RunPod's $1.39."""
    import advisor

    path, p = a100_or_mi300x
    offer = _holding(A100, 2)
    (row,) = [r for r in p["rejected"] if r["gpu"] == A100]
    assert row["forced_ownership"] == "rent" and row["forced_rental"]["provider"] == offer["provider"]
    text = advisor.memo(p, path, fmt="md", charts=False).text
    assert f"priced at ${offer['usd_per_gpu_hour']:g} per GPU-hour ({offer['provider']}" in text


@pytest.mark.parametrize(
    ("alt", "direction"), [pytest.param("b200", "rise", marks=pytest.mark.slow), ("h100-sxm", "fall")]
)
def test_a_break_even_prices_the_offer_the_plan_rents_at(plan_json, write, alt, direction):
    """A price break-even moves every offer of the GPU by one factor, so the dollar it prints is the
    rate of the offer the plan rents at, here AWS p4de for 2-GPU A100 replicas, not the A100's cheapest
    1-GPU rate: the rise when the A100 is chosen (against B200), the fall when it is the runner-up
    (against H100 SXM)."""
    code, p = plan_json(write(WORKLOAD.format(allow=f"{A100}, {alt}", model="llama-3.1-70b"), "w.yaml"), explain=True)
    assert code == 0
    (entry,) = [e for e in p["sensitivity"]["break_even"] if e["gpu"] == A100 and e["direction"] == direction]
    rate = _holding(A100, 2)["usd_per_gpu_hour"]
    assert entry["factor"] is not None and rate > _raw_on_demand(A100)[0]["usd_per_gpu_hour"]
    assert entry["price"] == pytest.approx(rate * entry["factor"], abs=0.006)
    assert f"(to ${rate * entry['factor']:,.2f})" in entry["message"]
