"""Tables and paragraphs for people, tables for programs: one layout for every command.

`table()` fits the terminal's width -- COLUMNS when set, else the terminal's, else unlimited when
the output is a file or a pipe. A cell wraps only between words: a number, a date or an id is
never split or cut. A table whose columns cannot all fit side by side, even with every cell
wrapped to its longest word, is turned (one column per row) when that fits, else printed as one
block per row; either way a hint says how to see it as a table (--format markdown or a wider
terminal). Bold headers only on a terminal, never with NO_COLOR or --no-color. `markdown()` and
`csv_text()` give the same rows to documents and spreadsheets.

Hand-written rather than drawn with rich: importing rich costs a cold `advisor plan` ~0.02 s of
CPU (about a tenth of the start-up budget), and rich wraps a word wider than its column by cutting
it (overflow "fold" or "ellipsis"), where these tables must keep every figure whole.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

from advisor.present.escape import csv_cell, md, terminal

_STATE: dict[str, Any] = {"color": None, "width": None}
# characters one terminal column wide: ASCII, Latin-1 and Latin extended, general punctuation
# (dashes, quotes), currency, letterlike symbols, arrows, math operators
_ONE_CELL = re.compile("[ -~\u00a0-\u02ff\u2010-\u20cf\u2100-\u22ff]*")
GAP = 2  # spaces between columns
TIGHT_GAP = 1  # ... when that is what lets a table fit
BOLD, RESET = "\x1b[1m", "\x1b[0m"


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


def cell_len(text: str) -> int:
    """Terminal columns `text` takes: wide (East Asian) characters 2, combining marks 0."""
    if _ONE_CELL.fullmatch(text):
        return len(text)
    return sum(
        0
        if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
        else 2
        if unicodedata.east_asian_width(c) in ("W", "F")
        else 1
        for c in text
    )


def _cell(v: Any) -> str:
    """A value as one line of terminal-safe text."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    return " ".join(terminal(str(v)).split())


def wrap_words(text: str, room: int) -> list[str]:
    """`text` in lines of at most `room` columns, broken only between words (a word wider than
    `room` gets a line of its own, whole)."""
    lines: list[str] = []
    current, used = "", 0
    for word in text.split():
        n = cell_len(word)
        if current and used + 1 + n > room:
            lines.append(current)
            current, used = "", 0
        current, used = (f"{current} {word}", used + 1 + n) if current else (word, n)
    return lines + [current] if current or not lines else lines


def _widths(texts: list[list[str]], room: int | None, wrap: Sequence[int], gap: int) -> list[int] | None:
    """Column widths that fit `room` (None: no limit), shrinking the `wrap` columns first and
    never below a column's longest word; None when no such widths exist."""
    n = len(texts[0])
    natural = [max(cell_len(row[i]) for row in texts) for i in range(n)]
    if room is None or sum(natural) + gap * (n - 1) <= room:
        return natural
    least = [max((cell_len(w) for row in texts for w in row[i].split()), default=0) for i in range(n)]
    if sum(least) + gap * (n - 1) > room:
        return None
    widths = list(natural)
    excess = sum(widths) + gap * (n - 1) - room
    for group in ([i for i in range(n) if i in wrap], [i for i in range(n) if i not in wrap]):
        while excess > 0:
            slack = [i for i in group if widths[i] > least[i]]
            if not slack:
                break
            widest = max(slack, key=lambda i: (widths[i] - least[i], widths[i]))
            widths[widest] -= 1
            excess -= 1
    return widths


def _layout(texts: list[list[str]], widths: list[int], gap: int) -> list[str]:
    """Header, a rule as wide as the table, the rows; each cell wrapped to its column."""
    out: list[str] = []
    for r, row in enumerate(texts):
        cells = [wrap_words(t, w) for t, w in zip(row, widths)]
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "") for c in cells]
            out.append((" " * gap).join(p + " " * (w - cell_len(p)) for p, w in zip(parts, widths)).rstrip())
        if r == 0:
            out.append("\u2500" * (sum(widths) + gap * (len(widths) - 1) + (widths[-1] == 0)))
    return out


