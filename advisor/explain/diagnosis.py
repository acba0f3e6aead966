"""Why no plan exists, in numbers a buyer can act on: the shortfall (GPU-hours the work needs, then
each constraint family's own: the cheapest plan's cost against the budget, kW against the power
limit, days against the deadline...), then the levers -- each family's limit relaxed alone, then
changes of the workload (deployment context, ownership, batch size) -- each verified by
re-solving. When no single lever is enough, the smallest combined change found (also re-solved);
when nothing within the bounds tried helps, a plain statement of those bounds. Never an empty list.
The results are typed facts (contract/diagnosis_facts.py, contract/facts.py); present/constraint_words.py
words them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from advisor.contract.diagnosis_facts import (
    Combination,
    Diagnosis,
    Elsewhere,
    NoCandidate,
    Nothing,
    WorkloadLever,
    WorkShortfall,
)
from advisor.data.catalog_prices import RENT_KINDS
from advisor.inputs.deployment import DEFAULT_RENT_KINDS
from advisor.solve.class_candidates import MAX_GPUS_PER_JOB
from advisor.solve.constraints import FAMILIES
from advisor.solve.constraints.at_once import makespan_hours
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

BATCH_SCALES = (2.0, 4.0)  # the batch-size lever: each job's global batch this many times larger
Rebuild = Callable[..., Problem]


def _relaxed(sc: Scenario) -> Scenario:
    """`sc` with every family's limit lifted."""
    changes: dict[str, Any] = {}
    for family in FAMILIES:
        changes.update(family.lifted())
    return sc.but(**changes)


def diagnose(problem: Problem, settings: SolveSettings, rebuild: Rebuild | None = None) -> list[Diagnosis]:
    """For an infeasible workload: the shortfall, then every single relaxation that restores a
    plan (verified), else the smallest combined change found, else what was tried."""

    def run(p: Problem, s: Scenario | None = None) -> Solution:
        return solve(p, s or baseline(p), settings)

    wl, base = problem.workload, baseline(problem)
    out: list[Diagnosis] = [NoCandidate(cls.name(wl)) for cls, cs in zip(problem.classes, problem.candidates) if not cs]
    free = run(problem, _relaxed(base)) if not out else Solution("infeasible", None)
    out += shortfall(problem, free)
    levers: list[Diagnosis] = []
    if free.feasible:
        levers += [lv for family in FAMILIES if (lv := family.lever(problem, base, run)) is not None]
    levers += _workload_levers(problem, rebuild, run)
    if not levers and free.feasible:
        levers = _combined(problem, free, run)
    if not levers and rebuild is not None:
        levers = _combined_elsewhere(rebuild, run)
    return (levers or [Nothing(MAX_GPUS_PER_JOB)]) + out


def shortfall(problem: Problem, free: Solution) -> list[Diagnosis]:
    """What the work needs against what the workload allows, from the candidates and from the
    cheapest plan with every limit removed (`free`)."""
    out: list[Diagnosis] = []
    need: dict[str, float] = {}
    for gid in problem.considered:
        per_class = [
            min((c.gpu_hours for c in cs if c.gpu == gid), default=math.inf) * cls.multiplicity
            for cls, cs in zip(problem.classes, problem.candidates)
        ]
        if per_class and all(h < math.inf for h in per_class):  # (a serving-only workload has no training work)
            need[gid] = sum(per_class)
    if need:
        best = min(sorted(need), key=lambda g: need[g])
        out.append(WorkShortfall(best, problem.catalog.gpus[best].name, need[best]))
    if free.feasible:
        out += [s for family in FAMILIES for s in family.shortfall(problem, free)]
    return out


def _workload_levers(problem: Problem, rebuild: Rebuild | None, run: Callable[..., Solution]) -> list[Diagnosis]:
    """Changes that need new candidates: another deployment context, renting as well as buying,
    the default rental kinds beside those `rent_kinds` lists, a larger global batch (more GPUs can
    then share one step). Each re-planned from scratch."""
    if rebuild is None:
        return []
    d = problem.workload.deployment
    trials: list[dict[str, Any]] = [{"context": c} for c in ("office", "datacenter", "cloud") if c != d.context]
    if len(d.ownerships) == 1 and d.context != "cloud":
        trials.append({"ownership": "any"})
    wider = [k for k in RENT_KINDS if k in d.rent_kinds or k in DEFAULT_RENT_KINDS]
    if "rent" in d.ownerships and len(wider) > len(set(d.rent_kinds)):  # rent_kinds narrowed: the default kinds too
        trials.append({"rent_kinds": wider})
    if any(c.deadline for c in problem.classes):
        trials += [{"batch_scale": f} for f in BATCH_SCALES]
    out: list[Diagnosis] = []
    for change in trials:
        other = rebuild(**change)
        if other is not None and run(other).feasible:
            kind = "workload" if "batch_scale" in change else "deployment"
            relax = {
                ("jobs[].global_batch_tokens x" if k == "batch_scale" else f"deployment.{k}"): (
                    f"[{', '.join(v)}]" if isinstance(v, list) else v  # a YAML list, as the workload writes it
                )
                for k, v in change.items()
            }
            out.append(WorkloadLever(kind, relax, d.context))
            if kind == "workload":
                break  # the smallest batch increase that works is enough
    return out


def _combined(problem: Problem, free: Solution, run: Callable[..., Solution]) -> list[Diagnosis]:
    """No single lever works: keep one limit as written and lift the others to what the cheapest
    plan under that one limit needs (e.g. keep the deadline, raise the budget and the power
    limit); else lift them all to what the cheapest unconstrained plan needs. Each re-solved."""
    base, out = baseline(problem), list[Diagnosis]()
    lifted = _relaxed(base)
    for family in FAMILIES:
        keep = family.keep(problem, base)
        if keep is None:
            continue
        s = run(problem, lifted.but(**keep))
        if s.feasible:
            entry = _combination(problem, s, run, family.name)
            if entry:
                out.append(entry)
    if not out:
        entry = _combination(problem, free, run, None)
        out = [entry] if entry else []
    return out


def _combination(
    problem: Problem, plan: Solution, run: Callable[..., Solution], kept: str | None
) -> Combination | None:
    """The limits `plan` needs beyond the workload's, applied together and re-solved."""
    sc = baseline(problem)
    needs = [n for family in FAMILIES if (n := family.need(problem, plan)) is not None]
    if not needs:
        return None
    for n in needs:
        sc = sc.but(**n.change)
    if not run(problem, sc).feasible:
        return None
    relaxation = {k: v for n in needs for k, v in n.relaxation.items()}
    return Combination(kept, tuple((n.family, n.needed) for n in needs), relaxation)


def _combined_elsewhere(rebuild: Rebuild, run: Callable[..., Solution]) -> list[Diagnosis]:
    """Another deployment (renting allowed) with every limit lifted: does any plan exist at all?"""
    for change in ({"ownership": "any"}, {"context": "datacenter", "ownership": "any"}, {"context": "cloud"}):
        other = rebuild(**change)
        if other is None:
            continue
        s = run(other, _relaxed(baseline(other)))
        if s.feasible:
            return [Elsewhere(change, s.objective_usd or 0.0, makespan_hours(other, s) / 24)]
    return []
