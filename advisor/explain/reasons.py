"""Why this plan, in numbers: the slack of every constraint, what each unchosen GPU type would
have cost, break-even prices, the value of a day of deadline and of more budget, and for an
infeasible workload the smallest single change that makes a plan exist. Every number here comes
from re-solving the MILP (optimize.solve) with one thing changed, never from a heuristic.
"""
from __future__ import annotations

import math

from advisor.solve.candidates import Problem
from advisor.solve.milp import Solution, solve
from advisor.solve.scenario import baseline

BISECTION_STEPS = 12


def binding(problem: Problem, sol: Solution) -> list[dict]:
    """Each constraint of the chosen plan with its slack; `binding` is true when it is (nearly) tight."""
    wl = problem.workload
    out = []
    for k, cls in enumerate(problem.classes):
        if cls.deadline is None:
            continue
        hours = max(c.hours for c, _ in sol.assignment if c.cls == k)
        name = cls.name(wl)
        slack = (cls.deadline - hours) / 24
        out.append({"constraint": f"deadline:{name}", "binding": slack < 0.05 * cls.deadline / 24,
                    "message": f"{name} finishes in {hours / 24:.2f} of {cls.deadline / 24:g} days",
                    "slack": round(slack, 4), "unit": "days"})
    total = sol.objective_usd or 0.0
    if wl.budget_usd is not None:
        out.append({"constraint": "budget", "binding": wl.budget_usd - total < 0.01 * wl.budget_usd,
                    "message": f"uses ${total:,.0f} of the ${wl.budget_usd:,.0f} budget",
                    "slack": round(wl.budget_usd - total, 2), "unit": "USD"})
    if problem.power_limit_kw is not None:
        kw = owned_kw(problem, sol)
        limit = problem.power_limit_kw
        out.append({"constraint": "power", "binding": limit - kw < 0.05 * limit,
                    "message": f"owned GPUs and servers draw {kw:.2f} of {limit:g} kW{_power_origin(problem)}",
                    "slack": round(limit - kw, 4), "unit": "kW", "rule": problem.power_rule})
    fleet = fleet_size(sol)
    sel = wl.gpus
    if sel.count is not None:
        out.append({"constraint": "gpu_count", "binding": True, "slack": 0, "unit": "GPUs",
                    "message": f"exactly {sel.count} GPUs, as the workload asks"})
    else:
        if sel.min is not None:
            out.append({"constraint": "gpu_count_min", "binding": fleet == sel.min, "unit": "GPUs",
                        "message": f"{fleet} GPUs, at least {sel.min} asked", "slack": fleet - sel.min})
        if sel.max is not None:
            out.append({"constraint": "gpu_count_max", "binding": fleet == sel.max, "unit": "GPUs",
                        "message": f"{fleet} GPUs, at most {sel.max} allowed", "slack": sel.max - fleet})
    for gid, limit in sorted((sel.stock or {}).items()):
        used = sol.bought.get(gid, 0)
        if gid in sol.gpu_types():
            out.append({"constraint": f"stock:{gid}", "binding": used >= limit, "unit": "GPUs",
                        "message": f"{used} of the {limit} {gid} in stock bought", "slack": limit - used})
    return out


def _power_origin(problem: Problem) -> str:
    """' (PWR001: the office default, ...)' when a rule, not the workload, set the power limit."""
    return f" ({problem.power_rule}: {problem.power_limit.message})" if problem.power_rule else ""


def owned_kw(problem: Problem, sol: Solution) -> float:
    kw = sum(problem.gpu_kw[g] * n for g, n in sol.bought.items())
    for g, servers in sol.servers.items():
        opts = {s.id: s for s in problem.servers.get(g, [])}
        kw += sum(opts[sid].overhead_kw * n for sid, n in servers.items())
    return kw


def fleet_size(sol: Solution) -> int:
    return (sum(sol.bought.values()) + sum(c.count * round(n) for c, n in sol.assignment if c.ownership == "rent")
            + sum(c.gpus * n for c, n in sol.serving if c.ownership == "rent"))


def alternatives(problem: Problem, sol: Solution, time_limit: float | None) -> dict:
    """gpu id -> {forced_cost_usd, reasons} for every allowed GPU type the plan did not use."""
    used = sol.gpu_types()
    out = {}
    for gid in problem.considered:
        if gid in used or gid in problem.rejected:
            continue
        forced = solve(problem, baseline(problem).but(only_gpu=gid), time_limit=time_limit)
        name = problem.catalog.gpus[gid].name
        if not forced.feasible:
            reason = {"rule": None, "code": "no-feasible-plan",
                      "message": f"no plan using only {name} meets every constraint "
                                 "(budget, power, GPU count or deadline)"}
            out[gid] = {"forced_cost_usd": None, "reasons": [reason]}
            continue
        delta = forced.objective_usd - sol.objective_usd
        pct = 100 * delta / sol.objective_usd if sol.objective_usd else 0.0
        what = ", ".join(sorted({f"{c.count}x {c.ownership}" for c in forced.chosen}
                                | {f"{sum(c.gpus * n for c, n in forced.serving if c.ownership == o)}x {o} serving"
                                   for o in {c.ownership for c, _ in forced.serving}}))
        reason = {"rule": None, "code": "cost",
                  "message": f"the best plan using only {name} ({what}) costs ${forced.objective_usd:,.0f}, "
                             f"${delta:,.0f} ({pct:+.1f}%) more than the chosen plan"}
        out[gid] = {"forced_cost_usd": forced.objective_usd, "reasons": [reason]}
    return out


