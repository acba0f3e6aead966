"""The public functions of `import advisor`: plan, estimate, memo, compare, crossover and the loaders.
They accept what a script has at hand (a path, a dict, a model), speak in field names, never in CLI
flags, and check every argument first against the table of inputs/arguments.py (the bounds of the
command line's options): a wrong type, NaN, infinity, a bool for a number or a value out of bounds is
an `advisor.InputError` naming the argument, before any work."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.errors import InputError, show
from advisor.inputs import arguments as arg
from advisor.inputs.arguments import Check, checked
from advisor.inputs.quantities import MIN_TPOT_MS, MIN_TTFT_MS, TPOT_WHY, TTFT_WHY

if TYPE_CHECKING:
    from advisor.inputs.known import Known
    from advisor.inputs.workload import Workload


def _catalog(value: Any, name: str) -> Any:
    """A Catalog, a --catalog override file's path (merged over the built-in catalog), or None."""
    from advisor.data.catalog import Catalog, load_catalog

    if value is None or isinstance(value, Catalog):
        return value
    return load_catalog(arg.path()(value, name))


def _rules(value: Any, name: str) -> Any:
    """A RuleSet, a rules file's path or a list of them (added to the built-in rules), or None."""
    from advisor.data.rules import RuleSet, load_rules

    if value is None or isinstance(value, RuleSet):
        return value
    files: list[str | Path] = list(arg.paths(value, name))
    return load_rules(files)


def _explain(value: Any, name: str) -> bool | str:
    from advisor.assemble import EXPLAIN_LEVELS

    return value if isinstance(value, bool) else arg.one_of(EXPLAIN_LEVELS)(value, name)


def _stem(value: Any, name: str) -> str:
    stem = arg.text()(value, name)
    if any(c in stem for c in "/\\") or stem in (".", ".."):
        raise InputError(f"`{name}`: a file name without a folder, such as memo, got {show(value)}", field=name)
    return stem


_SECONDS = arg.number(*arg.TIME_LIMIT_S, optional=True)


