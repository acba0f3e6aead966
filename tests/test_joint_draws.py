"""Joint draws (advisor/explain/draws.py): GPUs of one vendor and generation move together, each
keeps its own distribution, low-confidence prices and datasheet speeds draw wider, and a plan's
cost in a draw (explain/plan_cost.py) is what a re-solve at those factors charges it."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import numpy as np
import pytest
from conftest import AS_OF

from advisor.data.uncertainty import LogDist, speed_dist
from advisor.explain.draws import SHARED_SPEED, Draws, gpu_prices, gpu_speed, group_of, joint_draws, shared_draws
from advisor.explain.plan_cost import PlanCost
from advisor.explain.robustness import Verdict
from advisor.flow import prepare
from advisor.inputs.workload import parse_workload
from advisor.solve.milp import solve
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings

FOUR = {
    "deployment": {"context": "datacenter", "ownership": "any", "lead_time_days": 0},
    "model": "gpt2-774m",
    "tokens": "40B",
    "deadline": "7d",
    "gpus": {"allow": ["h100-sxm", "h200-sxm", "a100-80gb-sxm", "b200"]},
}
ARTICLE_DC = {
    "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
    "model": "gpt2-124m",
    "tokens": "10B",
    "deadline": "7d",
    "gpus": {"allow": ["rtx-4090", "a100-80gb-sxm", "h100-sxm"]},
}


@pytest.fixture(scope="module")
def four(catalog, rules):
    return prepare(parse_workload(FOUR), catalog, rules, AS_OF)


@pytest.fixture(scope="module")
def many(four) -> Draws:
    return joint_draws(four, 4000, 3)


def test_groups_are_vendor_and_generation(catalog):
    g = catalog.gpus
    assert group_of(g["h100-sxm"]) == group_of(g["h100-pcie"]) == group_of(g["h200-sxm"]) == "NVIDIA/hopper"
    assert group_of(g["a100-80gb-sxm"]) == "NVIDIA/ampere" != group_of(g["h100-sxm"])
    assert group_of(g["mi300x"]) == "AMD/cdna"


def test_one_generation_moves_together_and_generations_apart(many):
    z = {g: many.z[:, many.column(g)] for g in many.gpus}
    same = np.corrcoef(z["h100-sxm"], z["h200-sxm"])[0, 1]
    other = np.corrcoef(z["h100-sxm"], z["a100-80gb-sxm"])[0, 1]
    assert same == pytest.approx(SHARED_SPEED, abs=0.04)
    assert abs(other) < 0.05
    for g in many.gpus:  # each speed normal stays standard: the shared part does not change a GPU's spread
        assert z[g].mean() == pytest.approx(0.0, abs=0.05) and z[g].std() == pytest.approx(1.0, abs=0.04)


def test_each_gpu_keeps_its_own_distribution(four, many):
    for g in many.gpus:
        d = gpu_speed(four, g)
        s = many.speed[:, many.column(g)]
        for p in (0.1, 0.5, 0.9):
            assert np.quantile(s, p) == pytest.approx(d.factor(p), rel=0.03)


def test_low_confidence_rents_draw_wider_than_high_confidence(four, many, catalog):
    assert catalog.gpus["b200"].rental.confidence == "high" and catalog.gpus["h100-sxm"].rental.confidence == "low"
    spread = {
        g: np.quantile(many.rent[:, many.column(g)], 0.9) / np.quantile(many.rent[:, many.column(g)], 0.1)
        for g in ("b200", "h100-sxm")
    }
    assert spread["h100-sxm"] > 1.5 * spread["b200"]


def test_datasheet_speeds_draw_wider_through_the_evidence_lookup(four, catalog):
    """The lookup is told each GPU type's evidence; a datasheet speed may take a wider distribution.
    Today's lookup (by generation) already gives a generation with no measured run the wide one."""
    wide = LogDist(-0.6, 0.0, 0.6, "datasheet")
    seen = []

    def lookup(gpu, precision, evidence):
        seen.append((gpu.id, evidence))
        return wide if gpu.id == "b200" else speed_dist(gpu, precision)

    draws = joint_draws(four, 2000, 5, lookup=lookup)
    assert {g for g, _ in seen} == set(draws.gpus)
    spread = {
        g: np.quantile(draws.speed[:, draws.column(g)], 0.9) / np.quantile(draws.speed[:, draws.column(g)], 0.1)
        for g in draws.gpus
    }
    # the upper tail stops where the job would beat the best MFU published on Blackwell (the cap)
    cap = gpu_speed(four, "b200").cap
    assert 1.0 <= cap < np.exp(0.6) and draws.speed[:, draws.column("b200")].max() <= cap + 1e-12
    assert spread["b200"] == pytest.approx(min(np.exp(0.6), cap) / np.exp(-0.6), rel=0.05)
    assert spread["b200"] > spread["h100-sxm"]
    unmeasured = speed_dist(catalog.gpus["t4"], "bf16")  # no measured Turing run in the calibration set
    assert unmeasured.q90 - unmeasured.q10 > gpu_speed(four, "h100-sxm").q90 - gpu_speed(four, "h100-sxm").q10


