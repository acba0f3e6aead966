"""The memo's requirement and assumptions: the workload restated as a reader checks it (jobs,
deployment, GPUs and limits), each constraint's margin in the plan, and the cost assumptions
with their sources."""

from __future__ import annotations

from typing import Any

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.explanations import Binding
from advisor.data.catalog import Catalog
from advisor.durations import duration
from advisor.inputs.workload import Workload
from advisor.present.constraint_words import budget_usd
from advisor.present.memo_refs import Refs
from advisor.present.words import (
    amount,
    count_words,
    job_label,
    join,
    months_phrase,
    own_speeds,
    sentence,
    unit_rate,
    usd,
    usd_cents,
)

_CONSTRAINT = {
    "deadline": "Deadline",
    "budget": "Budget",
    "power": "Power limit",
    "gpu_count": "GPU count",
    "gpu_count_min": "Minimum GPU count",
    "gpu_count_max": "Maximum GPU count",
    "stock": "Stock",
}


def requirement(ctx: PlanContext, plan: Plan) -> tuple[list, list]:
    """The workload restated (its jobs, deployment, GPUs, count, budget and power limit) and each
    constraint's margin in the plan."""
    wl = ctx.workload
    rows = [_job_requirement(wl, i, ctx.catalog) for i in range(len(wl.jobs))]
    rows += _limits(wl, ctx.catalog)
    return rows, [_margin(b, wl) for b in plan.binding]


def _job_requirement(wl: Workload, i: int, catalog: Catalog) -> tuple[str, str]:
    """One job as the workload asks it: what is served to how many requests, or what is trained on
    how many tokens by when."""
    job = wl.jobs[i]
    if job.kind == "serve":
        t = job.traffic
        return (
            f"Serving job '{wl.job_name(i)}'",
            f"serve {job.model} in {job.precision} to {t.requests_per_s:g} requests/s (peak ×{t.peak_factor:g})",
        )
    if isinstance(job.model, str):
        m = catalog.models.get(job.model)
        model = f"{job.model} ({count_words(m.params)} parameters)" if m else job.model
    else:
        model = f"a {count_words(job.model.params)}-parameter model"
    what = (
        f"{job.kind} {model} on {count_words(job.tokens)} tokens in {job.precision}, "
        f"deadline {duration(job.deadline) if job.deadline else 'none'}"
        + (f", {job.repeat} copies" if job.repeat > 1 else "")
    )
    return ("Training run" if len(wl.jobs) == 1 and not job.name else f"Job '{wl.job_name(i)}'", what)


def _limits(wl: Workload, catalog: Catalog) -> list[tuple[str, str]]:
    """The deployment, the GPUs considered, and the count, budget and power limits given."""
    d = wl.deployment
    rows = []
    if d.context == "cloud":
        rows.append(("Deployment", f"cloud, region {d.region}: GPUs rented by the hour"))
    else:
        owner = {"buy": "buy the GPUs", "rent": "rent the GPUs", "any": "buy or rent, whichever is cheaper"}[
            d.ownership
        ]
        rows.append(
            (
                "Deployment",
                f"{d.context}, region {d.region}; {owner}; owned hardware costed over {months_phrase(d.horizon_months)}",
            )
        )
    sel = wl.gpus
    gpus = ", ".join(catalog.gpus[g].name for g in sel.allow) if sel.allow else "any GPU in the catalog"
    rows.append(("GPUs considered", gpus + (f"; never {', '.join(sel.deny)}" if sel.deny else "")))
    if sel.count is not None:
        rows.append(("GPU count", f"exactly {sel.count:,}"))
    elif sel.min is not None or sel.max is not None:
        rows.append(
            (
                "GPU count",
                " and ".join(
                    x
                    for x in (f"at least {sel.min:,}" if sel.min else "", f"at most {sel.max:,}" if sel.max else "")
                    if x
                ),
            )
        )
    if wl.budget_usd is not None:
        b = wl.budget_usd  # as written: $30,000, or $5.1511 when it has cents (as the constraint rows print it)
        rows.append(("Budget", usd(b) if b == round(b) else budget_usd(b)))
    if d.power_limit_kw is not None:
        rows.append(("Power limit", f"{d.power_limit_kw:g} kW"))
    return rows


