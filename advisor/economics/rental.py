"""Renting by kind: on-demand, 1- and 3-year reservations, spot and capacity blocks, each priced from
its own catalog offer with its minimum block (whole nodes), its billing granularity and its terms.

* a reservation commits for its term: a job shorter than a year still pays a year per GPU;
* a capacity block is paid up front, in whole days (billing_hours), for at most the published
  number of instances per block;
* spot adds the work an interruption destroys: with interruptions arriving at rate lambda per node
  and k nodes, each costs the work since the last checkpoint (half the interval on average) plus a
  restart, so the job takes hours / (1 - k lambda (c/2 + R)) (docs/model.md, "Renting").
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from advisor.data.catalog import GPU
from advisor.data.catalog_prices import RentalOffer
from advisor.data.economics import Economics
from advisor.economics.ownership import HOURS_PER_YEAR, stream_factor

TERM_HOURS = {"reserved_1y": HOURS_PER_YEAR, "reserved_3y": 3 * HOURS_PER_YEAR}
MAX_SPOT_OVERHEAD = 0.5     # beyond this share of lost work a spot run is not a plan


@dataclass(frozen=True)
class Interruptions:
    """Per-node interruption rate of a spot offer, and what it rests on."""

    per_node_hour: float
    confidence: str
    source: tuple
    note: str


@dataclass(frozen=True)
class RentOption:
    """The cheapest dated offer of one rental kind for one GPU."""

    kind: str
    offer: RentalOffer
    interruptions: Interruptions | None = None

    @property
    def rate(self) -> float:
        return self.offer.usd_per_gpu_hour

    @property
    def node_gpus(self) -> int:
        return self.offer.gpus_per_node or 1

    def billed_gpus(self, count: int) -> int:
        """Whole nodes, at least the offer's minimum block."""
        return max(self.offer.min_gpus, math.ceil(count / self.node_gpus) * self.node_gpus)


@dataclass(frozen=True)
class RentCost:
    """What renting `count` GPUs for one job costs: nominal and present value, what is billed, and
    the wall time (longer than the job's own hours on spot)."""

    nominal_usd: float
    pv_usd: float
    billed_gpus: int
    billed_hours: float
    wall_hours: float
    overhead: float               # spot: share of the wall time lost to interruptions
    notes: tuple = ()


def rent_options(gpu: GPU, kinds: Sequence[str], econ: Economics | None) -> list[RentOption]:
    """One option per allowed kind that has a dated offer (the cheapest of that kind)."""
    out = []
    for kind in kinds:
        offers = gpu.rentals(kind)
        if not offers:
            continue
        offer = offers[0]
        out.append(RentOption(kind, offer, spot_interruptions(gpu.id, offer, econ) if kind == "spot" else None))
    return out


def spot_interruptions(gpu_id: str, offer: RentalOffer, econ: Economics | None) -> Interruptions:
    """The offer's own interruption band, else the catalog's band for this GPU, else the highest
    band sourced for any GPU (said so): the midpoint, as a per-node hourly rate."""
    band = offer.interruption
    if band is not None:
        return _rate(band.rate_low, band.rate_high, band.period_days, band.confidence, band.source,
                     f"{offer.provider}: {band.rate_low:.0%}-{band.rate_high:.0%} interrupted per {band.period_days:g} days")
    rows = list(econ.spot_interruption) if econ else []
    mine = [r for r in rows if r.gpu == gpu_id]
    if mine:
        r = mine[0]
        return _rate(r.rate_low, r.rate_high, r.period_days, r.confidence, r.source,
                     f"{r.instance}: {r.rate_low:.0%}-{r.rate_high:.0%} interrupted per {r.period_days:g} days")
    if rows:
        r = max(rows, key=lambda r: r.rate_high / r.period_days)
        return _rate(r.rate_high, r.rate_high, r.period_days, "low", r.source,
                     f"no sourced interruption rate for {offer.provider}: the highest sourced band's top "
                     f"({r.instance}, {r.rate_high:.0%} per {r.period_days:g} days) is assumed")
    return Interruptions(0.0, "low", ("assumption",), "no interruption rate in the catalog: none assumed")


def _rate(low: float, high: float, days: float, confidence: str, source, note: str) -> Interruptions:
    share = (low + high) / 2
    per_hour = -math.log1p(-min(share, 0.999)) / (days * 24.0)   # Poisson: P(no interruption in the period) = 1 - share
    return Interruptions(per_hour, confidence, tuple(source), note)


def rental_cost(opt: RentOption, count: int, hours: float, discount_rate: float, econ: Economics | None,
                price_factor: float = 1.0) -> RentCost | None:
    """The cost of one job of `hours` on `count` GPUs rented as `opt`; None when spot interruptions
    would destroy more than half the work."""
    billed_gpus = opt.billed_gpus(count)
    wall, overhead, notes = hours, 0.0, []
    if opt.kind == "spot" and opt.interruptions is not None:
        terms = econ.rental_terms if econ else {}
        interval = _value(terms, "checkpoint_interval_hours", 1.0)
        restart = _value(terms, "restart_hours", 0.25)
        nodes = math.ceil(billed_gpus / opt.node_gpus)
        overhead = nodes * opt.interruptions.per_node_hour * (interval / 2 + restart)
        if overhead >= MAX_SPOT_OVERHEAD:
            return None
        wall = hours / (1.0 - overhead)
        notes.append(f"spot: {opt.interruptions.note}; {nodes} node(s) lose {overhead:.1%} of the time to "
                     f"interruptions (checkpoint every {interval:g} h, restart {restart:g} h)")
    billed = wall
    if opt.kind in TERM_HOURS:
        term = TERM_HOURS[opt.kind]
        billed = math.ceil(wall / term - 1e-9) * term
        if billed > wall * 1.0001:
            notes.append(f"{opt.kind}: committed for {billed / HOURS_PER_YEAR:g} year(s) though the job runs "
                         f"{wall / 24:.1f} days")
    elif opt.offer.billing_hours:
        step = opt.offer.billing_hours
        billed = math.ceil(wall / step - 1e-9) * step
    nominal = billed_gpus * billed * opt.rate * price_factor
    upfront = opt.kind == "capacity_block"
    pv = nominal if upfront else nominal * stream_factor(billed / HOURS_PER_YEAR, discount_rate)
    return RentCost(nominal, pv, billed_gpus, billed, wall, overhead, tuple(notes))


def capacity_warning(opt: RentOption, count: int, econ: Economics | None) -> str | None:
    """'capacity not guaranteed at list price' for any multi-node on-demand block, or a capacity
    block above the published instances per block."""
    billed = opt.billed_gpus(count)
    nodes = math.ceil(billed / opt.node_gpus)
    if opt.kind == "on_demand" and nodes > 1:
        return (f"capacity not guaranteed at list price: {billed} on-demand GPUs at {opt.offer.provider} are "
                f"{nodes} nodes of {opt.node_gpus}; on-demand list prices are for single instances, so a "
                "multi-node block may need a reservation or a quote")
    most = _value(econ.rental_terms if econ else {}, "capacity_block_max_instances", None)
    if opt.kind == "capacity_block" and most is not None and nodes > most:
        return (f"capacity not guaranteed at list price: {nodes} instances exceed the {most:g} a capacity "
                "block holds (AWS), so several blocks would be needed")
    return None


def _value(terms: dict, key: str, default):
    fig = terms.get(key)
    return fig.value if fig is not None and fig.value is not None else default
