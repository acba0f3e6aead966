"""Explanations agree with each other and with a re-solve: one binding test everywhere, one
primary reason per GPU with its number, grouped rows and --verbose, diagnoses that quantify."""

from __future__ import annotations

import re

import pytest
from conftest import AS_OF

from advisor.contract.facts import BINDING_TOLERANCE
from advisor.flow import plan
from advisor.inputs.workload import parse_workload
from advisor.solve.milp import solve
from advisor.solve.scenario import baseline


def test_one_binding_test_for_table_sensitivity_and_memo(catalog, rules):
    """A buy-only 7B job finishing with a day or so to spare: the table, the +1 day line and the
    memo's margin all say the same thing about the deadline."""
    doc = {
        "name": "t",
        "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
        "model": "mpt-7b",
        "tokens": "100B",
        "deadline": "30d",
        "decision": {"draws": 40},  # a close call draws all it may (200 by default): the three agree either way
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    dl = next(b for b in p["binding"] if b["constraint"].startswith("deadline:"))
    days = float(re.search(r"finishes in ([\d.]+) of", dl["message"]).group(1))
    assert dl["binding"] == ((30 - days) < BINDING_TOLERANCE * 30)  # recomputed from the stated days
    day = next(m for m in p["sensitivity"]["marginal"] if m["change"] == "deadline +1 day")
    assert day["binding"] == dl["binding"]
    if not dl["binding"]:
        assert "binds (" not in day["message"]
    elif day["saving_usd"] == 0:
        assert "does not bind" not in day["message"]
    from advisor.report import memo

    text = memo(p, charts=False).text
    row = next(line for line in text.splitlines() if line.startswith("| Deadline"))
    assert ("binding" in row) == dl["binding"]


def test_a_deadline_within_two_days_is_relaxed_by_an_hour_not_a_day(catalog, rules):
    """A 1-hour deadline's marginal value was "one more day on the deadline": a deadline 25 times as
    long. It is re-solved an hour longer, the unit the deadline is said in, and the saving is the cost
    of the plan planned afresh at 2 hours (point basis: both plans at the catalog's prices)."""

    def planned(deadline: str) -> dict:
        doc = {
            "deployment": {"context": "cloud", "ownership": "rent"},
            "decision": {"basis": "point"},
            "jobs": [{"name": "short", "model": "gpt2-350m", "tokens": "20B", "deadline": deadline}],
        }
        return plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)

    p, later = planned("60min"), planned("2h")
    (m,) = p["sensitivity"]["marginal"]
    assert m["change"] == "deadline +1 hour" and m["message"].startswith("one more hour on every deadline saves $")
    assert p["total_cost_usd"] > later["total_cost_usd"]  # the hour is worth something here
    assert m["saving_usd"] == pytest.approx(p["total_cost_usd"] - later["total_cost_usd"], abs=0.01)
    assert "up to an hour more" in m["message"]
    from advisor.durations import deadline_step  # the unit the deadline is said in: 59.9 minutes reads '1 hour'

    assert [deadline_step(h)[1] for h in (0.5, 59.9 / 60, 47.9, 48)] == ["minute", "hour", "hour", "day"]


