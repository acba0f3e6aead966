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
            with _progress():
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
            from advisor.errors import AdvisorError, InputError
            if kwargs.get("debug"):
                raise
            if isinstance(exc, InputError):  # found after reading, e.g. a GPU id the catalog lacks
                exc = exc.in_file(kwargs.get("workload_file"))
            if isinstance(exc, AdvisorError):
                _fail(f"error: {exc}", exc.exit_code)
            _fail(f"internal error: {type(exc).__name__}: {exc} (please report it; run with --debug for "
                  "the traceback)", 1)
    return wrapper


def _progress():
    """On a terminal, a status line on stderr every few seconds while planning runs long."""
    if not sys.stderr.isatty():
        return contextlib.nullcontext()
    from advisor.solve.run import progress
    return progress(lambda line: click.echo(line, err=True))


def _seconds(ctx, param, value):
    if value != value or value == float("inf"):  # click's range lets NaN and infinity through
        raise click.BadParameter(f"{value} is not a number of seconds; give e.g. 30")
    return value


time_limit_option = click.option("--time-limit", type=click.FloatRange(min=0.1, max=86_400), default=30.0,
                                 show_default=True, callback=_seconds,
                                 help="Seconds the solver may spend on each solve (0.1 to 86400).")


def _fail(message: str, code: int):
    from advisor.errors import printable
    click.echo(printable(" ".join(message.split())), err=True)   # one paragraph, no terminal controls
    sys.exit(code)


def _load(catalog_file, rules_files):
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    return load_catalog(catalog_file), load_rules(list(rules_files))


def _inputs(workload_file, catalog_file, rules_files):
    """The workload, catalog and rules a plan-making command reads, in that order of checking."""
    from advisor.inputs.workload import load_workload
    return (load_workload(workload_file), *_load(catalog_file, rules_files))


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
@click.option("--verbose", is_flag=True, help="List every reason each GPU was not chosen, not only the primary one.")
@time_limit_option
@common
def plan(workload_file, fmt, objective, verbose, time_limit, catalog_file, rules_files, as_of, debug):
    """Choose the cheapest GPU mix for WORKLOAD_FILE and explain the choice.

    \b
    Examples:
      advisor plan examples/article-office.yaml
      advisor plan examples/article-datacenter.yaml --format json
      advisor plan my.yaml --catalog quotes.yaml --as-of 2026-06-30

    Exit status: 0 a plan was found, 2 the input is invalid, 3 no plan meets every constraint.
    """
    from advisor.plan import plan as make_plan
    from advisor.present.tables import plan_text

    workload, catalog, rules = _inputs(workload_file, catalog_file, rules_files)
    result = make_plan(workload, catalog=catalog, rules=rules, as_of=as_of, objective=objective,
                       time_limit=time_limit)
    click.echo(result.to_json() if fmt == "json" else plan_text(result, verbose=verbose), nl=False)
    if not result.feasible:
        sys.exit(3)


@main.command()
@click.argument("workload_file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@click.option("--points", type=click.IntRange(min=2, max=200), default=24, show_default=True,
              help="Makespan caps to try (sampled from the candidates' wall times).")
@time_limit_option
@common
def frontier(workload_file, fmt, points, time_limit, catalog_file, rules_files, as_of, debug):
    """The cost-versus-time Pareto front of WORKLOAD_FILE: for each makespan, the cheapest plan.

    \b
    Examples:
      advisor frontier examples/article-office.yaml
      advisor frontier examples/article-datacenter.yaml --format json
    """
    from advisor.plan import pareto
    from advisor.present.tables import frontier_text

    workload, catalog, rules = _inputs(workload_file, catalog_file, rules_files)
    result = pareto(workload, catalog=catalog, rules=rules, as_of=as_of, points=points, time_limit=time_limit)
    click.echo(json.dumps(result, indent=2, ensure_ascii=False) if fmt == "json" else frontier_text(result),
               nl=fmt == "json")
    if not result["points"]:
        sys.exit(3)


