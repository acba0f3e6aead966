"""Why no plan exists, in numbers a buyer can act on: the shortfall (GPU-hours the work needs,
the cheapest plan's cost against the budget, kW against the power limit, days against the
deadline), then the levers -- deadline, budget, power, GPU count, batch size, ownership,
deployment context -- each one verified by re-solving with it changed. When no single lever is
enough, the smallest combined change found (also re-solved); when nothing within the bounds
tried helps, a plain statement of those bounds. Never an empty list.
"""
from __future__ import annotations

import math
from typing import Any

from advisor.explain.alternatives import smallest
from advisor.explain.binding import fleet_size, owned_kw, power_origin
from advisor.solve.candidates import Problem
from advisor.solve.milp import Solution, solve
from advisor.solve.scenario import Scenario, baseline

NO_DEADLINE = 1e9          # deadline_scale that removes every deadline
BATCH_SCALES = (2.0, 4.0)  # the batch-size lever: each job's global batch this many times larger
ARTICLE = {"office": "an office", "datacenter": "a datacenter", "cloud": "the cloud"}


def _relaxed(sc: Scenario) -> Scenario:
    return sc.but(deadline_scale=NO_DEADLINE, budget_usd=None, power_limit_kw=None, gpu_upper=None)


def diagnose(problem: Problem, time_limit: float | None, rebuild=None) -> list[dict]:
    """For an infeasible workload: the shortfall, then every single relaxation that restores a
    plan (verified), else the smallest combined change found, else what was tried."""
    def run(p: Problem, s: Scenario | None = None) -> Solution:
        return solve(p, s or baseline(p), time_limit=time_limit)

    wl, base = problem.workload, baseline(problem)
    out: list[dict] = []
    for cls in (c for c, cs in zip(problem.classes, problem.candidates) if not cs):
        out.append({"constraint": f"job:{cls.name(wl)}", "relaxation": None, "kind": "shortfall",
                    "message": f"no allowed GPU can run {cls.name(wl)} at all; see `rejected` for each GPU's reasons"})
    free = run(problem, _relaxed(base)) if not out else Solution("infeasible", None)
    out += shortfall(problem, free)
    levers = _single_levers(problem, base, free, run) if free.feasible else []
    levers += _workload_levers(problem, rebuild, run)
    if not levers and free.feasible:
        levers = _combined(problem, free, run)
    if not levers and rebuild is not None:
        levers = _combined_elsewhere(problem, rebuild, run)
    if not levers:
        levers = [{"constraint": "combined", "relaxation": None, "kind": "nothing",
                   "message": "nothing within the bounds tried gives a plan: no deadline, no budget, no power limit, "
                              "up to 65,536 GPUs per job, a global batch up to 4x larger, buying or renting, in an "
                              "office, a datacenter or the cloud"}]
    return levers + out


def shortfall(problem: Problem, free: Solution) -> list[dict]:
    """What the work needs against what the workload allows, from the candidates and from the
    cheapest plan with every limit removed (`free`)."""
    wl = problem.workload
    out: list[dict[str, Any]] = []
    need: dict[str, float] = {}
    for gid in problem.considered:
        per_class = [min((c.gpu_hours for c in cs if c.gpu == gid), default=math.inf) * cls.multiplicity
                     for cls, cs in zip(problem.classes, problem.candidates)]
        if all(h < math.inf for h in per_class):
            need[gid] = sum(per_class)
    if need:
        best = min(sorted(need), key=lambda g: need[g])
        out.append({"constraint": "shortfall:work", "relaxation": None, "kind": "shortfall", "gpu": best,
                    "gpu_hours": round(need[best]),
                    "message": f"the work needs about {_si(need[best])} GPU-hours on {problem.catalog.gpus[best].name} "
                               "(the fewest of any allowed GPU)"})
    if not free.feasible:
        return out
    cost = free.objective_usd or 0.0
    if wl.budget_usd is not None and cost > wl.budget_usd:
        out.append({"constraint": "shortfall:budget", "relaxation": None, "kind": "shortfall", "needed": round(cost, 2),
                    "message": f"the cheapest plan with no limits costs ${cost:,.0f}; the ${wl.budget_usd:,.0f} budget "
                               f"is {_share(wl.budget_usd, cost)} of it"})
    kw = owned_kw(problem, free)
    if problem.power_limit_kw is not None and kw > problem.power_limit_kw:
        out.append({"constraint": "shortfall:power", "relaxation": None, "kind": "shortfall", "needed": round(kw, 3),
                    "message": f"the cheapest plan with no limits draws {kw:.2f} kW; the power limit is {problem.power_limit_kw:g} kW"
                               f"{power_origin(problem)}"})
    dl = [c.deadline for c in problem.classes if c.deadline]
    if dl and free.makespan_hours > min(dl):
        out.append({"constraint": "shortfall:deadline", "relaxation": None, "kind": "shortfall",
                    "needed": round(free.makespan_hours / 24, 3),
                    "message": f"the cheapest plan with no limits takes {free.makespan_hours / 24:.1f} days; the deadline is "
                               f"{min(dl) / 24:g} days"})
    n = fleet_size(free)
    if wl.gpus.upper is not None and n > wl.gpus.upper:
        out.append({"constraint": "shortfall:gpu_count", "relaxation": None, "kind": "shortfall", "needed": n,
                    "message": f"the cheapest plan with no limits uses {n:,} GPUs; at most {wl.gpus.upper:,} are allowed"})
    return out


