"""The decision basis (explain/decision.py): the plan a buyer gets is the one of least expected cost
over the joint draws (or least P80/P90, or the point optimum), its figures recomputed here
independently, the price of robustness on fresh draws, and the targets of issue 30."""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml
from conftest import AS_OF, bench_module, ci_examples
from conftest import EXAMPLES as EXAMPLE_DIR
from hypothesis import HealthCheck, given, settings
from test_explain_properties import workloads

from advisor.data.catalog import load_catalog
from advisor.explain.decision import (
    FRESH_DRAWS,
    FRESH_SEED,
    SCORING_DRAWS,
    Z_SWITCH,
    PlanCost,
    decide,
    pairs_of,
    quantile,
    standard_error,
)
from advisor.explain.draws import joint_draws
from advisor.explain.ranges import SEED
from advisor.explain.saa import saa_plan
from advisor.flow import plan, prepare
from advisor.inputs.workload import parse_workload
from advisor.solve.costing import plan_costs
from advisor.solve.milp import solve
from advisor.solve.model import Model
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings

# eight H100s for four years at a low-confidence community rate (RunPod's, on demand), renting below
# buying at the point estimates but not on the draws' mean. Re-found after issue 29 (GPUs resold when the
# work ends, tax, support and the network costed: buying for the first premise's two years at 4.4T tokens
# cost 51% more than renting) and again when speed draws were capped at the best MFU published on the
# generation (an H100 estimate at that MFU can only be slower: the mean rent of the work rose ~11%). A
# search at 36 and 48 months (mpt-7b on 8 H100, on-demand offers only, hardware in hand; expected basis):
# 10T chose buying on the mean ($39K price of robustness); 7T-9.2T stayed rented with the choice holding in
# 46-62% of draws. Re-found when bought GPUs came to be sold at their work's end (review16 #4), which made
# buying cheaper. Re-found again when each GPU type's draws came from its own stream (common random
# numbers): 8.0T at 48 months is the knife, renting at the point estimates; on 20,000 draws buying
# is cheaper in expectation by ~$5.3K (2 standard errors ~$2.4K; ~$4.2K +- $1.5K on 50,000 draws of
# another seed), so it is bought (on 200 draws a saving like it read $19.9K within $29K of noise, and
# the plan kept renting: review 13 #4). At 7.85T (KNIFE_EDGE) buying's saving is ~$0.9K, within the
# noise: the point plan stands.
CASES = bench_module("decision")  # the constructed cases, written once in bench/decision.py, which measures them too
KNIFE, KNIFE_EDGE = CASES.KNIFE, CASES.KNIFE_EDGE
G = "h100-sxm"  # the knife's one GPU type
EXAMPLES = [
    "article-datacenter",
    "article-office",
    "rent-vs-buy-3y",
    "continued-pretraining-8x",
    "team-fleet",
    "lora-7b-workstation",
    "llama-70b-budget",
]


def example(name: str) -> dict:
    return yaml.safe_load((EXAMPLE_DIR / f"{name}.yaml").read_text())


# the point-basis plans are read for their purchase and decision only (the decision is made at every
# explanation level; only its `verify`, which they do not read, is an explanation): made without any
EXPLAINED = {"expected": "full", "point": "none"}


@pytest.fixture(scope="module")
def knife(catalog, rules):
    return {
        basis: plan(
            parse_workload({**KNIFE, "decision": basis}), catalog=catalog, rules=rules, as_of=AS_OF, explain=level
        )
        for basis, level in EXPLAINED.items()
    }


@pytest.fixture(scope="module")
def knife_edge(catalog, rules):
    return plan(parse_workload(KNIFE_EDGE), catalog=catalog, rules=rules, as_of=AS_OF, explain="none")


def owned(p) -> list[tuple[str, str]]:
    return [(i["gpu"], i["ownership"]) for i in p["purchase"]]


