"""The memo's ranges (issue 16), rendered from what plan() computed: one sentence for the
recommendation (P10-P90 cost and time, the confidence deadlines hold at, the robustness verdict),
one assumptions row (where the distributions come from) and a cost-time chart with P10-P90 whiskers
per GPU type (chart data: plan.chart_data["ranges"]). Renders only."""

from __future__ import annotations

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.numbers import share_of_draws
from advisor.durations import duration
from advisor.present.decision_words import HONEST_SHARE, schedule_misses
from advisor.present.memo_charts import gpu_colours
from advisor.present.svg import Chart
from advisor.present.words import usd, usd_short


def range_sentence(plan: Plan) -> str:
    """'' for an infeasible plan or one made without ranges."""
    cost = plan.total_cost_usd_range
    if not plan.feasible or cost is None:
        return ""
    days = [j.wall_days_range for j in plan.jobs if j.wall_days_range is not None]
    parts = []
    if usd(cost.p10) != usd(cost.p90):  # a range of one value says nothing (the draws vary no serving cost)
        parts.append(f"the total is likely {usd(cost.p10)} to {usd(cost.p90)} (P10\u2013P90)")
    if days:
        lo, hi = max(d.p10 or 0 for d in days), max(d.p90 or 0 for d in days)
        parts.append(
            f"the work takes {duration(24 * lo)} to {duration(24 * hi)} of running time; "
            + (
                f"{schedule_misses(plan)} job(s) miss their deadline on the plan's schedule (see the warnings)"
                if schedule_misses(plan)
                else f"every deadline is met at {plan.confidence.quantile} of the job time"
            )
        )
    text = (
        "Allowing for the estimator's measured error and each price's confidence, " + " and ".join(parts) + "."
        if parts
        else ""
    )
    robust = plan.robustness
    rented = [f"{i.count}× {i.gpu}" for i in plan.purchase if i.use == "serving" and i.ownership == "rent"]
    led = robust is not None and robust.holds_share < HONEST_SHARE  # the recommendation opens with it already
    if robust is not None and not led and not (rented and len(rented) == len(plan.purchase)):
        share = share_of_draws(robust.holds, robust.draws)
        text += (
            f" The choice{' of the GPUs bought' if rented else ''} stays the cheapest in {share} of "
            f"{robust.draws} draws of speeds and prices"
        )
        if robust.alternatives:
            alt = robust.alternatives[0]
            text += f"; otherwise {alt.purchase} ({share_of_draws(round(alt.share * robust.draws), robust.draws)})"
        text += "."
    return text.strip()


def assumption_row(plan: Plan) -> dict | None:
    u = plan.assumptions.uncertainty
    cost = plan.total_cost_usd_range
    if not u.source or (not plan.jobs and (cost is None or usd(cost.p10) == usd(cost.p90))):  # no range printed
        return None
    return {
        "text": f"Ranges (P10\u2013P90) come from {u.source}: speed errors from the estimator's error on "
        f"{u.speed_rows} published training runs, each predicted with its own source left out of the "
        "fit, by GPU generation and precision (rank quantiles, small groups shrunk towards all runs "
        f"pooled; with each source also left out of the derivation, P10\u2013P90 held "
        f"{u.speed_coverage_p10_p90} of the runs), wider for generations with no measured run"
        + ("; a speed your own run measured on its GPU and count: that measurement's spread" if _measured(plan) else "")
        + "; price "
        "errors from the spread of the catalog's quote bands by each price's confidence. Draws are "
        "seeded, so the same input gives the same ranges.",
        "refs": [],
    }


def _measured(plan: Plan) -> bool:
    return any(j.speed_evidence == "measured" for j in plan.jobs) or any(
        r.speed_evidence == "measured" for r in plan.serving
    )


def ranges_chart(plan: Plan, ctx: PlanContext, points: list[dict] | None) -> dict | None:
    """Cost against completion time, one point per GPU type (its cheapest plan), P10-P90 whiskers."""
    if not points:
        return None
    ch = Chart(7.2, 4.0, "c3")
    chosen, colour = {j.gpu for j in plan.jobs}, gpu_colours(ctx)
    for pt in points:
        d, c = pt["days"], pt["cost_usd_range"]
        name = ctx.gpu_name(pt["gpu"])
        mine = pt["gpu"] in chosen
        ch.errorbar(
            d["p50"],
            c["p50"],
            (d["p10"], d["p90"]),
            (c["p10"], c["p90"]),
            colour[pt["gpu"]],
            "*" if mine else "o",
            12 if mine else 6,
            label=name + (" (chosen)" if mine else ""),
        )
    ch.x.set(scale="log", label="Days until the work is done (P50, whiskers P10\u2013P90; log scale)", grid=True)
    ch.y.set(scale="log", label="Total cost, USD (log scale)", fmt=usd_short, fine=usd, grid=True)  # $4.5K
    file_svg, inline = ch.svg()
    return {
        "slug": "cost-vs-time-ranges",
        "title": "Cost against completion time, with ranges",
        "caption": "Each marker is the cheapest plan using only one GPU type, at its median time and cost; the "
        "whiskers span P10 to P90 of the estimator's measured speed error and of the prices' "
        "confidence. The star is the recommendation.",
        "svg_file": file_svg,
        "svg": inline,
        "alt": "Chart of cost against completion time with P10-P90 whiskers",
    }