@main.command()
def schema():
    """Print the JSON Schema of workload files (for editor autocompletion).

    \b
    Example:
      advisor schema > workload.schema.json
    """
    from advisor.inputs.workload import workload_json_schema

    click.echo(json.dumps(workload_json_schema(), indent=2, sort_keys=True))


@main.command()
@click.option("--model", "preset", default=None, help="Model preset (see `advisor models`), e.g. gpt2-124m.")
@click.option("--params", default=None, help="Parameter count, e.g. 124M or 7B (instead of --model).")
@click.option("--layers", type=click.IntRange(min=1), default=None)
@click.option("--hidden", type=click.IntRange(min=1), default=None)
@click.option("--seq-len", type=click.IntRange(min=1), default=None)
@click.option("--gpu", default=None, help="GPU id, e.g. a100-80gb-sxm (see the catalog). Required.")
@click.option("--count", type=click.IntRange(min=1, max=100_000), default=1, show_default=True)
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp8", "fp4", "int8", "int4"]), default="bf16",
              show_default=True, help="fp4/int8/int4 with --kind serve only (int8/int4: weight-only).")
@click.option("--kind", type=click.Choice(["pretrain", "finetune", "lora", "qlora", "serve"]), default="pretrain",
              show_default=True)
@click.option("--heads", type=click.IntRange(min=1), default=None, help="Attention heads (--kind serve, custom model).")
@click.option("--kv-heads", type=click.IntRange(min=1), default=None, help="Key/value heads (GQA) [--heads].")
@click.option("--experts", type=click.IntRange(min=1), default=None, help="Routed experts (MoE; with --active-params).")
@click.option("--active-params", default=None, help="Parameters one token multiplies through (MoE), e.g. 13B.")
@click.option("--input-len", type=click.IntRange(min=1), default=None, help="Prompt tokens per request (--kind serve).")
@click.option("--output-len", type=click.IntRange(min=1), default=None, help="Output tokens per request (--kind serve).")
@click.option("--ttft-ms", type=float, default=None, help="Time-to-first-token limit, ms [none: offline peak].")
@click.option("--tpot-ms", type=float, default=None, help="Time-per-output-token limit, ms [none].")
@click.option("--percentile", type=float, default=99, show_default=True, help="Percentile the limits hold at.")
@click.option("--list-models", is_flag=True, help="With --kind serve: list the serving presets, shapes and sources.")
@click.option("--micro-batch", type=click.IntRange(min=1), default=None, help="Per-GPU micro-batch [chosen].")
@click.option("--checkpointing/--no-checkpointing", default=None, help="Activation checkpointing [chosen].")
@click.option("--global-batch-tokens", default=None, help="Tokens per optimizer step, e.g. 524288 or 4M.")
@click.option("--optimizer", type=click.Choice(["adamw", "adamw-8bit"]), default="adamw", show_default=True)
@click.option("--lora-rank", type=click.IntRange(min=1, max=4096), default=16, show_default=True,
              help="Adapter rank with --kind lora or qlora.")
@click.option("--strategy", type=click.Choice(["ddp", "zero1", "zero2", "zero3", "fsdp"]), default=None,
              help="Data-parallel sharding (fsdp = zero3) [chosen].")
@click.option("--tensor-parallel", type=click.IntRange(min=1, max=64), default=None,
              help="Tensor parallelism [chosen].")
@click.option("--pipeline-parallel", type=click.IntRange(min=1, max=1024), default=None,
              help="Pipeline parallelism [chosen].")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
