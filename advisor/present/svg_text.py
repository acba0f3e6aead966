"""How wide a chart's text is, without a font renderer: DejaVu Sans advance widths
(fonts/dejavu_widths.json, made by bench/font_widths.py), so that margins are sized to fit every
label and a label too long for its room is cut with an ellipsis."""

from __future__ import annotations

import json
import unicodedata
from bisect import bisect_right
from functools import cache
from itertools import accumulate
from pathlib import Path

FONT_STACK = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, Arial, sans-serif"


@cache
def _metrics(bold: bool) -> tuple[dict[int, float], float, float]:
    """code point -> advance in em, ascent, descent (em) of DejaVu Sans (Bold)."""
    path = Path(__file__).parent / "fonts" / "dejavu_widths.json"
    font = json.loads(path.read_text(encoding="utf-8"))["bold" if bold else "regular"]
    em = font["units_per_em"]
    adv = {start + i: w / em for start, run in font["runs"] for i, w in enumerate(run)}
    return adv, font["ascent"] / em, font["descent"] / em


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in points; a character DejaVu Sans lacks (the browser takes it from another font)
    counts a full em, two-em for wide East Asian ones, so that margins err on the roomy side."""
    adv = _metrics(bold)[0]
    return size * sum(
        w if (w := adv.get(ord(ch))) is not None else 2.0 if unicodedata.east_asian_width(ch) in "WF" else 1.0
        for ch in text
    )


def ascent_descent(size: float) -> tuple[float, float]:
    """Ascent and descent of DejaVu Sans at `size`, in points (where a line of text sits)."""
    return _metrics(False)[1] * size, _metrics(False)[2] * size


def fit_text(text: str, size: float, room: float, bold: bool = False) -> str:
    """text, cut with an ellipsis where it is wider than room (a hostile name never pushes the axes
    out of the figure; the memo's tables carry every name in full). Each character is measured once."""
    if text_width(text, size, bold) <= room:
        return text
    used = list(accumulate(text_width(ch, size, bold) for ch in text))
    return text[: bisect_right(used, room - text_width("\u2026", size, bold))] + "\u2026"
