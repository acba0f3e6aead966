"""Justification memos: contents, charts, sources, determinism, well-formed HTML, exit codes."""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from conftest import AS_OF, EXAMPLES

import advisor
from advisor.present.memo import Memo, format_for

CHOSEN = {"article-office": "NVIDIA GeForce RTX 4090", "article-datacenter": "NVIDIA A100 80GB SXM4"}


def _weasyprint() -> bool:
    try:
        import weasyprint  # noqa: F401
    except (ImportError, OSError):  # OSError: installed, but Pango is missing
        return False
    return True


@pytest.fixture(scope="module")
def memos(tmp_path_factory):
    """Markdown and HTML memos of both examples, written once through the CLI."""
    from click.testing import CliRunner

    from advisor.cli import main

    out = tmp_path_factory.mktemp("memos")
    result = {}
    for example in CHOSEN:
        for fmt in ("md", "html"):
            path = out / f"{example}.{fmt}"
            run = CliRunner().invoke(
                main, ["memo", str(EXAMPLES / f"{example}.yaml"), "-o", str(path), "--as-of", AS_OF.isoformat()]
            )
            assert run.exit_code == 0, run.output
            result[example, fmt] = path
    return result


@pytest.mark.parametrize("example", sorted(CHOSEN))
@pytest.mark.parametrize("fmt", ["md", "html"])
def test_memo_names_the_chosen_gpu_and_every_plan_source(example_plan, memos, example, fmt):
    text = memos[example, fmt].read_text(encoding="utf-8")
    assert CHOSEN[example] in text.split("Recommendation", 1)[1][:600]
    _, plan = example_plan(example)
    for src in plan["sources"]:
        assert src["url"] in text, src
    data = (EXAMPLES / f"{example}.yaml").read_bytes()
    assert hashlib.sha256(data).hexdigest() in text
    assert plan["catalog_digest"] in text
    for heading in (
        "Recommendation",
        "requirement as given",
        "Bill of materials",
        "Cost over 36 months",
        "How long the work takes",
        "Alternatives considered",
        "Sensitivity",
        "Assumptions and warnings",
        "Sources",
    ):
        assert heading in text, heading


def test_datacenter_memo_cites_lic001_with_its_source(memos, rules):
    rule = rules.get("LIC001")
    for fmt in ("md", "html"):
        text = memos["article-datacenter", fmt].read_text(encoding="utf-8")
        assert "Excluded by rule LIC001" in text
        assert rule.source.url in text
        assert rule.source.title in text
        assert "is not licensed for datacenter deployment" in text  # the clause, quoted


def test_markdown_memo_links_its_charts_beside_it(memos):
    path = memos["article-office", "md"]
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", path.read_text(encoding="utf-8"))
    assert links == [
        "article-office_files/cost-vs-time.svg",
        "article-office_files/value-by-gpu.svg",
        "article-office_files/cost-vs-time-ranges.svg",
    ]
    for link in links:
        svg = ET.parse(path.parent / link).getroot()
        assert svg.tag.endswith("svg")
    # the cost axis in dollars ($5K, ...), never 5×10³ (issue 18)
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", (path.parent / links[0]).read_text(encoding="utf-8"))
    assert any(re.fullmatch(r"\$[0-9.]+K", t) for t in labels), labels
    assert not [t for t in labels if "×10" in t or "mathdefault" in t]


def test_html_memo_is_well_formed_with_inline_charts(memos):
    for example in CHOSEN:
        text = memos[example, "html"].read_text(encoding="utf-8")
        root = ET.fromstring(text.split("\n", 1)[1])  # everything after <!DOCTYPE html> is XML
        svgs = root.findall(".//{http://www.w3.org/2000/svg}svg")
        assert len(svgs) == 3  # cost-time, value per dollar, cost-time with P10-P90 whiskers
        ids = [el.get("id") for el in root.iter() if el.get("id")]
        assert len(ids) == len(set(ids)), "two charts share an SVG id"
        _Balanced().check(text)


class _Balanced(HTMLParser):
    """html.parser's view: every opened element is closed, in order."""

    VOID = {"meta", "br", "img", "hr", "link", "input"}

    def check(self, text):
        self.stack = []
        self.feed(text)
        self.close()
        assert not self.stack, f"unclosed: {self.stack}"

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


