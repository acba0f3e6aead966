"""A request for quotation (`advisor rfq`): the plan as what a buyer sends to vendors and providers.

First the inputs worth confirming in the quote (the plan's `decision.verify`, most valuable first),
then one item per GPU type bought or rented with the specification that matters (the exact variant,
memory, interconnect, node size and fabric where the plan has them), the servers, NICs, fabric and
storage the bill of materials buys, the quantity, the term, the
latest date it must be working (from the deadline and the run time at the workload's confidence)
and for hardware bought the order-by date (present/rfq_dates.py), and the export and licence notes the plan cites.
Renders a typed Plan and its PlanContext only (Markdown or CSV); nothing is solved here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.costs import PurchaseItem
from advisor.durations import duration
from advisor.inputs.arguments import output_file
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.present.escape import md
from advisor.present.grid import csv_text, markdown
from advisor.present.memo import output_format, write_atomically
from advisor.present.memo_costs import billed_gpus, billed_hours
from advisor.present.rfq_dates import latest_date, server_date
from advisor.present.words import plural, quoted_rate, unit_rate, usd

SUFFIXES = {".md": "md", ".markdown": "md", ".csv": "csv"}
TOP_VERIFY = 3  # the verify items an RFQ asks about first
COLUMNS = [
    "section",
    "item",
    "gpu",
    "specification",
    "quantity",
    "ownership",
    "term",
    "latest_date",
    "date_basis",
    "notes",
]


@dataclass(frozen=True)
class Document:
    """A rendered request for quotation: `format` (md or csv) and its bytes."""

    format: str
    content: bytes

    def __repr__(self) -> str:
        return f"<RFQ {self.format}, {len(self.content):,} bytes>"

    @property
    def text(self) -> str:
        return self.content.decode("utf-8")

    def write(self, path: str | Path, *, force: bool = False) -> Path:
        """Write to `path` atomically; an existing file or a link is replaced only with force=True."""
        target = output_file(path, "output", force)
        write_atomically(target, self.content)
        return target


def format_for(path: str | Path, fmt: str | None = None) -> str:
    """The RFQ format: `fmt` if given, else from the file's suffix (.md or .csv)."""
    return output_format(path, fmt, "rfq", SUFFIXES)


def specification(item: PurchaseItem, ctx: PlanContext) -> str:
    """'NVIDIA H100 SXM5 80GB (h100-sxm): 80 GB memory, SXM, NVLink 900 GB/s (8-GPU domain), 8 GPUs per
    node, fabric infiniband' -- what a quote must match."""
    g = ctx.catalog.gpus.get(item.gpu)
    if g is None:
        return item.gpu
    parts = [
        f"{g.memory_gb.value:g} GB memory" if g.memory_gb.value else None,
        g.form_factor.upper() if g.form_factor else None,
    ]
    ic = g.interconnect
    if ic.link and ic.link_gbps.value:
        domain = (
            f" ({ic.link_domain.value:g}-GPU domain)" if ic.link_domain is not None and ic.link_domain.value else ""
        )
        parts.append(f"{ic.link.replace('nvlink', 'NVLink')} {ic.link_gbps.value:g} GB/s{domain}")
    elif ic.pcie_gen:
        parts.append(f"PCIe Gen{ic.pcie_gen}")
    node = getattr(item, "gpus_per_node", None) or _node_size(item, ctx)
    if node:
        parts.append(f"{node} GPU{'s' if node != 1 else ''} per node")
    fabric = getattr(item, "fabric", None)
    if fabric:
        parts.append(f"fabric {fabric}")
    if item.ownership == "buy" and item.condition not in (None, "new"):  # the price is a used board's: ask for one
        parts.append(f"{item.condition}, as priced")
    return f"{g.name} ({item.gpu}): " + ", ".join(p for p in parts if p)


def _warranty(ctx: PlanContext, item: PurchaseItem) -> str | None:
    """Who warrants a used or refurbished board the plan priced (the catalog's caveat): a quote must say
    what it covers."""
    g = ctx.catalog.gpus.get(item.gpu)
    if item.ownership != "buy" or item.condition in (None, "new") or g is None:
        return None
    priced = g.prices.purchase
    return f"warranty: {priced.warranty}" if priced is not None and priced.warranty else None


