"""Loading the catalog: the shipped catalog/*.yaml files (compiled once, data/compiled.py), a user's
override merged over them (`--catalog FILE`: mappings merge key by key, lists replace), and the
checks across entries: every `source` id resolves, servers name real GPUs, estimator parameters
have the kinds the estimator declares, figures lie in physical ranges (bounds.py)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from advisor.data.bounds import check_catalog, check_sizes
from advisor.data.catalog_entries import GPU, Assumption, ModelAlias, ModelPreset, Server, Source
from advisor.data.catalog_model import Catalog
from advisor.data.economics import Economics
from advisor.data.estimator_check import check_estimator, gpu_keys
from advisor.data.overrides import normalize_override, replace_price_records, written_at
from advisor.data.resources import data_dir
from advisor.data.source_grades import check_price_sources
from advisor.errors import InputError, describe, first_error, loc_text, suggest
from advisor.inputs.loader import load_yaml_file
from advisor.inputs.yaml_nodes import Marks

_FILES = (
    "gpus.yaml",
    "servers.yaml",
    "models.yaml",
    "sources.yaml",
    "assumptions.yaml",
    "estimator.yaml",
    "economics.yaml",
)
_LISTS = ("gpus", "servers")  # lists of entries, each with an `id`
_MAPPINGS = ("models", "model_aliases", "sources", "assumptions", "estimator")  # mappings of id to entry


Raw = dict[str, Any]  # the merged documents, before validation


def _builtin_raw() -> Raw:
    folder = data_dir("catalog")
    raw: Raw = {key: {} for key in _LISTS + _MAPPINGS}
    for name in _FILES:
        doc = load_yaml_file(folder / name, "catalog file", shipped=True) or {}
        if name == "economics.yaml":
            raw["economics"] = doc.get("economics") if isinstance(doc, dict) else doc
            continue
        _merge_document(raw, doc, str(folder / name), builtin=True)
    return raw


def _builtin() -> tuple[Raw, Catalog]:
    """(the merged raw documents, the validated catalog) of the shipped files, compiled once
    (data/compiled.py); the raw form is what a --catalog override merges over."""
    from advisor.data.compiled import compiled

    def build() -> tuple[Raw, Catalog]:
        raw = _builtin_raw()
        return raw, _validate(copy.deepcopy(raw), "built-in catalog")

    def stored(value: Any) -> tuple[Raw, Catalog]:
        if not (type(value) is tuple and len(value) == 2 and type(value[0]) is dict and isinstance(value[1], Catalog)):
            raise ValueError("not a compiled catalog")
        return value

    folder = data_dir("catalog")
    return compiled("catalog", [folder / name for name in _FILES], build, stored)


def _merge_document(raw: Raw, doc: Any, name: str, builtin: bool = False) -> None:
    """Merge one catalog document (built-in file or user override) into `raw`."""
    if not isinstance(doc, dict):
        raise InputError(
            f"{name}: a catalog file is a mapping with keys gpus, servers, models, sources, assumptions", file=name
        )
    if name.endswith("sources.yaml") and builtin:
        doc = {"sources": doc}
    allowed = {"schema_version", *_LISTS, *_MAPPINGS}
    for key in doc:
        if key not in allowed:
            raise InputError(
                f"{name}: unknown top-level key {key!r}{suggest(str(key), allowed)}; "
                f"allowed: {', '.join(sorted(allowed))}",
                file=name,
                field=str(key),
            )
    if not builtin:
        doc = normalize_override(doc, name)
    for key in _LISTS:
        _merge_list(raw[key], doc.get(key) or [], key, name, builtin)
    for key in _MAPPINGS:
        _merge_mapping(raw[key], doc.get(key) or {}, key, name, builtin)


def _merge_list(merged: dict[str, Any], section: Any, key: str, name: str, builtin: bool) -> None:
    """A list section (gpus, servers) into `merged` by id: an override's entry merges over the
    built-in one of its id, its price records replacing theirs; an id listed twice is refused."""
    if not isinstance(section, list):
        raise InputError(f"{name}: `{key}` must be a list of entries, each with an `id`", file=name, field=key)
    for entry_index, entry in enumerate(section):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise InputError(
                f"{name}: {key}[{entry_index}] must be a mapping with an `id`", file=name, field=f"{key}[{entry_index}]"
            )
        item_id = entry["id"]
        if any(isinstance(e, dict) and e.get("id") == item_id for e in section[:entry_index]):
            raise InputError(
                f"{name}: {key}[{entry_index}]: {item_id!r} is listed twice; merge the two entries",
                file=name,
                field=f"{key}[{entry_index}]",
            )
        if item_id in merged and not builtin:
            merged[item_id] = replace_price_records(_deep_merge(merged[item_id], entry), entry)
        else:
            merged[item_id] = copy.deepcopy(entry)


def _merge_mapping(merged: dict[str, Any], section: Any, key: str, name: str, builtin: bool) -> None:
    """A mapping section (models, sources, ...) into `merged`: an override's entry merges key by
    key over the built-in one of its id."""
    if not isinstance(section, dict):
        raise InputError(f"{name}: `{key}` must be a mapping of id to entry", file=name, field=key)
    for item_id, entry in section.items():
        if item_id in merged and isinstance(entry, dict) and not builtin:
            merged[item_id] = _deep_merge(merged[item_id], entry)
        else:
            merged[item_id] = copy.deepcopy(entry)


def _deep_merge(base: Any, over: Any) -> Any:
    """Mappings merge key by key; anything else (numbers, lists) replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _deep_merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


