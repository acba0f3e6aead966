"""The memo's charts, drawn from data the plan computed (explain/tradeoffs.py): cost against
completion time with the Pareto front, and training speed per dollar by GPU."""

from __future__ import annotations

from typing import Any

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.explanations import Rejected
from advisor.durations import deadline_phrase
from advisor.present.memo_costs import cash_months, start_days
from advisor.present.svg import Chart
from advisor.present.words import EXCLUDED, elapsed_days, job_label, join, months_phrase, usd, usd_short

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")


def gpu_colours(ctx: PlanContext) -> dict[str, str]:
    """One colour per considered GPU type, the same in every chart of a memo (red and grey are left
    for the recommendation and the deadlines)."""
    return {gid: COLOURS[i % len(COLOURS)] for i, gid in enumerate(ctx.considered)}


def charts(plan: Plan, ctx: PlanContext, data: dict[str, Any]) -> list[dict]:
    """The memo's charts (those with something to show), each as SVG for a file and for inlining."""
    colour = gpu_colours(ctx)
    excluded = excluded_labels(plan.rejected)
    drawn = [_cost_time_chart(plan, ctx, colour, data["cost_time"]), _value_chart(ctx, colour, data["value"], excluded)]
    return [c for c in drawn if c is not None]


def excluded_labels(rejected: list[Rejected]) -> dict[str, str]:
    """GPU id -> why the plan cannot use it at all (a rule, no price, no server...), for marking
    bars: a chart must not make an excluded GPU look like the best buy."""
    out = {}
    for r in rejected:
        if r.forced_cost_usd is not None or not r.reasons:
            continue
        first = r.reasons[0]
        if first.code == "cost":
            continue
        out[r.gpu] = (
            f"rule {first.rule}" if first.rule else EXCLUDED.get(first.code, "no plan meets the limits with it")
        )
    return out


def _cost_time_chart(plan: Plan, ctx: PlanContext, colour: dict[str, str], data: dict[str, Any]) -> dict | None:
    if not data["series"]:
        return None
    names = {gid: ctx.gpu_name(gid) for gid in ctx.considered}
    all_h = [p[0] for pts in data["series"].values() for p in pts]
    deadlines = ctx.deadlines
    days = max(all_h + deadlines) >= 72
    scale = 24.0 if days else 1.0
    ch = Chart(7.2, 4.4, "c1")
    for gid, pts in data["series"].items():
        xs, ys = [p[0] / scale for p in pts], [p[1] for p in pts]
        ch.line(xs, ys, colour[gid], width=1, opacity=0.85, marker="o", ms=5, label=f"{names[gid]} only")
        for x, y, n in zip(xs, ys, [p[2] for p in pts]):
            ch.text(x, y, f"{n}", dx=4, dy=3, size=7, colour=colour[gid])
    if data["front"]:
        fx, fy = [p[0] / scale for p in data["front"]], [p[1] for p in data["front"]]
        sx = [x for i, x in enumerate(fx) for _ in range(2 if i else 1)]  # steps after each point
        sy = [y for i, y in enumerate(fy) for _ in range(2 if i < len(fy) - 1 else 1)]
        ch.line(sx, sy, "#000000", width=1.6, opacity=0.6, label="Pareto front: cheapest plan for each finishing time")
        ch.line(fx, fy, "#000000", width=0, marker="o", ms=9, hollow=True)
    if plan.feasible and plan.jobs:
        # when its work is done, from today as the dots are: its GPUs' ready day, then its running (spread over
        # lent off-peak hours), where the star sat at the running time alone (review30)
        finish = max(start_days(plan, j) + elapsed_days(j) for j in plan.jobs) * 24 / scale
        ch.line([finish], [plan.total_cost_usd or 0.0], "#d62728", width=0, marker="*", ms=16, label="Recommended plan")
    for dl in sorted(set(deadlines)):
        ch.vline(dl / scale, "#d62728", dash="4 2")
        ch.text(
            dl / scale,
            1,
            deadline_phrase(dl),
            yfrac=True,
            dx=-4,
            dy=-12,
            anchor="end",
            size=8,
            colour="#d62728",
            avoid="deadline",
        )
    ch.x.set(scale="log", label=f"Time until all work is done ({'days' if days else 'hours'}, log scale)", grid=True)
    ch.y.set(
        scale="log",
        label=f"Total cost over {months_phrase(cash_months(plan))}, present value (log scale)",
        fmt=usd_short,
        fine=usd,
        grid=True,
    )
    shown = set(data["series"])
    in_plan = {i.gpu for i in plan.purchase} | {r.gpu for r in plan.serving}
    left_out = [g for g in ctx.considered if g not in shown]
    used = [names[g] for g in left_out if g in in_plan]  # no plan on it alone does all the work
    other = [names[g] for g in left_out if g not in in_plan]
    caption = (
        "Each dot is the cheapest plan that uses only one GPU type and finishes within a given time; "
        "the small number beside it is how many GPUs that plan uses. The black line joins the "
        "plans for which no other plan is both cheaper and faster; the star is the recommendation."
    )
    if used:
        caption += (
            f" Not shown: {join(used)}, which the recommendation uses beside other types: no plan on "
            f"{'it' if len(used) == 1 else 'any of them'} alone does all the work."
        )
    if other:
        caption += f" Not shown (see Alternatives considered for why): {join(other)}."
    file_svg, inline = ch.svg()
    return {
        "slug": "cost-vs-time",
        "title": "Cost against completion time",
        "caption": caption,
        "svg_file": file_svg,
        "svg": inline,
        "alt": "Chart of total cost against completion time for each GPU type",
    }


