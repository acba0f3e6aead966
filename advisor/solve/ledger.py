"""What a solved plan buys and rents, as a finance reader checks it: purchase items with their
price's confidence and rental kind, the bill of materials (GPUs, servers, fabric, storage, racks,
colocation; every line sourced or flagged), and the warnings prices deserve (low confidence, used parts,
what --as-of left out). Computed from the catalog and the solution; nothing is re-solved."""

from __future__ import annotations

from decimal import Decimal

from advisor.contract.costs import SERVICES
from advisor.contract.numbers import HALF_CENT, ONE_SUM_KINDS, PLAN_WIDE_KINDS, cents, cents_adding_to, rounded
from advisor.data.catalog_prices import RentalOffer
from advisor.economics import bom, purchase_bill
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.constraints.gpu_count import copies_at_once, held_counts, held_grade
from advisor.solve.costing import services_tax_lines
from advisor.solve.problem import Problem, Storage
from advisor.solve.reserved import paid_training, pool_bills, pool_key
from advisor.solve.server_terms import server_bill_lines
from advisor.solve.solution import Solution


def offer_terms(offer: RentalOffer) -> dict:
    """A rental offer as the product it is sold as: node size, fabric, tier, shortest term and when it
    is paid."""
    term = offer.term_hours
    return {
        "gpus_per_node": offer.gpus_per_node,
        "fabric": offer.fabric.kind if offer.fabric.kind is not None else "unknown",
        "fabric_gbps_per_gpu": offer.fabric.gbps_per_gpu,
        "tier": offer.tier,
        "term_months": term / HOURS_PER_MONTH if term is not None else None,
        "payment": offer.payment,
    }


def purchase_items(problem: Problem, sol: Solution) -> list[dict]:
    """The plan's `purchase` list: bought GPUs, then rentals by (GPU, kind, provider); a rental's `count` is the GPUs
    it holds at once, summed over its jobs (gpu_count.copies_at_once: copies with no deadline run in turn), and
    `billed_gpus` what it is billed for: each job's own whole nodes, or the reserved nodes they share (reserved.py)."""
    items = []
    for g, n in sorted(sol.bought.items()):
        p = problem.catalog.gpus[g].prices.purchase
        assert p is not None  # a bought GPU has a purchase price
        lead = arrival.lead if (arrival := problem.arrival.get(g)) is not None else None
        items.append(
            {
                "gpu": g,
                "count": n,
                "ownership": "buy",
                "unit_price_usd": problem.unit_price[g],
                "gpu_hours": None,
                "rent_kind": None,
                "confidence": p.confidence,
                "condition": p.condition,
                "as_of": p.as_of,
                "lead_time_days": lead.days if lead is not None else None,
                "lead_time_confidence": lead.confidence if lead is not None else None,
                "ready_days": arrival.hours / 24 if arrival is not None else None,
            }
        )
    rented: dict[tuple, dict] = {}
    at_once = held_counts(problem, sol)
    for c, n in sol.assignment:
        if c.ownership != "rent":
            continue
        offer = problem.offer_of(c)
        assert offer is not None  # a rented candidate was priced from an offer
        kind = c.kind or "on_demand"
        entry = rented.setdefault(
            (c.gpu, kind, offer.provider),  # two providers' offers of one kind are two quotes
            {
                "gpu": c.gpu,
                "count": 0,
                "ownership": "rent",
                "unit_price_usd": offer.usd_per_gpu_hour,
                "gpu_hours": 0.0,
                "rent_kind": kind,
                "provider": offer.provider,
                "as_of": offer.as_of,
                "confidence": offer.confidence,
                "billed_gpus": 0,
                "billed_gpu_hours": 0.0,
                **offer_terms(offer),
                "ready_days": c.start_hours / 24,
            },
        )
        if held_grade(offer, c, at_once) == "low":
            entry["confidence"] = "low"  # an order, or all it holds there at once, above what its rate is evidenced at
        held = copies_at_once(problem, c, n)
        entry["count"] += c.count * held
        entry["gpu_hours"] += c.gpu_hours * n
        if pool_key(problem, c) is None:
            entry["billed_gpus"] += (c.billed_gpus or c.count) * held
            entry["billed_gpu_hours"] += (c.billed_gpus or c.count) * (c.billed_hours or c.hours) * n
    for key, gpus, hours in pool_bills(problem, sol.assignment):  # the reserved nodes its jobs share
        rented[key]["billed_gpus"] += gpus
        rented[key]["billed_gpu_hours"] += hours
    return items + [rented[k] for k in sorted(rented)]


