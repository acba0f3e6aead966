"""The catalog: accelerators, servers, prices, model presets and operating assumptions, every
figure sourced.

Loads catalog/*.yaml (shipped with the package), merges a user's override file over it
(`--catalog FILE`: a negotiated price, a GPU we lack; mappings merge key by key, lists replace)
and checks that every `source` id resolves to a URL. Unknown figures stay `null` with a note;
nothing is guessed. `Catalog.servers_for(gpu, context)` says which servers a bought GPU goes into.
"""
from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from advisor.data.bounds import check_catalog, check_sizes
from advisor.data.economics import Economics
from advisor.data.resources import data_dir
from advisor.errors import InputError, describe, first_error, show, suggest
from advisor.inputs.loader import load_yaml_file

PRECISIONS = ("bf16", "fp16", "fp8")
MAX_FIGURE = 1e9   # no sourced figure (GB, GB/s, TFLOPs, W, mm², TPP) comes near this
MAX_USD = 1e8      # per GPU, or per GPU-hour
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def parse_as_of(text: str | None) -> dt.date | None:
    """'2023-08' -> 2023-08-01; '2024' -> 2024-01-01; None stays None."""
    if text is None:
        return None
    parts = [int(p) for p in text.split("-")] + [1, 1]
    return dt.date(parts[0], parts[1], parts[2])


STALE_MONTHS = 18   # a price older than this, against the as-of date, is flagged


def age_months(as_of: str | None, today: dt.date) -> int | None:
    """Whole calendar months from a YYYY[-MM[-DD]] date to `today` (None when undated)."""
    day = parse_as_of(as_of)
    if day is None:
        return None
    return (today.year - day.year) * 12 + today.month - day.month


def _check_date(value: str | None) -> str | None:
    if value is not None and not _DATE.match(value):
        raise ValueError(f"a date is written YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}")
    if value is not None:
        parse_as_of(value)  # raises on month 13 and the like
    return value


class _Sourced(_Strict):
    """A value with where it came from. A known value cites at least one source; `value: null`
    needs a note saying why it is unknown (and may cite where it was looked for)."""

    source: list[str] = []
    note: str | None = None

    @model_validator(mode="after")
    def _sourced(self):
        if self.value is None and not self.note:
            raise ValueError("value is null, so a note must say why it is unknown")
        if self.value is not None and not self.source:
            raise ValueError("a known value must cite at least one source id")
        return self


class Figure(_Sourced):
    """One number with where it came from."""

    value: float | None = Field(ge=0, le=MAX_FIGURE)


class FlagFigure(_Sourced):
    value: bool | None


class CoolingFigure(_Sourced):
    """How the card is cooled, as its datasheet says: passive (a heat sink that needs a server's
    airflow), active (its own fans) or liquid (needs a facility with liquid cooling)."""

    value: Literal["passive", "active", "liquid"] | None


class DateFigure(_Sourced):
    value: str | None

    _v = field_validator("value")(_check_date)


def _positive_figure(fig: Figure) -> Figure:
    if fig.value is not None and fig.value <= 0:
        raise ValueError(f"must be positive, got {fig.value:g}")
    return fig


CONFIDENCE = ("high", "medium", "low")
Confidence = Literal["high", "medium", "low"]
RENT_KINDS = ("on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block", "marketplace", "serverless")
_RENT_ALIASES = {"interruptible": "spot", "reserved": "reserved_1y"}   # names used before issue 14


