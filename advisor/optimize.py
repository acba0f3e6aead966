"""The MILP: which candidate configuration each job runs on, and how many GPUs of each type to buy.

Names follow docs/model.md:
  x[j,c]   binary, job j runs on candidate c (GPU type, count, buy|rent)
  N[g]     integer, GPUs of type g bought
  assign_j           sum_c x[j,c] = 1
  fleet_j_g          N[g] >= n_c * x[j,c] summed over j's buy candidates on g
  capacity_g_D       owned GPU-hours of jobs due by D fit in N[g] * D hours
  gpu_count_min/max  bought GPUs + rented GPUs within gpus.min/max (or = gpus.count)
  power              kW of owned GPUs <= power_limit_kw
  budget             total cost <= budget_usd
Objective: purchase + hosting over the horizon for owned GPUs, plus each chosen candidate's
energy (buy) or rental (rent) cost. Solved with HiGHS through PuLP; CBC when highspy is missing.
"""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass

import pulp

from .candidates import Candidate, Problem
from .errors import SolverError

TIE_BREAK_USD_PER_HOUR = 1e-6   # among equal-cost plans, prefer the one that finishes sooner


@dataclass
class Solution:
    status: str                          # optimal | feasible | infeasible
    objective_usd: float | None
    chosen: list                         # Candidate per job
    bought: dict                         # gpu -> count
    cost_breakdown: dict
    solver: dict


def _solver(time_limit: float | None):
    try:
        import highspy  # noqa: F401
        return "highs", pulp.HiGHS(msg=False, timeLimit=time_limit, threads=1, random_seed=0)
    except ImportError:
        return "cbc", pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=1)


