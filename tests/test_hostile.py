"""Hostile names: text from a user's files (a workload's and a job's name, a catalog's GPU and
provider names and source URLs, a rule's title, message and why) printed in each output format
stays text -- no tag, script, event handler, javascript: link, image, heading or table cell comes
out of it (issue 20). Markdown is rendered with a CommonMark renderer that passes raw HTML
through, as many do, and the result is checked like the HTML memo."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
import yaml
from conftest import AS_OF

import advisor
from advisor.data.catalog import load_catalog
from advisor.data.rules import load_rules
from advisor.present.escape import csv_cell, linkable, md, md_url
from advisor.present.grid import grid

HOSTILE = [
    "<script>alert(1)</script> [x](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "\"'><svg onload=alert(1)>",
    "![pixel](https://evil.example/p.png)",
    "[click](https://evil.example) <https://evil.example>",
    "a | b | c",
    "# heading",
    "1. list item",
    "- bullet",
    "**bold** _it_ ~~gone~~ `code`",
    "&lt;b&gt; &amp; entity",
    "]]></text><script>x</script>",
    "$\\frac{1}{0}$ and $x^2$",
    '=HYPERLINK("https://evil.example","x")',
    "line one\n# line two",
    "--><script>alert(2)</script><!--",
]
BAD_HTML = re.compile(r"<\s*(script|img|svg\s+onload|iframe|object|embed)|\bon[a-z]+\s*=|javascript:", re.I)


class _Elements(HTMLParser):
    """Tags, attributes and text of an HTML document."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


def elements(html: str) -> _Elements:
    p = _Elements()
    p.feed(html)
    return p


def assert_inert(html: str):
    """No element or attribute a hostile name could have made."""
    found = elements(html)
    assert not {"script", "img", "iframe", "object", "embed"} & set(found.tags)
    assert not [a for a, _ in found.attrs if a.startswith("on")]
    hrefs = [v for a, v in found.attrs if a in ("href", "src", "xlink:href")]
    assert not [h for h in hrefs if h and not linkable(h)], hrefs
    assert "evil.example" not in " ".join(h or "" for h in hrefs)
    return found


def hostile_inputs(tmp_path, text: str):
    """A workload, catalog override and rules file that carry `text` everywhere a user can put text."""
    wl = {
        "name": text,
        "deployment": {"context": "office", "ownership": "any"},
        "jobs": [{"name": text[:200], "model": "gpt2-124m", "tokens": "10B", "deadline": "7d"}],
        "gpus": {"allow": ["rtx-4090", "a100-80gb-pcie", "l40s"]},
    }
    cat = {
        "gpus": [{"id": "rtx-4090", "name": text}, {"id": "l40s", "name": "L40S " + text}],
        "sources": {"tomsguide_4090": {"url": "javascript:alert(1)", "title": text}},
    }
    rules = {
        "schema_version": 1,
        "rules": [
            {
                "id": "ORG901",
                "name": "hostile",
                "title": text,
                "severity": "forbid",
                "when": {"field": "gpu.id", "equals": "a100-80gb-pcie"},
                "message": text + " {gpu.name}",
                "why": text,
                "example": "x",
                "source": {"title": text, "url": "https://intranet.example.com/p", "clause": text},
            }
        ],
    }
    paths = []
    for name, doc in (("wl.yaml", wl), ("cat.yaml", cat), ("rules.yaml", rules)):
        path = tmp_path / name
        path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
        paths.append(path)
    return paths


def make_plan(tmp_path, text, charts=False):
    wl_path, cat_path, rules_path = hostile_inputs(tmp_path, text)
    catalog, rules = load_catalog(cat_path), load_rules([rules_path])
    wl = advisor.load_workload(wl_path)
    p = advisor.plan(wl, catalog=catalog, rules=rules, as_of=AS_OF, charts=charts)
    return p, wl_path, catalog, rules


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_name_is_inert_in_markdown_html_and_json(text, tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    p, wl_path, catalog, rules = make_plan(tmp_path, text)
    assert any(r["rule"] == "ORG901" for rej in p["rejected"] for r in rej["reasons"])
    # JSON: the text comes back exactly
    assert json.loads(p.to_json())["name"] == text
    # Markdown, rendered by a CommonMark renderer that lets raw HTML through
    doc = advisor.memo(p, wl_path, fmt="md", catalog=catalog, rules=rules, charts=False).text
    body = doc.split("```yaml", 1)[0] + doc.rsplit("```", 1)[1]  # the verbatim workload is a code block
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(doc)
    found = assert_inert(html)
    flat = " ".join(text.split())
    assert f" justification: {flat}" in html_text(found)  # the heading reads as written
    assert not re.search(
        r"^#{1,6} ",
        "\n".join(line for line in body.splitlines() if not line.startswith(("# GPU", "## ", "### "))),
        re.M,
    )
    header = None  # every table row keeps its table's columns: as many unescaped pipes as its header
    for line in body.splitlines():
        if not line.startswith("|"):
            header = None
        elif header is None:
            header = len(re.findall(r"(?<!\\)\|", line))
        else:
            assert len(re.findall(r"(?<!\\)\|", line)) == header, line
    # HTML memo
    html = advisor.memo(p, wl_path, fmt="html", catalog=catalog, rules=rules, charts=False).text
    found = assert_inert(html)
    assert f" justification: {flat}" in html_text(found)


def html_text(found: _Elements) -> str:
    return " ".join(" ".join(found.text).split())


def test_hostile_names_are_inert_in_the_svg_charts(tmp_path):
    text = " ".join(HOSTILE[:3] + HOSTILE[12:14] + HOSTILE[-1:])
    p, wl_path, catalog, rules = make_plan(tmp_path, text, charts=True)
    m = advisor.memo(p, wl_path, fmt="md", catalog=catalog, rules=rules)
    assert m.attachments
    for svg in m.attachments.values():
        tree = ET.fromstring(svg)  # well-formed XML: no text broke out of its element
        tags = {el.tag.rsplit("}", 1)[-1] for el in tree.iter()}
        assert not {"script", "foreignObject", "image"} & tags
        assert not [a for el in tree.iter() for a in el.attrib if a.startswith("on")]
    html = advisor.memo(p, wl_path, fmt="html", catalog=catalog, rules=rules).text
    assert_inert(html)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_csv_cells_and_markdown_tables_stay_text(text):
    buf = io.StringIO()
    csv.writer(buf).writerow([csv_cell(text), csv_cell("-12.5"), 3])
    row = next(csv.reader(io.StringIO(buf.getvalue())))
    assert row[0].lstrip("'") == text and not row[0].startswith(("=", "+", "-", "@"))
    assert row[1] == "-12.5"
    line = md(text)
    assert "\n" not in line and not re.search(r"(?<!\\)[|<>\[\]`*_]", line)
    out = grid(["GPU", "cost"], [[text, "$1,000"]], "markdown").splitlines()[2]
    assert len(re.findall(r"(?<!\\)\|", out)) == 3 and "<" not in out


def test_only_http_links_are_made():
    assert linkable("https://example.com/a?b#c") and linkable("docs/model.md#x")
    for url in (
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "data:text/html,x",
        "java script:x",
        "file:///etc",
        "https://a.example/ onmouseover=x",
        "vbscript:x",
    ):
        assert not linkable(url), url
    assert str(md_url("javascript:alert(1)")) == "javascript:alert(1)"  # text, not <autolink>
    assert str(md_url("https://example.com/x")) == "<https://example.com/x>"
