"""Charts drawn with matplotlib, reproducible to the byte: fixed SVG hash salt, no dates in the
metadata, text kept as text (svg.fonttype none: 1.7 s less than drawing glyphs as paths, and the
words stay searchable) in a fixed font stack measured with the font matplotlib ships. matplotlib is imported only when a chart is
drawn (it adds ~0.35 s to start-up).
"""
from __future__ import annotations

import io
import math
import re

SVG_SALT = "gpu-advisor"


def prefix_ids(svg: str, prefix: str) -> str:
    """Give every id of one SVG a prefix, so that two charts inlined in one HTML page never
    share an id (matplotlib names glyphs and clip paths the same in every figure)."""
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{prefix}-{m.group(1)}"', svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", svg)


def svg_text(fig, prefix: str) -> tuple[str, str]:
    """(a standalone SVG file, the same SVG for inlining in HTML), byte-for-byte reproducible."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "gpu-advisor"})
    text = prefix_ids(buf.getvalue().decode("utf-8"), prefix)
    inline = re.sub(r"^<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?", "", text)
    return text, inline


def log_labels(axis, fmt) -> None:
    """Label a log axis with fmt (e.g. words.usd_short: $40K, never 4×10⁴): the decades, and the
    ticks between them when the axis spans too little for a decade to show (matplotlib's choice
    of which ticks to label, with our words; mathtext is off, so its labels would read raw TeX)."""
    from matplotlib.ticker import LogFormatter

    class Words(LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            return fmt(x)

    axis.set_major_formatter(Words(minor_thresholds=(math.inf, math.inf)))   # every major tick
    axis.set_minor_formatter(Words(labelOnlyBase=False))


def rc_context():
    import matplotlib

    return matplotlib.rc_context({
        "svg.hashsalt": SVG_SALT, "text.parse_math": False,   # a '$' in a name is text, not TeX
        "svg.fonttype": "none", "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans", "Bitstream Vera Sans", "Verdana", "Arial"], "font.size": 9,
        "axes.spines.top": False, "axes.spines.right": False, "axes.titlesize": 10, "axes.titleweight": "bold",
        "legend.frameon": False, "figure.dpi": 72, "savefig.bbox": None,
    })


def crossover_svg(x: dict) -> str:
    """Cost of the cheapest plan and of the focus GPU's best plan against model size (log-log),
    with the crossover marked: the chart beside `advisor crossover`'s table."""
    from matplotlib.figure import Figure

    from advisor.present.words import short, usd_short

    focus = x["focus"]
    pts = x["points"]
    with rc_context():
        fig = Figure(figsize=(8, 4.2), layout="constrained")   # room for every label and note
        ax = fig.add_subplot(1, 1, 1)
        best = [(p["params"], p["total_cost_usd"], p["cheapest"]) for p in pts if p["total_cost_usd"]]
        mine = [(p["params"], p["focus_cost_usd"]) for p in pts if p["focus_cost_usd"]]
        if best:
            ax.plot([b[0] for b in best], [b[1] for b in best], "o-", color="#444444", label="cheapest plan")
            previous = None
            for params, cost, gpu in best:  # name the winner where it changes
                if gpu != previous:
                    ax.annotate(gpu, (params, cost), textcoords="offset points", xytext=(-6, 8), fontsize=7,
                                color="#444444", ha="right")
                previous = gpu
        if mine:
            ax.plot([m[0] for m in mine], [m[1] for m in mine], "s--", color="#76b900", label=f"best plan on {focus}")
        for p in pts:
            if not p["total_cost_usd"]:
                ax.axvline(p["params"], color="#999999", alpha=0.25, linewidth=6)
        if any(not p["total_cost_usd"] for p in pts):
            ax.plot([], [], color="#999999", alpha=0.4, linewidth=6, label="no plan within the limits")
        if x["crossover_model"]:
            cp = next(p for p in pts if p["model"] == x["crossover_model"])
            ax.axvline(cp["params"], color="#c0392b", linestyle=":")
            ax.annotate(f"{focus} stops winning at {x['crossover_model']}:\n{(cp['factor_text'] or '').split(':')[0]}",
                        (cp["params"], 0.02), xycoords=("data", "axes fraction"), textcoords="offset points",
                        xytext=(6, 4), fontsize=8, color="#c0392b")
        ax.set_xscale("log")
        ax.set_yscale("log")
        log_labels(ax.xaxis, short)
        log_labels(ax.yaxis, usd_short)
        ax.set_xlabel("model parameters")
        ax.set_ylabel("total cost")
        ax.set_title(f"{x['tokens']} tokens, at most {x['max_gpus']} GPUs, {x['deployment']}")
        ax.legend(loc="upper left")
        return svg_text(fig, "crossover")[0]
