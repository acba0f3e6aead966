"""The plain-SVG chart writer (advisor/present/svg.py): tick choice on log and linear axes, escaping
of every text, labels inside the figure, the axes kept at least a third of it, and bytes that do not
depend on the hash seed."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path

import pytest

from advisor.present.escape import xml_text as esc
from advisor.present.svg import Chart
from advisor.present.svg_axis import Axis
from advisor.present.svg_text import ascent_descent, text_width
from advisor.present.words import usd, usd_short

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert('x')</script> & \"quoted\" ]]> \x07 bell"


def text_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """(text, x0, y0, x1, y1) of every <text> as drawn, from its attributes and the font's advance
    widths (a rotated label turned by its rotate(-90 cx cy))."""
    out = []
    for el in ET.fromstring(svg).iter(f"{NS}text"):
        text, size = el.text or "", float(el.get("font-size"))
        x, y = float(el.get("x")), float(el.get("y"))
        w = text_width(text, size, el.get("font-weight") == "bold")
        a, d = ascent_descent(size)
        x0 = x - w * {"start": 0.0, "middle": 0.5, "end": 1.0}[el.get("text-anchor", "start")]
        turn = re.fullmatch(r"rotate\(-90 ([-\d.]+) ([-\d.]+)\)", el.get("transform", ""))
        if turn:  # about (x, y): the text runs upwards from y
            out.append((text, x - a, y - (x0 + w - x), x + d, y - (x0 - x)))
        else:
            out.append((text, x0, y - a, x0 + w, y + d))
    return out


def figure_and_axes(svg: str) -> tuple[float, float, tuple[float, ...]]:
    """(width, height, (x0, y0, x1, y1) of the axes) read from the SVG."""
    root = ET.fromstring(svg)
    spines = next(el for el in root.iter(f"{NS}path") if el.get("class") == "spines")
    nums = [float(v) for v in re.findall(r"[-\d.]+", spines.get("d"))]
    box = (nums[0], nums[1], nums[4], nums[3])
    w, h = (float(v) for v in root.get("viewBox").split()[2:])
    return w, h, box


def assert_inside(svg: str, what: str = "") -> None:
    w, h, _ = figure_and_axes(svg)
    for text, x0, y0, x1, y1 in text_boxes(svg):
        assert x0 >= -0.01 and y0 >= -0.01 and x1 <= w + 0.01 and y1 <= h + 0.01, (
            f"{what}: {text!r} at ({x0:.1f}, {y0:.1f})-({x1:.1f}, {y1:.1f}) falls outside {w}x{h}"
        )


def _ticks(axis: Axis, length: float, vertical: bool = True) -> list[float]:
    return [v for v, _ in axis.choose(length, 9.0, vertical)[0]]


def test_log_axis_takes_1_2_5_where_there_is_room_and_decades_where_there_is_not():
    # 1..1000 over 300 pt is 100 pt a decade: 1-2-3 would stand 100*log10(1.5) = 17.6 pt apart, under the
    # 18 pt two lines of 9 pt text need; 1-2-5 stand at least 100*log10(2) = 30.1 pt apart
    axis = Axis("log", limits=(1, 1000))
    assert _ticks(axis, 300) == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    # over 100 pt a decade is 33.3 pt and 1 -> 2 only 10 pt: decades alone
    assert _ticks(axis, 100) == [1, 10, 100, 1000]
    # over 6 decades in 50 pt (8.3 pt a decade): every other decade is 16.7 pt, every third 25 pt
    assert _ticks(Axis("log", limits=(1, 1e6)), 50) == [1, 1e3, 1e6]


def test_log_axis_with_minor_ticks_between_decades():
    majors, minors = Axis("log", limits=(1, 100)).choose(40, 9.0, True)
    assert [v for v, _ in majors] == [1, 10, 100]
    assert minors == [2, 3, 4, 5, 6, 7, 8, 9, 20, 30, 40, 50, 60, 70, 80, 90]


def test_log_axis_under_a_decade_reads_in_dollars_never_powers_of_ten():
    # $4,632 to $6,649 holds no power of ten: linear steps of a nice size, labelled $5K, $6K
    axis = Axis("log", fmt=usd_short, fine=usd, limits=(4632, 6649))
    labels = [s for _, s in axis.choose(220, 9.0, True)[0]]
    assert {"$5K", "$6K"} <= set(labels) and len(labels) == len(set(labels)) >= 3
    assert not [s for s in labels if "10^" in s or "×" in s or "e+" in s]


def test_a_span_the_short_labels_cannot_tell_apart_gets_whole_dollars():
    # $4,631 to $4,646: $4.63K, $4.64K would repeat; steps of $5 ($4,635, $4,640, $4,645) are told apart
    axis = Axis("log", fmt=usd_short, fine=usd, limits=(4631, 4646))
    labels = [s for _, s in axis.choose(60, 9.0, True)[0]]
    assert labels == ["$4,635", "$4,640", "$4,645"]


def test_linear_axis_steps_at_1_2_2_5_5_and_labels_never_overlap():
    axis = Axis(fmt=lambda v: f"{v:,.0f}", limits=(0, 43000))
    ticks = axis.choose(370, 9.0, False)[0]
    values = [v for v, _ in ticks]
    step = values[1] - values[0]
    assert step / 10 ** math.floor(math.log10(step)) in (1, 2, 2.5, 5)
    assert values == [step * i for i in range(len(values))] and values[-1] <= 43000 < values[-1] + step
    per_unit = 370 / 43000
    for (v0, s0), (v1, s1) in pairwise(ticks):
        assert (v1 - v0) * per_unit >= (text_width(s0, 9) + text_width(s1, 9)) / 2


def test_every_text_is_escaped_and_reads_back_as_given():
    ch = Chart(7.2, 4, "t", title=HOSTILE)
    ch.line([1, 2], [3, 4], "#000000", marker="o", label=HOSTILE)
    ch.text(1.5, 3.5, HOSTILE + "\nsecond line", size=7)
    ch.x.set(label=HOSTILE)
    ch.y.set(label="y", ticks=[(3, HOSTILE), (4, "four")])
    file_svg, inline = ch.svg()
    for svg in (file_svg, inline):
        root = ET.fromstring(svg)  # well-formed: nothing broke out of its element
        tags = {el.tag.removeprefix(NS) for el in root.iter()}
        assert not {"script", "foreignObject", "image"} & tags
        assert not [a for el in root.iter() for a in el.attrib if a.startswith("on")]
    texts = [el.text or "" for el in ET.fromstring(inline).iter(f"{NS}text")]
    shown = HOSTILE.replace("\x07", "\ufffd")  # XML 1.0 cannot carry a control character
    assert texts.count(shown) >= 4 and "second line" in texts
    assert esc("a<b&c>'\"") == "a&lt;b&amp;c&gt;&#39;&quot;"


def test_a_long_name_keeps_the_axes_a_third_of_the_figure_and_every_label_inside():
    ch = Chart(7.2, 2.5, "t")
    long = "NVIDIA " + "Extremely Long Hostile Name " * 12
    for i, _name in enumerate([long, "short"]):
        ch.hbar(i, 10 + i, 0.6, "#1f77b4")
    ch.text(1, 0, long, valign="center")
    ch.y.set(limits=(-0.6, 1.6), ticks=[(0, long), (1, "short")])
    ch.x.set(label=long, limits=(0, 12))
    ch.legend.append((long, {"colour": "#000000", "width": 1.5, "dash": "", "opacity": 1.0, "marker": ""}))
    svg = ch.svg()[0]
    w, h, (x0, y0, x1, y1) = figure_and_axes(svg)
    assert x1 - x0 >= w / 3 and y1 - y0 >= h / 3
    assert_inside(svg, "long name")
    assert any(t.endswith("\u2026") for t, *_ in text_boxes(svg))  # cut, where it could not fit


def test_a_long_legend_makes_the_figure_taller_and_stays_inside():
    """30 GPU types and one long override name: the legend takes more columns or more height, never
    the axes' room, and no entry starts above the figure."""
    ch = Chart(7.2, 4.4, "t")
    names = [f"GPU type {i}" for i in range(29)] + ["NVIDIA " + "Very Long Override Name " * 8]
    for i, name in enumerate(names):
        ch.line([1, 2], [i, i + 1], "#1f77b4", label=name)
    svg = ch.svg()[0]
    w, h, (x0, y0, x1, y1) = figure_and_axes(svg)
    assert h > 4.4 * 72 and y1 - y0 >= 4.4 * 72 / 3
    assert_inside(svg, "long legend")