def bill_of_materials(problem: Problem, sol: Solution) -> list[dict]:
    """[{item, quantity, unit_usd, total_usd, source, confidence, note}] for the plan: each line the
    cash the MILP charged for it (solve/model.py's coefficients), so the lines with a total add up to
    the plan's nominal cost (`nominal_cost_usd`); a rack count carries no total (space is in the
    hosting rate)."""
    cat, econ = problem.catalog, problem.catalog.economics
    out: list[dict] = []
    taxed: dict[str, float] = {}
    for g, n in sorted(sol.bought.items()):
        p = cat.gpus[g].prices.purchase
        assert p is not None
        note = f"{p.kind or 'price'} as of {p.as_of}" + (
            f"; {p.condition}: {p.warranty}" if p.condition != "new" else ""
        )
        out.append(
            bom.line(
                f"{cat.gpus[g].name} GPU", n, problem.unit_price[g], p.source, p.confidence or "low", note, kind="gpu"
            )
        )
        taxed[g] = (problem.unit_price[g] or 0.0) * n
    out += _servers_and_network(problem, sol, taxed)
    storage = problem.storage
    if storage is not None and econ is not None:  # every plan keeps its data and checkpoints (Model.storage_usd)
        price = econ.storage.get("flash_usd_per_tb")
        out.append(
            bom.line(
                f"flash storage, {storage.need.tb:,.3g} TB",
                storage.need.tb,
                price.value if price else None,
                price.source if price else (),
                storage.need.confidence,
                storage.need.note
                + (
                    ""
                    if sol.bought
                    else "; priced as bought flash for a rented plan too: no sourced cloud storage rate"
                ),
                kind="storage",
            )
        )
    out += _owned_running(problem, sol, taxed, storage)
    out += _running_amounts(problem, sol) if econ is not None else []
    out += _rented(problem, sol)
    out += [{**row, PART: "services_tax_usd"} for row in services_tax_lines(problem, sol.cost_breakdown)]
    keys = [line_part(row) for row in out]
    out = _footed(out, keys, printed_breakdown(sol))
    for row, key in zip(out, keys):
        if key in TAXED_KINDS:
            _base_as_printed(out, row, TAXED_KINDS[key])
    return out


def printed_breakdown(sol: Solution) -> dict[str, float]:
    """`cost_breakdown` as printed: each part to the cent, adding up to the cash, the cents rounding moves
    on the plan-wide sums first (hosting, electricity: no rate x quantity a reader re-multiplies). The
    bill's lines of each part are footed to it, so the bill and the cost table print the same cents."""
    lumps = [k for k in LUMP_PARTS if sol.cost_breakdown.get(k)]  # (a part the plan does not pay has no line)
    return cents_adding_to(sol.cost_breakdown, sol.cash_usd, lambda k, usd: k in lumps)


# the bill's kinds and the cost_breakdown part each adds up to (a tax line: the hardware's, or the VAT on
# services; a rent line: the rent, or the bridge until bought serving GPUs arrive)
PART_OF_KIND = {
    "gpu": "purchase_usd",
    "server": "servers_usd",
    "nic": "network_usd",
    "fabric": "network_usd",
    "storage": "storage_usd",
    "tax": "tax_usd",
    "burn_in": "burn_in_usd",
    "support": "support_usd",
    "hosting": "hosting_usd",
    "electricity": "energy_usd",
    "rent": "rental_usd",
}
HARDWARE_KINDS = ("gpu", "server", "nic", "fabric", "storage")  # what the tax on hardware is charged on


PART = "_part"  # a bill line's stated cost_breakdown part where its kind does not tell it (taken off the line)


def line_part(row: dict) -> str | None:
    """The cost_breakdown part a bill line adds up to (None: a count with no amount, the racks): the part
    the line was built with (PART: a VAT line is a "tax", a bridge a "rent", by kind), else its kind's."""
    return row.pop(PART, None) or PART_OF_KIND.get(row["kind"])


def _base_as_printed(out: list[dict], tax: dict, kinds: tuple[str, ...]) -> None:
    """A tax line's base as a reader adds it up: the lines it taxes as printed. Its amount is the footed
    one, so where the cents cannot give all three (lines to the cent, adding up to the cash, the base the
    lines above) its rate is printed as derived from the amount, the note saying so."""
    tax["quantity"] = float(
        sum(
            (Decimal(repr(r["total_usd"])) for r in out if r["kind"] in kinds and r["total_usd"] is not None),
            Decimal(0),
        )
    )


