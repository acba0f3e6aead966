"""Commands that read a workload: plan, frontier, validate, init, schema."""

from __future__ import annotations

import datetime as dt
import sys
from typing import TYPE_CHECKING, Any

import click

from advisor.cli.base import (
    as_of_option,
    catalog_option,
    check_output,
    emit,
    format_option,
    handled,
    load,
    main,
    rules_option,
    time_limit_option,
    working,
    workload_argument,
    write_file,
)

if TYPE_CHECKING:
    from advisor.data.catalog import Catalog
    from advisor.data.rules import RuleSet
    from advisor.inputs.workload import Workload


def workload_inputs(
    workload_file: str, catalog_file: str | None, rules_files: tuple[str, ...], raw: dict | None = None
) -> tuple[Workload, Catalog, RuleSet]:
    """The workload, catalog and rules a plan-making command reads: the catalog and rules first,
    so that the workload's GPU ids and presets are checked with its other mistakes (its size against
    the catalog is checked by flow.prepare, before any estimating). `raw` gets the workload file's
    name and bytes (a memo quotes them, standard input's too)."""
    from advisor.api import known_ids
    from advisor.inputs.workload import read_workload

    catalog, rules = load(catalog_file, rules_files)
    workload, name, data = read_workload(workload_file, known_ids(catalog))
    if raw is not None:
        raw.update(name=name, data=data)
    return workload, catalog, rules


def _plan_render(
    data: Any, fmt: str, verbose: bool = False, full: bool = False, section: str | None = None, context: Any = None
) -> str:
    from advisor.present.plan_text import plan_csv, plan_text

    if fmt == "csv":
        return plan_csv(data)
    return plan_text(
        data, fmt, verbose=verbose, full=full or verbose or fmt == "markdown", section=section, context=context
    )


