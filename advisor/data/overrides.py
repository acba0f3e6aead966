"""A `--catalog` override file's prices as whole, dated, self-cited quote records: a price given
in an override replaces the built-in record whole and cites the file itself."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from advisor.errors import InputError, show
from advisor.inputs.yaml_nodes import Marks


def override_source_id(name: str) -> str:
    return f"override:{Path(name).name}"


def _quote_record(rec: Any, name: str, field: str, sid: str) -> dict[str, Any]:
    """An override price as a whole record: dated (or refused), cited to the override file."""
    if not isinstance(rec, dict):
        raise InputError(
            f"{name}: {field} must be a mapping with usd (or usd_per_gpu_hour), as_of and optionally source, note",
            file=name,
            field=field,
        )
    if rec.get("usd", rec.get("usd_per_gpu_hour")) is not None and not rec.get("as_of"):
        raise InputError(
            f"{name}: {field}.as_of is missing: a price given in an override file needs the date "
            "it was quoted (YYYY, YYYY-MM or YYYY-MM-DD), so that plans can say how old it is and "
            "a plan as of an earlier day (--as-of, as_of=) can leave it out",
            file=name,
            field=f"{field}.as_of",
        )
    out = dict(rec)
    given = out.get("source") or []
    out["source"] = [sid] + [s for s in (given if isinstance(given, list) else [given]) if s != sid]
    out.setdefault("confidence", "high")
    if "usd" in out:
        out.setdefault("kind", "quote")
    out.setdefault("note", f"price given in {Path(name).name}")
    return out


def normalize_override(doc: Any, name: str) -> Any:
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
        rent = prices.get("rent")
        if rent is not None and not isinstance(rent, list):
            raise InputError(
                f"{name}: {where}.rent must be a list of rental offers, got {show(rent)}",
                file=name,
                field=f"{where}.rent",
            )
        for j, offer in enumerate(rent or []):
            prices["rent"][j] = _quote_record(offer, name, f"{where}.rent[{j}]", sid)
            prices["rent"][j].setdefault("pricing", "on_demand")
            used = True
    for i, entry in enumerate(doc.get("servers") or []):
        if isinstance(entry, dict) and entry.get("purchase") is not None:
            entry["purchase"] = _quote_record(entry["purchase"], name, f"servers[{i}].purchase", sid)
            used = True
    if used:
        sources = doc.get("sources") or {}
        if not isinstance(sources, dict):
            raise InputError(f"{name}: `sources` must be a mapping of id to entry", file=name, field="sources")
        doc["sources"] = sources
        sources.setdefault(
            sid,
            {
                "url": f"file:{Path(name).name}",
                "kind": "primary",
                "form": "quote",
                "title": f"Prices given by the user in the override file {Path(name).name} "
                "(a quote, not checked by gpu-advisor)",
            },
        )
    return doc


def replace_price_records(merged: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """An override's purchase price replaces the built-in record whole (no key-by-key merge), and
    the built-in's other purchase records with it: the quote is then the only purchase price. A
    lead time is a quoted figure too: the override's replaces the built-in one whole, so its days are
    never checked against, or cited with, the built-in's band and source."""
    if "lead_time" in entry:
        merged["lead_time"] = copy.deepcopy(entry["lead_time"])
    prices = entry.get("prices")
    if isinstance(prices, dict) and prices.get("purchase") is not None:
        dropped = [merged["prices"].get("purchase") or {}, *(merged["prices"].get("other_purchases") or [])]
        new = sorted(str(r["as_of"]) for r in dropped if r.get("as_of") and r.get("condition", "new") == "new")
        merged["prices"]["purchase"] = copy.deepcopy(prices["purchase"])
        merged["prices"]["other_purchases"] = copy.deepcopy(prices.get("other_purchases") or [])
        if new and not merged["prices"].get("first_new_as_of"):  # a used quote is aged as the built-in was
            merged["prices"]["first_new_as_of"] = new[0]
    if entry.get("purchase") is not None and "gpu_slots" in merged:
        merged["purchase"] = copy.deepcopy(entry["purchase"])
        merged["other_purchases"] = copy.deepcopy(entry.get("other_purchases") or [])
    return merged


def written_at(doc: Any, marks: Marks, field: str) -> tuple[int, int] | None:
    """(line, column) where an error's `field` -- `gpus[h100-sxm].prices.rent[0].usd_per_gpu_hour`,
    `models[mine].params`, `estimator.goodput.restart_hours`, `gpus[0].prices` -- is written in the override
    `doc` (a list entry found by its id, else by its index), or its nearest enclosing key that is; None when
    its entry is not in the file (the figure at fault is the built-in catalog's)."""
    parts = [bracket or name for bracket, name in re.findall(r"\[([^\]]*)\]|([^.\[\]]+)", field)]
    loc: list[int | str] = []
    node = doc
    for part in parts:
        if isinstance(node, list):
            index = next((i for i, e in enumerate(node) if isinstance(e, dict) and e.get("id") == part), None)
            if index is None and part.isdigit() and int(part) < len(node):
                index = int(part)
            if index is None:
                break
            loc.append(index)
            node = node[index]
        elif isinstance(node, dict) and part in node:
            loc.append(part)
            node = node[part]
        else:
            break
    mark = marks.get(tuple(loc))
    if mark is None or len(loc) < min(2, len(parts)) or len(loc) < len(parts) - 1:
        return None  # the figure's own mapping is not in the file: the fault is a built-in figure's (review25a)
    written = len(loc) == len(parts) and mark[2] == mark[0]  # a value on its key's line; else the key's line
    return (mark[2], mark[3]) if written else (mark[0], mark[1])
