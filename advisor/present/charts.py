"""The chart beside `advisor crossover`'s table, drawn as plain SVG (advisor/present/svg.py)."""

from __future__ import annotations

from advisor.present.svg import Chart
from advisor.present.tables import crossover_headline
from advisor.present.words import short, usd, usd_short


def crossover_svg(x: dict) -> str:
    """Cost of the cheapest plan and of the focus GPU's best plan against model size (log-log),
    with the crossover marked: the chart beside `advisor crossover`'s table."""
    focus = x["focus"]
    pts = x["points"]
    ch = Chart(8, 4.2, "crossover", title=f"{x['tokens']} tokens, at most {x['max_gpus']} GPUs, {x['deployment']}")
    ch.legend_loc = "upper left"
    best = [(p["params"], p["total_cost_usd"], p["cheapest"]) for p in pts if p["total_cost_usd"]]
    mine = [(p["params"], p["focus_cost_usd"]) for p in pts if p["focus_cost_usd"]]
    if best:
        ch.line([b[0] for b in best], [b[1] for b in best], "#444444", marker="o", label="cheapest plan")
        previous = None
        for params, cost, gpu in best:  # name the winner where it changes
            if gpu != previous:
                ch.text(params, cost, gpu, dx=-6, dy=8, size=7, colour="#444444", anchor="end")
            previous = gpu
    if mine:
        ch.line(
            [m[0] for m in mine],
            [m[1] for m in mine],
            "#76b900",
            dash="5.5 2.4",
            marker="s",
            label=f"best plan on {focus}",
        )
    for p in pts:
        if not p["total_cost_usd"]:
            ch.vline(p["params"], "#999999", width=6, opacity=0.25)
    if any(not p["total_cost_usd"] for p in pts):
        ch.legend.append(
            ("no plan within the limits", {"colour": "#999999", "width": 6, "opacity": 0.4, "dash": "", "marker": ""})
        )
    headline = crossover_headline(x)
    if x["crossover_model"] and (" takes over" in headline or "no plan of any" in headline):  # where it did stop
        cp = next(p for p in pts if p["model"] == x["crossover_model"])
        what = f"{focus} stops winning at" if " takes over" in headline else "no plan at all from"
        ch.vline(cp["params"], "#c0392b", dash="1 1.65")
        ch.text(
            cp["params"],
            0.02,
            f"{what} {x['crossover_model']}:\n{(cp['factor_text'] or '').split(':')[0]}",
            yfrac=True,
            dx=6,
            dy=4,
            size=8,
            colour="#c0392b",
        )
    ch.x.set(scale="log", label="model parameters", fmt=short)
    ch.y.set(scale="log", label="total cost, present value", fmt=usd_short, fine=usd)
    return ch.svg()[0]
