"""advisor.memo(plan) and advisor.rfq(plan): the flow from a plan to its justification memo and to
its request for quotation. It gathers what the memo
shows -- the Problem the plan was made from, chart data (re-solves, unless the plan already
carries them from `plan(..., charts=True)`), each job's minimum GPU count, the estimator's error
band -- and hands it to present/, which only renders."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.contract import Plan
from advisor.contract.context import Host, JobInfo, PlanContext
from advisor.data.accuracy import estimator_band
from advisor.data.catalog import Catalog
from advisor.data.rules import RuleSet
from advisor.errors import InputError
from advisor.flow import chart_data, min_gpus_by_job, prepare
from advisor.inputs.workload import Workload, load_workload
from advisor.solve.problem import Problem
from advisor.solve.settings import SolveSettings

if TYPE_CHECKING:  # present/memo.py and rfq.py are imported when a memo or an RFQ is made, not by `plan`
    from advisor.present.memo import Memo
    from advisor.present.rfq import Document as RfqDocument


def plan_context(problem: Problem) -> PlanContext:
    """What a page needs from the Problem a plan was made from, as types present/ reads: the
    workload, catalog and rules, the GPU types considered, each training job's requirement and the
    platforms each owned GPU type goes into."""
    wl = problem.workload
    jobs = tuple(JobInfo(c.name(wl), c.tokens, c.spec.precision, c.deadline) for c in problem.classes)
    hosts = {gid: Host(tuple(o.id for o in options)) for gid, options in problem.servers.items() if options}
    return PlanContext(wl, problem.catalog, problem.rules, tuple(problem.considered), jobs, hosts)


def input_digest(
    workload: str | Path | Workload, source: tuple[str, bytes] | None = None
) -> tuple[str, str, bytes | None]:
    """(label, sha256, file bytes): of the workload file's bytes (`source`: a label and the bytes
    as read, e.g. standard input's), or of a Workload's JSON."""
    if source is not None:
        return source[0], hashlib.sha256(source[1]).hexdigest(), source[1]
    if isinstance(workload, (str, Path)):
        data = Path(workload).read_bytes()
        return Path(workload).name, hashlib.sha256(data).hexdigest(), data
    data = json.dumps(workload.model_dump(mode="json"), sort_keys=True).encode()
    return "workload given in Python (canonical JSON)", hashlib.sha256(data).hexdigest(), None


def memo(
    plan: Plan | dict[str, Any],
    workload: str | Path | Workload | None = None,
    *,
    fmt: str = "md",
    catalog: Catalog | None = None,
    rules: RuleSet | None = None,
    date: dt.date | None = None,
    charts: bool = True,
    name: str = "memo",
    time_limit: float | None = 30.0,
    paper: str = "a4",
    source: tuple[str, bytes] | None = None,
) -> Memo:
    """The justification memo for `plan`, made from `workload` (a workload file's path, whose bytes
    the memo quotes and hashes, or a Workload). `workload`, `catalog` and `rules` default to what a
    plan made by advisor.plan() was made from; otherwise they must be those the plan used (built-in
    catalog and rules by default). `date` is printed on the memo (none by default, so reruns give
    identical bytes). `paper` is the PDF/print page size: a4 or letter. `source` (label, bytes): the
    workload file as read, when `workload` is the Workload parsed from it (standard input)."""
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.present.memo import format_for, render

    workload = workload if workload is not None else getattr(plan, "workload", None)
    if workload is None:
        raise InputError(
            "advisor.memo needs the workload the plan was made from: memo(plan, 'workload.yaml')", field="workload"
        )
    catalog = catalog if catalog is not None else getattr(plan, "catalog", None) or load_catalog()
    rules = rules if rules is not None else getattr(plan, "rules", None) or load_rules()
    fmt = format_for("", fmt)
    if plan.get("catalog_digest") not in (None, catalog.digest):
        raise InputError(
            f"the plan was made with catalog {plan['catalog_digest']}, not {catalog.digest}: "
            "give the memo the same `catalog` as the plan",
            field="catalog",
        )
    wl = workload if isinstance(workload, Workload) else load_workload(workload)
    problem = getattr(plan, "problem", None)
    typed = plan if isinstance(plan, Plan) else Plan.build(plan)
    if problem is None or problem.workload != wl or problem.catalog is not catalog or problem.rules is not rules:
        problem = prepare(wl, catalog, rules, dt.date.fromisoformat(plan["as_of"]))
    data = None
    if charts:
        data = getattr(plan, "chart_data", None) or chart_data(problem, SolveSettings(time_limit=time_limit))
    return render(
        typed,
        plan_context(problem),
        input_digest(workload, source),
        fmt=fmt,
        date=date,
        chart_data=data,
        band=dict(estimator_band(), own=own) if (own := catalog.estimator.get("calibrated_from")) else estimator_band(),
        min_gpus=min_gpus_by_job(problem, typed),
        name=name,
        paper=paper,
    )


def rfq(
    plan: Plan | dict[str, Any],
    workload: str | Path | Workload | None = None,
    *,
    fmt: str = "md",
    catalog: Catalog | None = None,
    rules: RuleSet | None = None,
) -> RfqDocument:
    """A request for quotation for `plan` (present/rfq.py): what a buyer sends to vendors and
    providers, the inputs worth confirming first (decision.verify), then each item with its
    specification, quantity, term and latest date, and the plan's export and licence notes.
    fmt: "md" or "csv". `workload`, `catalog` and `rules` default to what the plan was made from."""
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.present.rfq import format_for as rfq_format
    from advisor.present.rfq import render as render_rfq

    fmt = rfq_format("", fmt)
    workload = workload if workload is not None else getattr(plan, "workload", None)
    if workload is None:
        raise InputError(
            "advisor.rfq needs the workload the plan was made from: rfq(plan, 'workload.yaml')", field="workload"
        )
    catalog = catalog if catalog is not None else getattr(plan, "catalog", None) or load_catalog()
    rules = rules if rules is not None else getattr(plan, "rules", None) or load_rules()
    wl = workload if isinstance(workload, Workload) else load_workload(workload)
    problem = getattr(plan, "problem", None)
    if problem is None or problem.workload != wl or problem.catalog is not catalog or problem.rules is not rules:
        problem = prepare(wl, catalog, rules, dt.date.fromisoformat(plan["as_of"]))
    typed = plan if isinstance(plan, Plan) else Plan.build(plan)
    return render_rfq(typed, plan_context(problem), fmt)
