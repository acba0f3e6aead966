"""The memo's cost section: the cash paid by line in the order a reader pays it, each with how it
is computed in the plan's own figures, the resale and the discounting to present value (the rows
add up, to the cent, to the total the plan minimises)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from advisor.contract import Plan
from advisor.contract.costs import SERVICES, PurchaseItem
from advisor.contract.jobs import Job
from advisor.data.catalog import Catalog
from advisor.present.memo_sections import server_name
from advisor.present.words import months_phrase, quoted_rate, sentence, unit_rate, usd, usd_cents, whole_or_two_digits

# the nominal cost lines in the order a reader pays them, with what each is and when it is paid
COST_LINES = (
    ("purchase_usd", "GPUs", "upfront"),
    ("servers_usd", "Servers", "upfront"),
    ("network_usd", "Network (NICs, switches, cables)", "upfront"),
    ("storage_usd", "Storage (the training data and checkpoints)", "upfront"),
    ("tax_usd", "Tax on the hardware (sales tax, VAT or GST: the bill of materials)", "upfront"),
    ("burn_in_usd", "Burn-in", "before the work"),
    ("support_usd", "Support contract", "while held"),
    ("energy_usd", "Electricity", "while the GPUs work"),
    ("hosting_usd", "Hosting (space and power capacity)", "while held"),
    ("rental_usd", "GPU rental", "while the jobs run"),
    ("bridge_usd", "GPU rental until bought serving GPUs arrive", "before they arrive"),
    ("services_tax_usd", "VAT on rent and services (not reclaimable)", "as they are paid"),
)

CENT = Decimal("0.01")


# when a rental's cash leaves (purchase[].payment, its offer's `paid`)
PAID_WHEN = {
    "upfront": "up front, the term in full",
    "monthly": "monthly over the term",
    "as_used": "while the jobs run",
}


def rent_by_payment(plan: Plan) -> dict[str, float]:
    """The rent (`rental_usd`: bridges apart) by when it is paid, in PAID_WHEN's order: a cluster term or
    capacity block is paid on day 0, a reservation monthly, the rest as used. The as-used part takes
    what is left, so the parts add up to the line."""
    paid: dict[str, float] = {}
    for i in plan.purchase:
        if i.ownership == "rent" and i.use != "bridge":
            when = i.payment or "as_used"
            _, hours, _ = _used_and_paid(i)
            paid[when] = paid.get(when, 0.0) + hours * (i.unit_price_usd or 0.0)
    total = plan.cost_breakdown.rental_usd or 0.0
    fixed = {k: round(paid.get(k, 0.0), 2) for k in ("upfront", "monthly")}
    out = {**fixed, "as_used": round(total - sum(fixed.values()), 2)}
    return {k: v for k, v in out.items() if abs(v) >= 0.005}


def start_days(plan: Plan, job: Job) -> float:
    """The day a training job's GPUs can work: its purchase's lead time and burn-in, a rental's
    provisioning (purchase[].ready_days); 0 when ready at once. Deadlines count from today, so a
    job's finish is this plus its run time."""
    items = (i for i in plan.purchase if i.gpu == job.gpu and i.ownership == job.ownership and i.use is None)
    return max((i.ready_days or 0.0 for i in items), default=0.0)


def cash_months(plan: Plan) -> float:
    """The months the plan's cash is paid over: its horizon, or a reservation's term paid monthly that
    outlasts it (a 3-year reservation in a 12-month plan is 36 monthly payments, all counted)."""
    terms = [i.term_months or 0.0 for i in plan.purchase if i.payment == "monthly"]
    return max([plan.assumptions.horizon_months, *terms])


