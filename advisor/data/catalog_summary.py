"""What `advisor catalog validate` reports once the catalog has loaded: what was checked, in numbers
(entries, figures, sources by kind, prices by confidence), and every figure left null with the
note saying why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from advisor.data.catalog import Catalog
from advisor.data.catalog_view import SERVER_FIGURES, figure_record, gpu_figures, sources_of


def _entry_figures(catalog: Catalog) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(entry, field, figure-like) for every sourced value in GPUs, servers and assumptions."""
    for gid in sorted(catalog.gpus):
        g = catalog.gpus[gid]
        for f in gpu_figures(catalog, g):
            yield gid, f["field"], f
        p = g.prices.purchase
        if p is not None:
            yield gid, "prices.purchase", {"value": p.usd, "sources": sources_of(catalog, p.source), "note": p.note}
        for i, o in enumerate(g.prices.rent):
            yield (
                gid,
                f"prices.rent[{i}]",
                {"value": o.usd_per_gpu_hour, "sources": sources_of(catalog, o.source), "note": o.note},
            )
    for sid in sorted(catalog.servers):
        s = catalog.servers[sid]
        yield (
            sid,
            "purchase",
            {"value": s.purchase.usd, "sources": sources_of(catalog, s.purchase.source), "note": s.purchase.note},
        )
        for name, unit in SERVER_FIGURES:
            yield sid, name, figure_record(catalog, name, getattr(s, name), unit)
    for key in sorted(catalog.assumptions):
        a = catalog.assumptions[key]
        yield key, "value", figure_record(catalog, "value", a, a.unit)


def unknown_figures(catalog: Catalog) -> list[dict]:
    """Every figure left null, with the note saying why: the list a closing note quotes."""
    return [
        {"entry": entry, "field": field, "note": f["note"]}
        for entry, field, f in _entry_figures(catalog)
        if f["value"] is None
    ]


def summary(catalog: Catalog, name: str) -> dict:
    """`catalog validate`: what was checked, in numbers (sources by kind, prices by confidence)."""
    from advisor.data.source_grades import SOURCE_KINDS, price_records, tertiary_only

    figures = list(_entry_figures(catalog))
    prices = [rec for _, rec in price_records({"gpus": catalog.gpus, "servers": catalog.servers})]
    cited = {s["id"] for _, _, f in figures for s in f["sources"]}
    derived = sum(1 for _, _, f in figures if any(s["kind"] == "derived" for s in f["sources"]))
    return {
        "file": name,
        "valid": True,
        "gpus": len(catalog.gpus),
        "servers": len(catalog.servers),
        "models": len(catalog.models),
        "assumptions": len(catalog.assumptions),
        "sources": len(catalog.sources),
        "sources_cited": len(cited),
        "figures": len(figures),
        "unknown": sum(1 for _, _, f in figures if f["value"] is None),
        "derived": derived,
        "availability": {
            k: sum(1 for g in catalog.gpus.values() if g.availability == k)
            for k in ("buy and rent", "buy only", "rent only", "neither")
        },
        "sources_by_kind": {k: sum(1 for s in catalog.sources.values() if s.kind == k) for k in SOURCE_KINDS},
        "sources_without_kind": sum(1 for s in catalog.sources.values() if s.kind not in SOURCE_KINDS),
        "prices": len(prices),
        "prices_by_confidence": {k: sum(1 for p in prices if p.confidence == k) for k in ("high", "medium", "low")},
        "prices_tertiary_only": sum(1 for p in prices if tertiary_only(p, catalog.sources)),
        "economics_figures": _economics_count(catalog),
        "digest": catalog.digest,
    }


def _economics_count(catalog: Catalog) -> int:
    """How many figures the economics section holds (each curve, rate and table entry)."""
    e = catalog.economics
    if e is None:
        return 0
    maps = (
        e.cost_of_capital,
        e.colocation_usd_per_kw_month,
        e.power_and_cooling,
        e.network,
        e.storage,
        e.reliability,
        e.rental_terms,
    )
    return (
        len(e.residual_value)
        + 1
        + len(e.useful_life_filings)
        + sum(len(m) for m in maps)
        + len(e.liquid_only_systems)
        + len(e.spot_interruption)
    )
