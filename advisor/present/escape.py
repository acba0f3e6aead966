"""Text from a user's files (a workload's name, a catalog's GPU and provider names, a rule's title
and message, a source's URL) made inert for the format it is printed in: one function per sink,
applied where text leaves the program.

    terminal   tables and paragraphs on a terminal (grid.py): no control character or escape
               sequence, no line break inside a cell or sentence
    md         Markdown (plan --format markdown, the Markdown memo): no tag, entity, link,
               emphasis, heading, list marker or table cell boundary
    html       the HTML memo: Jinja2's autoescape, and `linkable` for every href
    xml_text   SVG charts (text and attribute values)
    csv_cell   CSV: no cell a spreadsheet would run as a formula (quoting is the csv module's)
    json_text  JSON: the text exactly (json.dumps escapes what JSON must)"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:  # markupsafe is imported by the sinks that use it: a plan printed on a terminal needs none
    from markupsafe import Markup

# CommonMark lets a backslash escape any ASCII punctuation; these can make markup anywhere in a
# line (emphasis, code, links, images, tables, strikethrough; < > & become entities) ...
_MD_INLINE = re.compile(r"([\\`*_\[\]|~])")
# ... and these only at the start of one (headings, list items, setext underlines, block quotes)
_MD_LEAD = re.compile(r"(\s*)([-+=#]+|\d{1,9}[.)])(\s|$)")
_SCHEME = re.compile(r"^([^/?#]*?):")
_AUTOLINK = re.compile(r"^https?://[^\s<>\"'`\\]+$", re.IGNORECASE)
CSV_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_XML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
_BREAKS = re.compile("[\n\r\t\f\v\u0085\u2028\u2029]")


def terminal(text: str) -> str:
    """Text for a terminal: line breaks and tabs become spaces; control and format characters
    (an escape sequence, a bidirectional override) become visible escapes such as \\x1b."""
    text = _BREAKS.sub(" ", text)
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text) if _CONTROL.search(text) else text


def visible(text: str) -> str:
    """A whole page of text for a terminal: its own line breaks kept, every other control or format
    character made a visible escape (the last guard where text leaves for a terminal)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text) if _CONTROL.search(text) else text


def html(text: str) -> str:
    """HTML text or attribute value: what Jinja2's autoescape does to the HTML memo."""
    from markupsafe import escape

    return str(escape(text))


def json_text(value: object) -> str:
    """A value as JSON: strings exactly, with what JSON must escape escaped."""
    return json.dumps(value, ensure_ascii=False)


def xml_text(text: str) -> str:
    """XML-escaped text or attribute value (SVG); characters XML cannot carry become U+FFFD."""
    return _BAD_XML.sub("\ufffd", text).translate(_XML)


def md(text: object) -> str:
    """`text` as Markdown that renders as exactly that text: no tag, link, emphasis, heading or
    table cell boundary can come out of it, and it stays on one line."""
    from markupsafe import Markup

    if isinstance(text, Markup):
        return str(text)
    s = " ".join(str(text).split()) if any(c in str(text) for c in "\n\r\t\f\v") else str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_INLINE.sub(r"\\\1", s)
    lead = _MD_LEAD.match(s)
    if lead:  # escape the marker's first character, or a number's closing . or )
        at = lead.end(1) + (len(lead.group(2)) - 1 if lead.group(2)[0].isdigit() else 0)
        s = s[:at] + "\\" + s[at:]
    return s


def linkable(url: object) -> bool:
    """A URL safe to make a link of: http(s), or a relative path (no other scheme: javascript:,
    data:, file: ...)."""
    url = str(url or "").strip()
    if not url or any(c.isspace() or c in "<>\"'`\\" for c in url):
        return False
    scheme = _SCHEME.match(url)
    return scheme is None or scheme.group(1).lower() in ("http", "https")


def md_url(url: object) -> Markup:
    """An http(s) URL as a Markdown autolink `<url>`; anything else as escaped text."""
    from markupsafe import Markup

    url = str(url or "")
    return Markup(f"<{url}>") if _AUTOLINK.match(url) else Markup(md(url))


def md_path(path: str) -> Markup:
    """A relative file path as a Markdown link destination (spaces and brackets percent-encoded)."""
    from markupsafe import Markup

    return Markup(quote(path, safe="/._-"))


def csv_cell(value: Any) -> Any:
    """A value for a CSV cell: numbers as they are; text that a spreadsheet would read as a
    formula (=, +, -, @, tab, CR first) gets a leading apostrophe. Quoting is the csv module's."""
    if isinstance(value, str) and value.startswith(CSV_FORMULA):
        try:
            float(value)
            return value  # a negative number written as text stays a number
        except ValueError:
            return "'" + value
    return value