def _single_levers(problem: Problem, base: Scenario, free: Solution, run) -> list[dict]:
    """Each limit of the workload relaxed alone, to the least value that gives a plan (re-solved)."""
    wl = problem.workload
    out: list[dict[str, Any]] = []
    ok = lambda s: run(problem, s).feasible
    if any(c.deadline for c in problem.classes) and ok(base.but(deadline_scale=NO_DEADLINE)):
        scale = smallest(lambda f: ok(base.but(deadline_scale=f)), 1.0, 2.0)
        shortest = min(c.deadline for c in problem.classes if c.deadline)
        out.append({"constraint": "deadline", "relaxation": {"deadline_scale": round(scale, 3)}, "kind": "lever",
                    "message": f"extend the deadlines by {100 * (scale - 1):.0f}% "
                               f"(the {shortest / 24:g}-day deadline to {shortest * scale / 24:.1f} days)"})
    if wl.budget_usd is not None:
        s = run(problem, base.but(budget_usd=None))
        if s.feasible:
            need = math.ceil(s.objective_usd or 0.0)
            out.append({"constraint": "budget", "relaxation": {"budget_usd": need}, "kind": "lever",
                        "message": f"raise the budget from ${wl.budget_usd:,.0f} to ${need:,} (the budget is "
                                   f"{_share(wl.budget_usd, need)} of the cheapest plan)"})
    if problem.power_limit_kw is not None and ok(base.but(power_limit_kw=None)):
        need = smallest(lambda kw: ok(base.but(power_limit_kw=kw)), problem.power_limit_kw, problem.power_limit_kw * 2)
        out.append({"constraint": "power", "relaxation": {"power_limit_kw": round(need, 2)}, "kind": "lever",
                    "rule": problem.power_rule,
                    "message": f"raise the power limit from {problem.power_limit_kw:g} kW to {need:.2f} kW "
                               f"(deployment.power_limit_kw){power_origin(problem)}"})
    if wl.gpus.upper is not None and ok(base.but(gpu_upper=None)):
        n = smallest_int(lambda u: ok(base.but(gpu_upper=u)), wl.gpus.upper)
        field = "gpus.count" if wl.gpus.count is not None else "gpus.max"
        out.append({"constraint": "gpu_count", "relaxation": {"gpus.max": n}, "kind": "lever",
                    "message": f"allow {n} GPUs instead of {'exactly' if wl.gpus.count else 'at most'} "
                               f"{wl.gpus.upper} ({field})"})
    return out


def _workload_levers(problem: Problem, rebuild, run) -> list[dict]:
    """Changes that need new candidates: another deployment context, renting as well as buying,
    a larger global batch (more GPUs can then share one step). Each re-planned from scratch."""
    if rebuild is None:
        return []
    d = problem.workload.deployment
    trials: list[tuple[dict[str, Any], str]] = [({"context": c}, f"deploying in {ARTICLE[c]} instead of {ARTICLE[d.context]} gives a plan")
              for c in ("office", "datacenter", "cloud") if c != d.context]
    if len(d.ownerships) == 1 and d.context != "cloud":
        trials.append(({"ownership": "any"}, "allowing rented as well as bought GPUs (ownership: any) gives a plan"))
    if any(c.deadline for c in problem.classes):
        trials += [({"batch_scale": f}, (f"a global batch {f:g}x larger (jobs[].global_batch_tokens) lets more GPUs "
                                         "share each step and gives a plan")) for f in BATCH_SCALES]
    out: list[dict[str, Any]] = []
    for change, message in trials:
        other = rebuild(**change)
        if other is not None and run(other).feasible:
            kind = "workload" if "batch_scale" in change else "deployment"
            relax = {("jobs[].global_batch_tokens x" if k == "batch_scale" else f"deployment.{k}"): v
                     for k, v in change.items()}
            out.append({"constraint": kind, "message": message, "relaxation": relax, "kind": "lever"})
            if kind == "workload":
                break  # the smallest batch increase that works is enough
    return out


