"""Charts drawn with matplotlib, reproducible to the byte: fixed SVG hash salt, no dates in the
metadata, text kept as text (svg.fonttype none: 1.7 s less than drawing glyphs as paths, and the
words stay searchable) in a fixed font stack measured with the font matplotlib ships. matplotlib is imported only when a chart is
drawn (see `_import_matplotlib`).
"""
from __future__ import annotations

import contextlib
import gc
import io
import math
import re
from collections.abc import Iterator

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


def _import_matplotlib() -> None:
    """Import matplotlib.figure and the SVG backend without writing the help text of every
    Artist subclass's set() (matplotlib.artist.kwdoc: ~0.13 s of a ~0.45 s import, read by help(),
    never by a chart). Only the docstrings differ; the signatures, and the charts, are the same."""
    import sys

    if "matplotlib.backends.backend_svg" in sys.modules:
        return
    import matplotlib.artist as artist

    kwdoc = getattr(artist, "kwdoc", None)
    if kwdoc is not None:
        artist.kwdoc = lambda *_: ""   # type: ignore[assignment]  # help text only, restored below
    try:
        import matplotlib.backends.backend_svg  # noqa: F401
        import matplotlib.figure  # noqa: F401
    finally:
        if kwdoc is not None:
            artist.kwdoc = kwdoc


def figure(width: float, height: float):
    """A Figure on the SVG canvas (never pyplot, never Agg: neither is needed to write SVG), with
    no layout engine: fit() places the axes once, where constrained layout took ~0.1 s a chart."""
    _import_matplotlib()
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasSVG(fig)
    return fig, fig.add_subplot()


def fit(fig, ax, legend=None, pad: float = 4.0) -> None:
    """Margins that hold the tick labels, axis labels, title and the legend under the axes,
    measured with the real fonts (a fixed layout with what constrained layout would leave
    room for; tests/test_memo.py checks that nothing drawn falls outside the figure)."""
    import io

    from matplotlib.backends.backend_svg import RendererSVG

    w, h = fig.get_size_inches() * 72
    renderer = RendererSVG(w, h, io.StringIO())
    def locs() -> list:
        return [list(a.get_majorticklocs()) + list(a.get_minorticklocs()) for a in (ax.xaxis, ax.yaxis)]

    before = locs()
    _place(fig, ax, legend, pad, renderer, w, h)
    if locs() != before:   # the locators choose ticks by the axes' length: measure the new ones
        _place(fig, ax, legend, pad, renderer, w, h)


def _place(fig, ax, legend, pad, renderer, w, h) -> None:

    def extent(texts, dim: int) -> float:
        sizes = [t.get_window_extent(renderer).size[dim] for t in texts if t.get_visible() and t.get_text()]
        return max(sizes, default=0.0)

    def ticks(axis) -> list:
        return axis.get_majorticklabels() + axis.get_minorticklabels()

    def label(text, dim: int) -> float:   # the y label is turned: its room is its bbox's width
        return text.get_window_extent(renderer).size[dim] + 4 if text.get_text() else 0.0   # labelpad 4 pt

    tick_room = 3.5 + 3.5   # tick length + tick pad
    x_ticks, y_ticks = ticks(ax.xaxis), ticks(ax.yaxis)
    left = pad + label(ax.yaxis.label, 0) + extent(y_ticks, 0) + tick_room
    legend_h = legend.get_window_extent(renderer).height + pad if legend is not None else 0.0
    bottom = pad + legend_h + label(ax.xaxis.label, 1) + extent(x_ticks, 1) + tick_room
    top = pad + (ax.title.get_window_extent(renderer).height + 6 if ax.get_title() else 8.0)   # a top point's note
    right = pad + max(extent(x_ticks, 0) / 2, 12.0)   # half the last x label; a point's note
    # labels longer than the figure (a hostile name) keep the axes at least a third of it, as
    # constrained layout leaves them when it cannot fit everything
    left, right = min(left / w, 0.55), min(right / w, 0.1)
    bottom, top = min(bottom / h, 0.55), min(top / h, 0.1)
    fig.subplots_adjust(left=left, right=1 - right, bottom=bottom, top=1 - top)


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


@contextlib.contextmanager
def rc_context() -> Iterator[None]:
    """Our chart style, with the cyclic garbage collector paused while charts are drawn: importing
    matplotlib and building its artists allocate enough to set off full collections, each walking
    the plan's whole heap (~0.15 s CPU of a memo's charts); what they leave is collected after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        _import_matplotlib()
        import matplotlib

        with matplotlib.rc_context({
            "svg.hashsalt": SVG_SALT, "text.parse_math": False,   # a '$' in a name is text, not TeX
            "svg.fonttype": "none", "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Bitstream Vera Sans", "Verdana", "Arial"], "font.size": 9,
            "axes.spines.top": False, "axes.spines.right": False, "axes.titlesize": 10,
            "axes.titleweight": "bold", "legend.frameon": False, "figure.dpi": 72, "savefig.bbox": None,
        }):
            yield
    finally:
        if enabled:
            gc.enable()


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
