"""What `advisor catalog list|show|validate` report, as plain data (present/listings.py lays it out).

Every figure comes with its sources resolved to URLs; every price with its age in months against
an as-of date and a stale flag (older than catalog_figures.STALE_MONTHS); every GPU with what can be done
with it: bought (and in which servers), rented, both or neither.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from advisor.data.catalog import GPU, Catalog
from advisor.data.catalog_figures import STALE_MONTHS, Figure, age_months
from advisor.data.catalog_prices import Purchase, RentalOffer
from advisor.errors import InputError, suggest

CONTEXTS = ("office", "datacenter")

# (path in the GPU entry, unit) for every figure of a GPU, in display order
_GPU_FIGURES = (
    ("launch", "date"),
    ("memory_gb", "GB"),
    ("memory_bandwidth_gbps", "GB/s"),
    ("fp32_tflops", "TFLOPS"),
    ("interconnect.link_gbps", "GB/s"),
    ("interconnect.link_domain", "GPU(s)"),
    ("interconnect.p2p", "yes/no"),
    ("interconnect.pcie_gbps", "GB/s"),
    ("tdp_w", "W"),
    ("die_area_mm2", "mm^2"),
    ("tpp", "TPP"),
    ("performance_density", "TPP/mm^2"),
)
SERVER_FIGURES = (("power_overhead_w", "W"), ("network_usd_per_server", "USD"), ("network_gbps_per_server", "GB/s"))


def _dated(as_of: str | None, today: dt.date) -> dict:
    months = age_months(as_of, today)
    return {"as_of": as_of, "age_months": months, "stale": months is not None and months > STALE_MONTHS}


def sources_of(catalog: Catalog, ids: Iterable[str]) -> list[dict]:
    """The cited source ids with their URL, title and kind (None where the id is not in the table)."""
    out = []
    for sid in ids:
        src = catalog.sources.get(sid)
        out.append(
            {
                "id": sid,
                "url": src.url if src else None,
                "title": src.title if src else None,
                "kind": src.kind if src else None,
            }
        )
    return out


def figure_record(catalog: Catalog, field: str, fig: Figure, unit: str) -> dict:
    """One figure as listed: field, value, unit, its sources resolved and its note."""
    return {
        "field": field,
        "value": fig.value,
        "unit": unit,
        "sources": sources_of(catalog, fig.source),
        "note": fig.note,
    }


def gpu_figures(catalog: Catalog, gpu: GPU) -> list[dict]:
    """Every figure of a GPU in display order, its tensor rates after fp32, each with its sources."""
    out = []
    for path, unit in _GPU_FIGURES:
        obj: Any = gpu  # walked down `path` to a Figure
        for part in path.split("."):
            obj = getattr(obj, part)
        out.append(figure_record(catalog, path, obj, unit))
        if path == "fp32_tflops":
            for key, fig in gpu.tensor_tflops.items():
                out.append(figure_record(catalog, f"tensor_tflops.{key}", fig, "TOPS" if key == "int8" else "TFLOPS"))
    return out


def _purchase(catalog: Catalog, p: Purchase | None, today: dt.date) -> dict | None:
    if p is None:
        return None
    return {
        "usd": p.usd,
        "kind": p.kind,
        "condition": p.condition,
        "confidence": p.confidence,
        "usd_range": list(p.usd_range) if p.usd_range else None,
        "warranty": p.warranty,
        **_dated(p.as_of, today),
        "sources": sources_of(catalog, p.source),
        "note": p.note,
    }


def _offer(catalog: Catalog, o: RentalOffer, chosen: RentalOffer | None, today: dt.date) -> dict:
    return {
        "provider": o.provider,
        "usd_per_gpu_hour": o.usd_per_gpu_hour,
        "pricing": o.pricing,
        "confidence": o.confidence,
        "min_gpus": o.min_gpus,
        "billing_hours": o.billing_hours,
        "evidenced_gpus": o.order_evidenced[0],  # one order's most at this rate; above it a quote is needed
        "evidenced_where": o.order_evidenced[1],
        # all its orders held at once: the most at this rate (None: no limit published or seen), as plans grade it
        "evidenced_at_once_gpus": o.provider_evidenced[0] if o.provider_evidenced else None,
        "evidenced_at_once_where": o.provider_evidenced[1] if o.provider_evidenced else None,
        "interruption": o.interruption.model_dump() if o.interruption else None,
        **_dated(o.as_of, today),
        "used_for_plans": o is chosen,
        "sources": sources_of(catalog, o.source),
        "note": o.note,
    }


def _server_ids(catalog: Catalog, gpu_id: str) -> dict:
    return {ctx: [s.id for s in catalog.servers_for(gpu_id, ctx)] for ctx in CONTEXTS}


def availability_message(catalog: Catalog, gpu: GPU) -> str:
    """One sentence: can this GPU be bought (and into which servers), rented, both or neither?"""
    servers = _server_ids(catalog, gpu.id)
    where = sorted({s for ids in servers.values() for s in ids})
    priced = [s for s in where if catalog.servers[s].purchase.usd is not None]
    text = {
        "buy and rent": "can be bought or rented",
        "buy only": "buy only: the catalog holds no sourced on-demand rental rate for it",
        "rent only": "rent only: the catalog holds no sourced purchase price for it",
        "neither": "neither bought nor rented here: the catalog holds no sourced purchase price or "
        "dated on-demand rental rate for it",
    }[gpu.availability]
    if gpu.purchase_usd is not None:
        if not where:
            text += "; no server in the catalog takes it, so it cannot be bought as a usable unit"
        elif not priced:
            text += f"; it needs a server ({', '.join(where)}) whose price is unknown"
        else:
            text += f"; bought GPUs go into {', '.join(where)}"
    return f"{gpu.name} {text}."


def gpu_record(catalog: Catalog, gpu_id: str, today: dt.date) -> dict:
    gpu = catalog.gpu(gpu_id)
    chosen = gpu.rental
    return {
        "type": "gpu",
        "id": gpu.id,
        "name": gpu.name,
        "vendor": gpu.vendor,
        "architecture": gpu.architecture,
        "product_class": gpu.product_class,
        "brand": gpu.brand,
        "form_factor": gpu.form_factor,
        "note": gpu.note,
        "as_of": today.isoformat(),
        "stale_after_months": STALE_MONTHS,
        "availability": gpu.availability,
        "availability_message": availability_message(catalog, gpu),
        "servers": _server_ids(catalog, gpu.id),
        "figures": gpu_figures(catalog, gpu),
        "prices": {
            "purchase": _purchase(catalog, gpu.prices.purchase, today),
            "other_purchases": [_purchase(catalog, p, today) for p in gpu.prices.other_purchases],
            "rent": [_offer(catalog, o, chosen, today) for o in gpu.prices.rent],
        },
        "end_of_life": gpu.end_of_life.model_dump() if gpu.end_of_life else None,
    }


def server_record(catalog: Catalog, server_id: str, today: dt.date) -> dict:
    s = catalog.servers[server_id]
    takes = [g for g in sorted(catalog.gpus) if s.takes(catalog.gpus[g])]
    return {
        "type": "server",
        "id": s.id,
        "name": s.name,
        "kind": s.kind,
        "gpu_form_factor": s.gpu_form_factor,
        "gpu_slots": s.gpu_slots,
        "compatible_gpus": s.compatible_gpus,
        "takes": takes,
        "contexts": list(s.contexts),
        "note": s.note,
        "as_of": today.isoformat(),
        "stale_after_months": STALE_MONTHS,
        "figures": [figure_record(catalog, name, getattr(s, name), unit) for name, unit in SERVER_FIGURES],
        "prices": {"purchase": _purchase(catalog, s.purchase, today), "rent": []},
    }


def record(catalog: Catalog, item_id: str, today: dt.date) -> dict:
    """`catalog show ID`: a GPU or a server, every figure with its sources, as of `today`. The id is
    checked as every other id argument is (a 100,000-character one was echoed whole in the error)."""
    from advisor.inputs.arguments import text

    item_id = text()(item_id, "ID")
    catalog = catalog.at(today)
    if item_id in catalog.gpus:
        return gpu_record(catalog, item_id, today)
    if item_id in catalog.servers:
        return server_record(catalog, item_id, today)
    known = list(catalog.gpus) + list(catalog.servers)
    raise InputError(f"unknown catalog id {item_id!r}{suggest(item_id, known)}; see `advisor catalog list`", field="ID")


def listing(catalog: Catalog, today: dt.date) -> dict:
    """`catalog list`: one row per GPU and per server, with prices and their ages, as of `today`
    (prices dated later are left out and listed under `ignored_after_as_of`)."""
    catalog = catalog.at(today)
    gpus = []
    for gid in sorted(catalog.gpus):
        g = catalog.gpus[gid]
        p, r = g.prices.purchase, g.rental
        gpus.append(
            {
                "id": gid,
                "name": g.name,
                "vendor": g.vendor,
                "product_class": g.product_class,
                "form_factor": g.form_factor,
                "memory_gb": g.memory_gb.value,
                "bf16_tflops": g.dense_tflops("bf16"),
                "tdp_w": g.tdp_w.value,
                "availability": g.availability,
                "purchase": {"usd": p.usd, **_dated(p.as_of, today)} if p and p.usd is not None else None,
                "rent": {"usd_per_gpu_hour": r.usd_per_gpu_hour, "provider": r.provider, **_dated(r.as_of, today)}
                if r
                else None,
                "servers": sorted({s for ids in _server_ids(catalog, gid).values() for s in ids}),
            }
        )
    servers = []
    for sid in sorted(catalog.servers):
        s = catalog.servers[sid]
        servers.append(
            {
                "id": sid,
                "name": s.name,
                "kind": s.kind,
                "gpu_form_factor": s.gpu_form_factor,
                "gpu_slots": s.gpu_slots,
                "contexts": list(s.contexts),
                "purchase": {"usd": s.purchase.usd, **_dated(s.purchase.as_of, today)}
                if s.purchase.usd is not None
                else None,
                "power_overhead_w": s.power_overhead_w.value,
                "network_usd_per_server": s.network_usd_per_server.value,
                "network_gbps_per_server": s.network_gbps_per_server.value,
            }
        )
    return {
        "as_of": today.isoformat(),
        "stale_after_months": STALE_MONTHS,
        "gpus": gpus,
        "servers": servers,
        "ignored_after_as_of": catalog.ignored_after_as_of,
    }


def presets(catalog: Catalog) -> dict:
    """`advisor models`: every model preset (each usable for training and serving) with its figures,
    the serving figures resolved to the values the estimators use (kv_heads = heads, head_dim =
    hidden / heads, active_params = params, max_context = seq_len where the preset gives none), the
    other names it answers to, and its sources."""
    aliases: dict[str, list[dict]] = {}
    for alias in sorted(catalog.model_aliases):
        entry = catalog.model_aliases[alias]
        aliases.setdefault(entry.model, []).append({"id": alias, "note": entry.note})
    out = []
    for mid in sorted(catalog.models, key=lambda k: (catalog.models[k].params, k)):
        m = catalog.models[mid]
        fig = m.model_dump(exclude={"source"})
        fig.update(
            kv_heads=m.kv_heads or m.heads,
            head_dim=m.head_dim or m.hidden // m.heads,
            active_params=m.active_params or m.params,
            max_context=m.max_context or m.seq_len,
        )
        out.append({"id": mid, **fig, "aliases": aliases.get(mid, []), "sources": sources_of(catalog, m.source)})
    return {"models": out}


def preset_view(catalog: Catalog, name: str) -> dict:
    """`advisor models show NAME`: one preset by id or alias (an alias says which preset it names)."""
    mid = catalog.model_id(name)
    (found,) = [m for m in presets(catalog)["models"] if m["id"] == mid]
    if mid != str(name).lower():
        found = {**found, "alias": {"id": str(name).lower(), "note": catalog.model_aliases[str(name).lower()].note}}
    return found


SORT_KEYS: dict[str, Callable[[dict], tuple]] = {
    "id": lambda g: (g["id"],),
    "memory": lambda g: (-(g.get("memory_gb") or 0), g["id"]),
    "tflops": lambda g: (-(g.get("bf16_tflops") or 0), g["id"]),
    "price": lambda g: ((g["purchase"] or {}).get("usd") is None, (g["purchase"] or {}).get("usd") or 0, g["id"]),
    "rent": lambda g: (g["rent"] is None, (g["rent"] or {}).get("usd_per_gpu_hour") or 0, g["id"]),
}
"""How select() orders a listing's GPUs: by id, most memory, most bf16 TFLOPS, cheapest to buy or to rent."""


