"""A rented offer's rate moved alone, as a provider's new quote would move it (a rented plan's price
break-even, explain/sensitivity.py). Within one rental kind and provider tier a candidate runs each GPU
count on the cheapest offer that fits (solve/rental_offers.grouped), so the offers of its group priced
above it have no columns in the problem: `Scenario.offer_factor` re-prices the offer's own columns, and
where such an offer could take over below the rate a break-even found, the problem is rebuilt with the
offer re-priced in the catalog, as a `--catalog` override of it would."""

from __future__ import annotations

from advisor.data.catalog_prices import RentalOffer
from advisor.perf import params_from
from advisor.solve.candidates import build_problem
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.rental_offers import rent_offers
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

Quote = tuple[str, float]  # (provider, USD per GPU-hour): the one rental offer a break-even prices alone


def quote_of(offer: RentalOffer | None) -> Quote | None:
    return (offer.provider, offer.usd_per_gpu_hour) if offer is not None else None


def rented_offer(sol: Solution | None, gpu: str) -> RentalOffer | None:
    """The offer `sol` rents most of `gpu` on: the one a break-even prices alone, None when it rents none."""
    offers = sol.rented_offers(gpu) if sol is not None and sol.feasible else []
    return offers[0] if offers else None


def hidden_behind(problem: Problem, gpu: str, provider: str, below: float) -> list[RentalOffer]:
    """The offers of `gpu` in `provider`'s offer's kind and tier priced at or above it and under `below`
    (USD per GPU-hour): those its candidates hide that could win once its rate passed theirs."""
    offers = problem.catalog.gpus[gpu].prices.rent
    mine = next((o for o in offers if o.provider == provider), None)
    if mine is None:
        return []
    return [
        o
        for o in offers
        if o.provider != provider
        and (o.pricing, o.tier) == (mine.pricing, mine.tier)
        and mine.usd_per_gpu_hour <= o.usd_per_gpu_hour < below
    ]


def offered(problem: Problem, gpu: str, provider: str) -> bool:
    """Does some candidate (a job's or a replica's) of the problem rent `gpu` on `provider`'s offer?"""
    return (gpu, provider) in rent_offers(problem)


def repriced(problem: Problem, gpu: str, provider: str, factor: float) -> Problem:
    """The problem rebuilt with `provider`'s offer of `gpu` at `factor` x its rate (every other offer as
    the catalog has it): its candidates take whichever offer of the group is then the cheapest."""
    cat = problem.catalog
    g = cat.gpus[gpu]
    rent = [
        o.model_copy(update={"usd_per_gpu_hour": o.usd_per_gpu_hour * factor}) if o.provider == provider else o
        for o in g.prices.rent
    ]
    moved = g.model_copy(update={"prices": g.prices.model_copy(update={"rent": rent})})
    catalog = cat.model_copy(update={"gpus": {**cat.gpus, gpu: moved}})
    return build_problem(problem.workload, catalog, problem.rules, params_from(catalog), problem.as_of)


def solve_repriced(problem: Problem, gpu: str, provider: str, factor: float, settings: SolveSettings) -> Solution:
    """The plan of the problem rebuilt with that one offer's rate at `factor` (repriced): a break-even
    on an offer the problem's candidates hide behind a cheaper one of its group."""
    again = repriced(problem, gpu, provider, factor)
    return solve(again, baseline(again), settings)
