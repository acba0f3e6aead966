"""advisor.plan(workload) -> Plan: the one-way flow of DESIGN.md §1 in one function.

workload -> candidates (rules + estimate per job and GPU) -> optimize (MILP) -> explain -> Plan.
A Plan is a dict with exactly the keys of the JSON contract (DESIGN.md §5), so a script reads
plan["total_cost_usd"] the same way it reads `advisor plan --format json`.
"""
from __future__ import annotations

import datetime as dt
import json

from . import __version__  # noqa: F401  (set before this module loads)
from .candidates import Problem, build_problem
from .catalog import Catalog, load_catalog, parse_as_of
from .estimate import params_from
from .explain import alternatives, binding, diagnose
from .optimize import solve
from .rules import RuleSet, load_rules
from .workload import Workload

SCHEMA_VERSION = 1
STALE_MONTHS = 18


class Plan(dict):
    """The plan as the JSON contract's mapping, with helpers for scripts."""

    @property
    def feasible(self) -> bool:
        return self["status"] != "infeasible"

    def to_json(self) -> str:
        return json.dumps(self, indent=2, ensure_ascii=False) + "\n"


def plan(workload: Workload, *, catalog: Catalog | None = None, rules: RuleSet | None = None,
         as_of: dt.date | None = None, time_limit: float | None = 30.0, explain: bool = True) -> Plan:
    """Choose the cheapest GPU mix for `workload` and say why."""
    catalog = catalog or load_catalog()
    rules = rules or load_rules()
    as_of = as_of or dt.date.today()
    problem = build_problem(workload, catalog, rules, params_from(catalog), as_of)
    sol = solve(problem, time_limit=time_limit)
    return assemble(problem, sol, time_limit=time_limit, explain=explain)


def assemble(problem: Problem, sol, *, time_limit: float | None, explain: bool = True) -> Plan:
    wl, catalog = problem.workload, problem.catalog
    feasible = sol.objective_usd is not None
    rejected = {gid: {"gpu": gid, "reasons": r.reasons, "forced_cost_usd": None}
                for gid, r in problem.rejected.items()}
    if feasible and explain:
        for gid, alt in alternatives(problem, sol, time_limit).items():
            rejected[gid] = {"gpu": gid, **alt}
    purchase = []
    for gid, n in sorted(sol.bought.items()):
        purchase.append({"gpu": gid, "count": n, "ownership": "buy", "unit_price_usd": problem.unit_price[gid],
                         "gpu_hours": None})
    rented: dict[str, dict] = {}
    for c in sol.chosen:
        if c.ownership == "rent":
            rate = catalog.gpus[c.gpu].rental
            entry = rented.setdefault(c.gpu, {"gpu": c.gpu, "count": 0, "ownership": "rent",
                                              "unit_price_usd": rate.usd_per_gpu_hour, "gpu_hours": 0.0,
                                              "provider": rate.provider})
            entry["count"] = max(entry["count"], c.count)
            entry["gpu_hours"] += c.gpu_hours
    purchase += [rented[g] for g in sorted(rented)]
    jobs = []
    for c in sol.chosen:
        e = c.estimate
        jobs.append({"name": wl.job_name(c.job), "gpu": c.gpu, "gpu_count": c.count, "ownership": c.ownership,
                     "tokens_per_s": e.tokens_per_s, "wall_days": c.hours / 24,
                     "memory_per_gpu_gb": e.memory_per_gpu_gb, "mfu": e.mfu, "binding_factor": e.binding,
                     "step_breakdown": e.step_breakdown, "layout": e.layout})
    warnings = _warnings(problem, sol)
    data = {
        "schema_version": SCHEMA_VERSION,
        "name": wl.name,
        "status": sol.status,
        "total_cost_usd": sol.objective_usd,
        "cost_breakdown": sol.cost_breakdown or {k: None for k in
                                                 ("purchase_usd", "servers_usd", "energy_usd", "hosting_usd", "rental_usd")},
        "purchase": purchase,
        "jobs": jobs,
        "rejected": [rejected[g] for g in sorted(rejected)],
        "binding": binding(problem, sol) if feasible else [],
        "diagnosis": [] if feasible else diagnose(problem, time_limit),
        "warnings": warnings,
        "assumptions": {
            "deployment": wl.deployment.context, "region": wl.deployment.region,
            "horizon_months": wl.deployment.horizon_months,
            "electricity_usd_per_kwh": problem.costs.electricity_usd_per_kwh, "pue": problem.costs.pue,
            "hosting_usd_per_kw_month": problem.costs.hosting_usd_per_kw_month,
        },
        "solver": {k: v for k, v in sol.solver.items() if k != "status"},
        "sources": _sources(problem, sol),
        "as_of": problem.as_of.isoformat(),
        "tool_version": __version__,
        "catalog_digest": catalog.digest,
    }
    return Plan(_rounded(data))


