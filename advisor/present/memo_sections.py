"""The memo's sections as display text: bill of materials, jobs, alternatives, rule cards, cost
rows, the requirement and the assumptions. Everything comes from the plan and what it was made
from; nothing is solved or estimated here."""
from __future__ import annotations

from typing import Any

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.costs import PurchaseItem
from advisor.data.catalog import Catalog
from advisor.inputs.workload import Workload
from advisor.present.memo_refs import Refs
from advisor.present.words import (
    count_words,
    day,
    duration,
    job_label,
    pct,
    plural,
    rate,
    sentence,
    unit_rate,
    usd,
    usd_cents,
)

PRICE_KIND = {"msrp": "launch list price (MSRP)", "list": "list price", "street": "street price",
              "estimate": "analyst estimate", "quote": "quote"}
LIMITED_BY = {"compute": "matrix math (the GPU's compute rate)",
              "memory_bandwidth": "memory bandwidth (moving data in and out of GPU memory)",
              "interconnect": "GPU-to-GPU bandwidth (exchanging results between GPUs)",
              "none": "nothing measured"}


def server_name(catalog: Catalog | None, sid: str) -> str:
    """A server's display name, with 'server' added only when the name does not say what it is
    (no 'HGX A100 8-GPU server (SXM4, NVSwitch) server')."""
    server = catalog.servers.get(sid) if catalog is not None else None
    name = server.name if server is not None and server.name else sid
    if not any(w in name.lower() for w in ("server", "workstation", "platform", "chassis", "node")):
        name += " server"
    return name


def bill_of_materials(plan: Plan, ctx: PlanContext, refs: Refs) -> tuple[list, list]:
    """The plan's own bill of materials (`bill_of_materials`: every line the MILP charged, to the cent,
    adding up to the cash paid), with each line's confidence and sources; its notes say how each
    figure was reached, and what the catalog does not price."""
    gpus = ctx.catalog.gpus
    bom: list[dict[str, Any]] = []
    bom_notes: list[str] = []
    for row in plan.bill_of_materials:
        qty, unit = _quantity(row.item, row.quantity, row.unit_usd, row.total_usd)
        bom.append({"item": row.item, "qty": qty, "unit": unit,
                    "extended": usd_cents(row.total_usd) if row.total_usd is not None
                    else "in hosting" if row.item.startswith("racks") else "unpriced",
                    "basis": row.confidence or "unrated", "refs": refs.cite(row.source)})
        if row.note:
            bom_notes.append(f"{row.item}: {sentence(row.note)}")
    for g in sorted({i.gpu for i in plan.purchase if i.ownership == "buy"}):
        if not ctx.hosts.get(g):
            bom_notes.append(f"The catalog lists no server or workstation to hold the {gpus[g].name}, so none is "
                             "costed: budget the host machine separately.")
    return bom, bom_notes


def _quantity(item: str, quantity: float, unit_usd: float | None, total_usd: float | None) -> tuple[str, str]:
    """(quantity, unit price) as a reader checks them: a tax line is a rate on a dollar base."""
    if item.startswith("tax on"):
        return usd_cents(quantity), f"{(unit_usd or 0.0) * 100:.2f}%"
    if quantity == 1 and total_usd is not None:   # a lump sum: its unit is its total, to the cent
        return "1", usd_cents(total_usd)
    qty = f"{quantity:,}" if float(quantity).is_integer() else f"{quantity:,.4g}"
    return qty, (unit_rate(unit_usd) if unit_usd is not None and abs(unit_usd) < 10 else usd(unit_usd))



