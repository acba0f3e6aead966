"""Every path that grades or draws a plan's rental rate does so as the plan's purchase rows do: at the
order and at the GPUs the plan holds at once on the provider (solve/constraints/gpu_count.held_counts,
RentalOffer.confidence_at; docs/model.md, a candidate's rental `kind`). Each expected factor is re-computed here from
the grades' widths in catalog/uncertainty.yaml (data/uncertainty.price_dist), not through rate_dist."""

from __future__ import annotations

import math
import os
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
import yaml
from conftest import AS_OF
from test_review22a import COPIES  # 8 x 512-GPU copies at once: 4,096 H100 on SF Compute, evidenced to 1,000

import advisor
from advisor.data.uncertainty import price_dist
from advisor.flow import prepare
from advisor.inputs.workload import parse_workload
from advisor.solve.constraints.gpu_count import held_counts
from advisor.solve.milp import solve
from advisor.solve.settings import SolveSettings

Z90 = NormalDist().inv_cdf(0.9)
GPUS = Path(advisor.__file__).parent.parent / "catalog" / "gpus.yaml"
SFC = "SF Compute (H100 clusters, market average)"


def _sigma(grade: str) -> float:
    d = price_dist(grade)
    return (d.q90 - d.q10) / (2 * Z90)


def _low_about(grade: str, z: float) -> float:
    """The rate factor at rent normal z of a `grade` offer drawn at the low grade's spread about its own
    grade's mean: exp(shift + z sigma_low), shift = (sigma_grade^2 - sigma_low^2) / 2 (lognormal means)."""
    own, low = _sigma(grade), _sigma("low")
    return math.exp((own * own - low * low) / 2 + z * low)


@pytest.fixture(scope="module")
def copies(catalog: Any, rules: Any) -> tuple[Any, Any]:
    problem = prepare(parse_workload(yaml.safe_load(COPIES)), catalog, rules, AS_OF)
    sol = solve(problem)
    assert held_counts(problem, sol) == {("h100-sxm", SFC): 4096}  # 8 x 512 on one provider at once
    return problem, sol


def test_robustness_draws_price_the_copies_held_at_once_at_the_low_band(copies: tuple[Any, Any]) -> None:
    """The robustness re-solves drew each SF Compute column at its order's band (512 GPUs, within the 1,000
    seen: medium, P10-P90 x0.89-x1.13) while the plan's row graded the 4,096 held at once low: the verdict
    judged the plan on a band 3.4 times narrower (in log) than the one its purchase row and cost range read."""
    from advisor.explain.robustness import Verdict
    from advisor.plan_rows import purchase_rows

    problem, sol = copies
    (row,) = purchase_rows(problem, sol)
    assert row["provider"] == SFC and row["confidence"] == "low"
    verdict = Verdict(problem, SolveSettings(), draws=40)
    verdict.verdict(sol)
    offers, cands = verdict.redraw.offers, [c for *_, c in verdict.redraw.model.pairs()]  # in the columns' order
    sfc = [j for j, c in enumerate(cands) if c.ownership == "rent" and c.offer.offer.provider == SFC]
    assert 512 in {cands[j].order_gpus for j in sfc}  # the plan's order, within the 1,000 seen
    z = 1.5
    drawn = offers.rates(np.ones(len(cands)), {"h100-sxm": z})
    grade = cands[sfc[0]].offer.offer.confidence
    assert grade == "medium"
    for j in sfc:
        assert drawn[j] == pytest.approx(_low_about(grade, z), rel=1e-12), (j, drawn[j])
        band = offers.keys[offers.rate_of[j]][1]
        assert band.q90 - band.q10 == pytest.approx(2 * Z90 * _sigma("low"), rel=1e-12)  # the low band's spread


def test_the_cvar_plan_draws_the_copies_held_at_once_at_the_low_band(copies: tuple[Any, Any]) -> None:
    """The p80/p90 decision's CVaR plan (explain/saa.py) priced each draw's SF Compute rent at the order's
    band: with every speed at its estimate, a column's drawn cost over its catalog cost is its rate factor,
    the low grade's spread about the medium grade's mean at each draw's rent normal."""
    import dataclasses

    from advisor.explain.decision import shared_draws
    from advisor.explain.saa import draw_costs
    from advisor.solve.formulation import build_model
    from advisor.solve.reserved import training_terms
    from advisor.solve.scenario import baseline
    from advisor.solve.usable import usable_candidates

    problem, sol = copies
    draws = shared_draws(problem, 40, 7)
    draws = dataclasses.replace(draws, speed=np.ones_like(draws.speed))  # rates alone move the costs
    assert draws.rent_z is not None
    sc = baseline(problem)
    m = build_model(problem, sc, usable_candidates(problem, sc), redrawn=True)
    costs = draw_costs(m, draws, held_counts(problem, sol))
    z = draws.rent_z[:, draws.column("h100-sxm")]
    checked = 0
    for v, c, w in training_terms(m):
        if c.ownership != "rent" or c.offer.offer.provider != SFC:
            continue
        got = np.array([cost.get(v, 0.0) for cost in costs]) / (c.run_cost_usd * w)
        want = np.array([_low_about(c.offer.offer.confidence, float(x)) for x in z])
        np.testing.assert_allclose(got, want, rtol=1e-9)
        checked += 1
    assert checked


