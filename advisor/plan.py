"""advisor.plan(workload) -> Plan: the one-way flow of DESIGN.md §1 in one function.

workload -> candidates (rules + estimate per job and GPU) -> optimize (MILP) -> explain -> Plan.
A Plan is a dict with exactly the keys of the JSON contract (DESIGN.md §5), so a script reads
plan["total_cost_usd"] the same way it reads `advisor plan --format json`.
"""
from __future__ import annotations

import datetime as dt
import json

from advisor._version import __version__
from advisor.data.catalog import STALE_MONTHS, Catalog, age_months, load_catalog
from advisor.data.rules import RuleSet, load_rules
from advisor.errors import InputError
from advisor.explain.reasons import (
    alternatives,
    binding,
    break_even,
    diagnose,
    marginal_values,
)
from advisor.explain.tradeoffs import cost_time_points, value_points
from advisor.inputs.workload import Workload
from advisor.perf import min_gpus, params_from
from advisor.solve.candidates import Problem, build_problem
from advisor.solve.milp import Solution, frontier, solve, solve_fastest

SCHEMA_VERSION = 1


class Plan(dict):
    """The plan as the JSON contract's mapping, with helpers for scripts. A plan made by `plan()`
    also keeps what it was made from (`workload`, `catalog`, `rules`), so `advisor.memo(plan)`
    needs nothing else; these are attributes, not JSON keys."""

    workload = None
    catalog = None
    rules = None
    problem = None        # the candidates the plan was chosen from (advisor.memo renders from it)
    chart_data = None     # cost-time and value-per-dollar points, when plan(..., charts=True)
    workload_file = None  # the file's path, when advisor.plan() was given one (the memo quotes it)

    def __repr__(self) -> str:
        """Short: the status, the cost and what to buy or rent (the mapping itself is long)."""
        items = ", ".join(f"{i['count']}x {i['gpu']} ({i['ownership']})" for i in self.get("purchase", []))
        cost = self.get("total_cost_usd")
        money = f" ${cost:,.0f}" if isinstance(cost, (int, float)) else ""
        return f"<Plan {self.get('status')}{money}{': ' + items if items else ''}>"

    @property
    def feasible(self) -> bool:
        return self["status"] != "infeasible"

    def to_json(self) -> str:
        return json.dumps(self, indent=2, ensure_ascii=False) + "\n"


def prepare(workload: Workload, catalog: Catalog | None = None, rules: RuleSet | None = None,
            as_of: dt.date | None = None) -> Problem:
    """Candidates for every job: rules and estimates applied, nothing solved yet."""
    catalog = catalog or load_catalog()
    rules = rules or load_rules()
    return build_problem(workload, catalog, rules, params_from(catalog), as_of or dt.date.today())


def plan(workload: Workload, *, catalog: Catalog | None = None, rules: RuleSet | None = None,
         as_of: dt.date | None = None, objective: str = "cost", time_limit: float | None = 30.0,
         explain: bool = True, charts: bool = False) -> Plan:
    """Choose the cheapest GPU mix for `workload` (or, with objective='time', the fastest one
    within the budget) and say why. charts=True also computes what a memo's charts show (the
    cheapest plan per GPU type under a sweep of completion times, speed per dollar), once."""
    if objective not in ("cost", "time"):
        raise InputError(f"objective is 'cost' or 'time', got {objective!r}", field="objective")
    problem = prepare(workload, catalog, rules, as_of)
    sol = solve(problem, time_limit=time_limit) if objective == "cost" else solve_fastest(problem, time_limit=time_limit)
    result = assemble(problem, sol, objective=objective, time_limit=time_limit, explain=explain)
    if charts:
        result.chart_data = chart_data(problem, time_limit)
    return result


def chart_data(problem: Problem, time_limit: float | None = 30.0) -> dict:
    """What a memo's charts show, computed by re-solving and estimating (explain/tradeoffs.py)."""
    return {"cost_time": cost_time_points(problem, time_limit),
            "value": value_points(problem, params_from(problem.catalog))}


def min_gpus_by_job(problem: Problem, plan: dict) -> dict:
    """Job name -> the fewest GPUs of its chosen type that hold it (the memo says whether memory
    size set the GPU count)."""
    params = params_from(problem.catalog)
    out = {}
    for j in plan["jobs"]:
        cls = next((c for c in problem.classes if c.name(problem.workload) == j["name"]), problem.classes[0])
        out[j["name"]] = min_gpus(cls.spec, problem.catalog.gpus[j["gpu"]], params)
    return out


def pareto(workload: Workload, *, catalog: Catalog | None = None, rules: RuleSet | None = None,
           as_of: dt.date | None = None, points: int = 24, time_limit: float | None = 30.0) -> dict:
    """The cost-versus-time Pareto front (`advisor frontier`), from up to `points` makespan caps."""
    problem = prepare(workload, catalog, rules, as_of)
    front = []
    for sol in frontier(problem, points=points, time_limit=time_limit):
        front.append({"makespan_days": sol.makespan_hours / 24, "total_cost_usd": sol.objective_usd,
                      "purchase": _purchase(problem, sol), "status": sol.status})
    return _rounded({"schema_version": SCHEMA_VERSION, "name": workload.name, "as_of": problem.as_of.isoformat(),
                     "points": front})