class Purchase(_Strict):
    """What one unit costs to buy, when, in what condition and who said so. `confidence`: how far
    a finance reader may trust it (high: vendor or price catalog; medium: trade press, analyst
    data; low: aggregator, forum, single unsourced estimate)."""

    usd: float | None = Field(gt=0, le=MAX_USD)
    as_of: str | None
    kind: Literal["msrp", "list", "street", "estimate", "quote"] | None = None
    condition: Literal["new", "used", "refurbished"] = "new"
    confidence: Confidence | None = None
    usd_range: tuple[float, float] | None = None
    warranty: str | None = None
    source: list[str] = []
    note: str | None = None

    _v = field_validator("as_of")(_check_date)

    @model_validator(mode="after")
    def _dated(self):
        if self.usd is not None:
            if self.as_of is None:
                raise ValueError("a purchase price needs as_of (the date it was valid)")
            if not self.source:
                raise ValueError("a purchase price must cite at least one source id")
            if self.confidence is None:
                raise ValueError("a purchase price needs confidence: high, medium or low")
            if self.condition != "new" and not self.warranty:
                raise ValueError(f"a {self.condition} purchase needs a warranty caveat (who, if anyone, warrants it)")
        elif not self.note:
            raise ValueError("usd is null, so a note must say why it is unknown")
        if self.usd_range is not None and not 0 < self.usd_range[0] <= self.usd_range[1] <= MAX_USD:
            raise ValueError("usd_range is [low, high] with 0 < low <= high")
        return self


class Interruption(_Strict):
    """How often a spot instance is taken back: the band of the share of instances interrupted per
    `period_days`, as a provider's spot advisor prints it."""

    rate_low: float = Field(ge=0, le=1)
    rate_high: float = Field(ge=0, le=1)
    period_days: float = Field(gt=0, le=366)
    as_of: str | None = None
    confidence: Confidence
    source: list[str] = Field(min_length=1)
    note: str | None = None

    _v = field_validator("as_of")(_check_date)


class RentalOffer(_Strict):
    """One provider's price for a GPU-hour, of one kind (`pricing`). An undated listing (`as_of:
    null`, with a note) is documentation, never planned on. The smallest rentable block is
    `gpus_per_node` x `min_nodes`; `billing_hours` is the billing granularity (null: not sourced)."""

    provider: str
    usd_per_gpu_hour: float = Field(gt=0, le=MAX_USD)
    as_of: str | None
    pricing: Literal["on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block", "marketplace",
                     "serverless"]
    confidence: Confidence
    source: list[str] = Field(min_length=1)
    region: str | None = None
    gpus_per_node: int | None = Field(default=None, ge=1, le=1024)
    min_nodes: int = Field(default=1, ge=1, le=100_000)
    billing_hours: float | None = Field(default=None, gt=0, le=8784)
    interruption: Interruption | None = None
    note: str | None = None

    _v = field_validator("as_of")(_check_date)

    @model_validator(mode="before")
    @classmethod
    def _old_kind_names(cls, data):
        if isinstance(data, dict) and data.get("pricing") in _RENT_ALIASES:
            data = {**data, "pricing": _RENT_ALIASES[data["pricing"]]}
        return data

    @model_validator(mode="after")
    def _checks(self):
        if self.as_of is None and not self.note:
            raise ValueError("as_of is null, so a note must say why the offer is undated")
        if self.interruption is not None and self.pricing not in ("spot", "marketplace"):
            raise ValueError("only a spot or marketplace offer has an interruption rate")
        return self

    @property
    def min_gpus(self) -> int:
        """The smallest number of GPUs one can rent at this price."""
        return (self.gpus_per_node or 1) * self.min_nodes


class EndOfLife(_Strict):
    """A part no longer made: since when, and whether it can still be bought new."""

    value: str | None
    new_purchase: Literal["available", "limited", "unavailable"]
    confidence: Confidence
    source: list[str] = Field(min_length=1)
    note: str | None = None

    _v = field_validator("value")(_check_date)


class Prices(_Strict):
    """`purchase` is the record plans use; `other_purchases` holds earlier and used-market records
    (`--as-of` falls back to them); `rent` holds rental offers of every kind."""

    purchase: Purchase | None = None
    other_purchases: list[Purchase] = []
    rent: list[RentalOffer] = []


class Interconnect(_Strict):
    link: Literal["nvlink", "infinity_fabric", "roce", "ici", "none"]
    link_gbps: Figure
    link_domain: Figure
    p2p: FlagFigure
    pcie_gen: int | None = None
    pcie_gbps: Figure

    @field_validator("link_gbps", "pcie_gbps")
    @classmethod
    def _positive(cls, fig: Figure) -> Figure:
        return _positive_figure(fig)

    @field_validator("link_domain")
    @classmethod
    def _at_least_one(cls, fig: Figure) -> Figure:
        if fig.value is not None and fig.value < 1:
            raise ValueError(f"must be at least 1, got {fig.value:g}")
        return fig