def test_point_basis_is_the_optimum_at_the_point_estimates(knife):
    p = knife["point"]
    assert owned(p) == [("h100-sxm", "rent")]
    d = p["decision"]
    assert d["basis"] == "point" and d["price_of_robustness_usd"] == 0 and d["explained_at"] == "catalog"
    assert d["point_optimal"]["purchase"] == [{"gpu": "h100-sxm", "ownership": "rent", "count": 8}]
    # chosen at the point estimates, then costed over the draws (it read "chosen for the least cost at
    # the point estimates over 20,000 joint draws ...; it is also the optimum at the point estimates")
    assert "chosen for the least cost at the point estimates; over 20,000 joint draws" in d["message"], d["message"]
    assert "also the optimum" not in d["message"]


# a purchase price quoted at the bottom of its band (the RTX A6000's catalog street price, $5,173, as
# the low end of a $5,173-15,000 quote): its mean lies far above it. Re-found after issue 29 (bought
# GPUs resold, the bill of materials): the L40S of the first premise now needs a $45,000 rack server
# (passive cooling, DEP002) and is never close ($65K against $21K). A search by a small script over the
# workstation cards that fit the job (of RTX A6000, RTX 6000 Ada, RTX 5090, 4090, 3090 and RX 7900 XTX
# only the first two do) and the band's top ($10,000, $12,000, $15,000) at 1B, 2B and 4B tokens: only
# the $15,000 top moves the plan, at every token count (2B: the RTX A6000s $18,021 at the point,
# expected $23,728 against the RTX 6000 Ada's $21,365)
BAND, BAND_JOB = CASES.BAND, CASES.BAND_JOB


@pytest.fixture(scope="module")
def band(tmp_path_factory, rules):
    path = tmp_path_factory.mktemp("band") / "band.yaml"
    path.write_text(yaml.safe_dump(BAND))
    catalog = load_catalog(path)
    return {
        basis: plan(
            parse_workload({**BAND_JOB, "decision": basis}), catalog=catalog, rules=rules, as_of=AS_OF, explain=level
        )
        for basis, level in EXPLAINED.items()
    }


def test_expected_basis_moves_off_a_price_quoted_at_the_bottom_of_its_band(band):
    """At the catalog's figures four RTX A6000 win; their price sits at the bottom of a $5,173-15,000
    quote band, so on expected cost four RTX 6000 Ada are chosen, and the plan says what the point plan
    would lose."""
    p, q = band["expected"], band["point"]
    assert owned(p) == [("rtx-6000-ada", "buy")] and owned(q) == [("rtx-a6000", "buy")]
    d = p["decision"]
    assert d["basis"] == "expected" and d["draws"] == 200 and d["explained_at"] == "expected"
    assert d["expected_cost_usd"] < d["point_optimal"]["expected_cost_usd"]
    assert d["point_optimal"]["purchase"] == [{"gpu": "rtx-a6000", "ownership": "buy", "count": 4}]
    assert d["price_of_robustness_usd"] > 0 and d["fresh_draws"] == FRESH_DRAWS
    assert p["total_cost_usd"] > q["total_cost_usd"]  # dearer at the catalog's figures ...
    assert "expected to cost" in d["message"] and "fresh draws" in d["message"]
    # ... and every explanation is about the plan chosen: its own break-even, at the expected prices
    rise = p["sensitivity"]["break_even"][0]
    assert rise["gpu"] == "rtx-6000-ada" and rise["ownership"] == "buy" and rise["verified"]
    assert "expected purchase price" in rise["message"]
    assert "RTX 6000 Ada Generation (buy)" in p["robustness"]["message"].split(";")[0]


def test_a_saving_within_the_draws_noise_does_not_move_the_plan(knife_edge):
    """At 7.85T renting is cheaper at the catalog's rate; the low-confidence rate's mean lies above it and
    the speed cannot beat the best published MFU, so buying scores less over the scoring draws (by ~$0.9K),
    but renting's cost varies so much (2 standard errors ~$2.4K on 20,000 draws) that the draws cannot
    tell the two apart: the plan stays, and says so rather than claim the least expected cost."""
    p = knife_edge
    assert owned(p) == [(G, "rent")]
    d = p["decision"]
    assert d["price_of_robustness_usd"] == 0 and d["scored_draws"] == SCORING_DRAWS
    assert "(buy) scores $" in d["message"] and "within their noise" in d["message"]
    assert "chosen for the least expected cost" not in d["message"]
    # the saving and the noise, recomputed by hand over the same draws: each plan's cost per draw from
    # the solver's own coefficients, the saving the mean paired difference, the noise 2 standard errors
    problem = p.problem
    draws = joint_draws(problem, SCORING_DRAWS, SEED, gpus=[G])
    rent, buy = solve(problem), solve(problem, baseline(problem).but(ownership="buy"))
    diff = costs_by_hand(problem, rent, draws) - costs_by_hand(problem, buy, draws)
    noise_by_hand = Z_SWITCH * diff.std(ddof=1) / np.sqrt(draws.n)
    saving, noise = re.search(r"scores \$([\d,]+) less .*standard errors: \$([\d,]+)\)", d["message"]).groups()
    assert float(saving.replace(",", "")) == pytest.approx(diff.mean(), abs=1.0)
    assert float(noise.replace(",", "")) == pytest.approx(noise_by_hand, abs=1.0)
    assert 0 < diff.mean() < noise_by_hand


