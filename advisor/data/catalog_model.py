"""The catalog as one object: every entry by id, the economics data, and the queries plans make of
it (`Catalog.gpu`, `servers_for`, `source_refs`), and the catalog as it stood on an `--as-of` day
(later prices and parts dropped, and said so)."""

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from advisor.data.catalog_entries import GPU, Assumption, ModelAlias, ModelPreset, Server, Source
from advisor.data.catalog_figures import parse_as_of
from advisor.data.catalog_prices import Purchase
from advisor.data.economics import Economics
from advisor.errors import InputError, suggest
from advisor.inputs.strict import Strict


class Catalog(Strict):
    gpus: dict[str, GPU]
    servers: dict[str, Server] = {}
    models: dict[str, ModelPreset]
    model_aliases: dict[str, ModelAlias] = {}
    sources: dict[str, Source]
    assumptions: dict[str, Assumption]
    estimator: dict[str, Any]
    digest: str
    economics: Economics | None = None
    as_of: dt.date | None = None  # set by at(): the day prices were cut off
    ignored_after_as_of: list[dict[str, Any]] = []  # what at() dropped: [{entry, field, as_of, message}]

    def at(self, day: dt.date | None) -> "Catalog":
        """The catalog as it stood on `day`: prices and parts dated later are dropped (a price falls
        back to the newest earlier record), and `ignored_after_as_of` says which."""
        return self if day is None or day == self.as_of else catalog_at(self, day)

    def gpu(self, gpu_id: str) -> GPU:
        try:
            return self.gpus[gpu_id]
        except KeyError:
            raise InputError(
                f"unknown GPU id {gpu_id!r}{suggest(gpu_id, self.gpus)}; known ids: {', '.join(sorted(self.gpus))}",
                field="gpu",
            ) from None

    def model_id(self, name: str) -> str:
        """The preset id `name` means (itself, or the preset an alias stands for); an InputError
        naming the close matches when it is neither."""
        key = str(name).lower()
        if key in self.models:
            return key
        if key in self.model_aliases:
            return self.model_aliases[key].model
        known = list(self.models) + list(self.model_aliases)
        raise InputError(
            f"unknown model preset {name!r}{suggest(key, known)}; `advisor models` lists them", field="model"
        )

    def preset(self, name: str) -> ModelPreset:
        """A preset by id or alias (see model_id)."""
        return self.models[self.model_id(name)]

    def assumption(self, key: str) -> Assumption:
        return self.assumptions[key]

    def servers_for(self, gpu_id: str, context: str) -> list[Server]:
        """Servers that take GPU `gpu_id` and may stand in `context` (office | datacenter), by id.
        Empty for a GPU no catalog server takes: it cannot be bought as a usable unit."""
        gpu = self.gpu(gpu_id)
        return [
            self.servers[sid]
            for sid in sorted(self.servers)
            if context in self.servers[sid].contexts and self.servers[sid].takes(gpu)
        ]

    def source_refs(self, ids: Iterable[str]) -> list[dict[str, str | None]]:
        """[{id, url, title}] for the given source ids, sorted, unknown ids skipped."""
        out = []
        for sid in sorted(set(ids)):
            src = self.sources.get(sid)
            if src is not None:
                out.append({"id": sid, "url": src.url, "title": src.title})
        return out


# ----------------------------------------------------------------------------- --as-of


def _after(as_of: str | None, day: dt.date) -> bool:
    d = parse_as_of(as_of)
    return d is not None and d > day


def _pick(current: Any, others: list[Any], day: dt.date, eol_new_unavailable: bool) -> Any:
    """The record plans use on `day`: the current one if dated on or before it, else the newest
    earlier record of the same condition, else the newest earlier record of any condition. Past an end
    of life no new part is sold, except on a quote: a part quoted new (an override's price) is on offer."""

    def ok(p: Any) -> bool:
        return (
            p is not None
            and p.usd is not None
            and not _after(p.as_of, day)
            and not (eol_new_unavailable and p.condition == "new" and p.kind != "quote")
        )

    if current is not None and (current.usd is None or ok(current)):
        return current
    earlier = sorted((p for p in others if ok(p)), key=lambda p: parse_as_of(p.as_of) or dt.date.min, reverse=True)
    same = [p for p in earlier if current is None or p.condition == current.condition]
    return (same or earlier or [None])[0]


