"""Bought serving GPUs serve once they arrive (lead time, then burn-in): the MILP rents replicas that
hold the peak until then, and that rent is in the plan's cost, its budget, its rows and
its memo (solve/serving_bridge.py, solve/constraints/bridge.py). Each figure is re-computed here
from the catalog's rate and the hours to arrival."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math

import pytest

BOUGHT = dt.date(2026, 6, 1)  # on this date buying RTX 6000 Ada cards beats renting over the 36 months
SERVE = (
    "kind: serve\nmodel: llama-3.1-8b\nprecision: fp8\nslo: {ttft_ms: 2000, tpot_ms: 100}\n"
    "traffic: {requests_per_s: 20, input_tokens: 1000, output_tokens: 300}\n"
)


def _doc(lead: str = "", extra: str = "") -> str:
    return f"name: bridge\ndeployment: {{context: datacenter, ownership: any{lead}}}\n" + SERVE + extra


def _problem(text: str, catalog, rules):
    import yaml

    from advisor.flow import prepare
    from advisor.inputs.workload import parse_workload

    return prepare(parse_workload(yaml.safe_load(text)), catalog, rules, BOUGHT)


def _stream(years: float, rate: float) -> float:
    """PV of $1 paid evenly over `years` at an annual discount `rate` (continuous flow)."""
    d = math.log(1 + rate) * years
    return (1 - math.exp(-d)) / d


def test_the_bridge_cash_is_in_the_total_the_budget_and_the_memo(plan_json, write, catalog):
    import advisor

    path = write(_doc())
    code, plan = plan_json(path, as_of=BOUGHT)
    (bought,) = [p for p in plan["purchase"] if p["ownership"] == "buy"]
    (bridge,) = [p for p in plan["purchase"] if p.get("use") == "bridge"]
    hours = bought["ready_days"] * 24
    rate = catalog.gpus[bridge["gpu"]].rental.usd_per_gpu_hour
    assert code == 0 and hours > 0 and bridge["bridges"] == bought["gpu"] and bridge["hours"] == pytest.approx(hours)
    assert bridge["unit_price_usd"] == rate and bridge["gpu_hours"] == pytest.approx(bridge["count"] * hours)
    usd = bridge["billed_gpus"] * rate * hours  # by the GPU here: billed = used
    assert plan["cost_breakdown"]["bridge_usd"] == pytest.approx(usd, abs=0.01)
    assert sum(plan["cost_breakdown"].values()) == pytest.approx(plan["nominal_cost_usd"], abs=0.01)
    a = plan["assumptions"]
    pv = usd * _stream(hours / 8760, a["discount_rate"])
    assert plan["cost_breakdown_pv"]["bridge_usd"] == pytest.approx(pv, abs=0.01)
    (said,) = [w["message"] for w in plan["warnings"] if w["code"] == "serving-bridge"]
    assert f"${usd:,.0f} in cash" in said and f"for {hours:,.0f} h" in said
    text = advisor.memo(plan, path, fmt="md", charts=False).text
    assert "GPU rental until bought serving GPUs arrive" in text and f"${usd:,.2f}" in text
    cash = plan["nominal_cost_usd"]
    code, at = plan_json(write(_doc(extra=f"budget_usd: {cash:.2f}\n"), "at.yaml"), as_of=BOUGHT)
    assert code == 0 and at["nominal_cost_usd"] == pytest.approx(cash, abs=0.01)
    code, _ = plan_json(write(_doc(extra=f"budget_usd: {cash - 1:.2f}\n"), "below.yaml"), as_of=BOUGHT)
    assert code == 3


def test_the_bridge_holds_the_peak_with_one_replica_down(catalog, rules):
    """Until the bought GPUs arrive the bridge (here alone) holds the peak with any one replica down,
    and no more: the rows ask for the peak, as the plan check does."""
    from advisor.solve.milp import solve

    problem = _problem(_doc(), catalog, rules)
    sol = solve(problem)
    (cls,) = problem.serve_classes
    assert sol.bridges and cls.spare
    rates = [(min(b.requests_per_s, cls.peak_rps), n) for b, n in sol.bridges]
    up = sum(r * n for r, n in rates)
    assert up - max(r for r, _ in rates) >= cls.peak_rps - 1e-9  # any one bridge replica down
    # the bridge holds the peak, not what the bought replicas will serve: bought cards 25% faster (more
    # than the peak once rounded up to whole replicas) need no larger a bridge
    from advisor.solve.scenario import baseline

    faster = solve(problem, baseline(problem).but(speed_factor={g: 1.25 for g in sol.bought}))
    assert faster.bought == sol.bought
    assert sum(b.gpus * n for b, n in faster.bridges) <= sum(b.gpus * n for b, n in sol.bridges)


def test_renting_outright_wins_when_buying_needs_a_long_bridge(plan_json, write, catalog):
    """A 600-day lead time: bought cards that would serve for $31k (waiting for them) need a bridge dearer
    than renting for the whole horizon, so the plan rents at the catalog's figures (`decision: point`; over
    the draws, buying with the bridge is expected $978 cheaper and the expected basis buys)."""
    code, rent = plan_json(write(_doc(", lead_time_days: 600", "decision: point\n")), as_of=BOUGHT)
    code_w, wait = plan_json(
        write(_doc(", lead_time_days: 600", "until_arrival: wait\ndecision: point\n"), "w.yaml"), as_of=BOUGHT
    )
    assert code == code_w == 0
    assert {p["ownership"] for p in rent["purchase"]} == {"rent"} and not rent["cost_breakdown"].get("bridge_usd")
    (bought,) = [p for p in wait["purchase"] if p["ownership"] == "buy"]
    assert "bridge_usd" not in wait["cost_breakdown"]
    assert any(w["code"] == "serving-starts-late" and "until_arrival: wait" in w["message"] for w in wait["warnings"])
    # the cheapest bridge: the rented plan's own replicas for the hours to arrival, at the catalog's rate
    (row,) = rent["purchase"]
    hours = bought["ready_days"] * 24
    bridge = row["count"] * catalog.gpus[row["gpu"]].rental.usd_per_gpu_hour * hours
    bridge_pv = bridge * _stream(hours / 8760, rent["assumptions"]["discount_rate"])
    assert wait["total_cost_usd"] < rent["total_cost_usd"] < wait["total_cost_usd"] + bridge_pv


def test_the_plan_check_refuses_a_plan_with_its_bridge_removed(catalog, rules):
    from advisor.solve.milp import solve
    from advisor.solve.verify import ConstraintViolation, check, violations

    problem = _problem(_doc(), catalog, rules)
    sol = solve(problem)
    assert sol.bridges and not violations(problem, sol)
    (msg,) = violations(problem, dataclasses.replace(sol, bridges=[], bridge_idle={}))
    assert "until its bought rtx-6000-ada arrive (day 73)" in msg and "hold 0 of the 20" in msg
    with pytest.raises(ConstraintViolation):
        check(problem, dataclasses.replace(sol, bridges=[], bridge_idle={}))
    waiting = _problem(_doc(extra="until_arrival: wait\n"), catalog, rules)
    assert not violations(waiting, solve(waiting))  # the workload says it waits: nothing to bridge


def test_a_bridge_rented_from_a_whole_node_offer_is_billed_in_whole_nodes(plan_json, write, catalog):
    """Nebius rents H200 by the 8-GPU VM: a 1-GPU bridge replica or two are billed as a node."""
    code, plan = plan_json(write(_doc(extra="gpus: {allow: [rtx-6000-ada, h200-sxm]}\n")), as_of=BOUGHT)
    offer = catalog.gpus["h200-sxm"].rental
    (bought,) = [p for p in plan["purchase"] if p["ownership"] == "buy"]
    (bridge,) = [p for p in plan["purchase"] if p.get("use") == "bridge"]
    billed = math.ceil(bridge["count"] / offer.gpus_per_node) * offer.gpus_per_node
    assert code == 0 and offer.whole_nodes and bridge["gpu"] == "h200-sxm" and bridge["billed_gpus"] == billed
    usd = billed * offer.usd_per_gpu_hour * bought["ready_days"] * 24
    assert plan["cost_breakdown"]["bridge_usd"] == pytest.approx(usd, abs=0.01)


def test_the_bridged_plan_is_deterministic(plan_json, write):
    path = write(_doc())
    first = json.dumps(plan_json(path, as_of=BOUGHT)[1], sort_keys=True)
    assert first == json.dumps(plan_json(path, as_of=BOUGHT)[1], sort_keys=True)


def test_robustness_draws_reprice_the_bridge_as_a_full_solve_does(catalog, rules):
    """A robustness draw re-prices the bridge at the drawn rent (solve/redraw.py, BridgeDraw): its
    choice between buying (with a 450-day bridge) and renting is a full solve's at the same factors."""
    from advisor.solve.milp import solve
    from advisor.solve.redraw import Redraw, signature
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    problem = _problem(_doc(", lead_time_days: 450"), catalog, rules)
    redraw = Redraw(problem, baseline(problem), {}, SolveSettings())
    assert redraw.model is not None and redraw.model.bridge
    answers = set()
    # at rent x0.9 buying wins only with the bridge re-priced too (at its catalog rent, buying with it
    # costs $63,958 against renting's $61,713)
    for buy, rent in ((1.0, 1.0), (1.0, 0.9), (1.0, 0.8), (1.3, 1.0), (0.8, 1.2), (1.2, 0.9)):
        b, r = {"rtx-6000-ada": buy}, {"mi300x": rent, "mi325x": rent}
        full = solve(problem, baseline(problem).but(buy_factor=b, rent_factor=r))
        got = redraw.choice({}, b, r)
        assert got is not None and got[1] == signature(problem, full.bought, full.assignment, full.serving)
        answers.add(got[1])
    assert len(answers) > 1  # the factors move the choice, so agreement says something


