"""The memo's sections as display text: bill of materials, jobs, alternatives, rule cards, cost
rows, the requirement and the assumptions. Everything comes from the plan and what it was made
from; nothing is solved or estimated here."""

from __future__ import annotations

from typing import Any

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.explanations import Rejected
from advisor.data.catalog import GPU, Catalog
from advisor.durations import duration
from advisor.present.bom_figures import quantity_and_unit
from advisor.present.decision_words import why_dearer
from advisor.present.memo_refs import Refs
from advisor.present.words import (
    count_words,
    day,
    job_label,
    more_or_less,
    nights_words,
    pct,
    plural,
    quoted_rate,
    rate,
    sentence,
    usd,
    usd_cents,
)

PRICE_KIND = {
    "msrp": "launch list price (MSRP)",
    "list": "list price",
    "street": "street price",
    "estimate": "analyst estimate",
    "quote": "quote",
}
LIMITED_BY = {
    "compute": "matrix math (the GPU's compute rate)",
    "memory_bandwidth": "memory bandwidth (moving data in and out of GPU memory)",
    "interconnect": "GPU-to-GPU bandwidth (exchanging results between GPUs)",
    "none": "nothing measured",
}


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
        qty, unit, derived = quantity_and_unit(row.kind, row.quantity, row.unit_usd, row.total_usd)
        bom.append(
            {
                "item": row.item,
                "qty": qty,
                "unit": unit,
                "extended": usd_cents(row.total_usd)
                if row.total_usd is not None
                else "in hosting"
                if row.kind == "racks"
                else "unpriced",
                "basis": row.confidence or "unrated",
                "refs": refs.cite(row.source),
            }
        )
        if row.note or derived:
            bom_notes.append(f"{row.item}: " + " ".join(sentence(x) for x in (row.note, derived) if x))
    for g in sorted({i.gpu for i in plan.purchase if i.ownership == "buy"}):
        if not ctx.hosts.get(g):
            bom_notes.append(
                f"The catalog lists no server or workstation to hold the {gpus[g].name}, so none is "
                "costed: budget the host machine separately."
            )
    return bom, bom_notes


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
        memory = f"{j.memory_per_gpu_gb:.1f} GB of the {g.memory_gb.value:g} GB on each GPU" + (
            f", the model's training state sharded over {lay.shards} GPUs" if (lay.shards or 1) > 1 else ""
        )
        if n_min and n_min > 1:
            memory_binds = (
                f"Memory size sets the minimum: the job needs at least {plural(n_min, 'GPU')} "
                "to hold its model, gradients and optimizer state."
            )
        else:
            memory_binds = "Memory size does not constrain the choice: one GPU holds the whole job."
        limited_by = LIMITED_BY.get(j.binding_factor, j.binding_factor)
        jobs.append(
            {
                "name": job_label(j.name, wl) + (f" (×{j.copies:g} copies)" if j.copies != 1 else ""),
                "gpus": f"{j.gpu_count:,} × {g.name} ({'bought' if j.ownership == 'buy' else 'rented'})",
                "tokens": f"{count_words(info.tokens)} tokens",
                "speed": f"{rate(j.tokens_per_s)} tokens/s",
                "time": duration(j.wall_days * 24) + (f" of running, {nights_words(j)}" if j.hours_a_day else ""),
                "deadline": duration(info.deadline_hours) if info.deadline_hours else "none",
                "mfu": pct(100 * j.mfu),
                "memory": memory,
                "limited_by": limited_by,
                "basis": (
                    _step_words(lay.global_batch_tokens, j.tokens_per_s, step)
                    + f"{sb.compute_s:.3g} s of matrix math at the GPU's "
                    f"{tf.value if tf else 'unknown'} TFLOPS {info.precision} rate, {sb.memory_s:.3g} s of "
                    f"memory traffic at {g.memory_bandwidth_gbps.value:,.0f} GB/s and {sb.comm_s:.3g} s of "
                    "GPU-to-GPU communication that computation does not hide"
                    + (
                        f" ({step:.3g} s in all)"
                        if _speed_differs(lay.global_batch_tokens, j.tokens_per_s, step)
                        else ""
                    )
                    + f". The largest part, {limited_by}, limits the speed. "
                    f"{memory_binds}"
                ),
                "refs": spec_refs,
            }
        )
    return jobs


def _speed_differs(batch: float, tokens_per_s: float, step: float) -> bool:
    """Does the job's speed give a step (batch / tokens/s) other than the model's parts add up to, by more
    than their printed precision: a speed held to the best published MFU, derated, or measured."""
    return tokens_per_s > 0 and abs(batch / tokens_per_s - step) > 0.005 * step


def _step_words(batch: float, tokens_per_s: float, step: float) -> str:
    """The step as the job's speed gives it, then the model's parts: 'takes 31.6 s at 66,400 tokens/s' is
    what the time column rests on, never the unheld model's 25.0 s beside it."""
    head = f"Each training step processes {batch:,.0f} tokens and takes "
    if not _speed_differs(batch, tokens_per_s, step):
        return head + f"{step:.3g} s: "
    used = batch / tokens_per_s
    return head + (
        f"{used:.3g} s at the {rate(tokens_per_s)} tokens/s the plan uses, "
        f"{'slower' if used > step else 'faster'} than the performance model's step (the speed is held to what "
        "published runs reached, derated or measured: see Assumptions and warnings). The model's parts: "
    )