def _price(problem: Problem, gid: str, sol: Solution) -> tuple[str, float | None]:
    if gid in sol.bought:
        return "purchase price", problem.unit_price[gid]
    return "rental rate", problem.rent_rate.get(gid)


def break_even(problem: Problem, sol: Solution, alts: dict, time_limit: float | None) -> list[dict]:
    """How far the chosen GPU's price may rise, and the runner-up's fall, before the choice changes
    (bisection on a price factor, re-solving at each step)."""
    out = []
    if not sol.feasible:
        return out
    spend = {}
    for c, n in list(sol.assignment) + list(sol.serving):
        spend[c.gpu] = spend.get(c.gpu, 0.0) + c.run_cost_usd * n
    for g, n in sol.bought.items():
        spend[g] = spend.get(g, 0.0) + (problem.unit_price[g] or 0.0) * n
    chosen = max(sorted(spend), key=lambda g: spend[g])
    what, price = _price(problem, chosen, sol)

    def still_chosen(f):
        s = solve(problem, baseline(problem).but(price_factor={chosen: f}), time_limit=time_limit)
        return s.feasible and chosen in s.gpu_types()

    hi = 2.0
    while hi < 64 and still_chosen(hi):
        hi *= 2
    if hi >= 64:
        out.append({"gpu": chosen, "direction": "rise", "what": what, "factor": None, "price": None,
                    "message": f"{chosen} stays the choice even at 64x its {what}: no allowed alternative "
                               "meets the constraints"})
    else:
        _, hi = _boundary(still_chosen, hi / 2 if hi > 2 else 1.0, hi)
        out.append({"gpu": chosen, "direction": "rise", "what": what, "factor": round(hi, 3),
                    "price": round(price * hi, 2) if price else None,
                    "message": f"{chosen} stays the choice until its {what} rises about {100 * (hi - 1):.0f}%"
                               + (f" (to ${price * hi:,.2f})" if price else "")})
    costed = {g: a["forced_cost_usd"] for g, a in alts.items() if a["forced_cost_usd"] is not None}
    if costed:
        runner = min(sorted(costed), key=lambda g: costed[g])
        r_what = "purchase price" if problem.unit_price.get(runner) and any(
            c.gpu == runner and c.ownership == "buy" for cs in problem.candidates + problem.serve_candidates
            for c in cs) else "rental rate"
        r_price = problem.unit_price[runner] if r_what == "purchase price" else problem.rent_rate.get(runner)

        def wins(f):
            s = solve(problem, baseline(problem).but(price_factor={runner: f}), time_limit=time_limit)
            return s.feasible and runner in s.gpu_types()

        if not wins(0.0):
            out.append({"gpu": runner, "direction": "fall", "what": r_what, "factor": None, "price": None,
                        "message": f"{runner} (runner-up) would not be chosen even if its GPUs were free: "
                                   "other costs of its plan (servers, energy, hosting) stay higher"})
        else:
            lo, _ = _boundary(wins, 0.0, 1.0)
            out.append({"gpu": runner, "direction": "fall", "what": r_what, "factor": round(lo, 3),
                        "price": round(r_price * lo, 2) if r_price else None,
                        "message": f"{runner} (runner-up) becomes the choice if its {r_what} falls about "
                                   f"{100 * (1 - lo):.0f}%" + (f" (to ${r_price * lo:,.2f})" if r_price else "")})
    return out


def _boundary(ok, lo: float, hi: float) -> tuple[float, float]:
    """Bisection between lo (ok) and hi (not ok): the last ok and first not-ok factor found."""
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo, hi


def marginal_values(problem: Problem, sol: Solution, time_limit: float | None) -> list[dict]:
    """Savings from one more day on every deadline and from 10% more budget (re-solved)."""
    wl = problem.workload
    out = []
    if not sol.feasible:
        return out
    if any(cls.deadline for cls in problem.classes):
        s = solve(problem, baseline(problem).but(deadline_extra_hours=24.0), time_limit=time_limit)
        saving = sol.objective_usd - s.objective_usd if s.feasible else 0.0
        out.append({"change": "deadline +1 day", "saving_usd": round(max(saving, 0.0), 2),
                    "message": (f"one more day on every deadline saves ${saving:,.0f}" if saving > 0.5
                                else "one more day on the deadline saves nothing: the deadline does not bind")})
    if wl.budget_usd is not None:
        s = solve(problem, baseline(problem).but(budget_usd=wl.budget_usd * 1.1), time_limit=time_limit)
        saving = sol.objective_usd - s.objective_usd if s.feasible else 0.0
        out.append({"change": "budget +10%", "saving_usd": round(max(saving, 0.0), 2),
                    "message": (f"10% more budget saves ${saving:,.0f}" if saving > 0.5
                                else "10% more budget changes nothing: the budget does not bind")})
    return out