def test_robustness_draws_hold_the_budget_at_the_drawn_rent(catalog, rules):
    """A draw's budget row counts the serving rent at the drawn price, as a full solve at the same
    factors does (solve/redraw.py): with the budget 10% above the catalog plan's cash, a rent 20%
    dearer leaves no plan within it, where a budget kept at catalog prices would still allow one."""
    from advisor.solve.milp import solve
    from advisor.solve.redraw import Redraw, signature
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    text = "name: rented\ndeployment: {context: cloud, ownership: rent}\n" + SERVE
    first = solve(_problem(text, catalog, rules), settings=SolveSettings())
    problem = _problem(text + f"budget_usd: {first.cash_usd * 1.1:.2f}\n", catalog, rules)
    redraw = Redraw(problem, baseline(problem), {}, SolveSettings())
    answers = []
    for rent in (1.0, 0.9, 1.05, 1.2):
        r = {g: rent for g in problem.considered}
        full = solve(problem, baseline(problem).but(rent_factor=r))
        got = redraw.choice({}, {}, r)
        if full.feasible:
            assert got is not None and got[1] == signature(problem, full.bought, full.assignment, full.serving)
        else:
            assert got is None
        answers.append(full.feasible)
    assert answers == [True, True, True, False]  # the dearest rent breaks the budget