def job_rows(plan: Plan, ctx: PlanContext, min_gpus: dict, refs: Refs) -> list[dict]:
    """Each job's time and its basis: tokens/s, MFU, the step's parts and what binds."""
    wl, gpus = ctx.workload, ctx.catalog.gpus
    jobs = []
    for j in plan.jobs:
        g = gpus[j.gpu]
        info = ctx.job(j.name) or ctx.jobs[0]
        n_min = min_gpus.get(j.name)
        sb, lay = j.step_breakdown, j.layout
        step = sb.compute_s + sb.memory_s + sb.comm_s
        tf = g.tensor_tflops.get(info.precision)
        spec_refs = refs.cite((tf.source if tf else []) + g.memory_bandwidth_gbps.source + g.memory_gb.source)
        memory = (f"{j.memory_per_gpu_gb:.1f} GB of the {g.memory_gb.value:g} GB on each GPU"
                  + (f", the model's training state sharded over {lay.shards} GPUs" if (lay.shards or 1) > 1 else ""))
        if n_min and n_min > 1:
            memory_binds = (f"Memory size sets the minimum: the job needs at least {plural(n_min, 'GPU')} "
                            "to hold its model, gradients and optimizer state.")
        else:
            memory_binds = "Memory size does not constrain the choice: one GPU holds the whole job."
        limited_by = LIMITED_BY.get(j.binding_factor, j.binding_factor)
        jobs.append({
            "name": job_label(j.name, wl) + (f" (×{j.copies:g} copies)" if j.copies != 1 else ""),
            "gpus": f"{j.gpu_count:,} × {g.name} ({'bought' if j.ownership == 'buy' else 'rented'})",
            "tokens": f"{count_words(info.tokens)} tokens", "speed": f"{rate(j.tokens_per_s)} tokens/s",
            "time": duration(j.wall_days * 24),
            "deadline": duration(info.deadline_hours) if info.deadline_hours else "none",
            "mfu": pct(100 * j.mfu), "memory": memory, "limited_by": limited_by,
            "basis": (f"Each training step processes {lay.global_batch_tokens:,.0f} tokens and takes "
                      f"{step:.3g} s: {sb.compute_s:.3g} s of matrix math at the GPU's "
                      f"{tf.value if tf else 'unknown'} TFLOPS {info.precision} rate, {sb.memory_s:.3g} s of "
                      f"memory traffic at {g.memory_bandwidth_gbps.value:,.0f} GB/s and {sb.comm_s:.3g} s of "
                      "GPU-to-GPU communication that computation does not hide. The largest part, "
                      f"{limited_by}, limits the speed. "
                      f"{memory_binds}"),
            "refs": spec_refs,
        })
    return jobs