def test_draws_are_seeded_and_shared_by_the_verdict(four):
    a, b = joint_draws(four, 50, 9), joint_draws(four, 50, 9)
    assert np.array_equal(a.speed, b.speed) and np.array_equal(a.rent, b.rent)
    assert not np.array_equal(a.speed, joint_draws(four, 50, 10).speed)
    verdict = Verdict(four, SolveSettings(), draws=200)
    shared = shared_draws(four, 200, verdict.seed)
    for i in range(len(verdict.samples)):
        assert verdict.samples[i] == (*shared.maps(i), shared.rent_normals(i), shared.serve_map(i))


def test_a_plans_cost_in_a_draw_is_what_a_re_solve_at_those_factors_charges(catalog, rules):
    """8 A100s bought with days of slack: a dearer purchase price or a slower GPU leaves the plan as it
    is, so the re-solve's optimum is the plan's cost at those factors, computed independently."""
    problem = prepare(parse_workload(ARTICLE_DC), catalog, rules, AS_OF)
    sol = solve(problem)
    cost = PlanCost.of(problem, sol)
    assert cost.point == pytest.approx(sol.objective_usd, rel=1e-12)
    g = "a100-80gb-sxm"
    assert sol.bought == {g: 8}
    for buy, speed in ((1.3, 1.0), (1.0, 0.8), (0.9, 1.25)):
        again = solve(problem, baseline(problem).but(buy_factor={g: buy}, speed_factor={g: speed}))
        assert again.bought == {g: 8}
        one = Draws(
            (g,),
            np.array([[speed]]),
            np.array([[buy]]),
            np.array([[1.0]]),
            np.zeros((1, 1)),
            ("NVIDIA/ampere",),
            SHARED_SPEED,
            0,
        )
        assert cost.at(one)[0] == pytest.approx(again.objective_usd, rel=1e-6)


def test_the_array_draws_are_the_one_at_a_time_draws_to_the_bit(four):
    """joint_draws turns the generator's uniforms into normals and factors a whole array at a time;
    drawn one at a time with the standard library's inverse normal and math.exp, from the streams its
    docstring states (per group a stream of its shared normals; per GPU a stream of, draw after draw,
    its own speed, purchase and rent normals), every figure is the same to the bit, tails included."""
    got = joint_draws(four, 3000, 11)
    inv = NormalDist().inv_cdf

    def normal(rng: random.Random) -> float:
        return inv(min(max(rng.random(), 1e-12), 1 - 1e-12))

    a, b = math.sqrt(SHARED_SPEED), math.sqrt(1 - SHARED_SPEED)
    dists = [(gpu_speed(four, g), *gpu_prices(four, g)) for g in got.gpus]
    group_rng = {grp: random.Random(f"11/group/{grp}") for grp in sorted(set(got.groups))}
    gpu_rng = [random.Random(f"11/gpu/{g}") for g in got.gpus]
    for i in range(got.n):
        common = {grp: normal(r) for grp, r in group_rng.items()}
        for j, (grp, (s, buy, rent)) in enumerate(zip(got.groups, dists)):
            z = a * common[grp] + b * normal(gpu_rng[j])
            assert (got.z[i, j], got.speed[i, j]) == (z, s.factor_at(z))
            assert (got.buy[i, j], got.rent[i, j]) == (
                buy.factor_at(normal(gpu_rng[j])),
                rent.factor_at(normal(gpu_rng[j])),
            )
    assert got.z.min() < -3 and got.z.max() > 3  # the tails' branch of the inverse is reached


def test_a_gpu_types_draws_are_the_same_whichever_types_are_drawn_beside_it(four):
    """Common random numbers (review17 #7): one plan was priced at two P80s in two contexts because a
    type's column depended on which other types were drawn. A column (speed, z, purchase, rent)
    is now the same in the draws of every set of types that holds it."""
    every = joint_draws(four, 2000, 16)
    for g in every.gpus:
        alone, j = joint_draws(four, 2000, 16, gpus=[g]), every.column(g)
        for field in ("speed", "z", "buy", "rent"):
            assert np.array_equal(getattr(alone, field)[:, 0], getattr(every, field)[:, j]), (g, field)
