"""The robustness verdict's sequential stop (explain/robustness.py): draws are looked at every
CHECK_EVERY and stop once the hold share's 95% Wilson interval is at most SETTLED_WIDTH wide. A
stopped verdict is the full verdict cut short, and says how many draws it made."""

from __future__ import annotations

import math

import pytest
from conftest import AS_OF, EXAMPLES

import advisor.explain.robustness as rob
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.milp import solve
from advisor.solve.settings import SolveSettings

Z = 1.959964


def test_wilson_interval_by_hand():
    # all n held: the interval is [n / (n + z^2), 1]; none held: [0, z^2 / (n + z^2)]
    for n in (10, 50, 200):
        assert rob.wilson(n, n) == pytest.approx((n / (n + Z * Z), 1.0))
        assert rob.wilson(0, n) == pytest.approx((0.0, Z * Z / (n + Z * Z)))
    # 30 of 60: centre 1/2, half-width z * sqrt(1/240 + z^2/14400) / (1 + z^2/60)
    half = Z * math.sqrt(0.25 / 60 + Z * Z / (4 * 3600)) / (1 + Z * Z / 60)
    assert rob.wilson(30, 60) == pytest.approx((0.5 - half, 0.5 + half))
    # 40 of 40 is settled (interval 91.2-100%, 8.8 points); 39 of 40 is not (87.1-99.6%, 12.5 points)
    assert rob.settled(40, 40) and not rob.settled(39, 40) and not rob.settled(30, 30)


@pytest.fixture(scope="module")
def office(catalog, rules):
    problem = prepare(load_workload(EXAMPLES / "article-office.yaml"), catalog, rules, AS_OF)
    return problem, solve(problem)


def test_a_settled_verdict_stops_and_says_so(office):
    problem, sol = office
    got = rob.robustness(problem, sol, SolveSettings())
    assert got is not None and got["draws"] == rob.CHECK_EVERY and got["holds"] == rob.CHECK_EVERY
    lo = round(100 * rob.CHECK_EVERY / (rob.CHECK_EVERY + Z * Z))
    assert got["message"].endswith(
        f"holds in 100% of {rob.CHECK_EVERY} draws of speed and price "
        f"(stopped at {rob.CHECK_EVERY} of {rob.DRAWS} draws: settled, "
        f"95% interval {lo}-100%)"
    )
    assert rob.robustness(problem, sol, SolveSettings()) == got  # seeded: the same verdict again


def test_a_stopped_verdict_is_the_full_one_cut_short(office, monkeypatch):
    problem, sol = office
    stopped = rob.robustness(problem, sol, SolveSettings())
    n = stopped["draws"]
    monkeypatch.setattr(rob, "CHECK_EVERY", 10**6)  # never look: every draw asked for is made
    full = rob.robustness(problem, sol, SolveSettings())
    assert full["draws"] == rob.DRAWS and "stopped" not in full["message"]
    # the same seeded sequence: its first n draws, asked for alone, give the stopped verdict
    first = rob.robustness(problem, sol, SolveSettings(), draws=n)
    assert {k: v for k, v in first.items() if k != "message"} == {k: v for k, v in stopped.items() if k != "message"}
    assert stopped["message"].startswith(first["message"])
    assert stopped["message"][len(first["message"]) :].startswith(f" (stopped at {n} of {rob.DRAWS} draws")


def test_an_unsettled_verdict_draws_them_all(office, monkeypatch):
    problem, sol = office
    monkeypatch.setattr(rob, "SETTLED_WIDTH", 0.0)  # nothing is ever settled
    got = rob.robustness(problem, sol, SolveSettings())
    assert got["draws"] == rob.DRAWS and "stopped" not in got["message"]