def _section(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--section NAME, refused with every close name (exit 2)."""
    from advisor.present.sections import NAMES

    if value is None or value in NAMES:
        return value
    from advisor.errors import suggest

    raise click.BadParameter(f"{value!r} is not a section{suggest(value, NAMES)}; sections: {', '.join(NAMES)}")


@main.command()
@workload_argument
@format_option("table", "json", "csv", "markdown")
@click.option(
    "--objective",
    type=click.Choice(["cost", "time"]),
    default="cost",
    show_default=True,
    help="cost: the cheapest plan meeting every constraint; time: the shortest makespan within the budget.",
)
@click.option("--full", is_flag=True, help="Print every part of the plan, not the one-screen decision.")
@click.option(
    "--section",
    metavar="NAME",
    callback=_section,
    default=None,
    help="Print one part of the plan: summary, buy, costs, jobs, serving, constraints, sensitivity, "
    "robustness, decision, not-chosen, diagnosis, warnings or sources.",
)
@click.option("--verbose", is_flag=True, help="Every part (as --full), with every reason each GPU was not chosen.")
@click.option(
    "--gap",
    type=click.FloatRange(min=0, max=0.5),
    default=None,
    help="Relative MIP gap the optimum is proven within [0.0001; 0.01 for fleets of 50+ jobs].",
)
@time_limit_option
@catalog_option
@rules_option
@as_of_option
@handled
def plan(
    workload_file: str,
    fmt: str,
    objective: str,
    full: bool,
    section: str | None,
    verbose: bool,
    gap: float | None,
    time_limit: float,
    catalog_file: str | None,
    rules_files: tuple[str, ...],
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """Choose the cheapest GPUs to buy or rent for WORKLOAD_FILE (`-` for standard input): its
    training jobs and its serving jobs; and explain the choice.

    \b
    Examples:
      advisor plan examples/article-office.yaml
      advisor plan examples/article-datacenter.yaml --format json
      advisor plan my.yaml --catalog quotes.yaml --as-of 2026-06-30
      advisor plan examples/team-fleet.yaml --section not-chosen
      cat my.yaml | advisor plan - --format csv

    The table format prints the decision on one screen: what to buy or rent, the cost in cash and
    present value, the time, what binds, the top sensitivities, robustness and the best of each GPU
    family not chosen; --full prints every part, --section NAME one. markdown prints the whole plan;
    csv the bill of materials (one row per GPU or server bought or rented). Exit status: 0 a plan
    was found, 2 the input is invalid, 3 no plan meets every constraint.
    """
    from advisor.flow import plan as make_plan

    workload, catalog, rules = workload_inputs(workload_file, catalog_file, rules_files)
    with working("solving"):
        result = make_plan(
            workload, catalog=catalog, rules=rules, as_of=as_of, objective=objective, time_limit=time_limit, gap=gap
        )
    from advisor.report import plan_context

    context = plan_context(result.problem) if result.problem is not None else None
    emit(result, fmt, lambda data, f: _plan_render(data, f, verbose, full, section, context))
    if not result.feasible:
        sys.exit(3)


@main.command()
@workload_argument
@format_option("table", "json", "csv", "markdown")
@click.option(
    "--points",
    type=click.IntRange(min=2, max=200),
    default=24,
    show_default=True,
    help="Makespan caps to try (sampled from the candidates' wall times).",
)
@time_limit_option
@catalog_option
@rules_option
@as_of_option
@handled
def frontier(
    workload_file: str,
    fmt: str,
    points: int,
    time_limit: float,
    catalog_file: str | None,
    rules_files: tuple[str, ...],
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """The cost-versus-time Pareto front of WORKLOAD_FILE: for each makespan, the cheapest plan.

    \b
    Examples:
      advisor frontier examples/article-office.yaml
      advisor frontier examples/article-datacenter.yaml --format json
    """
    from advisor.flow import pareto
    from advisor.present.tables import frontier_text

    workload, catalog, rules = workload_inputs(workload_file, catalog_file, rules_files)
    with working("sweeping completion times"):
        result = pareto(workload, catalog=catalog, rules=rules, as_of=as_of, points=points, time_limit=time_limit)
    emit(result, fmt, frontier_text)
    if not result["points"]:
        sys.exit(3)


@main.command()
@workload_argument
@format_option("table", "json")
@catalog_option
@rules_option
@as_of_option
@handled
def validate(
    workload_file: str,
    fmt: str,
    catalog_file: str | None,
    rules_files: tuple[str, ...],
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """Check WORKLOAD_FILE without solving: every check `advisor plan` makes before it solves (every
    mistake at once, each with its line and column, its location as written, the value given and
    what is allowed; GPU ids and presets against the catalog; the workload's size; the options built
    for every job, on --as-of's date).

    \b
    Examples:
      advisor validate my.yaml
      advisor validate my.yaml --catalog quotes.yaml
      advisor validate my.yaml --format json     # {"valid": ..., "errors": [{file, line, column, path, ...}]}

    Exit status: 0 valid, 2 invalid.
    """
    import json

    from advisor.cli.base import workload_place
    from advisor.errors import InputError
    from advisor.flow import prepare

    name = "<stdin>" if workload_file == "-" else workload_file
    try:
        workload, catalog, rules = workload_inputs(workload_file, catalog_file, rules_files)
        with working("checking", collect=False):
            prepare(
                workload, catalog, rules, as_of
            )  # resolves GPU ids and presets, builds every option; solves nothing
    except InputError as exc:
        if fmt != "json":
            raise
        place = workload_place(workload_file)
        errors = [e.in_file(*place) if e.field != "catalog_file" else e for e in exc.errors]
        click.echo(
            json.dumps(
                {"file": name, "valid": False, "errors": [e.to_dict() for e in errors]}, indent=2, ensure_ascii=False
            )
        )
        sys.exit(2)
    jobs = sum(j.repeat for j in workload.jobs)
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "file": name,
                    "valid": True,
                    "jobs": jobs,
                    "deployment": workload.deployment.context,
                    "region": workload.deployment.region,
                    "errors": [],
                },
                indent=2,
            )
        )
        return
    click.echo(
        f"{name}: valid ({jobs} job{'s' if jobs != 1 else ''}, {workload.deployment.context}, "
        f"region {workload.deployment.region})."
    )


@main.command()
@click.argument("file", required=False, default="workload.yaml", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--serve", is_flag=True, help="A serving job (traffic and latency limits) instead of a training job.")
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
@handled
def init(file: str, serve: bool, force: bool, debug: bool) -> None:
    """Write a starter workload to FILE [workload.yaml] (`-`: standard output): one training job, or
    with --serve one serving job, every field commented. It validates and plans as written.

    \b
    Examples:
      advisor init
      advisor init chat.yaml --serve
      advisor init - --serve | advisor plan -
    """
    from advisor.inputs.starter import starter

    text = starter(serve, "workload.yaml" if file == "-" else file)
    if file == "-":
        click.echo(text, nl=False)
        return
    check_output(file, force)
    write_file(file, text)  # atomic; a link is replaced, never written through
    click.echo(f"wrote {file}; next: advisor validate {file}, then advisor plan {file}")


@main.command()
@click.option(
    "--output",
    "what",
    type=click.Choice(["workload", "plan"]),
    default="workload",
    show_default=True,
    help="workload: what users may write (shorthand included); plan: the JSON a plan prints.",
)
@catalog_option
@handled
def schema(what: str, catalog_file: str | None, debug: bool) -> None:
    """Print the JSON Schema of workload files (or, with --output plan, of `plan --format json`),
    for editor autocompletion and checks.

    GPU ids and model presets are listed from the catalog (--catalog adds yours).

    \b
    Examples:
      advisor schema > workload.schema.json
      advisor schema --catalog quotes.yaml > workload.schema.json
      advisor schema --output plan > plan.schema.json
    """
    import json

    from advisor.inputs.schema import workload_schema

    catalog, _ = load(catalog_file)
    if what == "plan":
        from advisor.contract import plan_schema

        doc = plan_schema()
    else:
        doc = workload_schema(gpus=sorted(catalog.gpus), presets=sorted(catalog.models) + sorted(catalog.model_aliases))
    click.echo(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False))