def _node_size(item: PurchaseItem, ctx: PlanContext) -> int | None:
    """A rented item's node size from its offer in the catalog (provider and kind), if listed."""
    g = ctx.catalog.gpus.get(item.gpu)
    if g is None or item.ownership != "rent":
        return None
    offers = [o for o in g.rentals(item.rent_kind or "on_demand") if o.provider == item.provider]
    return offers[0].gpus_per_node if offers and offers[0].gpus_per_node else None


def term(plan: Plan, item: PurchaseItem) -> str:
    months = getattr(item, "term_months", None)
    if item.ownership == "buy":
        resale = next((d.message for d in plan.disposal or [] if d.gpu == item.gpu), None)
        return resale or f"owned over the {plan.assumptions.horizon_months:g}-month horizon"
    kind = (item.rent_kind or "on_demand").replace("_", "-")
    hours = billed_hours(item) if item.gpu_hours else "the serving months"
    until = f", until the bought {item.bridges} arrive ({item.hours or 0:,.0f} h)" if item.use == "bridge" else ""
    return (
        f"{kind}, {hours}, up to {plural(item.count, 'GPU')} at once"
        + billed_gpus(item)
        + (f", {term_phrase(months)}" if months else "")
        + until
    )


def term_phrase(months: float) -> str:
    """The shortest commitment as a buyer writes it: '12-month term', 'shortest term 1 hour' (not
    '0.00136986-month term'), 'shortest term 14 days'."""
    if months >= 1:
        return f"{months:g}-month term"
    hours = round(months * HOURS_PER_MONTH, 3)  # the plan prints months to 7 digits: 1 h is 0.9999978 h
    return f"shortest term {duration(hours, short=True)}"


OFFER_CODES = ("fabric", "quote-needed", "node-size")  # warnings on what a rental offer does not publish


def notes(plan: Plan, ctx: PlanContext, gpu: str, provider: str | None = None) -> str:
    """The plan's rule warnings naming this GPU (id or name): export and licence notes; for a rental
    from `provider`, what its offer does not publish (the fabric's bandwidth the estimate assumes, an
    order above its largest, its node size); for a purchase, the network its servers' entries do not
    source (plan_notes: 'GPU in SERVER:'). The quote must settle them."""
    name = ctx.gpu_name(gpu)
    found = [f"[{w.rule}] {w.message}" for w in plan.warnings if w.rule and (gpu in w.message or name in w.message)]
    # the offer's warnings begin 'GPU at PROVIDER:' (solve/rental_offers.at_offer), a bought server's 'GPU in SERVER:'
    head, codes = (f"{gpu} at {provider}:", OFFER_CODES) if provider else (f"{gpu} in ", ("fabric",))
    found += [w.message for w in plan.warnings if w.code in codes and w.message.startswith(head)]
    return "; ".join(found)


def rows(plan: Plan, ctx: PlanContext) -> list[list[Any]]:
    """The RFQ as rows of COLUMNS: the verify items first, then every item to quote, then servers."""
    out: list[list[Any]] = []
    d = plan.decision
    for v in (d.verify if d is not None else [])[:TOP_VERIFY]:
        out.append(["verify first", v.input, v.gpu, _verify_spec(v), v.count, None, None, None, None, v.message])
    for item in plan.purchase:
        date, basis = latest_date(plan, ctx, item)
        price = (
            f"catalog {quoted_rate(item.unit_price_usd or 0)}/GPU-hour"
            if item.ownership == "rent"
            else f"catalog {usd(item.unit_price_usd)} per GPU"
        )
        out.append(
            [
                "quote",
                f"{item.gpu} ({item.ownership})",
                item.gpu,
                specification(item, ctx),
                item.count,
                item.ownership,
                term(plan, item),
                date,
                basis,
                "; ".join(x for x in (price, _warranty(ctx, item), notes(plan, ctx, item.gpu, item.provider)) if x),
            ]
        )
    for s in plan.servers:
        server = ctx.catalog.servers.get(s.server)
        spec = f"{server.name if server else s.server} holding {ctx.gpu_name(s.gpu)}" + (
            f"; {s.networked} networked" if s.networked else ""
        )
        when, why = server_date(plan, ctx, s)
        out.append(
            ["quote", s.server, s.gpu, spec, s.count, "buy", None, when, why, f"catalog {usd(s.unit_price_usd)} each"]
        )
    return out + _other_hardware(plan, ctx)


OTHER_HARDWARE = {"nic": "per GPU", "fabric": "per GPU", "storage": "per TB"}  # the bill's hardware beyond GPUs
# and servers (BomItem.kind), by the unit of its quantity (economics/purchase_bill.py, solve/ledger.py)


