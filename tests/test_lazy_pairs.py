"""A fleet's explanation re-solves without at_once's pair rows until a plan breaks one
(solve/lazy_pairs.py): the plan holds every row of the full model, its cost is the full model's
optimum, and the shared model has every row back for the next solve (the plan's own)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import AS_OF
from test_draw_rows import FLEET as DRAW_FLEET

from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.constraints import limit_rows
from advisor.solve.draw_rows import pair_rows
from advisor.solve.fast import _shared_model, solve_fast
from advisor.solve.highs_model import HighsModel
from advisor.solve.lazy_pairs import free_rows
from advisor.solve.scenario import baseline
from advisor.solve.settings import FLEET_JOBS, SolveSettings
from advisor.solve.verify import violations

pytest.importorskip("highspy")

# test_draw_rows' three jobs with deadlines, bought with the hardware in hand: two cannot run in turn on 6
# GPUs; on two GPU types (a small model: 9 pair rows)
FLEET = DRAW_FLEET + "gpus:\n  allow: [rtx-6000-ada, a100-80gb-pcie]\n"


@pytest.fixture(scope="module")
def problem(catalog, rules, tmp_path_factory):
    path = tmp_path_factory.mktemp("fleet") / "three.yaml"
    path.write_text(FLEET)
    return prepare(load_workload(path), catalog, rules, AS_OF)


def _bounds(h) -> tuple[list, list]:
    lp = h.getLp()
    return list(lp.row_lower_), list(lp.row_upper_)


def _holds_every_row(hm: HighsModel) -> None:
    """The PuLP values HighsModel.run read back meet every row of the full model, read from PuLP's own."""
    for name, con in hm.model.prob._constraints.items():
        lhs = sum(a * (v.varValue or 0.0) for v, a in con.items()) + con.constant
        tol = 1e-6 * max(1.0, abs(con.constant))
        assert con.sense < 0 or lhs >= -tol, name
        assert con.sense > 0 or lhs <= tol, name


@pytest.fixture
def model(problem):
    """The problem's shared model at the workload as written, its full optimum (one run, every row in,
    no late_cuts rows) and its FreeRows."""
    sc = baseline(problem)
    _, _, hm = _shared_model(problem, sc)
    hm.apply(sc, limit_rows(sc))
    assert hm.run(None, 0.0)[0] == "optimal"
    return hm, hm.h.getInfo().objective_function_value, free_rows(hm)


def test_lazy_rows_hold_every_row_at_the_full_optimum(model, monkeypatch):
    hm, best, pairs = model
    assert pairs.count == len(pair_rows(hm.model)) > 0
    before = _bounds(hm.h)
    broken = []
    run = HighsModel.run

    def seen(self, *args):
        got = run(self, *args)
        broken.append(bool(pairs.broken(np.asarray(self.h.getSolution().col_value)).any()))
        return got

    monkeypatch.setattr(HighsModel, "run", seen)
    try:
        assert pairs.run(hm, None, 0.0) == ("optimal", True, 0.0)
        assert broken[0] and not broken[-1]  # the first plan breaks a pair row: rows had to come back
        _holds_every_row(hm)
        assert hm.h.getInfo().objective_function_value == pytest.approx(best, rel=1e-9)
    finally:
        pairs.restore(hm)
    assert _bounds(hm.h) == before  # every pair row's bounds back: the model of the plan's own solve


def test_a_round_stopped_on_time_that_breaks_a_row_is_run_again_with_every_row(model, monkeypatch):
    hm, best, pairs = model
    every = int((np.asarray(hm.h.getLp().row_lower_) > -np.inf).sum())  # rows with a lower bound (pair rows too)
    bounded = []  # ... at each run
    run = HighsModel.run

    def on_time(self, *args):  # every run reads as stopped at its time limit
        bounded.append(int((np.asarray(self.h.getLp().row_lower_) > -np.inf).sum()))
        got = run(self, *args)
        self.stopped_on_time = True
        return got

    monkeypatch.setattr(HighsModel, "run", on_time)
    try:
        pairs.run(hm, 60.0, 0.0)
    finally:
        pairs.restore(hm)
    assert bounded == [every - pairs.count, every]  # freed, then every row back for the whole limit
    _holds_every_row(hm)
    assert hm.h.getInfo().objective_function_value == pytest.approx(best, rel=1e-9)


def test_a_lazy_re_solve_is_a_plan_of_the_workload_and_leaves_every_row_in(problem):
    sc = baseline(problem)
    full = solve_fast(problem, sc, None, 0.0, polish=False)
    _, _, hm = _shared_model(problem, sc)
    before = _bounds(hm.h)
    lazy = solve_fast(problem, sc, None, 0.0, polish=False, lazy=True)
    assert lazy.status == "optimal" and lazy.objective_usd == pytest.approx(full.objective_usd, rel=1e-9)
    assert violations(problem, lazy) == []
    assert _bounds(hm.h) == before and hm.h.getNumRow() == len(before[0])


def test_only_a_fleets_re_solves_leave_the_pair_rows_out():
    fleet, few = SimpleNamespace(job_count=FLEET_JOBS), SimpleNamespace(job_count=FLEET_JOBS - 1)
    own = SolveSettings()
    assert not own.lazy_for(fleet)  # the plan's own solve keeps every row
    assert own.explaining(fleet).lazy_for(fleet)
    assert not own.explaining(few).lazy_for(few)  # a few jobs' explanations keep their search
