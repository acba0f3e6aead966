"""A plan's warnings and sources: what a reader must check beside the figures, and where every
figure comes from (the chosen GPUs' datasheets and prices, the bill of materials, the cost
assumptions and the rules cited)."""
from __future__ import annotations

from typing import Any

from advisor.data.catalog_figures import STALE_MONTHS, age_months
from advisor.solve import ledger
from advisor.solve.problem import Problem
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

JSONObject = dict[str, Any]


def plan_warnings(problem: Problem, sol: Solution, explaining: SolveSettings | None = None) -> list[JSONObject]:
    """What a reader must check beside the figures: the chosen candidates' warnings and estimate notes,
    rent- or buy-only GPUs, stale prices, the ledger's price warnings, and an unproven solve."""
    out: list[JSONObject] = []

    def add(entry: JSONObject) -> None:
        if entry not in out:
            out.append(entry)

    def stale(what: str, price: str, as_of: str | None) -> None:
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
    tally = explaining.tally if explaining else None
    if explaining and tally and tally.unproven:
        add({"rule": None, "code": "explanations-approximate",
             "message": f"{tally.unproven} of the {tally.solves} re-solves behind the explanations "
                        f"stopped at their {explaining.time_limit:g} s limit before proving a "
                        f"{100 * (explaining.gap or 0.0):g}% gap; their numbers are approximate"})
    return out


def plan_sources(problem: Problem, sol: Solution) -> list[JSONObject]:
    """Every source behind the chosen GPUs' figures and prices, the cost assumptions and the
    rules cited, with the date of each dated figure."""
    catalog = problem.catalog
    dated: dict[str, str | None] = {}

    def add(ids: list[str], as_of: str | None = None) -> None:
        for sid in ids:
            known = dated.get(sid)
            if as_of and (known is None or as_of > known):
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
        if gid in sol.bought and gpu.prices.purchase is not None:
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
    cited: set[str] = ({r["rule"] for rej in problem.rejected.values() for r in rej.reasons if r["rule"]}
                       | {w["rule"] for c in sol.chosen + [c for c, _ in sol.serving] for w in c.warnings if w["rule"]})
    if problem.power_rule:
        cited.add(problem.power_rule)
    for rule_id in sorted(cited):
        rule = problem.rules.get(rule_id)
        out.append({"id": rule_id, "url": rule.source.url,
                    "as_of": rule.effective.from_.isoformat() if rule.effective.from_ else None}
                   | ({} if rule.source.url else {"reference": rule.source.cite}))
    return out
