"""Hard constraints as invariants: every plan that leaves `plan()` is checked, from the Solution's
own numbers (GPUs bought, servers, jobs placed), against what the user wrote down -- budget, power,
GPU count, deadlines, stock, the allow/deny lists, the rules and the ownership -- whatever step
produced it (the least-cost MILP, the idle-GPU polish, the makespan sweep). A violation is a bug:
`check` raises ConstraintViolation (exit 1), so a broken plan is refused, never printed."""
from __future__ import annotations

import math

from advisor.errors import AdvisorError
from advisor.solve.candidates import Problem, _count_context, _forbids, _rule_context
from advisor.solve.scenario import Scenario, baseline

# Solver tolerances: HiGHS meets a row to ~1e-6 relative; a cent on a budget, a watt on a limit.
USD_TOLERANCE = 0.01
REL_TOLERANCE = 1e-7
KW_TOLERANCE = 1e-3
HOUR_TOLERANCE = 1e-6


class ConstraintViolation(AdvisorError):
    """The optimizer produced a plan that breaks a hard constraint of its workload (a bug)."""

    exit_code = 1


def _over(value: float, limit: float, absolute: float) -> bool:
    return value > limit + max(absolute, REL_TOLERANCE * abs(limit))


def violations(problem: Problem, sol, scenario: Scenario | None = None) -> list[str]:
    """What `sol` breaks of `scenario` (the workload as written by default); empty when it holds."""
    if not sol.feasible:
        return []
    sc = scenario or baseline(problem)
    wl, out = problem.workload, []
    sel = wl.gpus
    stock: dict[str, int] = dict(sel.stock or {})
    # every job placed exactly once, on a GPU the lists, the ownership and the rules allow
    placed = [0.0] * len(problem.classes)
    for c, n in sol.assignment:
        placed[c.cls] += n
        if sel.allow is not None and c.gpu not in sel.allow:
            out.append(f"{c.gpu} is not in gpus.allow")
        if c.gpu in sel.deny:
            out.append(f"{c.gpu} is in gpus.deny")
        if sc.only_gpu is not None and c.gpu != sc.only_gpu:
            out.append(f"{c.gpu} is used where only {sc.only_gpu} may be")
        if wl.deployment.ownership not in ("any", c.ownership) or (wl.deployment.context == "cloud"
                                                                   and c.ownership == "buy"):
            out.append(f"{c.gpu} is {'bought' if c.ownership == 'buy' else 'rented'} against "
                       f"deployment.ownership {wl.deployment.ownership}")
        gpu = problem.catalog.gpus[c.gpu]
        ctx = _rule_context(gpu, wl, problem.classes[c.cls], c.ownership)
        found = problem.rules.evaluate(ctx, problem.as_of, per_count=False)
        found += problem.rules.evaluate(_count_context(ctx, c.count, c.estimate), problem.as_of, per_count=True)
        if _forbids(found):
            out.append(f"{c.gpu} ({c.ownership}) is forbidden by rule "
                       f"{', '.join(sorted(f.rule for f in found if f.severity == 'forbid'))}")
        due = sc.deadline(problem.classes[c.cls].deadline)
        if due is not None and _over(c.hours, due, HOUR_TOLERANCE):
            out.append(f"{problem.classes[c.cls].name(wl)} takes {c.hours:.6g} h, past its {due:.6g} h deadline")
    for k, cls in enumerate(problem.classes):
        if abs(placed[k] - cls.multiplicity) > 1e-6:
            out.append(f"{cls.name(wl)}: {placed[k]:g} of {cls.multiplicity} jobs placed")
    # serving: every request class's peak rate sustained, on allowed GPUs and ownership
    serving = list(getattr(sol, "serving", []))
    serve_classes = list(getattr(problem, "serve_classes", []))
    rate = [0.0] * len(serve_classes)
    for c, n in serving:
        rate[c.cls] += c.requests_per_s * n
        if (sel.allow is not None and c.gpu not in sel.allow) or c.gpu in sel.deny:
            out.append(f"{c.gpu} serves {serve_classes[c.cls].name} against gpus.allow/deny")
        if c.ownership == "buy" and wl.deployment.ownership == "rent" or (
                c.ownership == "rent" and wl.deployment.ownership == "buy"):
            out.append(f"{c.gpu} serving is {c.ownership} against deployment.ownership {wl.deployment.ownership}")
    for k, sc_k in enumerate(serve_classes):
        peak = sc_k.peak_rps * getattr(sc, "traffic_factor", 1.0)
        if rate[k] < peak * (1 - 1e-9) - 1e-9:
            out.append(f"{sc_k.name}: replicas sustain {rate[k]:.6g} requests/s of the {peak:.6g} at peak")
    # owned fleet: capacity by deadline level, stock, servers' slots
    horizon = problem.costs.horizon_hours
    for g, n in sol.bought.items():
        if n > stock.get(g, math.inf):
            out.append(f"{n} {g} bought, above the stock of {stock[g]}")
        used = [c for c, _ in sol.assignment if c.gpu == g and c.ownership == "buy"]
        mine = [(c, m) for c, m in serving if c.gpu == g and c.ownership == "buy"]
        serve_gpus = sum(c.gpus * m for c, m in mine)
        lent = sum(c.gpus * m * serve_classes[c.cls].off_peak_hours / 24.0 for c, m in mine)
        kept = sum(c.gpus * m for c, m in mine if serve_classes[c.cls].off_peak_hours <= 0)
        if serve_gpus > n:
            out.append(f"serving uses {serve_gpus} {g} but only {n} are bought")
        if used and max(c.count for c in used) + kept > n:
            out.append(f"a job uses {max(c.count for c in used)} {g} beside {kept} serving, but only {n} are bought")
        dues = sorted({sc.deadline(problem.classes[c.cls].deadline) or horizon for c in used})
        for limit in dues:
            hours = sum(c.gpu_hours * m for c, m in sol.assignment if c.gpu == g and c.ownership == "buy"
                        and (sc.deadline(problem.classes[c.cls].deadline) or horizon) <= limit)
            room = limit * (n - serve_gpus + lent)
            if _over(hours, room, HOUR_TOLERANCE * max(1.0, room)):
                out.append(f"{g}: {hours:.6g} GPU-hours due within {limit:.6g} h on {n} GPUs ({serve_gpus} serving)")
        slots = sum(s.slots * sol.servers.get(g, {}).get(s.id, 0) for s in problem.servers.get(g, []))
        if problem.servers.get(g) and slots < n:
            out.append(f"{n} {g} bought but servers hold only {slots}")
    for c, _ in sol.assignment:
        if c.ownership == "rent" and c.count > stock.get(c.gpu, math.inf):
            out.append(f"{c.count} {c.gpu} rented at once, above the stock of {stock[c.gpu]}")
    # fleet size, as the gpu_count constraint counts it
    fleet = sum(sol.bought.values()) + sum(c.count * n for c, n in sol.assignment if c.ownership == "rent") \
        + sum(c.gpus * n for c, n in serving if c.ownership == "rent")
    if sc.gpu_lower is not None and fleet < sc.gpu_lower - 1e-6:
        out.append(f"{fleet:g} GPUs, below the {sc.gpu_lower} asked for")
    if sc.gpu_upper is not None and _over(fleet, sc.gpu_upper, 1e-6):
        out.append(f"{fleet:g} GPUs, above the {sc.gpu_upper} allowed")
    # power of the owned hardware, recomputed from the catalog's figures
    if sc.power_limit_kw is not None and sol.bought:
        kw = sum(problem.gpu_kw[g] * n for g, n in sol.bought.items())
        for g, servers in sol.servers.items():
            opts = {s.id: s for s in problem.servers.get(g, [])}
            kw += sum(opts[sid].overhead_kw * n for sid, n in servers.items())
        if _over(kw, sc.power_limit_kw, KW_TOLERANCE):
            out.append(f"owned hardware draws {kw:.6g} kW, above the {sc.power_limit_kw:g} kW limit")
    # budget: the total the plan reports and optimises (present value when the economics give one)
    total = sum(v or 0.0 for v in (sol.cost_breakdown_pv or sol.cost_breakdown).values())
    if abs(total - sol.objective_usd) > max(USD_TOLERANCE, REL_TOLERANCE * abs(total)):
        out.append(f"the cost breakdown sums to {total:.2f}, not the total {sol.objective_usd:.2f}")
    if sc.budget_usd is not None and _over(max(total, sol.objective_usd), sc.budget_usd, USD_TOLERANCE):
        out.append(f"the plan costs ${max(total, sol.objective_usd):,.2f}, above the budget of ${sc.budget_usd:,.2f}")
    return out


def check(problem: Problem, sol, scenario: Scenario | None = None) -> None:
    """Raise ConstraintViolation when `sol` breaks a hard constraint of `scenario` (the workload)."""
    found = violations(problem, sol, scenario)
    if found:
        raise ConstraintViolation(
            "the optimizer produced a plan that breaks a hard constraint of the workload, so it is refused "
            f"rather than printed: {'; '.join(found)}. This is a bug in gpu-advisor: please report it with "
            "the workload file")