def test_a_gpu_that_cannot_meet_the_deadline_within_gpus_max_says_how_many_it_needs(catalog, rules):
    doc = {
        "deployment": {"context": "cloud", "ownership": "rent"},
        "model": "gpt2-350m",
        "tokens": "40B",
        "deadline": "1d",
        "gpus": {"allow": ["h100-sxm", "a100-80gb-sxm"], "max": 4},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    r = next(r for r in p["rejected"] if r["gpu"] == "a100-80gb-sxm")
    first = r["reasons"][0]
    assert first["code"] == "gpu_count" and first["primary"] and "gpus.max is 4" in first["message"]
    n = first["needed"]
    assert f">= {n} GPUs" in first["message"]
    problem = p.problem
    only = baseline(problem).but(only_gpu="a100-80gb-sxm")
    assert solve(problem, only.but(gpu_upper=n)).feasible and not solve(problem, only.but(gpu_upper=n - 1)).feasible


def test_no_contradictory_availability_and_grouped_rows(plan_json, write):
    """Without gpus.allow and with renting allowed, a GPU with no price at all gets one reason, not
    'can only be rented' and 'can only be bought'; identical primary reasons share one row."""
    from advisor.present.plan_text import plan_text

    # the rows read here are the rejected GPUs and each unchosen one's forced cost: "alternatives"
    # computes exactly those; the table and --verbose table are rendered from the same plan as the CLI does
    path = write(
        "deployment: {context: datacenter, ownership: any, lead_time_days: 0}\nmodel: gpt2-124m\ntokens: 10B\n"
    )
    _, p = plan_json(path, explain="alternatives")
    for r in p["rejected"]:
        codes = [x["code"] for x in r["reasons"]]
        assert not {"no-purchase-price", "no-rental-price"} <= set(codes), r
        assert "none" not in codes
        assert r["reasons"][0]["primary"] and not any(x.get("primary") for x in r["reasons"][1:])
    buy = write(
        "deployment: {context: datacenter, ownership: buy, lead_time_days: 0}\nmodel: gpt2-124m\ntokens: 10B\n",
        "buy.yaml",
    )
    _, p = plan_json(buy, explain="alternatives")
    groups: dict = {}
    for r in p["rejected"]:
        first = r["reasons"][0]
        groups.setdefault((first["rule"] or first["code"], first["message"].replace(r["name"], "each")), []).append(
            r["gpu"]
        )
    shared = [gids for gids in groups.values() if len(gids) > 1]
    assert shared
    out = plan_text(p, "table")
    section = out.split("Not chosen", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(section) - 3 == len(groups)  # title, header, rule: then one row per reason
    for gids in shared:
        assert sum(", ".join(gids) in line for line in section) == 1
    verbose = plan_text(p, "table", verbose=True)
    full = verbose.split("Not chosen", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(full) - 3 == sum(len(r["reasons"]) for r in p["rejected"])


def test_diagnosis_quantifies_and_is_never_empty(catalog, rules):
    """An office job far beyond a $10,000 budget and a 7-day deadline: the shortfall is stated in
    GPU-hours, dollars and days, and each change offered gives a plan."""
    doc = {
        "deployment": {"context": "office", "ownership": "any", "lead_time_days": 0},
        "model": "mpt-7b",
        "tokens": "300B",
        "deadline": "7d",
        "budget_usd": 10_000,
        "gpus": {"allow": ["rtx-4090", "h100-sxm", "a100-80gb-sxm"]},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    assert not p.feasible
    kinds = {d["constraint"] for d in p["diagnosis"]}
    assert "shortfall:work" in kinds
    work = next(d for d in p["diagnosis"] if d["constraint"] == "shortfall:work")
    assert work["gpu_hours"] > 0 and "GPU-hours" in work["message"]
    levers = [d for d in p["diagnosis"] if d.get("kind") == "lever"]
    assert levers or any(d.get("kind") == "nothing" for d in p["diagnosis"])
    budget = [d for d in p["diagnosis"] if d["constraint"] == "shortfall:budget"]
    for d in budget:  # "the $10,000 budget is X% of it", X recomputed
        share = 100 * 10_000 / d["needed"]
        assert f"{share:.2g}%" in d["message"] or f"{share:.0f}%" in d["message"]


def test_a_deadline_held_at_p80_binds_when_its_p80_time_is_within_tolerance(catalog, rules):
    """The MILP holds a deadline at the P80 job time; the binding table measures the same P80 time.
    GPT-2 124M, 10B tokens, RTX 4090 only: a deadline 0.05% above the one-GPU plan's P80 time
    binds (was: "0.28 days of slack" on the point estimate), and tightening it by 0.5% moves the
    plan from 1 GPU to 2."""
    base = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "gpus": {"allow": ["rtx-4090"]},
    }
    free = plan(parse_workload(base), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert free["jobs"][0]["gpu_count"] == 1
    p80_days = free["jobs"][0]["wall_days_planned"]
    assert p80_days > free["jobs"][0]["wall_days"]  # the P80 time is above the point estimate

    def at(days: float):
        doc = {**base, "deadline": f"{days * 24:.6f}h"}
        return plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)

    p = at(p80_days * 1.0005)
    row = next(b for b in p["binding"] if b["constraint"].startswith("deadline:"))
    assert p["jobs"][0]["gpu_count"] == 1 and row["binding"] is True
    assert row["slack"] == pytest.approx(p80_days * 0.0005, abs=1e-3)
    assert at(p80_days * 0.995)["jobs"][0]["gpu_count"] == 2
