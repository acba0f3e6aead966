"""Which quote to get first: the expected value of perfect information (EVPI) on each uncertain
input of the decision (docs/model.md, "Value of information").

An input X is a GPU's rental rate, its purchase price, or its speed on this job. Knowing X exactly
before committing lets the buyer take, for the X that turns up, the plan of least expected cost
given X; the EVPI is what that is worth on average against committing now to the chosen plan C:

    EVPI(X) = E_X[ E[cost(C) | X] - min_a E[cost(a) | X] ] - (E[cost(C)] - min_a E[cost(a)])

(the second term, zero when C is the expected-cost choice, removes what C pays for its basis,
p80 or p90, whatever X turns out to be). `a` ranges over the candidate plans: those the decision
compared (explain/decision.py), the cheapest plan on each of the pair sets the robustness draws most
often found optimal (what its headline names as the alternative), and, for each (GPU, ownership) pair C
spends on, the cheapest plan without it. A plan's run terms are rate x scale(speed) (explain/plan_cost.RunTerm: its offer's band at
the GPU type's rent normal; 1 / speed, or what a commitment bills at that speed), rate and speed drawn
independently, so E[cost(a) | X] is exact: for a price, its coefficient times the known value; for a
rate, each of the type's offers at the known rent normal; for a speed, the GPU's own scale and its
group's (explain/draws.py: siblings' normals given this one are N(rho z, 1 - rho^2), integrated by
Gauss-Hermite). E_X averages over the decision's own draws of X. An input that
cannot change which plan is best has EVPI 0 and is not listed.

Lead times (the market's lead-time distributions, once they are drawn) enter as a fourth kind:
they move feasibility (a deadline), not cost, so their conditional is per-plan feasibility given
the lead time; `KINDS` is where it goes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.data.uncertainty import LogDist, rate_dist
from advisor.explain.decision import (
    Decided,
    Option,
    Wanted,
    frequent_optima,
    named,
    optimum_wanted,
    restricted_options,
)
from advisor.explain.draws import Draws, gpu_prices, gpu_speed, serve_speed, speed_evidence
from advisor.explain.offer_options import offer_drops
from advisor.explain.plan_cost import RunTerm
from advisor.explain.scores import QUANTILES
from advisor.solve.constraints.gpu_count import held_on
from advisor.solve.rental_offers import offers_of
from advisor.solve.settings import SolveSettings

if TYPE_CHECKING:
    from advisor.data.catalog_prices import RentalOffer
    from advisor.explain.robustness import Verdict
    from advisor.solve.problem import Problem

KINDS = ("rental_rate", "purchase_price", "speed")
MOST_LISTED = 8  # verify lists at most this many inputs
MIN_EVPI_USD = 0.5  # below this (a cent once rounded, or noise), an input is not worth a quote
HERMITE_NODES = 24
WITHOUT_SHARE = 0.05  # a pair carrying at least this share of the chosen plan's cost gets a "without" plan


@dataclass(frozen=True)
class Input:
    """An uncertain input a quote or a measurement could settle: a GPU's rate, price or speed."""

    kind: str  # rental_rate | purchase_price | speed
    gpu: str


def candidates(
    problem: Problem, decided: Decided, settings: SolveSettings, verdict: Verdict | None = None
) -> list[Option]:
    """The decision's options; the cheapest plan on each of the robustness draws' most frequent optima
    (`verdict`'s draws made so far; a p80/p90 decision has them among its options already), so the
    alternative its headline names is priced; and, for each (GPU, ownership) pair carrying
    WITHOUT_SHARE or more of the chosen plan's cost, the cheapest plan without that pair (the
    runner-up if its price rises), and without each offer it rents that another offer of its GPU type
    could beat in a draw (explain/offer_options.py)."""
    options = list(decided.options)
    seen = {o.key for o in options}
    optima: list[Wanted] = []
    if verdict is not None and decided.basis not in QUANTILES:
        mine = (decided.chosen_option.pairs, offers_of(decided.chosen))
        optima = optimum_wanted(problem, [k for k in frequent_optima(verdict.answered()) if k != mine])
    cost = decided.chosen_option.cost
    spend = {(g, "buy"): cost.buy.get(g, 0.0) + cost.energy.get(g, 0.0) for g in cost.gpus()}
    spend.update({(g, "rent"): v for g, v in cost.rent.items()})
    total = sum(spend.values()) or 1.0
    wanted: list[Wanted] = [
        (f"without {pair[0]} ({pair[1]})", None, frozenset({pair}), frozenset())
        for pair in sorted(p for p, v in spend.items() if v >= WITHOUT_SHARE * total)
    ]
    # and without each offer it rents whose GPU type has an offer of another grade or billing (one pair)
    wanted += [(label, None, frozenset(), out) for label, out in offer_drops(problem, decided.chosen)]
    return options + restricted_options(problem, optima + wanted, settings, seen)  # (one batch: both cores)


