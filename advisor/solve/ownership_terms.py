"""What owning a solved plan's GPUs means over time, as a finance reader checks it: the break-even
months of owning against renting (from the MILP's own coefficients), the depreciation schedule, the
share of the horizon the owned GPUs run, and when each is resold. Computed from the catalog and the
solution; nothing is re-solved."""

from __future__ import annotations

from advisor.economics.ownership import (
    break_even_months,
    depreciation_schedule,
    purchase_age_years,
    residual,
)
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.constraints.at_once import class_done_hours
from advisor.solve.holding import Holding
from advisor.solve.model import Model
from advisor.solve.problem import Problem
from advisor.solve.scenario import baseline
from advisor.solve.solution import Solution


def break_even(problem: Problem, sol: Solution) -> list[dict]:
    """For each GPU type the plan buys: the months of continuous use after which owning its fleet
    (GPUs, servers and network with their tax and burn-in; less the resale value; plus hosting,
    support and energy at full power) costs no more, in present value, than renting as many GPUs on
    demand at the cheapest sourced rate; and the same without resale, since resale at the curve's
    value after a few months is what a buyer can least count on."""
    out, costs = [], problem.costs
    m = Model(problem, baseline(problem), [], [])  # coefficients only, no rows
    for g, n in sorted(sol.bought.items()):
        gpu = problem.catalog.gpus[g]
        offer = gpu.rental
        if offer is None:
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
        rate = f"${offer.usd_per_gpu_hour:g}/GPU-hour on demand ({offer.provider}, {offer.confidence} confidence)"
        if months is None:
            msg = f"renting {n} {gpu.name} at {rate} stays cheaper than buying for 10 years"
        elif resale.curve is None:
            msg = (
                f"buying {n} {gpu.name} pays for itself after {months:.1f} months of continuous use "
                f"(no resale value assumed) against renting at {rate}"
            )
        else:
            kept_text = f"{kept:.1f} months" if kept is not None else "not within 10 years"
            msg = (
                f"buying {n} {gpu.name} pays for itself after {months:.1f} months of continuous use if resold "
                f"at the {resale.curve} residual-value curve ({resale.confidence} confidence), {kept_text} "
                f"if never resold, against renting at {rate}"
            )
        out.append(
            {
                "gpu": g,
                "count": n,
                "months": months,
                "months_without_resale": kept,
                "rent_usd_per_gpu_hour": offer.usd_per_gpu_hour,
                "message": msg,
            }
        )
    return out


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
    over the bought GPUs' hours in the horizon."""
    if problem.costs.utilization is not None:
        return problem.costs.utilization
    owned = sum(sol.bought.values())
    if not owned:
        return None
    used = sum(c.gpu_hours * n for c, n in sol.assignment if c.ownership == "buy")
    return min(1.0, used / (owned * problem.costs.horizon_hours))


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
                else f"resold after {_months(h.months)}, {_after_work(problem.holdings[g], h.hours, done.get(g))}"
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


def _after_work(levels: list[Holding], sold: float, done: float | None) -> str:
    """Why GPUs sold `sold` hours from today were held that long, their work done at `done`."""
    if done is None or sold <= done * (1 + 1e-6) + 1e-6:
        return (
            "when their planned work is done (holding them longer would cost more in hosting than it keeps in "
            "resale value)"
        )
    past = f"{_span(sold - done)} after their planned work is done at month {done / HOURS_PER_MONTH:.2f}"
    between = [h.months for h in levels if done * (1 + 1e-6) + 1e-6 < h.hours < sold * (1 - 1e-9)]
    if between:
        return f"{past} (a period at month {between[0]:.2f} was offered; the solver stopped within its gap)"
    return f"{past} (no holding period ends sooner after it: docs/model.md §2.2)"


def _span(hours: float) -> str:
    """A time past the work, in the unit a reader takes in: hours, days or months."""
    if hours < 48:
        return f"{hours:.0f} hours"
    return f"{hours / 24:.0f} days" if hours < HOURS_PER_MONTH else _months(hours / HOURS_PER_MONTH)


def _months(months: float) -> str:
    text = f"{months:g}" if months == round(months) else f"{months:.1f}"
    return f"{text} month{'' if text == '1' else 's'}"
