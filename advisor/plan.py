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
from advisor.data.uncertainty import basis as uncertainty_basis
from advisor.errors import InputError
from advisor.explain.alternatives import alternatives, ordered
from advisor.explain.binding import binding
from advisor.explain.diagnosis import diagnose
from advisor.explain.ranges import speed_sensitivity
from advisor.explain.robustness import plan_ranges, range_points
from advisor.explain.sensitivity import break_even, marginal_values
from advisor.explain.serving import (
    serving_binding,
    serving_insights,
    serving_rows,
    serving_warnings,
)
from advisor.explain.tradeoffs import cost_time_points, value_points
from advisor.inputs.workload import Workload
from advisor.perf import min_gpus, params_from
from advisor.perf.memory import default_batch_tokens
from advisor.solve import ledger
from advisor.solve.candidates import Problem, build_problem
from advisor.solve.milp import (
    EXPLAIN_GAP,
    EXPLAIN_TIME_LIMIT,
    Solution,
    default_gap,
    solve,
)
from advisor.solve.run import stage
from advisor.solve.sweeps import frontier, solve_fastest
from advisor.solve.verify import check

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


EXPLAIN_LEVELS = ("none", "alternatives", "full")


def plan(workload: Workload, *, catalog: Catalog | None = None, rules: RuleSet | None = None,
         as_of: dt.date | None = None, objective: str = "cost", time_limit: float | None = 30.0,
         explain: bool | str = True, charts: bool = False, gap: float | None = None) -> Plan:
    """Choose the cheapest GPU mix for `workload` (or, with objective='time', the fastest one
    within the budget) and say why. charts=True also computes what a memo's charts show (the
    cheapest plan per GPU type under a sweep of completion times, speed per dollar), once.

    explain: "full" (or True) computes every explanation; "alternatives" the forced cost of each
    unchosen GPU but no break-evens or marginal values (what `crossover` reads); "none" (or False)
    none. gap: the relative MIP gap the plan is proven within (None: 0.01% for a few jobs, 1% for
    fleets of 50 jobs or more; milp.default_gap)."""
    if objective not in ("cost", "time"):
        raise InputError(f"objective is 'cost' or 'time', got {objective!r}", field="objective")
    level = {True: "full", False: "none"}.get(explain, explain) if isinstance(explain, bool) else explain
    if level not in EXPLAIN_LEVELS:
        raise InputError(f"explain is one of {', '.join(EXPLAIN_LEVELS)} (or true/false), got {explain!r}",
                         field="explain")
    if gap is not None and not 0 <= gap < 1:
        raise InputError(f"gap is a fraction from 0 to below 1 (0.01 = 1%), got {gap!r}", field="gap")
    problem = prepare(workload, catalog, rules, as_of)
    sol = (solve(problem, time_limit=time_limit, gap=gap) if objective == "cost"
           else solve_fastest(problem, time_limit=time_limit, gap=gap))
    check(problem, sol)   # every hard constraint holds, or the plan is refused (solve/verify.py)
    with stage("explaining"):   # named on the CLI's progress line (solve/run.py)
        result = assemble(problem, sol, objective=objective, time_limit=time_limit, explain=level, gap=gap)
    if charts:
        result.chart_data = chart_data(problem, time_limit)
    return result


def chart_data(problem: Problem, time_limit: float | None = 30.0) -> dict:
    """What a memo's charts show, computed by re-solving and estimating (explain/tradeoffs.py)."""
    if not problem.classes:
        return {}  # the charts are about training time; a serving-only workload has none
    return {"cost_time": cost_time_points(problem, time_limit),
            "value": value_points(problem, params_from(problem.catalog)),
            "ranges": range_points(problem, time_limit)}


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
        check(problem, sol)
        front.append({"makespan_days": sol.makespan_hours / 24, "total_cost_usd": sol.objective_usd,
                      "purchase": _purchase(problem, sol), "status": sol.status})
    return _rounded({"schema_version": SCHEMA_VERSION, "name": workload.name, "as_of": problem.as_of.isoformat(),
                     "points": front})


def _rebuilder(problem: Problem):
    def rebuild(batch_scale: float | None = None, **deployment_changes):
        """The problem again with another deployment, or every job's global batch x batch_scale."""
        d = problem.workload.deployment.moved_to(**deployment_changes)
        wl = problem.workload.model_copy(update={"deployment": d})
        if batch_scale is not None:
            p = params_from(problem.catalog)
            jobs = [job.model_copy(update={"global_batch_tokens": batch_scale * (
                        cls.spec.global_batch_tokens or default_batch_tokens(cls.spec.model, p))})
                    for job, cls in ((wl.jobs[j], c) for c in problem.classes for j in c.jobs)]
            order = [j for c in problem.classes for j in c.jobs]
            by_index = dict(zip(order, jobs))
            wl = wl.model_copy(update={"jobs": [by_index.get(i, job) for i, job in enumerate(wl.jobs)]})
        return build_problem(wl, problem.catalog, problem.rules, params_from(problem.catalog), problem.as_of)
    return rebuild