def inputs_of(options: list[Option], draws: Draws) -> list[Input]:
    """Every input some candidate's cost depends on (sorted: kind, then GPU)."""
    out = set()
    for o in options:
        for g in o.cost.gpus() & set(draws.gpus):
            if o.cost.buy.get(g):
                out.add(Input("purchase_price", g))
            if o.cost.rent.get(g):
                out.add(Input("rental_rate", g))
            if o.cost.energy.get(g) or o.cost.rent.get(g):
                out.add(Input("speed", g))
    return sorted(out, key=lambda x: (KINDS.index(x.kind), x.gpu))


def scale_given(
    problem: Problem, draws: Draws, term: RunTerm, z: np.ndarray, types: dict[str, LogDist] | None = None
) -> np.ndarray:
    """E[a run term's cost scale | the conditioning speed's normal is z] for a sibling GPU type's
    term, whose normal given z is N(rho z, 1 - rho^2) (Gauss-Hermite): 1 / speed, or what a
    commitment bills at that speed. `types`: the GPU types' speed errors already worked out (gpu_speed
    reads every candidate of the type: a 200-job fleet's verify spent 55 s re-reading them per term)."""
    rho = draws.shared
    types = {} if types is None else types
    if term.speed is None and term.gpu not in types:
        types[term.gpu] = gpu_speed(problem, term.gpu)
    dist = term.speed if term.speed is not None else types[term.gpu]
    nodes, weights = np.polynomial.hermite_e.hermegauss(HERMITE_NODES)
    weights = weights / weights.sum()
    at = rho * z[:, None] + np.sqrt(max(1.0 - rho * rho, 0.0)) * nodes[None, :]
    speed = dist.factors_at(at.ravel()).reshape(at.shape)
    return np.asarray(term.scale(speed)) @ weights


def conditional_costs(problem: Problem, x: Input, options: list[Option], draws: Draws) -> np.ndarray:
    """E[cost(a) | X = X's value in draw i], an (n draws x n options) array: each option's mean cost
    over the draws with X's terms replaced by their expectation given X (the other factors are
    independent of X, or, for a sibling's speed, conditioned through the shared normal). A run term
    is rate x scale(speed) (explain/plan_cost.RunTerm): rate and speed are drawn independently."""
    j = draws.column(x.gpu)
    out = np.repeat(np.array([o.cost.at(draws).mean() for o in options])[None, :], draws.n, axis=0)
    if x.kind == "purchase_price":
        b = draws.buy[:, j]
        coef = np.array([o.cost.buy.get(x.gpu, 0.0) for o in options])
        return out + np.outer(b - b.mean(), coef)
    z = draws.z[:, j]
    types: dict[str, LogDist] = {}
    for a, o in enumerate(options):
        for t in o.cost.terms:
            if t.gpu not in draws.gpus:
                continue
            rate, scale = t.rates(draws), t.scale(t.speeds(draws))
            if x.kind == "rental_rate":
                if t.gpu == x.gpu and t.rented:  # the rate known, the speed still drawn
                    out[:, a] += t.usd * (rate * scale.mean() - (rate * scale).mean())
            elif draws.groups[draws.column(t.gpu)] == draws.groups[j]:  # the terms in the speed, given z
                given = scale if t.gpu == x.gpu else scale_given(problem, draws, t, z, types)
                out[:, a] += t.usd * (given * rate.mean() - (rate * scale).mean())
    return out


def evpi(cond: np.ndarray, chosen: int) -> tuple[float, np.ndarray]:
    """(EVPI of the input, per draw the option best given its value), from conditional_costs."""
    best = cond.min(axis=1)
    means = cond.mean(axis=0)
    value = float((cond[:, chosen] - best).mean() - (means[chosen] - means.min()))
    return max(value, 0.0), cond.argmin(axis=1)