def _value_chart(
    ctx: PlanContext, colour: dict[str, str], value: dict[str, Any], excluded: dict[str, str]
) -> dict | None:
    rows = value["rows"]
    if not any(r["value"] for r in rows):
        return None
    order = sorted(rows, key=lambda r: (-(r["value"] or 0), r["name"]))
    ch = Chart(7.2, 0.5 * len(order) + 1.0, "c2")
    top = max(r["value"] or 0 for r in order)
    for i, r in enumerate(order):
        y = len(order) - 1 - i
        if r["value"] is not None:
            allowed = not r["rules"] and r["gpu"] not in excluded
            ch.hbar(y, r["value"], 0.6, colour[r["gpu"]], hatch=not allowed)
            note = None
            if not allowed:
                why = f"rule {', '.join(r['rules'])}" if r["rules"] else excluded[r["gpu"]]
                note = ch.text(top * 0.02, y, f"excluded here: {why}", valign="center", colour="#333333", box=True)
            ch.text(
                r["value"] + top * 0.01,
                y,
                f"{r['value']:,.0f}" if r["value"] >= 10 else f"{r['value']:,.2f}",
                valign="center",
                clear_of=note,
            )  # after the note where the bar is shorter than it
        else:
            ch.text(top * 0.02, y, r["note"], valign="center", colour="#666666", italic=True)
    ch.x.set(
        label=value["unit"].capitalize() + " (higher is better)",
        fmt=lambda v: f"{v:,.0f}",
        limits=(0, top * 1.15),
        grid=True,
    )
    ch.y.set(
        limits=(-0.6, len(order) - 0.4),
        ticks=[
            (i, f"{r['name']}" + (f" ×{r['count']}" if r["count"] and r["count"] > 1 else ""))
            for i, r in enumerate(reversed(order))
        ],
    )
    job = job_label(value["job"], ctx.workload)
    caption = (
        f"Estimated training speed of {'the training run' if job == 'Training run' else repr(job)} "
        "on each GPU type divided by "
        + ("its cheapest on-demand rental rate" if value["renting"] else "its purchase price")
        + ", on the fewest GPUs that hold the job. It compares value for money; it ignores "
        "servers, power and the deadline, which the plan accounts for. Grey hatched bars are GPUs "
        "the plan cannot use here, with the reason."
    )
    file_svg, inline = ch.svg()
    return {
        "slug": "value-by-gpu",
        "title": "Training speed per dollar, by GPU",
        "caption": caption,
        "svg_file": file_svg,
        "svg": inline,
        "alt": f"Bar chart of {value['unit']} by GPU",
    }