def assemble(problem: Problem, sol: Solution, *, objective: str = "cost", time_limit: float | None = 30.0,
             explain: bool | str = True, gap: float | None = None) -> Plan:
    wl, catalog = problem.workload, problem.catalog
    level = {True: "full", False: "none"}.get(explain, explain) if isinstance(explain, bool) else explain
    rejected = {gid: {"gpu": gid, "reasons": ordered(problem, gid, r.reasons), "forced_cost_usd": None}
                for gid, r in problem.rejected.items()}
    if not sol.feasible:  # allowed GPUs that could run the job: no plan meets the limits (see diagnosis)
        for gid in problem.considered:
            if gid not in rejected:
                rejected[gid] = {"gpu": gid, "forced_cost_usd": None, "reasons": [
                    {"rule": None, "code": "no-plan", "primary": True,
                     "message": "it can run the jobs, but no plan meets every limit (see why no plan exists)"}]}
    sensitivity = {"break_even": [], "marginal": []}
    explaining = {"gap": max(EXPLAIN_GAP, gap or 0.0), "solves": 0, "unproven": 0,
                  "time_limit": EXPLAIN_TIME_LIMIT if time_limit is None else min(time_limit, EXPLAIN_TIME_LIMIT)}
    problem.solver_cache["explaining"] = explaining   # every re-solve below uses its gap and limit
    try:
        if sol.feasible and level != "none":
            alts = alternatives(problem, sol, time_limit)
            for gid, alt in alts.items():
                rejected[gid] = {"gpu": gid, **alt}
            if objective == "cost" and level == "full":
                sensitivity = {"break_even": break_even(problem, sol, alts, time_limit),
                               "marginal": marginal_values(problem, sol, time_limit),
                               "speed": speed_sensitivity(problem, sol, alts, time_limit)}
        diagnosis = [] if sol.feasible else diagnose(problem, time_limit,
                                                     _rebuilder(problem) if level != "none" else None)
    finally:
        del problem.solver_cache["explaining"]
    insights = serving_insights(problem, sol, time_limit) if level != "none" and objective == "cost" else {}
    if insights:
        sensitivity["traffic"] = [insights["traffic"]]
    jobs = []
    for c, n in sol.assignment:
        e = c.estimate
        cls = problem.classes[c.cls]
        jobs.append({"name": cls.name(wl), "gpu": c.gpu, "gpu_count": c.count, "ownership": c.ownership,
                     "copies": n, "tokens_per_s": e.tokens_per_s, "wall_days": c.hours / 24,
                     "goodput": {"fraction": c.goodput, "lost_days": c.hours * (1 - c.goodput) / 24,
                                 "source": "workload" if cls.goodput is not None else "model (docs/model.md §1.6)"},
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
        "present_value_usd": sol.objective_usd,
        "nominal_cost_usd": ledger.nominal_total(sol),
        "residual_value_usd": sol.residual_value_usd if sol.feasible else None,
        "cost_breakdown_pv": sol.cost_breakdown_pv or None,
        "purchase": _purchase(problem, sol),
        "servers": _servers(problem, sol),
        "bill_of_materials": ledger.bill_of_materials(problem, sol) if sol.feasible else [],
        "break_even_months": ledger.break_even(problem, sol) if sol.feasible else [],
        "depreciation": ledger.depreciation(problem, sol) if sol.feasible else [],
        "utilization": ledger.utilization(problem, sol) if sol.feasible else None,
        "jobs": jobs,
        "serving": serving_rows(problem, sol),
        "serving_mix": insights.get("mix"),
        "rejected": [{**rejected[g], "name": catalog.gpus[g].name} for g in sorted(rejected)],
        "binding": binding(problem, sol) + serving_binding(problem, sol) if sol.feasible else [],
        "sensitivity": sensitivity,
        "diagnosis": diagnosis,
        "warnings": _warnings(problem, sol, explaining) + serving_warnings(problem, sol),
        "assumptions": {
            "deployment": wl.deployment.context, "region": wl.deployment.region,
            "ownership": wl.deployment.ownership, "horizon_months": wl.deployment.horizon_months,
            "electricity_usd_per_kwh": problem.costs.electricity_usd_per_kwh, "pue": problem.costs.pue,
            "hosting_usd_per_kw_month": problem.costs.hosting_usd_per_kw_month,
            "power_limit_kw": problem.power_limit_kw,
            "power_limit_rule": problem.power_rule,
            "discount_rate": problem.costs.discount_rate, "discount_rate_source": problem.costs.discount_source,
            "utilization": problem.costs.utilization, "useful_life_years": problem.costs.useful_life_years,
            "rent_kinds": list(wl.deployment.rent_kinds),
            "residual_value": {g: {"fraction": r.fraction, "curve": r.curve, "confidence": r.confidence,
                                   "note": r.note} for g, r in sorted(problem.residual.items()) if g in sol.bought},
        },
        "solver": {**{k: v for k, v in sol.solver.items() if k != "status"},
                   "gap_limit": default_gap(problem) if gap is None else gap,
                   "explanations": {"solves": explaining["solves"], "gap_limit": explaining["gap"],
                                    "time_limit_s": explaining["time_limit"],
                                    "approximate": explaining["unproven"] > 0}},
        "sources": _sources(problem, sol),
        "as_of": problem.as_of.isoformat(),
        "tool_version": __version__,
        "catalog_digest": catalog.digest,
    }
    data.update(plan_ranges(problem, sol, jobs, robust=level != "none" and objective == "cost", time_limit=time_limit))
    data["assumptions"]["uncertainty"] = uncertainty_basis()
    result = Plan(_rounded(data))
    if sol.feasible:  # money to the cent at least: 6 significant digits could print a total above the budget
        result["total_cost_usd"] = _money(sol.objective_usd)
        result["cost_breakdown"] = {k: _money(v) for k, v in sol.cost_breakdown.items()}
    result.workload, result.catalog, result.rules, result.problem = wl, catalog, problem.rules, problem
    return result


def _purchase(problem: Problem, sol: Solution) -> list[dict]:
    items = ledger.purchase_items(problem, sol)
    rented: dict[str, dict] = {}
    for c, n in sol.serving:   # serving replicas rented on demand for the serving months
        if c.ownership == "rent":
            rate = problem.catalog.gpus[c.gpu].rental
            entry = rented.setdefault(c.gpu, {"gpu": c.gpu, "count": 0, "ownership": "rent",
                                              "unit_price_usd": rate.usd_per_gpu_hour, "gpu_hours": 0.0,
                                              "provider": rate.provider, "as_of": rate.as_of,
                                              "rent_kind": "on_demand", "use": "serving"})
            entry["count"] += c.gpus * n
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


def _warnings(problem: Problem, sol: Solution, explaining: dict | None = None) -> list[dict]:
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
        if len(d.ownerships) == 2 and gpu.availability in ("rent only", "buy only"):
            missing = "purchase price" if gpu.availability == "rent only" else "on-demand rental rate"
            add({"rule": None, "code": gpu.availability.replace(" ", "-"),
                 "message": f"{gpu.name} is {gpu.availability}: the catalog holds no sourced {missing} "
                            "for it (give a quote with --catalog)"})
        dated = []
        if gid in sol.bought and gpu.prices.purchase:
            dated.append(("purchase price", gpu.prices.purchase.as_of))
        for offer in {id(c.offer): c.offer.offer for c in sol.chosen if c.gpu == gid and c.offer}.values():
            dated.append((f"{offer.pricing.replace('_', '-')} rental rate", offer.as_of))
        if any(c.gpu == gid and c.ownership == "rent" for c, _ in sol.serving) and gpu.rental:
            dated.append(("rental rate", gpu.rental.as_of))
        for what, as_of in dated:
            stale(gpu.name, what, as_of)
    for servers in sol.servers.values():
        for sid in sorted(servers):
            server = problem.catalog.servers[sid]
            stale(server.name, "purchase price", server.purchase.as_of)
    for entry in ledger.price_warnings(problem, sol) if sol.feasible else []:
        add(entry)
    if sol.solver.get("proven_optimal") is False:
        add({"rule": None, "code": "not-proven-optimal",
             "message": f"the solver stopped at its time limit with a plan not proven optimal "
                        f"(gap {sol.solver.get('gap')}); raise --time-limit for a proof"})
    if explaining and explaining["unproven"]:
        add({"rule": None, "code": "explanations-approximate",
             "message": f"{explaining['unproven']} of the {explaining['solves']} re-solves behind the explanations "
                        f"stopped at their {explaining['time_limit']:g} s limit before proving a "
                        f"{100 * explaining['gap']:g}% gap; their numbers are approximate"})
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
        for c in sol.chosen:
            if c.gpu == gid and c.offer is not None:
                add(c.offer.offer.source, c.offer.offer.as_of)
        if any(c.gpu == gid and c.ownership == "rent" for c, _ in sol.serving) and gpu.rental:
            add(gpu.rental.source, gpu.rental.as_of)
    if sol.feasible:
        for item in ledger.bill_of_materials(problem, sol):
            add([s for s in item["source"] if s in catalog.sources])
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
                   | {w["rule"] for c in sol.chosen + [c for c, _ in sol.serving] for w in c.warnings if w["rule"]}
                   | ({problem.power_rule} - {None}))
    for rule_id in cited:
        rule = problem.rules.get(rule_id)
        out.append({"id": rule_id, "url": rule.source.url,
                    "as_of": rule.effective.from_.isoformat() if rule.effective.from_ else None}
                   | ({} if rule.source.url else {"reference": rule.source.cite}))
    return out


def _money(usd: float) -> float:
    return _rounded(usd) if abs(usd) < 1e4 else round(usd, 2)


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


class _CallableModule(__import__("types").ModuleType):
    """`advisor.plan` names both this module and its function: calling the module calls plan()."""

    def __call__(self, *args, **kwargs) -> Plan:
        return plan(*args, **kwargs)


__import__("sys").modules[__name__].__class__ = _CallableModule
