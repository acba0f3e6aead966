"""Market-data rules of the catalog (issue 14): how old source kinds map onto primary / secondary /
tertiary, how a `--catalog` override price becomes a whole, dated, self-cited quote record, and the
catalog as it stood on an `--as-of` day (later prices and parts dropped, and said so)."""
from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.errors import InputError

if TYPE_CHECKING:
    from advisor.data.catalog import Catalog
    from advisor.data.catalog_prices import Purchase

# The finer source kinds used before issue 14, and the grade each maps onto (catalog/README.md).
LEGACY_KINDS = {
    **dict.fromkeys(("vendor", "vendor_copy", "vendor_via_transcription", "vendor_via_quote", "vendor_via_quotes",
                     "vendor_sec_filing", "vendor_sec_filing_via_quote", "vendor_licence_text", "vendor_submission",
                     "provider_page", "provider_api", "provider_page_copy", "provider_price_list",
                     "cloud_provider_doc", "government", "government_via_transcription", "oem_document",
                     "model_config", "paper", "industry_survey", "official_statistics", "filing", "quote"),
                    "primary"),
    **dict.fromkeys(("secondary_dataset", "secondary_via_dataset", "secondary_vendor_table", "reseller",
                     "measurement", "trade_press", "analyst"), "secondary"),
    **dict.fromkeys(("secondary_aggregator", "secondary_low_quality", "secondary_llm_generated", "secondary_code",
                     "third_party_snapshot", "third_party_quotes", "claim", "aggregator", "forum"), "tertiary"),
    "derived_convention": "derived",
}


def override_source_id(name: str) -> str:
    return f"override:{Path(name).name}"


def _quote_record(rec, name: str, field: str, sid: str) -> dict:
    """An override price as a whole record: dated (or refused), cited to the override file."""
    if not isinstance(rec, dict):
        raise InputError(f"{name}: {field} must be a mapping with usd (or usd_per_gpu_hour), as_of and "
                         "optionally source, note", file=name, field=field)
    if rec.get("usd", rec.get("usd_per_gpu_hour")) is not None and not rec.get("as_of"):
        raise InputError(f"{name}: {field}.as_of is missing: a price given in an override file needs the date "
                         "it was quoted (YYYY, YYYY-MM or YYYY-MM-DD), so that plans can say how old it is and "
                         "a plan as of an earlier day (--as-of, as_of=) can leave it out", file=name, field=f"{field}.as_of")
    out = dict(rec)
    given = out.get("source") or []
    out["source"] = [sid] + [s for s in (given if isinstance(given, list) else [given]) if s != sid]
    out.setdefault("confidence", "high")
    if "usd" in out:
        out.setdefault("kind", "quote")
    out.setdefault("note", f"price given in {Path(name).name}")
    return out


def normalize_override(doc, name: str):
    """Make every price in an override file a whole quote record citing the file itself."""
    if not isinstance(doc, dict):
        return doc
    doc = copy.deepcopy(doc)
    sid = override_source_id(name)
    used = False
    for i, entry in enumerate(doc.get("gpus") or []):
        prices = entry.get("prices") if isinstance(entry, dict) else None
        if not isinstance(prices, dict):
            continue
        where = f"gpus[{i}].prices"
        if prices.get("purchase") is not None:
            prices["purchase"] = _quote_record(prices["purchase"], name, f"{where}.purchase", sid)
            used = True
        for j, offer in enumerate(prices.get("rent") or []):
            prices["rent"][j] = _quote_record(offer, name, f"{where}.rent[{j}]", sid)
            prices["rent"][j].setdefault("pricing", "on_demand")
            used = True
    for i, entry in enumerate(doc.get("servers") or []):
        if isinstance(entry, dict) and entry.get("purchase") is not None:
            entry["purchase"] = _quote_record(entry["purchase"], name, f"servers[{i}].purchase", sid)
            used = True
    if used:
        sources = doc.setdefault("sources", {}) or {}
        doc["sources"] = sources
        sources.setdefault(sid, {"url": f"file:{Path(name).name}", "kind": "primary", "form": "quote",
                                 "title": f"Prices given by the user in the override file {Path(name).name} "
                                          "(a quote, not checked by gpu-advisor)"})
    return doc


def replace_price_records(merged: dict, entry: dict) -> dict:
    """An override's purchase price replaces the built-in record whole (no key-by-key merge), and
    the built-in's other purchase records with it: the quote is then the only purchase price."""
    prices = entry.get("prices")
    if isinstance(prices, dict) and prices.get("purchase") is not None:
        merged["prices"]["purchase"] = copy.deepcopy(prices["purchase"])
        merged["prices"]["other_purchases"] = copy.deepcopy(prices.get("other_purchases") or [])
    if entry.get("purchase") is not None and "gpu_slots" in merged:
        merged["purchase"] = copy.deepcopy(entry["purchase"])
        merged["other_purchases"] = copy.deepcopy(entry.get("other_purchases") or [])
    return merged


def price_records(sections: dict):
    """(path, record) for every price in validated GPU and server sections."""
    for gid, g in sorted(sections["gpus"].items()):
        for i, p in enumerate([g.prices.purchase] + list(g.prices.other_purchases)):
            if p is not None and p.usd is not None:
                yield (f"gpus[{gid}].prices.purchase" if i == 0 else f"gpus[{gid}].prices.other_purchases[{i - 1}]"), p
        for i, o in enumerate(g.prices.rent):
            yield f"gpus[{gid}].prices.rent[{i}]", o
    for sid, s in sorted(sections["servers"].items()):
        for i, p in enumerate([s.purchase] + list(s.other_purchases)):
            if p.usd is not None:
                yield (f"servers[{sid}].purchase" if i == 0 else f"servers[{sid}].other_purchases[{i - 1}]"), p