def test_the_knife_buys_the_plan_cheaper_in_expectation_beyond_noise(knife):
    """Review 13 #4: on 200 draws the plan kept renting eight H100s, though buying is the cheaper in
    expectation. Each plan's mean cost recomputed by hand on 50,000 independent draws (another seed):
    the plan chosen is the cheaper, by more than 2 standard errors of the paired difference."""
    problem = knife["expected"].problem
    assert owned(knife["point"]) == [(G, "rent")]
    draws = joint_draws(problem, 50_000, 4242, gpus=[G])
    rent, buy = solve(problem), solve(problem, baseline(problem).but(ownership="buy"))
    diff = costs_by_hand(problem, rent, draws) - costs_by_hand(problem, buy, draws)
    assert diff.mean() > Z_SWITCH * diff.std(ddof=1) / np.sqrt(draws.n)  # buying is the cheaper, beyond noise
    assert owned(knife["expected"]) == [(G, "buy")]
    assert knife["expected"]["total_cost_usd"] == pytest.approx(buy.objective_usd, abs=0.01)


def plan_cost_by_hand(problem, sol, speed: float, buy: float, rent: float) -> float:
    """The plan's present value at one draw's factors, from the solver's own coefficients (costing.py):
    purchase x buy, run costs x (rent if rented) / speed; servers, fabric and hosting as planned."""
    g = "h100-sxm"
    sc = baseline(problem).but(buy_factor={g: buy}, rent_factor={g: rent})
    m = Model(problem, sc, [], [])  # the coefficients at those prices, no rows
    pv = plan_costs(m, sol.assignment, sol.bought, sol.servers, sol.networked, sol.held, sol.serving).pv
    runs = sum(m.run_cost(c) * n for c, n in list(sol.assignment) + list(sol.serving))
    return sum(pv.values()) - runs + runs / speed


def test_the_other_way_cheaper_at_the_catalogs_figures_says_the_plan_was_chosen_on_the_draws(knife):
    """Renting is $42,618 cheaper at the catalog's figures than the eight H100s bought on expected cost:
    the other way to own says the plan was chosen over the draws, not that it is dearer within the
    solver's gap (a 0.01% gap)."""
    other = knife["expected"]["other_ownership"]
    assert other["ownership"] == "rent" and other["difference_usd"] < -0.5
    assert "chosen on its cost over joint draws of speed and price, not at the catalog's figures" in other["message"]
    assert "solver's gap" not in other["message"]


def costs_by_hand(problem, sol, draws) -> np.ndarray:
    """plan_cost_by_hand in every draw: the present value is affine in the purchase and rent factors
    (prices times counts) and the run cost scales as 1 / speed, so it is read at five points, checked
    at a sixth, and spread over the draws."""

    def at(s: float, b: float, r: float) -> float:
        return plan_cost_by_hand(problem, sol, s, b, r)

    base, per_buy, per_rent = at(1, 1, 1), at(1, 2, 1) - at(1, 1, 1), at(1, 1, 2) - at(1, 1, 1)
    runs1, runs2 = at(0.5, 1, 1) - base, at(0.5, 1, 2) - at(1, 1, 2)  # the run cost at rent x1 and x2

    def cost(s, b, r):
        return base + per_buy * (b - 1) + per_rent * (r - 1) + (runs1 + (runs2 - runs1) * (r - 1)) * (1 / s - 1)

    assert cost(0.8, 1.3, 0.7) == pytest.approx(at(0.8, 1.3, 0.7), rel=1e-9)
    j = draws.column(G)
    return cost(draws.speed[:, j], draws.buy[:, j], draws.rent[:, j])