BRIDGE = (
    "name: bridge\ndeployment: {context: datacenter, ownership: any}\n"
    "kind: serve\nmodel: llama-3.1-8b\nprecision: fp8\nslo: {ttft_ms: 2000, tpot_ms: 100}\n"
    "traffic: {requests_per_s: 20, input_tokens: 1000, output_tokens: 300}\n"
)


@pytest.fixture(scope="module")
def bridged(rules: Any, tmp_path_factory: Any) -> tuple[Any, Any, Any]:
    """Bought RTX 6000 Ada serving once they arrive, 2 MI300X rented from TensorWave until then (the
    bridge, tests/test_serving_bridge.py), TensorWave's rate here medium and evidenced to one GPU held
    at once (max_gpus_per_provider: 1): the bridge's 2 GPUs are above it."""
    import datetime as dt

    doc = yaml.safe_load(GPUS.read_text(encoding="utf-8"))
    (entry,) = [g for g in (doc["gpus"] if isinstance(doc, dict) else doc) if g["id"] == "mi300x"]
    offers = [dict(o) for o in entry["prices"]["rent"]]
    for o in offers:
        if o["provider"] == "TensorWave":
            o.update(confidence="medium", max_gpus_per_provider=1)
    path = tmp_path_factory.mktemp("tw") / "tw.yaml"
    path.write_text(yaml.safe_dump({"gpus": [{"id": "mi300x", "prices": {"rent": offers}}]}), encoding="utf-8")
    catalog = advisor.load_catalog(path)
    problem = prepare(parse_workload(yaml.safe_load(BRIDGE)), catalog, rules, dt.date(2026, 6, 1))
    sol = solve(problem)
    assert held_counts(problem, sol) == {("mi300x", "TensorWave"): 2}
    assert sol.bridges and all(b.offer.offer.provider == "TensorWave" for b, _ in sol.bridges)
    return catalog, problem, sol


def test_the_bridge_row_is_graded_by_the_gpus_held_at_once(bridged: tuple[Any, Any, Any]) -> None:
    """The bridge's purchase row read 'medium' (its one-GPU orders are within the limit) while the bill
    (solve/ledger.py) graded the same rent low: two GPUs held at once are above the one evidenced."""
    from advisor.plan_rows import purchase_rows
    from advisor.solve.ledger import bill_of_materials

    _, problem, sol = bridged
    (row,) = [r for r in purchase_rows(problem, sol) if r.get("use") == "bridge"]
    (line,) = [x for x in bill_of_materials(problem, sol) if "until the bought serving GPUs arrive" in x["item"]]
    assert row["provider"] == "TensorWave" and row["count"] == 2
    assert row["confidence"] == line["confidence"] == "low", (row["confidence"], line["confidence"])


def test_serving_and_bridge_redraws_price_the_gpus_held_at_once_at_the_low_band(
    bridged: tuple[Any, Any, Any],
) -> None:
    """A robustness draw priced a rented serving replica at its order's band (one GPU: medium) and the
    bridge at its GPU type's rent factor, not its own offer's: with the plan's 2 TensorWave GPUs held at
    once, each column's drawn cost is its catalog cost x the low grade's spread about medium's mean."""
    from advisor.solve.redraw import Redraw
    from advisor.solve.scenario import baseline

    _, problem, sol = bridged
    redraw = Redraw(problem, baseline(problem), {}, SolveSettings())
    m = redraw.model
    assert m is not None and redraw.hold(held_counts(problem, sol))
    z = -1.2
    redraw.choice({}, {}, {}, {"mi300x": z})
    cost = redraw.h.getLp().col_cost_
    factor = _low_about("medium", z)
    served = [(col, c) for (k, i), col in redraw.rcol.items() for c in [m.scands[k][i]] if c.gpu == "mi300x"]
    assert served and all(c.offer.offer.provider == "TensorWave" for _, c in served)
    for col, c in served:
        assert cost[col] == pytest.approx(m.run_cost(c) * factor, rel=1e-9), c
    bridges = [(col, b, w) for col, b, w in redraw.bridge.costs if b.gpu == "mi300x"]
    assert bridges
    for col, b, w in bridges:
        assert cost[col] == pytest.approx(m.run_cost(b) * w * factor, rel=1e-9), b