PLAN: dict[str, Check] = {
    "catalog": _catalog,
    "rules": _rules,
    "as_of": arg.day(),
    "objective": arg.one_of(("cost", "time")),
    "time_limit": _SECONDS,
    "explain": _explain,
    "charts": arg.flag(),
    "gap": arg.number(0, 1, below=True, optional=True),
}
_MODEL_SHAPE: dict[str, Check] = {
    "gpu": arg.text(optional=True),
    "count": arg.whole(1, arg.MAX_GPU_COUNT),
    "model": arg.text(optional=True),
    "params": arg.amount(optional=True),
    "layers": arg.whole(*arg.LAYERS, optional=True),
    "hidden": arg.whole(*arg.HIDDEN, optional=True),
    "catalog": _catalog,
}
_EMBEDDINGS: dict[str, Check] = {
    "vocab": arg.whole(*arg.VOCAB, optional=True),
    "tied_embeddings": arg.flag(optional=True),
}
TRAINING: dict[str, Check] = {
    **_MODEL_SHAPE,
    **_EMBEDDINGS,
    "kind": arg.one_of(("pretrain", "finetune", "lora", "qlora")),
    "heads": arg.whole(*arg.HEADS, optional=True),
    "kv_heads": arg.whole(*arg.HEADS, optional=True),
    "ffn": arg.whole(*arg.FFN, optional=True),
    "active_params": arg.amount(optional=True),
    "seq_len": arg.whole(*arg.SEQ_LEN, optional=True),
    "precision": arg.one_of(("bf16", "fp16", "fp8")),
    "micro_batch": arg.whole(*arg.MICRO_BATCH, optional=True),
    "checkpointing": arg.flag(optional=True),
    "global_batch_tokens": arg.amount(optional=True),
    "optimizer": arg.one_of(("adamw", "adamw-8bit")),
    "lora_rank": arg.whole(*arg.LORA_RANK),
    "strategy": lambda v, n: arg.one_of(
        ("ddp", "zero1", "zero2", "zero3", "fsdp", "full_shard", "shard_grad_op"), optional=True
    )(v.lower() if isinstance(v, str) else v, n),
    "tensor_parallel": arg.whole(*arg.TENSOR_PARALLEL, optional=True),
    "pipeline_parallel": arg.whole(*arg.PIPELINE_PARALLEL, optional=True),
    "software": arg.one_of(("public", "vendor_tuned")),
}
SERVING: dict[str, Check] = {
    **_MODEL_SHAPE,
    "kind": arg.one_of(("serve",)),
    "heads": arg.whole(*arg.HEADS, optional=True),
    "kv_heads": arg.whole(*arg.HEADS, optional=True),
    "experts": arg.whole(*arg.EXPERTS, optional=True),
    "active_params": arg.amount(optional=True),
    "precision": arg.one_of(("bf16", "fp16", "fp8", "fp4", "int8", "int4")),
    "input_len": arg.whole(*arg.REQUEST_TOKENS, optional=True),
    "output_len": arg.whole(*arg.REQUEST_TOKENS, optional=True),
    "ttft_ms": arg.latency(MIN_TTFT_MS, TTFT_WHY),
    "tpot_ms": arg.latency(MIN_TPOT_MS, TPOT_WHY),
    "percentile": arg.number(50, 100, below=True, says="must be at least 50 and below 100"),
    "tensor_parallel": arg.whole(*arg.TENSOR_PARALLEL, optional=True),
    "list_models": arg.flag(),
}
MEMO: dict[str, Check] = {
    "fmt": arg.one_of(("md", "html", "pdf")),
    "catalog": _catalog,
    "rules": _rules,
    "date": arg.day(),
    "charts": arg.flag(),
    "name": _stem,
    "time_limit": _SECONDS,
    "paper": arg.one_of(("a4", "letter")),
    "as_of": PLAN["as_of"],
    "objective": PLAN["objective"],
    "explain": _explain,
    "gap": PLAN["gap"],
}
RFQ: dict[str, Check] = {
    "fmt": arg.one_of(("md", "csv")),
    "catalog": _catalog,
    "rules": _rules,
    "time_limit": _SECONDS,
    "as_of": PLAN["as_of"],
    "objective": PLAN["objective"],
    "gap": PLAN["gap"],
}
_DEPLOYMENTS = ("office", "datacenter", "cloud")
COMPARE: dict[str, Check] = {
    "model": arg.text(optional=True),
    "params": arg.amount(optional=True),
    "layers": arg.whole(*arg.LAYERS, optional=True),
    "hidden": arg.whole(*arg.HIDDEN, optional=True),
    "seq_len": arg.whole(*arg.SEQ_LEN, optional=True),
    **_EMBEDDINGS,
    "precision": arg.one_of(("bf16", "fp16", "fp8")),
    "prices": arg.prices,
    "deployment": arg.one_of(_DEPLOYMENTS, optional=True),
    "region": arg.region,
    "catalog": _catalog,
    "rules": _rules,
    "as_of": arg.day(),
}
CROSSOVER: dict[str, Check] = {
    "tokens": arg.amount(),
    "max_gpus": arg.whole(1, arg.MAX_GPU_COUNT),
    "gpus": arg.names(optional=True),
    "models": arg.names(optional=True),
    "deployment": arg.one_of(_DEPLOYMENTS),
    "ownership": arg.one_of(("buy", "rent", "any")),
    "deadline": arg.text(optional=True, max_len=40),
    "focus": arg.text(),
    "catalog": _catalog,
    "rules": _rules,
    "as_of": arg.day(),
}


def known_ids(catalog: Any = None) -> Known:
    """What a workload may name, from `catalog` (the built-in one by default): GPU ids and model
    presets (with their aliases), so that a workload's unknown ids are reported with its other
    mistakes, where they were written."""
    from advisor.data.catalog import load_catalog
    from advisor.inputs.known import Known

    catalog = catalog if catalog is not None else load_catalog()
    return Known(
        frozenset(catalog.gpus), frozenset(catalog.models) | frozenset(catalog.model_aliases), catalog.model_id
    )


