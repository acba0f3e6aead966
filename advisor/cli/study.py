"""Commands about one job or a few GPUs: estimate, compare, crossover, models."""
from __future__ import annotations

import datetime as dt
import sys
from typing import Any

import click

from advisor.cli.base import (
    as_of_option,
    catalog_option,
    check_output,
    complete_gpus,
    complete_presets,
    emit,
    format_option,
    handled,
    load,
    main,
    rules_option,
    working,
    write_file,
)
from advisor.inputs.arguments import (
    EXPERTS,
    FFN,
    HEADS,
    HIDDEN,
    LAYERS,
    LORA_RANK,
    MAX_GPU_COUNT,
    MICRO_BATCH,
    PIPELINE_PARALLEL,
    REQUEST_TOKENS,
    SEQ_LEN,
    TENSOR_PARALLEL,
    VOCAB,
)


def shape_options(command: Any) -> Any:
    """The model-shape options `estimate` and `compare` share (with --params instead of a preset)."""
    for option in reversed((
        click.option("--layers", type=click.IntRange(*LAYERS), default=None),
        click.option("--hidden", type=click.IntRange(*HIDDEN), default=None),
        click.option("--seq-len", type=click.IntRange(*SEQ_LEN), default=None),
        click.option("--vocab", type=click.IntRange(*VOCAB), default=None, help="Vocabulary size with --params [50257]."),
        click.option("--tied-embeddings/--untied-embeddings", "tied_embeddings", default=None,
                     help="Output head shares the input embedding, with --params [inferred from params, layers, hidden]."),
    )):
        command = option(command)
    return command


@main.command()
@click.option("--model", "preset", default=None, help="Model preset (see `advisor models`), e.g. gpt2-124m.",
              shell_complete=complete_presets)
@click.option("--params", default=None, help="Parameter count, e.g. 124M or 7B (instead of --model).")
@shape_options
@click.option("--ffn", type=click.IntRange(*FFN), default=None, help="MLP width with --params [4 x hidden].")
@click.option("--gpu", default=None, help="GPU id, e.g. a100-80gb-sxm (see `advisor catalog list`). Required.",
              shell_complete=complete_gpus)
@click.option("--count", type=click.IntRange(1, MAX_GPU_COUNT), default=1, show_default=True)
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp8", "fp4", "int8", "int4"]), default="bf16",
              show_default=True, help="fp4/int8/int4 with --kind serve only (int8/int4: weight-only).")
@click.option("--kind", type=click.Choice(["pretrain", "finetune", "lora", "qlora", "serve"]), default="pretrain",
              show_default=True)
@click.option("--heads", type=click.IntRange(*HEADS), default=None, help="Attention heads, with --params [hidden / 128].")
@click.option("--kv-heads", type=click.IntRange(*HEADS), default=None, help="Key/value heads (GQA) [--heads].")
@click.option("--experts", type=click.IntRange(*EXPERTS), default=None, help="Routed experts (MoE; with --active-params).")
@click.option("--active-params", default=None, help="Parameters one token multiplies through (MoE), e.g. 13B.")
@click.option("--input-len", type=click.IntRange(*REQUEST_TOKENS), default=None, help="Prompt tokens per request (--kind serve).")
@click.option("--output-len", type=click.IntRange(*REQUEST_TOKENS), default=None, help="Output tokens per request (--kind serve).")
@click.option("--ttft-ms", type=float, default=None, help="Time-to-first-token limit, ms [none: offline peak].")
@click.option("--tpot-ms", type=float, default=None, help="Time-per-output-token limit, ms [none].")
@click.option("--percentile", type=float, default=99, show_default=True, help="Percentile the limits hold at.")
@click.option("--list-models", is_flag=True, help="With --kind serve: list the serving presets, shapes and sources.")
@click.option("--micro-batch", type=click.IntRange(*MICRO_BATCH), default=None, help="Per-GPU micro-batch [chosen].")
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing [chosen].")
@click.option("--global-batch-tokens", default=None, help="Tokens per optimizer step, e.g. 524288 or 4M.")
@click.option("--optimizer", type=click.Choice(["adamw", "adamw-8bit"]), default="adamw", show_default=True)
@click.option("--lora-rank", type=click.IntRange(*LORA_RANK), default=16, show_default=True,
              help="Adapter rank with --kind lora or qlora.")
