"""Tables for people and for programs: one layout for every command.

`table()` draws with rich (imported on first use) to the terminal's width -- COLUMNS when set,
else the terminal's, else unlimited when the output is a file or a pipe -- wrapping long cells;
colour only on a terminal and never with NO_COLOR or --no-color (a table of one-line cells that
fits, without colour, is drawn to the same lines without rich). `markdown()` and `csv_text()`
give the same rows to documents and spreadsheets.
"""
from __future__ import annotations

import csv
import io
import os
import re
import shutil
import sys
import textwrap

_STATE: dict = {"color": None, "width": None}
# characters one terminal column wide (rich's cell_len is 1 for each printable one): ASCII, Latin-1 and
# Latin extended, general punctuation (dashes, quotes), currency, letterlike symbols, arrows, math operators
_ONE_CELL = re.compile("[ -~\u00a0-\u02ff\u2010-\u20cf\u2100-\u22ff]*")


def configure(*, color: bool | None = None, width: int | None = None) -> None:
    """Set by the CLI: colour on or off (None: decide from the terminal), a fixed width."""
    _STATE["color"] = color
    _STATE["width"] = width


def width() -> int | None:
    """Columns to fit: a fixed one, COLUMNS, the terminal's, or None (no limit) off a terminal."""
    if _STATE["width"]:
        return int(_STATE["width"])
    cols = os.environ.get("COLUMNS", "")
    if cols.strip().isdigit() and int(cols) >= 20:
        return int(cols)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((100, 24)).columns
    return None


def color() -> bool:
    if _STATE["color"] is not None:
        return bool(_STATE["color"])
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def table(headers: list[str], rows: list[list], indent: str = "  ", wrap: tuple[int, ...] = ()) -> str:
    """A text table: a header row, a rule under it, one line per row (more when a cell wraps).
    Columns listed in `wrap` (and, if the table is still too wide, any but the first) wrap."""
    limit = width()
    inner = (limit - len(indent)) if limit else 10_000
    texts = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    plain = None if color() else _unwrapped(texts, max(20, inner))
    if plain is not None:
        return "\n".join((indent + line).rstrip() for line in plain if line.strip())
    return _rich_table(headers, rows, indent, wrap, limit)


def _unwrapped(texts: list[list[str]], room: int) -> list[str] | None:
    """The lines rich draws below (without colour) for a table whose every cell is one line of
    printable one-column characters and that fits in `room` columns: each column as wide as its
    widest cell, two spaces between columns, a rule as wide as the table under the header. None
    otherwise (rich measures wide characters, wraps, folds and colours). Skipping rich's import
    and layout saves ~0.03 s of a cold `advisor plan` (tests/test_ux.py compares the two)."""
    n = len(texts[0])
    if not n or any(len(row) != n for row in texts) or \
            not all(_ONE_CELL.fullmatch(t) and t.isprintable() for row in texts for t in row):
        return None
    widths = [max(len(row[i]) for row in texts) for i in range(n)]
    total = sum(widths) + 2 * (n - 1) + (widths[-1] == 0)   # rich draws an empty last column 1 wide
    if total >= room:
        return None
    lines = ["  ".join(t.ljust(w) for t, w in zip(row, widths)) for row in texts]
    return [lines[0], "\u2500" * total, *lines[1:]]


def _rich_table(headers: list[str], rows: list[list], indent: str, wrap: tuple[int, ...], limit: int | None) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True,
              header_style="bold" if color() else "", safe_box=True)
    for i, h in enumerate(headers):
        t.add_column(str(h), no_wrap=(i == 0), overflow="fold" if i in wrap else "ellipsis",
                     ratio=1 if i in wrap else None)
    for row in rows:
        t.add_row(*[_cell(v) for v in row])
    inner = (limit - len(indent)) if limit else 10_000
    t.expand = False
    out = io.StringIO()
    console = Console(file=out, width=max(20, inner), color_system="standard" if color() else None,
                      force_terminal=color(), no_color=not color(), highlight=False, emoji=False,
                      legacy_windows=False, markup=False)
    console.print(t)
    lines = out.getvalue().splitlines()
    return "\n".join((indent + line).rstrip() for line in lines if line.strip())


def para(text: str, indent: str = "", subsequent: str | None = None) -> str:
    """A paragraph wrapped to the output width (unchanged off a terminal)."""
    limit = width()
    if not limit:
        return indent + text
    return "\n".join(textwrap.wrap(text, width=limit, initial_indent=indent,
                                   subsequent_indent=indent if subsequent is None else subsequent,
                                   break_on_hyphens=False)) or indent


def markdown(headers: list[str], rows: list[list]) -> str:
    from advisor.present.escape import md

    def esc(v) -> str:   # user text stays text: no tag, link or cell boundary comes out of it
        return md(_cell(v))
    lines = ["| " + " | ".join(esc(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def csv_text(headers: list[str], rows: list[list]) -> str:
    """RFC 4180 CSV; numbers as numbers (no $ or separators), empty for unknown; text a spreadsheet
    would run as a formula is made inert (escape.csv_cell)."""
    from advisor.present.escape import csv_cell

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for row in rows:
        w.writerow(["" if v is None else csv_cell(v) for v in row])
    return buf.getvalue()


def grid(headers: list[str], rows: list[list], fmt: str = "table", wrap: tuple[int, ...] = ()) -> str:
    return markdown(headers, rows) if fmt == "markdown" else table(headers, rows, wrap=wrap)