def test_a_full_solve_counts_a_serving_replica_at_the_scenarios_speed_as_a_draw_does(catalog, rules):
    """A speed scenario (the speed break-evens) re-solves serving at that speed: a replica of a GPU at
    half speed holds half its requests/s, so the plan needs more of them or another GPU, and the full
    solve agrees with a robustness draw at the same speed (solve/redraw.py)."""
    from advisor.solve.milp import solve
    from advisor.solve.redraw import Redraw, signature
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    problem = _problem("name: rented\ndeployment: {context: cloud, ownership: rent}\n" + SERVE, catalog, rules)
    base = solve(problem, settings=SolveSettings())
    (chosen,) = {c.gpu for c, _ in base.serving}
    redraw = Redraw(problem, baseline(problem), {}, SolveSettings())
    for f in (0.5, 0.8):
        slow = solve(problem, baseline(problem).but(speed_factor={chosen: f}))
        assert slow.feasible and slow.cash_usd > base.cash_usd  # slower: more replicas, or a dearer GPU
        got = redraw.choice({chosen: f}, {}, {})
        assert got is not None and got[1] == signature(problem, slow.bought, slow.assignment, slow.serving)


@pytest.mark.parametrize("speed", [0.5, 0.85, 2.0])
def test_a_serving_plan_at_a_speed_is_sized_and_checked_at_that_speed(catalog, rules, speed):
    """A speed scenario (a speed break-even) sizes a GPU's replicas at that speed, bounds included: at
    0.85 of its speed the RTX 6000 Ada needs a fourth replica for n+1, which a bound sized at full speed
    refused (no plan); the plan check counts the same rates, so it passes the plan the MILP found, and a
    plan sized at full speed fails it when the GPU is slower."""
    from advisor.solve.constraints.serving import held_with_one_down
    from advisor.solve.milp import solve
    from advisor.solve.scenario import baseline
    from advisor.solve.verify import violations

    problem = _problem(_doc(", lead_time_days: 0"), catalog, rules)
    base = baseline(problem).but(only_gpu="rtx-6000-ada", ownership="buy")
    full = solve(problem, base)
    sc = base.but(speed_factor={"rtx-6000-ada": speed})
    sol = solve(problem, sc)
    assert sol.feasible and violations(problem, sol, sc) == []
    (rate,) = {c.requests_per_s for c, _ in sol.serving}
    peak = problem.serve_classes[0].peak_rps
    replicas = sum(n for _, n in sol.serving)
    assert replicas == math.ceil(peak / min(rate * speed, peak)) + 1  # n+1 at this speed, by hand
    if speed < 1:
        assert held_with_one_down(full, 0, True, sc.speed_factor) < peak and violations(problem, full, sc)