def _other_hardware(plan: Plan, ctx: PlanContext) -> list[list[Any]]:
    """The NICs, the scale-out fabric and the storage the bill of materials buys: quoted with the
    GPUs, in place by the first day any of them must work."""
    # the network and storage serve the GPUs bought (a rented plan keeps its data on bought flash too)
    items = [i for i in plan.purchase if i.ownership == "buy"] or plan.purchase
    dates = sorted((d, b) for d, b in (latest_date(plan, ctx, i) for i in items) if d is not None)
    when, why = (dates[0][0], f"in place when the first GPUs start: {dates[0][1]}") if dates else (None, None)
    return [
        [
            "quote",
            b.item.split(" (")[0],
            None,
            b.item,
            b.quantity,
            "buy",
            None,
            when,
            why,
            f"catalog {usd(b.unit_usd)} {OTHER_HARDWARE[b.kind]}, {b.confidence} confidence"
            if b.unit_usd is not None
            else b.note or "",
        ]
        for b in plan.bill_of_materials
        if b.kind in OTHER_HARDWARE and b.total_usd
    ]


def _shown(kind: str | None, x: float) -> str:
    """A verify value in its unit: a rate per GPU-hour, a price per GPU, a speed as a factor."""
    if kind == "rental_rate":
        return f"{unit_rate(x)}/GPU-hour"
    if kind == "purchase_price":
        return f"{usd(x)} per GPU"
    return f"{x:.2f}x the estimate" if kind == "speed" else f"{x:,.4g}"


def _verify_spec(v: Any) -> str:
    """'now $2.69/GPU-hour, P10-P90 $1.79-$4.03/GPU-hour, worth up to $33,885'."""
    span = (
        f"P10-P90 {_shown(v.kind, v.range[0])} to {_shown(v.kind, v.range[1])}"
        if isinstance(v.range, list) and len(v.range) == 2 and None not in v.range
        else ""
    )
    now = f"now {_shown(v.kind, v.current)}" if isinstance(v.current, (int, float)) else ""
    return ", ".join(x for x in (now, span, f"worth up to {usd(v.evpi_usd)}" if v.evpi_usd else "") if x)


def render(plan: Plan, ctx: PlanContext, fmt: str = "md") -> Document:
    """The request for quotation as Markdown (a document to send) or CSV (one row per line item)."""
    fmt = format_for("", fmt)
    table = rows(plan, ctx)
    if fmt == "csv":
        return Document("csv", csv_text(COLUMNS, table).encode("utf-8"))
    return Document("md", markdown_text(plan, ctx, table).encode("utf-8"))


def markdown_text(plan: Plan, ctx: PlanContext, table: list[list[Any]]) -> str:
    name = plan.name or ctx.workload.name or "GPU plan"
    out = [
        f"# Request for quotation: {md(name)}",
        "",
        f"Prepared with gpu-advisor {md(plan.tool_version)} from a plan dated {plan.as_of} (catalog "
        f"{md(plan.catalog_digest)}). Quote each item below; dates are the latest that keep every deadline at "
        f"the workload's confidence ({md(plan.confidence.quantile)}).",
        "",
    ]
    if not plan.feasible:
        return "\n".join(
            out + ["No plan meets every requirement, so there is nothing to quote (see the plan's diagnosis).", ""]
        )
    first = [r for r in table if r[0] == "verify first"]
    if first:
        out += [
            "## Confirm first",
            "",
            "These inputs could change the decision; the figure is the most knowing "
            "each exactly is worth (expected value of perfect information):",
            "",
            markdown(["input", "now and range", "what to ask"], [[r[1], r[3], r[9]] for r in first]),
            "",
        ]
    items = [r for r in table if r[0] == "quote"]
    out += [
        "## Items",
        "",
        markdown(
            ["item", "specification", "quantity", "term", "latest date", "notes"],
            [[r[1], r[3], f"{r[4]:,.6g}", r[6] or "", r[7] or "", r[9] or ""] for r in items],
        ),
        "",
    ]
    dates = [f"- {r[1]}: {r[8]}" for r in items if r[8]]
    if dates:
        out += ["## How the dates follow", "", *[f"- {md(x[2:])}" for x in dates], ""]
    ruled = [w for w in plan.warnings if w.rule]
    if ruled:
        out += ["## Export and licence notes", "", *[f"- [{md(w.rule)}] {md(w.message)}" for w in ruled], ""]
    return "\n".join(out)