def as_workload(workload: Any, catalog: Any = None) -> Workload:
    """A Workload from a Workload, a workload file's path, or a dict of what the file would hold;
    a path's or a dict's GPU ids and presets are checked against `catalog` (the built-in one by
    default) with its other mistakes."""
    from advisor.inputs.workload import Workload, load_workload, parse_workload

    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, (str, os.PathLike)):
        return load_workload(arg.path()(workload, "workload"), known_ids(catalog))
    if isinstance(workload, dict):
        return parse_workload(workload, "<workload dict>", known=known_ids(catalog))
    raise InputError(
        f"`workload`: give a Workload, a workload file's path or a dict, not {type(workload).__name__}",
        field="workload",
    )


def plan(workload: Any, **options: Any) -> Any:
    """Choose the cheapest GPU mix for `workload` (a path, a dict or a Workload). Options: catalog (a
    Catalog or an override file's path), rules (a RuleSet, or rules files' paths), as_of (a date or
    YYYY-MM-DD), objective ("cost" | "time"), time_limit (0.1 to 86,400 s), explain (True, False,
    "full", "alternatives", "none"), charts (bool), gap (0 <= gap < 1); see advisor.flow.plan."""
    return _planned(workload, checked("advisor.plan", PLAN, options))


def _planned(workload: Any, options: dict[str, Any]) -> Any:
    """advisor.plan with checked options, under a name the `plan` parameter of `memo` does not hide;
    the workload's size is checked against the catalog before any estimating (in flow.prepare)."""
    from advisor.data.catalog import load_catalog
    from advisor.flow import plan as make_plan

    options["catalog"] = options.get("catalog") or load_catalog()
    wl = as_workload(workload, options["catalog"])
    result = make_plan(wl, **options)
    if isinstance(workload, (str, os.PathLike)):
        result.workload_file = os.fspath(workload)
    return result


def estimate(**options: Any) -> dict[str, Any]:
    """Memory and speed of one job on `count` GPUs (1 to 100,000; advisor.perf.estimate.estimate's
    keywords); with kind="serve", the serving estimate (advisor.perf.serving_estimate.estimate_serving's)."""
    run_estimate: Callable[..., dict[str, Any]]
    if options.get("kind") == "serve":
        from advisor.perf.serving_estimate import estimate_serving as run_estimate

        options = checked("advisor.estimate(kind='serve')", SERVING, options)
        options.pop("kind")
    else:
        from advisor.perf.estimate import estimate as run_estimate

        options = checked("advisor.estimate", TRAINING, options)
    return run_estimate(**options)


def _is_plan(value: Any) -> bool:
    """A Plan, or the JSON dict of one (it carries `schema_version` and `status`)."""
    from advisor.contract import Plan

    return isinstance(value, Plan) or (isinstance(value, dict) and "schema_version" in value and "status" in value)


def _plan_dict(value: dict[str, Any]) -> dict[str, Any]:
    """A plan's JSON dict, checked against the plan's contract (the memo reads its fields)."""
    from pydantic import ValidationError

    from advisor.contract import Plan
    from advisor.errors import describe, first_error, loc_text

    try:
        Plan.model_validate(value)
    except ValidationError as exc:
        err = first_error(exc.errors())
        raise InputError(
            f"`plan`: not the JSON of a plan: `{loc_text(err['loc'])}` {describe(err)}", field="plan"
        ) from None
    return value


def memo(plan: Any, workload: Any = None, **options: Any) -> Any:
    """The justification memo of `plan` (a Plan, or its JSON dict); `workload` defaults to what the plan
    was made from (a path keeps the file's bytes quoted and hashed in the memo). Given a workload (a
    path, a dict or a Workload) in place of a plan, it plans it first (with `as_of`, `objective`,
    `explain`, `gap`, and the memo's catalog, rules and time limit). Options: fmt (md | html | pdf),
    catalog, rules, date, charts, name, time_limit, paper (a4 | letter)."""
    from advisor.inputs.workload import Workload
    from advisor.report import memo as make_memo

    options = checked("advisor.memo", MEMO, options)
    if workload is not None and not isinstance(workload, (dict, Workload)):
        workload = arg.path()(workload, "workload")
    if not _is_plan(plan):
        if workload is not None:
            raise InputError(
                "advisor.memo(plan, workload): the first argument is not a plan; give a plan "
                "(from advisor.plan) and its workload, or only a workload",
                field="plan",
            )
        workload = plan
        planning: dict[str, Any] = {k: options.pop(k) for k in ("as_of", "objective", "explain", "gap") if k in options}
        planning.update((k, options[k]) for k in ("catalog", "rules", "time_limit") if k in options)
        plan = _planned(workload, planning)
    else:
        extra = sorted(k for k in ("as_of", "objective", "explain", "gap") if k in options)
        if extra:
            raise InputError(
                f"advisor.memo: `{extra[0]}` is for planning a workload; this plan is made already", field=extra[0]
            )
        if isinstance(plan, dict):
            plan = _plan_dict(plan)
    return make_memo(plan, _workload_of(plan, workload), **options)


