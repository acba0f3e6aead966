"""Where each robustness draw's search starts (solve/draw_start.py): the plan at the draws' slowest
speeds where it lies within the draw's bounds, else the model's as built, both solved before any draw,
so a draw's answer depends neither on the order nor on the process that draws it, and a started draw
proves the optimum a search with no start (or a full solve) finds."""

from __future__ import annotations

import pytest
from conftest import AS_OF, EXAMPLES

from advisor.explain.robustness import Verdict
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve import parallel
from advisor.solve.draw_start import Starts, slowest
from advisor.solve.redraw import Redraw
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings

pytest.importorskip("highspy")


def test_the_slowest_speed_and_serving_rate_by_hand():
    draws = [{"a": 0.9, "b": 1.1}, {"a": 0.7}, {"a": 1.2, "b": 0.8}]
    serves = [None, {"a": 0.95, "b": 0.6}]  # the first and third draws serve at their speed
    speed, serve = slowest(["a", "b"], draws, serves)
    assert speed == {"a": 0.7, "b": 0.8}  # b is absent from the second draw: its factor 1
    assert serve == {"a": 0.9, "b": 0.6}


@pytest.fixture(scope="module")
def verdict(catalog, rules):
    problem = prepare(load_workload(EXAMPLES / "serve-8b-office.yaml"), catalog, rules, AS_OF)
    return Verdict(problem, SolveSettings())


def answers(v: Verdict, order: list[int]) -> dict[int, tuple]:
    """Each draw's answer and HiGHS objective, drawn in `order`."""
    out = {}
    for i in order:
        got = v.redraw.choice(*v.samples[i])
        out[i] = (got, v.redraw.h.getInfo().objective_function_value)
    return out


def test_a_draw_takes_the_first_plan_within_its_bounds():
    import highspy
    import numpy as np

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(3, np.zeros(3), np.full(3, 10.0))
    h.changeColsIntegrality(2, np.array([0, 1], dtype=np.int32), np.array([1, 1], dtype=np.uint8))
    # the third column is continuous: a plan outside its bounds there is still taken (HiGHS solves for it)
    starts = Starts(h, [[4.0, 0.0, 20.0], [0.0, 2.0, 0.0]])
    assert starts.pick(h) == [4.0, 0.0, 20.0]
    h.changeColBounds(0, 0.0, 3.0)  # the first plan's 4 no longer fits: the second (the last) is taken
    assert starts.pick(h) == [0.0, 2.0, 0.0]
    h.changeColBounds(1, 0.0, 1.0)  # neither fits: the last, as a draw took before
    assert starts.pick(h) == [0.0, 2.0, 0.0]
    assert Starts(h, []).pick(h) is None


def test_the_starts_are_the_slowest_draws_plan_and_the_built_one_fixed_before_any(verdict):
    r = verdict.redraw
    assert r.model is not None and len(r.starts.plans) == 2
    slow, built = (x.tolist() for x in r.starts.plans)
    speeds, serves = [s[0] for s in verdict.samples], [s[4] for s in verdict.samples]
    # the same plans whatever order the draws are given in
    again = Redraw(verdict.problem, baseline(verdict.problem), r.fastest, SolveSettings(), speeds[::-1], serves[::-1])
    assert [x.tolist() for x in again.starts.plans] == [slow, built]
    # the first is a plan of the slowest draw (its cost there is that draw's optimum), not of the fastest
    slow_speed, slow_serve = slowest(sorted(r.fastest), speeds, serves)
    assert slow_speed != r.fastest
    r.choice(slow_speed, {}, {}, None, slow_serve)
    cost = r.h.getInfo().objective_function_value
    assert cost == pytest.approx(sum(c * x for c, x in zip(r.h.getLp().col_cost_, slow)), rel=1e-4)
    assert cost != pytest.approx(sum(c * x for c, x in zip(r.h.getLp().col_cost_, built)), rel=1e-4)
    answers(verdict, list(range(5)))
    assert [x.tolist() for x in r.starts.plans] == [slow, built]  # drawing does not move them


def test_draws_in_any_order_or_process_give_the_same_answers(verdict, monkeypatch):
    n = 12
    forward = answers(verdict, list(range(n)))
    backward = answers(verdict, list(range(n))[::-1])
    assert forward == backward
    monkeypatch.setenv(parallel.ENV, "on")
    forked = parallel.run(lambda i: verdict.redraw.choice(*verdict.samples[i]), n)
    assert forked == [forward[i][0] for i in range(n)]


def test_a_started_draw_is_the_fresh_searchs_and_the_full_solves_optimum(verdict):
    r = verdict.redraw
    started = answers(verdict, list(range(8)))
    starts, r.starts = r.starts, Starts(r.h, [])
    try:
        fresh = answers(verdict, list(range(8)))
    finally:
        r.starts = starts
    for i in range(8):
        assert started[i][0] == fresh[i][0], i
        assert started[i][1] == pytest.approx(fresh[i][1], rel=2e-4), i
    # a full PuLP solve of a draw's scenario (Redraw._solved_choice: every offer at the type's rent, serving
    # at the draw's speed) buys what the started draw at those factors buys
    for speed, buy, rent, *_ in verdict.samples[:3]:
        assert r.choice(speed, buy, rent) == r._solved_choice(speed, buy, rent)
