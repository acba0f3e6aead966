"""The `advisor` command: parse arguments, call the library, render. No logic of its own.

Exit codes (DESIGN.md §5): 0 success, 2 invalid input, 3 no feasible plan, 1 anything else.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
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
    """--catalog, --rules, --as-of and --debug, on every command that reads data."""
    @click.option("--catalog", "catalog_file", type=click.Path(dir_okay=False), default=None,
                  help="YAML file merged over the built-in catalog (a negotiated price, a GPU we lack).")
    @click.option("--rules", "rules_files", type=click.Path(dir_okay=False), multiple=True,
                  help="YAML rules file added to the built-in rules (repeatable).")
    @click.option("--as-of", callback=_as_of, default=None, metavar="YYYY-MM-DD",
                  help="Evaluate rules and price ages as of this date [today].")
    @click.option("--debug", is_flag=True, help="Show the Python traceback of an internal error.")
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        debug = kwargs.get("debug", False)
        try:
            return f(*args, **kwargs)
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except Exception as exc:  # mapped to exit codes; tracebacks only on --debug
            from .errors import AdvisorError
            if debug:
                raise
            if isinstance(exc, AdvisorError):
                click.echo(f"error: {exc}", err=True)
                sys.exit(exc.exit_code)
            click.echo(f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", err=True)
            sys.exit(1)
    return wrapper


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
@click.option("--objective", type=click.Choice(["cost", "time"]), default="cost", show_default=True,
              help="cost: the cheapest plan meeting every constraint; time: the shortest makespan within the budget.")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds the solver may spend on each solve.")
@common
def plan(workload_file, fmt, objective, time_limit, catalog_file, rules_files, as_of, debug):
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
    result = make_plan(workload, catalog=catalog, rules=rules, as_of=as_of, objective=objective,
                       time_limit=time_limit)
    click.echo(result.to_json() if fmt == "json" else plan_text(result), nl=False)
    if not result.feasible:
        sys.exit(3)


@main.command()
@click.argument("workload_file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@click.option("--points", type=click.IntRange(min=2, max=200), default=24, show_default=True,
              help="Makespan caps to try (sampled from the candidates' wall times).")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds the solver may spend on each solve.")
@common
def frontier(workload_file, fmt, points, time_limit, catalog_file, rules_files, as_of, debug):
    """The cost-versus-time Pareto front of WORKLOAD_FILE: for each makespan, the cheapest plan.

    \b
    Examples:
      advisor frontier examples/article-office.yaml
      advisor frontier examples/article-datacenter.yaml --format json
    """
    from .plan import pareto
    from .render import frontier_text
    from .workload import load_workload

    workload = load_workload(workload_file)
    catalog, rules = _load(catalog_file, rules_files)
    result = pareto(workload, catalog=catalog, rules=rules, as_of=as_of, time_limit=time_limit)
    click.echo(json.dumps(result, indent=2, ensure_ascii=False) if fmt == "json" else frontier_text(result),
               nl=fmt != "json")
    if not result["points"]:
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


@main.command()
@click.argument("workload_file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="File to write: memo.md (charts in memo_files/ beside it), memo.html or memo.pdf.")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "pdf"]), default=None,
              help="Memo format [from the suffix of --output].")
@click.option("--date", callback=_as_of, default=None, metavar="YYYY-MM-DD",
              help="Date printed on the memo [none, so that reruns give identical files].")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds the solver may spend on each solve.")
@common
def memo(workload_file, output, fmt, date, time_limit, catalog_file, rules_files, as_of, debug):
    """Write a justification memo for WORKLOAD_FILE: the recommendation, bill of materials,
    costs, alternatives with the rules that excluded them, sensitivity, charts and sources.

    \b
    Examples:
      advisor memo examples/article-office.yaml -o memo.md
      advisor memo examples/article-datacenter.yaml -o memo.html --date 2026-12-01
      advisor memo my.yaml -o memo.pdf        # needs: pip install 'gpu-advisor[pdf]'

    Exit status as for `advisor plan`: 0 memo written, 2 invalid input, 3 no feasible plan (the
    memo is written all the same and explains why), 1 anything else (e.g. PDF without WeasyPrint).
    """
    from pathlib import Path

    from .memo import format_for
    from .memo import memo as make_memo
    from .plan import plan as make_plan
    from .workload import load_workload

    fmt = format_for(output, fmt)
    workload = load_workload(workload_file)
    catalog, rules = _load(catalog_file, rules_files)
    result = make_plan(workload, catalog=catalog, rules=rules, as_of=as_of, time_limit=time_limit)
    doc = make_memo(result, workload_file, fmt=fmt, catalog=catalog, rules=rules, date=date,
                    name=Path(output).stem, time_limit=time_limit)
    files = doc.write(output)
    click.echo(f"wrote {', '.join(str(f) for f in files)}")
    if not result.feasible:
        click.echo("no plan meets every requirement; the memo explains why", err=True)
        sys.exit(3)