def _no_price(day: dt.date, why: str) -> Purchase:
    return Purchase(usd=None, as_of=None, note=f"no purchase price dated on or before {day.isoformat()}: {why}")


def _none_on(day: dt.date, p: Purchase, eol_gone: str | None) -> Purchase:
    """The unknown price of a part none of whose records is used on `day`, saying why: its prices are
    later, or (`eol_gone`: the end of life past) a new part is no longer sold."""
    if eol_gone is not None and p.usd is not None and not _after(p.as_of, day):  # left out for the end of life
        return Purchase(
            usd=None,
            as_of=None,
            note=f"no purchase price as of {day.isoformat()}: new parts are not sold after its end of life "
            f"({eol_gone}); give a used price, or a quote, with --catalog",
        )
    return _no_price(day, "the catalog's prices are all later")


Drop = Callable[[str, str, str | None, str], None]  # (entry, field, as_of, what): records what at() left out


def catalog_at(catalog: Catalog, day: dt.date) -> Catalog:
    """See Catalog.at. A GPU launched after `day` keeps its specs but loses every price."""
    ignored: list[dict] = []

    def drop(entry: str, field: str, as_of: str | None, what: str) -> None:
        ignored.append(
            {
                "entry": entry,
                "field": field,
                "as_of": as_of,
                "message": f"{what} dated {as_of} is after {day.isoformat()} and was not used",
            }
        )

    gpus = {gid: _gpu_at(gid, g, day, drop) for gid, g in catalog.gpus.items()}
    servers = {sid: _server_at(sid, s, day, drop) for sid, s in catalog.servers.items()}
    return catalog.model_copy(update={"gpus": gpus, "servers": servers, "as_of": day, "ignored_after_as_of": ignored})


def _gpu_at(gid: str, g: GPU, day: dt.date, drop: Drop) -> GPU:
    """A GPU's prices as of `day`: none before its launch; else the purchase record of that day
    (no new part past an end of life), and the rental offers dated by then."""
    launch = parse_as_of(g.launch.value)
    if launch is not None and launch > day:
        drop(gid, "launch", g.launch.value, f"{g.name} (launched {g.launch.value}) is not offered: its launch")
        return g.model_copy(
            update={
                "prices": g.prices.model_copy(
                    update={"purchase": _no_price(day, f"{g.name} launched later"), "other_purchases": [], "rent": []}
                )
            }
        )
    eol = g.end_of_life
    eol_gone = (
        eol is not None and eol.new_purchase == "unavailable" and not _after(eol.value, day) and eol.value is not None
    )
    p = g.prices.purchase
    chosen = _pick(p, g.prices.other_purchases, day, eol_gone)
    if p is not None and p.usd is not None and chosen is not p and _after(p.as_of, day):
        drop(gid, "prices.purchase", p.as_of, f"{g.name}'s purchase price (${p.usd:,.0f})")
    if chosen is None and p is not None:
        chosen = _none_on(day, p, eol.value if eol is not None and eol_gone else None)
    rent = [o for o in g.prices.rent if not _after(o.as_of, day)]
    for o in g.prices.rent:
        if o not in rent:
            drop(
                gid,
                "prices.rent",
                o.as_of,
                f"{g.name}'s {o.pricing} rate at {o.provider} (${o.usd_per_gpu_hour:g}/GPU-h)",
            )
    others = [q for q in g.prices.other_purchases if q is not chosen and not _after(q.as_of, day)]
    return g.model_copy(
        update={"prices": g.prices.model_copy(update={"purchase": chosen, "other_purchases": others, "rent": rent})}
    )


def _server_at(sid: str, s: Server, day: dt.date, drop: Drop) -> Server:
    """A server's purchase record as of `day` (none dated by then: unknown, ask for a quote)."""
    chosen = _pick(s.purchase, s.other_purchases, day, False)
    if s.purchase.usd is not None and chosen is not s.purchase and _after(s.purchase.as_of, day):
        drop(sid, "purchase", s.purchase.as_of, f"{s.name}'s price (${s.purchase.usd:,.0f})")
    chosen = chosen or _no_price(day, "the catalog's prices are all later; give a quote with --catalog")
    return s.model_copy(
        update={
            "purchase": chosen,
            "other_purchases": [q for q in s.other_purchases if q is not chosen and not _after(q.as_of, day)],
        }
    )