def alternative_rows(plan: Plan, ctx: PlanContext, refs: Refs) -> tuple[list, tuple[str, float] | None, list]:
    """Every GPU type of the workload: the recommendation first, then the costed alternatives
    from the cheapest, then those excluded. Also the cheapest alternative (name, cost) and the
    rule ids cited, by exclusions and by warnings."""
    gpus = ctx.catalog.gpus
    rejected = {r.gpu: r for r in plan.rejected}
    chosen = {j.gpu for j in plan.jobs}
    a = plan.assumptions
    total = plan.total_cost_usd or 0.0
    best_alt: tuple[str, float] | None = None
    alternatives: list[tuple[tuple[int, float, str], dict[str, Any]]] = []
    cited_rules: list[str] = []
    for gid in ctx.considered:
        g = gpus[gid]
        r = rejected.get(gid)
        if gid in chosen:
            alternatives.append(((0, 0.0, g.name), {"gpu": g.name, "status": "Recommended",
                                                    "cost": usd(plan.total_cost_usd), "detail": "The plan above.",
                                                    "refs": []}))
            continue
        if r is None:  # allowed, but the plan is infeasible and no forced cost was computed
            alternatives.append(((2, 0.0, g.name), {"gpu": g.name, "status": "No plan", "cost": "n/a",
                                                    "detail": "Allowed, but no plan meets every requirement "
                                                              "(see why no plan exists).", "refs": []}))
            continue
        rule_ids = [x.rule for x in r.reasons if x.rule]
        cited_rules += [x for x in rule_ids if x not in cited_rules]
        forced = r.forced_cost_usd
        if forced is None:
            blocking = [x.rule for x in r.reasons if x.rule and x.severity != "warn"]
            status = f"Excluded by rule {', '.join(blocking)}" if blocking else _STATUS.get(
                r.reasons[0].code, "Excluded")
            alternatives.append(((2, 0.0, g.name), {
                "gpu": g.name, "status": status, "cost": "n/a",
                "detail": " ".join(sentence(x.message) for x in r.reasons), "refs": refs.cite(rule_ids)}))
            continue
        if best_alt is None or forced < best_alt[1]:
            best_alt = (g.name, forced)
        extra = forced - total
        p = g.prices.purchase
        if a.ownership != "rent" and p is not None and p.usd:
            price, price_refs = (f"{usd(p.usd)} per GPU ({PRICE_KIND.get(p.kind or '', 'price')}, {day(p.as_of)})",
                                 refs.cite(p.source, p.as_of))
        elif g.rental is not None:
            price, price_refs = (f"{unit_rate(g.rental.usd_per_gpu_hour)} per GPU-hour ({g.rental.provider}, "
                                 f"{day(g.rental.as_of)})", refs.cite(g.rental.source, g.rental.as_of))
        else:
            price, price_refs = "", []
        alternatives.append(((1, forced, g.name), {
            "gpu": g.name, "status": "Costs more", "cost": usd(forced),
            "detail": f"The cheapest plan using only this GPU costs {usd(extra)} "
                      f"({pct(100 * extra / total, True)}) more than the recommendation"
                      + (f"; priced at {price}." if price else "."),
            "refs": price_refs}))
    rows = [row for _, row in sorted(alternatives, key=lambda x: x[0])]
    for w in plan.warnings:
        if w.rule and w.rule not in cited_rules:
            cited_rules.append(w.rule)
    return rows, best_alt, cited_rules


def rule_card(rule: Any, refs: Refs) -> dict:
    return {"id": rule.id, "title": rule.title, "why": " ".join(rule.why.split()), "source": rule.source.title,
            "clause": rule.source.clause, "url": rule.source.url, "refs": refs.cite([rule.id])}


_CONSTRAINT = {"deadline": "Deadline", "budget": "Budget", "power": "Power limit", "gpu_count": "GPU count",
               "gpu_count_min": "Minimum GPU count", "gpu_count_max": "Maximum GPU count", "stock": "Stock"}
_STATUS = {"no-purchase-price": "No purchase price", "no-rental-price": "No rental price",
           "memory": "Does not fit", "deadline": "Too slow for the deadline", "no-server": "No server platform",
           "no-feasible-plan": "No plan meets the limits", "none": "Excluded"}


# the nominal cost lines in the order a reader pays them, with what each is and when it is paid
COST_LINES = (("purchase_usd", "GPUs", "upfront"), ("servers_usd", "Servers", "upfront"),
              ("network_usd", "Network (NICs, switches, cables)", "upfront"),
              ("storage_usd", "Storage (the training data and checkpoints)", "upfront"),
              ("tax_usd", "Sales tax on the hardware", "upfront"), ("burn_in_usd", "Burn-in", "before the work"),
              ("support_usd", "Support contract", "while held"), ("energy_usd", "Electricity", "while the GPUs work"),
              ("hosting_usd", "Hosting (space and power capacity)", "while held"),
              ("rental_usd", "GPU rental", "while the jobs run"))