@common
def estimate(preset, params, layers, hidden, seq_len, gpu, count, precision, kind, heads, kv_heads, experts,
             active_params, input_len, output_len, ttft_ms, tpot_ms, percentile, list_models, micro_batch,
             checkpointing, global_batch_tokens, optimizer, lora_rank, strategy, tensor_parallel, pipeline_parallel,
             fmt, catalog_file, rules_files, as_of, debug):
    """Memory and tokens/s of one training job on COUNT GPUs of one type, in the fastest layout
    that fits (or the one --strategy/--tensor-parallel/--pipeline-parallel fix).

    \b
    Examples:
      advisor estimate --model gpt2-124m --gpu rtx-4090
      advisor estimate --params 124M --seq-len 1024 --gpu a100-80gb-sxm --count 8 --format json
      advisor estimate --model llama-3-8b --kind lora --gpu rtx-4090 --seq-len 2048
      advisor estimate --model llama-3-70b --gpu h100-sxm --count 64 --tensor-parallel 8
      advisor estimate --kind serve --model llama-3.3-70b --gpu b200 --precision fp4 --input-len 1000
        --output-len 1000 --ttft-ms 2000 --tpot-ms 200 --format json
    """
    from advisor.errors import InputError

    if gpu is None and not (kind == "serve" and list_models):
        raise InputError("--gpu: give a GPU id such as h100-sxm (see `advisor catalog list`)", field="gpu")
    if kind == "serve":
        from advisor.perf.serving import run_serve_estimate
        from advisor.present.tables import serve_estimate_text

        result = run_serve_estimate(preset, params, layers, hidden, heads, kv_heads, experts, active_params, gpu,
                                    count, precision, input_len, output_len, ttft_ms, tpot_ms, percentile,
                                    tensor_parallel, catalog_file, list_models)
        click.echo(json.dumps(result, indent=2) if fmt == "json" else serve_estimate_text(result).rstrip("\n"))
        return
    if precision in ("fp4", "int8", "int4"):
        raise InputError(f"--precision {precision} is a serving precision; training takes bf16, fp16 or fp8 "
                         "(add --kind serve to estimate serving)", field="precision")
    from advisor.perf.estimate import estimate as run_estimate

    result = run_estimate(model=preset, params=params, layers=layers, hidden=hidden, seq_len=seq_len, gpu=gpu,
                          count=count, precision=precision, kind=kind, micro_batch=micro_batch,
                          checkpointing=checkpointing, global_batch_tokens=global_batch_tokens,
                          optimizer=optimizer, lora_rank=lora_rank, strategy=strategy,
                          tensor_parallel=tensor_parallel, pipeline_parallel=pipeline_parallel,
                          catalog=catalog_file)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
        return
    from advisor.present.tables import estimate_text
    click.echo(estimate_text(result), nl=False)


def _prices(ctx, param, values):
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
@click.argument("gpus", nargs=-1, required=True)
@click.option("--model", "preset", default=None, help="Model preset, e.g. gpt2-124m (default when no --params).")
@click.option("--params", default=None, help="Parameter count instead of a preset, e.g. 7B.")
@click.option("--layers", type=click.IntRange(min=1), default=None)
@click.option("--hidden", type=click.IntRange(min=1), default=None)
@click.option("--seq-len", type=click.IntRange(min=1), default=None)
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp8"]), default="bf16", show_default=True)
@click.option("--price", "prices", multiple=True, callback=_prices, metavar="GPU=USD",
              help="Override a purchase price, e.g. --price rtx-4090=1749 (repeatable).")
@click.option("--deployment", type=click.Choice(["office", "datacenter", "cloud"]), default=None,
              help="Also show which rules allow each GPU there.")
