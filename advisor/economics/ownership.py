"""Owning hardware over a horizon: what a bought GPU is worth when the horizon ends (the residual-value
curve of its generation), what money later is worth now (the discount rate), a straight-line
depreciation schedule for the memo, and the months of use at which buying beats renting.

Buying costs the price now less the discounted resale value at the end of the horizon; streams
paid while the hardware runs (energy, hosting, rent) are discounted as paid evenly over their
duration. Without these, buying looks worse than it is (issue 14)."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

from advisor.data.catalog import GPU, Catalog
from advisor.data.catalog_figures import parse_as_of
from advisor.data.economics import ResidualCurve
from advisor.errors import InputError
from advisor.inputs.workload import Workload


@dataclass(frozen=True)
class Finance:
    """How money is valued in one plan: the discount rate and where it came from, the share of the
    horizon owned GPUs run (None: the planned jobs' own hours), and the useful life for depreciation."""

    discount_rate: float
    discount_source: str  # "workload" or the catalog figure's source ids
    utilization: float | None
    useful_life_years: float
    useful_life_source: tuple


def finance_for(workload: Workload, catalog: Catalog) -> Finance:
    """The workload's `finance.discount_rate` or the catalog's sourced default cost of capital;
    `finance.utilization` or `deployment.utilization` (they must agree when both are given)."""
    econ = catalog.economics
    f, d = workload.finance, workload.deployment
    if f.discount_rate is not None:
        rate, src = f.discount_rate, "workload: finance.discount_rate"
    elif econ is not None:
        fig = econ.cost_of_capital["default"]
        rate, src = (
            float(fig.value or 0.0),
            "catalog: economics.cost_of_capital.default (" + ", ".join(fig.source) + ")",
        )
    else:
        rate, src = 0.0, "none: the catalog has no economics section"
    if f.utilization is not None and d.utilization is not None and f.utilization != d.utilization:
        raise InputError(
            f"finance.utilization ({f.utilization:g}) and deployment.utilization ({d.utilization:g}) "
            "disagree; give the share of the horizon owned GPUs run once (a fraction, 0 < u <= 1)",
            field="finance.utilization",
        )
    util = f.utilization if f.utilization is not None else d.utilization
    life = econ.useful_life_years if econ is not None else None
    years = life.value if life is not None and life.value is not None else 5.0
    return Finance(rate, src, util, float(years), tuple(life.source) if life else ())


def discount(years: float, rate: float) -> float:
    """Present value of $1 paid `years` from now."""
    return (1.0 + rate) ** -max(years, 0.0)


def stream_factor(years: float, rate: float) -> float:
    """Present value of $1 paid evenly over the next `years` (continuous flow at the equivalent
    force of interest ln(1 + rate)); 1 for an instant or a zero rate."""
    delta = math.log1p(rate)
    x = delta * max(years, 0.0)
    return 1.0 if x < 1e-12 else (1.0 - math.exp(-x)) / x


@dataclass(frozen=True)
class Residual:
    """What a bought GPU returns when sold `years` after purchase, as a fraction of what was paid
    for it (the seller's take: the used-market price less the dealer's spread), and what it rests on."""

    fraction: float
    curve: str | None  # the generation's key in economics.residual_value (None: no curve)
    confidence: str
    source: tuple[str, ...]
    note: str
    market_fraction: float = 0.0  # the used-market price at sale / the price paid, before the spread
    discount: float = 0.0  # the dealer's spread (economics.used_market_discount)


def resale_curve(catalog: Catalog, gpu_id: str) -> tuple[str, ResidualCurve, ResidualCurve] | None:
    """(generation, its curve, the curve whose points it uses: its own or the one it borrows)."""
    econ = catalog.economics
    curves = econ.residual_value if econ else {}
    for name, curve in sorted(curves.items()):
        if gpu_id in curve.gpus:
            points = curve
            while points.like is not None:
                points = curves[points.like]
            return name, curve, points
    return None


def market_fraction(curve: ResidualCurve, age_years: float) -> float:
    """The used-market price at `age_years` as a fraction of the new price: log-linear between the
    curve's points (a band at its low end), the last segment's rate continued past the last."""
    pts = [(p.years, max(p.conservative or 0.0, 1e-9)) for p in curve.points]
    if age_years <= 0 or len(pts) == 1:
        return pts[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(pts):
        if age_years <= x1:
            return y0 * (y1 / y0) ** ((age_years - x0) / (x1 - x0))
    (x0, y0), (x1, y1) = pts[-2], pts[-1]
    return y1 * (y1 / y0) ** ((age_years - x1) / (x1 - x0))


def residual(catalog: Catalog, gpu_id: str, years: float, age_years: float = 0.0) -> Residual:
    """What a GPU bought (new, or used at `age_years`) returns when sold `years` later, at any month
    (years = months / 12). The seller's take is the used-market price less the dealer's spread:
    bought new, m(years) x (1 - d); bought used at age a (paying the market's m(a)),
    m(a + years) / m(a) x (1 - d). m starts below 1 (a new part resold is a used part) and falls
    with age. A GPU of no listed generation has no resale value, said so."""
    found = resale_curve(catalog, gpu_id)
    econ = catalog.economics
    if found is None or econ is None:
        return Residual(
            0.0,
            None,
            "low",
            ("assumption",),
            f"no residual-value curve for {gpu_id} in catalog/economics.yaml: no resale value assumed",
        )
    name, curve, points = found
    spread = econ.used_market_discount
    d = float(spread.value or 0.0)
    m = market_fraction(points, age_years + years)
    if age_years > 0:  # the price paid, used: the market's at its age (at thousands of years, 0.0: nothing back)
        paid = market_fraction(points, age_years)
        m = m / paid if paid > 0 else 0.0
    banded = any(p.fraction is None for p in points.points)
    note = (
        f"{name} residual-value curve at {years * 12:.1f} months"
        + (f" after buying it used at {age_years:.1f} years old" if age_years > 0 else "")
        + (f" (borrowed from {points_name(catalog, points)})" if curve.like else "")
        + (" (a band: its low end is used)" if banded else "")
        + f": used-market price {m:.0%} of the price paid, less the dealer's {d:.0%} spread"
    )
    confidence = "low" if "low" in (curve.confidence, spread.confidence) else curve.confidence
    source = tuple(dict.fromkeys([*curve.source, *points.source, *spread.source]))
    return Residual(max(0.0, m * (1.0 - d)), name, confidence, source, note, m, d)


def points_name(catalog: Catalog, points: ResidualCurve) -> str:
    econ = catalog.economics
    return next((n for n, c in sorted((econ.residual_value if econ else {}).items()) if c is points), "?")


def purchase_age_years(gpu: GPU, day: dt.date) -> float:
    """How old a part bought used (or refurbished) is on `day`, from its launch (or its earliest new
    price record); 0 when bought new."""
    p, launch = gpu.prices.purchase, parse_as_of(gpu.launch.value)
    if launch is None:  # launch not verified: the earliest new price record stands in for it (an override's too)
        launch = min(
            (d for q in gpu.prices.other_purchases if q.condition == "new" and (d := parse_as_of(q.as_of)) is not None),
            default=parse_as_of(gpu.prices.first_new_as_of),
        )
    if p is None or p.condition == "new" or launch is None:
        return 0.0
    return max(0.0, (day - launch).days / 365.25)


def depreciation_schedule(amount: float, life_years: float, horizon_years: float) -> list[dict]:
    """Straight-line over the useful life, year by year up to the horizon (the last year may be part
    of one): [{year, depreciation_usd, book_value_usd}]."""
    out, book, year = [], amount, 0
    per_year = amount / life_years if life_years > 0 else amount
    while year < math.ceil(horizon_years - 1e-9) and book > 1e-9:
        share = min(1.0, horizon_years - year)
        dep = min(book, per_year * share)
        book -= dep
        year += 1
        out.append({"year": year, "depreciation_usd": dep, "book_value_usd": book})
    return out


def break_even_months(
    upfront_usd: float,
    resale_usd_at: Callable[..., float],
    monthly_owned_usd: float,
    monthly_rent_usd: float,
    rate: float,
    max_months: float = 120.0,
) -> float | None:
    """The months of use after which owning costs no more (in present value) than renting the same
    GPUs: upfront - PV(resale at m) + PV(owned running costs for m) = PV(rent for m). Owning's curve
    minus renting's falls as m grows once the rent outruns the running costs, so the first crossing
    is found on a 0.01-month grid refined by bisection; None when renting stays cheaper up to max_months."""

    def gap(m: float) -> float:
        years = m / 12.0
        own = (
            upfront_usd
            - resale_usd_at(years) * discount(years, rate)
            + monthly_owned_usd * m * stream_factor(years, rate)
        )
        return own - monthly_rent_usd * m * stream_factor(years, rate)

    lo, step = 0.0, 0.25
    m = step
    while m <= max_months + 1e-9:
        if gap(m) <= 0:
            hi = m
            for _ in range(60):
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if gap(mid) <= 0 else (mid, hi)
            return hi
        lo, m = m, m + step
    return None