def alternative_rows(plan: Plan, ctx: PlanContext, refs: Refs) -> tuple[list, tuple[str, float] | None, list]:
    """Every GPU type of the workload: the recommendation first, then the costed alternatives
    from the cheapest, then those excluded. Also the cheapest alternative (name, cost) and the
    rule ids cited, by exclusions and by warnings."""
    gpus = ctx.catalog.gpus
    rejected = {r.gpu: r for r in plan.rejected}
    chosen = {j.gpu for j in plan.jobs}
    best_alt: tuple[str, float] | None = None
    alternatives: list[tuple[tuple[int, float, str], dict[str, Any]]] = []
    cited_rules: list[str] = []
    for gid in ctx.considered:
        g = gpus[gid]
        r = rejected.get(gid)
        if gid in chosen:
            alternatives.append(
                (
                    (0, 0.0, g.name),
                    {
                        "gpu": g.name,
                        "status": "Recommended",
                        "cost": usd(plan.total_cost_usd),
                        "detail": "The plan above.",
                        "refs": [],
                    },
                )
            )
            continue
        if r is None:  # allowed, but the plan is infeasible and no forced cost was computed
            alternatives.append(
                (
                    (2, 0.0, g.name),
                    {
                        "gpu": g.name,
                        "status": "No plan",
                        "cost": "n/a",
                        "detail": "Allowed, but no plan meets every requirement (see why no plan exists).",
                        "refs": [],
                    },
                )
            )
            continue
        rule_ids = [x.rule for x in r.reasons if x.rule]
        cited_rules += [x for x in rule_ids if x not in cited_rules]
        forced = r.forced_cost_usd
        if forced is None:
            alternatives.append(((2, 0.0, g.name), _excluded_row(g.name, r, rule_ids, refs)))
            continue
        if best_alt is None or forced < best_alt[1]:
            best_alt = (g.name, forced)
        alternatives.append(((1, forced, g.name), _costlier_row(plan, g, r, refs)))
    rows = [row for _, row in sorted(alternatives, key=lambda x: x[0])]
    for w in plan.warnings:
        if w.rule and w.rule not in cited_rules:
            cited_rules.append(w.rule)
    return rows, best_alt, cited_rules


def _excluded_row(name: str, r: Rejected, rule_ids: list[str], refs: Refs) -> dict[str, Any]:
    """A GPU no plan can use: the rules that forbid it (else its first reason) and every reason."""
    blocking = [x.rule for x in r.reasons if x.rule and x.severity != "warn"]
    status = f"Excluded by rule {', '.join(blocking)}" if blocking else _STATUS.get(r.reasons[0].code, "Excluded")
    return {
        "gpu": name,
        "status": status,
        "cost": "n/a",
        "detail": " ".join(sentence(x.message) for x in r.reasons),
        "refs": refs.cite(rule_ids),
    }


def _costlier_row(plan: Plan, g: GPU, r: Rejected, refs: Refs) -> dict[str, Any]:
    """A GPU that could do the work at a higher cost: how much more, and the price it was costed at
    (its purchase price unless the plan, or its best plan, only rents; else the rate of the offer
    that best plan rents on, or its cheapest rental rate)."""
    total = plan.total_cost_usd or 0.0
    forced = r.forced_cost_usd or 0.0
    extra = forced - total
    p, rent = g.prices.purchase, r.forced_rental
    rents = plan.assumptions.ownership == "rent" or r.forced_ownership == "rent"
    if not rents and p is not None and p.usd:
        price, price_refs = (
            f"{usd(p.usd)} per GPU ({PRICE_KIND.get(p.kind or '', 'price')}, {day(p.as_of)})",
            refs.cite(p.source, p.as_of),
        )
    elif rent is not None:
        price, price_refs = (
            f"{quoted_rate(rent.usd_per_gpu_hour)} per GPU-hour ({rent.provider}, {day(rent.as_of)})",
            refs.cite(rent.source, rent.as_of),
        )
    elif g.rental is not None:
        price, price_refs = (
            f"{quoted_rate(g.rental.usd_per_gpu_hour)} per GPU-hour ({g.rental.provider}, {day(g.rental.as_of)})",
            refs.cite(g.rental.source, g.rental.as_of),
        )
    else:
        price, price_refs = "", []
    return {
        "gpu": g.name,
        "status": "Costs the same"
        if round(extra, 2) == 0
        else "Costs more"
        if extra > 0
        else "Cheaper at the catalog's figures",
        "cost": usd(forced),
        "detail": f"The cheapest plan using only this GPU costs {more_or_less(extra, 100 * extra / total)} than "
        "the recommendation"
        + (f" at the catalog's figures ({why_dearer(plan)})" if extra < 0 else "")
        + (f"; priced at {price}." if price else "."),
        "refs": price_refs,
    }


def rule_card(rule: Any, refs: Refs) -> dict:
    return {
        "id": rule.id,
        "title": rule.title,
        "why": " ".join(rule.why.split()),
        "source": rule.source.title,
        "clause": rule.source.clause,
        "url": rule.source.url,
        "refs": refs.cite([rule.id]),
    }


_STATUS = {
    "no-purchase-price": "No purchase price",
    "no-rental-price": "No rental price",
    "memory": "Does not fit",
    "deadline": "Too slow for the deadline",
    "no-server": "No server platform",
    "no-feasible-plan": "No plan meets the limits",
    "none": "Excluded",
}