def _workload_of(plan: Any, workload: Any) -> Any:
    """The workload a document about `plan` quotes: the one given (a dict parsed), else the file the
    plan was made from."""
    if workload is None:
        workload = getattr(plan, "workload_file", None)
    return as_workload(workload) if isinstance(workload, dict) else workload


def rfq(plan: Any, workload: Any = None, **options: Any) -> Any:
    """The request for quotation of `plan` (a Plan, or its JSON dict): the inputs worth confirming
    first, then every item to quote with its specification, quantity, term and latest date. Given a
    workload (a path, a dict or a Workload) in place of a plan, it plans it first (every explanation:
    the RFQ reads the plan's `decision.verify`). Options: fmt (md | csv), catalog, rules, and for
    planning as_of, objective, gap, time_limit. `.write(path)` writes it."""
    from advisor.report import rfq as make_rfq

    options = checked("advisor.rfq", RFQ, options)
    planning: dict[str, Any] = {k: options.pop(k) for k in ("as_of", "objective", "gap", "time_limit") if k in options}
    if not _is_plan(plan):
        if workload is not None:
            raise InputError(
                "advisor.rfq(plan, workload): the first argument is not a plan; give a plan "
                "(from advisor.plan) and its workload, or only a workload",
                field="plan",
            )
        workload = plan
        planning.update((k, options[k]) for k in ("catalog", "rules") if k in options)
        plan = _planned(workload, planning)
    elif planning:
        raise InputError(
            f"advisor.rfq: `{sorted(planning)[0]}` is for planning a workload; this plan is made already",
            field=sorted(planning)[0],
        )
    elif isinstance(plan, dict):
        plan = _plan_dict(plan)
    return make_rfq(plan, _workload_of(plan, workload), **options)


def compare(gpus: Any, **options: Any) -> dict[str, Any]:
    """One row per GPU id in `gpus` (a list): price, TFLOPs, memory, links, tokens/s on the fewest
    cards that hold the model; see advisor.comparisons.compare for the options."""
    from advisor.comparisons import compare as run_compare

    return run_compare(arg.names()(gpus, "gpus"), **checked("advisor.compare", COMPARE, options))


def crossover(**options: Any) -> dict[str, Any]:
    """Where the focus GPU (the RTX 4090) stops being the cheapest as models grow, and why; see
    advisor.crossover_sweep.crossover for the options."""
    from advisor.crossover_sweep import crossover as run_crossover

    return run_crossover(**checked("advisor.crossover", CROSSOVER, options))


def load_workload(path: Any) -> Any:
    """Read and validate a workload file (`-` reads standard input)."""
    from advisor.inputs.workload import load_workload as load

    return load(arg.path()(path, "path"))


def parse_workload(data: Any, name: Any = "<workload>") -> Any:
    """Validate a workload document (a dict, as a workload file would hold)."""
    from advisor.inputs.workload import parse_workload as parse

    return parse(data, arg.text(max_len=arg.MAX_PATH)(name, "name"))


def load_catalog(override: Any = None) -> Any:
    """The built-in catalog, with `override` (a catalog file's path) merged over it."""
    from advisor.data.catalog import load_catalog as load

    return load(arg.path(optional=True)(override, "override"))


def load_rules(extra: Any = None) -> Any:
    """The built-in rules plus the rules files in `extra` (a path or a list of paths)."""
    from advisor.data.rules import load_rules as load

    files: list[str | Path] = list(arg.paths(extra, "extra"))
    return load(files)


__all__ = [
    "as_workload",
    "compare",
    "crossover",
    "estimate",
    "load_catalog",
    "load_rules",
    "load_workload",
    "memo",
    "parse_workload",
    "plan",
]