def _digests(folder, only: tuple[str, ...] = ("",)) -> dict:
    """sha256 of each file in `folder` whose relative path starts with one of `only`."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).as_posix().startswith(only)
    }


@pytest.mark.parametrize("fmt", ["md", "html", pytest.param("pdf", marks=pytest.mark.slow)])
def test_two_runs_give_identical_bytes(run, memos, tmp_path, fmt):
    if fmt == "pdf" and not _weasyprint():
        pytest.skip("WeasyPrint (pip install 'gpu-advisor[pdf]') or its Pango libraries are not installed")
    stem = "article-datacenter"
    digests = []
    if (stem, fmt) in memos:  # the first run: the session's memo, written with the same arguments
        # in a folder it shares with other memos: its own file and, for markdown, its charts beside it
        own = (f"{stem}.{fmt}",) + ((f"{stem}_files/",) if fmt == "md" else ())
        digests.append(_digests(memos[stem, fmt].parent, own))
    while len(digests) < 2:
        folder = tmp_path / str(len(digests))
        folder.mkdir()  # advisor memo refuses a missing folder rather than creating it
        code, _, err = run(
            "memo", EXAMPLES / f"{stem}.yaml", "-o", folder / f"{stem}.{fmt}", "--as-of", AS_OF.isoformat()
        )
        assert code == 0, err
        digests.append(_digests(folder))  # everything the run wrote
    assert digests[0] and digests[0] == digests[1]
    if fmt == "pdf":
        pdf = (tmp_path / "1" / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and b"/CreationDate" not in pdf


def test_date_is_printed_only_when_given(run, memos, tmp_path):
    assert AS_OF.isoformat() == "2026-12-01"  # the session's memo: `advisor memo ... --as-of 2026-12-01`, no --date
    assert "Date:" not in memos["article-office", "md"].read_text(encoding="utf-8")
    path = tmp_path / "memo.md"
    assert (
        run("memo", EXAMPLES / "article-office.yaml", "-o", path, "--as-of", "2026-12-01", "--date", "2027-01-15")[0]
        == 0
    )
    assert "Date: 2027-01-15" in path.read_text(encoding="utf-8")


def test_infeasible_workload_gets_a_memo_and_exit_3(run, write, tmp_path):
    # one 4090 in its workstation draws 0.575 kW and needs 1.6 days; two would finish in time but draw 1.03 kW
    wl = write(
        "name: too fast\ndeployment: {context: office, ownership: buy, power_limit_kw: 0.6, lead_time_days: 0}\n"
        "model: gpt2-124m\ntokens: 10B\ndeadline: 1d\ngpus: {allow: [rtx-4090, h100-sxm]}\n"
    )
    path = tmp_path / "memo.html"
    code, _, err = run("memo", wl, "-o", path, "--as-of", AS_OF.isoformat())
    assert code == 3
    assert "no plan" in err
    text = path.read_text(encoding="utf-8")
    assert "Why no plan exists" in text and "power limit" in text
    ET.fromstring(text.split("\n", 1)[1])


def test_format_comes_from_the_suffix_or_the_option(run, tmp_path):
    code, _, err = run("memo", EXAMPLES / "article-office.yaml", "-o", tmp_path / "memo.txt")
    assert code == 2 and "--format (md, html or pdf)" in err and "`fmt`" not in err
    assert "article-office.yaml" not in err  # about the output file, not the workload
    code, _, _ = run(
        "memo",
        EXAMPLES / "article-office.yaml",
        "-o",
        tmp_path / "memo.txt",
        "--format",
        "html",
        "--as-of",
        AS_OF.isoformat(),
    )
    assert code == 0
    assert (tmp_path / "memo.txt").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert format_for("a/b.MD") == "md" and format_for("x.htm") == "html" and format_for("x.pdf") == "pdf"
    with pytest.raises(advisor.InputError) as caught:  # the library names its parameter, the CLI the flag
        format_for("memo.txt")
    assert "`fmt`" in str(caught.value) and "--" not in str(caught.value)


def test_bad_workload_exits_2(run, write, tmp_path):
    code, _, err = run(
        "memo", write("deployment: office\nmodel: gpt2-124m\ntokens: lots\n"), "-o", tmp_path / "memo.md"
    )
    assert code == 2 and "tokens" in err


def test_python_api(catalog, rules):
    path = EXAMPLES / "article-office.yaml"
    p = advisor.plan(advisor.load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF)
    m = advisor.memo(p, path, fmt="md", catalog=catalog, rules=rules, charts=False)
    assert isinstance(m, Memo) and m.attachments == {}
    assert "NVIDIA GeForce RTX 4090" in m.text
    # a Workload object works too; its input hash is that of its canonical JSON
    m2 = advisor.memo(p, advisor.load_workload(path), fmt="html", catalog=catalog, rules=rules, charts=False)
    assert "canonical JSON" in m2.text
    # the plan dict may come back from JSON
    m3 = advisor.memo(json.loads(p.to_json()), path, fmt="md", catalog=catalog, rules=rules, charts=False)
    assert m3.content == m.content


def test_plan_from_another_catalog_is_refused(catalog, rules, write):
    path = EXAMPLES / "article-office.yaml"
    p = dict(advisor.plan(advisor.load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF))
    p["catalog_digest"] = "0" * 16
    with pytest.raises(advisor.InputError, match="the same `catalog` as the plan"):
        advisor.memo(p, path, catalog=catalog, rules=rules, charts=False)


def test_pdf_without_weasyprint_says_how_to_get_it(monkeypatch, catalog, rules):
    import builtins

    real_import = builtins.__import__

    def no_weasyprint(name, *args, **kwargs):
        if name == "weasyprint":
            raise ImportError("No module named 'weasyprint'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_weasyprint)
    path = EXAMPLES / "article-office.yaml"
    p = advisor.plan(advisor.load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF)
    with pytest.raises(advisor.AdvisorError, match=r"gpu-advisor\[pdf\]"):
        advisor.memo(p, path, fmt="pdf", catalog=catalog, rules=rules, charts=False)


def test_error_band_is_quoted_from_the_catalog_never_invented(catalog, rules):
    """The memo's accuracy line quotes catalog/accuracy.yaml (written by bench/accuracy.py)."""
    import yaml

    from advisor.data.accuracy import estimator_band
    from advisor.data.resources import data_dir

    shipped = yaml.safe_load((data_dir("catalog") / "accuracy.yaml").read_text(encoding="utf-8"))
    band = estimator_band()
    assert band["mape"] == shipped["mape"] and band["source"] == "catalog/accuracy.yaml"
    path = EXAMPLES / "article-office.yaml"
    p = advisor.plan(advisor.load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF)
    assert f"MAPE) {shipped['mape']}" in advisor.memo(p, charts=False).text