def _combined(problem: Problem, free: Solution, run) -> list[dict]:
    """No single lever works: keep one limit as written and lift the others to what the cheapest
    plan under that one limit needs (e.g. keep the deadline, raise the budget and the power
    limit); else lift them all to what the cheapest unconstrained plan needs. Each re-solved."""
    base, out = baseline(problem), []
    lifted = _relaxed(base)
    keeps: list[tuple[str, dict[str, Any]]] = [("deadline", {"deadline_scale": 1.0}), ("budget", {"budget_usd": base.budget_usd}),
             ("power limit", {"power_limit_kw": base.power_limit_kw}), ("GPU count", {"gpu_upper": base.gpu_upper})]
    for what, keep in keeps:
        if next(iter(keep.values())) is None or (what == "deadline" and not any(c.deadline for c in problem.classes)):
            continue
        s = run(problem, lifted.but(**keep))
        if s.feasible:
            entry = _combination(problem, s, run, f"keep the {what} as written and raise ")
            if entry:
                out.append(entry)
    if not out:
        entry = _combination(problem, free, run, "raise ")
        out = [entry] if entry else []
    return out


def _combination(problem: Problem, plan: Solution, run, lead: str) -> dict | None:
    """The limits `plan` needs beyond the workload's, applied together and re-solved."""
    wl, sc = problem.workload, baseline(problem)
    change: dict[str, Any] = {}
    words: list[str] = []
    dl = [c.deadline for c in problem.classes if c.deadline]
    if dl and plan.makespan_hours > min(dl):
        scale = plan.makespan_hours / min(dl) * (1 + 1e-6)
        sc, change["deadline_scale"] = sc.but(deadline_scale=scale), round(scale, 4)
        words.append(f"the deadline to {plan.makespan_hours / 24:,.1f} days")
    if wl.budget_usd is not None and (plan.objective_usd or 0.0) > wl.budget_usd:
        need = math.ceil(plan.objective_usd or 0.0)
        sc, change["budget_usd"] = sc.but(budget_usd=need), need
        words.append(f"the budget to ${need:,}")
    kw = owned_kw(problem, plan)
    if problem.power_limit_kw is not None and kw > problem.power_limit_kw:
        need_kw = round(kw + 0.005, 2)
        sc, change["power_limit_kw"] = sc.but(power_limit_kw=need_kw), need_kw
        words.append(f"the power limit to {need_kw:.2f} kW")
    n = fleet_size(plan)
    if wl.gpus.upper is not None and n > wl.gpus.upper:
        sc, change["gpus.max"] = sc.but(gpu_upper=n), n
        words.append(f"the GPU count to {n:,}")
    if not change or not run(problem, sc).feasible:
        return None
    return {"constraint": "combined", "relaxation": change, "kind": "lever",
            "message": f"no single change is enough; together: {lead}" + ", ".join(words)
                       + " (re-solved: a plan exists)"}


def _combined_elsewhere(problem: Problem, rebuild, run) -> list[dict]:
    """Another deployment (renting allowed) with every limit lifted: does any plan exist at all?"""
    for change in ({"ownership": "any"}, {"context": "datacenter", "ownership": "any"}, {"context": "cloud"}):
        other = rebuild(**change)
        if other is None:
            continue
        s = run(other, _relaxed(baseline(other)))
        if s.feasible:
            where = ", ".join(f"deployment.{k}: {v}" for k, v in change.items())
            return [{"constraint": "combined", "kind": "lever",
                     "relaxation": {**{f"deployment.{k}": v for k, v in change.items()}, "limits": "none"},
                     "message": f"only with {where} and no deadline, budget, power or GPU-count limit does a plan "
                                f"exist (re-solved: ${s.objective_usd:,.0f}, {s.makespan_hours / 24:,.1f} days)"}]
    return []


def _share(part: float, whole: float) -> str:
    pct = 100 * part / whole if whole else 0.0
    return f"{pct:.2g}%" if pct < 1 else f"{pct:.0f}%"


def _si(x: float) -> str:
    for div, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if x >= div:
            return f"{x / div:,.3g}{unit}"
    return f"{x:,.0f}"


def smallest_int(ok, lo: int) -> int:
    hi = max(lo * 2, lo + 1)
    while not ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
