"""How long until bought or rented hardware can work: a purchase's delivery (a GPU, its server, the
network) and a rental's provisioning, each sourced and dated, or unknown and said so. Bought
hardware starts work only after the last of its parts arrives (and its burn-in: economics/bom.py),
which a plan counts against every deadline."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from advisor.data.catalog import Catalog
from advisor.data.catalog_figures import LeadTimeFigure
from advisor.data.catalog_prices import RentalOffer
from advisor.errors import InputError

NETWORK = "network"


@dataclass(frozen=True)
class LeadTime:
    """Days from order to delivery (None: unknown, with the note saying why), the source's band,
    and what it rests on."""

    days: float | None
    confidence: str
    source: tuple[str, ...]
    as_of: str | None
    note: str
    low_days: float | None = None
    high_days: float | None = None
    item: str = ""

    @property
    def known(self) -> bool:
        return self.days is not None

    @property
    def weeks(self) -> float | None:
        return None if self.days is None else self.days / 7.0


def _from_figure(fig: LeadTimeFigure | None, item: str, missing: str) -> LeadTime:
    if fig is None:
        return LeadTime(None, "low", (), None, missing, item=item)
    return LeadTime(
        fig.days,
        fig.confidence or "low",
        tuple(fig.source),
        fig.as_of,
        fig.note or "",
        fig.low_days,
        fig.high_days,
        item,
    )


def lead_time(catalog: Catalog, item: str) -> LeadTime:
    """The lead time of a GPU id, a server id or `network` (the scale-out fabric), as the catalog
    states it (unknown ones say why)."""
    if item == NETWORK:
        fig = (catalog.economics.lead_times if catalog.economics else {}).get(NETWORK)
        if fig is None:
            return LeadTime(None, "low", (), None, "the catalog has no network lead time", item=item)
        return LeadTime(
            fig.value, fig.confidence, tuple(fig.source), fig.as_of, fig.note or "", fig.low, fig.high, item
        )
    if item in catalog.gpus:
        return _from_figure(catalog.gpus[item].lead_time, item, f"{item} has no purchase price, so no lead time")
    if item in catalog.servers:
        return _from_figure(catalog.servers[item].lead_time, item, f"{item} has no purchase price, so no lead time")
    raise InputError(
        f"unknown part {item!r}: a lead time is asked of a GPU id, a server id or {NETWORK!r}", field="item"
    )


def provisioning_time(offer: RentalOffer) -> LeadTime:
    """How long a rental takes to become usable, where the provider says; unknown otherwise."""
    return _from_figure(
        offer.provisioning, offer.provider, f"{offer.provider} publishes no provisioning time; capacity is not assured"
    )


def purchase_lead_time(catalog: Catalog, parts: Iterable[str]) -> LeadTime:
    """The lead time of an order of several parts (GPU, server, `network`): the last to arrive.
    Known only when every part's is; otherwise the longest known one, said to be a lower bound,
    with the unknown parts named."""
    times = [lead_time(catalog, p) for p in dict.fromkeys(parts)]
    known = [t for t in times if t.known]
    unknown = [t.item for t in times if not t.known]
    if not known:
        return LeadTime(None, "low", (), None, f"lead time unknown for {', '.join(unknown)}", item="+".join(unknown))
    last = max(known, key=lambda t: (t.days or 0.0, t.item))
    note = last.note
    if unknown:
        note = f"at least {last.days:g} days ({last.item}); unknown for {', '.join(unknown)}. {note}"
        return LeadTime(last.days, "low", last.source, last.as_of, note, last.low_days, None, last.item)
    return LeadTime(last.days, last.confidence, last.source, last.as_of, note, last.low_days, last.high_days, last.item)