class GPU(_Strict):
    """One accelerator as the estimate, the rules and the optimizer see it."""

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9.]+)*$")
    name: str
    vendor: str
    architecture: str | None = None
    product_class: Literal["consumer", "workstation", "datacenter", "cloud_only"]
    brand: str | None = None
    form_factor: Literal["pcie", "sxm", "oam", "cloud"]
    launch: DateFigure
    memory_gb: Figure
    memory_bandwidth_gbps: Figure
    tensor_tflops: dict[str, Figure]
    fp32_tflops: Figure
    interconnect: Interconnect
    tdp_w: Figure
    die_area_mm2: Figure
    tpp: Figure
    performance_density: Figure
    prices: Prices
    end_of_life: EndOfLife | None = None
    cooling: CoolingFigure | None = None
    note: str | None = None

    @field_validator("memory_gb", "memory_bandwidth_gbps", "fp32_tflops", "tdp_w", "die_area_mm2", "tpp",
                     "performance_density")
    @classmethod
    def _positive(cls, fig: Figure) -> Figure:
        return _positive_figure(fig)

    @field_validator("tensor_tflops")
    @classmethod
    def _positive_rates(cls, rates: dict) -> dict:
        for key, fig in rates.items():
            if fig.value is not None and fig.value <= 0:
                raise ValueError(f"{key} must be positive, got {fig.value:g}")
        return rates

    def dense_tflops(self, precision: str) -> float | None:
        """Dense tensor rate a training job gets at `precision` (FP32 accumulate), or None."""
        fig = self.tensor_tflops.get(precision)
        return fig.value if fig else None

    @property
    def purchase_usd(self) -> float | None:
        p = self.prices.purchase
        return p.usd if p else None

    @property
    def rental(self) -> RentalOffer | None:
        """The cheapest dated on-demand offer (interruptible bids, marketplace medians and undated
        listings are not plans)."""
        offers = [o for o in self.prices.rent if o.pricing == "on_demand" and o.as_of is not None]
        return min(offers, key=lambda o: (o.usd_per_gpu_hour, o.provider)) if offers else None

    def rentals(self, pricing: str) -> list[RentalOffer]:
        """Dated offers of one kind (on_demand, reserved_1y, reserved_3y, spot, capacity_block, ...),
        cheapest first: what the economics layer prices rental kinds with."""
        offers = [o for o in self.prices.rent if o.pricing == pricing and o.as_of is not None]
        return sorted(offers, key=lambda o: (o.usd_per_gpu_hour, o.provider))

    @property
    def availability(self) -> str:
        """'buy and rent', 'buy only', 'rent only' or 'neither', from the prices the catalog holds."""
        buy, rent = self.purchase_usd is not None, self.rental is not None
        return {(True, True): "buy and rent", (True, False): "buy only",
                (False, True): "rent only", (False, False): "neither"}[(buy, rent)]


class ModelPreset(_Strict):
    params: int = Field(gt=0)
    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int | None = None
    ffn: int | None = None
    vocab: int = Field(gt=0)
    seq_len: int = Field(gt=0)
    tied_embeddings: bool = False
    source: list[str] = Field(min_length=1)


SOURCE_KINDS = ("primary", "secondary", "tertiary", "derived", "assumption")


class Source(_Strict):
    """Where figures were read. `kind` grades it (catalog/README.md, "Sources"): primary = vendor
    document, price catalog, filing, official statistics; secondary = trade press, analyst data;
    tertiary = aggregator, forum, a page that merely mentions the figure; derived / assumption for
    our own arithmetic and assumptions. `form` keeps the finer description (vendor_copy, ...)."""

    url: str
    title: str | None = None
    kind: Literal["primary", "secondary", "tertiary", "derived", "assumption"]
    form: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_kind(cls, data):
        from advisor.data.market import LEGACY_KINDS

        if isinstance(data, dict) and data.get("kind") in LEGACY_KINDS:
            data = {**data, "kind": LEGACY_KINDS[data["kind"]], "form": data.get("form") or data["kind"]}
        return data


