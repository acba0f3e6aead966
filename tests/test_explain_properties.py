"""Explanations that are always true, over generated workloads (hypothesis, derandomized, small
budget): every printed break-even or "stays the choice" claim holds when re-solved here; no GPU
has two contradictory reasons; every infeasible workload gets a verified relaxation or a plain
"nothing within bounds" statement; the crossover's factor is the plan's own reason."""

from __future__ import annotations

import pytest
from conftest import AS_OF, ci_examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.explain.draws import Prices, shared_draws
from advisor.explain.offer_quote import repriced
from advisor.explain.ranges import SEED
from advisor.explain.sensitivity import priced
from advisor.flow import plan, prepare
from advisor.inputs.workload import parse_workload
from advisor.solve.milp import solve
from advisor.solve.scenario import baseline

GPUS = ["rtx-4090", "a100-80gb-sxm", "h100-sxm", "l40s", "a10"]
CONTRADICTORY = {"no-purchase-price", "no-rental-price"}


def uses(sol, gpu, ownership, provider=None):
    """Does the plan run a job on `gpu` owned so (rented from `provider`'s offer, when given)?"""
    return sol.feasible and any(
        c.gpu == gpu and c.ownership == ownership and (provider is None or c.offer.offer.provider == provider)
        for c in sol.chosen
    )


def at_prices(problem, entry, factor, prices=None):
    """The re-solve a break-even claim is about: at the catalog's prices, or at the expected prices a
    plan chosen on expected cost over the point optimum is explained at (decision.explained_at)."""
    offer = entry.get("provider")
    if offer is not None and prices is None:  # a rented offer's rate: the problem rebuilt with it re-priced, as
        again = repriced(problem, entry["gpu"], offer, factor)  # a --catalog quote would (every offer of its group)
        return solve(again, baseline(again))
    return solve(problem, priced(problem, entry["gpu"], entry["ownership"], factor, prices, offer))


def at(problem, entry, factor):
    return at_prices(problem, entry, factor)


def explained_prices(problem, p):
    d = p.get("decision")
    if d is None or d.get("explained_at") != "expected":
        return None
    return Prices.of(shared_draws(problem, d["draws"], SEED))


@st.composite
def workloads(draw):
    context = draw(st.sampled_from(["office", "datacenter", "cloud"]))
    ownership = "rent" if context == "cloud" else draw(st.sampled_from(["buy", "rent", "any"]))
    doc = {
        "deployment": {"context": context, "ownership": ownership, "lead_time_days": 0},
        "model": draw(st.sampled_from(["gpt2-124m", "gpt2-350m", "mpt-1b"])),
        "tokens": draw(st.sampled_from(["2B", "10B", "40B"])),
        "gpus": {"allow": draw(st.lists(st.sampled_from(GPUS), min_size=2, max_size=3, unique=True))},
    }
    deadline = draw(st.sampled_from([None, "12h", "3d", "30d"]))
    if deadline:
        doc["deadline"] = deadline
    upper = draw(st.sampled_from([None, 1, 2, 8]))
    if upper:
        doc["gpus"]["max"] = upper
    budget = draw(st.sampled_from([None, 300, 20_000]))
    if budget:
        doc["budget_usd"] = budget
    return doc


def check_break_evens(problem, p):
    prices = explained_prices(problem, p)

    def at(problem, entry, factor):
        return at_prices(problem, entry, factor, prices)

    for b in p["sensitivity"]["break_even"]:
        if not b.get("verified", True):
            assert b["factor"] is None and "no break-even is stated" in b["message"]
            continue
        pair = (b["gpu"], b["ownership"], b.get("provider"))  # a rented pair: the offer its price is
        if b["direction"] == "rise":
            if b["factor"] is None:  # "stays the choice even at 64x"
                assert uses(at(problem, b, 64.0), *pair), b["message"]
            else:
                assert uses(at(problem, b, b["factor"] * 0.98), *pair), b["message"]
                assert not uses(at(problem, b, b["factor"] * 1.02), *pair), b["message"]
        elif b["factor"] is None:  # "would not be chosen even if its price were zero"
            assert not uses(at(problem, b, 0.0), *pair), b["message"]
        elif b["factor"] < 1.0:
            assert uses(at(problem, b, b["factor"] * 0.98), *pair), b["message"]
            assert not uses(at(problem, b, min(1.0, b["factor"] * 1.02)), *pair), b["message"]


def check_reasons(p):
    for r in p["rejected"]:
        codes = {x.get("code") for x in r["reasons"]}
        assert not CONTRADICTORY <= codes, r
        assert "none" not in codes, r
        assert [x.get("primary") for x in r["reasons"]][:1] == [True], r
        assert sum(bool(x.get("primary")) for x in r["reasons"]) == 1, r