def test_bought_serving_gpus_that_arrive_after_the_serving_months_are_not_a_plan(plan_json, write):
    """Serving for 2 months (1,460 h) on RTX 6000 Ada bought in a datacenter, which arrive on day 73
    (1,752 h), with no rented layout allowed to bridge: the GPUs would never serve, so no plan (exit 3)
    and the GPU's first reason says when they arrive."""
    text = (
        "name: short\ndeployment: {context: datacenter, ownership: any, horizon_months: 2}\n"
        "gpus: {allow: [rtx-6000-ada]}\n" + SERVE
    )
    code, p = plan_json(write(text, "short.yaml"), explain="alternatives", as_of=BOUGHT)
    assert code == 3
    (gpu,) = [r for r in p["rejected"] if r["gpu"] == "rtx-6000-ada"]
    first = gpu["reasons"][0]
    assert first["code"] == "arrives-too-late" and "day 73" in first["message"]


def test_a_slow_draw_may_buy_the_serving_gpus_a_full_solve_would(catalog, rules):
    """A robustness draw at half the bought GPU's speed needs twice its replicas: the draws' model holds
    the serving GPU count the slowest draw needs (Model.slowest), so the draw's plan is a full solve's
    at that speed, not no plan (a cap sized at full speed: 4 RTX 6000 Ada, one workstation)."""
    from advisor.solve.milp import solve
    from advisor.solve.redraw import Redraw, signature
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    text = _doc(", ownership: buy, lead_time_days: 0").replace("ownership: any, ", "")
    problem = _problem(text + "gpus: {allow: [rtx-6000-ada]}\n", catalog, rules)
    base = solve(problem)
    (g,) = base.bought
    draws = [{g: 1.0}, {g: 0.5}]
    redraw = Redraw(problem, baseline(problem), {g: 1.0}, SolveSettings(), draws)
    slow = solve(problem, baseline(problem).but(speed_factor={g: 0.5}))
    assert slow.bought[g] > base.bought[g]  # the full solve buys more of the GPU
    got = redraw.choice({g: 0.5}, {}, {})
    assert got is not None and got[1] == signature(problem, slow.bought, slow.assignment, slow.serving)


def test_a_drawn_purchase_price_moves_tax_support_and_resale_as_a_full_solve_does(catalog, rules):
    """A robustness draw's purchase-price factor moves what scales with the price (Model.per_price_usd:
    the tax at purchase, the support while held, the resale): its choice between buying and renting is
    a full solve's at every factor, including near the break-even (with the price alone moved, a draw
    at 1.3x the price rented where the full solve still bought)."""
    from advisor.solve.milp import solve
    from advisor.solve.redraw import Redraw, signature
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    problem = _problem(_doc(", lead_time_days: 450"), catalog, rules)
    redraw = Redraw(problem, baseline(problem), {}, SolveSettings())
    answers = set()
    for buy in (0.8, 1.0, 1.2, 1.25, 1.3, 1.35, 1.4, 1.6):
        b = {"rtx-6000-ada": buy}
        full = solve(problem, baseline(problem).but(buy_factor=b))
        got = redraw.choice({}, b, {})
        assert got is not None and got[1] == signature(problem, full.bought, full.assignment, full.serving), buy
        answers.add(got[1])
    assert len(answers) > 1  # the factors cross the break-even


def test_a_bad_until_arrival_names_file_line_field_and_the_allowed_values(run, write):
    path = write(_doc(extra="until_arrival: later\n"), "bad.yaml")
    code, _, err = run("plan", path)
    assert code == 2 and "Traceback" not in err
    assert f"{path.name}:8:" in err and "`until_arrival` must be rent or wait, got 'later'" in err