SERVICE_KINDS = tuple(
    k for k, part in PART_OF_KIND.items() if part in SERVICES
)  # contract.costs.SERVICES as bill lines


TAXED_KINDS = {"tax_usd": HARDWARE_KINDS, "services_tax_usd": SERVICE_KINDS}  # a tax part: the lines it taxes
LUMP_PARTS = tuple(PART_OF_KIND[k] for k in PLAN_WIDE_KINDS)  # the plan-wide amounts' cost_breakdown parts


def _footed(out: list[dict], keys: list[str | None], parts: dict[str, float]) -> list[dict]:
    """The lines to the cent, each part's lines adding up to that part as the cost table prints it
    (printed_breakdown), so the bill adds up to the cash too. Within a part, the cents the rounding moves
    go first to a plan-wide amount (hosting, electricity) or to a line whose quantity x unit, as the plan
    prints them, still comes to its moved amount; only then to a priced line."""

    def absorbs(i: str, usd: float) -> bool:
        row = out[int(i)]
        if row["kind"] in PLAN_WIDE_KINDS:
            return True
        shown = Decimal(repr(rounded(row["quantity"]))) * Decimal(repr(rounded(row["unit_usd"])))
        return abs(shown - Decimal(repr(usd))) <= HALF_CENT

    for part in dict.fromkeys(k for k in keys if k is not None):
        priced = {
            f"{i:06d}": row["total_usd"]
            for i, row in enumerate(out)
            if keys[i] == part and row["total_usd"] is not None
        }
        for i, usd in cents_adding_to(priced, parts.get(part, 0.0), absorbs).items():
            out[int(i)]["total_usd"] = usd
            if out[int(i)]["kind"] in ONE_SUM_KINDS:
                out[int(i)]["unit_usd"] = usd
    return out


def _servers_and_network(problem: Problem, sol: Solution, taxed: dict[str, float]) -> list[dict]:
    """Servers, racks, and the NICs and fabric of each networked type (its band at the plan's size)."""
    cat, econ, out = problem.catalog, problem.catalog.economics, []
    nodes_total, node_kw = 0, 0.0
    for g, servers in sorted(sol.servers.items()):
        opts = {s.id: s for s in problem.servers.get(g, [])}
        for sid, n in sorted(servers.items()):
            s = cat.servers[sid]
            out.append(
                bom.line(
                    s.name,
                    n,
                    s.purchase.usd,
                    s.purchase.source,
                    s.purchase.confidence or "low",
                    f"without GPUs, as of {s.purchase.as_of}",
                    kind="server",
                )
            )
            taxed[g] = taxed.get(g, 0.0) + (s.purchase.usd or 0.0) * n
            nodes_total += n
            node_kw = max(node_kw, opts[sid].overhead_kw + opts[sid].slots * problem.gpu_kw[g])
        hw = problem.hardware.get(g)
        if sol.networked.get(g) and hw is not None and econ is not None:
            gpus = sol.networked[g] * max(o.slots for o in opts.values())
            lines = purchase_bill.network_lines(econ, gpus, hw.network_share)
            out += lines
            taxed[g] += sum(line["total_usd"] or 0.0 for line in lines)
    rack, _ = (
        bom.racks(node_kw, nodes_total, econ) if problem.workload.deployment.site == "datacenter" else (None, None)
    )
    return out + ([rack] if rack else [])


