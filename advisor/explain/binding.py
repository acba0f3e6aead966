"""One definition of a binding constraint, used by the constraint table, the sensitivity lines,
the marginal value of a day and the memo.

A constraint BINDS when its slack is below BINDING_TOLERANCE of its limit (deadlines, budget,
power: continuous quantities), or is zero (GPU counts and stock: whole GPUs). A constraint with
more slack does not bind, even if relaxing it further would let a cheaper plan in: that is what
the marginal values (sensitivity.py) measure, by re-solving, and they word themselves so as not
to contradict this flag.
"""
from __future__ import annotations

from advisor.solve import ledger
from advisor.solve.candidates import Problem
from advisor.solve.milp import Solution

BINDING_TOLERANCE = 0.01    # a continuous constraint binds when its slack is under 1% of its limit


def binds(slack: float, limit: float | None, *, whole: bool = False) -> bool:
    """The one test: slack under BINDING_TOLERANCE x limit (or zero, for whole-GPU counts)."""
    if whole or not limit:
        return slack <= 0
    return slack < BINDING_TOLERANCE * abs(limit)


def binding(problem: Problem, sol: Solution) -> list[dict]:
    """Each constraint of the chosen plan with its slack and `binding` flag (see `binds`)."""
    wl = problem.workload
    out = []
    for k, cls in enumerate(problem.classes):
        if cls.deadline is None:
            continue
        hours = max(c.hours for c, _ in sol.assignment if c.cls == k)
        name = cls.name(wl)
        slack = (cls.deadline - hours) / 24
        out.append({"constraint": f"deadline:{name}", "binding": binds(slack, cls.deadline / 24),
                    "message": f"{name} finishes in {hours / 24:.2f} of {cls.deadline / 24:g} days",
                    "slack": round(slack, 4), "unit": "days"})
    total = sol.objective_usd or 0.0
    if wl.budget_usd is not None:
        out.append({"constraint": "budget", "binding": binds(wl.budget_usd - total, wl.budget_usd),
                    "message": f"uses ${total:,.0f} of the ${wl.budget_usd:,.0f} budget",
                    "slack": round(wl.budget_usd - total, 2), "unit": "USD"})
    if problem.power_limit_kw is not None:
        kw = owned_kw(problem, sol)
        limit = problem.power_limit_kw
        out.append({"constraint": "power", "binding": binds(limit - kw, limit),
                    "message": f"owned GPUs and servers draw {kw:.2f} of {limit:g} kW{power_origin(problem)}",
                    "slack": round(limit - kw, 4), "unit": "kW", "rule": problem.power_rule})
    fleet = fleet_size(sol)
    sel = wl.gpus
    if sel.count is not None:
        out.append({"constraint": "gpu_count", "binding": True, "slack": 0, "unit": "GPUs",
                    "message": f"exactly {sel.count} GPUs, as the workload asks"})
    else:
        if sel.min is not None:
            out.append({"constraint": "gpu_count_min", "binding": binds(fleet - sel.min, sel.min, whole=True),
                        "unit": "GPUs", "message": f"{fleet} GPUs, at least {sel.min} asked",
                        "slack": fleet - sel.min})
        if sel.max is not None:
            out.append({"constraint": "gpu_count_max", "binding": binds(sel.max - fleet, sel.max, whole=True),
                        "unit": "GPUs", "message": f"{fleet} GPUs, at most {sel.max} allowed",
                        "slack": sel.max - fleet})
    for gid, limit in sorted((sel.stock or {}).items()):
        used = sol.bought.get(gid, 0)
        if gid in sol.gpu_types():
            out.append({"constraint": f"stock:{gid}", "binding": binds(limit - used, limit, whole=True),
                        "unit": "GPUs", "message": f"{used} of the {limit} {gid} in stock bought",
                        "slack": limit - used})
    return out


def deadline_binds(problem: Problem, sol: Solution) -> bool:
    """Does some job's deadline bind in `sol` (same test as the constraint table)?"""
    return any(b["binding"] for b in binding(problem, sol) if b["constraint"].startswith("deadline:"))


def deadline_slack_days(problem: Problem, sol: Solution) -> float | None:
    """The smallest deadline slack of the plan, in days (None without deadlines)."""
    slacks = [b["slack"] for b in binding(problem, sol) if b["constraint"].startswith("deadline:")]
    return min(slacks) if slacks else None


def power_origin(problem: Problem) -> str:
    """' (PWR001: the office default, ...)' when a rule, not the workload, set the power limit."""
    limit = problem.power_limit
    return f" ({problem.power_rule}: {limit.message})" if problem.power_rule and limit else ""


def owned_kw(problem: Problem, sol: Solution) -> float:
    """kW drawn by the bought GPUs and their servers (the `power` row's left-hand side)."""
    return ledger.owned_kw(problem, sol)


def fleet_size(sol: Solution) -> int:
    return (sum(sol.bought.values()) + sum(c.count * round(n) for c, n in sol.assignment if c.ownership == "rent")
            + sum(c.gpus * n for c, n in sol.serving if c.ownership == "rent"))