_ENTRY_MODELS: tuple[tuple[str, Any, str | None], ...] = (
    ("gpus", GPU, "GPU"),
    ("servers", Server, "server"),
    ("models", ModelPreset, None),
    ("model_aliases", ModelAlias, "model alias"),
    ("sources", Source, None),
    ("assumptions", Assumption, None),
)


def _validate(raw: Raw, name: str) -> Catalog:
    """The merged documents as a Catalog, every check across entries passed (the first failure is
    refused, naming the file and field)."""
    check_sizes(raw, name)
    sections = _validated_entries(raw, name)
    _check_servers(sections, name)
    _check_aliases(sections, name)
    for key in ("gpus", "servers", "models", "assumptions"):
        for item_id, entry in sorted(raw[key].items()):
            _check_cited(entry, f"{key}[{item_id}]", sections, name)
    check_price_sources(sections, name)
    economics = _validated_economics(raw, sections, name)
    keys = gpu_keys({i: g.architecture for i, g in sections["gpus"].items()})
    check_estimator(raw["estimator"], name, set(sections["gpus"]), keys)
    check_lead_times(sections, name)
    _check_cited(raw["estimator"].get("datasheet_derating") or {}, "estimator.datasheet_derating", sections, name)
    check_catalog(sections, name)
    digest = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return Catalog(
        digest=digest,
        estimator=raw["estimator"],
        economics=economics,
        gpus=sections["gpus"],
        servers=sections["servers"],
        models=sections["models"],
        model_aliases=sections["model_aliases"],
        sources=sections["sources"],
        assumptions=sections["assumptions"],
    )


def _validated_entries(raw: Raw, name: str) -> dict[str, dict[str, Any]]:
    """Each entry of each section as its typed model, in id order; the first invalid field refused."""
    sections: dict[str, dict[str, Any]] = {}
    for key, model, label in _ENTRY_MODELS:
        sections[key] = {}
        for item_id, entry in sorted(raw[key].items()):
            try:
                sections[key][item_id] = model.model_validate(entry)
            except ValidationError as exc:
                err = first_error(exc.errors())
                where = loc_text(err["loc"])
                raise InputError(
                    f"{name}: {label or key + ' entry'} {item_id!r}, field {where or '(entry)'}: {describe(err)}",
                    file=name,
                    field=f"{key}[{item_id}].{where}",
                ) from None
    return sections