def test_draws_made_before_the_plan_is_known_are_drawn_again_at_its_bands(copies: tuple[Any, Any]) -> None:
    """A verdict begun before the plan is solved (Verdict.begin, a large model) draws at the orders'
    bands; once the plan holds more at once than a rate is evidenced at, those answers are dropped
    and drawn again, so an early start gives the verdict a serial run gives."""
    from advisor.explain.robustness import Verdict

    problem, sol = copies
    early = Verdict(problem, SolveSettings(), draws=40)
    early.answers()  # drawn before hold(): at each order's band
    assert early.known and early.hold(sol) and not early.known
    assert not early.hold(sol)  # the same plan again: nothing moved
    late = Verdict(problem, SolveSettings(), draws=40)
    assert early.verdict(sol) == late.verdict(sol)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: always serial")
def test_a_verdict_begun_before_the_plan_is_the_serial_one(monkeypatch: Any) -> None:
    """With workers forced, the verdict's first block begins in a child before the plan is solved, at
    each order's band (Verdict.begin); the plan's 4,096 H100 held at once on SF Compute move that band,
    so the child's answers are dropped and the block drawn again: the verdict is the serial one, which
    draws every rate as the plan's rows grade it (H200 the alternative in 11% of 160 draws; at the
    order's band, 4% of 80)."""
    from advisor.api import plan
    from advisor.solve import parallel

    doc = yaml.safe_load(COPIES)
    doc["gpus"]["allow"] = ["h100-sxm", "h200-sxm"]
    verdicts = []
    for how in ("off", "on"):
        monkeypatch.setenv(parallel.ENV, how)
        verdicts.append(plan(doc, as_of=AS_OF).to_dict()["robustness"])
    serial, forced = verdicts
    assert forced == serial, (forced["message"], serial["message"])
    assert serial["draws"] == 160 and serial["alternatives"][0]["share"] == pytest.approx(18 / 160), serial


def test_a_draws_idle_billed_gpus_are_priced_at_their_offers_band_at_the_gpus_held(rules: Any, tmp_path: Path) -> None:
    """Two 1-GPU replicas on Nebius's 8x H200 VMs bill 6 idle GPUs of the node (solve/serving_nodes.py).
    A robustness draw priced those at the H200's type-wide rent while the cost range prices them at
    the replicas' offer's band: with that offer evidenced here to one GPU held at once, both the
    replicas and the idle GPUs draw the low grade's spread about the high grade's mean."""
    from advisor.solve.redraw import Redraw
    from advisor.solve.scenario import baseline

    doc = yaml.safe_load(GPUS.read_text(encoding="utf-8"))
    (entry,) = [g for g in (doc["gpus"] if isinstance(doc, dict) else doc) if g["id"] == "h200-sxm"]
    offers = [dict(o) for o in entry["prices"]["rent"]]
    for o in offers:
        if o["provider"] == "Nebius (8x H200 SXM VM)":
            o.update(max_gpus_per_provider=1)
    path = tmp_path / "nebius.yaml"
    path.write_text(yaml.safe_dump({"gpus": [{"id": "h200-sxm", "prices": {"rent": offers}}]}), encoding="utf-8")
    text = BRIDGE.replace("ownership: any}", "ownership: rent}") + "gpus: {allow: [h200-sxm]}\n"
    problem = prepare(parse_workload(yaml.safe_load(text)), advisor.load_catalog(path), rules, AS_OF)
    sol = solve(problem)
    assert held_counts(problem, sol) == {("h200-sxm", "Nebius (8x H200 SXM VM)"): 2}
    assert [n for n, _ in sol.serving_idle.values()] == [6]
    redraw = Redraw(problem, baseline(problem), {}, SolveSettings())
    m = redraw.model
    assert m is not None and m.idle and redraw.hold(held_counts(problem, sol))
    z = 0.8
    redraw.choice({}, {}, {}, {"h200-sxm": z})
    cost = redraw.h.getLp().col_cost_
    factor = _low_about("high", z)
    for key, col in redraw.idle_cols.items():
        assert m.idle_layout[key].offer.offer.confidence == "high"
        assert cost[col] == pytest.approx(m.idle_cost(key) * factor, rel=1e-9), key
