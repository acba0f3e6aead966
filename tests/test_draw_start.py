"""Where each robustness draw's search starts (solve/draw_start.py): one plan, solved before any draw
at the draws' slowest speeds, so a draw's answer depends neither on the order nor on the process that
draws it, and a started draw proves the optimum a search with no start (or a full solve) finds."""

from __future__ import annotations

import pytest
from conftest import AS_OF, EXAMPLES

from advisor.explain.robustness import Verdict
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve import parallel
from advisor.solve.draw_start import slowest
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


def test_the_start_is_the_plan_at_the_slowest_draw_and_fixed_before_any(verdict):
    r = verdict.redraw
    assert r.model is not None and r.hint is not None
    start = list(r.hint)
    speeds, serves = [s[0] for s in verdict.samples], [s[4] for s in verdict.samples]
    # the same plan whatever order the draws are given in
    again = Redraw(verdict.problem, baseline(verdict.problem), r.fastest, SolveSettings(), speeds[::-1], serves[::-1])
    assert again.hint == start
    # and it is a plan of the slowest draw, not of the fastest one: it holds more of the serving GPUs
    slow_speed, slow_serve = slowest(sorted(r.fastest), speeds, serves)
    assert slow_speed != r.fastest
    r.choice(slow_speed, {}, {}, None, slow_serve)
    assert r.h.getInfo().objective_function_value == pytest.approx(
        sum(c * x for c, x in zip(r.h.getLp().col_cost_, start)), rel=1e-4
    )
    answers(verdict, list(range(5)))
    assert r.hint == start  # drawing does not move it


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
    start, r.hint = r.hint, None
    try:
        fresh = answers(verdict, list(range(8)))
    finally:
        r.hint = start
    for i in range(8):
        assert started[i][0] == fresh[i][0], i
        assert started[i][1] == pytest.approx(fresh[i][1], rel=2e-4), i
    # a full PuLP solve of a draw's scenario (Redraw._solved_choice: every offer at the type's rent, serving
    # at the draw's speed) buys what the started draw at those factors buys
    for speed, buy, rent, *_ in verdict.samples[:3]:
        assert r.choice(speed, buy, rent) == r._solved_choice(speed, buy, rent)
