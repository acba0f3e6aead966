"""The `advisor` command: parse arguments, call the library, render. No logic of its own.

Exit codes (DESIGN.md §5): 0 success, 2 invalid input, 3 no feasible plan, 1 anything else.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import os
import sys

import click

FORMATS = click.Choice(["table", "json"])


def _as_of(ctx, param, value):
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date; write YYYY-MM-DD") from None


def common(f):
    """--catalog, --rules, --as-of and --debug, on every command that reads data; and the mapping of
    failures to exit codes (2 bad input, 3 infeasible, 1 anything else), one paragraph on stderr,
    a traceback only with --debug."""
    @click.option("--catalog", "catalog_file", type=click.Path(), default=None,
                  help="YAML file merged over the built-in catalog (a negotiated price, a GPU we lack).")
    @click.option("--rules", "rules_files", type=click.Path(), multiple=True,
                  help="YAML rules file added to the built-in rules (repeatable).")
    @click.option("--as-of", callback=_as_of, default=None, metavar="YYYY-MM-DD",
                  help="Evaluate rules and price ages as of this date [today].")
    @click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            result = f(*args, **kwargs)
            sys.stdout.flush()
            return result
        except (click.exceptions.Exit, click.ClickException):
            raise
        except BrokenPipeError:  # `advisor plan ... | head`: the reader left; say nothing more
            with contextlib.suppress(Exception):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except Exception as exc:  # mapped to exit codes; tracebacks only on --debug
            from .errors import AdvisorError, InputError
            if kwargs.get("debug"):
                raise
            if isinstance(exc, InputError):  # found after reading, e.g. a GPU id the catalog lacks
                exc = exc.in_file(kwargs.get("workload_file"))
            if isinstance(exc, AdvisorError):
                _fail(f"error: {exc}", exc.exit_code)
            _fail(f"internal error: {type(exc).__name__}: {exc} (please report it; run with --debug for "
                  "the traceback)", 1)
    return wrapper


def _fail(message: str, code: int):
    from .errors import printable
    click.echo(printable(" ".join(message.split())), err=True)   # one paragraph, no terminal controls
    sys.exit(code)


def _load(catalog_file, rules_files):
    from .catalog import load_catalog
    from .rules import load_rules
    return load_catalog(catalog_file), load_rules(list(rules_files))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="gpu-advisor", prog_name="advisor")
def main():
    """gpu-advisor: which GPUs to buy or rent for a training workload, and why.

    \b
    Examples:
      advisor plan examples/article-office.yaml
      advisor plan examples/article-datacenter.yaml --format json
      advisor estimate --model gpt2-124m --gpu a100-80gb-sxm --count 1
      advisor schema > workload.schema.json
    """


@main.command()
@click.argument("workload_file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds the solver may spend on each solve.")
@common
def plan(workload_file, fmt, time_limit, catalog_file, rules_files, as_of, debug):
    """Choose the cheapest GPU mix for WORKLOAD_FILE and explain the choice.

    \b
    Examples:
      advisor plan examples/article-office.yaml
      advisor plan examples/article-datacenter.yaml --format json
      advisor plan my.yaml --catalog quotes.yaml --as-of 2026-06-30

    Exit status: 0 a plan was found, 2 the input is invalid, 3 no plan meets every constraint.
    """
    from .plan import plan as make_plan
    from .render import plan_text
    from .workload import load_workload

    workload = load_workload(workload_file)
    catalog, rules = _load(catalog_file, rules_files)
    result = make_plan(workload, catalog=catalog, rules=rules, as_of=as_of, time_limit=time_limit)
    click.echo(result.to_json() if fmt == "json" else plan_text(result), nl=False)
    if not result.feasible:
        sys.exit(3)


@main.command()
def schema():
    """Print the JSON Schema of workload files (for editor autocompletion).

    \b
    Example:
      advisor schema > workload.schema.json
    """
    from .workload import workload_json_schema

    click.echo(json.dumps(workload_json_schema(), indent=2, sort_keys=True))


@main.command()
@click.option("--model", "preset", default=None, help="Model preset (see `advisor models`), e.g. gpt2-124m.")
@click.option("--params", default=None, help="Parameter count, e.g. 124M or 7B (instead of --model).")
@click.option("--layers", type=click.IntRange(min=1), default=None)
@click.option("--hidden", type=click.IntRange(min=1), default=None)
@click.option("--seq-len", type=click.IntRange(min=1), default=None)
@click.option("--gpu", required=True, help="GPU id, e.g. a100-80gb-sxm (see the catalog).")
@click.option("--count", type=click.IntRange(min=1, max=100_000), default=1, show_default=True)
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp8"]), default="bf16", show_default=True)
@click.option("--kind", type=click.Choice(["pretrain", "finetune", "lora"]), default="pretrain", show_default=True)
@click.option("--micro-batch", type=click.IntRange(min=1), default=None, help="Per-GPU micro-batch [chosen].")
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing [chosen].")
@click.option("--global-batch-tokens", default=None, help="Tokens per optimizer step, e.g. 524288 or 4M.")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
@common
def estimate(preset, params, layers, hidden, seq_len, gpu, count, precision, kind, micro_batch, checkpointing,
             global_batch_tokens, fmt, catalog_file, rules_files, as_of, debug):
    """Memory and tokens/s of one training job on COUNT GPUs of one type.

    \b
    Examples:
      advisor estimate --model gpt2-124m --gpu rtx-4090
      advisor estimate --params 124M --seq-len 1024 --gpu a100-80gb-sxm --count 8 --format json
    """
    from .estimate import estimate as run_estimate

    result = run_estimate(model=preset, params=params, layers=layers, hidden=hidden, seq_len=seq_len, gpu=gpu,
                          count=count, precision=precision, kind=kind, micro_batch=micro_batch,
                          checkpointing=checkpointing, global_batch_tokens=global_batch_tokens,
                          catalog=catalog_file)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
        return
    from .render import estimate_text
    click.echo(estimate_text(result), nl=False)