class Assumption(Figure):
    """An operating assumption (electricity price, PUE, hosting rate) a workload may override."""

    as_of: str | None = None
    unit: str

    _v = field_validator("as_of")(_check_date)


class Server(_Strict):
    """What surrounds purchased GPUs: a workstation, a PCIe server, an HGX (SXM) or OAM platform.

    `purchase` is the price WITHOUT GPUs (the GPUs are priced in gpus.yaml); a GPU is bought as a
    usable unit only together with a server that takes it (`Catalog.servers_for`). `gpu_slots` is
    how many GPUs one server holds; `compatible_gpus` lists the GPU ids it takes (null: any GPU of
    `gpu_form_factor`). `power_overhead_w` is the non-GPU draw of one server at full load;
    `network_usd_per_server` and `network_gbps_per_server` (GB/s, total bidirectional, like every
    bandwidth in the catalog) are the scale-out network each server needs when a job spans servers.
    """

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9.]+)*$")
    name: str
    kind: Literal["workstation", "pcie-server", "hgx", "oam-platform"]
    gpu_form_factor: Literal["pcie", "sxm", "oam"]
    gpu_slots: int = Field(gt=0)
    compatible_gpus: list[str] | None = None
    contexts: list[Literal["office", "datacenter"]] = Field(min_length=1)
    purchase: Purchase
    other_purchases: list[Purchase] = []
    power_overhead_w: Figure
    network_usd_per_server: Figure
    network_gbps_per_server: Figure
    note: str | None = None

    @field_validator("power_overhead_w", "network_usd_per_server", "network_gbps_per_server")
    @classmethod
    def _not_negative(cls, fig: Figure) -> Figure:
        if fig.value is not None and fig.value < 0:
            raise ValueError(f"must not be negative, got {fig.value:g}")
        return fig

    def takes(self, gpu: GPU) -> bool:
        """Whether this server holds `gpu` (form factor, and the compatibility list when given)."""
        if gpu.form_factor != self.gpu_form_factor:
            return False
        return self.compatible_gpus is None or gpu.id in self.compatible_gpus


class Catalog(_Strict):
    gpus: dict[str, GPU]
    servers: dict[str, Server] = {}
    models: dict[str, ModelPreset]
    sources: dict[str, Source]
    assumptions: dict[str, Assumption]
    estimator: dict
    digest: str
    economics: Economics | None = None
    as_of: dt.date | None = None                 # set by at(): the day prices were cut off
    ignored_after_as_of: list[dict] = []         # what at() dropped: [{entry, field, as_of, message}]

    def at(self, day: dt.date | None) -> "Catalog":
        """The catalog as it stood on `day`: prices and parts dated later are dropped (a price falls
        back to the newest earlier record), and `ignored_after_as_of` says which."""
        from advisor.data.market import catalog_at

        return self if day is None or day == self.as_of else catalog_at(self, day)

    def gpu(self, gpu_id: str) -> GPU:
        try:
            return self.gpus[gpu_id]
        except KeyError:
            raise InputError(f"unknown GPU id {gpu_id!r}{suggest(gpu_id, self.gpus)}; "
                             f"known ids: {', '.join(sorted(self.gpus))}", field="gpu") from None

    def assumption(self, key: str) -> Assumption:
        return self.assumptions[key]

    def servers_for(self, gpu_id: str, context: str) -> list[Server]:
        """Servers that take GPU `gpu_id` and may stand in `context` (office | datacenter), by id.
        Empty for a GPU no catalog server takes: it cannot be bought as a usable unit."""
        gpu = self.gpu(gpu_id)
        return [self.servers[sid] for sid in sorted(self.servers)
                if context in self.servers[sid].contexts and self.servers[sid].takes(gpu)]

    def source_refs(self, ids) -> list[dict]:
        """[{id, url, title}] for the given source ids, sorted, unknown ids skipped."""
        out = []
        for sid in sorted(set(ids)):
            src = self.sources.get(sid)
            if src is not None:
                out.append({"id": sid, "url": src.url, "title": src.title})
        return out


# ----------------------------------------------------------------------------- loading

