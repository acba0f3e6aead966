"""Why this plan: slack of every constraint, what each unchosen GPU would have cost, and, for an
infeasible workload, which constraint groups conflict. Every number comes from re-solving the
MILP, not from a heuristic.
"""
from __future__ import annotations

from .candidates import Problem
from .optimize import Solution, solve


def binding(problem: Problem, sol: Solution) -> list[dict]:
    """Each constraint of the chosen plan with its slack; `binding` is true when slack is ~0."""
    wl = problem.workload
    out = []
    for job, c in zip(wl.jobs, sol.chosen):
        name = wl.job_name(c.job)
        if job.deadline is not None:
            slack_days = (job.deadline - c.hours) / 24
            out.append({"constraint": f"deadline:{name}", "binding": slack_days < 0.05 * job.deadline / 24,
                        "message": f"{name} finishes in {c.hours / 24:.2f} of {job.deadline / 24:g} days",
                        "slack": round(slack_days, 4), "unit": "days"})
    total = sol.objective_usd or 0.0
    if wl.budget_usd is not None:
        out.append({"constraint": "budget", "binding": wl.budget_usd - total < 0.01 * wl.budget_usd,
                    "message": f"uses ${total:,.0f} of the ${wl.budget_usd:,.0f} budget",
                    "slack": round(wl.budget_usd - total, 2), "unit": "USD"})
    if wl.deployment.power_limit_kw is not None:
        kw = sum(problem.gpu_kw[g] * n for g, n in sol.bought.items())
        limit = wl.deployment.power_limit_kw
        out.append({"constraint": "power", "binding": limit - kw < 0.05 * limit,
                    "message": f"owned GPUs draw {kw:.2f} of {limit:g} kW", "slack": round(limit - kw, 4),
                    "unit": "kW"})
    fleet = sum(sol.bought.values()) + sum(c.count for c in sol.chosen if c.ownership == "rent")
    if wl.gpus.count is not None:
        out.append({"constraint": "gpu_count", "binding": True,
                    "message": f"exactly {wl.gpus.count} GPUs, as the workload asks", "slack": 0, "unit": "GPUs"})
    else:
        if wl.gpus.min is not None:
            out.append({"constraint": "gpu_count_min", "binding": fleet == wl.gpus.min,
                        "message": f"{fleet} GPUs, at least {wl.gpus.min} asked", "slack": fleet - wl.gpus.min,
                        "unit": "GPUs"})
        if wl.gpus.max is not None:
            out.append({"constraint": "gpu_count_max", "binding": fleet == wl.gpus.max,
                        "message": f"{fleet} GPUs, at most {wl.gpus.max} allowed", "slack": wl.gpus.max - fleet,
                        "unit": "GPUs"})
    return out


def alternatives(problem: Problem, sol: Solution, time_limit: float | None) -> dict:
    """gpu id -> {forced_cost_usd, reasons} for every allowed GPU type the plan did not use."""
    used = {c.gpu for c in sol.chosen}
    out = {}
    for gid in problem.considered:
        if gid in used or gid in problem.rejected:
            continue
        forced = solve(problem, only_gpu=gid, time_limit=time_limit)
        name = problem.catalog.gpus[gid].name
        if forced.objective_usd is None:
            reason = {"rule": None, "code": "no-feasible-plan",
                      "message": f"no plan using only {name} meets every constraint"}
            out[gid] = {"forced_cost_usd": None, "reasons": [reason]}
            continue
        delta = forced.objective_usd - sol.objective_usd
        pct = 100 * delta / sol.objective_usd if sol.objective_usd else 0.0
        counts = ", ".join(f"{c.count}x {c.ownership}" for c in forced.chosen)
        reason = {"rule": None, "code": "cost",
                  "message": f"the best plan using only {name} ({counts}) costs ${forced.objective_usd:,.0f}, "
                             f"${delta:,.0f} ({pct:+.1f}%) more than the chosen plan"}
        out[gid] = {"forced_cost_usd": round(forced.objective_usd, 2), "reasons": [reason]}
    return out


def diagnose(problem: Problem, time_limit: float | None) -> list[dict]:
    """For an infeasible workload: jobs nothing can run, then each constraint group whose removal
    alone restores a plan (found by re-solving without it)."""
    wl = problem.workload
    out = []
    for j, cands in enumerate(problem.candidates):
        if not cands:
            name = wl.job_name(j)
            out.append({"constraint": f"job:{name}",
                        "message": f"no allowed GPU can run {name}; see `rejected` for each GPU's reasons",
                        "relaxation": None})
    if out:
        return out
    trials = []
    if wl.budget_usd is not None:
        trials.append(("budget", {"budget_usd": None}, "remove the budget cap"))
    if any(job.deadline for job in wl.jobs):
        trials.append(("deadline", {"deadline_scale": 1e6}, "remove the deadlines"))
    for group, kwargs, text in trials:
        relaxed = solve(problem, time_limit=time_limit, **kwargs)
        if relaxed.objective_usd is not None:
            out.append({"constraint": group, "message": f"{text}: a plan then exists at "
                        f"${relaxed.objective_usd:,.0f}", "relaxation": text})
    if not out:
        out.append({"constraint": "combined", "message": "no single constraint group's removal restores a plan; "
                    "check the GPU count limits, power limit and deadlines together", "relaxation": None})
    return out
