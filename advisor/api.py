"""The public functions `advisor.plan`, `advisor.estimate` and `advisor.memo`: they accept what a
script has at hand (a path, a dict, a model) and speak in field names, never in CLI flags."""
from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from advisor.errors import InputError

if TYPE_CHECKING:
    from advisor.inputs.known import Known
    from advisor.inputs.workload import Workload

def known_ids(catalog: Any = None) -> Known:
    """What a workload may name, from `catalog` (the built-in one by default): GPU ids, training
    presets and the serving models, so that a workload's unknown ids are reported with its other
    mistakes, where they were written."""
    from advisor.data.catalog import load_catalog
    from advisor.inputs.known import Known
    from advisor.perf.kv import load_model

    catalog = catalog if catalog is not None else load_catalog()
    return Known(frozenset(catalog.gpus), frozenset(catalog.models), load_model)


def as_workload(workload: Any, catalog: Any = None) -> Workload:
    """A Workload from a Workload, a workload file's path, or a dict of what the file would hold;
    a path's or a dict's GPU ids and presets are checked against `catalog` (the built-in one by
    default) with its other mistakes."""
    from advisor.inputs.workload import Workload, load_workload, parse_workload

    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, (str, Path)):
        return load_workload(workload, known_ids(catalog))
    if isinstance(workload, dict):
        return parse_workload(workload, "<workload dict>", known=known_ids(catalog))
    raise InputError(f"workload: give a Workload, a workload file's path or a dict, not {type(workload).__name__}",
                     field="workload")


def plan(workload: Any, **options):
    """Choose the cheapest GPU mix for `workload` (a path, a dict or a Workload); see advisor.plan.plan
    for the options (catalog, rules, as_of, objective, time_limit, explain, charts)."""
    return _planned(workload, **options)


def _planned(workload: Any, **options):
    """advisor.plan under a name the `plan` parameter of `memo` does not hide."""
    from advisor.plan import plan as make_plan

    result = make_plan(as_workload(workload, options.get("catalog")), **options)
    if isinstance(workload, (str, Path)):
        result.workload_file = str(workload)
    return result


def estimate(**options) -> dict:
    """Memory and speed of one job on `count` GPUs (advisor.perf.estimate.estimate's keywords); with
    kind="serve", the serving estimate (advisor.perf.serving.estimate_serving's keywords)."""
    run_estimate: Callable[..., dict]
    if options.get("kind") == "serve":
        from advisor.perf.serving import estimate_serving as run_estimate
        options.pop("kind")
    else:
        from advisor.perf.estimate import estimate as run_estimate

    try:
        return run_estimate(**options)
    except TypeError as exc:    # an unknown keyword: "estimate_serving() got an ..." -> "estimate: got an ..."
        raise InputError(re.sub(r"^\w+\(\) ", "estimate: ", str(exc)), field="estimate") from None


def _is_plan(value: Any) -> bool:
    """A Plan, or the JSON dict of one (it carries `schema_version` and `status`)."""
    from advisor.contract import Plan

    return isinstance(value, Plan) or (isinstance(value, dict) and "schema_version" in value and "status" in value)


def memo(plan, workload: Any = None, **options):
    """The justification memo of `plan`; `workload` defaults to what the plan was made from (a
    path keeps the file's bytes quoted and hashed in the memo). Given a workload (a path, a dict or
    a Workload) in place of a plan, it plans it first (with `as_of`, `objective`, `explain`, `gap`,
    and the memo's catalog, rules and time limit)."""
    from advisor.report import memo as make_memo

    if not _is_plan(plan):
        if workload is not None:
            raise InputError("advisor.memo(plan, workload): the first argument is not a plan; give a plan "
                             "(from advisor.plan) and its workload, or only a workload", field="plan")
        workload = plan
        planning: dict[str, Any] = {k: options.pop(k) for k in ("as_of", "objective", "explain", "gap") if k in options}
        planning.update((k, options[k]) for k in ("catalog", "rules", "time_limit") if k in options)
        plan = _planned(workload, **planning)
    if workload is None:
        workload = getattr(plan, "workload_file", None)
    if isinstance(workload, dict):
        workload = as_workload(workload)
    return make_memo(plan, workload, **options)
