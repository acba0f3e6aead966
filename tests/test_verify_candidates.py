"""The plans decision.verify prices (explain/value_of_information.candidates): the alternative the
robustness headline names is among them, so the inputs separating the chosen plan from it are ranked,
and the EVPI printed for them agrees with a re-computation by substitution (review13, defect 1)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import advisor
from advisor.explain.decision import PlanCost, decide, restricted
from advisor.explain.draws import shared_draws
from advisor.explain.ranges import SEED
from advisor.solve.milp import solve
from advisor.solve.settings import SolveSettings

DATA = Path(__file__).parent / "data" / "review13"
AS_OF = "2026-12-01"


@pytest.fixture(scope="module")
def llama405b():
    """405B rented; an MI300X cluster offered at $1.20/GPU-hour (low confidence, datasheet speed). The
    plan rents H100s; the headline's alternative, in 16% of the draws, is the MI300X alone."""
    p = advisor.plan(str(DATA / "llama405b_rent.yaml"), catalog=str(DATA / "amd_cluster_catalog.yaml"), as_of=AS_OF)
    return p, json.loads(p.to_json())


def test_verify_prices_the_alternative_the_headline_names(llama405b):
    _, d = llama405b
    assert "MI300X" in d["robustness"]["alternatives"][0]["purchase"]
    listed = {v["input"]: v for v in d["decision"]["verify"]}
    assert listed["speed:mi300x"]["evpi_usd"] > 0
    assert "AMD Instinct MI300X (rent) is cheaper" in listed["speed:mi300x"]["message"]


def test_the_printed_evpi_of_the_alternative_speed_agrees_with_substitution(llama405b):
    """EVPI(speed of the MI300X) by substitution: for each draw i, every draw's MI300X speed set to draw
    i's, the MI300X plan costed in all draws (PlanCost.at) and averaged; the H100 plan does not move
    with it (another vendor's speed group). EVPI = mean_i max(0, E[H100] - E[MI300X | s_i]) -
    max(0, E[H100] - E[MI300X]). It is at most E[max(0, cost(H100) - cost(MI300X))], the value of
    knowing every input between the two plans (the review's $540k on these 200 draws)."""
    p, d = llama405b
    problem = p.problem
    settings = SolveSettings()
    decided = decide(problem, solve(problem, settings=settings), settings)
    draws = shared_draws(problem, problem.workload.decision.draws, SEED)
    alt = restricted(problem, settings.explaining(problem), keep=frozenset({("mi300x", "rent")}))
    assert alt is not None
    mine, theirs = PlanCost.of(problem, decided.chosen), PlanCost.of(problem, alt)
    j = draws.column("mi300x")
    given = []
    for i in range(draws.n):
        speed, z = draws.speed.copy(), draws.z.copy()
        speed[:, j], z[:, j] = draws.speed[i, j], draws.z[i, j]
        given.append(theirs.at(dataclasses.replace(draws, speed=speed, z=z)).mean())
    c, a = mine.at(draws).mean(), theirs.at(draws).mean()
    expected = float(np.mean(np.maximum(0.0, c - np.array(given))) - max(0.0, c - a))
    printed = {v["input"]: v["evpi_usd"] for v in d["decision"]["verify"]}["speed:mi300x"]
    assert printed == pytest.approx(expected, rel=1e-6, abs=0.01)
    assert printed <= float(np.maximum(0.0, mine.at(draws) - theirs.at(draws)).mean())
