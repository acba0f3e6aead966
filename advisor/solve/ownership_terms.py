"""What owning a solved plan's GPUs means over time, as a finance reader checks it: the break-even
months of owning against renting (from the MILP's own coefficients), the depreciation schedule, the
share of the horizon the owned GPUs run, and when each is resold. Computed from the catalog and the
solution (the break-even's rental: solve/rent_basis.py); nothing is re-solved here."""

from __future__ import annotations

from collections.abc import Callable

from advisor.data.catalog_prices import RentalOffer
from advisor.economics.ownership import (
    Residual,
    break_even_months,
    depreciation_schedule,
    purchase_age_years,
    residual,
)
from advisor.economics.rental import order_fit
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.constraints.at_once import class_done_hours
from advisor.solve.constraints.base import past
from advisor.solve.constraints.capacity import serving_hours
from advisor.solve.holding import Holding
from advisor.solve.model import Model
from advisor.solve.problem import Problem
from advisor.solve.rent_basis import RentedInstead, rent_basis
from advisor.solve.scenario import baseline
from advisor.solve.server_terms import server_extra
from advisor.solve.solution import Solution


def break_even(
    problem: Problem, sol: Solution, instead: RentedInstead | None, renting: Callable[[], Problem]
) -> list[dict]:
    """For each GPU type the plan buys: the months of continuous use after which owning its fleet
    (GPUs, servers and network with their tax and burn-in; less the resale value; plus hosting,
    support and energy at full power) costs no more, in present value, than renting as many GPUs on
    an offer that can carry the fleet's jobs (solve/rent_basis.py: the 'Renting instead' re-solve's
    `instead`, else the cheapest such offer in `renting`'s problem); and the same without resale,
    since resale at the curve's value after a few months is what a buyer can least count on. With no
    such offer, no months and a message saying why."""
    out, costs = [], problem.costs
    m = Model(problem, baseline(problem), [], [])  # coefficients only, no rows
    for g, n in sorted(sol.bought.items()):
        gpu = problem.catalog.gpus[g]
        basis = rent_basis(problem, sol, g, instead, renting)
        offer = basis.offer
        if offer is None:
            out.append(_no_rental(g, n, gpu.name, basis.why))
            continue
        opts = {s.id: s for s in problem.servers.get(g, [])}
        servers = sol.servers.get(g, {})
        # the MILP's own coefficients (solve/model.py): the GPUs, servers and network with their tax and burn-in
        upfront = m.buy_cost(g) * n + sum(m.server_cost(g, opts[sid]) * k for sid, k in servers.items())
        if sol.networked.get(g):
            upfront += m.network_usd(g, sol.networked[g] * m.per_server(g)) or 0.0
        kw = problem.gpu_kw[g] * n + sum(opts[sid].overhead_kw * k for sid, k in servers.items())
        monthly_own = (  # hosting, energy and rent with a VAT the buyer cannot reclaim (support: in m.support)
            kw
            * (costs.hosting_usd_per_kw_month + HOURS_PER_MONTH * costs.pue * costs.electricity_usd_per_kwh)
            * costs.services_taxed
            + m.support(g) * n
        )
        extra = [(e, k) for sid, k in servers.items() if (e := server_extra(problem, g, opts[sid])) is not None]
        upfront += sum(e.burn_in_usd * k for e, k in extra)  # each server, whole: its burn-in and support
        monthly_own += sum(e.support_usd_month * k for e, k in extra)
        monthly_rent = n * HOURS_PER_MONTH * offer.usd_per_gpu_hour * costs.services_taxed
        price = problem.unit_price[g] * n
        age = purchase_age_years(gpu, problem.as_of)
        resale = residual(problem.catalog, g, 1.0, age)
        months = break_even_months(
            upfront,
            lambda y, g=g, price=price, age=age: price * residual(problem.catalog, g, y, age).fraction,
            monthly_own,
            monthly_rent,
            costs.discount_rate,
        )
        kept = break_even_months(upfront, lambda y: 0.0, monthly_own, monthly_rent, costs.discount_rate)
        largest = max(
            [c.count for c in sol.chosen if c.gpu == g] + [s.gpus for s, _ in sol.serving if s.gpu == g] or [n]
        )
        msg = _message(n, gpu.name, months, kept, resale, offer, basis.why, largest)
        out.append(
            {
                "gpu": g,
                "count": n,
                "months": months,
                "months_without_resale": kept,
                "rent_usd_per_gpu_hour": offer.usd_per_gpu_hour,
                "rent_provider": offer.provider,
                "rent_kind": offer.pricing,
                "message": msg,
            }
        )
    return out


def _message(
    n: int,
    name: str,
    months: float | None,
    kept: float | None,
    resale: Residual,
    offer: RentalOffer,
    why: str,
    largest: int,
) -> str:
    """The break-even in words, ending with the offer rented against and why that one (and a quote
    needed when its largest job or replica (`largest` GPUs, one order) or the fleet held at once is
    more than the offer's rate is evidenced at)."""
    order = order_fit(offer, largest)  # its largest job or replica as one order,
    if order.within:  # then the fleet held at once from one provider
        order = order_fit(offer, n, one_order=False)
    grade = "low" if order.quote_needed else offer.confidence  # above what its rate is evidenced at
    rate = (
        f"${offer.usd_per_gpu_hour:g}/GPU-hour {offer.pricing.replace('_', ' ')} ({offer.provider}, "
        f"{grade} confidence): {why}{f'; {order.message}' if order.quote_needed else ''}"
    )
    if months is None:
        return f"renting {n} {name} stays cheaper than buying for 10 years, at {rate}"
    if resale.curve is None:
        return (
            f"buying {n} {name} pays for itself after {months:.1f} months of continuous use "
            f"(no resale value assumed) against renting at {rate}"
        )
    kept_text = f"{kept:.1f} months" if kept is not None else "not within 10 years"
    return (
        f"buying {n} {name} pays for itself after {months:.1f} months of continuous use if resold "
        f"at the {resale.curve} residual-value curve ({resale.confidence} confidence), {kept_text} "
        f"if never resold, against renting at {rate}"
    )


