"""Commands about one job or one model: estimate, models."""

from __future__ import annotations

import sys
from typing import Any

import click

from advisor.cli.base import (
    catalog_option,
    complete_gpus,
    complete_presets,
    emit,
    format_option,
    handled,
    load,
    main,
    shape_options,
    working,
)
from advisor.inputs.arguments import (
    EXPERTS,
    FFN,
    HEADS,
    LORA_RANK,
    MAX_GPU_COUNT,
    MICRO_BATCH,
    PIPELINE_PARALLEL,
    REQUEST_TOKENS,
    TENSOR_PARALLEL,
)


@main.command()
@click.option(
    "--model",
    "preset",
    default=None,
    help="Model preset (see `advisor models`), e.g. gpt2-124m.",
    shell_complete=complete_presets,
)
@click.option("--params", default=None, help="Parameter count, e.g. 124M or 7B (instead of --model).")
@shape_options
@click.option("--ffn", type=click.IntRange(*FFN), default=None, help="MLP width with --params [4 x hidden].")
@click.option(
    "--gpu",
    default=None,
    help="GPU id, e.g. a100-80gb-sxm (see `advisor catalog list`). Required.",
    shell_complete=complete_gpus,
)
@click.option("--count", type=click.IntRange(1, MAX_GPU_COUNT), default=1, show_default=True)
@click.option(
    "--precision",
    type=click.Choice(["bf16", "fp16", "fp8", "fp4", "int8", "int4"]),
    default="bf16",
    show_default=True,
    help="fp4/int8/int4 with --kind serve only (int8/int4: weight-only).",
)
@click.option(
    "--kind",
    type=click.Choice(["pretrain", "finetune", "lora", "qlora", "serve"]),
    default="pretrain",
    show_default=True,
)
@click.option(
    "--heads", type=click.IntRange(*HEADS), default=None, help="Attention heads, with --params [hidden / 128]."
)
@click.option("--kv-heads", type=click.IntRange(*HEADS), default=None, help="Key/value heads (GQA) [--heads].")
@click.option(
    "--experts", type=click.IntRange(*EXPERTS), default=None, help="Routed experts (MoE; with --active-params)."
)
@click.option("--active-params", default=None, help="Parameters one token multiplies through (MoE), e.g. 13B.")
@click.option(
    "--input-len", type=click.IntRange(*REQUEST_TOKENS), default=None, help="Prompt tokens per request (--kind serve)."
)
@click.option(
    "--output-len", type=click.IntRange(*REQUEST_TOKENS), default=None, help="Output tokens per request (--kind serve)."
)
@click.option("--ttft-ms", type=float, default=None, help="Time-to-first-token limit, ms [none: offline peak].")
@click.option("--tpot-ms", type=float, default=None, help="Time-per-output-token limit, ms [none].")
@click.option("--percentile", type=float, default=99, show_default=True, help="Percentile the limits hold at.")
@click.option("--list-models", is_flag=True, help="With --kind serve: list the serving presets, shapes and sources.")
@click.option("--micro-batch", type=click.IntRange(*MICRO_BATCH), default=None, help="Per-GPU micro-batch [chosen].")
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing [chosen].")
@click.option("--global-batch-tokens", default=None, help="Tokens per optimizer step, e.g. 524288 or 4M.")
@click.option("--optimizer", type=click.Choice(["adamw", "adamw-8bit"]), default="adamw", show_default=True)
@click.option(
    "--lora-rank",
    type=click.IntRange(*LORA_RANK),
    default=16,
    show_default=True,
    help="Adapter rank with --kind lora or qlora.",
)
@click.option(
    "--strategy",
    type=click.Choice(["ddp", "zero1", "zero2", "zero3", "fsdp"]),
    default=None,
    help="Data-parallel sharding (fsdp = zero3) [chosen].",
)
@click.option(
    "--tensor-parallel", type=click.IntRange(*TENSOR_PARALLEL), default=None, help="Tensor parallelism [chosen]."
)
@click.option(
    "--pipeline-parallel", type=click.IntRange(*PIPELINE_PARALLEL), default=None, help="Pipeline parallelism [chosen]."
)
@click.option(
    "--software",
    type=click.Choice(["public", "vendor_tuned"]),
    default="public",
    show_default=True,
    help="Training software the speed assumes: public (what a buyer installs) or vendor_tuned (the vendor's own "
    "tuned code, e.g. AMD's MLPerf containers). Changes an AMD Instinct speed only.",
)
@format_option("table", "json")
@catalog_option
@handled
def estimate(fmt: str, catalog_file: str | None, debug: bool, **flags: Any) -> None:
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
    # `flags`: the options above as click parsed them (--model arrives as `preset`); each kind reads its own
    flags = {"model": flags.pop("preset"), **flags, "catalog": catalog_file}
    _refuse_unread(SERVING_FLAGS if flags["kind"] == "serve" else TRAINING_FLAGS, flags["kind"])
    if flags["kind"] == "serve":
        _estimate_serving(flags, fmt)
    else:
        _estimate_training(flags, fmt)