def test_expected_and_p80_costs_are_the_chosen_plans_over_the_scoring_draws_recomputed(knife):
    """The printed expected cost (with its standard error), P80 and P90, and the point plan's, are each
    plan's cost over the SCORING_DRAWS draws the choice was made on (seed SEED, the candidates' GPU type),
    recomputed by hand; `draws` stays the workload's decision.draws, what the candidates are found on."""
    p = knife["expected"]
    problem, d = p.problem, p["decision"]
    assert d["draws"] == 200 and d["scored_draws"] == SCORING_DRAWS
    draws = joint_draws(problem, SCORING_DRAWS, SEED, gpus=[G])
    buy, rent = solve(problem, baseline(problem).but(ownership="buy")), solve(problem)
    assert [(c.gpu, c.ownership, c.count) for c in buy.chosen] == [(G, "buy", 8)]
    mine, theirs = costs_by_hand(problem, buy, draws), costs_by_hand(problem, rent, draws)
    se = mine.std(ddof=1) / np.sqrt(draws.n)
    assert d["expected_cost_usd"] == pytest.approx(mine.mean(), abs=0.01)
    assert d["expected_cost_se_usd"] == pytest.approx(se, abs=0.01)
    assert d["p80_cost_usd"] == pytest.approx(np.quantile(mine, 0.8), abs=0.01)
    assert d["p90_cost_usd"] == pytest.approx(np.quantile(mine, 0.9), abs=0.01)
    assert d["point_optimal"]["expected_cost_usd"] == pytest.approx(theirs.mean(), abs=0.01)
    assert d["point_optimal"]["p80_cost_usd"] == pytest.approx(np.quantile(theirs, 0.8), abs=0.01)
    figures = f"over {SCORING_DRAWS:,} joint draws of speed and price (expected ${mine.mean():,.0f} ±${2 * se:,.0f} at 2 standard errors, P80"
    assert figures in d["message"]
    assert p["total_cost_usd"] == pytest.approx(buy.objective_usd, abs=0.01)


@pytest.mark.parametrize("q", [0.0, 0.1, 0.5, 0.8, 0.9, 0.999, 1.0])
def test_the_p80_and_p90_a_plan_prints_are_numpys_quantiles_to_the_bit(q):
    # the decision's quantile is written out (np.quantile imports numpy.ma on first use): the same
    # float as numpy's, on costs with ties, one or two draws, wide magnitudes, infinities and NaN
    rng = np.random.default_rng(30)
    arrays = [rng.lognormal(12, 1.5, n) for n in (1, 2, 3, 7, 40, 200, 1000)]
    arrays += [np.round(rng.normal(5e5, 1e5, 50), -3), np.array([3.0, 3.0, 3.0]), np.array([1e-9, 1e12, 7.5])]
    arrays += [np.array([1.0, np.inf, 2.0]), np.array([np.inf, np.inf]), np.array([1.0, np.nan, 2.0])]
    for a in arrays:
        with np.errstate(invalid="ignore"):  # inf - inf in numpy's interpolation
            want = float(np.quantile(a, q))
        got = quantile(a, q)
        assert got == want or (got != got and want != want), (a, q, got, want)


def test_price_of_robustness_is_measured_on_fresh_draws(band):
    p = band["expected"]
    problem = p.problem
    fresh = joint_draws(problem, FRESH_DRAWS, FRESH_SEED, gpus=["rtx-6000-ada", "rtx-a6000"])
    chosen = solve(problem, baseline(problem).but(buy_factor={"rtx-a6000": 1e3}))
    point = solve(problem)
    assert sorted(chosen.bought) == ["rtx-6000-ada"] and sorted(point.bought) == ["rtx-a6000"]
    loss = (PlanCost.of(problem, point).at(fresh) - PlanCost.of(problem, chosen).at(fresh)).mean()
    assert p["decision"]["price_of_robustness_usd"] == pytest.approx(loss, abs=0.01)
    assert fresh.seed != SEED


