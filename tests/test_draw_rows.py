"""A fleet's draws without at_once's pair rows until a plan breaks one (solve/draw_rows.py): each
draw's plan holds every row of the full model, and its cost is within the gap of the full model's
optimum, solved apart with every row in and a tight gap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import AS_OF

from advisor.explain.robustness import Verdict
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.draw_rows import LazyRows, pair_rows
from advisor.solve.redraw import Redraw
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings

pytest.importorskip("highspy")

GAP = 0.01  # a fleet's: the draws leave the pair rows out


# a few jobs with deadlines, bought with the hardware in hand (bench/solve.py's fleets, smaller)
FLEET = """
name: three jobs
deployment: {context: datacenter, ownership: buy, lead_time_days: 0}
jobs:
  - {name: a, model: llama-3-8b, kind: finetune, tokens: 2B, deadline: 5d}
  - {name: b, model: gpt2-1558m, tokens: 20B, deadline: 7d}
  - {name: d, model: gpt2-1558m, tokens: 10B, deadline: 4d}
"""


@pytest.fixture(scope="module")
def problem(catalog, rules, tmp_path_factory):
    path = tmp_path_factory.mktemp("fleet") / "three.yaml"
    path.write_text(FLEET)
    return prepare(load_workload(path), catalog, rules, AS_OF)


@pytest.fixture(scope="module")
def verdict(problem):
    return Verdict(problem, SolveSettings(gap=GAP))


def test_the_pair_rows_are_out_of_the_draws_model_and_back_only_during_a_draw(verdict):
    r = verdict.redraw
    m = r.model
    names = pair_rows(m)
    assert names and all(n.startswith("at_once_") and len(n.split("_")) >= 5 for n in names)
    assert isinstance(r.lazy, LazyRows) and r.lazy.count == len(names)
    rows = len(m.prob._constraints) - len(names)
    assert r.h.getNumRow() == rows  # out of the HiGHS model
    assert verdict.draw(1) is not None
    assert r.h.getNumRow() == rows  # the rows a draw added are out again


def test_a_draw_holds_every_row_and_is_within_the_gap_of_the_full_optimum(verdict):
    import highspy

    r = verdict.redraw
    m = r.model
    sample = verdict.samples[0]
    r._set_draw(*sample)
    seen = {}

    def once():
        r.h.clearSolver()
        r.h.run()
        seen["x"] = np.asarray(r.h.getSolution().col_value)
        seen["cost"] = r.h.getInfo().objective_function_value

    r.lazy.search(r.h, once)
    r.lazy.restore(r.h)
    x, col = seen["x"], {v.name: j for j, v in enumerate(m.prob.variables())}
    for name, con in m.prob._constraints.items():  # every row of the full model, read from PuLP's own
        lhs = sum(a * x[col[v.name]] for v, a in con.items()) + con.constant
        tol = 1e-6 * max(1.0, abs(con.constant))
        assert con.sense < 0 or lhs >= -tol, name
        assert con.sense > 0 or lhs <= tol, name
    h = r.h  # the full model, apart: every pair row in, a tight gap
    r.lazy._add(h, list(range(r.lazy.count)))
    try:
        h.setOptionValue("mip_rel_gap", 1e-4)
        h.clearSolver()
        h.run()
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        best, bound = h.getInfo().objective_function_value, h.getInfo().mip_dual_bound
    finally:
        r.lazy.restore(h)
        h.setOptionValue("mip_rel_gap", GAP)
    assert math.isfinite(seen["cost"])
    assert bound - 1e-6 * abs(bound) <= seen["cost"] <= best + GAP * abs(seen["cost"]) + 1e-6


def test_few_jobs_draws_keep_every_row(problem):
    r = Redraw(problem, baseline(problem), {}, SolveSettings())  # three jobs' own gap: 0.01%, every row in
    assert r.lazy is None
    assert r.h.getNumRow() == len(r.model.prob._constraints)


class _Clock:
    """time.perf_counter that moves on by `step` seconds at every reading."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_a_draws_rounds_share_its_time_limit(verdict, monkeypatch):
    from advisor.solve import draw_rows
    from advisor.solve.redraw import TIMED_OUT

    r = verdict.redraw
    first = []

    def once():
        r.h.clearSolver()
        r.h.run()
        first.append(bool(len(r.lazy.broken(np.asarray(r.h.getSolution().col_value)))))

    breaks = None
    for sample in verdict.samples:  # a draw whose first plan (without the pair rows) breaks one
        r._set_draw(*sample)
        once()
        if first.pop():
            breaks = sample
            break
    assert breaks is not None
    r.h.setOptionValue("time_limit", 2.0)
    monkeypatch.setattr(draw_rows, "time", _Clock(3.0))  # 3 s gone by the first run's end: none left
    r._set_draw(*breaks)
    try:
        assert r.lazy.search(r.h, once) is False  # the limit spent, its plan breaking a row: no plan in time
        assert r.h.getOptionValue("time_limit")[1] == 2.0  # the draw's own limit, set back
    finally:
        r.lazy.restore(r.h)
    assert r._run_draw() == (frozenset(), (TIMED_OUT,), False, frozenset())  # what the verdict counts
