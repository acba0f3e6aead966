"""Renting as providers sell it: every usable offer of a GPU by kind (on demand, 1- and 3-year
reservations, capacity blocks, cluster contracts, spot), whether an offer's fabric carries a job
of n GPUs, whether n is within the size its rate is evidenced at, and what a job costs on it.

* a job is billed in whole nodes (a pod rentable by the GPU is billed by the GPU), at least the
  offer's minimum block;
* a commitment is paid in full: a reservation for its whole term (a 1-year term used 7 months
  pays 12), a capacity block or cluster contract for at least its minimum term, in billing steps;
* a capacity block or cluster contract is paid up front, a reservation monthly, the rest as used;
* spot adds the work an interruption destroys: with interruptions arriving at rate lambda per node
  and k nodes, each costs the work since the last checkpoint (half the interval on average) plus a
  restart, so the job takes hours / (1 - k lambda (c/2 + R)) (docs/model.md, "Renting").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.data.catalog import GPU
from advisor.data.catalog_prices import TERM_HOURS, RentalOffer
from advisor.data.economics import EconFigure, Economics
from advisor.durations import in_days
from advisor.economics.ownership import stream_factor
from advisor.inputs.units import HOURS_PER_YEAR

__all__ = [
    "TERM_HOURS",
    "MAX_SPOT_OVERHEAD",
    "Interruptions",
    "RentOption",
    "RentCost",
    "FabricFit",
    "OrderFit",
    "usable_offers",
    "rent_options",
    "fabric_fit",
    "order_fit",
    "covers_min_term",
    "billed_hours",
    "rental_cost",
    "capacity_warning",
    "spot_interruptions",
]

MAX_SPOT_OVERHEAD = 0.5  # beyond this share of lost work a spot run is not a plan


@dataclass(frozen=True)
class Interruptions:
    """Per-node interruption rate of a spot offer, and what it rests on."""

    per_node_hour: float
    confidence: str
    source: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class RentOption:
    """One dated offer a plan may rent, of kind `kind`, with its spot interruption rate."""

    kind: str
    offer: RentalOffer
    interruptions: Interruptions | None = None

    @property
    def rate(self) -> float:
        return self.offer.usd_per_gpu_hour

    @property
    def node_gpus(self) -> int:
        return self.offer.node_gpus

    @property
    def tier(self) -> str:
        return self.offer.tier

    def nodes(self, count: int) -> int:
        """Nodes `count` GPUs occupy."""
        return max(1, math.ceil(count / self.node_gpus))

    def billed_gpus(self, count: int) -> int:
        """Whole nodes (or, for a pod rentable by the GPU, the GPUs), at least the minimum block."""
        used = self.nodes(count) * self.node_gpus if self.offer.whole_nodes else count
        return max(self.offer.min_gpus, used)


@dataclass(frozen=True)
class RentCost:
    """What renting `count` GPUs for one job costs: nominal and present value, what is billed, and
    the wall time (longer than the job's own hours on spot)."""

    nominal_usd: float
    pv_usd: float
    billed_gpus: int
    billed_hours: float
    wall_hours: float
    overhead: float  # spot: share of the wall time lost to interruptions
    notes: tuple[str, ...] = ()
    payment: str = "as_used"  # upfront | monthly | as_used
    quote_needed: bool = False  # the order is above the size the offer's rate is evidenced at (order_fit)


@dataclass(frozen=True)
class FabricFit:
    """Whether an offer's nodes are joined by a fabric that carries a job of `count` GPUs."""

    carries: bool
    nodes: int
    kind: str | None  # infiniband | roce | ethernet | none | None (not published)
    gbps_per_gpu: float | None  # the published line rate per GPU, Gb/s each way (None: not published)
    reason: str


@dataclass(frozen=True)
class OrderFit:
    """Whether `count` GPUs are within the size the offer's rate is evidenced at (order_fit)."""

    within: bool
    limit: int | None  # the binding published limit, if any
    scope: str | None  # "order" or "provider"
    message: str

    @property
    def quote_needed(self) -> bool:
        return not self.within


def usable_offers(gpu: GPU, kinds: Sequence[str], econ: Economics | None) -> list[RentOption]:
    """Every dated offer of the allowed kinds (an undated listing is reference only), in the order
    of `kinds`, cheapest first within a kind (ties by provider): all of them, not only the
    cheapest, so a plan can take another where the cheapest's fabric or tier does not
    fit. Spot offers carry their interruption rate."""
    out = []
    for kind in dict.fromkeys(kinds):
        for offer in gpu.rentals(kind):
            out.append(RentOption(kind, offer, spot_interruptions(gpu.id, offer, econ) if kind == "spot" else None))
    return out


def rent_options(gpu: GPU, kinds: Sequence[str], econ: Economics | None) -> list[RentOption]:
    """The cheapest dated offer of each allowed kind (the plan's choice before issue 29)."""
    seen: dict[str, RentOption] = {}
    for opt in usable_offers(gpu, kinds, econ):
        seen.setdefault(opt.kind, opt)
    return list(seen.values())


def fabric_fit(offer: RentalOffer, count: int) -> FabricFit:
    """A job within one node needs no fabric. A larger one needs the offer's nodes joined by
    InfiniBand, RoCE or (RDMA-capable) Ethernet: `none` (pods on a general network) or an
    unpublished fabric does not carry it. The published per-GPU rate is returned for the estimate
    (None when the provider names the fabric but not its bandwidth)."""
    nodes = max(1, math.ceil(count / offer.node_gpus))
    fab = offer.fabric
    if nodes == 1:
        return FabricFit(
            True,
            1,
            fab.kind,
            fab.gbps_per_gpu,
            f"{count} GPU(s) fit on one {offer.node_gpus}-GPU node: no fabric between nodes needed",
        )
    if fab.kind in ("infiniband", "roce", "ethernet"):
        rate = f"{fab.gbps_per_gpu:g} Gb/s per GPU" if fab.gbps_per_gpu else "bandwidth not published"
        return FabricFit(
            True, nodes, fab.kind, fab.gbps_per_gpu, f"{nodes} nodes of {offer.node_gpus} joined by {fab.kind} ({rate})"
        )
    why = (
        "its nodes share only a general network (no fabric for collective traffic)"
        if fab.kind == "none"
        else "the provider publishes no fabric between its nodes"
    )
    unsized = " (its node size is not published: one GPU per node is assumed)" if offer.gpus_per_node is None else ""
    return FabricFit(
        False,
        nodes,
        fab.kind,
        None,
        f"{count} GPUs need {nodes} nodes of {offer.node_gpus}{unsized} at {offer.provider}, but {why}",
    )


def order_fit(offer: RentalOffer, count: int, one_order: bool = True) -> OrderFit:
    """`count` GPUs in one order against the largest its rate is evidenced at (its published largest
    order, else the largest its sources show on sale, else one node: RentalOffer.order_evidenced),
    then against the most it publishes per provider; with `one_order` False (GPUs of several orders
    held at once) against the most held at once it is evidenced at (RentalOffer.provider_evidenced).
    Above either the rate is an assumption: 'quote needed'."""
    limits = [(*offer.order_evidenced, "order")] if one_order else []
    if offer.provider_evidenced is not None:
        limits.append((*offer.provider_evidenced, "provider"))
    for limit, where, scope in limits:
        if count > limit:
            return OrderFit(
                False,
                limit,
                scope,
                f"quote needed: {count:,} GPUs exceed the {limit:,} {where}; costed at its listed "
                f"${offer.usd_per_gpu_hour:g}/GPU-h, which is an assumption above that size",
            )
    held = ", ".join(f"{limit:,} {where}" for limit, where, _ in limits)
    return OrderFit(
        True, None, None, f"{count:,} GPUs within the {held}" if held else f"{offer.provider} publishes no limit"
    )


def covers_min_term(offer: RentalOffer, hours: float) -> bool:
    """Whether a need of `hours` covers the offer's minimum term (a shorter need still pays it)."""
    term = offer.term_hours
    return term is None or hours >= term - 1e-9


def spot_interruptions(gpu_id: str, offer: RentalOffer, econ: Economics | None) -> Interruptions:
    """The offer's own interruption band, else the catalog's band for this GPU, else the highest
    band sourced for any GPU (said so): the midpoint, as a per-node hourly rate."""
    band = offer.interruption
    if band is not None:
        return _rate(
            band.rate_low,
            band.rate_high,
            band.period_days,
            band.confidence,
            band.source,
            f"{offer.provider}: {band.rate_low:.0%}-{band.rate_high:.0%} interrupted per {band.period_days:g} days",
        )
    rows = list(econ.spot_interruption) if econ else []
    mine = [r for r in rows if r.gpu == gpu_id]
    if mine:
        r = mine[0]
        return _rate(
            r.rate_low,
            r.rate_high,
            r.period_days,
            r.confidence,
            r.source,
            f"{r.instance}: {r.rate_low:.0%}-{r.rate_high:.0%} interrupted per {r.period_days:g} days",
        )
    if rows:
        r = max(rows, key=lambda r: r.rate_high / r.period_days)
        return _rate(
            r.rate_high,
            r.rate_high,
            r.period_days,
            "low",
            r.source,
            f"no sourced interruption rate for {offer.provider}: the highest sourced band's top "
            f"({r.instance}, {r.rate_high:.0%} per {r.period_days:g} days) is assumed",
        )
    return Interruptions(0.0, "low", ("assumption",), "no interruption rate in the catalog: none assumed")


def _rate(low: float, high: float, days: float, confidence: str, source: Sequence[str], note: str) -> Interruptions:
    share = (low + high) / 2
    per_hour = -math.log1p(-min(share, 0.999)) / (days * 24.0)  # Poisson: P(no interruption in the period) = 1 - share
    return Interruptions(per_hour, confidence, tuple(source), note)


def billed_hours(offer: RentalOffer, kind: str, wall: Any) -> Any:
    """Hours paid per billed GPU for `wall` hours of use (a float, or a numpy array elementwise): a
    reservation in whole terms; otherwise billing steps, at least the minimum term. The one billing
    rule: a candidate's cost (rental_cost) and its cost at a drawn speed (Candidate.run_cost_scale)."""
    if kind in TERM_HOURS and offer.min_term_hours is None:
        term = TERM_HOURS[kind]
        return -(-(wall / term - 1e-9) // 1) * term  # ceil, for a float or an array
    step: float | None = offer.billing_hours or (offer.term_hours if kind in TERM_HOURS else None)
    billed = -(-(wall / step - 1e-9) // 1) * step if step else wall
    min_term = offer.term_hours
    if min_term is None:
        return billed
    if isinstance(billed, float):
        return max(billed, min_term)
    import numpy as np  # (an array: only the draws pass one; `advisor estimate` loads no numpy)

    return np.maximum(billed, min_term)


def _billed_hours(offer: RentalOffer, kind: str, wall: float) -> tuple[float, list[str]]:
    """Hours paid for `wall` hours of use (billed_hours), and the notes a commitment longer than the
    use adds."""
    notes = []
    billed = float(billed_hours(offer, kind, float(wall)))
    if kind in TERM_HOURS and offer.min_term_hours is None:
        if billed > wall * 1.0001:
            notes.append(
                f"{kind}: committed for {billed / HOURS_PER_YEAR:g} year(s) though the job runs {in_days(wall / 24)}"
            )
        return billed, notes
    step: float | None = offer.billing_hours or (offer.term_hours if kind in TERM_HOURS else None)
    stepped = math.ceil(wall / step - 1e-9) * step if step else wall
    min_term = offer.term_hours
    if min_term is not None and stepped < min_term:
        notes.append(
            f"{kind} at {offer.provider}: the minimum term of {min_term / 24:g} days is paid though the job "
            f"runs {in_days(wall / 24)}"
        )
    return billed, notes


def rental_cost(
    opt: RentOption, count: int, hours: float, discount_rate: float, econ: Economics | None, price_factor: float = 1.0
) -> RentCost | None:
    """The cost of one job of `hours` on `count` GPUs rented as `opt`; None when spot interruptions
    would destroy more than half the work. Above the largest order its rate is evidenced at
    (order_fit) the cost is at its rate with `quote_needed` set (the plan's quote-needed warning says so)."""
    billed_gpus = opt.billed_gpus(count)
    wall, overhead, notes = hours, 0.0, []
    if opt.kind == "spot" and opt.interruptions is not None:
        terms = econ.rental_terms if econ else {}
        interval = _value(terms, "checkpoint_interval_hours", 1.0)
        restart = _value(terms, "restart_hours", 0.25)
        nodes = opt.nodes(billed_gpus)
        overhead = nodes * opt.interruptions.per_node_hour * (interval / 2 + restart)
        if overhead >= MAX_SPOT_OVERHEAD:
            return None
        wall = hours / (1.0 - overhead)
        notes.append(
            f"spot: {opt.interruptions.note}; {nodes} node(s) lose {overhead:.1%} of the time to "
            f"interruptions (checkpoint every {interval:g} h, restart {restart:g} h)"
        )
    billed, term_notes = _billed_hours(opt.offer, opt.kind, wall)
    notes += term_notes
    fit = order_fit(opt.offer, billed_gpus)
    nominal = billed_gpus * billed * opt.rate * price_factor
    payment = opt.offer.payment
    pv = nominal if payment == "upfront" else nominal * stream_factor(billed / HOURS_PER_YEAR, discount_rate)
    return RentCost(nominal, pv, billed_gpus, billed, wall, overhead, tuple(notes), payment, not fit.within)


def capacity_warning(opt: RentOption, count: int, econ: Economics | None) -> str | None:
    """'capacity not guaranteed at list price' for any multi-node on-demand block, or a capacity
    block above the published instances per block."""
    billed = opt.billed_gpus(count)
    nodes = opt.nodes(billed)
    if opt.kind == "on_demand" and nodes > 1:
        return (
            f"capacity not guaranteed at list price: {billed} on-demand GPUs at {opt.offer.provider} are "
            f"{nodes} nodes of {opt.node_gpus}; on-demand list prices are for single instances, so a "
            "multi-node block may need a reservation or a quote"
        )
    most = _value(econ.rental_terms if econ else {}, "capacity_block_max_instances", None)
    if opt.kind == "capacity_block" and most is not None and nodes > most:
        return (
            f"capacity not guaranteed at list price: {nodes} instances exceed the {most:g} a capacity "
            "block holds (AWS), so several blocks would be needed"
        )
    return None


def _value(terms: dict[str, EconFigure], key: str, default: Any) -> Any:
    fig = terms.get(key)
    return fig.value if fig is not None and fig.value is not None else default