def _rebuilder(problem: Problem):
    def rebuild(**deployment_changes):
        d = problem.workload.deployment.model_copy(update=deployment_changes)
        if d.context == "cloud" and d.ownership == "buy":
            d = d.model_copy(update={"ownership": "any"})
        wl = problem.workload.model_copy(update={"deployment": d})
        return build_problem(wl, problem.catalog, problem.rules, params_from(problem.catalog), problem.as_of)
    return rebuild


def assemble(problem: Problem, sol: Solution, *, objective: str = "cost", time_limit: float | None = 30.0,
             explain: bool = True) -> Plan:
    wl, catalog = problem.workload, problem.catalog
    rejected = {gid: {"gpu": gid, "reasons": r.reasons, "forced_cost_usd": None}
                for gid, r in problem.rejected.items()}
    sensitivity = {"break_even": [], "marginal": []}
    if sol.feasible and explain:
        alts = alternatives(problem, sol, time_limit)
        for gid, alt in alts.items():
            rejected[gid] = {"gpu": gid, **alt}
        if objective == "cost":
            sensitivity = {"break_even": break_even(problem, sol, alts, time_limit),
                           "marginal": marginal_values(problem, sol, time_limit)}
    jobs = []
    for c, n in sol.assignment:
        e = c.estimate
        cls = problem.classes[c.cls]
        jobs.append({"name": cls.name(wl), "gpu": c.gpu, "gpu_count": c.count, "ownership": c.ownership,
                     "copies": n, "tokens_per_s": e.tokens_per_s, "wall_days": c.hours / 24,
                     "memory_per_gpu_gb": e.memory_per_gpu_gb, "mfu": e.mfu, "binding_factor": e.binding,
                     "step_breakdown": e.step_breakdown, "layout": e.layout})
    data = {
        "schema_version": SCHEMA_VERSION,
        "name": wl.name,
        "objective": objective,
        "status": sol.status,
        "total_cost_usd": sol.objective_usd,
        "cost_breakdown": sol.cost_breakdown or dict.fromkeys(
            ("purchase_usd", "servers_usd", "energy_usd", "hosting_usd", "rental_usd")),
        "purchase": _purchase(problem, sol),
        "servers": _servers(problem, sol),
        "jobs": jobs,
        "rejected": [rejected[g] for g in sorted(rejected)],
        "binding": binding(problem, sol) if sol.feasible else [],
        "sensitivity": sensitivity,
        "diagnosis": [] if sol.feasible else diagnose(problem, time_limit, _rebuilder(problem) if explain else None),
        "warnings": _warnings(problem, sol),
        "assumptions": {
            "deployment": wl.deployment.context, "region": wl.deployment.region,
            "ownership": wl.deployment.ownership, "horizon_months": wl.deployment.horizon_months,
            "electricity_usd_per_kwh": problem.costs.electricity_usd_per_kwh, "pue": problem.costs.pue,
            "hosting_usd_per_kw_month": problem.costs.hosting_usd_per_kw_month,
            "power_limit_kw": problem.power_limit_kw,
            "power_limit_rule": problem.power_rule,
        },
        "solver": {k: v for k, v in sol.solver.items() if k != "status"},
        "sources": _sources(problem, sol),
        "as_of": problem.as_of.isoformat(),
        "tool_version": __version__,
        "catalog_digest": catalog.digest,
    }
    result = Plan(_rounded(data))
    result.workload, result.catalog, result.rules, result.problem = wl, catalog, problem.rules, problem
    return result


def _purchase(problem: Problem, sol: Solution) -> list[dict]:
    items = [{"gpu": g, "count": n, "ownership": "buy", "unit_price_usd": problem.unit_price[g], "gpu_hours": None}
             for g, n in sorted(sol.bought.items())]
    rented: dict[str, dict] = {}
    for c, n in sol.assignment:
        if c.ownership == "rent":
            rate = problem.catalog.gpus[c.gpu].rental
            entry = rented.setdefault(c.gpu, {"gpu": c.gpu, "count": 0, "ownership": "rent",
                                              "unit_price_usd": rate.usd_per_gpu_hour, "gpu_hours": 0.0,
                                              "provider": rate.provider, "as_of": rate.as_of})
            entry["count"] = max(entry["count"], c.count)
            entry["gpu_hours"] += c.gpu_hours * n
    return items + [rented[g] for g in sorted(rented)]