def test_a_name_of_thousands_of_characters_is_cut_in_one_pass():
    from advisor.present.svg_text import fit_text

    name = "x" * 20_000
    cut = fit_text(name, 9.0, 200.0)
    assert cut.endswith("\u2026") and text_width(cut, 9.0) <= 200.0 < text_width(cut[:-1] + "xx\u2026", 9.0)


def test_bytes_do_not_depend_on_the_hash_seed():
    code = (
        "from advisor.present.charts import crossover_svg\n"
        "p = lambda m, n, c: {'model': m, 'params': n, 'cheapest': 'a' if c else None, 'total_cost_usd': c,"
        " 'focus_cost_usd': c, 'factor_text': 'power: why' if not c else None}\n"
        "x = {'tokens': '10B', 'max_gpus': 8, 'deployment': 'office', 'focus': 'a', 'crossover_model': 'm3',"
        " 'points': [p('m1', 1.2e8, 4632.0), p('m2', 1.5e9, 9000.0), p('m3', 2.6e9, None)]}\n"
        "print(crossover_svg(x), end='')\n"
    )
    root = Path(__file__).resolve().parent.parent
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "1", "4242")
    }
    assert len(outs) == 1
    svg = outs.pop()
    assert svg.startswith("<?xml") and "matplotlib" not in svg
    assert_inside(svg, "crossover")


