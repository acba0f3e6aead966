"""Commands that set GPUs against each other for a model: compare (the article's table, for any model
and GPUs) and crossover (the model size where the RTX 4090 stops being the cheapest)."""

from __future__ import annotations

import datetime as dt

import click

from advisor.cli.base import (
    as_of_option,
    catalog_option,
    check_output,
    complete_gpus,
    emit,
    format_option,
    handled,
    load,
    main,
    rules_option,
    shape_options,
    working,
    write_file,
)
from advisor.inputs.arguments import (
    MAX_GPU_COUNT,
)


def _prices(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, float]:
    """--price GPU=USD, repeatable, as {gpu: usd}; anything else is refused naming the flag."""
    from advisor.inputs.quantities import usd_amount  # pydantic: not imported by `advisor -V`

    out: dict[str, float] = {}
    given: dict[str, str] = {}
    for item in values:
        gid, sep, usd = item.partition("=")
        if gid.strip() in given:  # one price per GPU, as a workload file's keys: never the last silently
            raise click.BadParameter(f"{gid.strip()} is priced twice ({given[gid.strip()]!r} and {item!r}); give one")
        given[gid.strip()] = item
        try:
            value = usd_amount(usd, "--price") if sep else None
        except ValueError:  # units' message; the flag's own words follow
            value = None
        if not gid or value is None or not 0 < value < float("inf"):
            raise click.BadParameter(f"{item!r}: write GPU=USD, e.g. --price rtx-4090=1749 or rtx-4090=1.7K")
        out[gid.strip()] = value
    return out


@main.command()
@click.argument("gpus", nargs=-1, shell_complete=complete_gpus)
@click.option("--model", "preset", default=None, help="Model preset, e.g. gpt2-124m (default when no --params).")
@click.option("--params", default=None, help="Parameter count instead of a preset, e.g. 7B.")
@shape_options
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp8"]), default="bf16", show_default=True)
@click.option(
    "--price",
    "prices",
    multiple=True,
    callback=_prices,
    metavar="GPU=USD",
    help="Override a purchase price, e.g. --price rtx-4090=1749 (repeatable).",
)
@click.option(
    "--deployment",
    type=click.Choice(["office", "datacenter", "cloud"]),
    default=None,
    help="Also show which rules allow each GPU there.",
)
@click.option("--region", default="US", show_default=True, help="ISO country code for export rules.")
@format_option("table", "json", "csv", "markdown")
@catalog_option
@rules_option
@as_of_option
@handled
def compare(
    gpus: tuple[str, ...],
    preset: str | None,
    params: str | None,
    layers: int | None,
    hidden: int | None,
    seq_len: int | None,
    vocab: int | None,
    tied_embeddings: bool | None,
    precision: str,
    prices: dict[str, float],
    deployment: str | None,
    region: str,
    fmt: str,
    catalog_file: str | None,
    rules_files: tuple[str, ...],
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """Compare GPUs for one model: price, TFLOPs, memory, links, tokens/s and tokens/s per $1,000.

    The first GPU is the reference for the price and speed ratios. With no GPU named, the article's
    three: rtx-4090 a100-80gb-sxm h100-sxm. For GPT-2 124M on those GPUs the article's own claims are
    shown beside the estimates.

    \b
    Examples:
      advisor compare --model gpt2-124m
      advisor compare rtx-4090 h100-sxm --params 7B --layers 32 --hidden 4096 --format json
      advisor compare rtx-4090 a100-80gb-sxm --price a100-80gb-sxm=20000 --deployment datacenter
    """
    from advisor.api import compare as run_compare
    from advisor.comparisons import article_gpus
    from advisor.present.tables import compare_text

    catalog, rules = load(catalog_file, rules_files)
    with working("estimating", collect=False):
        result = run_compare(
            list(gpus) or article_gpus(),
            model=preset,
            params=params,
            layers=layers,
            hidden=hidden,
            seq_len=seq_len,
            vocab=vocab,
            tied_embeddings=tied_embeddings,
            precision=precision,
            prices=prices,
            deployment=deployment,
            region=region.upper(),
            catalog=catalog,
            rules=rules,
            as_of=as_of,
        )
    emit(result, fmt, compare_text)


@main.command()
@click.option("--tokens", default="10B", show_default=True, help="Token budget of every model in the sweep.")
@click.option("--max-gpus", type=click.IntRange(1, MAX_GPU_COUNT), default=8, show_default=True)
@click.option(
    "--gpu",
    "gpus",
    multiple=True,
    help="GPUs to choose among [rtx-4090, a100-80gb-sxm, h100-sxm, a100-80gb-pcie, h100-pcie].",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    help="Model presets to sweep [the article's 12, GPT-2 124M to Llama 3.1 405B, by size].",
)
@click.option("--deployment", type=click.Choice(["office", "datacenter", "cloud"]), default="office", show_default=True)
@click.option("--ownership", type=click.Choice(["buy", "rent", "any"]), default="buy", show_default=True)
@click.option("--deadline", default=None, help="Deadline for every model, e.g. 30d.")
@click.option("--focus", default="rtx-4090", show_default=True, help="The GPU whose crossover is explained.")
@format_option("table", "json", "markdown")
@click.option(
    "--chart",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.svg",
    help="Also draw cost against model size, with the crossover marked, as an SVG file.",
)
@catalog_option
@rules_option
@as_of_option
@handled
def crossover(
    tokens: str,
    max_gpus: int,
    gpus: tuple[str, ...],
    models: tuple[str, ...],
    deployment: str,
    ownership: str,
    deadline: str | None,
    focus: str,
    fmt: str,
    chart: str | None,
    catalog_file: str | None,
    rules_files: tuple[str, ...],
    as_of: dt.date | None,
    debug: bool,
) -> None:
    """Where the RTX 4090 stops being the cheapest way to train as models grow, and why.

    For each model size: the cheapest plan among the GPUs, and for the focus GPU its cost or
    the factor that rules it out: the article's memory size, memory bandwidth or GPU-to-GPU
    bandwidth, or a licence, power, slots, time, price, or its speed evidence (a datasheet
    derating, a hold to published MFU).

    \b
    Examples:
      advisor crossover
      advisor crossover --chart crossover.svg
      advisor crossover --tokens 50B --max-gpus 16 --deadline 30d --format markdown
    """
    from advisor.api import crossover as run_crossover
    from advisor.present.tables import crossover_text

    check_output(chart, force=True)  # a chart is replaced (never written through a link: write_file)
    catalog, rules = load(catalog_file, rules_files)
    with working("solving"):
        result = run_crossover(
            tokens=tokens,
            max_gpus=max_gpus,
            gpus=list(gpus) or None,
            models=list(models) or None,
            deployment=deployment,
            ownership=ownership,
            deadline=deadline,
            focus=focus,
            catalog=catalog,
            rules=rules,
            as_of=as_of,
        )
    emit(result, fmt, crossover_text)
    if chart:
        from advisor.present.charts import crossover_svg

        write_file(chart, crossover_svg(result))
        click.echo(f"wrote {chart}", err=True)
