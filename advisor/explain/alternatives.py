"""Why each allowed GPU type was not chosen: one primary reason per GPU, by a fixed precedence,
then the others (shown with `advisor plan --verbose`).

Precedence (PRECEDENCE below): a rule that forbids it; then availability (no price for any
ownership the workload allows); then what makes it unable to run the job (memory, an unknown
figure, the deadline even on the most GPUs); then the limit that makes a plan using only it
infeasible, named with its number ("needs >= 12 GPUs to meet the deadline; gpus.max is 8"),
found by re-solving; then cost (the best plan using only it, re-solved). The primary reason is
first in `reasons` and carries `primary: true`.
"""
from __future__ import annotations

import math
from typing import Any

from advisor.explain.binding import fleet_size, owned_kw, power_origin
from advisor.perf import evaluate, min_gpus, params_from
from advisor.solve.candidates import Problem
from advisor.solve.milp import Solution, solve
from advisor.solve.scenario import Scenario, baseline

AVAILABILITY = ("no-price", "no-purchase-price", "no-rental-price", "no-server")
CAPABILITY = ("memory", "estimate", "deadline")
PRECEDENCE = ("rule", "availability", "capability", "constraint", "cost", "other", "warning")


def _rank(reason: dict, unavailable: bool) -> int:
    """Position of a reason in PRECEDENCE (smaller first)."""
    if reason.get("rule"):
        return PRECEDENCE.index("warning" if reason.get("severity") == "warn" else "rule")
    code = reason.get("code")
    if code in AVAILABILITY:
        return PRECEDENCE.index("availability" if unavailable else "other")
    if code in CAPABILITY:
        return PRECEDENCE.index("capability")
    if code in ("gpu_count", "power", "budget", "deadline_limit", "combined", "slots", "stock"):
        return PRECEDENCE.index("constraint")
    return PRECEDENCE.index("cost" if code == "cost" else "other")


def ordered(problem: Problem, gid: str, reasons: list[dict]) -> list[dict]:
    """The reasons of one GPU, merged (no price at all is one reason, not two contradictory ones),
    explained (`none` becomes what the estimate says) and sorted by PRECEDENCE; the first gets
    primary: true."""
    gpu = problem.catalog.gpus[gid]
    codes = {r.get("code") for r in reasons}
    wl = problem.workload
    allowed = {"rent"} if wl.deployment.context == "cloud" else (
        {"buy", "rent"} if wl.deployment.ownership == "any" else {wl.deployment.ownership})
    missing = ({"buy"} if "no-purchase-price" in codes or "no-server" in codes else set()) | (
        {"rent"} if "no-rental-price" in codes else set())
    unavailable = allowed <= missing
    out = [dict(r) for r in reasons if r.get("code") != "none"]
    if {"no-purchase-price", "no-rental-price"} <= codes:
        out = [r for r in out if r.get("code") not in ("no-purchase-price", "no-rental-price")]
        out.append({"rule": None, "code": "no-price",
                    "message": f"{gpu.name} has neither a sourced purchase price nor a sourced rental rate in "
                               "the catalog, so it can be neither bought nor rented (give a quote with --catalog)"})
    if unavailable and len(allowed) == 1:
        only = next(iter(allowed))
        missing_code = "no-purchase-price" if only == "buy" else "no-rental-price"
        for r in out:
            if r.get("code") == missing_code:
                what = "purchase price" if only == "buy" else "on-demand rental rate"
                r["message"] = (f"{gpu.name} has no sourced {what} in the catalog, and this workload only "
                                f"{'buys' if only == 'buy' else 'rents'} (deployment.ownership: {only}); give a "
                                "quote with --catalog")
    if not out:
        out.append(_unexplained(problem, gid))
    out.sort(key=lambda r: _rank(r, unavailable))
    for i, r in enumerate(out):
        r["primary"] = i == 0
    return out


def _unexplained(problem: Problem, gid: str) -> dict:
    """A GPU with no candidate and no recorded reason: ask the estimate why (an unknown figure)."""
    gpu, params = problem.catalog.gpus[gid], params_from(problem.catalog)
    for cls in problem.classes:
        n = min_gpus(cls.spec, gpu, params)
        est = evaluate(cls.spec, gpu, n or 1, params)
        if est.reason:
            return {"rule": None, "code": "estimate",
                    "message": f"{cls.name(problem.workload)}: {est.reason}, so its speed cannot be estimated"}
    return {"rule": None, "code": "estimate",
            "message": f"{gpu.name}: no GPU count gives a training speed the estimate can state"}