@pytest.mark.parametrize(
    "module",
    ["advisor.present.svg", "advisor.present.charts", "advisor.present.memo_charts", "advisor.present.memo_ranges"],
)
def test_charts_need_no_matplotlib(module):
    out = subprocess.run(
        [sys.executable, "-c", f"import sys, {module}; print('matplotlib' in sys.modules)"],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"


def test_notes_that_would_overlap_are_moved_apart():
    """Deadlines of 3 and 5 days on a 100-day log axis: their labels, right-aligned on their lines at
    the top, would overlap; the second goes a line lower. A value label beside a bar shorter than the
    'excluded' note inside it moves past the note."""
    ch = Chart(7.2, 4, "t")
    ch.line([0.5, 100], [1, 10], "#000000")
    for day in (3, 5):
        ch.vline(day, "#d62728")
        ch.text(day, 1, f"{day}-day deadline", yfrac=True, dx=-4, dy=-12, anchor="end", avoid="deadline")
    note = ch.text(0.6, 2, "excluded here: rule DEP001", valign="center", box=True)
    ch.text(0.7, 2, "11,377", valign="center", clear_of=note)
    ch.x.set(scale="log")
    ch.y.set(scale="log")
    boxes = {t: (x0, y0, x1, y1) for t, x0, y0, x1, y1 in text_boxes(ch.svg()[0])}
    (_a0, _b0, a1, b1), (c0, d0, _c1, _d1) = boxes["3-day deadline"], boxes["5-day deadline"]
    assert a1 > c0 and d0 >= b1 - 0.01  # they overlap across, so one sits below the other
    assert boxes["11,377"][0] >= boxes["excluded here: rule DEP001"][2]