def _servers(problem: Problem, sol: Solution) -> list[dict]:
    out = []
    for g, servers in sorted(sol.servers.items()):
        opts = {s.id: s for s in problem.servers.get(g, [])}
        for sid, n in sorted(servers.items()):
            out.append({"server": sid, "gpu": g, "count": n, "unit_price_usd": opts[sid].price_usd,
                        "networked": min(n, sol.networked.get(g, 0))})
    return out


def _warnings(problem: Problem, sol: Solution) -> list[dict]:
    out = []

    def add(entry):
        if entry not in out:
            out.append(entry)

    def stale(what: str, price: str, as_of: str | None):
        months = age_months(as_of, problem.as_of)
        if months is not None and months > STALE_MONTHS:
            add({"rule": None, "code": "stale-price",
                 "message": f"{what}'s {price} is from {as_of}, {months} months before "
                            f"{problem.as_of.isoformat()}; get a current quote"})

    for c in sol.chosen:
        for w in c.warnings:
            add(w)
        for note in c.estimate.notes:
            add({"rule": None, "code": "estimate", "message": note})
    d = problem.workload.deployment
    for gid in sorted(sol.gpu_types()):
        gpu = problem.catalog.gpus[gid]
        if d.ownership == "any" and d.context != "cloud" and gpu.availability in ("rent only", "buy only"):
            missing = "purchase price" if gpu.availability == "rent only" else "on-demand rental rate"
            add({"rule": None, "code": gpu.availability.replace(" ", "-"),
                 "message": f"{gpu.name} is {gpu.availability}: the catalog holds no sourced {missing} "
                            "for it (give a quote with --catalog)"})
        dated = []
        if gid in sol.bought and gpu.prices.purchase:
            dated.append(("purchase price", gpu.prices.purchase.as_of))
        if any(c.gpu == gid and c.ownership == "rent" for c in sol.chosen) and gpu.rental:
            dated.append(("rental rate", gpu.rental.as_of))
        for what, as_of in dated:
            stale(gpu.name, what, as_of)
    for servers in sol.servers.values():
        for sid in sorted(servers):
            server = problem.catalog.servers[sid]
            stale(server.name, "purchase price", server.purchase.as_of)
    if sol.solver.get("proven_optimal") is False:
        add({"rule": None, "code": "not-proven-optimal",
             "message": f"the solver stopped at its time limit with a plan not proven optimal "
                        f"(gap {sol.solver.get('gap')}); raise --time-limit for a proof"})
    return out


def _sources(problem: Problem, sol: Solution) -> list[dict]:
    """Every source behind the chosen GPUs' figures and prices, the cost assumptions and the
    rules cited, with the date of each dated figure."""
    catalog = problem.catalog
    dated: dict[str, str | None] = {}

    def add(ids, as_of=None):
        for sid in ids:
            if as_of and (dated.get(sid) is None or as_of > dated[sid]):
                dated[sid] = as_of
            else:
                dated.setdefault(sid, None)

    for gid in sorted(sol.gpu_types()):
        gpu = catalog.gpus[gid]
        for fig in (gpu.memory_gb, gpu.memory_bandwidth_gbps, gpu.tdp_w, gpu.interconnect.link_gbps,
                    gpu.interconnect.p2p, gpu.interconnect.pcie_gbps):
            add(fig.source)
        for fig in gpu.tensor_tflops.values():
            add(fig.source)
        if gid in sol.bought:
            add(gpu.prices.purchase.source, gpu.prices.purchase.as_of)
        if any(c.gpu == gid and c.ownership == "rent" for c in sol.chosen):
            add(gpu.rental.source, gpu.rental.as_of)
    server_defs = catalog.servers
    for servers in sol.servers.values():
        for sid in servers:
            s = server_defs.get(sid)
            if s is not None and s.purchase is not None:
                add(s.purchase.source, s.purchase.as_of)
                add(s.power_overhead_w.source)
    if sol.bought:
        for a in catalog.assumptions.values():
            if set(a.source) & set(problem.costs.sources):
                add(a.source, a.as_of)
    out = []
    for sid in sorted(dated):
        src = catalog.sources.get(sid)
        if src is not None and src.kind not in ("derived", "assumption"):
            out.append({"id": sid, "url": src.url, "as_of": dated[sid]})
    cited = sorted({r["rule"] for rej in problem.rejected.values() for r in rej.reasons if r["rule"]}
                   | {w["rule"] for c in sol.chosen for w in c.warnings}
                   | ({problem.power_rule} - {None}))
    for rule_id in cited:
        rule = problem.rules.get(rule_id)
        out.append({"id": rule_id, "url": rule.source.url,
                    "as_of": rule.effective.from_.isoformat() if rule.effective.from_ else None}
                   | ({} if rule.source.url else {"reference": rule.source.cite}))
    return out


def _rounded(obj):
    """Fixed float formatting so the same input gives byte-identical JSON."""
    if isinstance(obj, float):
        if obj != obj or obj in (float("inf"), float("-inf")):
            return None
        return float(f"{obj:.6g}") if abs(obj) < 1e6 else round(obj, 2)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v) for v in obj]
    return obj