@pytest.mark.parametrize("name", ["article-datacenter", "rent-vs-buy-3y", "continued-pretraining-8x", "team-fleet"])
def test_expected_plan_is_the_exact_sample_average_optimum(name, catalog, rules):
    """The decision's candidates (the point plan and one re-solve at the mean factors) hold a plan that
    costs no more over the draws than the exact sample-average MILP's optimum (explain/saa.py: one first
    stage, every draw's cost, owned energy / speed included), within the solve's gap; the plan chosen
    is it, or the point plan when the saving is within Z_SWITCH standard errors."""
    problem = prepare(parse_workload(example(name)), catalog, rules, AS_OF)
    settings_ = SolveSettings()
    d = decide(problem, solve(problem, settings=settings_), settings_)
    exact = saa_plan(problem, d.draws, "mean")  # on the draws the candidates are found on
    best = PlanCost.of(problem, exact).at(d.draws).mean()
    assert min(o.cost.at(d.draws).mean() for o in d.options) <= best * (1 + settings_.gap_for(problem)) + 1e-6
    costs = [o.cost.at(d.scored) for o in d.options]  # and chosen among on the scoring draws
    mine = PlanCost.of(problem, d.chosen).at(d.scored)
    top = min(costs, key=lambda c: c.mean())
    assert (
        mine.mean()
        <= top.mean()
        + max(settings_.gap_for(problem) * costs[0].mean(), Z_SWITCH * standard_error(mine, top, "expected"))
        + 1e-6
    )


def fresh_loss_within_gap(p) -> None:
    d = p.get("decision")
    if d is None:
        return
    gap = p["solver"]["gap_limit"]
    assert d["price_of_robustness_usd"] >= -gap * abs(d["point_optimal"]["expected_cost_usd"]) - 0.01, d


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_expected_plan_never_loses_to_the_point_plan_on_fresh_draws(name, catalog, rules):
    fresh_loss_within_gap(
        plan(parse_workload(example(name)), catalog=catalog, rules=rules, as_of=AS_OF, explain="none")
    )


@settings(
    derandomize=True,
    max_examples=ci_examples(8, 12),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(doc=workloads())
@pytest.mark.slow
def test_generated_workloads_never_lose_to_the_point_plan_and_p80_is_never_below_expected(doc, catalog, rules):
    wl = parse_workload(doc)
    p = plan(wl, catalog=catalog, rules=rules, as_of=AS_OF, explain="none")
    fresh_loss_within_gap(p)
    if p.feasible:
        q = plan(parse_workload({**doc, "decision": "p80"}), catalog=catalog, rules=rules, as_of=AS_OF, explain="none")
        assert q["decision"]["p80_cost_usd"] >= p["decision"]["expected_cost_usd"] - 0.01


@pytest.mark.parametrize(
    "name", ["article-datacenter", pytest.param("rent-vs-buy-3y", marks=pytest.mark.slow), "continued-pretraining-8x"]
)
def test_p80_never_reports_a_lower_cost_than_expected(name, catalog, rules):
    doc = example(name)
    e = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain="none")["decision"]
    q = plan(
        parse_workload({**doc, "decision": {"basis": "p80", "draws": 200}}),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        explain="none",
    )["decision"]
    assert q["basis"] == "p80" and q["p80_cost_usd"] >= e["expected_cost_usd"]
    # one plan, one cost on both bases, though their candidates draw other GPU types beside it
    # (common random numbers; review17 #7: rent-vs-buy-3y's point plan read P80 $6,169 and $6,173)
    for figure in ("expected_cost_usd", "p80_cost_usd"):
        assert q["point_optimal"][figure] == e["point_optimal"][figure]
    assert (
        q["p80_cost_usd"] <= q["point_optimal"]["p80_cost_usd"] + 0.01
    )  # never worse than the point plan on its basis