def _fitted(texts: list[list[str]], room: int | None, wrap: Sequence[int]) -> tuple[list[str], int] | None:
    """The table's lines at the widest gap that fits, and its header height; None if it cannot fit."""
    for gap in (GAP, TIGHT_GAP):
        widths = _widths(texts, room, wrap, gap)
        if widths is not None:
            lines = _layout(texts, widths, gap)
            head = max(len(wrap_words(t, w)) for t, w in zip(texts[0], widths))
            return lines, head
    return None


def table(headers: Sequence[Any], rows: Sequence[Sequence[Any]], indent: str = "  ", wrap: Sequence[int] = ()) -> str:
    """A text table: a header row, a rule under it, one line per row (more when a cell wraps).
    Columns listed in `wrap` give up width first. Too wide to fit side by side: turned, or one
    block per row, with a hint (see the module's docstring)."""
    limit = width()
    room = max(10, limit - len(indent)) if limit else None
    texts = [[_cell(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    fitted = _fitted(texts, room, wrap)
    if fitted is None and len(rows) <= 6:
        turned = [[texts[0][0]] + [row[0] for row in texts[1:]]] + [
            [texts[0][i]] + [row[i] for row in texts[1:]] for i in range(1, len(texts[0]))
        ]
        fitted = _fitted(turned, room, range(1, len(turned[0])))
        if fitted is not None:
            hint = wrap_words(_hint(limit, "turned: one column per row"), room or 10_000)
            fitted = (hint + fitted[0], fitted[1] + len(hint))
    lines, head = fitted if fitted is not None else (_blocks(texts, room or 10_000, limit), 0)
    if color():
        lines = [BOLD + line + RESET if i < head else line for i, line in enumerate(lines)]
    return "\n".join((indent + line).rstrip() for line in lines if line.strip())


def _hint(limit: int | None, how: str) -> str:
    return f"(too wide for {limit} columns, {how}; --format markdown or a wider terminal shows the table)"


def _blocks(texts: list[list[str]], room: int, limit: int | None) -> list[str]:
    """One block per row: its first cell, then `header: value` for each other cell not empty,
    indented under it."""
    out = wrap_words(_hint(limit, "one block per row"), room)
    for row in texts[1:]:
        out += wrap_words(row[0] or "-", room)
        for head, value in zip(texts[0][1:], row[1:]):
            if value:
                out += ["  " + line for line in wrap_words(f"{head}: {value}" if head else value, room - 2)]
    return out


def para(text: str, indent: str = "", subsequent: str | None = None, default: int | None = None) -> str:
    """A paragraph wrapped to the output width (off a terminal: to `default` columns, or not at
    all), never inside a word."""
    text = terminal(text)
    limit = width() or default
    if not limit:
        return indent + text
    rest = indent if subsequent is None else subsequent
    words = wrap_words(text, limit - len(indent))
    if len(words) > 1:
        words = words[:1] + wrap_words(" ".join(words[1:]), limit - len(rest))
    return "\n".join((indent if i == 0 else rest) + w for i, w in enumerate(words)) or indent


def prose(text: str, fmt: str = "table", indent: str = "", subsequent: str | None = None) -> str:
    """A sentence in the output's format: escaped Markdown (a list item when indented), or a
    paragraph wrapped to the terminal."""
    if fmt == "markdown":
        return ("- " if indent else "") + md(text)
    return para(text, indent, subsequent)


def markdown(headers: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    def esc(v: Any) -> str:  # user text stays text: no tag, link or cell boundary comes out of it
        return md(_cell(v))

    lines = ["| " + " | ".join(esc(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def csv_text(headers: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """RFC 4180 CSV; numbers as numbers (no $ or separators), empty for unknown; text a spreadsheet
    would run as a formula is made inert (escape.csv_cell)."""
    import csv  # (CSV output only: a table's start-up does without it)

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(h) for h in headers])
    for row in rows:
        w.writerow(["" if v is None else csv_cell(v) for v in row])
    return buf.getvalue()


def grid(headers: Sequence[Any], rows: Sequence[Sequence[Any]], fmt: str = "table", wrap: Sequence[int] = ()) -> str:
    return markdown(headers, rows) if fmt == "markdown" else table(headers, rows, wrap=wrap)
