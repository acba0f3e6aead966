"""Commands that write a document about a workload's plan: memo (the justification a buyer
defends) and rfq (the request for quotation sent to vendors)."""

from __future__ import annotations

import datetime as dt
import sys

import click

from advisor.cli.base import (
    as_of_option,
    catalog_option,
    check_output,
    date_callback,
    handled,
    main,
    rules_option,
    time_limit_option,
    working,
    workload_argument,
)
from advisor.cli.plans import workload_inputs


def _pdf_ready() -> None:
    """Fail before solving when a PDF cannot be written (no WeasyPrint or no Pango)."""
    from advisor.errors import AdvisorError

    try:
        import weasyprint  # noqa: F401
    except Exception as exc:  # ImportError, or OSError when Pango is missing
        raise AdvisorError(
            f"a PDF memo needs WeasyPrint and Pango ({type(exc).__name__}: {exc}); "
            "pip install 'gpu-advisor[pdf]' and, on Debian/Ubuntu, apt-get install "
            "libpango-1.0-0 libpangoft2-1.0-0; or write HTML (-o memo.html) and print it"
        ) from None


@main.command()
@workload_argument
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="File to write: memo.md (charts in memo_files/ beside it), memo.html or memo.pdf; "
    "`-` for standard output (give --format).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "pdf"]),
    default=None,
    help="Memo format [from the suffix of --output].",
)
@click.option(
    "--date",
    callback=date_callback,
    default=None,
    metavar="YYYY-MM-DD",
    help="Date printed on the memo [none, so that reruns give identical files].",
)
@click.option(
    "--paper",
    type=click.Choice(["a4", "letter"]),
    default="a4",
    show_default=True,
    help="Page size of the PDF (and of the HTML when printed).",
)
@click.option("--force", is_flag=True, help="Replace the output file (and its charts) if they exist.")
@time_limit_option
@catalog_option
@rules_option
@as_of_option
@handled
def memo(
    workload_file: str,
    output: str,
    fmt: str | None,
    date: dt.date | None,
    paper: str,
    force: bool,
    time_limit: float,
    catalog_file: str | None,
    rules_files: tuple[str, ...],
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """Write a justification memo for WORKLOAD_FILE: the recommendation, bill of materials,
    costs, alternatives with the rules that excluded them, sensitivity, charts and sources.

    \b
    Examples:
      advisor memo examples/article-office.yaml -o memo.md
      advisor memo examples/article-datacenter.yaml -o memo.html --date 2026-12-01
      advisor memo my.yaml -o memo.pdf        # needs: pip install 'gpu-advisor[pdf]'
      advisor memo my.yaml -o - --format html > memo.html

    The output folder must exist. Exit status as for `advisor plan`: 0 memo written, 2 invalid
    input, 3 no feasible plan (the memo is written all the same and explains why), 1 anything
    else (e.g. PDF without WeasyPrint, checked before solving).
    """
    from pathlib import Path

    from advisor.present.memo import format_for

    if output == "-" and fmt is None:
        raise click.UsageError("with -o - give --format md, html or pdf")
    fmt = format_for(output if output != "-" else f"memo.{fmt}", fmt)
    check_output(output, force)
    if fmt == "pdf":
        _pdf_ready()
    from advisor.flow import plan as make_plan
    from advisor.report import memo as make_memo

    raw: dict = {}
    workload, catalog, rules = workload_inputs(workload_file, catalog_file, rules_files, raw)
    with working("solving and drawing"):
        result = make_plan(workload, catalog=catalog, rules=rules, as_of=as_of, time_limit=time_limit, charts=True)
        doc = make_memo(
            result,
            workload,
            fmt=fmt,
            catalog=catalog,
            rules=rules,
            date=date,
            name="memo" if output == "-" else Path(output).stem,
            time_limit=time_limit,
            charts=not (output == "-" and fmt == "md"),
            paper=paper,
            source=(Path(raw["name"]).name if workload_file != "-" else "<stdin>", raw["data"]),
        )
    if output == "-":
        sys.stdout.buffer.write(doc.content)
        sys.stdout.flush()
    else:
        files = doc.write(output, force=force, force_as="--force")
        click.echo(f"wrote {', '.join(str(f) for f in files)}")
    if not result.feasible:
        click.echo("no plan meets every requirement; the memo explains why", err=True)
        sys.exit(3)


@main.command()
@workload_argument
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="File to write: rfq.md (a document to send) or rfq.csv (one row per line item); `-` for "
    "standard output (give --format).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["md", "csv"]), default=None, help="RFQ format [from the suffix of --output]."
)
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
@time_limit_option
@catalog_option
@rules_option
@as_of_option
@handled
def rfq(
    workload_file: str,
    output: str,
    fmt: str | None,
    force: bool,
    time_limit: float | None,
    catalog_file: str | None,
    rules_files: tuple[str, ...],
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """Write a request for quotation for WORKLOAD_FILE's plan: first the inputs worth confirming
    (the plan's decision.verify, by the value of knowing them), then each GPU type to buy or rent
    with the specification that matters, quantity, term, the latest date it must be working (and
    for hardware bought, servers too, the order-by date: lead time and burn-in), and the export and
    licence notes the plan cites.

    \b
    Examples:
      advisor rfq examples/rent-vs-buy-3y.yaml -o rfq.md
      advisor rfq my.yaml -o rfq.csv --as-of 2026-12-01
      advisor rfq my.yaml -o - --format md

    Exit status as for `advisor memo`: 0 written, 2 invalid input, 3 no feasible plan (the RFQ is
    written all the same and says so), 1 anything else.
    """
    from advisor.present.rfq import format_for

    if output == "-" and fmt is None:
        raise click.UsageError("with -o - give --format md or csv")
    fmt = format_for(output if output != "-" else f"rfq.{fmt}", fmt)
    check_output(output, force)
    from advisor.flow import plan as make_plan
    from advisor.report import rfq as make_rfq

    workload, catalog, rules = workload_inputs(workload_file, catalog_file, rules_files, {})
    with working("solving"):
        result = make_plan(workload, catalog=catalog, rules=rules, as_of=as_of, time_limit=time_limit)
        doc = make_rfq(result, workload, fmt=fmt, catalog=catalog, rules=rules)
    if output == "-":
        sys.stdout.buffer.write(doc.content)
        sys.stdout.flush()
    else:
        click.echo(f"wrote {doc.write(output, force=force)}")
    if not result.feasible:
        click.echo("no plan meets every requirement; the RFQ says so", err=True)
        sys.exit(3)