def _margin(b: Binding, wl: Workload) -> dict[str, str]:
    """One constraint, what the plan does against it, and its margin (binding, or what is spare)."""
    spare = f"{amount(b.slack, b.unit)} to spare"
    margin = (f"binding ({spare}, under 1% of the limit)" if b.slack else "none: binding") if b.binding else spare
    kind, _, what = b.constraint.partition(":")
    label = _CONSTRAINT.get(kind, kind.replace("_", " ").capitalize())
    return {
        "constraint": f"{label} ({job_label(what, wl)})" if what else label,
        "plan": sentence(b.message),
        "margin": margin,
    }


def _not_resold(plan: Plan) -> str:
    """The bought hardware the plan counts at no resale value (no sourced used-market curve for servers,
    NICs, switches or drives): written off when the GPUs are sold, said with its cash."""
    cb = plan.cost_breakdown
    parts = [(cb.servers_usd, "servers"), (cb.network_usd, "network"), (cb.storage_usd, "storage")]
    held = [(v, what) for v, what in parts if v]
    if not held:
        return ""
    return (
        f"the {join([what for _, what in held])} ({usd_cents(sum(v for v, _ in held))} before tax) "
        f"{'is' if len(held) == 1 else 'are'} not resold: "
        "no used-market value is sourced, so the plan counts nothing back; "
    )


def assumption_rows(wl: Workload, catalog: Catalog, plan: Plan, refs: Refs) -> list[dict]:
    d, a = wl.deployment, plan.assumptions
    site = d.site
    out: list[dict[str, Any]] = []
    for key, given, text in (
        (
            "electricity_usd_per_kwh",
            d.electricity_usd_per_kwh,
            f"Electricity costs {unit_rate(a.electricity_usd_per_kwh)} per kWh",
        ),
        ("pue", d.pue, f"The building's PUE is {a.pue:.2f}"),
        (
            "hosting_usd_per_kw_month",
            d.hosting_usd_per_kw_month,
            f"Hosting costs {unit_rate(a.hosting_usd_per_kw_month)} per kW of capacity per month"
            if a.hosting_usd_per_kw_month
            else "No hosting is charged",
        ),
    ):
        if given is not None:
            out.append({"text": f"{text} (given in the workload).", "refs": []})
            continue
        assumption = catalog.assumptions.get(f"{key}_{site}")
        note = f": {assumption.note}" if assumption is not None and assumption.note else ""
        out.append(
            {
                "text": f"{text}{note}.",
                "refs": refs.cite(assumption.source, assumption.as_of) if assumption is not None else [],
            }
        )
    out.append(
        {
            "text": f"Owned GPUs are costed over {months_phrase(a.horizon_months)}: they are resold when their planned "
            "work is done or at the horizon's end, whichever costs less, at their generation's used-market "
            "value (the disposal rows); "
            + _not_resold(plan)
            + (
                "energy is costed only for the hours the jobs run, not for idle time."
                if a.utilization is None
                else f"energy is costed at {a.utilization:.0%} utilization for as long as the GPUs are held."
            ),
            "refs": [],
        }
    )
    out.append(
        {
            "text": "Rented GPUs run in the provider's datacenter; their energy and hosting are in the hourly rate.",
            "refs": [],
        }
    )
    out.append({"text": _speeds_basis(plan), "refs": []})
    return out


def _speeds_basis(plan: Plan) -> str:
    """Where the times and serving speeds come from: the tool's model, except those the user's own runs
    set or moved, named (a memo that called a measured speed an estimate denied the buyer's own figure)."""
    own = own_speeds(plan)
    if not own:
        return "Training times are estimates from the tool's performance model (docs/model.md), not measurements of this job."
    return (
        "Speeds are estimates from the tool's performance model (docs/model.md) except those your own runs "
        f"set or moved: {'; '.join(own)}."
    )
