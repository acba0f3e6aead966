"""A chart axis and its ticks, chosen as matplotlib's locators would: linear steps of 1, 2, 2.5
and 5 times a power of ten, log decades with 1-2-5 subdivisions, the densest set whose labels
neither collide nor repeat."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from advisor.present.svg_text import text_width


def _clean(v: float) -> float:
    return float(f"{v:.12g}")  # 0.30000000000000004 -> 0.3


def linear_ticks(lo: float, hi: float) -> list[list[float]]:
    """Candidate tick sets at 1, 2, 2.5 and 5 times a power of ten (MaxNLocator's steps), densest first."""
    if hi <= lo:
        return [[lo]]
    top = math.floor(math.log10(hi - lo))
    steps = [m * 10.0**e for e in range(top - 2, top + 2) for m in (1, 2, 2.5, 5)]
    sets = [
        [_clean(k * step) for k in range(math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) + 1)]
        for step in steps
    ]
    return [t for t in sets if 1 <= len(t) <= 40]


def log_ticks(lo: float, hi: float, subs: Sequence[float] = (1, 2, 5)) -> list[tuple[list[float], list[float]]]:
    """Candidate (major, minor) tick sets for a log axis, densest first: linear steps where the axis
    spans under a decade, then 1-9, `subs` (1-2-5) and every k-th decade, as LogLocator chooses."""
    d0, d1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))

    def at(mantissas: Sequence[float], every: int = 1) -> list[float]:
        return [
            _clean(m * 10.0**d)
            for d in range(d0, d1 + 1)
            if d % every == 0
            for m in mantissas
            if lo * (1 - 1e-9) <= m * 10.0**d <= hi * (1 + 1e-9)
        ]

    def pair(major: list[float], between: list[float]) -> tuple[list[float], list[float]]:
        return major, [t for t in between if t not in major]  # (major, minor)

    out: list[tuple[list[float], list[float]]] = [(t, []) for t in linear_ticks(lo, hi) if hi / lo < 10 and len(t) >= 2]
    out += [pair(at(m), at(range(1, 10))) for m in (range(1, 10), tuple(subs), (1,))]
    return out + [pair(at((1,), k), at((1,))) for k in (2, 3, 4, 5, 10)]


@dataclass
class Axis:
    """One axis of a chart: its scale, label, tick formats, limits (or the data's span) and ticks."""

    scale: str = "linear"  # or "log"
    label: str = ""
    fmt: Callable[[float], str] = lambda v: f"{v:g}"
    fine: Callable[[float], str] | None = None  # where fmt would print two ticks alike ($4.64K)
    limits: tuple[float, float] | None = None
    ticks: list[tuple[float, str]] | None = None  # fixed ticks (categories), or chosen from the data
    subs: tuple[float, ...] = (1, 2, 5)
    grid: bool = False
    values: list[float] = field(default_factory=list)

    def set(self, **kw: Any) -> Axis:
        self.__dict__.update(kw)
        return self

    def t(self, v: float) -> float:
        return math.log10(v) if self.scale == "log" else v

    def span(self) -> tuple[float, float]:
        """The limits: given, or the data with a 5% margin each side (in the axis's own scale)."""
        if self.limits:
            return self.limits
        vals = [v for v in self.values if v > 0] if self.scale == "log" else self.values
        lo, hi = (min(vals), max(vals)) if vals else (1.0, 10.0)
        a, b = self.t(lo), self.t(hi)
        if b - a < 1e-12:
            a, b = (a - 0.3, b + 0.3) if self.scale == "log" else (a - abs(a) * 0.1 - 1, b + abs(b) * 0.1 + 1)
        m = (b - a) * 0.05
        a, b = a - m, b + m
        return (10**a, 10**b) if self.scale == "log" else (a, b)

    def choose(self, length: float, size: float, vertical: bool) -> tuple[list[tuple[float, str]], list[float]]:
        """The densest tick set whose labels neither collide nor repeat."""
        if self.ticks is not None:
            return self.ticks, []
        lo, hi = self.span()
        cands = log_ticks(lo, hi, self.subs) if self.scale == "log" else [(t, []) for t in linear_ticks(lo, hi)]
        a, b = self.t(lo), self.t(hi)

        def ok(major: list[float], fmt: Callable[[float], str]) -> bool:
            labels, pos = [fmt(v) for v in major], [(self.t(v) - a) / (b - a) * length for v in major]
            need = [
                2.0 * size if vertical else (text_width(p, size) + text_width(q, size)) / 2 + 8
                for p, q in pairwise(labels)
            ]  # two lines of text apart, or 8 pt between labels
            return len(set(labels)) == len(labels) >= 2 and all(q - p >= n for p, q, n in zip(pos, pos[1:], need))

        for fmt in [f for f in (self.fmt, self.fine) if f]:
            for major, minor in cands:
                if ok(major, fmt):
                    return [(v, fmt(v)) for v in major], minor
        major, minor = min((c for c in cands if c[0]), key=lambda c: len(c[0]), default=([], []))
        return [(v, (self.fine or self.fmt)(v)) for v in major[:1]], minor