def cost_rows(plan: Plan, months: float, catalog: Catalog | None = None) -> list[dict]:
    """The cost section, every row a number to the cent: the cash paid by line (they add up to the
    cash subtotal), the resale at disposal, the discounting to present value, which with the cash add
    up to the total the plan minimises (`total_cost_usd`)."""
    cb, a = plan.cost_breakdown.to_dict(), plan.assumptions
    bought = [i for i in plan.purchase if i.ownership == "buy"]
    rows: list[dict[str, Any]] = []
    for key, what, when in COST_LINES:
        amount = cb.get(key) or 0.0
        if amount or key in ("purchase_usd", "rental_usd"):
            rows.append({"category": what, "when": when, "amount": usd_cents(amount), "usd": amount, "kind": "line",
                         "basis": _cost_basis(plan, key, months, catalog, bought)})
    cash = plan.nominal_cost_usd or 0.0
    rows.append({"category": f"Cash paid over {months:g} months", "when": "", "amount": usd_cents(cash), "usd": cash,
                 "kind": "subtotal", "basis": "the sum of the lines above (what a cash budget caps)"})
    resale = plan.residual_value_usd or 0.0
    if resale:
        sold = "; ".join(sentence(d.message).rstrip(".") for d in plan.disposal or []) or "resold"
        rows.append({"category": "Resale at disposal", "when": "when sold", "amount": usd_cents(-resale),
                     "usd": -resale, "kind": "line", "basis": sold})
    total = plan.total_cost_usd or 0.0
    discount = round(total - cash + resale, 2)
    rows.append({"category": "Discounting to present value", "when": "", "amount": usd_cents(discount),
                 "usd": discount, "kind": "line",
                 "basis": (f"what is paid or resold later is worth less today, at {a.discount_rate:.1%} a year "
                           f"({a.discount_rate_source}); purchases today are not discounted")})
    return rows


def _cost_basis(plan: Plan, key: str, months: float, catalog: Catalog | None, bought: list[PurchaseItem]) -> str:
    """How one cost line is computed, in the plan's own figures."""
    a = plan.assumptions
    if key == "purchase_usd":
        return "; ".join(f"{i.count:,} × {usd(i.unit_price_usd)}" for i in bought) or "none bought"
    if key == "servers_usd":
        return "; ".join(f"{s.count:,} × {server_name(catalog, s.server)} at {usd(s.unit_price_usd)}"
                         for s in plan.servers) or "none priced (see the bill of materials)"
    if key == "energy_usd":
        return (f"{(plan.cost_breakdown.energy_usd or 0.0) / a.electricity_usd_per_kwh:,.0f} kWh at "
                f"{unit_rate(a.electricity_usd_per_kwh)} per kWh, including the building overhead (PUE {a.pue:.2f})"
                if a.electricity_usd_per_kwh else "at the deployment's electricity rate")
    if key == "hosting_usd":
        return f"{unit_rate(a.hosting_usd_per_kw_month)} per kW-month while the GPUs are held"
    if key == "rental_usd":
        rented = [i for i in plan.purchase if i.ownership == "rent"]
        return "; ".join(f"{i.gpu_hours or 0:,.0f} GPU-hours × {unit_rate(i.unit_price_usd or 0)}"
                         for i in rented) or "none rented"
    return "see the bill of materials"