@pytest.mark.slow
def test_the_exact_p80_milp_costs_no_more_than_any_candidate_on_its_draws(catalog, rules):
    """review22a: the exact quantile MILP (explain/saa.py), its servers held (SH, solve/server_terms.py)
    without an upper bound, gave way at HiGHS's integrality tolerance and returned on rent-vs-buy-3y a
    plan of P80 $8,770 against the candidates' $6,186 on the scoring draws (bench/decision.py); on the
    decision's own draws, here, $8,623 against $6,163. Solved on those draws it is the least P80 there:
    no candidate's P80, recomputed by the order-statistic rule the MILP states, is below it beyond its
    1% gap."""
    from advisor.solve.constraints.gpu_count import held_counts

    problem = prepare(parse_workload({**example("rent-vs-buy-3y"), "decision": "p80"}), catalog, rules, AS_OF)
    s = SolveSettings()
    d = decide(problem, solve(problem, settings=s), s)
    exact = saa_plan(problem, d.draws, "quantile", 0.8, gap=0.01, held=held_counts(problem, d.options[0].sol))
    assert exact is not None and exact.solver.get("proven_optimal")

    def p80(sol) -> float:  # the ceil(0.8 n)-th smallest cost of the draws
        costs = np.sort(PlanCost.of(problem, sol).at(d.draws))
        return float(costs[int(np.ceil(0.8 * len(costs))) - 1])

    assert p80(exact) <= min(p80(o.sol) for o in d.options) * 1.01 + 0.01


@pytest.mark.slow
def test_p80_chooses_the_least_p80_among_its_candidates(catalog, rules):
    """36 monthly fine-tunes on P80, the H200 SXM allowed too: the candidates include the CVaR plan (a
    mix of GPU types) and each robustness draw's optimum; the plan chosen has the least P80 of them over
    the draws (recomputed), or is the point plan within the gap. (Since issue 29's bill of materials the
    example's own GPUs rent H100s far below any purchase and its CVaR plan is the point plan; a search
    over every pair of its GPUs, the H200 SXM and the RTX A6000 for a CVaR plan of two types found one:
    H100 SXM and H200 SXM rented, 26 and 10 of the runs. Since each offer is drawn at its own band, that
    hedge pays only among on-demand offers: with every rental kind the CVaR plan is the point plan.)"""
    doc = example("rent-vs-buy-3y")
    deployment = {**doc["deployment"], "rent_kinds": ["on_demand"]}
    doc = {**doc, "deployment": deployment, "gpus": {"allow": [*doc["gpus"]["allow"], "h200-sxm"]}, "decision": "p80"}
    problem = prepare(parse_workload(doc), catalog, rules, AS_OF)
    s = SolveSettings()
    d = decide(problem, solve(problem, settings=s), s)
    labels = [o.label for o in d.options]
    assert labels[0] == "point" and "least tail mean (CVaR)" in labels
    drawn = {one[0] for one in d.verdict.answers() if one is not None}  # each draw optimum's (GPU, ownership) set
    assert drawn <= {o.pairs for o in d.options}  # is a candidate (as a draw optimum, or found before as another)
    assert any(len({g for g, _, _ in o.first_stage}) >= 2 for o in d.options)  # the CVaR plan hedges
    costs = [o.cost.at(d.scored) for o in d.options]
    p80 = [float(np.quantile(c, 0.8)) for c in costs]
    best = int(np.argmin(p80))
    mine = float(np.quantile(PlanCost.of(problem, d.chosen).at(d.scored), 0.8))
    if d.chosen is not d.options[best].sol:  # kept the point plan: the saving is within the gap or the noise
        assert d.chosen is d.options[0].sol
        saving = p80[0] - p80[best]
        assert saving <= max(s.gap_for(problem) * p80[0], Z_SWITCH * standard_error(costs[0], costs[best], "p80"))
    assert d.record["p80_cost_usd"] == pytest.approx(mine)


def test_draws_setting_is_read_and_bounded(catalog, rules):
    p = plan(
        parse_workload({**example("article-datacenter"), "decision": {"basis": "expected", "draws": 60}}),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        explain="none",
    )
    assert p["decision"]["draws"] == 60
    with pytest.raises(Exception, match="decision.draws"):
        parse_workload({**example("article-datacenter"), "decision": {"draws": 5}})


def test_the_draws_setting_says_what_it_finds_and_what_the_choice_is_made_on():
    from advisor.inputs.schema import WORDS
    from advisor.inputs.workload import DecisionBasis

    for text in (DecisionBasis.model_fields["draws"].description, WORDS["draws"][1]):
        assert "found on [200]" in text and f"{SCORING_DRAWS:,}" in text