def _owned_running(problem: Problem, sol: Solution, taxed: dict[str, float], storage: Storage | None) -> list[dict]:
    """Tax on the hardware, burn-in, support and hosting while held, and the owned jobs' energy."""
    cat, econ, costs = problem.catalog, problem.catalog.economics, problem.costs
    out: list[dict] = []
    if econ is None:
        return out
    region = problem.workload.deployment.region
    tax = purchase_bill.tax_coefficients(econ, region, costs.tax_recoverable)
    base = cents(sum(taxed.values()) + (storage.need.usd or 0.0 if storage is not None else 0.0))  # printed to the cent
    if base:
        note = tax.note
        if tax.recoverable and tax.paid_rate:  # paid at purchase, reclaimed: shown, so it is not a surprise
            note += (
                f"; ${base * tax.paid_rate:,.2f} paid at purchase and reclaimed, so neither a cost nor cash a budget "
                "caps; a buyer that cannot reclaim it (a university, a bank) sets finance.tax_recoverable: false"
            )
        out.append(
            bom.line(
                f"tax on hardware ({region})", base, tax.cost_rate or 0.0, tax.source, tax.confidence, note, kind="tax"
            )
        )
    for g, n in sorted(sol.bought.items()):
        k = purchase_bill.bought_gpu_coefficients(cat, g, region, costs)
        hw = problem.hardware.get(g)
        if hw is None:
            continue
        out.append(
            bom.line(
                f"burn-in of {cat.gpus[g].name}, {k.burn_in_days * 24:g} h at full load",
                n,
                hw.burn_in_usd / costs.services_taxed,  # at its price: an unreclaimed VAT has its own line
                k.burn_in_energy.source,
                k.burn_in_energy.confidence,
                k.burn_in_energy.note,
                kind="burn_in",
            )
        )
        months = sum(problem.holdings[g][lv].months_held * c for lv, c in sol.held.get(g, {}).items())
        base_usd = problem.unit_price[g] or 0.0
        held = f"{months / max(n, 1):.3g} months in service (arrival to sale)"
        rate = hw.support_rate_month / costs.services_taxed  # at its price: an unreclaimed VAT has its own line
        out.append(
            bom.line(
                f"support contract for {cat.gpus[g].name}, {held}",
                months,
                rate * base_usd,
                k.support.source,
                k.support.confidence,
                f"GPU-months x {rate:.4f} x ${base_usd:,.0f} (the GPU; its server on its own line); {k.support.note}",
                kind="support",
            )
        )
        out += server_bill_lines(problem, g, sol.servers.get(g, {}), sol.held.get(g, {}))  # each server bought, whole
    return out


def _running_amounts(problem: Problem, sol: Solution) -> list[dict]:
    """Hosting while held and the owned jobs' electricity: amounts of the whole plan (kW-months and
    kWh summed over every GPU's time), each a lump sum whose unit is its total."""
    econ, costs, out = problem.catalog.economics, problem.costs, []
    region = problem.workload.deployment.region
    hosting = sol.cost_breakdown.get("hosting_usd") or 0.0
    if hosting:
        fig = bom.colocation(econ, region)
        overridden = problem.workload.deployment.hosting_usd_per_kw_month is not None
        out.append(
            bom.line(
                f"hosting while held, at ${costs.hosting_usd_per_kw_month:g} per kW-month",
                1,
                hosting,
                ["workload"] if overridden or fig is None else fig.source,
                "high" if overridden or fig is None else fig.confidence,
                "each bought GPU's power and its server's, from its arrival to its sale",
                kind="hosting",
            )
        )
    energy = sol.cost_breakdown.get("energy_usd") or 0.0
    if energy:
        out.append(
            bom.line(
                "electricity of the owned GPUs' work",
                1,
                energy,
                costs.sources,
                "medium",
                f"at ${costs.electricity_usd_per_kwh:g}/kWh x PUE {costs.pue:g}",
                kind="electricity",
            )
        )
    return out


def _rented(problem: Problem, sol: Solution) -> list[dict]:
    """One line per rented GPU type, kind and offer: the rent the plan pays (terms, whole nodes and
    the serving months included), the bridge until bought serving GPUs arrive on a line of its own
    (its PART: bridge_usd)."""
    lines: dict[tuple[str, str, str, bool], dict] = {}
    at_once = held_counts(problem, sol)
    for c, n in paid_training(problem, sol.assignment) + sol.paid_serving:
        if c.ownership != "rent":
            continue
        offer = problem.offer_of(c)
        assert offer is not None  # a rented candidate was priced from an offer
        kind = getattr(c, "kind", None) or offer.pricing
        paid = (c.run_cost_nominal if c.run_cost_nominal is not None else c.run_cost_usd) * n
        paid /= problem.costs.services_taxed  # at the offer's rate: an unreclaimed VAT has its own line
        bridge = getattr(c, "bridges", None) is not None
        key = (c.gpu, kind, offer.provider, bridge)
        if key not in lines:
            lines[key] = bom.line(
                f"{c.gpu} rented ({kind.replace('_', ' ')}, {offer.provider})"
                + (" until the bought serving GPUs arrive" if bridge else ""),
                1,
                0.0,
                offer.source,
                offer.confidence,
                f"at ${offer.usd_per_gpu_hour:g}/GPU-hour, as of {offer.as_of}; terms and whole nodes as billed",
                kind="rent",
            ) | ({PART: "bridge_usd"} if bridge else {})
        if held_grade(offer, c, at_once) == "low":
            lines[key]["confidence"] = "low"  # as the purchase row (purchase_items)
        lines[key]["unit_usd"] += paid
        lines[key]["total_usd"] += paid
    return [lines[k] for k in sorted(lines)]
