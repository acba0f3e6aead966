"""Choosing the plan on a decision basis (workload `decision: {basis, draws}`), and what choosing at
the point estimates would have cost: docs/model.md, "Decision".

An optimizer picks, among many plans, the one whose estimates are most favourably wrong. Here the
plan is chosen on its cost over joint draws of every GPU's speed and prices (explain/draws.py),
with deadlines held at the workload's confidence as in every solve:

* expected (the default): the least mean cost over the draws. The first stage (what is bought,
  which GPU types and offers are rented, every job's configuration) is one decision shared by all
  draws, and a plan's cost is nearly linear in the drawn factors (explain/plan_cost.py), so the
  sample-average objective is close to the MILP's objective at the draws' mean factors: purchase
  prices x mean(b), rents x mean(r / s), each rented offer at its own band's mean. That is one
  re-solve (`Scenario.buy_factor`, `rent_factor`, `offer_factor`); a commitment's flat cost (a second
  term when the job runs past the first) is a step no mean shows, so the plans with the point plan's
  commitments left out and forced are candidates too (explain/offer_options.py). The energy of owned
  jobs, which scales with mean(1 / s), is left at the estimate there, and a candidate is kept only
  if its mean cost over the draws, energy included, beats the point plan's by more than the solve's
  gap (bench/decision.py compares with the exact sample-average MILP).
* p80 / p90: the least 80th / 90th percentile of cost among candidate plans: the point plan, the
  expected plan, the plan of least mean cost over the worst 20% / 10% of draws (CVaR, a linear
  program: explain/saa.py; it finds the hedged mixes of GPU types a single re-solve cannot), the
  cheapest plan on the pairs and rental offers of each robustness draw's optimum, and each GPU type
  alone; each at the catalog's figures, then costed in every draw. The exact quantile MILP (one
  binary per draw) is the benchmark's reference (bench/decision.py), not run here.
* point: the optimum at the catalog's figures and the estimates (the plan as solved).

The candidates are found on the workload's `decision.draws` (the expected re-solve's mean prices,
the CVaR plan, the robustness draws' optima) and chosen among on SCORING_DRAWS joint draws: costing a
found plan needs no re-solve, so the choice and the figures printed for it are settled by many draws,
not by the few a re-solve per draw affords. The price of robustness is what the point plan is expected
to lose against the chosen one, measured on FRESH_DRAWS fresh draws (another seed) that played no part
in the choice.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from advisor.contract.decision import Z_SWITCH
from advisor.explain.decision_message import message
from advisor.explain.draws import Draws, Prices, joint_draws, shared_draws, usable_gpus
from advisor.explain.offer_options import Offer, commitment_splits, on_offers, profiles
from advisor.explain.plan_cost import PlanCost, offer_bands
from advisor.explain.ranges import SEED
from advisor.explain.scores import QUANTILES, mean_se, quantile, score, standard_error
from advisor.solve import parallel
from advisor.solve.constraints.gpu_count import held_counts
from advisor.solve.costing import plan_costs
from advisor.solve.milp import solve
from advisor.solve.model import Model
from advisor.solve.problem import Problem
from advisor.solve.redraw import TIMED_OUT, describe, signature
from advisor.solve.rental_offers import offers_of, pairs_of
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings, SolveTally
from advisor.solve.solution import Solution
from advisor.solve.verify import violations

if TYPE_CHECKING:
    from advisor.explain.robustness import Verdict

FRESH_SEED = 61  # the fresh draws the price of robustness is measured on (never used to choose)
# The draws every candidate is scored on (pick) and the chosen and point plans' printed figures are over
# (record). Enough to resolve a saving of 0.5% of the cost at Z_SWITCH standard errors where the paired
# difference spreads widest among the cases measured (the 8x H100 knife: sd 33% of its cost, bench/decision.py):
# (2 x 0.335 / 0.005)^2 = 17,956. Drawing them for one GPU type takes ~9 ms of CPU; costing a found plan on
# them is numpy over its run terms (article-office 0.03 ms, bench/perf.py's 200-job fleet ~3 ms a plan).
SCORING_DRAWS = 20_000
FRESH_DRAWS = SCORING_DRAWS  # the price of robustness resolved as finely as the choice it prices
EXCLUDED = 1e3  # a price factor that keeps a (GPU, ownership) pair out of a restricted re-solve
MOST_DRAW_PLANS = 8  # p80/p90: the most frequent draw optima re-solved as candidates
CVAR_TERMS = 1_000_000  # p80/p90: the CVaR plan is a candidate when candidate columns x draws is at most this

Pair = tuple[str, str]  # (GPU id, "buy" | "rent")


@dataclass
class Option:
    """A candidate plan: how it was found, its Solution at the catalog's figures, its cost model."""

    label: str
    sol: Solution
    cost: PlanCost
    first_stage: tuple  # its purchase (solve/redraw.signature): what two candidates are compared by

    @classmethod
    def of(cls, problem: Problem, label: str, sol: Solution) -> Option:
        return cls(label, sol, PlanCost.of(problem, sol), signature(problem, sol.bought, sol.assignment, sol.serving))

    @property
    def pairs(self) -> frozenset[Pair]:
        return pairs_of(self.sol)

    @property
    def key(self) -> tuple:
        """What tells two candidates apart: the purchase and the offers rented on."""
        return self.first_stage, offers_of(self.sol)