def verify(
    problem: Problem, decided: Decided, settings: SolveSettings, verdict: Verdict | None = None
) -> list[dict[str, Any]]:
    """`decision.verify`: the inputs whose exact value could change the decision, by EVPI, most first.
    `verdict`: the robustness draws made (None: the decision's own, if any)."""
    options = candidates(problem, decided, settings, verdict or decided.verdict)
    chosen = next(i for i, o in enumerate(options) if o.sol is decided.chosen)
    names = {g: problem.catalog.gpus[g].name for g in problem.catalog.gpus}
    found = []
    for x in inputs_of(options, decided.draws):
        value, best = evpi(conditional_costs(problem, x, options, decided.draws), chosen)
        if value < MIN_EVPI_USD:
            continue
        others = Counter(int(i) for i in best if i != chosen)
        switch = named(options[others.most_common(1)[0][0]], options[chosen], names) if others else None
        found.append(entry(problem, x, value, options, switch, options[chosen]))
    found.sort(key=lambda e: (-e["evpi_usd"], e["input"]))
    return found[:MOST_LISTED]


def _speed_item(problem: Problem, x: Input, value: float, count: int, stake: str) -> dict[str, Any]:
    """The verify item of a GPU's speed on this job: what to measure, at which counts when the user's own
    run already covers some (the candidates whose speed is their measurement)."""
    d = gpu_speed(problem, x.gpu)
    lo, hi = d.factor(0.1), d.factor(0.9)
    evidence = speed_evidence(problem, x.gpu)
    yours = sorted(
        {c.count for cs in problem.candidates for c in cs if c.gpu == x.gpu and c.estimate.speed_spread is not None}
    )
    where = (
        f" at the GPU counts your own run does not cover (yours, used as measured: {', '.join(map(str, yours))})"
        if yours
        else " (a short run of it)"
    )
    text = (
        f"measure {problem.catalog.gpus[x.gpu].name}'s speed on this job{where}: {stake}; real speed P10-P90 "
        f"{lo:.2f}-{hi:.2f}x the estimate" + (f" ({evidence.replace('_', ' ')} evidence)" if evidence else "")
    )
    return _item(x, count, 1.0, [lo, hi], evidence, value, text)


def _trains_on(x: Input, options: list[Option], chosen: Option) -> bool:
    """Whether the chosen plan trains on the GPU (when it holds none, the option holding most of it): a
    GPU it only serves on is worded, and banded, as a replica's throughput even when the workload also
    trains elsewhere (review16 #5)."""
    held = [t for t in chosen.cost.terms if t.gpu == x.gpu]
    if not held:
        most = max(options, key=lambda o: max((n for g, _, n in o.first_stage if g == x.gpu), default=0))
        held = [t for t in most.cost.terms if t.gpu == x.gpu]
    return any(t.cand is not None for t in held)


def _serving_item(problem: Problem, x: Input, value: float, count: int, stake: str, chosen: Option) -> dict[str, Any]:
    """The verify item of a serving-only GPU type's speed: its replica's requests/s, within the serving
    model's held-out error (explain/draws.serve_speed)."""
    gpu = problem.catalog.gpus[x.gpu]
    replicas = [t.speed for t in chosen.cost.terms if t.gpu == x.gpu and t.cand is None and t.speed is not None]
    if replicas and all(d.measured for d in replicas):  # it serves on it only at shapes the user measured
        d = max(replicas, key=lambda d: d.q90 - d.q10)
        lo, hi = d.factor(0.1), d.factor(0.9)
        text = (
            f"confirm your own run's throughput on {gpu.name} (used as measured): {stake}; real requests/s "
            f"P10-P90 {lo:.2f}-{hi:.2f}x your run (its spread)"
        )
        return _item(x, count, 1.0, [lo, hi], "measured", value, text)
    d = serve_speed(problem, x.gpu)
    lo, hi = d.factor(0.1), d.factor(0.9)
    text = (
        f"measure the replica's throughput under the SLO on 1 node of {gpu.name}: {stake}; real requests/s "
        f"P10-P90 {lo:.2f}-{hi:.2f}x the estimate (serving model's error on published runs)"
    )
    return _item(x, count, 1.0, [lo, hi], "serving_model", value, text)


def rented_at_once(gpu: str, o: Option) -> int:
    """GPUs of `gpu` option `o` rents at once: its purchase signature's (training jobs and serving
    replicas) and the bridge replicas that serve until its bought GPUs arrive, which the signature
    leaves out (review19: a quote for 17 beside a bridge of 16)."""
    rented = sum(n for g, own, n in o.first_stage if g == gpu and own == "rent")
    return rented + sum(b.gpus * n for b, n in o.sol.bridges if b.gpu == gpu)