_FILES = ("gpus.yaml", "servers.yaml", "models.yaml", "sources.yaml", "assumptions.yaml", "estimator.yaml",
          "economics.yaml")
_LISTS = ("gpus", "servers")                    # lists of entries, each with an `id`
_MAPPINGS = ("models", "sources", "assumptions", "estimator")   # mappings of id to entry


def _builtin_raw() -> dict:
    folder = data_dir("catalog")
    raw: dict = {key: {} for key in _LISTS + _MAPPINGS}
    for name in _FILES:
        doc = load_yaml_file(folder / name, "catalog file", shipped=True) or {}
        if name == "economics.yaml":
            raw["economics"] = doc.get("economics") if isinstance(doc, dict) else doc
            continue
        _merge_document(raw, doc, str(folder / name), builtin=True)
    return raw


def _builtin() -> tuple[dict, Catalog]:
    """(the merged raw documents, the validated catalog) of the shipped files, compiled once
    (data/compiled.py); the raw form is what a --catalog override merges over."""
    from advisor.data.compiled import compiled

    def build() -> tuple[dict, Catalog]:
        raw = _builtin_raw()
        return raw, _validate(copy.deepcopy(raw), "built-in catalog")

    folder = data_dir("catalog")
    return compiled("catalog", [folder / name for name in _FILES], build)


def _merge_document(raw: dict, doc, name: str, builtin: bool = False) -> None:
    """Merge one catalog document (built-in file or user override) into `raw`."""
    if not isinstance(doc, dict):
        raise InputError(f"{name}: a catalog file is a mapping with keys gpus, servers, models, sources, "
                         "assumptions", file=name)
    if name.endswith("sources.yaml") and builtin:
        doc = {"sources": doc}
    allowed = {"schema_version", *_LISTS, *_MAPPINGS}
    for key in doc:
        if key not in allowed:
            raise InputError(f"{name}: unknown top-level key {key!r}{suggest(str(key), allowed)}; "
                             f"allowed: {', '.join(sorted(allowed))}", file=name, field=str(key))
    if not builtin:
        from advisor.data.market import normalize_override

        doc = normalize_override(doc, name)
    for key in _LISTS:
        section = doc.get(key) or []
        if not isinstance(section, list):
            raise InputError(f"{name}: `{key}` must be a list of entries, each with an `id`", file=name, field=key)
        for entry_index, entry in enumerate(section):
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                raise InputError(f"{name}: {key}[{entry_index}] must be a mapping with an `id`", file=name,
                                 field=f"{key}[{entry_index}]")
            item_id = entry["id"]
            if any(isinstance(e, dict) and e.get("id") == item_id for e in section[:entry_index]):
                raise InputError(f"{name}: {key}[{entry_index}]: {item_id!r} is listed twice; merge the two entries",
                                 file=name, field=f"{key}[{entry_index}]")
            if item_id in raw[key] and not builtin:
                from advisor.data.market import replace_price_records

                raw[key][item_id] = replace_price_records(_deep_merge(raw[key][item_id], entry), entry)
            else:
                raw[key][item_id] = copy.deepcopy(entry)
    for key in _MAPPINGS:
        section = doc.get(key) or {}
        if not isinstance(section, dict):
            raise InputError(f"{name}: `{key}` must be a mapping of id to entry", file=name, field=key)
        for item_id, entry in section.items():
            if item_id in raw[key] and isinstance(entry, dict) and not builtin:
                raw[key][item_id] = _deep_merge(raw[key][item_id], entry)
            else:
                raw[key][item_id] = copy.deepcopy(entry)