def test_objective_time_has_no_decision(catalog, rules):
    p = plan(
        parse_workload(example("article-datacenter")),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        objective="time",
        explain="none",
    )
    assert p.get("decision") is None


def test_objective_time_says_its_cost_is_the_least_at_the_soonest_finish(catalog, rules):
    """On --objective time the plan is the cheapest of those that finish soonest: its plan text, cost
    table and memo said its present value was "what the plan minimises" (review17's left-out item)."""
    import advisor
    from advisor.present.plan_text import plan_text

    doc = parse_workload(example("article-datacenter"))
    fast = plan(doc, catalog=catalog, rules=rules, as_of=AS_OF, objective="time", explain="none")
    cheap = plan(doc, catalog=catalog, rules=rules, as_of=AS_OF, explain="none")
    assert fast.total_cost_usd > cheap.total_cost_usd  # the soonest finish is not the least cost
    for text in (plan_text(fast, full=True), advisor.memo(fast).content.decode()):
        assert "the least of the plans that finish soonest" in text and "what the plan minimises" not in text
    assert "what the plan minimises" in plan_text(cheap, full=True)


def test_pairs_of_reads_training_and_serving(catalog, rules):
    problem = prepare(parse_workload(KNIFE), catalog, rules, AS_OF)
    assert pairs_of(solve(problem)) == frozenset({("h100-sxm", "rent")})


def test_the_plan_and_the_memo_give_the_price_of_robustness(band):
    import advisor
    from advisor.present.plan_text import plan_text
    from advisor.present.words import usd

    p = band["expected"]
    loss = usd(p["decision"]["price_of_robustness_usd"])
    noise = usd(Z_SWITCH * p["decision"]["price_of_robustness_se_usd"])  # outside its noise: a saving
    memo = advisor.memo(p, charts=False).text
    recommendation = memo.split("## 1. Recommendation", 1)[1].split("\n\n", 2)[1]
    assert (
        f"is expected to cost {loss} more than this one (the price of robustness, on {FRESH_DRAWS:,} fresh draws, "
        f"±{noise} at 2 standard errors)" in recommendation
    )
    assert f"the plan at the point estimates is expected to cost {loss} more" in " ".join(
        plan_text(p, full=False).split()
    )


def test_the_expected_cost_states_its_monte_carlo_error(band):
    """Review 13: the printed expected cost carried a 2-4% Monte-Carlo error on 200 draws that was never
    shown. `expected_cost_se_usd` is the chosen plan's standard deviation over the scoring draws (the
    candidates' GPU types, seed SEED) / sqrt(n), and the mean on 20,000 fresh draws (another seed) falls
    within Z_SWITCH standard errors of the two means' difference: the band the plan prints."""
    from advisor.present.decision_words import expected

    p = band["expected"]
    problem, d = p.problem, p["decision"]
    chosen = solve(problem, baseline(problem).but(buy_factor={"rtx-a6000": 1e3}))
    scored = joint_draws(problem, SCORING_DRAWS, SEED, gpus=["rtx-6000-ada", "rtx-a6000"])
    mine = PlanCost.of(problem, chosen).at(scored)
    assert d["expected_cost_usd"] == pytest.approx(float(mine.mean()), abs=0.01) and d["scored_draws"] == len(mine)
    se = float(np.std(mine, ddof=1)) / len(mine) ** 0.5
    assert d["expected_cost_se_usd"] == pytest.approx(se, abs=0.01) and se > 0
    far = PlanCost.of(problem, chosen).at(joint_draws(problem, 20_000, FRESH_SEED + 1, gpus=["rtx-6000-ada"]))
    far_se = float(np.std(far, ddof=1)) / len(far) ** 0.5
    assert abs(float(far.mean()) - d["expected_cost_usd"]) <= Z_SWITCH * (se**2 + far_se**2) ** 0.5
    assert f"expected ${d['expected_cost_usd']:,.0f} ±${Z_SWITCH * se:,.0f} at 2 standard errors," in d["message"]
    assert expected(p.decision) == f"${d['expected_cost_usd']:,.0f} (±${Z_SWITCH * se:,.0f} at 2 standard errors)"