def test_memo_of_a_plan_needs_nothing_else():
    """DESIGN.md §1: advisor.memo(plan) -- the plan remembers its workload, catalog and rules."""
    import advisor

    p = advisor.plan(advisor.load_workload(EXAMPLES / "article-datacenter.yaml"), as_of=AS_OF)
    html = advisor.memo(p, fmt="html").content.decode("utf-8")
    assert "a100-80gb-sxm" in html.lower() or "A100 80GB" in html
    assert "LIC001" in html


def _memo_text(workload_doc: dict, catalog, rules, fmt: str = "md", **kw) -> tuple[dict, str]:
    p = advisor.plan(advisor.parse_workload(workload_doc), catalog=catalog, rules=rules, as_of=AS_OF)
    return p, advisor.memo(p, charts=False, fmt=fmt, **kw).content.decode("utf-8")


@pytest.mark.parametrize(
    "ownership,title", [("buy", "GPU purchase justification"), ("rent", "GPU rental justification")]
)
def test_memo_title_follows_the_decision(catalog, rules, ownership, title):
    doc = {
        "name": "t",
        "deployment": {"context": "datacenter", "ownership": ownership, "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "deadline": "7d",
        "gpus": {"allow": ["a100-80gb-sxm", "h100-sxm"]},
    }
    p, text = _memo_text(doc, catalog, rules)
    assert {i["ownership"] for i in p["purchase"]} == {ownership}
    assert text.startswith(f"# {title}: t")
    other = "GPU rental justification" if ownership == "buy" else "GPU purchase justification"
    assert other not in text


def test_memo_prose_uses_display_names_without_doubled_words(catalog, rules):
    doc = {
        "name": "t",
        "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "deadline": "7d",
        "gpus": {"allow": ["a100-80gb-sxm"]},
    }
    p, text = _memo_text(doc, catalog, rules)
    recommendation = text.split("Recommendation", 1)[1].split("\n## ", 1)[0]
    for srv in p["servers"]:
        assert srv["server"] not in recommendation  # no internal id in prose
        assert catalog.servers[srv["server"]].name in recommendation
    prose = [line for line in text.splitlines() if line and not line.startswith(("|", "```", "    "))]
    doubled = [m.group(0) for line in prose for m in re.finditer(r"\b(\w+) \1\b", line, flags=re.I)]
    assert not doubled, doubled
    for srv in p["servers"]:  # "HGX A100 8-GPU server (SXM4, NVSwitch) server for" nowhere, tables included
        name = catalog.servers[srv["server"]].name
        assert "server" in name.lower() and f"{name} server" not in text


def test_memo_paper_size(catalog, rules):
    doc = {
        "name": "t",
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "decision": {"draws": 40},  # a close call draws all it may (200 by default); the page size is the same
    }
    p, a4 = _memo_text(doc, catalog, rules, fmt="html")  # one plan, three memos of it
    letter = advisor.memo(p, charts=False, fmt="html", paper="letter").content.decode("utf-8")
    assert "size: A4;" in a4 and "size: letter;" in letter
    from advisor.errors import InputError

    with pytest.raises(InputError, match="paper"):
        advisor.memo(p, charts=False, fmt="html", paper="a3")


def test_cli_memo_paper_option(run, tmp_path):
    out = tmp_path / "m.html"
    code, _, _ = run(
        "memo", EXAMPLES / "article-office.yaml", "-o", out, "--paper", "letter", "--as-of", AS_OF.isoformat()
    )
    assert code == 0 and "size: letter;" in out.read_text()
    code, _, err = run("memo", EXAMPLES / "article-office.yaml", "-o", out, "--paper", "a3")
    assert code == 2 and "--paper" in err


def test_value_chart_marks_excluded_gpus():
    from advisor.contract.explanations import Rejected
    from advisor.present.memo_charts import excluded_labels

    rejected = [
        Rejected.model_validate(r)
        for r in [
            {
                "gpu": "rtx-4090",
                "forced_cost_usd": None,
                "reasons": [{"rule": "LIC001", "code": "LIC001", "message": "m"}],
                "name": "NVIDIA GeForce RTX 4090",
            },
            {
                "gpu": "b200",
                "forced_cost_usd": None,
                "reasons": [{"rule": None, "code": "no-server", "message": "m"}],
                "name": "NVIDIA B200",
            },
            {
                "gpu": "h100-sxm",
                "forced_cost_usd": 1000.0,
                "reasons": [{"rule": None, "code": "cost", "message": "m"}],
                "name": "NVIDIA H100 SXM5 80GB",
            },
        ]
    ]
    assert excluded_labels(rejected) == {"rtx-4090": "rule LIC001", "b200": "no priced server"}


# team-fleet (its charts re-solve a 22-job fleet, ~3 s of CPU) asserts the same on a larger figure: slow
@pytest.mark.parametrize("example", ["article-office", pytest.param("team-fleet", marks=pytest.mark.slow)])
def test_chart_labels_legends_and_notes_fit_inside_the_figure(example):
    """The charts are plain SVG laid out from the font's advance widths (present/svg.py): every tick
    label, axis label, legend entry and point note must fall inside the figure, not be cut off, and
    the axes keep at least a third of it."""
    from test_svg import assert_inside, figure_and_axes

    path = EXAMPLES / f"{example}.yaml"
    memo = advisor.memo(advisor.plan(path), path, fmt="md")
    charts = {rel.rsplit("/", 1)[1]: svg.decode("utf-8") for rel, svg in memo.attachments.items()}
    assert sorted(charts) == ["cost-vs-time-ranges.svg", "cost-vs-time.svg", "value-by-gpu.svg"]
    for name, svg in charts.items():
        assert_inside(svg, name)
        w, h, (x0, y0, x1, y1) = figure_and_axes(svg)
        assert x1 - x0 >= w / 3 and y1 - y0 >= h / 3, name


@pytest.mark.parametrize("example", sorted(CHOSEN))
def test_the_memos_cost_tables_add_up_to_the_cent(memos, example):
    """The article examples' memos, made by the CLI (every example's from its shared plan: test_cash_adds_up.py)."""
    from test_cash_adds_up import memo_adds_up

    memo_adds_up(memos[example, "md"].read_text(encoding="utf-8"))


def test_the_cost_time_chart_does_not_send_a_reader_to_alternatives_for_a_gpu_the_plan_uses(example_plan):
    """team-fleet's chart read "Not shown (see Alternatives considered for why): ... NVIDIA GeForce RTX
    4090 ... NVIDIA RTX 6000 Ada Generation", two of the three GPUs it rents (Alternatives: "Recommended"):
    each dot is a plan on one type alone, and neither does all the work alone."""
    from types import SimpleNamespace

    from advisor.contract import Plan
    from advisor.present.memo_charts import _cost_time_chart

    _, plan = example_plan("article-office")
    p = Plan.model_validate(plan)
    used = p.purchase[0].gpu
    names = {used: "The Used One", "h100-sxm": "The Other One", "a100-80gb-sxm": "The Shown One"}
    ctx = SimpleNamespace(considered=list(names), gpu_name=names.get, deadlines=[])
    data = {"series": {"a100-80gb-sxm": [(30.0, 9000.0, 1)]}, "front": []}
    caption = _cost_time_chart(p, ctx, {"a100-80gb-sxm": "#000000"}, data)["caption"]
    assert "(see Alternatives considered for why): The Other One." in caption, caption
    assert "Not shown: The Used One, which the recommendation uses beside other types" in caption, caption