def check_diagnosis(problem, p, doc):
    levers = [d for d in p["diagnosis"] if d.get("kind") != "shortfall"]
    assert levers, p["diagnosis"]
    base = baseline(problem)
    for d in levers:
        relax = d.get("relaxation")
        if relax is None:
            assert d["kind"] == "nothing" and "nothing within the bounds tried" in d["message"]
            continue
        sc = base
        for key, value in relax.items():
            if key == "deadline_scale":
                sc = sc.but(deadline_scale=value)
            elif key == "budget_usd":
                sc = sc.but(budget_usd=value)
            elif key == "power_limit_kw":
                sc = sc.but(power_limit_kw=value)
            elif key == "gpus.max":
                sc = sc.but(gpu_upper=value)
        if any(k.startswith(("deployment.", "jobs[]")) or k == "limits" for k in relax):
            continue  # a rebuilt problem, re-solved inside diagnose; checked by test_diagnosis_levers below
        assert solve(problem, sc).feasible, d


@settings(
    derandomize=True,
    max_examples=ci_examples(6, 10),
    deadline=None,  # ~2 s of CPU each
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(doc=workloads())
def test_every_explanation_is_confirmed_by_a_re_solve(doc, catalog, rules):
    wl = parse_workload(doc)
    p = plan(wl, catalog=catalog, rules=rules, as_of=AS_OF)
    problem = p.problem
    check_reasons(p)
    if p.feasible:
        check_break_evens(problem, p)
        for b in p["binding"]:
            if b["unit"] in ("days", "USD", "kW") and b["binding"]:
                assert b["slack"] >= 0
    else:
        check_diagnosis(problem, p, doc)


def test_the_other_ownership_of_the_same_gpu_wins_when_only_its_price_rises(catalog, rules):
    """8 H100s for nearly two years: the rise of the chosen pair's own price names what wins then --
    the other ownership of the same GPU (bought), or that or another offer of it (rented: only the
    rented offer's rate rises) -- and a re-solve confirms it."""
    doc = {
        "deployment": {"context": "datacenter", "ownership": "any", "lead_time_days": 0, "horizon_months": 24},
        "model": "mpt-7b",
        "tokens": "4.5T",
        "deadline": "730d",
        "gpus": {"allow": ["h100-sxm"], "count": 8},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    rise = p["sensitivity"]["break_even"][0]
    own, offer, then = rise["ownership"], rise.get("provider"), rise["then"]
    assert rise["gpu"] == "h100-sxm" and rise["factor"] is not None and then["gpu"] == "h100-sxm"
    # bought: renting the same GPU wins; rented (its one offer's rate risen): buying it or another offer of it
    assert then["ownership"] != own or (own == "rent" and then.get("provider") not in (None, offer)), then
    flipped = at_prices(p.problem, rise, rise["factor"] * 1.02)
    assert uses(flipped, "h100-sxm", then["ownership"], then.get("provider"))
    assert not uses(flipped, "h100-sxm", own, offer)


def test_diagnosis_levers_for_a_rebuilt_problem_give_a_plan(catalog, rules):
    """A buy-only office job that only renting or a datacenter can serve: each deployment lever
    named in the diagnosis gives a plan when the workload is changed that way."""
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "model": "mpt-7b",
        "tokens": "20B",
        "deadline": "20d",
        "gpus": {"allow": ["rtx-4090", "h100-sxm"]},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    assert not p.feasible
    deployment = [d for d in p["diagnosis"] if d["constraint"] == "deployment"]
    assert deployment
    for d in deployment:
        changed = {
            **doc,
            "deployment": {**doc["deployment"], **{k.split(".")[1]: v for k, v in d["relaxation"].items()}},
        }
        if changed["deployment"]["context"] == "cloud":
            changed["deployment"]["ownership"] = "rent"
        assert plan(parse_workload(changed), catalog=catalog, rules=rules, as_of=AS_OF, explain=False).feasible


@pytest.mark.parametrize("model", ["mpt-3b", "mpt-7b"])
def test_crossover_factor_is_what_stops_the_focus_plan(model, run_json, catalog, rules):
    """The crossover's factor for the 4090 is the reason a plan with only 4090s fails."""
    _, x = run_json("crossover", "--model", model, "--as-of", AS_OF)
    row = x["points"][0]
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "model": model,
        "tokens": "10B",
        "gpus": {"allow": ["rtx-4090"], "max": 8},
    }
    problem = prepare(parse_workload(doc), catalog, rules, AS_OF)
    base = baseline(problem)
    assert not solve(problem, base).feasible
    if row["factor"] == "power":
        assert solve(problem, base.but(power_limit_kw=None)).feasible
    elif row["factor"] == "slots":
        relaxed = base.but(power_limit_kw=None, gpu_upper=None, budget_usd=None)
        assert not solve(problem, relaxed).feasible
    else:
        pytest.fail(f"unexpected factor {row['factor']}")
