"""The optimizer: exact against brute force, fleets share GPUs, explanations re-solve honestly."""

from __future__ import annotations

import functools
import itertools
import math

import pytest
import yaml
from conftest import AS_OF, EXAMPLES, ci_examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.data.catalog import load_catalog
from advisor.data.rules import load_rules
from advisor.flow import plan, prepare
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.inputs.workload import parse_workload
from advisor.solve.constraints.at_once import makespan_hours
from advisor.solve.milp import solve
from advisor.solve.scenario import baseline
from advisor.solve.sweeps import solve_fastest

# 15 derandomized examples in CI (each ~0.6 s of CPU: a brute force or two solves), 30 otherwise
SETTINGS = settings(max_examples=ci_examples(15, 30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
GPUS = ["rtx-4090", "a100-80gb-sxm", "h100-sxm"]


def problem_for(doc, catalog=None, rules=None):
    return prepare(parse_workload(doc), catalog or CATALOG(), rules or RULES(), AS_OF)


@functools.lru_cache(maxsize=1)
def CATALOG():
    return load_catalog()


@functools.lru_cache(maxsize=1)
def RULES():
    return load_rules()


def _owned_options(problem, g, mine):
    """Every way to own the GPUs of type g that `mine` [(candidate, due hour)] run on: for each holding
    period and server platform, (present value, cash, kW, GPUs). Capacity by deadline level: a GPU held
    until T works min(L, T) hours by L (docs/model.md). A bought GPU and its server pay the region's tax
    and the GPU its burn-in; a held GPU pays support on its price each month; a job wider than a server
    pays the network of its band (economics/purchase_bill.py HardwareTerms). Every server bought pays
    its whole price's support, and its whole power's hosting and burn-in, however many slots are filled
    (review23b #1): servers x price, not slots x a share."""
    price, hw, costs = problem.unit_price[g], problem.hardware[g], problem.costs
    support = hw.support_rate_month * price
    burn_in_kwh = problem.catalog.economics.burn_in["hours"].value * costs.pue * costs.electricity_usd_per_kwh
    kw_month = (
        costs.hosting_usd_per_kw_month
        + (costs.utilization or 0.0) * costs.pue * costs.electricity_usd_per_kwh * HOURS_PER_MONTH
    )
    per_server = max(s.slots for s in problem.servers[g])
    out = []
    for hold in problem.holdings[g]:
        need = max(c.count for c, _ in mine)
        for _, level in mine:
            room = min(level, hold.hours) - problem.arrival[g].hours  # the GPUs work from their arrival
            hours = sum(c.planned_gpu_hours for c, due in mine if due <= level)
            need = max(need, math.ceil(hours / room - 1e-9) if room > 0 else (0 if not hours else 10**9))
        if need > (problem.workload.gpus.stock or {}).get(g, math.inf):
            continue
        for s in problem.servers.get(g, []):
            count = math.ceil(need / s.slots)
            gpus = count * s.slots if s.filled else need
            multi = [c.count for c, _ in mine if c.count > per_server]
            network = max((hw.network_usd(math.ceil(m / per_server) * per_server) for m in multi), default=0.0)
            if network is None:
                continue  # a network that cannot be costed is not offered
            rest = count * (  # a month of each whole server's support and hosting
                hw.support_rate_month * s.price_usd + s.overhead_kw * kw_month * costs.services_taxed
            )
            fixed = (
                count * (s.price_usd * (1 + hw.tax_rate) + s.overhead_kw * burn_in_kwh * costs.services_taxed) + network
            )
            bought = gpus * (price * (1 + hw.tax_rate) + hw.burn_in_usd)
            out.append(
                (
                    fixed
                    + bought
                    + gpus * (hold.pv_usd(price) + support * hold.months_held_pv)
                    + rest * hold.months_held_pv,
                    fixed + bought + gpus * (hold.cash_usd + support * hold.months_held) + rest * hold.months_held,
                    gpus * problem.gpu_kw[g] + count * s.overhead_kw,
                    gpus,
                )
            )
    return out


def brute_force(problem) -> float | None:
    """Cheapest plan by enumerating every candidate for every job and every way to own its GPUs: an
    independent implementation of docs/model.md §2 (fleet = largest owned job, capacity by deadline
    over the holding period, servers, limits; the budget caps cash). A held GPU costs its hosting
    less its discounted resale at the end of the period (`holdings`, solve/holding.py)."""
    wl = problem.workload
    horizon = problem.costs.horizon_hours
    per_class = []  # one entry per job: identical jobs choose independently
    for cls, cands in zip(problem.classes, problem.candidates):
        due = min(cls.deadline or math.inf, horizon)
        usable = [
            c for c in cands if c.start_hours + c.planned_hours <= due * (1 + 1e-9)
        ]  # from its start, at the confidence
        per_class += [usable] * cls.multiplicity
    best = None
    for combo in itertools.product(*per_class):
        if len(combo) == 1 and wl.gpus.lower is not None and combo[0].count < wl.gpus.lower:
            continue
        if len(combo) == 1 and wl.gpus.upper is not None and combo[0].count > wl.gpus.upper:
            continue
        run_pv = sum(c.run_cost_usd for c in combo)
        run_cash = sum(c.run_cost_nominal if c.run_cost_nominal is not None else c.run_cost_usd for c in combo)
        rented = sum(c.count for c in combo if c.ownership == "rent")
        owned = {
            g: [(c, problem.classes[c.cls].deadline or horizon) for c in combo if c.gpu == g and c.ownership == "buy"]
            for g in sorted({c.gpu for c in combo if c.ownership == "buy"})
        }
        for choice in itertools.product(*(_owned_options(problem, g, mine) for g, mine in owned.items())):
            storage = problem.storage.usd if problem.storage is not None else 0.0  # every plan keeps its data
            pv, cash = run_pv + sum(o[0] for o in choice) + storage, run_cash + sum(o[1] for o in choice) + storage
            kw, fleet = sum(o[2] for o in choice), rented + sum(o[3] for o in choice)
            if wl.gpus.lower is not None and fleet < wl.gpus.lower:
                continue
            if wl.gpus.upper is not None and fleet > wl.gpus.upper:
                continue
            if problem.power_limit_kw is not None and kw > problem.power_limit_kw + 1e-9:
                continue
            if wl.budget_usd is not None and cash > wl.budget_usd + 1e-6:
                continue
            best = pv if best is None else min(best, pv)
    return best


jobs = st.lists(
    st.fixed_dictionaries(
        {
            "model": st.sampled_from(["gpt2-124m", "gpt2-350m", "gpt2-774m"]),
            "tokens": st.sampled_from(["2B", "10B", "40B"]),
            "deadline": st.sampled_from(["2d", "7d", "30d"]),
        }
    ),
    min_size=1,
    max_size=2,
)


@SETTINGS
@given(
    jobs=jobs,
    gpus=st.lists(st.sampled_from(GPUS), min_size=1, max_size=3, unique=True),
    context=st.sampled_from(["office", "datacenter"]),
    ownership=st.sampled_from(["buy", "rent", "any"]),
    budget=st.sampled_from([None, 3_000, 40_000]),
    upper=st.sampled_from([None, 2, 8]),
)
def test_milp_optimum_equals_brute_force(jobs, gpus, context, ownership, budget, upper):
    doc = {
        "deployment": {"context": context, "ownership": ownership, "lead_time_days": 0},
        "jobs": [dict(j, name=f"j{i}") for i, j in enumerate(jobs)],
        "gpus": {"allow": gpus},
    }
    if budget:
        doc["budget_usd"] = budget
    if upper:
        doc["gpus"]["max"] = upper
    problem = problem_for(doc)
    expected = brute_force(problem)
    got = solve(problem)
    if expected is None:
        assert not got.feasible
    else:
        assert got.feasible and got.mip_objective_usd == pytest.approx(expected, rel=1e-6, abs=0.05)
        # idle bought GPUs may be put to work for at most 0.1% (or $1) more
        assert got.objective_usd - got.mip_objective_usd <= max(1.0, 1e-3 * expected) + 1e-6


@SETTINGS
@given(jobs=jobs, ownership=st.sampled_from(["buy", "any"]), scale=st.sampled_from([1.5, 3.0]))
def test_a_later_deadline_never_costs_more_or_makes_a_workload_infeasible(jobs, ownership, scale):
    doc = {
        "deployment": {"context": "office", "ownership": ownership, "lead_time_days": 0},
        "jobs": [dict(j, name=f"j{i}") for i, j in enumerate(jobs)],
        "gpus": {"allow": GPUS},
    }
    problem = problem_for(doc)
    tight, loose = solve(problem), solve(problem, baseline(problem).but(deadline_scale=scale))
    if tight.feasible:
        assert loose.feasible and loose.objective_usd <= tight.objective_usd + 1e-3


def test_forced_cost_is_at_least_the_optimum_and_equals_a_replan_on_that_gpu(catalog, rules):
    doc = {
        "deployment": {"context": "office", "ownership": "any", "lead_time_days": 0},
        "model": "gpt2-350m",
        "tokens": "20B",
        "deadline": "7d",
        "gpus": {"allow": GPUS},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    forced = [r for r in p["rejected"] if r["forced_cost_usd"] is not None]
    assert forced
    for r in forced:
        assert r["forced_cost_usd"] >= p["total_cost_usd"]
        alone = plan(
            parse_workload({**doc, "gpus": {"allow": [r["gpu"]]}}),
            catalog=catalog,
            rules=rules,
            as_of=AS_OF,
            explain=False,
        )
        assert alone["total_cost_usd"] == pytest.approx(r["forced_cost_usd"], rel=1e-5, abs=0.006)  # to the cent


def test_identical_jobs_share_owned_gpus_over_time(catalog, rules):
    """Three one-day jobs due in a week run one after another on one owned GPU."""
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "gpus": {"allow": ["rtx-4090"]},
        "jobs": [{"name": "sweep", "model": "gpt2-124m", "tokens": "5B", "deadline": "7d", "repeat": 3}],
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    contract = ("gpu", "count", "ownership", "unit_price_usd", "gpu_hours", "rent_kind")
    assert [{k: item[k] for k in contract} for item in p["purchase"]] == [
        {
            "gpu": "rtx-4090",
            "count": 1,
            "ownership": "buy",
            "unit_price_usd": catalog.gpus["rtx-4090"].purchase_usd,
            "gpu_hours": None,
            "rent_kind": None,
        }
    ]
    assert sum(j["copies"] for j in p["jobs"]) == 3


def test_deadline_too_short_for_one_gpu_buys_enough_for_all_jobs_in_time(catalog, rules):
    one = plan(
        parse_workload(
            {
                "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
                "gpus": {"allow": ["rtx-4090"]},
                "model": "gpt2-124m",
                "tokens": "10B",
                "deadline": "7d",
            }
        ),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        explain=False,
    )
    days = one["jobs"][0]["wall_days"]
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "gpus": {"allow": ["rtx-4090"]},
        "jobs": [{"name": "a", "model": "gpt2-124m", "tokens": "10B", "deadline": f"{days * 1.5:.3f}d", "repeat": 2}],
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    # two jobs of `days` each cannot run one after the other within 1.5 x days on one GPU
    assert p["purchase"][0]["count"] == 2


def test_stock_limit_is_honoured(catalog, rules):
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "deadline": "12h",
        "gpus": {"allow": ["rtx-4090", "h100-sxm"], "stock": {"rtx-4090": 2}},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    bought = {i["gpu"]: i["count"] for i in p["purchase"]}
    assert bought.get("rtx-4090", 0) <= 2
    assert any(b["constraint"] == "stock:rtx-4090" for b in p["binding"]) or "rtx-4090" not in bought


BUDGET = 14_500  # cash: the $7,000 workstation of 2026 (issue 29; it was $2,630), a few cards and their tax


def test_objective_time_is_fastest_within_budget(catalog, rules):
    # a 3.6 kW room (the workload's own limit replaces PWR001's 1.44 kW office default, which
    # would stop at two cards before the budget binds)
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0, "power_limit_kw": 3.6},
        "model": "gpt2-124m",
        "tokens": "10B",
        "gpus": {"allow": ["rtx-4090"], "max": 8},
        "budget_usd": BUDGET,
    }
    problem = problem_for(doc, catalog, rules)
    fast = solve_fastest(problem)
    cheap = solve(problem)
    assert makespan_hours(problem, fast) < makespan_hours(problem, cheap)
    # cards go into a 4-slot workstation: as many cards as the budget's cash pays for (each card's price
    # and the host's, with the region's sales tax, and the card's burn-in; resale is not cash in hand)
    # beside a few dollars of storage, support and electricity
    card, host = catalog.gpus["rtx-4090"].purchase_usd, catalog.servers["workstation-4x-pcie"].purchase.usd
    hw = problem.hardware["rtx-4090"]

    def cash(n):
        return (n * card + host) * (1 + hw.tax_rate) + n * hw.burn_in_usd

    n = max(k for k in range(1, 5) if cash(k) <= BUDGET)
    assert n >= 2 and BUDGET - cash(n) > 100 and (n == 4 or cash(n + 1) > BUDGET)  # not on a knife edge
    assert fast.cash_usd <= BUDGET
    assert fast.bought == {"rtx-4090": n}
    assert fast.servers == {"rtx-4090": {"workstation-4x-pcie": 1}}


def test_frontier_is_pareto(run_json, write):
    from conftest import EXAMPLES

    # the article's office job in a room with a 3.6 kW circuit: the 1.44 kW office default
    # (PWR001) would stop the front at two cards
    text = (
        (EXAMPLES / "article-office.yaml")
        .read_text()
        .replace("ownership: buy", "ownership: buy\n  power_limit_kw: 3.6")
    )
    code, f = run_json("frontier", write(text), "--as-of", AS_OF)
    pts = f["points"]
    assert code == 0 and len(pts) >= 3
    for a, b in zip(pts, pts[1:]):
        assert a["makespan_days"] < b["makespan_days"] and a["total_cost_usd"] > b["total_cost_usd"]
    _, office = run_json("frontier", EXAMPLES / "article-office.yaml", "--as-of", AS_OF)
    assert max(i["count"] for p in office["points"] for i in p["purchase"]) == 2
    # --points caps the makespans tried: two caps give at most two points, both ends of the front
    _, two = run_json("frontier", write(text, "two.yaml"), "--points", "2", "--as-of", AS_OF)
    assert 1 <= len(two["points"]) <= 2 < len(pts)
    assert two["points"][-1]["total_cost_usd"] == pts[-1]["total_cost_usd"]


@pytest.mark.parametrize(
    "extra,group,field",
    [
        ({"budget_usd": 1000}, "budget", "budget_usd"),
        ({"deadline": "6h"}, "deadline", "deadline_scale"),
        (
            {"deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0, "power_limit_kw": 0.3}},
            "power",
            "power_limit_kw",
        ),
    ],
)
def test_infeasible_diagnosis_finds_a_relaxation_that_works(extra, group, field, catalog, rules):
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "deadline": "7d",
        "gpus": {"allow": ["rtx-4090"], "max": 4},
    }
    doc.update(extra)
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    assert p["status"] == "infeasible"
    found = {d["constraint"]: d for d in p["diagnosis"]}
    assert group in found
    value = found[group]["relaxation"][field]
    fixed = dict(doc)
    if field == "budget_usd":
        fixed["budget_usd"] = value
    elif field == "deadline_scale":
        fixed["deadline"] = f"{6 * value:.4f}h"
    else:
        fixed["deployment"] = {**doc["deployment"], "power_limit_kw": value}
    again = plan(parse_workload(fixed), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert again["status"] != "infeasible"


def test_gpu_count_diagnosis(catalog, rules):
    # 3.6 kW, so the GPU count binds alone (PWR001's 1.44 kW office default would bind too)
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0, "power_limit_kw": 3.6},
        "model": "gpt2-124m",
        "tokens": "10B",
        "deadline": "14h",
        "gpus": {"allow": ["rtx-4090"], "max": 2},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    found = {d["constraint"]: d for d in p["diagnosis"]}
    n = found["gpu_count"]["relaxation"]["gpus.max"]
    ok = plan(
        parse_workload({**doc, "gpus": {"allow": ["rtx-4090"], "max": n}}),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        explain=False,
    )
    worse = plan(
        parse_workload({**doc, "gpus": {"allow": ["rtx-4090"], "max": n - 1}}),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        explain=False,
    )
    assert ok["status"] != "infeasible" and worse["status"] == "infeasible"


def test_break_even_price_actually_flips_the_choice(catalog, rules):
    doc = {
        "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "deadline": "7d",
        "gpus": {"allow": ["a100-80gb-sxm", "h100-sxm"]},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    rise = next(b for b in p["sensitivity"]["break_even"] if b["direction"] == "rise")
    problem = problem_for(doc, catalog, rules)
    assert (
        rise["gpu"]
        in solve(problem, baseline(problem).but(price_factor={rise["gpu"]: rise["factor"] * 0.97})).gpu_types()
    )
    assert (
        rise["gpu"]
        not in solve(problem, baseline(problem).but(price_factor={rise["gpu"]: rise["factor"] * 1.03})).gpu_types()
    )


def test_allow_mixed_never_costs_more(catalog, rules):
    base = {
        "deployment": {"context": "office", "ownership": "any", "lead_time_days": 0},
        "gpus": {"allow": GPUS, "max": 3},
        "jobs": [{"name": "big", "model": "gpt2-350m", "tokens": "40B", "deadline": "10d"}],
    }
    whole = problem_for(base, catalog, rules)
    mixed = problem_for({**base, "allow_mixed": True}, catalog, rules)
    a, b = solve(whole), solve(mixed)
    if a.feasible:
        assert b.feasible and b.objective_usd <= a.objective_usd + 1e-6


def test_cbc_fallback_gives_the_same_optimum(monkeypatch):
    """When highspy is missing the bundled CBC solves the same model to the same cost."""
    import advisor.solve.milp as opt
    from advisor.solve.run import cbc_solver

    doc = {
        "deployment": {"context": "office", "ownership": "any", "lead_time_days": 0},
        "model": "gpt2-350m",
        "tokens": "20B",
        "deadline": "3d",
        "gpus": {"allow": GPUS, "max": 8},
    }
    problem = problem_for(doc)
    highs = solve(problem)
    monkeypatch.setattr(opt, "solver_for", lambda limit, gap=None: ("cbc", cbc_solver(limit, gap)))
    cbc = solve(problem)
    assert highs.solver["name"] == "highs" and cbc.solver["name"] == "cbc"
    assert cbc.objective_usd == pytest.approx(highs.objective_usd, rel=1e-6)


def test_a_lone_job_uses_the_whole_board_it_had_to_buy(example_plan):
    """SXM parts come eight to an HGX board; the one job runs on all eight instead of leaving seven idle."""
    _, p = example_plan("article-datacenter")
    bought = {i["gpu"]: i["count"] for i in p["purchase"]}
    job = p["jobs"][0]
    assert bought[job["gpu"]] == 8 and job["gpu_count"] == 8


def test_holding_periods_past_every_due_hour_are_bounded_at_zero_and_the_optimum_stays():
    """A 30-day job needs its GPUs for one month: every later holding period costs more for no held
    hour (constraints/capacity.dominated_by_gpu), so it is bounded at 0, and the plan is the one the
    MILP finds with every period open."""
    from advisor.solve.constraints import capacity
    from advisor.solve.constraints.capacity import dominated_by_gpu

    doc = {
        "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
        "jobs": [{"name": "j", "model": "gpt2-774m", "tokens": "40B", "deadline": "30d"}],
        "gpus": {"allow": ["a100-80gb-sxm", "h100-sxm"]},
    }
    problem = problem_for(doc)
    sc = baseline(problem)
    for g, levels in problem.holdings.items():
        first = next(lv for lv, h in enumerate(levels) if h.hours >= 30 * 24)
        assert dominated_by_gpu(problem, sc)[g] == set(range(first + 1, len(levels)))
        # the job's own finishes (solve/holding.py), then month 1 covers 30 days; 36 months offer more
        assert round(levels[first].months) == 1 and all(h.hours < 30 * 24 for h in levels[:first])
        assert len(levels) - first > 5
    # the deadline lifted (a diagnosis): every period stays open
    assert all(
        not dominated_by_gpu(problem, sc.but(deadline_scale=1e9, horizon_hours=None))[g] for g in problem.holdings
    )
    # served all day for 24 months and fine-tuned by day 120: held to month 4 at the latest for the
    # fine-tune alone (periods before it may suffice), or to month 24 when it serves; months 6-18 never
    served = problem_for(yaml.safe_load((EXAMPLES / "train-and-serve.yaml").read_text()))
    levels = served.holdings["rtx-6000-ada"]
    ends = sum(h.months < 2.5 for h in levels)  # the fine-tune's own finishes, by GPU count
    assert [round(h.months) for h in levels[ends:]] == [3, 4, 6, 9, 12, 18, 24]  # bought ones arrive in 10 weeks
    assert dominated_by_gpu(served, baseline(served))["rtx-6000-ada"] == {ends + 2, ends + 3, ends + 4, ends + 5}
    pruned = solve(problem)
    problem.solver_cache.clear()
    original = capacity.dominated_by_gpu
    try:
        capacity.dominated_by_gpu = lambda *a: {}
        every = solve(problem)
    finally:
        capacity.dominated_by_gpu = original
    assert pruned.bought == every.bought and pruned.held == every.held
    assert pruned.objective_usd == pytest.approx(every.objective_usd, rel=1e-9)