@click.option("--strategy", type=click.Choice(["ddp", "zero1", "zero2", "zero3", "fsdp"]), default=None,
              help="Data-parallel sharding (fsdp = zero3) [chosen].")
@click.option("--tensor-parallel", type=click.IntRange(*TENSOR_PARALLEL), default=None,
              help="Tensor parallelism [chosen].")
@click.option("--pipeline-parallel", type=click.IntRange(*PIPELINE_PARALLEL), default=None,
              help="Pipeline parallelism [chosen].")
@format_option("table", "json")
@catalog_option
@handled
def estimate(preset: str | None, params: str | None, layers: int | None, hidden: int | None, seq_len: int | None,
             vocab: int | None, tied_embeddings: bool | None, ffn: int | None, gpu: str | None, count: int,
             precision: str, kind: str, heads: int | None, kv_heads: int | None, experts: int | None,
             active_params: str | None, input_len: int | None, output_len: int | None, ttft_ms: float | None,
             tpot_ms: float | None, percentile: float, list_models: bool, micro_batch: int | None,
             checkpointing: bool | None, global_batch_tokens: str | None, optimizer: str, lora_rank: int,
             strategy: str | None, tensor_parallel: int | None, pipeline_parallel: int | None,
             fmt: str, catalog_file: str | None, debug: bool) -> None:
    """Memory and tokens/s of one training job on COUNT GPUs of one type, in the fastest layout
    that fits (or the one --strategy/--tensor-parallel/--pipeline-parallel fix); with --kind serve,
    the requests/s and latencies of serving a model on them.

    \b
    Examples:
      advisor estimate --model gpt2-124m --gpu rtx-4090
      advisor estimate --params 124M --seq-len 1024 --gpu a100-80gb-sxm --count 8 --format json
      advisor estimate --model llama-3-8b --kind lora --gpu rtx-4090 --seq-len 2048
      advisor estimate --model llama-3-70b --gpu h100-sxm --count 64 --tensor-parallel 8
      advisor estimate --kind serve --model llama-3.3-70b --gpu b200 --precision fp4 --input-len 1000
        --output-len 1000 --ttft-ms 2000 --tpot-ms 200 --format json

    Exit status: 0 the job runs, 2 invalid input, 3 it does not fit on COUNT GPUs (the output says
    why and the fewest that fit).
    """
    from advisor.errors import InputError

    if kind == "serve":
        from advisor.api import estimate as run_estimate

        with working("estimating", collect=False):
            served = run_estimate(kind="serve", model=preset, params=params, layers=layers, hidden=hidden, heads=heads,
                                      kv_heads=kv_heads, experts=experts, active_params=active_params, gpu=gpu,
                                      count=count, precision=precision, input_len=input_len, output_len=output_len,
                                      ttft_ms=ttft_ms, tpot_ms=tpot_ms, percentile=percentile,
                                      tensor_parallel=tensor_parallel, catalog=catalog_file, list_models=list_models)
        emit(served, fmt, _serve_render)
        if "models" not in served and not served["fits"]:
            sys.exit(3)
        return
    if precision in ("fp4", "int8", "int4"):
        raise InputError(f"--precision {precision} is a serving precision; training takes bf16, fp16 or fp8 "
                         "(add --kind serve to estimate serving)", field="precision")
    from advisor.api import estimate as run_estimate

    with working("estimating", collect=False):
        result = run_estimate(model=preset, params=params, layers=layers, hidden=hidden, seq_len=seq_len, heads=heads,
                              kv_heads=kv_heads, ffn=ffn, vocab=vocab, tied_embeddings=tied_embeddings, gpu=gpu,
                              active_params=active_params, count=count, precision=precision, kind=kind, micro_batch=micro_batch,
                              checkpointing=checkpointing, global_batch_tokens=global_batch_tokens,
                              optimizer=optimizer, lora_rank=lora_rank, strategy=strategy,
                              tensor_parallel=tensor_parallel, pipeline_parallel=pipeline_parallel,
                              catalog=catalog_file)
    emit(result, fmt, _estimate_render)
    if not result["fits"]:
        sys.exit(3)


