"""The data commands: `advisor catalog list|show|validate`, `advisor rules list|show|validate`."""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from advisor.cli.base import (
    as_of_option,
    catalog_option,
    complete_gpus,
    emit,
    format_option,
    handled,
    load,
    main,
    rules_option,
    today,
)


@main.group("catalog")
def catalog_group() -> None:
    """The catalog: GPUs, servers and prices, every figure with its source.

    \b
    Examples:
      advisor catalog list
      advisor catalog show h100-sxm
      advisor catalog validate quotes.yaml

    --catalog FILE merges FILE over the built-in catalog on every command: mappings merge key by
    key, lists (a GPU's rental offers, a source list) replace. See catalog/README.md.
    """


@catalog_group.command("list")
@click.argument("name", required=False)
@click.option("--vendor", default=None, help="Only this vendor (NVIDIA, AMD, Intel).")
@click.option(
    "--min-memory",
    type=click.FloatRange(min=0),
    default=None,
    metavar="GB",
    help="Only GPUs with at least this much memory.",
)
@click.option("--buyable", is_flag=True, help="Only GPUs with a sourced purchase price.")
@click.option("--rentable", is_flag=True, help="Only GPUs with a sourced rental rate.")
@click.option(
    "--sort",
    type=click.Choice(["id", "memory", "tflops", "price", "rent"]),
    default="id",
    show_default=True,
    help="Order of the GPUs (memory and tflops: largest first; prices: cheapest first).",
)
@format_option("table", "json", "csv", "markdown")
@catalog_option
@as_of_option
@handled
def catalog_list(
    name: str | None,
    vendor: str | None,
    min_memory: float | None,
    buyable: bool,
    rentable: bool,
    sort: str,
    fmt: str,
    catalog_file: str | None,
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """Every GPU (whose id or name contains NAME) and the servers they go into, with prices and
    their ages (against --as-of, default today).

    \b
    Examples:
      advisor catalog list
      advisor catalog list a100
      advisor catalog list --vendor AMD --min-memory 128 --sort price
      advisor catalog list --rentable --sort rent --format csv
      advisor catalog list --format json --as-of 2026-06-30
    """
    from advisor.data.catalog_view import listing, select
    from advisor.present.listings import catalog_list_text

    catalog, _ = load(catalog_file)
    data = select(
        listing(catalog, today(as_of)),
        name=name,
        vendor=vendor,
        min_memory=min_memory,
        buyable=buyable,
        rentable=rentable,
        sort=sort,
    )
    emit(data, fmt, catalog_list_text)


@catalog_group.command("show")
@click.argument("item_id", metavar="ID", shell_complete=complete_gpus)
@format_option("table", "json")
@catalog_option
@as_of_option
@handled
def catalog_show(item_id: str, fmt: str, catalog_file: str | None, as_of: dt.date | None, debug: bool) -> None:
    """Every figure of one GPU or server with its sources and their URLs; whether a GPU can be
    bought, rented or both; price ages.

    \b
    Examples:
      advisor catalog show rtx-4090
      advisor catalog show hgx-h100-8gpu --format json

    Exit status: 0 shown, 2 unknown ID or invalid --catalog file.
    """
    from advisor.data.catalog_view import record
    from advisor.present.listings import catalog_show_text

    catalog, _ = load(catalog_file)
    emit(record(catalog, item_id, today(as_of)), fmt, lambda data, _: catalog_show_text(data))


@catalog_group.command("validate")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@format_option("table", "json")
@catalog_option
@handled
def catalog_validate(file: str | None, fmt: str, catalog_file: str | None, debug: bool) -> None:
    """Check the built-in catalog, or FILE merged over it: schema, units, dates, and that every
    source id resolves. Exit status 0 valid, 2 invalid (naming file, entry and field).

    \b
    Examples:
      advisor catalog validate
      advisor catalog validate quotes.yaml
    """
    from advisor.data.catalog_summary import summary
    from advisor.present.listings import catalog_validate_text

    if file and catalog_file and file != catalog_file:
        raise click.UsageError("give the file to validate as FILE or as --catalog, not both")
    path = file or catalog_file
    catalog, _ = load(path)
    emit(summary(catalog, path or "built-in catalog"), fmt, lambda data, _: catalog_validate_text(data))


@main.group("rules")
def rules_group() -> None:
    """The rules every plan applies: licences, export controls, deployment, power, interconnect.

    Each rule has a code (LIC001), a severity (forbid: the option is removed; warn: kept, with a
    warning; limit: a deployment-wide bound such as PWR001's office power), a condition over the
    GPU, the deployment, the offer and the job, why it exists and its source. Rules are data
    (rules/*.yaml); --rules FILE adds an organisation's own (see examples/rules/).

    \b
    Examples:
      advisor rules list
      advisor rules show EXP001
      advisor rules list --rules examples/rules/no-amd.yaml --format json
    """


@rules_group.command("list")
@format_option("table", "json", "csv", "markdown")
@rules_option
@as_of_option
@handled
def rules_list(fmt: str, rules_files: tuple[str, ...], as_of: dt.date | None, debug: bool) -> None:
    """Every rule with its severity, whether it is in force (as of --as-of, default today) and its title.

    \b
    Examples:
      advisor rules list
      advisor rules list --as-of 2025-01-01 --format json
    """
    from advisor.present.listings import rules_list_text

    _, rules = load(None, rules_files)
    day = today(as_of)
    emit({"as_of": day.isoformat(), "rules": rules.listing(day)}, fmt, rules_list_text)


@rules_group.command("show")
@click.argument("rule_id", metavar="ID")
@format_option("table", "json")
@rules_option
@as_of_option
@handled
def rules_show(rule_id: str, fmt: str, rules_files: tuple[str, ...], as_of: dt.date | None, debug: bool) -> None:
    """What rule ID does, why, an example, and its source with the clause quoted (like `ruff rule`).

    \b
    Examples:
      advisor rules show LIC001
      advisor rules show EXP001 --format json

    Exit status: 0 shown, 2 unknown ID or invalid --rules file.
    """
    from advisor.present.listings import rules_show_text

    _, rules = load(None, rules_files)
    emit(rules.record(rules.get(rule_id), today(as_of)), fmt, lambda data, _: rules_show_text(data))


@rules_group.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@catalog_option
@as_of_option
@handled
def rules_validate(files: tuple[str, ...], catalog_file: str | None, as_of: dt.date | None, debug: bool) -> None:
    """Check rules FILES (an organisation's own) against the rule format and the built-in rules:
    every field and operator known, ids unique, each rule's runnable example run (its workload
    planned with these rules and --catalog, or its context evaluated) and showing what it says.

    \b
    Examples:
      advisor rules validate examples/rules/no-amd.yaml
      advisor rules validate policy.yaml approved-vendors.yaml

    Exit status: 0 valid, 2 invalid (naming the file, the rule and the field).
    """
    from advisor.rule_examples import check_examples

    catalog, rules = load(catalog_file, files)
    day = today(as_of)
    mine = check_examples(rules, [str(f) for f in files], catalog, day)
    click.echo(
        f"{', '.join(files)}: valid; {len(mine)} rule{'s' if len(mine) != 1 else ''} "
        f"({', '.join(mine) or 'none'}) beside the built-in ones."
    )


@main.command()
@click.argument("runs_file", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="The estimator override to write (YAML), for --catalog.",
)
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
@format_option("table", "json")
@catalog_option
@handled
def calibrate(runs_file: str, output: str, force: bool, fmt: str, catalog_file: str | None, debug: bool) -> None:
    """Fit your own estimator to RUNS_FILE, a CSV of your measured training runs, and write it as a
    catalog override; print the fit and its leave-one-out error (each run predicted by the fit to
    the others).

    \b
    Examples:
      advisor calibrate my-runs.csv -o my-estimator.yaml
      advisor plan my-workload.yaml --catalog my-estimator.yaml

    RUNS_FILE columns: gpu, count, tokens_per_s (over all GPUs) or tokens_per_s_per_gpu; model (a
    preset) or params, layers, hidden, heads (kv_heads, ffn, vocab, seq_len, tied_embeddings);
    optional precision, global_batch_tokens, micro_batch, checkpointing, strategy, tensor_parallel,
    pipeline_parallel, tp_overlap, fp8_param_gather and fp8_tp_gather (ZeRO's and TP's all-gathers in
    fp8), selective_ac (op: torchtitan's per-op checkpointing) or
    recompute_fraction, grad_reduce_bytes (4: gradients reduced in fp32). A run that gives strategy, tensor_parallel, pipeline_parallel, micro_batch and
    checkpointing is timed in that layout, with the memory check lifted if the memory model cannot hold
    it (the output says so per run); a run without them that no layout fits is refused.
    Exit status: 0 written, 2 invalid input.
    """
    from pathlib import Path

    import yaml

    from advisor.cli.base import check_output, write_file
    from advisor.perf.calibrate import calibrate as fit_runs

    check_output(output, force)
    catalog, _ = load(catalog_file)
    result = fit_runs(runs_file, catalog)
    head = (
        f"# Estimator override fitted by `advisor calibrate {Path(runs_file).name}` to {result['runs']} runs;\n"
        f"# leave-one-out MAPE {_percent(result['mape_leave_one_out'])}. Use it with --catalog.\n"
    )
    write_file(output, head + yaml.safe_dump(result["override"], sort_keys=True))
    emit(result, fmt, _calibrate_text)
    if fmt != "json":
        click.echo(f"wrote {output}")


def _calibrate_text(data: dict[str, Any], fmt: str) -> str:
    from advisor.perf.measured_rule import speed_text

    lines = [
        f"{data['runs']} runs; framework efficiency x "
        + ", ".join(f"{k} {v:.3f} ({data['groups'][k]} runs)" for k, v in data["scale"].items()),
        f"MAPE in-sample {_percent(data['mape_in_sample'])}, leave-one-out {_percent(data['mape_leave_one_out'])}",
        "",
        "line  GPU x count            measured tok/s   in-sample  leave-one-out",
    ]
    for e in data["errors"]:
        lifted = "  timed in its stated layout, memory check lifted" if e.get("memory_check_lifted") else ""
        lines.append(
            f"{e['line']:>4}  {e['gpu'] + ' x ' + str(e['count']):<22} {speed_text(e['measured']):>14}   "
            f"{_percent(e['in_sample'], '+'):>9}  {_percent(e['leave_one_out'], '+'):>9}{lifted}"
        )
    if any(e.get("memory_check_lifted") for e in data["errors"]):
        lines += [
            "",
            "memory check lifted: the run states its layout in full and ran in it; the memory model cannot hold it",
        ]
    return "\n".join(lines) + "\n"


def _percent(x: float | None, sign: str = "") -> str:
    """0.093 -> '9.3%' ('+9.3%' with sign '+'); None (leave-one-out of a single run) -> 'n/a'."""
    return "n/a" if x is None else f"{100 * x:{sign}.1f}%"
