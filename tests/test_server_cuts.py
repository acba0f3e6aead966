"""The servers_ rows (solve/constraints/slots.py, in the robustness draws' model) are valid inequalities: each holds at every integer
point of the formulation without them (checked by minimising the row's left-hand side over that
formulation: a cut that removed a plan would go below 0), and the job-size rows' bound is exactly
attained (the fewest servers a plan with that job size buys), so it is as tight as it can be. The
robustness draws, which set those rows' coefficients to each draw's replica bound, choose what full
solves choose."""

from __future__ import annotations

import math

import pytest
from conftest import AS_OF, EXAMPLES

from advisor.explain.robustness import Verdict
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.constraints.slots import servers_needed
from advisor.solve.formulation import build_model
from advisor.solve.highs_model import HighsModel
from advisor.solve.milp import solve
from advisor.solve.model import Model
from advisor.solve.redraw import signature
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.usable import usable_candidates


def _without_cuts(example: str, catalog, rules) -> tuple[Model, dict, HighsModel]:
    """The example's model at baseline, its servers_ rows taken out (name -> row), and the rest in HiGHS."""
    problem = prepare(load_workload(EXAMPLES / example), catalog, rules, AS_OF)
    sc = baseline(problem)
    model = build_model(problem, sc, usable_candidates(problem, sc), redrawn=True, cuts=True)  # (the draws')
    rows = model.prob._constraints  # (name -> row, as solve/redraw.py reads them)
    cuts = {name: row for name, row in rows.items() if name.startswith("servers_")}
    for name in cuts:
        del rows[name]
    hm = HighsModel(model, {}, 1.0)
    hm.h.setOptionValue("mip_rel_gap", 0.0)
    return model, cuts, hm


def _least(hm: HighsModel, terms: dict[str, float], fixed: dict[str, float] | None = None) -> float | None:
    """The least of sum(a x) over the integer points of hm's model (None: none with `fixed`)."""
    import highspy

    h = hm.h
    n = h.getNumCol()
    lp = h.getLp()
    low, up = list(lp.col_lower_), list(lp.col_upper_)
    h.changeColsCost(n, list(range(n)), [0.0] * n)
    for name, a in terms.items():
        h.changeColCost(hm.col[name], a)
    for name, x in (fixed or {}).items():
        h.changeColBounds(hm.col[name], x, x)
    h.clearSolver()
    h.run()
    status, least = h.getModelStatus(), h.getInfo().objective_function_value
    for name in fixed or {}:
        j = hm.col[name]
        h.changeColBounds(j, low[j], up[j])
    if status == highspy.HighsModelStatus.kInfeasible:
        return None
    assert status == highspy.HighsModelStatus.kOptimal
    return least


@pytest.mark.parametrize("example", ["train-and-serve.yaml", "serve-8b-office.yaml", "lora-7b-workstation.yaml"])
def test_every_server_cut_holds_at_every_plan_of_the_formulation_without_it(example, catalog, rules):
    model, cuts, hm = _without_cuts(example, catalog, rules)
    assert cuts or example == "lora-7b-workstation.yaml"
    for name, row in cuts.items():
        least = _least(hm, {v.name: a for v, a in row.items()})
        assert least is not None and least >= -1e-6, name  # sum_s S - needed x (z, y / m or r / R) >= 0


def test_a_job_size_needs_exactly_the_servers_its_row_asks(catalog, rules):
    """servers_g_n: the fewest servers of g a plan with z[g,n] = 1 buys is ceil(n / P_g), no more (so the
    row could ask no more) and no fewer (so it asks nothing a plan does not pay)."""
    model, cuts, hm = _without_cuts("train-and-serve.yaml", catalog, rules)
    checked = 0
    for (g, n), z in model.z.items():
        if f"servers_{g.replace('-', '_').replace('.', '_')}_{n}" not in cuts:
            continue
        fewest = _least(hm, {model.S[g, s.id].name: 1.0 for s in model.problem.servers[g]}, {z.name: 1.0})
        if fewest is None:
            continue  # no plan uses that size (a deadline, say)
        assert fewest == pytest.approx(servers_needed(model, g, n)), (g, n)
        assert servers_needed(model, g, n) == math.ceil(n / max(s.slots for s in model.problem.servers[g]))
        checked += 1
    assert checked >= 5