def tertiary_only(record, sources: dict) -> bool:
    """Whether a price rests only on tertiary sources (derived/assumption ids do not count)."""
    kinds = [sources[s].kind for s in record.source if s in sources]
    graded = [k for k in kinds if k in ("primary", "secondary", "tertiary")]
    return bool(graded) and all(k == "tertiary" for k in graded)


def check_price_sources(sections: dict, name: str) -> None:
    """A price read only on aggregators, forums or pages that merely mention it must say so:
    `confidence: low`. Anything else is refused (exit 2) so a finance reader is never misled."""
    for path, rec in price_records(sections):
        if rec.confidence != "low" and tertiary_only(rec, sections["sources"]):
            raise InputError(f"{name}: {path} rests only on tertiary sources ({', '.join(rec.source)}) but has "
                             f"confidence: {rec.confidence}; cite a primary or secondary source, or set "
                             "confidence: low", file=name, field=f"{path}.confidence")


# ----------------------------------------------------------------------------- --as-of

def _after(as_of: str | None, day: dt.date) -> bool:
    from advisor.data.catalog_figures import parse_as_of

    d = parse_as_of(as_of)
    return d is not None and d > day


def _pick(current, others: list, day: dt.date, eol_new_unavailable: bool):
    """The record plans use on `day`: the current one if dated on or before it, else the newest
    earlier record of the same condition, else the newest earlier record of any condition."""
    from advisor.data.catalog_figures import parse_as_of

    def ok(p) -> bool:
        return p is not None and p.usd is not None and not _after(p.as_of, day) and not (
            eol_new_unavailable and p.condition == "new")

    if current is not None and (current.usd is None or ok(current)):
        return current
    earlier = sorted((p for p in others if ok(p)), key=lambda p: parse_as_of(p.as_of) or dt.date.min, reverse=True)
    same = [p for p in earlier if current is None or p.condition == current.condition]
    return (same or earlier or [None])[0]


def _no_price(day: dt.date, why: str) -> "Purchase":
    from advisor.data.catalog_prices import Purchase

    return Purchase(usd=None, as_of=None, note=f"no purchase price dated on or before {day.isoformat()}: {why}")


def catalog_at(catalog: "Catalog", day: dt.date) -> "Catalog":
    """See Catalog.at. A GPU launched after `day` keeps its specs but loses every price."""
    from advisor.data.catalog_figures import parse_as_of

    ignored: list[dict] = []

    def drop(entry: str, field: str, as_of, what: str) -> None:
        ignored.append({"entry": entry, "field": field, "as_of": as_of,
                        "message": f"{what} dated {as_of} is after {day.isoformat()} and was not used"})

    gpus = {}
    for gid, g in catalog.gpus.items():
        launch = parse_as_of(g.launch.value)
        if launch is not None and launch > day:
            drop(gid, "launch", g.launch.value, f"{g.name} (launched {g.launch.value}) is not offered: its launch")
            gpus[gid] = g.model_copy(update={"prices": g.prices.model_copy(update={
                "purchase": _no_price(day, f"{g.name} launched later"), "other_purchases": [], "rent": []})})
            continue
        eol = g.end_of_life
        eol_gone = eol is not None and eol.new_purchase == "unavailable" and not _after(eol.value, day) \
            and eol.value is not None
        p = g.prices.purchase
        chosen = _pick(p, g.prices.other_purchases, day, eol_gone)
        if p is not None and p.usd is not None and chosen is not p and _after(p.as_of, day):
            drop(gid, "prices.purchase", p.as_of, f"{g.name}'s purchase price (${p.usd:,.0f})")
        if chosen is None:
            chosen = _no_price(day, "the catalog's prices are all later") if p is not None else None
        rent = [o for o in g.prices.rent if not _after(o.as_of, day)]
        for o in g.prices.rent:
            if o not in rent:
                drop(gid, "prices.rent", o.as_of, f"{g.name}'s {o.pricing} rate at {o.provider} "
                                                   f"(${o.usd_per_gpu_hour:g}/GPU-h)")
        others = [q for q in g.prices.other_purchases if q is not chosen and not _after(q.as_of, day)]
        gpus[gid] = g.model_copy(update={"prices": g.prices.model_copy(
            update={"purchase": chosen, "other_purchases": others, "rent": rent})})
    servers = {}
    for sid, s in catalog.servers.items():
        chosen = _pick(s.purchase, s.other_purchases, day, False)
        if s.purchase.usd is not None and chosen is not s.purchase and _after(s.purchase.as_of, day):
            drop(sid, "purchase", s.purchase.as_of, f"{s.name}'s price (${s.purchase.usd:,.0f})")
        chosen = chosen or _no_price(day, "the catalog's prices are all later; give a quote with --catalog")
        servers[sid] = s.model_copy(update={"purchase": chosen, "other_purchases": [
            q for q in s.other_purchases if q is not chosen and not _after(q.as_of, day)]})
    return catalog.model_copy(update={"gpus": gpus, "servers": servers, "as_of": day, "ignored_after_as_of": ignored})