def solve(problem: Problem, *, only_gpu: str | None = None, deadline_scale: float = 1.0,
          budget_usd: float | None | bool = False, fix_prices: dict | None = None,
          time_limit: float | None = 30.0) -> Solution:
    """Solve the plan MILP. `only_gpu` restricts every job to one GPU type (forced-cost
    explanations); `deadline_scale`, `budget_usd` and `fix_prices` re-solve counterfactuals."""
    wl = problem.workload
    budget = wl.budget_usd if budget_usd is False else budget_usd
    prices = dict(problem.unit_price)
    prices.update(fix_prices or {})
    costs = problem.costs
    horizon_months = costs.horizon_hours / 730.0

    cands: list[list[Candidate]] = []
    for j, job_cands in enumerate(problem.candidates):
        keep = []
        for c in job_cands:
            if only_gpu is not None and c.gpu != only_gpu:
                continue
            deadline = wl.jobs[j].deadline
            if deadline is not None and c.hours > deadline * deadline_scale:
                continue
            keep.append(c)
        cands.append(keep)
    if any(not cs for cs in cands):
        return Solution("infeasible", None, [], {}, {}, {"name": None})

    prob = pulp.LpProblem("gpu_plan", pulp.LpMinimize)
    x = {(j, k): prob.add_variable(f"x_{j}_{k}", cat="Binary") for j, cs in enumerate(cands) for k in range(len(cs))}
    owned_types = sorted({c.gpu for cs in cands for c in cs if c.ownership == "buy"})
    big = {g: max(c.count for cs in cands for c in cs if c.gpu == g and c.ownership == "buy") * max(1, len(cands))
           for g in owned_types}
    N = {g: prob.add_variable(f"N_{_safe(g)}", lowBound=0, upBound=big[g], cat="Integer") for g in owned_types}

    per_gpu_owned = {g: prices[g] + problem.gpu_kw[g] * costs.hosting_usd_per_kw_month * horizon_months
                     for g in owned_types}
    run = pulp.lpSum(c.run_cost_usd * x[j, k] for j, cs in enumerate(cands) for k, c in enumerate(cs))
    owned = pulp.lpSum(per_gpu_owned[g] * N[g] for g in owned_types)
    tie = pulp.lpSum(TIE_BREAK_USD_PER_HOUR * c.hours * x[j, k] for j, cs in enumerate(cands) for k, c in enumerate(cs))
    prob += owned + run + tie

    for j, cs in enumerate(cands):
        prob += pulp.lpSum(x[j, k] for k in range(len(cs))) == 1, f"assign_{j}"
        for g in owned_types:
            terms = [c.count * x[j, k] for k, c in enumerate(cs) if c.gpu == g and c.ownership == "buy"]
            if terms:
                prob += N[g] >= pulp.lpSum(terms), f"fleet_{j}_{_safe(g)}"
    deadlines = sorted({(wl.jobs[j].deadline * deadline_scale if wl.jobs[j].deadline else costs.horizon_hours)
                        for j in range(len(cands))})
    for g in owned_types:
        for level, due in enumerate(deadlines):
            terms = [c.gpu_hours * x[j, k] for j, cs in enumerate(cands) for k, c in enumerate(cs)
                     if c.gpu == g and c.ownership == "buy"
                     and (wl.jobs[j].deadline * deadline_scale if wl.jobs[j].deadline else costs.horizon_hours) <= due]
            if terms:
                prob += pulp.lpSum(terms) <= due * N[g], f"capacity_{_safe(g)}_{level}"
    fleet = pulp.lpSum(N.values()) + pulp.lpSum(
        c.count * x[j, k] for j, cs in enumerate(cands) for k, c in enumerate(cs) if c.ownership == "rent")
    if wl.gpus.lower is not None:
        prob += fleet >= wl.gpus.lower, "gpu_count_min"
    if wl.gpus.upper is not None:
        prob += fleet <= wl.gpus.upper, "gpu_count_max"
    if wl.deployment.power_limit_kw is not None and owned_types:
        prob += pulp.lpSum(problem.gpu_kw[g] * N[g] for g in owned_types) <= wl.deployment.power_limit_kw, "power"
    if budget is not None:
        prob += owned + run <= budget, "budget"

    name, solver = _solver(time_limit)
    try:
        with _quiet_stdout():
            prob.solve(solver)
    except pulp.PulpSolverError as exc:
        raise SolverError(f"the {name} solver failed: {exc}") from None
    status = pulp.LpStatus[prob.status]
    if prob.sol_status == pulp.LpSolutionInfeasible or status == "Infeasible":
        return Solution("infeasible", None, [], {}, {}, {"name": name, "status": status})
    if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        limit = f" within the {time_limit:g} s time limit" if time_limit is not None else ""
        raise SolverError(f"the {name} solver found no plan{limit} (status {status}); raise --time-limit "
                          "or simplify the workload")
    proven = prob.sol_status == 1
    gap = _gap(prob, name) if proven else None

    chosen = []
    for j, cs in enumerate(cands):
        k = max(range(len(cs)), key=lambda k: (x[j, k].value() or 0, -k))
        chosen.append(cs[k])
    bought = {g: int(round(N[g].value() or 0)) for g in owned_types if round(N[g].value() or 0) > 0}
    breakdown = {
        "purchase_usd": float(sum(prices[g] * n for g, n in bought.items())),
        "servers_usd": 0.0,
        "energy_usd": float(sum(c.run_cost_usd for c in chosen if c.ownership == "buy")),
        "hosting_usd": float(sum(problem.gpu_kw[g] * costs.hosting_usd_per_kw_month * horizon_months * n
                                 for g, n in bought.items())),
        "rental_usd": float(sum(c.run_cost_usd for c in chosen if c.ownership == "rent")),
    }
    total = sum(breakdown.values())
    return Solution("optimal" if proven else "feasible", total, chosen, bought, breakdown,
                    {"name": name, "status": status, "proven_optimal": proven, "gap": gap})


@contextlib.contextmanager
def _quiet_stdout():
    """highspy prints a banner from C++ whenever a Highs object is built, whatever the options;
    keep it out of our stdout (which may be JSON) by pointing file descriptor 1 at /dev/null."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (embedded use): nothing to protect
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _safe(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")


def _gap(prob, name: str) -> float | None:
    if name != "highs":
        return None
    try:
        return float(prob.solverModel.getInfo().mip_gap)
    except Exception:  # the LP-only or presolved-away case has no gap to report
        return 0.0