def requirement(ctx: PlanContext, plan: Plan) -> tuple[list, list]:
    wl, catalog = ctx.workload, ctx.catalog
    d = wl.deployment
    rows = []
    for i, job in enumerate(wl.jobs):
        if job.kind == "serve":
            t = job.traffic
            rows.append((f"Serving job '{wl.job_name(i)}'", f"serve {job.model} in {job.precision} to "
                         f"{t.requests_per_s:g} requests/s (peak ×{t.peak_factor:g})"))
            continue
        if isinstance(job.model, str):
            m = catalog.models.get(job.model)
            model = f"{job.model} ({count_words(m.params)} parameters)" if m else job.model
        else:
            model = f"a {count_words(job.model.params)}-parameter model"
        what = (f"{job.kind} {model} on {count_words(job.tokens)} tokens in {job.precision}, "
                f"deadline {duration(job.deadline) if job.deadline else 'none'}"
                + (f", {job.repeat} copies" if job.repeat > 1 else ""))
        rows.append(("Training run" if len(wl.jobs) == 1 and not job.name else f"Job '{wl.job_name(i)}'", what))
    if d.context == "cloud":
        rows.append(("Deployment", f"cloud, region {d.region}: GPUs rented by the hour"))
    else:
        owner = {"buy": "buy the GPUs", "rent": "rent the GPUs",
                 "any": "buy or rent, whichever is cheaper"}[d.ownership]
        rows.append(("Deployment", f"{d.context}, region {d.region}; {owner}; owned hardware costed over "
                                   f"{d.horizon_months:g} months"))
    sel = wl.gpus
    gpus = ", ".join(catalog.gpus[g].name for g in sel.allow) if sel.allow else "any GPU in the catalog"
    rows.append(("GPUs considered", gpus + (f"; never {', '.join(sel.deny)}" if sel.deny else "")))
    if sel.count is not None:
        rows.append(("GPU count", f"exactly {sel.count:,}"))
    elif sel.min is not None or sel.max is not None:
        rows.append(("GPU count", " and ".join(x for x in (f"at least {sel.min:,}" if sel.min else "",
                                                             f"at most {sel.max:,}" if sel.max else "") if x)))
    if wl.budget_usd is not None:
        rows.append(("Budget", usd(wl.budget_usd)))
    if d.power_limit_kw is not None:
        rows.append(("Power limit", f"{d.power_limit_kw:g} kW"))
    constraints = []
    for b in plan.binding:
        spare = f"{b.slack or 0:,.2f} {b.unit} to spare"
        margin = (f"binding ({spare}, under 1% of the limit)" if b.slack else "none: binding") if b.binding \
            else spare
        kind, _, what = b.constraint.partition(":")
        label = _CONSTRAINT.get(kind, kind.replace("_", " ").capitalize())
        constraints.append({"constraint": f"{label} ({job_label(what, wl)})" if what else label,
                            "plan": sentence(b.message),
                            "margin": margin})
    return rows, constraints


def assumption_rows(wl: Workload, catalog: Catalog, plan: Plan, refs: Refs) -> list[dict]:
    d, a = wl.deployment, plan.assumptions
    site = d.site
    out: list[dict[str, Any]] = []
    for key, given, text in (
            ("electricity_usd_per_kwh", d.electricity_usd_per_kwh,
             f"Electricity costs {unit_rate(a.electricity_usd_per_kwh)} per kWh"),
            ("pue", d.pue, f"The building's PUE is {a.pue:.2f}"),
            ("hosting_usd_per_kw_month", d.hosting_usd_per_kw_month,
             f"Hosting costs {unit_rate(a.hosting_usd_per_kw_month)} per kW of capacity per month"
             if a.hosting_usd_per_kw_month else "No hosting is charged")):
        if given is not None:
            out.append({"text": f"{text} (given in the workload).", "refs": []})
            continue
        assumption = catalog.assumptions.get(f"{key}_{site}")
        note = f": {assumption.note}" if assumption is not None and assumption.note else ""
        out.append({"text": f"{text}{note}.", "refs": refs.cite(assumption.source, assumption.as_of)
                    if assumption is not None else []})
    out.append({"text": f"Owned hardware is costed over {a.horizon_months:g} months: it is resold when its planned "
                        "work is done or at the horizon's end, whichever costs less, at its generation's used-market "
                        "value (the disposal rows); "
                        + ("energy is costed only for the hours the jobs run, not for idle time." if a.utilization is None
                           else f"energy is costed at {a.utilization:.0%} utilization for as long as the GPUs are held."),
             "refs": []})
    out.append({"text": "Rented GPUs run in the provider's datacenter; their energy and hosting are in the "
                        "hourly rate.", "refs": []})
    out.append({"text": "Training times are estimates from the tool's performance model (docs/model.md), not "
                        "measurements of this job.", "refs": []})
    return out