def test_bought_serving_gpus_draw_energy_from_their_arrival(plan_json, write):
    """The same 3 bought RTX 6000 Ada serving for 36 months (26,280 h), in hand today or arriving on the
    plan's `ready_days`: the energy paid is in the ratio of the hours they run, (26,280 - ready_days x 24)
    / 26,280 (the job waits for them, so no bridge changes the plan), to the cent each is printed to: a
    printed part takes the cent of the cash's rounding (ledger.printed_breakdown), 3e-6 of $3,300."""
    job = SERVE + "until_arrival: wait\n"
    now = "name: e\ndeployment: {context: datacenter, ownership: buy, lead_time_days: 0}\n" + job
    late = "name: e\ndeployment: {context: datacenter, ownership: buy}\n" + job
    _, p0 = plan_json(write(now, "now.yaml"), as_of=BOUGHT)
    _, p1 = plan_json(write(late, "late.yaml"), as_of=BOUGHT)
    assert [(r["gpu"], r["count"]) for r in p0["purchase"]] == [(r["gpu"], r["count"]) for r in p1["purchase"]]
    (ready,) = {r["ready_days"] for r in p1["purchase"]}
    hours = 36 * 730.0
    assert ready > 0 and p0["purchase"][0]["ready_days"] == 0
    e0, e1 = p0["cost_breakdown"]["energy_usd"], p1["cost_breakdown"]["energy_usd"]
    assert e1 == pytest.approx(e0 * (hours - ready * 24) / hours, abs=0.02)


def test_verify_quotes_the_bridge_rental_the_plan_rents(catalog, rules):
    """review19: a bridge rental is not in the purchase signature, so `verify` quoted another option's
    count for its GPU ("17x" H200 beside a bridge of 16). The chosen plan here buys RTX 6000 Ada and
    bridges on H200 until they arrive; beside an option renting 17 H200 for the whole term, the quote
    is for the bridge's GPUs as its purchase row counts them, from the bridge's own provider."""
    from advisor.explain.decision import Option
    from advisor.explain.value_of_information import Input, entry
    from advisor.plan_rows import bridge_rows
    from advisor.solve.constraints.gpu_count import held_counts
    from advisor.solve.milp import solve

    extra = "gpus: {allow: [rtx-6000-ada, h200-sxm]}\n"
    problem = _problem(_doc(extra=extra).replace("requests_per_s: 20", "requests_per_s: 100"), catalog, rules)
    chosen = Option.of(problem, "chosen", solve(problem))
    (row,) = [r for r in bridge_rows(chosen.sol, held_counts(problem, chosen.sol)) if r["gpu"] == "h200-sxm"]
    assert (
        row["count"] > 0
        and row["billed_gpus"] >= row["count"]
        and "h200-sxm" not in {g for g, *_ in chosen.first_stage}
    )
    other = dataclasses.replace(chosen, label="renting", first_stage=(("h200-sxm", "rent", 17),))
    item = entry(problem, Input("rental_rate", "h200-sxm"), 404.0, [other, chosen], None, chosen)
    assert item["count"] == row["count"], item
    name = catalog.gpus["h200-sxm"].name
    assert item["message"].startswith(
        f"get a firm quote for {row['count']}\u00d7 {name} rental from {row['provider']}:"
    )


def test_the_bill_tells_the_bridge_and_the_vat_apart_by_a_stated_part(plan_json, write):
    """The ledger matched the bridge's rent line and the VAT line to their cost_breakdown parts by object
    identity (their kinds, "rent" and "tax", are the rent's and the hardware tax's too). Each line now
    states its part when built (ledger.PART, taken off before printing): the bridge's line foots to
    bridge_usd and the VAT's to services_tax_usd, to the cent, and the one-sum kinds are the plan-wide
    kinds and the rent, one definition (contract/numbers.py)."""
    from advisor.contract.numbers import ONE_SUM_KINDS, PLAN_WIDE_KINDS
    from advisor.solve.ledger import PART, line_part

    assert ONE_SUM_KINDS == (*PLAN_WIDE_KINDS, "rent")
    path = write(_doc(lead=", region: DE", extra="finance: {tax_recoverable: false}\n"))
    code, plan = plan_json(path, as_of=BOUGHT)
    cb, bill = plan["cost_breakdown"], plan["bill_of_materials"]
    assert code == 0 and cb["bridge_usd"] > 0 and cb["services_tax_usd"] > 0
    assert not [r for r in bill if PART in r]
    (bridge,) = [r for r in bill if r["item"].endswith("until the bought serving GPUs arrive")]
    (vat,) = [r for r in bill if r["item"].startswith("tax on rent and services (DE)")]
    assert (bridge["kind"], vat["kind"]) == ("rent", "tax")
    assert bridge["total_usd"] == cb["bridge_usd"] and vat["total_usd"] == cb["services_tax_usd"]
    assert line_part({**bridge, PART: "bridge_usd"}) == "bridge_usd" and line_part(dict(bridge)) == "rental_usd"
