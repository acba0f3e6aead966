"""The public functions `advisor.plan`, `advisor.estimate` and `advisor.memo`: they accept what a
script has at hand (a path, a dict, a model) and speak in field names, never in CLI flags."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from advisor.errors import InputError

def as_workload(workload: Any):
    """A Workload from a Workload, a workload file's path, or a dict of what the file would hold."""
    from advisor.inputs.workload import Workload, load_workload, parse_workload

    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, (str, Path)):
        return load_workload(workload)
    if isinstance(workload, dict):
        return parse_workload(workload, "<workload dict>")
    raise InputError(f"workload: give a Workload, a workload file's path or a dict, not {type(workload).__name__}",
                     field="workload")


def plan(workload: Any, **options):
    """Choose the cheapest GPU mix for `workload` (a path, a dict or a Workload); see advisor.plan.plan
    for the options (catalog, rules, as_of, objective, time_limit, explain, charts)."""
    from advisor.plan import plan as make_plan

    result = make_plan(as_workload(workload), **options)
    if isinstance(workload, (str, Path)):
        result.workload_file = str(workload)
    return result


def estimate(**options) -> dict:
    """Memory and speed of one job on `count` GPUs (advisor.perf.estimate.estimate's keywords)."""
    from advisor.perf.estimate import estimate as run_estimate

    try:
        return run_estimate(**options)
    except TypeError as exc:    # an unknown keyword
        raise InputError(f"estimate: {exc}".replace("estimate() ", ""), field="estimate") from None


def memo(plan, workload: Any = None, **options):
    """The justification memo of `plan`; `workload` defaults to what the plan was made from (a
    path keeps the file's bytes quoted and hashed in the memo)."""
    from advisor.report import memo as make_memo

    if workload is None:
        workload = getattr(plan, "workload_file", None)
    if isinstance(workload, dict):
        workload = as_workload(workload)
    return make_memo(plan, workload, **options)
