"""Escape at every sink (issue 33 item 5): hostile names from a --catalog file, a --rules file and the
workload go through every command in every format. Markdown (rendered by a CommonMark renderer that
lets raw HTML through), HTML and SVG come out with no tag, event handler, javascript: link or heading
a name made; CSV with no cell a spreadsheet would run; a terminal with no escape sequence and no line
a name began. One escaping function per format lives in advisor/present/escape.py."""

from __future__ import annotations

import csv
import io
import re

import pytest
from click.testing import CliRunner
from conftest import AS_OF, memoized_plan
from test_hostile import assert_inert, hostile_inputs

from advisor.cli import main
from advisor.present import escape

# each holds, at once: tags and event handlers, a javascript: link, an image, pipes and backticks, a
# formula prefix first (for CSV), a line break followed by a heading or a list marker, a terminal escape
TEXTS = [
    '=HYPERLINK("https://evil.example","x") <script>alert(1)</script> [x](javascript:alert(1)) a | b `c`\n# line two',
    "@SUM(1) <img src=x onerror=alert(1)> ![p](https://evil.example/p.png)\n- bullet",  # (files refuse an ESC)
    "+cmd <svg onload=alert(1)> <https://evil.example> **b**\n## sub\r\n1. item",
    "-2+3 \"'><iframe src=javascript:alert(1)> ~~gone~~ | x |\n---",
]


def _run(*args) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code in (0, 3), (args, result.stderr, result.exception)
    return result.exit_code, result.stdout


def _commands(wl, cat, rules, tmp_path) -> list[tuple[str, list]]:
    """(format, arguments) for every command that prints what a user's file holds."""
    extra = ["--catalog", cat, "--rules", rules, "--as-of", AS_OF]
    out = []
    for fmt in ("table", "markdown", "csv"):
        out += [
            (fmt, ["plan", wl, "--format", fmt, *extra]),
            (fmt, ["frontier", wl, "--points", "3", "--format", fmt, *extra]),
            (
                fmt,
                [
                    "compare",
                    "rtx-4090",
                    "l40s",
                    "a100-80gb-pcie",
                    "--deployment",
                    "datacenter",
                    "--format",
                    fmt,
                    *extra,
                ],
            ),
            (fmt, ["catalog", "list", "--format", fmt, "--catalog", cat]),
            (fmt, ["rules", "list", "--format", fmt, "--rules", rules]),
        ]
    out += [
        ("markdown", ["plan", wl, "--format", "markdown", "--section", "summary", *extra]),
        ("table", ["plan", wl, "--full", "--verbose", *extra]),
        ("table", ["catalog", "show", "rtx-4090", "--catalog", cat]),
        ("table", ["catalog", "show", "l40s", "--catalog", cat]),
        ("table", ["rules", "show", "ORG901", "--rules", rules]),
        (
            "markdown",
            [
                "crossover",
                "--gpu",
                "rtx-4090",
                "--gpu",
                "l40s",
                "--model",
                "gpt2-124m",
                "--tokens",
                "1B",
                "--format",
                "markdown",
                "--chart",
                tmp_path / "x.svg",
                *extra,
            ],
        ),
    ]
    return out


def _check_markdown(text: str, benign: str) -> None:
    import markdown_it

    html = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    assert_inert(html)
    # a name makes no heading, list or table row of its own: the document's structure is the benign one's
    for tag in ("<h1", "<h2", "<h3", "<li", "<tr", "<hr", "<pre", "<code"):
        benign_html = markdown_it.MarkdownIt("commonmark").enable("table").render(benign)
        assert html.count(tag) == benign_html.count(tag), tag


def _check_csv(text: str) -> None:
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell.startswith(("=", "+", "-", "@")):
                float(cell)  # only a number may begin so (a negative one)


def _check_terminal(text: str) -> None:
    assert "\x1b" not in text and "\r" not in text
    for line in text.splitlines():
        assert not re.match(r"\s*(# line two|- bullet|## sub|1\. item)", line), line


@pytest.fixture(scope="module")
def benign_markdown(tmp_path_factory) -> list[str]:
    """What each Markdown command prints for a plain name: the document structure a hostile name must not
    change. The same for every hostile text, so made once (each plan once: conftest.memoized_plan)."""
    import advisor.flow as flow

    folder = tmp_path_factory.mktemp("benign")
    benign = hostile_inputs(folder / "b", "plain name") if (folder / "b").mkdir() is None else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(flow, "plan", memoized_plan(flow.plan, {}, []))
        return [_run(*args)[1] for fmt, args in _commands(*benign, folder) if fmt == "markdown"]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_hostile_names_through_every_command_and_format(text, tmp_path, plan_once, benign_markdown):
    """(plan_once: each workload is planned once and printed every way, as the sinks are what is checked)"""
    pytest.importorskip("markdown_it")
    hostile = hostile_inputs(tmp_path / "h", text) if (tmp_path / "h").mkdir() is None else None
    plain = iter(benign_markdown)
    for fmt, args in _commands(*hostile, tmp_path):
        _, out = _run(*args)
        if fmt == "markdown":
            _check_markdown(out, next(plain))
        elif fmt == "csv":
            _check_csv(out)
        else:
            _check_terminal(out)
    svg = (tmp_path / "x.svg").read_text(encoding="utf-8")  # the hostile crossover's chart
    assert "<script" not in svg and "onload" not in svg.replace("onload=alert", "") and "javascript:" not in svg


def test_one_escaping_function_per_sink():
    text = "a\x1b[31m<b>|`x`\n# h"
    assert escape.terminal(text) == "a\\x1b[31m<b>|`x` # h"
    assert escape.visible("a\x1b\nb\r\nc") == "a\\x1b\nb\nc"
    assert escape.md(text).count("\n") == 0 and "<b>" not in escape.md(text) and "\\`" in escape.md(text)
    assert escape.html(text) == "a\x1b[31m&lt;b&gt;|`x`\n# h"
    assert "<" not in escape.xml_text(text) and "\x1b" not in escape.xml_text(text)
    assert escape.csv_cell("=1+1") == "'=1+1" and escape.csv_cell("-3") == "-3"
    assert escape.json_text(text) == '"a\\u001b[31m<b>|`x`\\n# h"'