def test_draws_with_the_tight_replica_bounds_choose_what_full_solves_choose(catalog, rules):
    """Each draw sets serve_uses_k_i's and servers_k_i's coefficient from the draw's own replica bound:
    the draw's purchase is a full solve's at its speeds and prices."""
    problem = prepare(load_workload(EXAMPLES / "train-and-serve.yaml"), catalog, rules, AS_OF)
    verdict = Verdict(problem, SolveSettings())
    assert verdict.redraw.model is not None and any(row[5] for row in verdict.redraw.serve_rows)
    for speed, buy, rent, _, _ in verdict.samples[:4]:  # (the rent normal, the serving throughput: at `speed`)
        full = solve(problem, baseline(problem).but(speed_factor=speed, buy_factor=buy, rent_factor=rent))
        got = verdict.redraw.choice(speed, buy, rent)
        assert got is not None and got[1] == signature(problem, full.bought, full.assignment, full.serving)


def test_only_the_few_jobs_draws_model_carries_the_server_cuts(catalog, rules):
    """The plan's own solves keep the formulation without them, and so do draws at a 1% gap (a fleet's, or a
    plan asked for one): there the cuts would move which plan within the gap HiGHS returns."""
    from advisor.solve.redraw import Redraw

    problem = prepare(load_workload(EXAMPLES / "train-and-serve.yaml"), catalog, rules, AS_OF)
    sc = baseline(problem)
    plan_rows = set(build_model(problem, sc, usable_candidates(problem, sc)).prob._constraints)
    assert not any(name.startswith("servers_") for name in plan_rows)
    few, loose = (Redraw(problem, sc, {}, SolveSettings(gap=gap)) for gap in (None, 0.01))
    assert few.model is not None and loose.model is not None
    assert few.model.cuts and not loose.model.cuts
    cuts = set(few.model.prob._constraints) - set(loose.model.prob._constraints)
    assert cuts and all(name.startswith("servers_") for name in cuts)
    assert not any(name.startswith("servers_") for name in loose.model.prob._constraints)


def test_each_draws_serving_server_cuts_hold_at_every_plan_of_that_draw(catalog, rules):
    """servers_k_i at the coefficient a draw sets (-needed / the draw's replica bound): the least of its
    left-hand side over the draw's model without the servers_ rows is never below 0."""
    import highspy
    import numpy as np

    problem = prepare(load_workload(EXAMPLES / "train-and-serve.yaml"), catalog, rules, AS_OF)
    verdict = Verdict(problem, SolveSettings())
    rd = verdict.redraw
    assert rd.model is not None
    cut_rows = sorted(j for name, j in rd.hm.row.items() if name.startswith("servers_"))
    serving = [servers[0] for *_, servers in rd.serve_rows if servers is not None]
    assert serving
    for sample in verdict.samples[:3]:
        rd.choice(*sample)  # the draw's coefficients stay in rd.h
        terms = []
        for j in serving:
            _, start, index, value = rd.h.getRowsEntries(1, np.array([j], dtype=np.int32))
            terms.append(dict(zip(index.tolist(), value.tolist())))
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.passModel(rd.h.getLp())
        h.deleteRows(len(cut_rows), np.array(cut_rows, dtype=np.int32))
        h.setOptionValue("mip_rel_gap", 0.0)
        n = h.getNumCol()
        for coefs in terms:
            h.changeColsCost(n, np.arange(n, dtype=np.int32), np.zeros(n))
            for col, a in coefs.items():
                h.changeColCost(col, a)
            h.run()
            assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            assert h.getInfo().objective_function_value >= -1e-6, coefs