def _warnings(problem: Problem, sol) -> list[dict]:
    out = []
    for c in sol.chosen:
        for w in c.warnings:
            if w not in out:
                out.append(w)
        for note in c.estimate.notes:
            entry = {"rule": None, "message": note}
            if entry not in out:
                out.append(entry)
    d = problem.workload.deployment
    for gid in sorted({c.gpu for c in sol.chosen}):
        gpu = problem.catalog.gpus[gid]
        ownerships = {c.ownership for c in sol.chosen if c.gpu == gid}
        if d.ownership == "any" and d.context != "cloud" and gpu.availability in ("rent only", "buy only"):
            missing = "purchase price" if gpu.availability == "rent only" else "on-demand rental rate"
            out.append({"rule": None, "code": gpu.availability.replace(" ", "-"),
                        "message": f"{gpu.name} is {gpu.availability}: the catalog holds no sourced {missing} "
                                   "for it (give a quote with --catalog)"})
        dated = []
        if "buy" in ownerships and gpu.prices.purchase:
            dated.append(("purchase price", gpu.prices.purchase.as_of))
        if "rent" in ownerships and gpu.rental:
            dated.append(("rental rate", gpu.rental.as_of))
        for what, as_of in dated:
            day = parse_as_of(as_of)
            months = (problem.as_of.year - day.year) * 12 + problem.as_of.month - day.month
            if months > STALE_MONTHS:
                out.append({"rule": None, "code": "stale-price",
                            "message": f"{gpu.name}'s {what} is from {as_of}, {months} months before "
                                       f"{problem.as_of.isoformat()}; get a current quote"})
    return out


def _sources(problem: Problem, sol) -> list[dict]:
    """Every source behind the chosen GPUs' figures and prices, the cost assumptions and the
    rules cited in `rejected`, with the date of each dated figure."""
    catalog = problem.catalog
    dated: dict[str, str | None] = {}

    def add(ids, as_of=None):
        for sid in ids:
            if as_of and (dated.get(sid) is None or as_of > dated[sid]):
                dated[sid] = as_of
            else:
                dated.setdefault(sid, None)

    for gid in sorted({c.gpu for c in sol.chosen}):
        gpu = catalog.gpus[gid]
        for fig in (gpu.memory_gb, gpu.memory_bandwidth_gbps, gpu.tdp_w, gpu.interconnect.link_gbps,
                    gpu.interconnect.p2p, gpu.interconnect.pcie_gbps):
            add(fig.source)
        for fig in gpu.tensor_tflops.values():
            add(fig.source)
        ownerships = {c.ownership for c in sol.chosen if c.gpu == gid}
        if "buy" in ownerships:
            add(gpu.prices.purchase.source, gpu.prices.purchase.as_of)
        if "rent" in ownerships:
            add(gpu.rental.source, gpu.rental.as_of)
    if any(c.ownership == "buy" for c in sol.chosen):
        for a in catalog.assumptions.values():
            if set(a.source) & set(problem.costs.sources):
                add(a.source, a.as_of)
    out = []
    for sid in sorted(dated):
        src = catalog.sources.get(sid)
        if src is not None and src.kind not in ("derived", "assumption"):
            out.append({"id": sid, "url": src.url, "as_of": dated[sid]})
    cited = sorted({r["rule"] for rej in problem.rejected.values() for r in rej.reasons if r["rule"]}
                   | {w["rule"] for c in sol.chosen for w in c.warnings})
    for rule_id in cited:
        rule = problem.rules.get(rule_id)
        out.append({"id": rule_id, "url": rule.source.url,
                    "as_of": rule.effective.from_.isoformat() if rule.effective.from_ else None})
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
