"""Justification memo: the plan as a document a finance committee can read and anyone can
reproduce (Markdown, HTML or PDF, with charts and every source).

    import advisor
    p = advisor.plan(advisor.load_workload("examples/article-office.yaml"), charts=True)
    advisor.memo(p, fmt="html").write("memo.html")

This module renders only: `advisor.report.memo` gathers what the plan's flow computed, then
`memo_context` words every figure, Jinja2 templates (present/templates/) lay it out, present/svg.py
draws the charts as plain SVG, WeasyPrint turns the HTML into PDF (optional extra `pdf`).
Same input, catalog and rules -> identical bytes: no clock is read, each chart's SVG ids
carry its own prefix, file metadata carry no dates.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.errors import AdvisorError, InputError
from advisor.inputs import arguments as arg
from advisor.inputs.arguments import Check, checked, output_file
from advisor.present import escape
from advisor.present.memo_context import memo_context

if TYPE_CHECKING:
    import jinja2

WRITE: dict[str, Check] = {"path": arg.path(), "force": arg.flag()}  # Memo.write's arguments
PAPERS = ("a4", "letter")
SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".pdf": "pdf"}
PDF_HINT = (
    "PDF output needs WeasyPrint and its Pango libraries: pip install 'gpu-advisor[pdf]' "
    "(Debian/Ubuntu: apt-get install libpango-1.0-0 libpangoft2-1.0-0); "
    "or write HTML (-o memo.html) and print it from a browser"
)


@dataclass
class Memo:
    """A rendered memo: `content` (the .md, .html or .pdf bytes) and, for Markdown, the chart
    files its links point to (`attachments`: path relative to the memo's folder -> bytes)."""

    format: str
    content: bytes
    attachments: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        """Short: the format and sizes, never the content (an HTML memo is over 100 KB)."""
        extra = f", {len(self.attachments)} attachments" if self.attachments else ""
        return f"<Memo {self.format}, {len(self.content):,} bytes{extra}>"

    @property
    def text(self) -> str:
        if self.format == "pdf":
            raise ValueError("a PDF memo is bytes; use .content")
        return self.content.decode("utf-8")

    def write(self, path: str | Path, *, force: bool = False, force_as: str = "`force`") -> list[Path]:
        """Write the memo to `path` and its attachments beside it (in `<stem>_files/`, so two memos
        in one folder never share one); returns the files written. Nothing is half-written: each
        file goes to a temporary file in its folder first and is renamed into place, charts before
        the memo. The folder must exist, and an existing file or a link (even one pointing nowhere)
        is replaced only with force=True. The arguments are checked first, as every public
        function's are (inputs/arguments.py): a wrong one is an InputError naming it."""
        args = checked("Memo.write", WRITE, {"path": path, "force": force})
        if args["path"] == "-":
            raise InputError(
                "`path`: a memo is written to a file (and Markdown to a folder beside it); give a file "
                "name such as memo.md, not '-'",
                field="path",
            )
        path = output_file(args["path"], "path", args["force"], force_as=force_as)
        targets = [path] + [path.parent / rel for rel in sorted(self.attachments)]
        folders = {rel.split("/", 1)[0] for rel in self.attachments}
        if folders - {f"{path.stem}_files"}:
            raise InputError(
                f"{path}: this memo links its charts in {', '.join(sorted(folders))}/, which is not named "
                f"after the file; render it with name={path.stem!r} (the CLI does)",
                file=str(path),
                field="path",
            )
        existing = [t for t in targets if t.exists() or t.is_symlink()]  # a dangling link too
        if existing and not args["force"]:
            raise InputError(
                f"{existing[0]}: already exists; pass {force_as} to replace "
                f"{'it' if len(existing) == 1 else f'it and {len(existing) - 1} more'}",
                file=str(existing[0]),  # the file, never the workload (the CLI named its line 3)
                field="path",
            )
        for rel, data in sorted(self.attachments.items()):
            (path.parent / rel).parent.mkdir(exist_ok=True)
            write_atomically(path.parent / rel, data)
        write_atomically(path, self.content)
        return targets


def write_atomically(target: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `target`, then rename it over `target` (atomic on
    one filesystem): a reader sees the old file or the new one, never a part."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # as a plain open() would have made it
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process umask, read without changing it where the system allows (os.umask sets it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def format_for(path: str | Path, fmt: str | None = None) -> str:
    """The memo format: `fmt` if given, else from the file's suffix."""
    return output_format(path, fmt, "memo", SUFFIXES)


def output_format(path: str | Path, fmt: str | None, what: str, suffixes: dict[str, str]) -> str:
    """A document's format: `fmt` if given (one of the suffixes' formats), else from the file's suffix;
    an InputError naming `fmt` or `output` otherwise (the memo's and the RFQ's rule)."""
    formats = tuple(dict.fromkeys(suffixes.values()))
    listed = ", ".join(formats[:-1]) + f" or {formats[-1]}"
    if fmt is not None:
        if fmt not in formats:
            raise InputError(f"{what} format {fmt!r} is not one of {', '.join(formats)}", field="fmt")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in suffixes:
        names = ", ".join(f".{f}" for f in formats[:-1]) + f" or .{formats[-1]}"
        raise InputError(
            f"cannot tell the {what} format from {str(path)!r}: name the file {names}, or give `fmt` ({listed})",
            field="output",
        )
    return suffixes[suffix]


def render(
    plan: Plan,
    context: PlanContext,
    source: tuple[str, str, bytes | None],
    *,
    fmt: str = "md",
    date: dt.date | None = None,
    chart_data: dict | None = None,
    band: dict | None = None,
    min_gpus: dict | None = None,
    name: str = "memo",
    paper: str = "a4",
) -> Memo:
    """The memo for `plan`, drawn from what the plan's flow computed: its context (the workload,
    catalog entries and rules it was made from), the workload file's (label, sha256, bytes), chart
    data, the estimator's error band and each job's minimum GPU count. Markdown links its charts as
    `<name>_files/*.svg`, which Memo.write puts beside the memo."""
    fmt = format_for("", fmt)
    if paper not in PAPERS:
        raise InputError(f"paper size {paper!r} is not one of {', '.join(PAPERS)}", field="paper")
    ctx = memo_context(
        plan, context, source, date=date, chart_data=chart_data, band=band, min_gpus=min_gpus, paper=paper
    )
    if fmt == "md":
        attachments = {}
        for chart in ctx["charts"]:
            chart["file"] = f"{name}_files/{chart['slug']}.svg"
            attachments[chart["file"]] = chart["svg_file"].encode("utf-8")
        return Memo("md", _render("memo.md.j2", ctx, autoescape=False).encode("utf-8"), attachments)
    html = _render("memo.html.j2", ctx, autoescape=True)
    return Memo("html", html.encode("utf-8")) if fmt == "html" else Memo("pdf", html_to_pdf(html))


def html_to_pdf(html: str) -> bytes:
    try:
        import weasyprint
    except (ImportError, OSError) as exc:  # OSError: WeasyPrint installed but Pango missing
        raise AdvisorError(f"{PDF_HINT} ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
    # fontTools stamps the subsetted fonts' `head.modified` with the clock unless SOURCE_DATE_EPOCH
    # is set: pin it (to the epoch, unless the caller chose a date) so that reruns give identical bytes
    saved = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = saved or "0"
    try:
        return weasyprint.HTML(string=html).write_pdf()
    finally:
        if saved is None:
            del os.environ["SOURCE_DATE_EPOCH"]


def _render(template: str, ctx: dict, autoescape: bool) -> str:
    return _environment(autoescape).get_template(template).render(**ctx)


@functools.lru_cache(maxsize=2)
def _environment(autoescape: bool) -> jinja2.Environment:
    """The templates' jinja2 environment, made once per process: it keeps each template compiled
    (tens of ms of CPU each) rather than compiling it afresh for every memo."""
    import jinja2

    # Markdown has no autoescape: every {{ value }} goes through escape.md (finalize) unless it is
    # Markup the template chose on purpose (the verbatim workload in its fence, a checked link)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=None if autoescape else escape.md,
    )
    env.filters["cell"] = lambda v: " ".join(str(v).split())
    env.filters["refs"] = lambda ns: Markup("".join(f"[{int(n)}]" for n in ns))
    env.filters["verbatim"] = Markup
    env.filters["md_url"] = escape.md_url
    env.filters["md_path"] = escape.md_path
    env.tests["linkable"] = escape.linkable
    return env