def _serve_render(data: dict[str, Any], fmt: str) -> str:
    from advisor.present.tables import serve_estimate_text
    return serve_estimate_text(data)


def _estimate_render(data: dict[str, Any], fmt: str) -> str:
    from advisor.present.tables import estimate_text
    return estimate_text(data)


def _prices(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for item in values:
        gid, sep, usd = item.partition("=")
        try:
            value = float(usd.replace(",", "").replace("$", "")) if sep else None
        except ValueError:
            value = None
        if not gid or value is None or not value > 0 or value == float("inf"):
            raise click.BadParameter(f"{item!r}: write GPU=USD, e.g. --price rtx-4090=1749")
        out[gid.strip()] = value
    return out


@main.command()
@click.argument("gpus", nargs=-1, required=True, shell_complete=complete_gpus)
@click.option("--model", "preset", default=None, help="Model preset, e.g. gpt2-124m (default when no --params).")
@click.option("--params", default=None, help="Parameter count instead of a preset, e.g. 7B.")
@shape_options
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp8"]), default="bf16", show_default=True)
@click.option("--price", "prices", multiple=True, callback=_prices, metavar="GPU=USD",
              help="Override a purchase price, e.g. --price rtx-4090=1749 (repeatable).")
@click.option("--deployment", type=click.Choice(["office", "datacenter", "cloud"]), default=None,
              help="Also show which rules allow each GPU there.")
@click.option("--region", default="US", show_default=True, help="ISO country code for export rules.")
@format_option("table", "json", "csv", "markdown")
@catalog_option
@rules_option
@as_of_option
@handled
def compare(gpus: tuple[str, ...], preset: str | None, params: str | None, layers: int | None, hidden: int | None,
            seq_len: int | None, vocab: int | None, tied_embeddings: bool | None, precision: str,
            prices: dict[str, float], deployment: str | None, region: str, fmt: str, catalog_file: str | None,
            rules_files: tuple[str, ...], as_of: dt.date | None, debug: bool) -> None:
    """Compare GPUs for one model: price, TFLOPs, memory, links, tokens/s and tokens/s per $1,000.

    The first GPU is the reference for the price and speed ratios. For GPT-2 124M on the
    article's three GPUs the article's own claims are shown beside the estimates.

    \b
    Examples:
      advisor compare rtx-4090 a100-80gb-sxm h100-sxm --model gpt2-124m
      advisor compare rtx-4090 h100-sxm --params 7B --layers 32 --hidden 4096 --format json
      advisor compare rtx-4090 a100-80gb-sxm --price a100-80gb-sxm=20000 --deployment datacenter
    """
    from advisor.api import compare as run_compare
    from advisor.present.tables import compare_text

    catalog, rules = load(catalog_file, rules_files)
    if preset is None and params is None:
        preset = "gpt2-124m"
    with working("estimating", collect=False):
        result = run_compare(list(gpus), model=preset, params=params, layers=layers, hidden=hidden,
                             seq_len=seq_len, vocab=vocab, tied_embeddings=tied_embeddings, precision=precision,
                             prices=prices, deployment=deployment, region=region.upper(), catalog=catalog,
                             rules=rules, as_of=as_of)
    emit(result, fmt, compare_text)


@main.command()
@click.option("--tokens", default="10B", show_default=True, help="Token budget of every model in the sweep.")
@click.option("--max-gpus", type=click.IntRange(1, MAX_GPU_COUNT), default=8, show_default=True)
@click.option("--gpu", "gpus", multiple=True,
              help="GPUs to choose among [rtx-4090, a100-80gb-sxm, h100-sxm, a100-80gb-pcie, h100-pcie].")
@click.option("--model", "models", multiple=True, help="Model presets to sweep [the article's 12, GPT-2 124M to Llama 3.1 405B, by size].")
@click.option("--deployment", type=click.Choice(["office", "datacenter", "cloud"]), default="office", show_default=True)
@click.option("--ownership", type=click.Choice(["buy", "rent", "any"]), default="buy", show_default=True)
@click.option("--deadline", default=None, help="Deadline for every model, e.g. 30d.")
@click.option("--focus", default="rtx-4090", show_default=True, help="The GPU whose crossover is explained.")
@format_option("table", "json", "markdown")
@click.option("--chart", type=click.Path(dir_okay=False), default=None, metavar="FILE.svg",
              help="Also draw cost against model size, with the crossover marked, as an SVG file.")
@catalog_option
@rules_option
@as_of_option
@handled
def crossover(tokens: str, max_gpus: int, gpus: tuple[str, ...], models: tuple[str, ...], deployment: str,
              ownership: str, deadline: str | None, focus: str, fmt: str, chart: str | None, catalog_file: str | None,
              rules_files: tuple[str, ...], as_of: dt.date | None, debug: bool) -> None:
    """Where the RTX 4090 stops being the cheapest way to train as models grow, and why.

    For each model size: the cheapest plan among the GPUs, and for the focus GPU its cost or
    the factor that rules it out (memory size, memory bandwidth or GPU-to-GPU bandwidth).

    \b
    Examples:
      advisor crossover
      advisor crossover --chart crossover.svg
      advisor crossover --tokens 50B --max-gpus 16 --deadline 30d --format markdown
    """
    from advisor.api import crossover as run_crossover
    from advisor.present.tables import crossover_text

    check_output(chart, force=True)   # a chart is replaced (never written through a link: write_file)
    catalog, rules = load(catalog_file, rules_files)
    with working("solving"):
        result = run_crossover(tokens=tokens, max_gpus=max_gpus, gpus=list(gpus) or None,
                               models=list(models) or None,
                               deployment=deployment, ownership=ownership, deadline=deadline, focus=focus,
                               catalog=catalog, rules=rules, as_of=as_of)
    emit(result, fmt, crossover_text)
    if chart:
        from advisor.present.charts import crossover_svg
        write_file(chart, crossover_svg(result))
        click.echo(f"wrote {chart}", err=True)


@main.group("models", invoke_without_command=True)
@click.pass_context
def models_group(ctx: click.Context) -> None:
    """Model presets (what `model: NAME` in a workload and `--model` mean), each usable for training
    and serving, with their shapes, serving figures, other names and sources.

    \b
    Examples:
      advisor models
      advisor models show llama-3.1-70b --format json
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(models_list)


@models_group.command("list")
@format_option("table", "json", "csv", "markdown")
@catalog_option
@handled
def models_list(fmt: str = "table", catalog_file: str | None = None, debug: bool = False) -> None:
    """Every preset: parameters, shape, sequence length and the sources of its figures."""
    from advisor.data.catalog_view import presets
    from advisor.present.listings import models_text

    catalog, _ = load(catalog_file)
    emit(presets(catalog), fmt, models_text)


@models_group.command("show")
@click.argument("preset", shell_complete=complete_presets)
@format_option("table", "json")
@catalog_option
@handled
def models_show(preset: str, fmt: str, catalog_file: str | None, debug: bool) -> None:
    """Every figure of one preset (by id or another name) and the sources it was read from.

    Exit status: 0 shown, 2 unknown preset.
    """
    from advisor.data.catalog_view import preset_view
    from advisor.errors import InputError
    from advisor.present.listings import models_text

    catalog, _ = load(catalog_file)
    try:
        found = preset_view(catalog, preset)
    except InputError as exc:
        raise InputError(str(exc), field="preset") from None
    emit(found, fmt, lambda rec, f: models_text({"models": [rec]}, "show"))
