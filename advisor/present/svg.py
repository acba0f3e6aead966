"""A small plain-SVG chart writer for the memo and `advisor crossover` (no matplotlib: importing it and
building its artists cost ~0.4 s a memo). Text stays text in a fixed font stack; margins are sized
from DejaVu Sans advance widths (fonts/dejavu_widths.json, made by bench/font_widths.py), so labels
fit; every text is XML-escaped; the output depends only on the data (ids carry the chart's prefix)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.present.escape import xml_text
from advisor.present.svg_axis import Axis
from advisor.present.svg_text import FONT_STACK, ascent_descent, fit_text, text_width

PAD, TICK, TICK_PAD, LABEL_PAD = 4.0, 3.5, 3.5, 4.0  # points, as matplotlib's defaults


def num(v: float) -> str:
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


@dataclass
class Text:
    x: float
    y: float
    text: str
    size: float = 8.0
    colour: str = "#000000"
    dx: float = 0.0  # offset in points (+ right, + up, as matplotlib's offset points)
    dy: float = 0.0
    anchor: str = "start"  # start | middle | end
    valign: str = "baseline"  # baseline | center | top
    yfrac: bool = False  # y as a fraction of the axes' height instead of data
    italic: bool = False
    box: bool = False  # a white box behind the text
    avoid: str = ""  # texts sharing this key are moved down until they do not overlap
    clear_of: Text | None = None  # moved right until it clears this text
    drawn: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # its box once placed


class Chart:
    """One chart: data marks in data coordinates, laid out and written by svg()."""

    def __init__(self, width_in: float, height_in: float, prefix: str, title: str = "") -> None:
        self.w, self.h, self.prefix, self.title = width_in * 72, height_in * 72, prefix, title
        self.x, self.y = Axis(), Axis()
        self.marks: list[tuple[str, dict]] = []
        self.texts: list[Text] = []
        self.legend: list[tuple[str, dict]] = []
        self.legend_loc, self.legend_ncol, self.legend_size = "below", 2, 8.0
        self.size = 9.0

    def line(
        self,
        xs: Sequence[float],
        ys: Sequence[float],
        colour: str,
        width: float = 1.5,
        dash: str = "",
        opacity: float = 1.0,
        marker: str = "",
        ms: float = 6.0,
        hollow: bool = False,
        label: str = "",
    ) -> None:
        """A polyline (width 0: markers only) with markers o, s or *."""
        self._add(
            "line",
            {
                "xs": list(xs),
                "ys": list(ys),
                "colour": colour,
                "width": width,
                "dash": dash,
                "opacity": opacity,
                "marker": marker,
                "ms": ms,
                "hollow": hollow,
            },
            label,
            xs,
            ys,
        )

    def _add(self, kind: str, style: dict, label: str, xs: Sequence[float], ys: Sequence[float]) -> None:
        self.x.values += list(xs)
        self.y.values += list(ys)
        self.marks.append((kind, style))
        self.legend += [(label, style)] if label else []

    def errorbar(
        self,
        x: float,
        y: float,
        xr: tuple[float, float],
        yr: tuple[float, float],
        colour: str,
        marker: str,
        ms: float,
        label: str = "",
    ) -> None:
        self._add(
            "errorbar",
            {
                "x": x,
                "y": y,
                "xr": xr,
                "yr": yr,
                "colour": colour,
                "marker": marker,
                "ms": ms,
                "width": 1.5,
                "opacity": 1.0,
                "hollow": False,
                "errorbar": True,
                "dash": "",
            },
            label,
            [x, *xr],
            [y, *yr],
        )

    def hbar(self, y: float, value: float, height: float, colour: str, hatch: bool = False) -> None:
        self.marks.append(("hbar", {"y": y, "value": value, "height": height, "colour": colour, "hatch": hatch}))

    def vline(self, x: float, colour: str, width: float = 1.0, dash: str = "", opacity: float = 1.0) -> None:
        self._add("vline", {"x": x, "colour": colour, "width": width, "dash": dash, "opacity": opacity}, "", [x], [])

    def text(self, x: float, y: float, text: str, **kw: Any) -> Text:
        self.texts.append(Text(x, y, text, **kw))
        return self.texts[-1]

    def _legend_layout(self) -> tuple[int, float, float]:
        """(columns, column width, height) of the legend below the axes: legend_ncol columns, more
        where the rows would take over 30% of the figure and the names still fit, one where they do not."""
        if not self.legend or self.legend_loc != "below":
            return 1, 0.0, 0.0
        widest, room = max(text_width(label, self.legend_size) for label, _ in self.legend) + 30, self.w - 2 * PAD
        fits = [n for n in range(self.legend_ncol, 5) if widest * n <= room] or list(range(self.legend_ncol, 5))
        ncol = next(
            (n for n in fits if math.ceil(len(self.legend) / n) * self.legend_size * 1.6 <= 0.3 * self.h), fits[-1]
        )
        return ncol, min(widest, room / ncol), math.ceil(len(self.legend) / ncol) * self.legend_size * 1.6

    def _layout(self) -> None:
        a_size, d_size = ascent_descent(self.size)
        line = a_size + d_size
        self.ncol, self.col_w, legend_h = self._legend_layout()
        self.h += max(0.0, legend_h - 0.3 * self.h)  # a long legend makes the figure taller, not the axes smaller
        bottom = (
            PAD
            + (legend_h + PAD if legend_h else 0)
            + (line + LABEL_PAD if self.x.label else 0)
            + line
            + TICK
            + TICK_PAD
        )
        top = PAD + (sum(ascent_descent(10)) + 6 if self.title else 8.0)
        self.bottom, self.top = min(bottom, 0.55 * self.h), min(top, 0.1 * self.h)
        self.yt, self.yminor = self.y.choose(self.h - self.bottom - self.top, self.size, True)
        room = 0.55 * self.w - PAD - TICK - TICK_PAD - (line + LABEL_PAD if self.y.label else 0)
        self.yt = [(v, fit_text(s, self.size, room)) for v, s in self.yt]
        ylab = max((text_width(s, self.size) for _, s in self.yt), default=0.0)
        self.left = min(PAD + (line + LABEL_PAD if self.y.label else 0) + ylab + TICK + TICK_PAD, 0.55 * self.w)
        self.right = PAD + 12.0
        for _ in range(2):  # the last x label's half hangs over the right edge of the axes: measure, choose again
            self.xt, self.xminor = self.x.choose(self.w - self.left - self.right, self.size, False)
            self.right = min(PAD + max(12.0, *(text_width(s, self.size) / 2 for _, s in self.xt[-1:])), 0.1 * self.w)
        self.x0, self.x1, self.y0, self.y1 = self.left, self.w - self.right, self.top, self.h - self.bottom
        self.xlim, self.ylim = self.x.span(), self.y.span()

    def px(self, v: float, frac: bool = False) -> float:
        """x in points of a data value (or of a fraction of the axes)."""
        a, b = (self.x.t(w) for w in self.xlim)
        return self.x0 + (v if frac else (self.x.t(v) - a) / (b - a)) * (self.x1 - self.x0)

    def py(self, v: float, frac: bool = False) -> float:
        a, b = (self.y.t(w) for w in self.ylim)
        return self.y1 - (v if frac else (self.y.t(v) - a) / (b - a)) * (self.y1 - self.y0)

    @staticmethod
    def _text(
        x: float, y: float, text: str, size: float, anchor: str = "start", colour: str = "#000000", extra: str = ""
    ) -> str:
        return (
            f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" text-anchor="{anchor}" '
            f'fill="{colour}"{extra}>{xml_text(text)}</text>'
        )

    def _marker(self, x: float, y: float, s: dict) -> str:
        r, c = s["ms"] / 2, s["colour"]
        paint = f'fill="{"none" if s["hollow"] else c}" stroke="{c}" stroke-width="1"'
        if s["marker"] == "o":
            return f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}" {paint}/>'
        if s["marker"] == "s":
            return f'<rect x="{num(x - r)}" y="{num(y - r)}" width="{num(2 * r)}" height="{num(2 * r)}" {paint}/>'
        if s["marker"] == "*":
            pts = [
                (
                    x + (r if i % 2 == 0 else r * 0.382) * math.sin(i * math.pi / 5),
                    y - (r if i % 2 == 0 else r * 0.382) * math.cos(i * math.pi / 5),
                )
                for i in range(10)
            ]
            return f'<polygon points="{" ".join(f"{num(a)},{num(b)}" for a, b in pts)}" {paint}/>'
        return ""

    @staticmethod
    def _seg(x0: float, y0: float, x1: float, y1: float, paint: str) -> str:
        return f'<path d="M{num(x0)} {num(y0)} L{num(x1)} {num(y1)}" {paint}/>'

    def _path(self, pts: list[tuple[float, float]], s: dict) -> str:
        dash = f' stroke-dasharray="{s["dash"]}"' if s["dash"] else ""
        alpha = f' stroke-opacity="{num(s["opacity"])}"' if s["opacity"] < 1 else ""
        d = " ".join(f"{'M' if i == 0 else 'L'}{num(a)} {num(b)}" for i, (a, b) in enumerate(pts))
        return f'<path d="{d}" fill="none" stroke="{s["colour"]}" stroke-width="{num(s["width"])}"{dash}{alpha}/>'

    def _marks(self) -> list[str]:
        out: list[str] = []
        for kind, s in self.marks:
            if kind == "line":
                pts = [(self.px(a), self.py(b)) for a, b in zip(s["xs"], s["ys"])]
                out += ([self._path(pts, s)] if s["width"] > 0 and len(pts) > 1 else []) + [
                    self._marker(a, b, s) for a, b in pts
                ]
            elif kind == "errorbar":
                x, y = self.px(s["x"]), self.py(s["y"])
                xa, xb, ya, yb = self.px(s["xr"][0]), self.px(s["xr"][1]), self.py(s["yr"][0]), self.py(s["yr"][1])
                paint = f'stroke="{s["colour"]}" stroke-width="1.5"'  # whiskers with 3 pt caps
                out += [self._seg(xa, y, xb, y, paint), self._seg(x, ya, x, yb, paint)]
                out += [self._seg(c, y - 3, c, y + 3, paint) for c in (xa, xb)]
                out += [self._seg(x - 3, c, x + 3, c, paint) for c in (ya, yb)] + [self._marker(x, y, s)]
            elif kind == "hbar":
                y0, y1 = self.py(s["y"] + s["height"] / 2), self.py(s["y"] - s["height"] / 2)
                box = (
                    f'x="{num(self.px(0))}" y="{num(y0)}" width="{num(self.px(s["value"]) - self.px(0))}" '
                    f'height="{num(y1 - y0)}"'
                )
                out.append(
                    f'<rect {box} fill="#d9d9d9" stroke="#999999" stroke-width="1"/><rect {box} '
                    f'fill="url(#{self.prefix}-hatch)"/>'
                    if s["hatch"]
                    else f'<rect {box} fill="{s["colour"]}"/>'
                )
            else:  # vline
                x = self.px(s["x"])
                out.append(self._path([(x, self.y0), (x, self.y1)], s))
        return out

    def _place(self, t: Text, placed: list[Text]) -> str:
        """A text's box beside its point, kept inside the figure and clear of the texts it must avoid."""
        a, d = ascent_descent(t.size)
        lines, lead = [fit_text(s, t.size, self.w - 2) for s in t.text.split("\n")], t.size * 1.2
        x, w, height = self.px(t.x) + t.dx, max(text_width(s, t.size) for s in lines), a + d + lead * (len(lines) - 1)
        top = self.py(t.y, t.yfrac) - t.dy - a + {"baseline": a + d - height, "center": (a - d) / 2, "top": a}[t.valign]
        left = {"start": x, "middle": x - w / 2, "end": x - w}[t.anchor]
        if t.anchor == "start" and left + w > self.w - 1 and x - 2 * t.dx - w >= 1:  # flip beside its point
            left = x - 2 * t.dx - w

        def clash(o: Text) -> bool:
            return left < o.drawn[2] and o.drawn[0] < left + w and top < o.drawn[3] and o.drawn[1] < top + height

        while t.avoid and any(o.avoid == t.avoid and clash(o) for o in placed) and top < self.y1:
            top += lead
        if t.clear_of is not None and clash(t.clear_of):
            left = t.clear_of.drawn[2] + 3
        left, top = max(1.0, min(left, self.w - 1 - w)), max(1.0, min(top, self.h - 1 - height))  # inside the figure
        t.drawn = (left, top, left + w, top + height)
        out = []
        if t.box:
            out.append(
                f'<rect x="{num(left - 1.5)}" y="{num(top - 1.5)}" width="{num(w + 3)}" '
                f'height="{num(height + 3)}" fill="#ffffff"/>'
            )
        for i, s in enumerate(lines):
            out.append(
                self._text(
                    left, top + a + i * lead, s, t.size, "start", t.colour, ' font-style="italic"' if t.italic else ""
                )
            )
        return "".join(out)

    def _centred(self, text: str, size: float, mid: float, extent: float, bold: bool = False) -> tuple[str, float]:
        """text cut to the figure's extent, and its centre moved in so that it stays inside."""
        text = fit_text(text, size, extent - 2 * PAD, bold)
        half = text_width(text, size, bold) / 2
        return text, min(max(mid, PAD + half), extent - PAD - half)

    def _axes(self) -> list[str]:
        grid, out = [], []
        a, d = ascent_descent(self.size)
        axis, minor, light = (
            'stroke="#000000" stroke-width="0.8"',
            'stroke="#000000" stroke-width="0.6"',
            'stroke="#dddddd" stroke-width="0.6"',
        )
        for v, s in self.xt:
            x = self.px(v)
            grid += [self._seg(x, self.y0, x, self.y1, light)] if self.x.grid else []
            out += [
                self._seg(x, self.y1, x, self.y1 + TICK, axis),
                self._text(x, self.y1 + TICK + TICK_PAD + a, s, self.size, "middle"),
            ]
        for v, s in self.yt:
            y = self.py(v)
            grid += [self._seg(self.x0, y, self.x1, y, light)] if self.y.grid else []
            out += [
                self._seg(self.x0 - TICK, y, self.x0, y, axis),
                self._text(self.x0 - TICK - TICK_PAD, y + a * 0.4, s, self.size, "end"),
            ]
        out += [self._seg(self.px(v), self.y1, self.px(v), self.y1 + 2, minor) for v in self.xminor]
        out += [self._seg(self.x0 - 2, self.py(v), self.x0, self.py(v), minor) for v in self.yminor]
        out.append(
            f'<path d="M{num(self.x0)} {num(self.y0)} L{num(self.x0)} {num(self.y1)} L{num(self.x1)} '
            f'{num(self.y1)}" fill="none" class="spines" {axis}/>'
        )
        if self.x.label:
            label, cx = self._centred(self.x.label, self.size, (self.x0 + self.x1) / 2, self.w)
            out.append(self._text(cx, self.y1 + TICK + TICK_PAD + a + d + LABEL_PAD + a, label, self.size, "middle"))
        if self.y.label:
            label, cy = self._centred(self.y.label, self.size, (self.y0 + self.y1) / 2, self.h)
            turn = f' transform="rotate(-90 {num(PAD + a)} {num(cy)})"'
            out.append(self._text(PAD + a, cy, label, self.size, "middle", extra=turn))
        if self.title:
            title, cx = self._centred(self.title, 10, (self.x0 + self.x1) / 2, self.w, bold=True)
            out.append(self._text(cx, PAD + ascent_descent(10)[0], title, 10, "middle", extra=' font-weight="bold"'))
        return grid + out

    def _swatch(self, x: float, y: float, s: dict) -> list[str]:
        out = [self._path([(x, y), (x + 20, y)], s)] if s["width"] > 0 else []
        out += [self._path([(x + 10, y - 4), (x + 10, y + 4)], s)] if s.get("errorbar") else []
        return out + ([self._marker(x + 10, y, {**s, "ms": min(s["ms"], 10)})] if s["marker"] else [])

    def _legend(self) -> list[str]:
        size, out, row_h = self.legend_size, [], self.legend_size * 1.6
        a = ascent_descent(size)[0]
        rows = math.ceil(len(self.legend) / self.ncol)  # below the axes, centred; or inside, at the upper left
        x_start, y_start = (
            ((self.w - self.ncol * self.col_w) / 2, self.h - PAD - rows * row_h)
            if self.col_w
            else (self.x0 + 6, self.y0 + 4)
        )
        for i, (label, s) in enumerate(self.legend):
            col, row = divmod(i, rows)  # filled column by column
            x, y = x_start + col * self.col_w, y_start + row * row_h + row_h / 2
            out += self._swatch(x, y, s)
            out.append(self._text(x + 26, y + a * 0.4, fit_text(label, size, (self.col_w or self.w - x) - 30), size))
        return out

    def svg(self) -> tuple[str, str]:
        """(a standalone SVG file, the same SVG for inlining in HTML)."""
        self._layout()
        texts = [self._place(t, self.texts[:i]) for i, t in enumerate(self.texts)]
        defs = ""
        if any(kind == "hbar" and s["hatch"] for kind, s in self.marks):
            defs = (
                f'<defs><pattern id="{self.prefix}-hatch" patternUnits="userSpaceOnUse" width="6" height="6">'
                '<path d="M0 6 L6 0 M-1 1 L1 -1 M5 7 L7 5" stroke="#999999" stroke-width="0.8"/></pattern></defs>'
            )
        body = "\n".join(
            [
                defs,
                f'<rect width="{num(self.w)}" height="{num(self.h)}" fill="#ffffff"/>',
                *self._axes(),
                *self._marks(),
                *texts,
                *self._legend(),
            ]
        )
        inline = (
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{num(self.w)}pt" height="{num(self.h)}pt" '
            f'viewBox="0 0 {num(self.w)} {num(self.h)}" font-family="{xml_text(FONT_STACK)}">\n{body}\n</svg>\n'
        )
        return '<?xml version="1.0" encoding="utf-8"?>\n' + inline, inline
