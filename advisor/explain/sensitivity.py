"""How far prices may move before the choice changes, and what one more day or 10% more budget
is worth -- every number from re-solving, and every printed claim checked by a re-solve.

The choice is a (GPU type, ownership) pair: "rent H100s" loses to "buy H100s" when only the
rental rate rises, so the rise re-solves with Scenario.rent_factor (or buy_factor) on the chosen
pair alone, and every alternative -- another GPU, or the same GPU bought instead of rented --
stays in the model. A break-even factor x is printed only when the re-solves at x(1 - STEP)
(still chosen) and x(1 + STEP) (not chosen) confirm it; "stays the choice even at 64x" only when
the re-solve at 64x confirms it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from advisor.contract.facts import Marginal
from advisor.explain.draws import Prices
from advisor.explain.offer_quote import Quote, hidden_behind, offered, quote_of, rented_offer, solve_repriced
from advisor.solve.constraints import FAMILIES, slacks
from advisor.solve.constraints.base import Rebuild
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.reserved import paid_training
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.settings import FLEET_JOBS, SolveSettings
from advisor.solve.solution import Solution

CAP = 64.0  # the largest price factor tried
STEP = 0.01  # each break-even claim is verified at x(1 - STEP) and x(1 + STEP)
RESOLUTION = 0.004  # the fall's bisection stops when hi - lo is within this
RISE_SPAN = (1 + STEP) / (1 - STEP)  # the rise's when hi/lo is: x = hi/(1 + STEP) then has x(1 - STEP) <= lo
OWN = {"buy": "bought", "rent": "rented"}
PRICE = {"buy": "purchase price", "rent": "rental rate"}
VERB = {"buy": "buying", "rent": "renting"}


def main_choice(problem: Problem, sol: Solution) -> tuple[str, str]:
    """The (GPU, ownership) the plan spends most on."""
    spend: dict[tuple[str, str], float] = {}
    for c, n in paid_training(problem, sol.assignment) + sol.paid_serving:
        spend[c.gpu, c.ownership] = spend.get((c.gpu, c.ownership), 0.0) + c.run_cost_usd * n
    for g, n in sol.bought.items():
        spend[g, "buy"] = spend.get((g, "buy"), 0.0) + (problem.unit_price[g] or 0.0) * n
    return max(sorted(spend), key=lambda k: spend[k])


NOT_SEARCHED = (
    "no break-even is stated: a fleet chosen on expected cost over the point optimum is not searched "
    "for break-evens (each re-solve at the expected prices is a harder MILP of seconds); decision.verify "
    "ranks the inputs whose exact value could change the choice"
)


def searched(problem: Problem, prices: Prices | None) -> bool:
    """Are break-evens searched? Always, but for a fleet (FLEET_JOBS jobs or more) explained at expected
    prices: its bisections there cost 3-6x the catalog's (bench/perf.py's 200-job fleet: ~95 s of CPU)."""
    return prices is None or problem.job_count < FLEET_JOBS


def uses(sol: Solution, gpu: str, ownership: str, provider: str | None = None) -> bool:
    """Does `sol` use `gpu` owned so (rented from `provider`'s offer, when given)?"""
    if provider is not None:
        return sol.feasible and any(o.provider == provider for o in sol.rented_offers(gpu))
    return sol.feasible and any(
        c.gpu == gpu and c.ownership == ownership for c in sol.chosen + [s for s, _ in sol.serving]
    )


def priced(
    problem: Problem,
    gpu: str,
    ownership: str,
    factor: float,
    prices: Prices | None = None,
    provider: str | None = None,
) -> Scenario:
    """The workload with only `ownership`'s price of `gpu` multiplied by `factor` -- only `provider`'s
    offer's rate when given (the offer a plan rents on and an RFQ quotes; the GPU's other offers stay
    at theirs) -- over `prices`, the expected prices of a plan chosen on expected cost, when given."""
    if provider is not None:
        sc = baseline(problem).but(offer_factor={(gpu, provider): factor})
    else:
        key = "rent_factor" if ownership == "rent" else "buy_factor"
        sc = baseline(problem).but(**{key: {gpu: factor}})
    return prices.on(sc) if prices is not None else sc


def base_price(
    problem: Problem, gpu: str, ownership: str, prices: Prices | None = None, quote: Quote | None = None
) -> float | None:
    """The catalog's price of the pair (the expected one under `prices`, an offer's at its own band);
    `quote`: the offer (provider, rate) a plan rents the GPU on, when that is not its cheapest on-demand
    rate (another offer holds its layout)."""
    rate = quote[1] if quote else None
    price = (rate or problem.rent_rate.get(gpu)) if ownership == "rent" else problem.unit_price.get(gpu)
    if price is None or prices is None:
        return price
    return price * prices.expected(gpu, ownership, quote[0] if quote else None)


def _alternatives(problem: Problem, own: str) -> str:
    """What else a plan could have used, as the workload allows it: another GPU, and the same one
    owned the other way when the deployment allows both."""
    other = "rent" if own == "buy" else "buy"
    if other in problem.workload.deployment.ownerships:
        return f"another GPU, or {VERB[other]} the same one"
    return f"another GPU ({'buying' if own == 'buy' else 'renting'} only, as the deployment says)"


def break_even(
    problem: Problem, sol: Solution, alts: dict, settings: SolveSettings, prices: Prices | None = None
) -> list[dict]:
    """The chosen pair's price rise that changes the choice (and what wins then), and the price
    fall that makes the runner-up win, each re-solved at the plan's own gap; at `prices` (the
    expected prices a plan chosen on expected cost is optimal at; its words then say 'expected'),
    else at the catalog's. A rented pair's price is the rate of the one offer it rents on (the offer
    an RFQ quotes), moved alone: the dollar printed is the rate at which that offer loses, to another
    offer of the same GPU or to another GPU, whichever comes first."""
    if not sol.feasible:
        return []
    gpu, own = main_choice(problem, sol)
    if not searched(problem, prices):
        return [
            {
                "gpu": gpu,
                "ownership": own,
                "direction": "rise",
                "what": PRICE[own],
                "factor": None,
                "price": None,
                "verified": False,
                "message": NOT_SEARCHED,
            }
        ]
    mine = quote_of(rented_offer(sol, gpu)) if own == "rent" else None
    rise, runner, after = _rise(problem, (gpu, own), settings, prices, sol, mine)
    out: list[dict[str, Any]] = [rise]
    if runner is None:
        runner = _cheapest_forced(alts)
    if runner is not None and base_price(problem, *runner):
        out.append(_fall(problem, runner, settings, sol, prices, _runnerquote_of(runner, (gpu, own), sol, after, alts)))
    return out


def _runnerquote_of(
    runner: tuple[str, str], chosen: tuple[str, str], sol: Solution, after: Solution | None, alts: dict
) -> Quote | None:
    """The offer a rented runner-up rents on: the plan's own (another GPU it rents beside its choice),
    else the plan's after the rise (for another offer of the chosen GPU, the one that took over), else
    its forced plan's."""
    if runner[1] != "rent":
        return None
    if runner != chosen and (got := quote_of(rented_offer(sol, runner[0]))):
        return got
    forced = alts.get(runner[0], {}).get("forced_rental") or {}
    return quote_of(rented_offer(after, runner[0])) or (
        (forced["provider"], forced["usd_per_gpu_hour"]) if forced.get("provider") else None
    )


def _label(gpu: str, own: str, quote: Quote | None) -> str:
    return f"{gpu} ({OWN[own]}" + (f" from {quote[0]})" if quote else ")")


def _bracket(
    run: Callable[[float], Solution], chosen: Callable[[Solution], bool]
) -> tuple[float, float, Solution | None]:
    """(lo, hi, the plan at hi): the price factor doubled until the choice changes (up to CAP), then
    bisected to within RISE_SPAN; no plan when it holds at CAP."""
    lo, hi = 1.0, 2.0
    while True:
        s = run(hi)
        if not chosen(s):
            break
        if hi >= CAP:
            return lo, hi, None
        lo, hi = hi, min(hi * 2, CAP)
    return _narrow(run, chosen, lo, hi, s)


def _narrow(
    run: Callable[[float], Solution], chosen: Callable[[Solution], bool], lo: float, hi: float, flipped: Solution
) -> tuple[float, float, Solution]:
    """(lo, hi, the plan at hi): [lo, hi] (chosen at lo, not at hi, whose plan is `flipped`) bisected to
    within RISE_SPAN."""
    while hi / lo > RISE_SPAN * (1 + 1e-12):
        mid = (lo * hi) ** 0.5
        s = run(mid)
        lo, hi, flipped = (mid, hi, flipped) if chosen(s) else (lo, mid, s)
    return lo, hi, flipped


def _rise(
    problem: Problem,
    pair: tuple[str, str],
    settings: SolveSettings,
    prices: Prices | None,
    sol: Solution,
    quote: Quote | None = None,
) -> tuple[dict[str, Any], tuple[str, str] | None, Solution | None]:
    """(the rise entry, the pair that wins after it, if any, and the plan then), bisected by _bracket and
    checked on both sides. Each re-solve starts from the plan `sol`; `quote`: the offer a rented pair
    rents on, whose rate alone rises (the price's, base_price)."""
    gpu, own = pair
    provider = quote[0] if quote else None

    def run(f: float) -> Solution:
        return solve(problem, priced(problem, gpu, own, f, prices, provider), settings, start=sol)

    def chosen(s: Solution) -> bool:
        return uses(s, gpu, own, provider)

    what = PRICE[own] if prices is None else f"expected {PRICE[own]}"
    price = base_price(problem, gpu, own, prices, quote)
    label = _label(gpu, own, quote)
    base = {"gpu": gpu, "ownership": own, "direction": "rise", "what": what}
    if provider is not None:
        base["provider"] = provider
    lo, top, flipped = _bracket(run, chosen)
    if quote and flipped is not None and prices is None and hidden_behind(problem, gpu, quote[0], quote[1] * top):
        # an offer its candidates hide could win first: the same search on rebuilt problems, within [1, top]

        def run(f: float) -> Solution:
            return solve_repriced(problem, gpu, quote[0], f, settings)

        lo, top, flipped = _narrow(run, chosen, 1.0, top, run(top))
    if flipped is None:
        message = (
            f"{label} stays the choice even at {CAP:g}x its {what} (re-solved at {CAP:g}x): no allowed alternative "
            f"-- {_alternatives(problem, own)} -- meets the constraints for less"
        )
        return {**base, "factor": None, "price": None, "verified": True, "message": message}, None, None
    # the claim is the factor x = hi / (1 + STEP) rounded up to the printed 3 decimals: its check
    # at x(1 + STEP) lies at or above the solve at hi (not chosen; a higher price of the chosen
    # offer cannot bring it back), the one at x(1 - STEP) is re-solved at exactly that point
    after, hi = flipped, math.ceil(top / (1 + STEP) * 1000) / 1000
    ok = chosen(run(hi * (1 - STEP))) and not chosen(after)
    runner = main_choice(problem, after) if after.feasible else None
    if quote and (moved := rented_offer(after, gpu)) is not None and moved.provider != quote[0]:
        runner = (gpu, "rent")  # another offer of the same GPU took over: it is what the rise hands the work to
    then = _then_words(runner, after)
    entry: dict[str, Any] = {**base, "verified": ok, "then": _then(runner, after)}
    if not ok:
        entry.update(
            factor=None,
            price=None,
            message=f"{label} stops being the choice somewhere between {lo:.3g}x and {top:.3g}x its "
            f"{what}, but not at a single price (re-solves disagree); no break-even is stated",
        )
        return entry, runner, after
    entry.update(
        factor=hi,
        price=round(price * hi, 2) if price else None,
        message=f"{label} stays the choice until its {what} rises about {100 * (hi - 1):.1f}%"
        + (f" (to ${price * hi:,.2f})" if price else "")
        + (f"; then {then} is cheaper" if runner else f"; then {then}"),
    )
    return entry, runner, after


def _then(runner: tuple[str, str] | None, after: Solution) -> dict[str, Any] | None:
    """What wins after a rise: the pair, and the offer it rents on (its provider and rate) when rented."""
    if runner is None:
        return None
    out: dict[str, Any] = {"gpu": runner[0], "ownership": runner[1]}
    quote = quote_of(rented_offer(after, runner[0])) if runner[1] == "rent" else None
    if quote:
        out.update(provider=quote[0], usd_per_gpu_hour=quote[1])
    return out


def _then_words(runner: tuple[str, str] | None, after: Solution) -> str:
    then = _then(runner, after)
    if then is None:
        return "no plan meets every constraint (the budget)"
    words = _pair_words(runner)
    return words + (f" from {then['provider']} at ${then['usd_per_gpu_hour']:,.2f}" if "provider" in then else "")


def _cheapest_forced(alts: dict) -> tuple[str, str] | None:
    """The runner-up when the rise found none: the alternative GPU cheapest when forced, with its
    ownership (buy unless it was rented)."""
    costed = {g: a for g, a in alts.items() if a.get("forced_cost_usd") is not None}
    if not costed:
        return None
    g = min(sorted(costed), key=lambda k: costed[k]["forced_cost_usd"])
    o = costed[g].get("forced_ownership", "buy")
    return g, o if o in ("buy", "rent") else "buy"


def _pair_words(pair: tuple[str, str] | None) -> str:
    return f"{VERB[pair[1]]} {pair[0]}" if pair else "no plan"


def _fall(
    problem: Problem,
    pair: tuple[str, str],
    settings: SolveSettings,
    sol: Solution,
    prices: Prices | None = None,
    quote: Quote | None = None,
) -> dict:
    """How far the runner-up pair's own price must fall for it to be chosen (bisection on [0, 1]);
    at its current price (factor 1) the plan's own solve `sol` answers; `quote`: the offer a rented
    runner-up rents on, whose rate alone falls (base_price)."""
    gpu, own = pair
    what = PRICE[own] if prices is None else f"expected {PRICE[own]}"
    provider = quote[0] if quote else None
    price = base_price(problem, gpu, own, prices, quote)

    hidden = provider is not None and prices is None and not offered(problem, gpu, provider)

    def wins(f: float) -> bool:
        if f == 1.0:
            return uses(sol, gpu, own, provider)
        if hidden and provider is not None:  # an offer the candidates hide behind a cheaper one: rebuilt
            return uses(solve_repriced(problem, gpu, provider, f, settings), gpu, own, provider)
        s = solve(problem, priced(problem, gpu, own, f, prices, provider), settings, start=sol)
        return uses(s, gpu, own, provider)

    words = _pair_words(pair) + (f" from {provider}" if provider else "")
    base = {"gpu": gpu, "ownership": own, "direction": "fall", "what": what}
    if provider is not None:
        base["provider"] = provider
    if not wins(0.0):
        return {
            **base,
            "factor": None,
            "price": None,
            "verified": True,
            "message": f"{words} (runner-up) would not be chosen even if its {what} were zero (re-solved): "
            "the other costs of its plan (servers, energy, hosting, or the deadline) stay higher",
        }
    if wins(1.0):  # the plan already uses the pair beside its main choice: no fall needed to bring it in
        return {
            **base,
            "factor": 1.0,
            "price": price,
            "verified": True,
            "message": f"{words} (runner-up) is already part of the chosen plan at its current {what}",
        }
    lo, hi = 0.0, 1.0
    while hi - lo > RESOLUTION:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if wins(mid) else (lo, mid)
    ok = wins(lo * (1 - STEP)) and not wins(min(1.0, lo * (1 + STEP) + 1e-9))
    if not ok:
        return {
            **base,
            "factor": None,
            "price": None,
            "verified": False,
            "message": f"{words} (runner-up) becomes the choice somewhere below {hi:.3g}x its {what}, but not "
            "at a single price (re-solves disagree); no break-even is stated",
        }
    return {
        **base,
        "factor": round(lo, 3),
        "price": round(price * lo, 2) if price else None,
        "verified": True,
        "message": f"{words} (runner-up) becomes the choice if its {what} falls about {100 * (1 - lo):.1f}%"
        + (f" (to ${price * lo:,.2f})" if price else ""),
    }


def marginal_values(
    problem: Problem,
    sol: Solution,
    settings: SolveSettings,
    prices: Prices | None = None,
    rebuild: Rebuild | None = None,
) -> list[Marginal]:
    """What each family's small relaxation saves (one more day on every deadline, 10% more budget, a
    month more of a horizon that comes before a deadline: on the problem `rebuild` makes over it),
    re-solved (at `prices` when given), with the same binding flag as the constraint table (present/
    words them)."""
    if not sol.feasible:
        return []
    table = slacks(problem, sol)

    def run(p: Problem, sc: Scenario) -> Solution:
        return solve(p, prices.on(sc) if prices is not None else sc, settings)

    return [m for family in FAMILIES if (m := family.marginal(problem, sol, run, table, rebuild)) is not None]