def _quote_count(x: Input, options: list[Option], chosen: Option) -> int:
    """The quantity to quote: the chosen plan's where it holds the GPU in the input's ownership
    (review16: "634x" beside a plan of 630; its bridge rental counted), else the most any candidate
    at stake holds."""
    own = {"rental_rate": ("rent",), "purchase_price": ("buy",), "speed": ("buy", "rent")}[x.kind]

    def held(o: Option) -> list[int]:
        bought = [n for g, o2, n in o.first_stage if g == x.gpu and o2 == "buy" and "buy" in own]
        rented = rented_at_once(x.gpu, o) if "rent" in own else 0
        return bought + ([rented] if rented else [])

    return max(held(chosen) or [n for o in options for n in held(o)] or [0])


def entry(
    problem: Problem, x: Input, value: float, options: list[Option], switch: str | None, chosen: Option
) -> dict[str, Any]:
    """One verify item: {input, kind, gpu, count, current, range, confidence, evpi_usd, message}."""
    gpu = problem.catalog.gpus[x.gpu]
    count = _quote_count(x, options, chosen)
    stake = f"up to ${value:,.0f} at stake" + (f" (at part of its range {switch} is cheaper)" if switch else "")
    if x.kind == "speed":
        if not _trains_on(x, options, chosen):
            return _serving_item(problem, x, value, count, stake, chosen)
        return _speed_item(problem, x, value, count, stake)
    buy_d, rent_d = gpu_prices(problem, x.gpu)
    rented = x.kind == "rental_rate"
    purchase = gpu.prices.purchase
    price = problem.rent_rate.get(x.gpu) if rented else problem.unit_price.get(x.gpu)
    conf = (gpu.rental.confidence if gpu.rental else None) if rented else (purchase.confidence if purchase else None)
    d, unit, what = (rent_d, "/GPU-hour", "rental") if rented else (buy_d, " per GPU", "purchase")
    priced = priced_offer(x, options, chosen) if rented else None
    offer = priced[0] if priced is not None else None
    graded = f"{conf or 'unknown'} confidence"
    if priced is not None:  # the offer the plan renting it is priced at, not the type's cheapest
        # what that provider is asked for: 256 on SF Compute, not 258 with RunPod's 2
        count = held_on(problem, priced[2].sol, x.gpu, priced[0].provider) or count
        price, d, conf = priced[0].usd_per_gpu_hour, priced[1], priced[0].confidence
        graded = f"{conf} confidence"
        if d != rate_dist(priced[0]):  # above the size its rate is evidenced at: drawn at the low grade
            graded, conf = f"low confidence at this size ({conf} as listed)", "low"
    fmt = "{:,.2f}" if rented else "{:,.0f}"
    text = f"get a firm quote for {count:,}\u00d7 {gpu.name} {what}" + (f" from {offer.provider}" if offer else "")
    text += f": {stake}"
    if not price:
        return _item(x, count, price, None, conf, value, text)
    lo, hi = price * d.factor(0.1), price * d.factor(0.9)
    text += f"; catalog ${fmt.format(price)}{unit}, {graded}, P10-P90 ${fmt.format(lo)}-${fmt.format(hi)}"
    return _item(x, count, price, [lo, hi], conf, value, text)


def priced_offer(
    x: Input, options: list[Option], chosen: Option | None = None
) -> tuple[RentalOffer, LogDist, Option] | None:
    """The offer a quote for renting x.gpu is asked of: the chosen plan's own when it rents the type,
    else the one the option renting most of it rents most GPUs on (options in the decision's order:
    the earlier option's offer on a tie); the band that option draws that offer's rate in (the widest
    of its orders there: one above the size the offer's rate is evidenced at takes the low grade's
    spread, data/uncertainty.rate_dist, not another offer's: review22a #2); and that option."""
    best: tuple[int, RentalOffer, Option] | None = None
    for o in [chosen] if chosen is not None and chosen.sol.rented_offers(x.gpu) else options:
        offers = o.sol.rented_offers(x.gpu)
        count = rented_at_once(x.gpu, o)
        if offers and (best is None or count > best[0]):
            best = (count, offers[0], o)
    if best is None:
        return None
    _, offer, option = best
    terms = [t for t in option.cost.terms if t.gpu == x.gpu and t.rented and t.provider == offer.provider]
    band = max((t.rate for t in terms if t.rate is not None), key=lambda d: d.q90 - d.q10, default=rate_dist(offer))
    return offer, band, option


def _item(
    x: Input, count: int, current: Any, span: Any, confidence: str | None, value: float, message: str
) -> dict[str, Any]:
    return {
        "input": f"{x.kind}:{x.gpu}",
        "kind": x.kind,
        "gpu": x.gpu,
        "count": count,
        "current": current,
        "range": span,
        "confidence": confidence,
        "evpi_usd": value,
        "message": message,
    }