def _selected(
    g: dict, name: str | None, vendor: str | None, min_memory: float | None, buyable: bool, rentable: bool
) -> bool:
    """Whether one listed GPU passes every filter given."""
    return (
        (not name or name.lower() in g["id"].lower() or name.lower() in (g.get("name") or "").lower())
        and (not vendor or (g.get("vendor") or "").lower() == vendor.lower())
        and (min_memory is None or (g.get("memory_gb") or 0) >= min_memory)
        and (not buyable or bool(g["purchase"]))
        and (not rentable or bool(g["rent"]))
    )


def select(
    data: dict,
    *,
    name: str | None = None,
    vendor: str | None = None,
    min_memory: float | None = None,
    buyable: bool = False,
    rentable: bool = False,
    sort: str = "id",
) -> dict:
    """A listing() narrowed like `sky show-gpus A100`: a name fragment (id or product name), a
    vendor, a least memory, buy or rent availability; sorted by id, memory, tflops, price or rent."""
    gpus = sorted(
        (g for g in data["gpus"] if _selected(g, name, vendor, min_memory, buyable, rentable)), key=SORT_KEYS[sort]
    )
    servers = data["servers"]
    if any((name, vendor, min_memory is not None, buyable, rentable)):
        kept = {s for g in gpus for s in g.get("servers", [])}
        servers = [s for s in servers if s["id"] in kept] if gpus else []
    return {**data, "gpus": gpus, "servers": servers}