def alternatives(problem: Problem, sol: Solution, time_limit: float | None) -> dict:
    """gpu id -> {forced_cost_usd, forced_ownership, reasons} for every considered GPU type the plan
    did not use (rejected ones included), primary reason first."""
    used = sol.gpu_types()
    out: dict[str, dict[str, Any]] = {}
    for gid in problem.considered:
        if gid in used:
            continue
        if gid in problem.rejected:
            out[gid] = {"forced_cost_usd": None, "reasons": ordered(problem, gid, problem.rejected[gid].reasons)}
            continue
        base = baseline(problem).but(only_gpu=gid)
        forced = solve(problem, base, time_limit=time_limit)
        name = problem.catalog.gpus[gid].name
        if not forced.feasible:
            out[gid] = {"forced_cost_usd": None,
                        "reasons": ordered(problem, gid, infeasible_reasons(problem, base, name, time_limit))}
            continue
        cost, chosen = forced.objective_usd or 0.0, sol.objective_usd or 0.0
        delta = cost - chosen
        pct = 100 * delta / chosen if chosen else 0.0
        what = ", ".join(sorted({f"{c.count}x {c.ownership}" for c in forced.chosen}
                                | {f"{sum(c.gpus * n for c, n in forced.serving if c.ownership == o)}x {o} serving"
                                   for o in {c.ownership for c, _ in forced.serving}}))
        reason = {"rule": None, "code": "cost",
                  "message": f"the best plan using only {name} ({what}) costs ${forced.objective_usd:,.0f}, "
                             f"${delta:,.0f} ({pct:+.1f}%) more than the chosen plan"}
        owns = sorted({c.ownership for c in forced.chosen})
        out[gid] = {"forced_cost_usd": forced.objective_usd, "forced_ownership": owns[0] if len(owns) == 1 else "mixed",
                    "reasons": ordered(problem, gid, [reason])}
    return out


def infeasible_reasons(problem: Problem, sc: Scenario, name: str, time_limit: float | None) -> list[dict]:
    """Why no plan under `sc` exists (used for one GPU type: sc.only_gpu): each limit whose removal
    alone gives a plan, with the number it would need, found by re-solving; else that they
    conflict together; else that nothing hosts it."""
    wl = problem.workload

    def ok(s: Scenario) -> Solution:
        return solve(problem, s, time_limit=time_limit)

    out: list[dict[str, Any]] = []
    if sc.gpu_upper is not None:
        free = ok(sc.but(gpu_upper=None))
        if free.feasible:
            n = smallest_int(lambda u: ok(sc.but(gpu_upper=u)).feasible, sc.gpu_upper, fleet_size(free))
            why = "to meet the deadline" if any(c.deadline for c in problem.classes) else "to hold and run the job"
            cap = f"gpus.count is {wl.gpus.count}" if wl.gpus.count is not None else f"gpus.max is {sc.gpu_upper}"
            out.append({"rule": None, "code": "gpu_count", "needed": n, "limit": sc.gpu_upper,
                        "message": f"{name} needs >= {n} GPUs {why}; {cap}"})
    if sc.power_limit_kw is not None:
        free = ok(sc.but(power_limit_kw=None))
        if free.feasible:
            kw = owned_kw(problem, free)
            out.append({"rule": None, "code": "power", "needed": round(kw, 3),
                        "limit": sc.power_limit_kw, "limit_rule": problem.power_rule,
                        "message": f"the cheapest plan using only {name} draws {kw:.2f} kW; the power limit is "
                                   f"{sc.power_limit_kw:g} kW{power_origin(problem)}"})
    if sc.budget_usd is not None:
        free = ok(sc.but(budget_usd=None))
        if free.feasible:
            cost = free.objective_usd or 0.0
            out.append({"rule": None, "code": "budget", "needed": round(cost, 2), "limit": sc.budget_usd,
                        "message": f"the cheapest plan using only {name} costs ${cost:,.0f}; "
                                   f"the budget is ${sc.budget_usd:,.0f}"})
    deadlines = [c.deadline for c in problem.classes if c.deadline]
    if deadlines and ok(sc.but(deadline_scale=1e9)).feasible:
        scale = smallest(lambda f: ok(sc.but(deadline_scale=f)).feasible, 1.0, 2.0)
        days = min(deadlines) * scale / 24
        out.append({"rule": None, "code": "deadline_limit", "needed": round(days, 3),
                    "limit": min(deadlines) / 24,
                    "message": f"{name} needs >= {days:.1f} days even at its fastest allowed plan; "
                               f"the deadline is {min(deadlines) / 24:g} days"})
    if out:
        return [{k: v for k, v in r.items() if v is not None or k == "rule"} for r in out]
    relaxed = sc.but(gpu_upper=None, power_limit_kw=None, budget_usd=None, deadline_scale=1e9)
    if ok(relaxed).feasible:
        return [{"rule": None, "code": "combined",
                 "message": f"no plan using only {name} meets the deadline, budget, power and GPU-count limits "
                            "together, though no single one of them alone rules it out"}]
    return [{"rule": None, "code": "slots",
             "message": f"even without the deadline, budget, power and GPU-count limits no plan uses only {name}: "
                        "no allowed machine (or costed network between machines) holds the GPUs it needs"}]


def smallest(ok, lo: float, hi: float, steps: int = 12) -> float:
    """Smallest x >= lo with ok(x) (ok monotone), to 0.5%: grow hi until ok, then bisect."""
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > 1e12:
            return math.inf
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        if hi - lo <= 0.005 * hi:
            break
    return hi


def smallest_int(ok, lo: int, hi: int) -> int:
    """Smallest n in (lo, hi] with ok(n), given not ok(lo) and ok(hi) (ok monotone)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