@click.option("--region", default="US", show_default=True, help="ISO country code for export rules.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@common
def compare(gpus, preset, params, layers, hidden, seq_len, precision, prices, deployment, region, fmt,
            catalog_file, rules_files, as_of, debug):
    """Compare GPUs for one model: price, TFLOPs, memory, links, tokens/s and tokens/s per $1,000.

    The first GPU is the reference for the price and speed ratios. For GPT-2 124M on the
    article's three GPUs the article's own claims are shown beside the estimates.

    \b
    Examples:
      advisor compare rtx-4090 a100-80gb-sxm h100-sxm --model gpt2-124m
      advisor compare rtx-4090 h100-sxm --params 7B --layers 32 --hidden 4096 --format json
      advisor compare rtx-4090 a100-80gb-sxm --price a100-80gb-sxm=20000 --deployment datacenter
    """
    from advisor.compare import compare as run_compare
    from advisor.present.tables import compare_text

    catalog, rules = _load(catalog_file, rules_files)
    if preset is None and params is None:
        preset = "gpt2-124m"
    result = run_compare(list(gpus), model=preset, params=params, layers=layers, hidden=hidden, seq_len=seq_len,
                         precision=precision, prices=prices, deployment=deployment, region=region.upper(),
                         catalog=catalog, rules=rules, as_of=as_of)
    click.echo(json.dumps(result, indent=2, ensure_ascii=False) if fmt == "json" else compare_text(result, fmt),
               nl=fmt == "json")


@main.command()
@click.option("--tokens", default="10B", show_default=True, help="Token budget of every model in the sweep.")
@click.option("--max-gpus", type=click.IntRange(min=1, max=100_000), default=8, show_default=True)
@click.option("--gpu", "gpus", multiple=True,
              help="GPUs to choose among [rtx-4090, a100-80gb-sxm, h100-sxm, a100-80gb-pcie, h100-pcie].")
@click.option("--model", "models", multiple=True, help="Model presets to sweep [every preset, by size].")
@click.option("--deployment", type=click.Choice(["office", "datacenter", "cloud"]), default="office", show_default=True)
@click.option("--ownership", type=click.Choice(["buy", "rent", "any"]), default="buy", show_default=True)
@click.option("--deadline", default=None, help="Deadline for every model, e.g. 30d.")
@click.option("--focus", default="rtx-4090", show_default=True, help="The GPU whose crossover is explained.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--chart", type=click.Path(dir_okay=False), default=None, metavar="FILE.svg",
              help="Also draw cost against model size, with the crossover marked, as an SVG file.")
@common
def crossover(tokens, max_gpus, gpus, models, deployment, ownership, deadline, focus, fmt, chart, catalog_file,
              rules_files, as_of, debug):
    """Where the RTX 4090 stops being the cheapest way to train as models grow, and why.

    For each model size: the cheapest plan among the GPUs, and for the focus GPU its cost or
    the factor that rules it out (memory size, memory bandwidth or GPU-to-GPU bandwidth).

    \b
    Examples:
      advisor crossover
      advisor crossover --chart crossover.svg
      advisor crossover --tokens 50B --max-gpus 16 --deadline 30d --format markdown
    """
    from advisor.compare import crossover as run_crossover
    from advisor.present.tables import crossover_text

    catalog, rules = _load(catalog_file, rules_files)
    result = run_crossover(tokens=tokens, max_gpus=max_gpus, gpus=list(gpus) or None, models=list(models) or None,
                           deployment=deployment, ownership=ownership, deadline=deadline, focus=focus,
                           catalog=catalog, rules=rules, as_of=as_of)
    click.echo(json.dumps(result, indent=2, ensure_ascii=False) if fmt == "json" else crossover_text(result, fmt),
               nl=fmt == "json")
    if chart:
        from pathlib import Path

        from advisor.present.charts import crossover_svg
        Path(chart).write_text(crossover_svg(result), encoding="utf-8")
        click.echo(f"wrote {chart}", err=True)

# ----------------------------------------------------------------------------- advisor catalog ...


@main.group("catalog")
def catalog_group():
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
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@common
def catalog_list(fmt, catalog_file, rules_files, as_of, debug):
    """Every GPU and server with its prices and their ages (against --as-of, default today).

    \b
    Examples:
      advisor catalog list
      advisor catalog list --format json --as-of 2026-06-30
    """
    from advisor.data.catalog_view import listing
    from advisor.present.tables import catalog_list_text

    catalog, _ = _load(catalog_file, rules_files)
    data = listing(catalog, as_of or dt.date.today())
    click.echo(json.dumps(data, indent=2) if fmt == "json" else catalog_list_text(data), nl=fmt == "json")


@catalog_group.command("show")
@click.argument("item_id", metavar="ID")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@common
def catalog_show(item_id, fmt, catalog_file, rules_files, as_of, debug):
    """Every figure of one GPU or server with its sources and their URLs; whether a GPU can be
    bought, rented or both; price ages.

    \b
    Examples:
      advisor catalog show rtx-4090
      advisor catalog show hgx-h100-8gpu --format json

    Exit status: 0 shown, 2 unknown ID or invalid --catalog file.
    """
    from advisor.data.catalog_view import record
    from advisor.present.tables import catalog_show_text

    catalog, _ = _load(catalog_file, rules_files)
    data = record(catalog, item_id, as_of or dt.date.today())
    click.echo(json.dumps(data, indent=2) if fmt == "json" else catalog_show_text(data), nl=fmt == "json")


@catalog_group.command("validate")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@common
def catalog_validate(file, fmt, catalog_file, rules_files, as_of, debug):
    """Check the built-in catalog, or FILE merged over it: schema, units, dates, and that every
    source id resolves. Exit status 0 valid, 2 invalid (naming file, entry and field).

    \b
    Examples:
      advisor catalog validate
      advisor catalog validate quotes.yaml
    """
    from advisor.data.catalog_view import summary
    from advisor.present.tables import catalog_validate_text

    if file and catalog_file and file != catalog_file:
        raise click.UsageError("give the file to validate as FILE or as --catalog, not both")
    path = file or catalog_file
    catalog, _ = _load(path, rules_files)
    data = summary(catalog, path or "built-in catalog")
    click.echo(json.dumps(data, indent=2) if fmt == "json" else catalog_validate_text(data), nl=fmt == "json")


@main.command()
@click.argument("workload_file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="File to write: memo.md (charts in memo_files/ beside it), memo.html or memo.pdf.")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "pdf"]), default=None,
              help="Memo format [from the suffix of --output].")
@click.option("--date", callback=_as_of, default=None, metavar="YYYY-MM-DD",
              help="Date printed on the memo [none, so that reruns give identical files].")
@click.option("--paper", type=click.Choice(["a4", "letter"]), default="a4", show_default=True,
              help="Page size of the PDF (and of the HTML when printed).")
@click.option("--force", is_flag=True, help="Replace the output file (and its charts) if they exist.")
@time_limit_option
@common
def memo(workload_file, output, fmt, date, paper, force, time_limit, catalog_file, rules_files, as_of, debug):
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

    from advisor.plan import plan as make_plan
    from advisor.present.memo import format_for
    from advisor.report import memo as make_memo

    fmt = format_for(output, fmt)
    workload, catalog, rules = _inputs(workload_file, catalog_file, rules_files)
    result = make_plan(workload, catalog=catalog, rules=rules, as_of=as_of, time_limit=time_limit, charts=True)
    doc = make_memo(result, workload_file, fmt=fmt, catalog=catalog, rules=rules, date=date,
                    name=Path(output).stem, time_limit=time_limit, paper=paper)
    files = doc.write(output, force=force)
    click.echo(f"wrote {', '.join(str(f) for f in files)}")
    if not result.feasible:
        click.echo("no plan meets every requirement; the memo explains why", err=True)
        sys.exit(3)

# ----------------------------------------------------------------------------- advisor rules ...


@main.group("rules")
def rules_group():
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
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@common
def rules_list(fmt, catalog_file, rules_files, as_of, debug):
    """Every rule with its severity, whether it is in force (as of --as-of, default today) and its title.

    \b
    Examples:
      advisor rules list
      advisor rules list --as-of 2025-01-01 --format json
    """
    from advisor.present.tables import rules_list_text

    _, rules = _load(catalog_file, rules_files)
    day = as_of or dt.date.today()
    data = {"as_of": day.isoformat(), "rules": rules.listing(day)}
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if fmt == "json" else rules_list_text(data),
               nl=fmt == "json")


@rules_group.command("show")
@click.argument("rule_id", metavar="ID")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@common
def rules_show(rule_id, fmt, catalog_file, rules_files, as_of, debug):
    """What rule ID does, why, an example, and its source with the clause quoted (like `ruff rule`).

    \b
    Examples:
      advisor rules show LIC001
      advisor rules show EXP001 --format json

    Exit status: 0 shown, 2 unknown ID or invalid --rules file.
    """
    from advisor.present.tables import rules_show_text

    _, rules = _load(catalog_file, rules_files)
    data = rules.record(rules.get(rule_id), as_of or dt.date.today())
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if fmt == "json" else rules_show_text(data),
               nl=fmt == "json")