def _deep_merge(base, over):
    """Mappings merge key by key; anything else (numbers, lists) replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _deep_merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


def _loc(loc: tuple) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _validate(raw: dict, name: str) -> Catalog:
    check_sizes(raw, name)
    sections: dict[str, dict] = {}
    for key, model, label in (("gpus", GPU, "GPU"), ("servers", Server, "server"), ("models", ModelPreset, None),
                              ("sources", Source, None), ("assumptions", Assumption, None)):
        sections[key] = {}
        for item_id, entry in sorted(raw[key].items()):
            try:
                sections[key][item_id] = model.model_validate(entry)
            except ValidationError as exc:
                err = first_error(exc.errors())
                where = _loc(err["loc"])
                raise InputError(f"{name}: {label or key + ' entry'} {item_id!r}, field {where or '(entry)'}: "
                                 f"{describe(err)}", file=name, field=f"{key}[{item_id}].{where}") from None
    gpus = sections["gpus"]
    for sid, server in sections["servers"].items():
        for i, gid in enumerate(server.compatible_gpus or []):
            where = f"servers[{sid}].compatible_gpus[{i}]"
            if gid not in gpus:
                raise InputError(f"{name}: server {sid!r}, field compatible_gpus[{i}]: unknown GPU id {gid!r}"
                                 f"{suggest(gid, gpus)}", file=name, field=where)
            if gpus[gid].form_factor != server.gpu_form_factor:
                raise InputError(f"{name}: server {sid!r}, field compatible_gpus[{i}]: {gid} is a "
                                 f"{gpus[gid].form_factor} part, but the server takes {server.gpu_form_factor} GPUs",
                                 file=name, field=where)
    for key in ("gpus", "servers", "models", "assumptions"):
        for item_id, entry in sorted(raw[key].items()):
            for path, sid in _source_ids(entry, f"{key}[{item_id}]"):
                if sid not in sections["sources"]:
                    raise InputError(f"{name}: {path} cites source {sid!r}, which is not in the sources table"
                                     f"{suggest(str(sid), sections['sources'])}", file=name, field=path)
    from advisor.data.market import check_price_sources

    check_price_sources(sections, name)
    economics = None
    if raw.get("economics") is not None:
        try:
            economics = Economics.model_validate(raw["economics"])
        except ValidationError as exc:
            err = first_error(exc.errors())
            where = _loc(err["loc"])
            raise InputError(f"{name}: economics, field {where or '(entry)'}: {describe(err)}", file=name,
                             field=f"economics.{where}") from None
        for path, sid in _source_ids(raw["economics"], "economics"):
            if sid not in sections["sources"]:
                raise InputError(f"{name}: {path} cites source {sid!r}, which is not in the sources table"
                                 f"{suggest(str(sid), sections['sources'])}", file=name, field=path)
    _check_estimator(raw["estimator"], name)
    check_catalog(sections, name)
    digest = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return Catalog(digest=digest, estimator=raw["estimator"], economics=economics, **sections)


def _check_estimator(values: dict, name: str) -> None:
    """The estimator's parameters have the kinds estimate.Params declares: whole numbers above zero,
    lists of [number, number] pairs, and otherwise finite numbers at or above zero or (nested)
    mappings of them."""
    import dataclasses
    import math

    from advisor.data.estimator import Params

    def number(x):
        return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) and 0 <= x <= 1e18

    def tree(x):  # a number, or a mapping (per GPU family, id or precision) of such trees
        return number(x) or (isinstance(x, dict) and bool(x) and all(map(tree, x.values())))

    checks = {"int": ("a whole number above zero", lambda x: number(x) and isinstance(x, int) and x >= 1),
              "list": ("a list of [number, number] pairs",
                       lambda x: isinstance(x, list) and all(isinstance(p, list) and len(p) == 2
                                                             and all(map(number, p)) for p in x))}
    numbers = ("a finite number at or above zero, or a mapping of names to such numbers", tree)
    kinds = {f.name: str(f.type) for f in dataclasses.fields(Params)}
    for key, value in values.items():
        if key not in kinds:
            raise InputError(f"{name}: `estimator.{key}` is not a parameter of the estimator{suggest(key, kinds)}; "
                             f"parameters: {', '.join(kinds)}", file=name, field=f"estimator.{key}")
        what, ok = checks.get(kinds[key], numbers)
        if not ok(value):
            raise InputError(f"{name}: `estimator.{key}` must be {what} (given {show(value)})",
                             file=name, field=f"estimator.{key}")


def _source_ids(node, path: str):
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
    doc = load_yaml_file(override, "catalog file")
    name = str(override)
    _merge_document(raw, doc or {}, name)
    return _validate(raw, name)
