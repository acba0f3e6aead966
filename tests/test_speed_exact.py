"""The printed speed break-even is right at the whole percent it is printed (review L6): the choice
holds at P - 1 and has changed at P under solves proven within EXACT_GAP, not merely under the
explanations' 1% gap, which a few percent of speed moves a plan's cost by less than (train-and-serve
printed 48% where exact re-solves change its choice at 41%)."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import AS_OF, EXAMPLES
from test_ranges import CLOSE

from advisor.explain import ranges
from advisor.flow import prepare
from advisor.inputs.workload import load_workload, parse_workload
from advisor.solve.milp import solve
from advisor.solve.rental_offers import pairs_of
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings

# one job, renting an H100 or an A100 (test_ranges.CLOSE): the plans the stand-in solver returns
FIXED, SCALED, OTHER = 90.0, 10.0, 101.5  # the chosen plan: 90 + 10 / speed; the other plan: 101.5


def stand_in(problem, calls):
    """A gap-tolerant solver on a hand-checkable cost model: the chosen plan (H100 rented) costs
    FIXED + SCALED / f at the H100's speed factor f, the other (A100 rented) OTHER at any f. Exactly,
    the H100 is chosen while 10 / f <= 11.5, f >= 0.8696: at 13% slower (86.96 <= 87), not at 14%.
    Within a relative gap g the solver keeps the H100 plan while it costs at most OTHER x (1 + g),
    reporting the gap it is proven within: at g = 1%, while 10 / f <= 12.515, f >= 0.7990, so up to
    20% slower, changing at 21%."""
    h100 = solve(problem)
    a100 = solve(problem, baseline(problem).but(speed_factor={"h100-sxm": 0.5}))
    assert pairs_of(h100) == {("h100-sxm", "rent")} and pairs_of(a100) == {("a100-80gb-sxm", "rent")}

    def fake(pr, sc, settings):
        gap = settings.gap_for(pr)
        calls.append(gap)
        mine = FIXED + SCALED / sc.speed_factor.get("h100-sxm", 1.0)
        if mine <= OTHER * (1 + gap):
            within = max(0.0, (mine - OTHER) / mine)
            return dataclasses.replace(h100, objective_usd=mine, solver={**h100.solver, "gap": within})
        return dataclasses.replace(a100, objective_usd=OTHER, solver={**a100.solver, "gap": 0.0})

    return h100, fake


def test_the_printed_percent_is_the_exact_break_even_not_the_gaps(catalog, rules, monkeypatch):
    """Searched on 1% re-solves (what the explanations used), the answer was 21%; decided by solves
    proven within EXACT_GAP it is 14%: the H100 holds at 13% and has lost at 14%."""
    problem = prepare(parse_workload(CLOSE), catalog, rules, AS_OF)
    calls: list[float] = []
    sol, fake = stand_in(problem, calls)
    monkeypatch.setattr(ranges, "solve", fake)
    (item,) = ranges.speed_sensitivity(problem, sol, {}, SolveSettings(gap=0.01))
    assert item["percent"] == 14, item["message"]
    assert "\u2265 14% below the estimate" in item["message"] and "approximate" not in item["message"]
    assert "a100-80gb-sxm" in item["switches_to"]
    # the stand-in's exact answer, by hand: 90 + 10 / 0.87 = 101.49 <= 101.5 < 101.63 = 90 + 10 / 0.86
    assert FIXED + SCALED / 0.87 <= OTHER < FIXED + SCALED / 0.86


def test_a_fleet_keeps_its_gap_and_says_the_percent_is_approximate(catalog, rules, monkeypatch):
    """A fleet's re-solves are not tightened (they would take minutes): it says 'about P% or more'
    and why, instead of a '>= P%' its 1% solves cannot decide."""
    problem = prepare(parse_workload(CLOSE), catalog, rules, AS_OF)
    calls: list[float] = []
    sol, fake = stand_in(problem, calls)
    monkeypatch.setattr(ranges, "solve", fake)
    monkeypatch.setattr(ranges, "FLEET_JOBS", problem.job_count)  # this one-job problem counted a fleet
    (item,) = ranges.speed_sensitivity(problem, sol, {}, SolveSettings(gap=0.01))
    assert item["percent"] == 21 and set(calls) == {0.01}, (item, calls)
    assert "about 21% or more below the estimate" in item["message"], item["message"]
    assert "approximate: its re-solves are proven only within 0.98% of the least cost" in item["message"]


@pytest.mark.slow  # (train-and-serve's whole plan: HEAVY_EXAMPLES; the stand-in above checks the search fast)
def test_train_and_serve_break_even_holds_short_and_changes_at_exact_re_solves(example_plan, catalog, rules):
    _, p = example_plan("train-and-serve")
    problem = prepare(load_workload(EXAMPLES / "train-and-serve.yaml"), catalog, rules, AS_OF)
    item = next(s for s in p["sensitivity"]["speed"] if s["direction"] == "slower")
    pair, pct = (item["gpu"], item["ownership"]), item["percent"]
    exact = SolveSettings(gap=1e-7, time_limit=120)

    def holds(x):
        s = solve(problem, baseline(problem).but(speed_factor={pair[0]: (100 - x) / 100}), exact)
        assert s.solver["proven_optimal"] and s.solver["gap"] <= 1e-6
        return pair in pairs_of(s)

    assert holds(pct - 1) and not holds(pct), item["message"]