@dataclass
class Decided:
    """The decision: the chosen plan, the candidates it was chosen from (the point plan first), the
    draws, and the JSON record (advisor/contract/decision.py `Decision`, without `verify`)."""

    chosen: Solution
    options: list[Option]
    draws: Draws  # the workload's decision.draws: what the candidates are found on
    scored: Draws  # SCORING_DRAWS: what they are chosen among on and the record's figures are over
    basis: str
    record: dict[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None  # the robustness draws, when the choice read them (p80, p90)
    prices: Prices | None = None  # the expected prices explanations re-solve at (None: the catalog's)

    @property
    def chosen_option(self) -> Option:
        return next(o for o in self.options if o.sol is self.chosen)


def at_catalog_figures(problem: Problem, sol: Solution) -> Solution:
    """`sol` costed at the catalog's prices (a solve under price factors reports its costs at them)."""
    costs = plan_costs(
        Model(problem, baseline(problem), [], []),
        sol.assignment,
        sol.bought,
        sol.servers,
        sol.networked,
        sol.held,
        sol.paid_serving,
    )
    return replace(
        sol,
        objective_usd=sum(costs.pv.values()),
        cost_breakdown=costs.nominal,
        cost_breakdown_pv=costs.pv,
        residual_value_usd=costs.resale_usd,
        mip_objective_usd=None,
    )


def restricted(
    problem: Problem,
    settings: SolveSettings,
    keep: frozenset[Pair] | None = None,
    drop: frozenset[Pair] = frozenset(),
    offers: frozenset[Offer] = frozenset(),
) -> Solution | None:
    """The cheapest plan at the catalog's figures using only the pairs in `keep` (None: any), none in
    `drop`, and none of the rental `offers` (GPU, provider); None when there is none. Pairs and offers
    are kept out by pricing them EXCLUDED times dearer."""
    buy: dict[str, float] = {}
    rent: dict[str, float] = {}
    for g in usable_gpus(problem):
        for own, factors in (("buy", buy), ("rent", rent)):
            if (keep is not None and (g, own) not in keep) or (g, own) in drop:
                factors[g] = EXCLUDED
    sc = baseline(problem).but(buy_factor=buy, rent_factor=rent, offer_factor=dict.fromkeys(offers, EXCLUDED))
    sol = solve(problem, sc, settings)
    if not sol.feasible or (keep is not None and not pairs_of(sol) <= keep) or pairs_of(sol) & drop:
        return None
    return None if offers_of(sol) & offers else sol


def expected_plan(problem: Problem, mean: Prices, settings: SolveSettings) -> Solution | None:
    """The sample-average plan: the MILP at the draws' `mean` price factors (Prices.of: deadlines at the
    workload's confidence; each offer of the point plan's rented GPU types at its own band's mean, a
    re-solve with offers priced apart building its own model), costed back at the catalog's figures;
    None if it breaks a limit there."""
    sol = solve(problem, mean.on(baseline(problem)), settings)
    if not sol.feasible:
        return None
    sol = at_catalog_figures(problem, sol)
    return None if violations(problem, sol) else sol


def frequent_optima(answers: list) -> list[tuple[frozenset, frozenset]]:
    """The MOST_DRAW_PLANS most frequent (pairs, rental offers) among robustness draws' optima (`answers`:
    Verdict.answers() or .answered()), most frequent first (ties by their sorted pairs and offers)."""
    counts: dict[tuple[frozenset, frozenset], int] = {}
    for one in answers:
        if one is not None and one[1] != (TIMED_OUT,):
            counts[one[0], one[3]] = counts.get((one[0], one[3]), 0) + 1
    return sorted(counts, key=lambda k: (-counts[k], sorted(k[0]), sorted(k[1])))[:MOST_DRAW_PLANS]


def optimum_wanted(problem: Problem, keys: list[tuple[frozenset, frozenset]]) -> list[Wanted]:
    """For each (pairs, offers) in `keys`, the restricted_options() entry of the cheapest plan at the
    catalog's figures on those pairs alone, renting on those offers alone."""
    every = profiles(problem)
    return [
        (
            "draw optimum (" + " + ".join(f"{g} ({o})" for g, o in sorted(k)) + ")",
            k,
            frozenset(),
            frozenset(o for o in every if (o[0], "rent") in k and o not in on),
        )
        for k, on in keys
    ]


Wanted = tuple[str, "frozenset[Pair] | None", "frozenset[Pair]", "frozenset[Offer]"]  # label, keep, drop, offers


def restricted_options(problem: Problem, wanted: list[Wanted], settings: SolveSettings, seen: set) -> list[Option]:
    """For each (label, keep, drop, offers) the restricted() plan as an option, those already `seen`
    (Option.key) left out and the new ones added to it. The re-solves are independent fresh runs of
    the problem's model, so on a large problem they share both cores (solve/parallel.py)."""
    calls = [functools.partial(restricted, problem, settings, keep=k, drop=d, offers=o) for _, k, d, o in wanted]
    sols = parallel.paced(calls, counted=settings.tally.forked if settings.tally is not None else None)
    out = []
    for (label, *_), sol in zip(wanted, sols):
        if sol is None:
            continue
        opt = Option.of(problem, label, sol)
        if opt.key not in seen:
            seen.add(opt.key)
            out.append(opt)
    return out


def draw_options(problem: Problem, verdict: Verdict, settings: SolveSettings, seen: set) -> list[Option]:
    """p80/p90 candidates: for the MOST_DRAW_PLANS most frequent (GPU, ownership) sets and rental offers
    among the robustness draws' optima, and for each GPU type alone, the cheapest plan at the catalog's
    figures."""
    alone: list[Wanted] = [
        (f"{g} alone", frozenset({(g, "buy"), (g, "rent")}), frozenset(), frozenset()) for g in usable_gpus(problem)
    ]
    return restricted_options(
        problem, optimum_wanted(problem, frequent_optima(verdict.answers())) + alone, settings, seen
    )


def scoring_draws(problem: Problem, options: list[Option]) -> Draws:
    """SCORING_DRAWS joint draws (seed SEED) of the GPU types the `options` use: the draws they are chosen
    among on. The other types' columns would change no cost (a column's joint law is the same whichever
    types are drawn with it), so they are not drawn. Made once per problem and set of types."""
    gpus = tuple(sorted(set().union(*(o.cost.gpus() for o in options))))
    memo = problem.solver_cache.setdefault("scoring_draws", {})
    if (SCORING_DRAWS, gpus) not in memo:
        memo[SCORING_DRAWS, gpus] = joint_draws(problem, SCORING_DRAWS, SEED, gpus=gpus)
    return memo[SCORING_DRAWS, gpus]


def pick(options: list[Option], basis: str, draws: Draws, gap: float) -> Option:
    """The option with the least score; the point plan (options[0]) unless another beats it by more
    than the solve's relative gap AND by more than Z_SWITCH standard errors of the paired difference
    over the draws: a saving the solves cannot resolve, or that the draws cannot tell from sampling
    noise, does not move the plan (a choice made on noise loses on fresh draws half the time)."""
    costs = [o.cost.at(draws) for o in options]
    scores = [score(c, basis) for c in costs]
    best = min(range(len(options)), key=lambda i: (scores[i], i))
    if best == 0:
        return options[0]
    saving = scores[0] - scores[best]
    if saving <= gap * abs(scores[0]) or saving <= Z_SWITCH * standard_error(costs[0], costs[best], basis):
        return options[0]
    return options[best]


def decide(problem: Problem, point: Solution, settings: SolveSettings, verdict: Verdict | None = None) -> Decided:
    """The plan chosen on the workload's decision basis from the point plan `point` (feasible), with its
    record. `verdict`: the robustness draws (p80/p90 read their optima; made here when None)."""
    spec = problem.workload.decision
    draws = shared_draws(problem, spec.draws, SEED)
    # the candidates' solves price plans at other prices (the draws' mean, EXCLUDED pairs): counted apart
    # from the plan's own, so the progress line never shows their cost as the plan's (solve/run.count_solve)
    settings = settings.but(tally=settings.tally or SolveTally())
    options = [Option.of(problem, "point", point)]
    seen = {options[0].key}
    rented = {g for g, own in options[0].pairs if own == "rent"}
    mean = Prices.of(draws, offer_bands(problem, rented))

    def add(label: str, sol: Solution | None) -> None:
        if sol is not None and (opt := Option.of(problem, label, sol)).key not in seen:
            options.append(opt)
            seen.add(opt.key)

    if spec.basis != "point":
        add("expected", expected_plan(problem, mean, settings.but(polish=False)))
        # a commitment's term: a step no mean sees
        splits: list[Wanted] = [(label, None, frozenset(), out) for label, out in commitment_splits(problem, point)]
        options += restricted_options(problem, splits, settings.but(polish=False), seen)
    if spec.basis in QUANTILES:
        if sum(map(len, problem.candidates)) * draws.n <= CVAR_TERMS:
            from advisor.explain.saa import saa_plan  # (p80/p90 only: not imported by every plan)

            tail = saa_plan(
                problem,
                draws,
                "cvar",
                QUANTILES[spec.basis],
                settings.time_limit,
                settings.gap_for(problem),
                held_counts(problem, point),
            )
            add("least tail mean (CVaR)", tail and (None if violations(problem, tail) else tail))
        if verdict is None:
            from advisor.explain.robustness import Verdict as Drawn

            verdict = Drawn(problem, settings)
        verdict.hold(point)  # each rate drawn as the point plan's rows grade it
        options += draw_options(problem, verdict, settings, seen)
    scored = scoring_draws(problem, options)
    chosen = pick(options, spec.basis, scored, settings.gap_for(problem))
    if chosen.label == "expected" and settings.polishes(problem):  # the plan itself, with the idle-GPU polish
        polished = expected_plan(problem, mean, settings)
        if polished is not None:
            chosen.sol, chosen.cost = polished, PlanCost.of(problem, polished)
            if not chosen.cost.gpus() <= set(scored.gpus):  # a GPU type the choice's draws do not cover
                scored = scoring_draws(problem, options)
    out = Decided(
        chosen.sol,
        options,
        draws,
        scored,
        spec.basis,
        verdict=verdict,
        prices=None if chosen is options[0] else mean,
    )
    out.record = record(problem, out, options[0])
    return out


def named(a: Option, b: Option, names: dict[str, str]) -> str:
    """Plan `a` in words beside plan `b`: its purchase, with its rental offers when the purchase reads
    as b's (one purchase on other offers is named by them)."""
    text = describe(a.first_stage, names)
    return on_offers(text, a.sol, b.sol) if text == describe(b.first_stage, names) else text


def record(problem: Problem, d: Decided, point: Option) -> dict[str, Any]:
    """The plan's `decision` (without `verify`): basis, draws, the chosen plan's mean and P80 cost over
    the scoring draws, the point plan's, and the price of robustness on fresh draws."""
    chosen = d.chosen_option
    mine, theirs = chosen.cost.at(d.scored), point.cost.at(d.scored)
    loss, se = 0.0, 0.0
    if chosen is not point:
        fresh = joint_draws(problem, FRESH_DRAWS, FRESH_SEED, gpus=sorted(chosen.cost.gpus() | point.cost.gpus()))
        theirs_fresh, mine_fresh = point.cost.at(fresh), chosen.cost.at(fresh)
        loss = float((theirs_fresh - mine_fresh).mean())
        se = standard_error(theirs_fresh, mine_fresh, "expected")
    names = {g: problem.catalog.gpus[g].name for g in problem.catalog.gpus}
    what, point_what = named(chosen, point, names), named(point, chosen, names)
    rec: dict[str, Any] = {
        "basis": d.basis,
        "draws": d.draws.n,
        "scored_draws": d.scored.n,
        "expected_cost_usd": float(mine.mean()),
        "expected_cost_se_usd": mean_se(mine),
        "p80_cost_usd": quantile(mine, 0.8),
        "p90_cost_usd": quantile(mine, 0.9),
        "point_optimal": {
            "purchase": [{"gpu": g, "ownership": o, "count": n} for g, o, n in point.first_stage],
            "expected_cost_usd": float(theirs.mean()),
            "p80_cost_usd": quantile(theirs, 0.8),
        },
        "price_of_robustness_usd": loss,
        "price_of_robustness_se_usd": se,
        "fresh_draws": FRESH_DRAWS if chosen is not point else 0,
        "candidates": len(d.options),
        "explained_at": "catalog" if d.prices is None else "expected",
    }
    rec["message"] = message(
        d.basis,
        rec,
        what,
        point_what,
        chosen is point,
        _within_noise(d, point, names) if chosen is point else None,
    )
    return rec


def _within_noise(d: Decided, point: Option, names: dict[str, str]) -> str | None:
    """When the point plan stands though another candidate scores less on the draws (by no more than the
    gap or Z_SWITCH standard errors), that candidate and its saving: the plan never claims a least cost
    it does not have."""
    if d.basis == "point" or len(d.options) < 2:
        return None
    costs = {id(o): o.cost.at(d.scored) for o in d.options}
    best = min(d.options[1:], key=lambda o: score(costs[id(o)], d.basis))
    saving = score(costs[id(point)], d.basis) - score(costs[id(best)], d.basis)
    if saving <= 0:
        return None
    se = standard_error(costs[id(point)], costs[id(best)], d.basis)
    return (
        f"{describe(best.first_stage, names)} scores ${saving:,.0f} less over the draws, within their noise "
        f"({Z_SWITCH:g} standard errors: ${Z_SWITCH * se:,.0f}) or the solve's gap, so the optimum at the point "
        "estimates stands"
    )