def _no_rental(g: str, n: int, name: str, why: str) -> dict:
    """A bought type with no rental that can run its jobs: no break-even, and why."""
    return {
        "gpu": g,
        "count": n,
        "months": None,
        "months_without_resale": None,
        "rent_usd_per_gpu_hour": None,
        "rent_provider": None,
        "rent_kind": None,
        "message": f"no break-even against renting {n} {name}: {why}",
    }


def depreciation(problem: Problem, sol: Solution) -> list[dict]:
    """Straight-line depreciation of what is bought (GPUs and servers) over the useful life."""
    amount = sum(problem.unit_price[g] * n for g, n in sol.bought.items())
    for g, servers in sol.servers.items():
        opts = {s.id: s for s in problem.servers.get(g, [])}
        amount += sum(opts[sid].price_usd * n for sid, n in servers.items())
    if not amount:
        return []
    return depreciation_schedule(amount, problem.costs.useful_life_years, problem.costs.horizon_years)


def utilization(problem: Problem, sol: Solution) -> float | None:
    """The share of the horizon owned GPUs run: the workload's figure, else the planned jobs' GPU-hours
    and the owned serving GPUs' hours serving (from their arrival, their lent off-peak hours left to the
    jobs) over the bought GPUs' hours in the horizon."""
    if problem.costs.utilization is not None:
        return problem.costs.utilization
    owned = sum(sol.bought.values())
    if not owned:
        return None
    horizon, sc = problem.costs.horizon_hours, baseline(problem)
    used = sum(c.gpu_hours * n for c, n in sol.assignment if c.ownership == "buy")
    used += sum(
        c.gpus * n * serving_hours(problem, sc, c.gpu, horizon, c.cls) for c, n in sol.serving if c.ownership == "buy"
    )
    return min(1.0, used / (owned * horizon))


def disposal(problem: Problem, sol: Solution) -> list[dict]:
    """For each GPU type bought: whether it is resold when its planned work ends or held to the
    horizon (the MILP chose the cheaper, solve/holding.py), the month, and the resale then."""
    out = []
    horizon = problem.costs.horizon_hours
    done = work_done_hours(problem, sol)
    for g, held in sorted(sol.held.items()):
        price = problem.unit_price[g] or 0.0
        for level, count in sorted(held.items()):
            h = problem.holdings[g][level]
            at_horizon = h.hours >= horizon * (1 - 1e-9)
            resale = h.resale_usd(price) * count
            name = problem.catalog.gpus[g].name
            when = (
                f"held to the end of the {h.months:g}-month horizon, then resold"
                if at_horizon
                else f"resold after {_months(h.months)}, {_after_work(problem.holdings[g], h.hours, done.get(g), count)}"
            )
            out.append(
                {
                    "gpu": g,
                    "when": "horizon" if at_horizon else "after_work",
                    "month": h.months,
                    "count": count,
                    "resale_usd": resale,
                    "message": f"{count} {name} {when}, for about ${resale:,.0f} ({100 * h.resale_fraction:.0f}% "
                    "of the price: the generation's used-market value at that age)",
                }
            )
    return out


def work_done_hours(problem: Problem, sol: Solution) -> dict[str, float]:
    """Per bought GPU type, when its planned work is done (hours from today, at the workload's
    confidence): its training jobs' finish, as the deadline and horizon checks count it, and the
    end of the serving it does."""
    done = class_done_hours(problem, sol)
    out: dict[str, float] = {}
    for c, _ in sol.assignment:
        if c.ownership == "buy":
            out[c.gpu] = max(out.get(c.gpu, 0.0), done[c.cls])
    for c, _ in sol.serving:
        if c.ownership == "buy":
            out[c.gpu] = max(out.get(c.gpu, 0.0), problem.serve_classes[c.cls].hours)
    return out


def _after_work(levels: list[Holding], sold: float, done: float | None, count: int) -> str:
    """Why `count` GPUs sold `sold` hours from today were held that long, their work done at `done`."""
    their, them = ("its", "it") if count == 1 else ("their", "them")
    if done is None or not past(sold, done):
        return (
            f"when {their} planned work is done (holding {them} longer would cost more in hosting than it keeps in "
            "resale value)"
        )
    when = f"{_span(sold - done)} after {their} planned work is done at month {done / HOURS_PER_MONTH:.2f}"
    between = [h.months for h in levels if past(h.hours, done) and h.hours < sold * (1 - 1e-9)]
    if between:
        return f"{when} (a period at month {between[0]:.2f} was offered; the solver stopped within its gap)"
    return f"{when} (no holding period ends sooner after it: docs/model.md §2.2)"


def _span(hours: float) -> str:
    """A time past the work, in the unit a reader takes in: hours, days or months."""
    if hours < 48:
        return f"{hours:.0f} hours"
    return f"{hours / 24:.0f} days" if hours < HOURS_PER_MONTH else _months(hours / HOURS_PER_MONTH)


def _months(months: float) -> str:
    text = f"{months:g}" if months == round(months) else f"{months:.1f}"
    return f"{text} month{'' if text == '1' else 's'}"
