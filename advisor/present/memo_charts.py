"""The memo's charts, drawn from data the plan computed (explain/tradeoffs.py): cost against
completion time with the Pareto front, and training speed per dollar by GPU."""
from __future__ import annotations

from advisor.present.charts import figure as _figure
from advisor.present.charts import fit, log_labels
from advisor.present.charts import rc_context as _rc
from advisor.present.charts import svg_text as _svg
from advisor.present.words import deadline_phrase, job_label, join, usd_short

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")


def charts(plan, problem, data: dict) -> list[dict]:
    """The memo's charts (those with something to show), each as SVG for a file and for inlining."""
    colour = {gid: COLOURS[i % len(COLOURS)] for i, gid in enumerate(problem.considered)}
    with _rc():
        excluded = excluded_labels(plan)
        drawn = [_cost_time_chart(plan, problem, colour, data["cost_time"]),
                 _value_chart(problem, colour, data["value"], excluded)]
    return [c for c in drawn if c is not None]


def excluded_labels(plan) -> dict[str, str]:
    """GPU id -> why the plan cannot use it at all (a rule, no price, no server...), for marking
    bars: a chart must not make an excluded GPU look like the best buy."""
    out = {}
    for r in plan.get("rejected", []):
        if r.get("forced_cost_usd") is not None or not r.get("reasons"):
            continue
        first = r["reasons"][0]
        if first.get("code") == "cost":
            continue
        out[r["gpu"]] = (f"rule {first['rule']}" if first.get("rule")
                         else EXCLUSION.get(first.get("code"), "no plan meets the limits with it"))
    return out


EXCLUSION = {"no-price": "no price", "no-purchase-price": "no purchase price", "no-rental-price": "no rental price",
             "no-server": "no priced server", "memory": "does not fit", "estimate": "speed unknown",
             "deadline": "misses the deadline", "deadline_limit": "misses the deadline", "gpu_count": "too many GPUs needed",
             "power": "over the power limit", "budget": "over budget", "slots": "no machine holds it",
             "combined": "limits conflict", "no-plan": "no plan meets the limits"}


def _cost_time_chart(plan, problem, colour, data: dict) -> dict | None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if not data["series"]:
        return None
    names = {gid: problem.catalog.gpus[gid].name for gid in problem.considered}
    all_h = [p[0] for pts in data["series"].values() for p in pts]
    deadlines = [c.deadline for c in problem.classes if c.deadline]
    days = max(all_h + deadlines) >= 72
    scale = 24.0 if days else 1.0
    fig, ax = _figure(7.2, 4.4)
    for gid, pts in data["series"].items():
        xs, ys = [p[0] / scale for p in pts], [p[1] for p in pts]
        ax.plot(xs, ys, "-o", color=colour[gid], ms=5, lw=1, alpha=0.85, label=f"{names[gid]} only")
        for x, y, n in zip(xs, ys, [p[2] for p in pts]):
            ax.annotate(f"{n}", (x, y), xytext=(4, 3), textcoords="offset points", fontsize=7,
                        color=colour[gid])
    if data["front"]:
        fx, fy = [p[0] / scale for p in data["front"]], [p[1] for p in data["front"]]
        ax.step(fx, fy, where="post", color="black", lw=1.6, alpha=0.6,
                label="Pareto front: cheapest plan for each finishing time")
        ax.plot(fx, fy, "o", mfc="none", mec="black", ms=9, mew=1)
    if plan["status"] != "infeasible":
        finish = max(j["wall_days"] for j in plan["jobs"]) * 24 / scale
        ax.plot([finish], [plan["total_cost_usd"]], "*", color="#d62728", ms=16, zorder=5,
                label="Recommended plan")
    for dl in sorted(set(deadlines)):
        ax.axvline(dl / scale, color="#d62728", ls="--", lw=1)
        ax.annotate(deadline_phrase(dl), (dl / scale, 1), xycoords=("data", "axes fraction"),
                    xytext=(-4, -12), textcoords="offset points", ha="right", fontsize=8, color="#d62728")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    log_labels(ax.yaxis, usd_short)   # $40K; a span under a decade labels its minor ticks too
    ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"Time until all work is done ({'days' if days else 'hours'}, log scale)")
    ax.set_ylabel(f"Total cost over {plan['assumptions']['horizon_months']:g} months (log scale)")
    ax.grid(True, which="major", color="#dddddd", lw=0.6)
    fit(fig, ax, fig.legend(loc="lower center", ncol=2, fontsize=8))
    shown = set(data["series"])
    left_out = [names[g] for g in problem.considered if g not in shown]
    caption = ("Each dot is the cheapest plan that uses only one GPU type and finishes within a given time; "
               "the small number beside it is how many GPUs that plan uses. The black line joins the "
               "plans for which no other plan is both cheaper and faster; the star is the recommendation.")
    if left_out:
        caption += f" Not shown (see Alternatives considered for why): {join(left_out)}."
    file_svg, inline = _svg(fig, "c1")
    return {"slug": "cost-vs-time", "title": "Cost against completion time", "caption": caption,
            "svg_file": file_svg, "svg": inline,
            "alt": "Chart of total cost against completion time for each GPU type"}


def _value_chart(problem, colour, value: dict, excluded: dict[str, str]) -> dict | None:
    from matplotlib.ticker import FuncFormatter

    rows = value["rows"]
    if not any(r["value"] for r in rows):
        return None
    order = sorted(rows, key=lambda r: (-(r["value"] or 0), r["name"]))
    fig, ax = _figure(7.2, 0.5 * len(order) + 1.0)
    top = max(r["value"] or 0 for r in order)
    for i, r in enumerate(order):
        y = len(order) - 1 - i
        if r["value"] is not None:
            allowed = not r["rules"] and r["gpu"] not in excluded
            ax.barh(y, r["value"], color=colour[r["gpu"]] if allowed else "#d9d9d9",
                    hatch=None if allowed else "//", edgecolor=None if allowed else "#999999", height=0.6)
            ax.text(r["value"] + top * 0.01, y, f"{r['value']:,.0f}" if r["value"] >= 10
                    else f"{r['value']:,.2f}", va="center", fontsize=8)
            if not allowed:
                why = f"rule {', '.join(r['rules'])}" if r["rules"] else excluded[r["gpu"]]
                ax.text(top * 0.02, y, f"excluded here: {why}", va="center",
                        fontsize=8, color="#333333", bbox={"facecolor": "white", "edgecolor": "none",
                                                           "pad": 1.5})
        else:
            ax.text(top * 0.02, y, r["note"], va="center", fontsize=8, color="#666666", style="italic")
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"{r['name']}" + (f" ×{r['count']}" if r["count"] and r["count"] > 1 else "")
                        for r in reversed(order)])
    ax.set_xlim(0, top * 1.15)
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel(value["unit"].capitalize() + " (higher is better)")
    ax.grid(True, axis="x", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    fit(fig, ax)
    job = job_label(value["job"], problem.workload)
    caption = (f"Estimated training speed of {'the training run' if job == 'Training run' else repr(job)} "
               "on each GPU type divided by "
               + ("its cheapest on-demand rental rate" if value["renting"] else "its purchase price")
               + ", on the fewest GPUs that hold the job. It compares value for money; it ignores "
                 "servers, power and the deadline, which the plan accounts for. Grey hatched bars are GPUs "
                 "the plan cannot use here, with the reason.")
    file_svg, inline = _svg(fig, "c2")
    return {"slug": "value-by-gpu", "title": "Training speed per dollar, by GPU", "caption": caption,
            "svg_file": file_svg, "svg": inline, "alt": f"Bar chart of {value['unit']} by GPU"}