def diagnose(problem: Problem, time_limit: float | None, rebuild=None) -> list[dict]:
    """For an infeasible workload: each constraint group in conflict and the smallest single
    relaxation that restores a plan, found by re-solving. `rebuild(context=...)` builds the
    problem again for another deployment context (candidates depend on it)."""
    wl = problem.workload
    out = []
    base = baseline(problem)
    base_ok = solve(problem, base.but(deadline_scale=1e9, budget_usd=None, power_limit_kw=None, gpu_upper=None),
                    time_limit=time_limit).feasible
    for k, cls in enumerate(problem.classes):
        if not problem.candidates[k]:
            name = cls.name(wl)
            out.append({"constraint": f"job:{name}", "relaxation": None,
                        "message": f"no allowed GPU can run {name} at all; see `rejected` for each GPU's reasons"})
    if out or not base_ok:
        out += _deployment_changes(problem, rebuild, time_limit)
        return out or [{"constraint": "combined", "relaxation": None,
                        "message": "no plan exists even without the deadline, budget, power and GPU-count limits"}]
    if any(cls.deadline for cls in problem.classes) and solve(problem, base.but(deadline_scale=1e9), time_limit=time_limit).feasible:
        scale = _smallest(lambda f: solve(problem, base.but(deadline_scale=f), time_limit=time_limit).feasible, 1.0, 2.0)
        shortest = min(cls.deadline for cls in problem.classes if cls.deadline)
        out.append({"constraint": "deadline", "relaxation": {"deadline_scale": round(scale, 3)},
                    "message": f"extend the deadlines by {100 * (scale - 1):.0f}% "
                               f"(the {shortest / 24:g}-day deadline to {shortest * scale / 24:.1f} days)"})
    if wl.budget_usd is not None:
        free = solve(problem, base.but(budget_usd=None), time_limit=time_limit)
        if free.feasible:
            out.append({"constraint": "budget", "relaxation": {"budget_usd": math.ceil(free.objective_usd)},
                        "message": f"raise the budget from ${wl.budget_usd:,.0f} to ${math.ceil(free.objective_usd):,}"})
    if problem.power_limit_kw is not None and solve(problem, base.but(power_limit_kw=None), time_limit=time_limit).feasible:
        need = _smallest(lambda kw: solve(problem, base.but(power_limit_kw=kw), time_limit=time_limit).feasible,
                         problem.power_limit_kw, problem.power_limit_kw * 2)
        out.append({"constraint": "power", "relaxation": {"power_limit_kw": round(need, 2)},
                    "rule": problem.power_rule,
                    "message": f"raise the power limit from {problem.power_limit_kw:g} kW to {need:.2f} kW "
                               f"(deployment.power_limit_kw){_power_origin(problem)}"})
    if wl.gpus.upper is not None and solve(problem, base.but(gpu_upper=None), time_limit=time_limit).feasible:
        n = _smallest_int(lambda u: solve(problem, base.but(gpu_upper=u), time_limit=time_limit).feasible, wl.gpus.upper)
        out.append({"constraint": "gpu_count", "relaxation": {"gpus.max": n},
                    "message": f"allow {n} GPUs instead of at most {wl.gpus.upper}"})
    out += _deployment_changes(problem, rebuild, time_limit)
    return out or [{"constraint": "combined", "relaxation": None,
                    "message": "no single change to the deadline, budget, power limit, GPU count or deployment "
                               "restores a plan; several of them conflict together"}]


def _deployment_changes(problem: Problem, rebuild, time_limit) -> list[dict]:
    """Another deployment context, or renting as well as buying, re-planned from scratch."""
    if rebuild is None:
        return []
    d = problem.workload.deployment
    article = {"office": "an office", "datacenter": "a datacenter", "cloud": "the cloud"}
    trials = [({"context": c}, f"deploying in {article[c]} instead of {article[d.context]} gives a plan")
              for c in ("office", "datacenter", "cloud") if c != d.context]
    if len(d.ownerships) == 1 and d.context != "cloud":
        trials.append(({"ownership": "any"}, "allowing rented as well as bought GPUs (ownership: any) gives a plan"))
    out = []
    for change, message in trials:
        other = rebuild(**change)
        if other is not None and solve(other, time_limit=time_limit).feasible:
            out.append({"constraint": "deployment", "message": message,
                        "relaxation": {f"deployment.{k}": v for k, v in change.items()}})
    return out


def _smallest(ok, lo: float, hi: float) -> float:
    """Smallest x >= lo with ok(x) (ok monotone), to 1%: grow hi until ok, then bisect."""
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > 1e12:
            return math.inf
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        if hi - lo <= 0.005 * hi:
            break
    return hi


def _smallest_int(ok, lo: int) -> int:
    hi = max(lo * 2, lo + 1)
    while not ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