def cost_rows(plan: Plan, months: float, catalog: Catalog | None = None) -> list[dict]:
    """The cost section, every row a number to the cent: the cash paid by line (they add up to the
    cash subtotal), the resale at disposal, the discounting to present value, which with the cash add
    up to the total the plan minimises (`total_cost_usd`)."""
    cb, a = plan.cost_breakdown.to_dict(), plan.assumptions
    bought = [i for i in plan.purchase if i.ownership == "buy"]
    rows: list[dict[str, Any]] = []
    for key, what, when in COST_LINES:
        amount = cb.get(key) or 0.0
        if key == "rental_usd" and amount:
            when = "; ".join(PAID_WHEN[k] for k in rent_by_payment(plan))
        if amount or key in ("purchase_usd", "rental_usd"):
            rows.append(
                {
                    "category": what,
                    "when": when,
                    "amount": usd_cents(amount),
                    "usd": amount,
                    "kind": "line",
                    "basis": _cost_basis(plan, key, months, catalog, bought),
                }
            )
    cash, paid_over = plan.nominal_cost_usd or 0.0, cash_months(plan)
    rows.append(
        {
            "category": f"Cash paid over {months_phrase(paid_over)}",
            "when": "",
            "amount": usd_cents(cash),
            "usd": cash,
            "kind": "subtotal",
            "basis": "the sum of the lines above (what a cash budget caps)"
            + (
                f"; a reservation's monthly payments run past the horizon ({months_phrase(months)})"
                if paid_over > months
                else ""
            ),
        }
    )
    resale = plan.residual_value_usd or 0.0
    if resale:
        sold = "; ".join(sentence(d.message).rstrip(".") for d in plan.disposal or []) or "resold"
        rows.append(
            {
                "category": "Resale at disposal",
                "when": "when sold",
                "amount": usd_cents(-resale),
                "usd": -resale,
                "kind": "line",
                "basis": sold,
            }
        )
    total = plan.total_cost_usd or 0.0
    discount = round(total - cash + resale, 2)
    rows.append(
        {
            "category": "Discounting to present value",
            "when": "",
            "amount": usd_cents(discount),
            "usd": discount,
            "kind": "line",
            "basis": (
                f"what is paid or resold later is worth less today, at {a.discount_rate:.1%} a year "
                f"({a.discount_rate_source}); purchases today are not discounted"
            ),
        }
    )
    return rows


def kwh_shown(energy_usd: float, rate: float) -> str:
    """The kWh the electricity line bills, at the fewest decimals that multiply out to its amount at the rate
    as printed: 13.6 kWh x $0.1241 is $1.69 (14 kWh read $1.74), 550.5 kWh x $0.0806 is $44.37."""
    kwh = Decimal(repr(energy_usd / rate))
    amount, unit = Decimal(repr(energy_usd)).quantize(CENT), Decimal(unit_rate(rate).lstrip("$"))
    for places in range(4):
        shown = kwh.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if (shown * unit).quantize(CENT, rounding=ROUND_HALF_UP) == amount:
            return f"{shown:,}"
    return f"{kwh.quantize(Decimal('0.001'), rounding=ROUND_HALF_UP):,}"


def _cost_basis(plan: Plan, key: str, months: float, catalog: Catalog | None, bought: list[PurchaseItem]) -> str:
    """How one cost line is computed, in the plan's own figures."""
    a = plan.assumptions
    if key == "purchase_usd":
        return "; ".join(f"{i.count:,} × {usd(i.unit_price_usd)}" for i in bought) or "none bought"
    if key == "servers_usd":
        return (
            "; ".join(
                f"{s.count:,} × {server_name(catalog, s.server)} at {usd(s.unit_price_usd)}" for s in plan.servers
            )
            or "none priced (see the bill of materials)"
        )
    if key == "energy_usd":
        return (
            f"{kwh_shown(plan.cost_breakdown.energy_usd or 0.0, a.electricity_usd_per_kwh)} kWh at "
            f"{unit_rate(a.electricity_usd_per_kwh)} per kWh, including the building overhead (PUE {a.pue:.2f})"
            if a.electricity_usd_per_kwh
            else "at the deployment's electricity rate"
        )
    if key == "hosting_usd":
        return f"{unit_rate(a.hosting_usd_per_kw_month)} per kW-month while the GPUs are held"
    if key == "bridge_usd":
        return _bridge_basis(plan)
    if key == "services_tax_usd":
        cb = plan.cost_breakdown.to_dict()
        base = sum(cb.get(k) or 0.0 for k in SERVICES)
        return (
            f"{(cb.get(key) or 0.0) / base:.2%} of the {usd_cents(base)} of burn-in, support, electricity, hosting "
            "and rent above, which a buyer that cannot reclaim VAT pays (finance.tax_recoverable: false)"
        )
    if key == "rental_usd":
        rented = [i for i in plan.purchase if i.ownership == "rent" and i.use != "bridge"]
        if not rented:
            return "none rented"
        return "; ".join(_rent_basis(i) for i in rented) + _footing(plan.cost_breakdown.rental_usd or 0.0, rented)
    return "see the bill of materials"