# the keywords of advisor.estimate each kind of `advisor estimate` passes on (a flag of the other kind is refused)
SERVING_FLAGS = (
    "kind",
    "model",
    "params",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "experts",
    "active_params",
    "gpu",
    "count",
    "precision",
    "input_len",
    "output_len",
    "ttft_ms",
    "tpot_ms",
    "percentile",
    "tensor_parallel",
    "catalog",
    "list_models",
)
TRAINING_FLAGS = (
    "model",
    "params",
    "layers",
    "hidden",
    "seq_len",
    "heads",
    "kv_heads",
    "ffn",
    "vocab",
    "tied_embeddings",
    "gpu",
    "active_params",
    "count",
    "precision",
    "kind",
    "micro_batch",
    "checkpointing",
    "global_batch_tokens",
    "optimizer",
    "lora_rank",
    "strategy",
    "tensor_parallel",
    "pipeline_parallel",
    "software",
    "catalog",
)


def _refuse_unread(read: tuple[str, ...], kind: str) -> None:
    """A flag given on the command line that this kind of estimate does not read is an error naming
    it: `--experts 8` on a training estimate would otherwise answer as if it were not there."""
    from advisor.errors import InputError

    ctx = click.get_current_context()
    for p in ctx.command.params:
        name = "model" if p.name == "preset" else p.name
        if (
            name in SERVING_FLAGS + TRAINING_FLAGS
            and name not in read
            and p.name is not None
            and ctx.get_parameter_source(p.name) is click.core.ParameterSource.COMMANDLINE
        ):
            other = "training estimates (--kind pretrain, finetune, lora, qlora)" if kind == "serve" else "--kind serve"
            mine = "a serving" if kind == "serve" else f"a {kind}"
            raise InputError(f"{p.opts[0]} applies to {other} only; {mine} estimate does not read it", field=p.name)


def _estimate_serving(flags: dict[str, Any], fmt: str) -> None:
    """`advisor estimate --kind serve`: the serving estimate (or, with --list-models, the serving
    presets); exit 3 when the model does not fit on the GPUs, as for a training job."""
    from advisor.api import estimate as run_estimate

    with working("estimating", collect=False):
        served = run_estimate(**{name: flags[name] for name in SERVING_FLAGS})
    emit(served, fmt, _serve_render)
    if "models" not in served and not served["fits"]:
        sys.exit(3)


def _estimate_training(flags: dict[str, Any], fmt: str) -> None:
    """`advisor estimate` of a training job: a serving-only precision is refused here, naming --kind
    serve, before anything loads; exit 3 when the job does not fit."""
    from advisor.errors import InputError

    precision = flags["precision"]
    if precision in ("fp4", "int8", "int4"):
        raise InputError(
            f"--precision {precision} is a serving precision; training takes bf16, fp16 or fp8 "
            "(add --kind serve to estimate serving)",
            field="precision",
        )
    from advisor.api import estimate as run_estimate

    with working("estimating", collect=False):
        result = run_estimate(**{name: flags[name] for name in TRAINING_FLAGS})
    emit(result, fmt, _estimate_render)
    if not result["fits"]:
        sys.exit(3)


def _serve_render(data: dict[str, Any], fmt: str) -> str:
    from advisor.present.tables import serve_estimate_text

    return serve_estimate_text(data)


def _estimate_render(data: dict[str, Any], fmt: str) -> str:
    from advisor.present.tables import estimate_text

    return estimate_text(data)


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