def _check_servers(sections: dict[str, dict[str, Any]], name: str) -> None:
    """A server's compatible GPUs exist and have the form factor its slots take."""
    gpus = sections["gpus"]
    for sid, server in sections["servers"].items():
        for i, gid in enumerate(server.compatible_gpus or []):
            where = f"servers[{sid}].compatible_gpus[{i}]"
            if gid not in gpus:
                raise InputError(
                    f"{name}: server {sid!r}, field compatible_gpus[{i}]: unknown GPU id {gid!r}{suggest(gid, gpus)}",
                    file=name,
                    field=where,
                )
            if gpus[gid].form_factor != server.gpu_form_factor:
                raise InputError(
                    f"{name}: server {sid!r}, field compatible_gpus[{i}]: {gid} is a "
                    f"{gpus[gid].form_factor} part, but the server takes {server.gpu_form_factor} GPUs",
                    file=name,
                    field=where,
                )


def _check_cited(node: Any, path: str, sections: dict[str, dict[str, Any]], name: str) -> None:
    """Every `source` id cited under `node` (at `path`) is in the sources table."""
    for where, sid in _source_ids(node, path):
        if sid not in sections["sources"]:
            raise InputError(
                f"{name}: {where} cites source {sid!r}, which is not in the sources table"
                f"{suggest(str(sid), sections['sources'])}",
                file=name,
                field=where,
            )


def _validated_economics(raw: Raw, sections: dict[str, dict[str, Any]], name: str) -> Economics | None:
    """The economics section typed, its sources resolved; None when the catalog has none."""
    if raw.get("economics") is None:
        return None
    try:
        economics = Economics.model_validate(raw["economics"])
    except ValidationError as exc:
        err = first_error(exc.errors())
        where = loc_text(err["loc"])
        raise InputError(
            f"{name}: economics, field {where or '(entry)'}: {describe(err)}", file=name, field=f"economics.{where}"
        ) from None
    _check_cited(raw["economics"], "economics", sections, name)
    return economics


def _check_aliases(sections: dict[str, dict[str, Any]], name: str) -> None:
    """An alias names a preset that exists, and is not itself a preset's id."""
    models = sections["models"]
    for alias, entry in sorted(sections["model_aliases"].items()):
        where = f"model_aliases[{alias}]"
        if alias in models:
            raise InputError(
                f"{name}: {where}: {alias!r} is a preset's id; an alias must be another name", file=name, field=where
            )
        if entry.model not in models:
            raise InputError(
                f"{name}: {where}.model: unknown model preset {entry.model!r}{suggest(entry.model, models)}",
                file=name,
                field=f"{where}.model",
            )


def check_lead_times(sections: dict[str, dict[str, Any]], name: str) -> None:
    """Every purchase (a GPU or a server with a price) says how long it takes to arrive: a sourced,
    dated lead time, or `days: null` with a note saying it is unknown. Refused otherwise (exit 2)."""
    for key, label in (("gpus", "GPU"), ("servers", "server")):
        for item_id, entry in sorted(sections[key].items()):
            price = entry.prices.purchase if key == "gpus" else entry.purchase
            if price is not None and price.usd is not None and entry.lead_time is None:
                raise InputError(
                    f"{name}: {label} {item_id!r}, field lead_time: a part with a purchase price needs its "
                    "lead time, {days: N, as_of: YYYY-MM, confidence: high|medium|low, source: [id]}, or "
                    "{days: null, note: why it is unknown}",
                    file=name,
                    field=f"{key}[{item_id}].lead_time",
                )


def _source_ids(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Yield (path, source id) for every `source:` list inside an entry."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "source":
                for sid in v if isinstance(v, list) else [v]:
                    yield f"{path}.source", sid
            else:
                yield from _source_ids(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _source_ids(v, f"{path}[{i}]")


def load_catalog(override: str | Path | None = None) -> Catalog:
    """The built-in catalog, with `override` (a user's YAML file) merged over it."""
    raw, builtin = _builtin()
    if override is None:
        return builtin
    marks: Marks = {}
    doc = load_yaml_file(override, "catalog file", marks=marks)
    name = str(override)
    try:
        _merge_document(raw, doc or {}, name)
        return _validate(raw, name)
    except InputError as exc:  # at the line the field is written on, as a workload's errors are
        raise exc.at(written_at(doc, marks, exc.field) if exc.field else None) from None