def gpu_hours(x: float) -> str:
    """'371 GPU-hours', '1 GPU-hour'."""
    text = whole_or_two_digits(x)
    return f"{text} GPU-hour" + ("" if text == "1" else "s")


def _used_and_paid(i: PurchaseItem) -> tuple[float, float, bool]:
    """(GPU-hours used, GPU-hours billed, whether billing adds any at the hours printed) of a rental."""
    used = i.gpu_hours or 0.0
    paid = i.billed_gpu_hours if i.billed_gpu_hours is not None else used
    return used, paid, whole_or_two_digits(paid) != whole_or_two_digits(used)


def billed_hours(i: PurchaseItem) -> str:
    """'3,874,816 GPU-hours billed for 3,872,849 used', or '371 GPU-hours' when billing adds nothing: what
    a rental pays for, as the plan, the recommendation and the RFQ ask for it."""
    used, paid, more = _used_and_paid(i)
    return f"{gpu_hours(paid)} billed for {whole_or_two_digits(used)} used" if more else gpu_hours(paid)


def billed_gpus(i: PurchaseItem) -> str:
    """', billed as 8 (whole nodes)' when an offer sold by whole nodes bills more GPUs than the plan uses."""
    return f", billed as {i.billed_gpus:,} (whole nodes)" if (i.billed_gpus or 0) > i.count else ""


def _rent_basis(i: PurchaseItem) -> str:
    """A rental's cash as it is billed: the GPU-hours paid at the rate, and the hours used when billing
    in whole nodes, steps or a minimum term pays for more (so the line multiplies out to its amount)."""
    used, _, more = _used_and_paid(i)
    price = i.unit_price_usd or 0.0
    hours = f"{_paid_shown(i):,}"
    unit = "GPU-hour" if hours == "1" else "GPU-hours"
    if not more:
        return f"{hours} {unit} × {quoted_rate(price)}"
    return (
        f"{hours} {unit} billed × {quoted_rate(price)} ({whole_or_two_digits(used)} used: billed in whole nodes, "
        "billing steps and minimum terms)"
    )


def _paid_shown(i: PurchaseItem) -> Decimal:
    """A rental's GPU-hours paid, at the fewest decimals whose product with the rate as printed is the
    hours' own product to the cent (10.0024 h x $2.11 is $21.11: "10" read $21.10, review29 L1), so a cent
    _footing adds is the cost lines' rounding alone."""
    paid, rate = Decimal(repr(_used_and_paid(i)[1])), _rate_shown(i)
    exact = (paid * rate).quantize(CENT, rounding=ROUND_HALF_UP)
    for places in (0, 2, 3, 4):
        shown = paid.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if (shown * rate).quantize(CENT, rounding=ROUND_HALF_UP) == exact:
            return shown
    return paid.quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)


def _rate_shown(i: PurchaseItem) -> Decimal:
    """A rental's rate as the line prints it (quoted_rate), to multiply as a reader does."""
    return Decimal(quoted_rate(i.unit_price_usd or 0.0)[1:].replace(",", ""))


def _footing(amount: float, rented: list[PurchaseItem]) -> str:
    """The cent the cost lines' rounding put on the rental line (contract/numbers.cents_adding_to), said:
    2.84 GPU-hours x $0.74 is $2.10, printed $2.11 so the lines add up to the cash (audit28)."""
    paid = (_paid_shown(i) * _rate_shown(i) for i in rented)  # as printed
    products = sum(paid, Decimal(0)).quantize(CENT, rounding=ROUND_HALF_UP)
    drift = Decimal(repr(amount)).quantize(CENT) - products
    if not drift:
        return ""
    together = " together" if len(rented) > 1 else ""
    sign = "+" if drift > 0 else "-"
    return f" ({usd_cents(float(products))}{together}, {sign}${abs(drift)} of the cost lines' rounding, so they add up to the cash)"


def _bridge_basis(plan: Plan) -> str:
    """How the bridge's rent is computed: per bridge row, its GPU-hours at its rate, until when."""
    return "; ".join(
        _rent_basis(i) + f", {i.hours or 0:,.0f} h until the bought {i.bridges} arrive"
        for i in plan.purchase
        if i.use == "bridge"
    )
