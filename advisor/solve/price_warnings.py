"""The warnings a plan's prices deserve: low-confidence prices and servers, used parts, the network's
quote, mixed provider tiers and the other tiers' offers, rack power and what --as-of left out.
Computed from the catalog, the problem and the solution's purchase items (solve/ledger.py)."""

from __future__ import annotations

from advisor.economics import bom
from advisor.solve.ledger import purchase_items
from advisor.solve.problem import Problem
from advisor.solve.solution import Solution


def tier_warnings(problem: Problem, sol: Solution) -> list[dict]:
    """One price basis per decision (issue 29): rented GPUs priced at different provider tiers are
    compared on their providers as much as on the GPUs, and each rented GPU's offer is shown beside
    the cheapest offer of the same kind in every other tier."""
    rented = [i for i in purchase_items(problem, sol) if i["ownership"] == "rent" and i.get("tier")]
    out = []
    if len({i["tier"] for i in rented}) > 1:
        out.append(
            {
                "rule": None,
                "code": "mixed-tiers",
                "message": "the plan rents at different provider tiers ("
                + "; ".join(f"{i['gpu']} at {i['provider']}, {i['tier']}" for i in rented)
                + "): the comparison between them measures the providers as much as the GPUs",
            }
        )
    for i in rented:
        offers = problem.catalog.gpus[i["gpu"]].rentals(i["rent_kind"])
        others = {}
        for o in offers:  # cheapest first: the first of each other tier
            if o.tier != i["tier"] and o.tier not in others:
                others[o.tier] = o
        if others:
            out.append(
                {
                    "rule": None,
                    "code": "price-basis",
                    "message": f"{i['gpu']} {i['rent_kind'].replace('_', '-')} is priced at {i['provider']} "
                    f"({i['tier']}, {i['confidence']} confidence) ${i['unit_price_usd']:g}/GPU-hour; "
                    + "; ".join(
                        f"the cheapest {t} offer is {o.provider} ${o.usd_per_gpu_hour:g} ({o.confidence} confidence)"
                        for t, o in sorted(others.items())
                    ),
                }
            )
    return out


def price_warnings(problem: Problem, sol: Solution) -> list[dict]:
    """low-confidence-price, used-part, capacity (from the candidates), rack and as-of warnings."""
    out = []
    for item in purchase_items(problem, sol):
        gpu = problem.catalog.gpus[item["gpu"]]
        what = (
            "purchase price"
            if item["ownership"] == "buy"
            else f"{item['rent_kind'].replace('_', '-')} rate at {item['provider']}"
        )
        if item["confidence"] == "low":
            price = (
                f"${item['unit_price_usd']:,.0f}"
                if item["ownership"] == "buy"
                else f"${item['unit_price_usd']:g}/GPU-hour"
            )
            out.append(
                {
                    "rule": None,
                    "code": "low-confidence-price",
                    "message": f"the plan rests on a low-confidence price: {gpu.name}'s {what} ({price}, as of "
                    f"{item['as_of']}); get a quote before committing",
                }
            )
        if item["ownership"] == "buy" and item.get("condition", "new") != "new":
            out.append(
                {
                    "rule": None,
                    "code": "used-part",
                    "message": f"{gpu.name} is bought {item['condition']}: "
                    f"{gpu.prices.purchase.warranty if gpu.prices.purchase else ''}",
                }
            )
    for servers in sol.servers.values():
        for sid in sorted(servers):
            s = problem.catalog.servers[sid]
            if s.purchase.confidence == "low":
                out.append(
                    {
                        "rule": None,
                        "code": "low-confidence-price",
                        "message": f"the plan rests on a low-confidence price: {s.name} (${s.purchase.usd:,.0f}, "
                        f"as of {s.purchase.as_of}); get a quote before committing",
                    }
                )
    if sol.networked:
        out.append(_network_warning(problem))
    out += tier_warnings(problem, sol)
    nodes = sum(n for d in sol.servers.values() for n in d.values())
    if nodes and problem.workload.deployment.site == "datacenter":
        node_kw = max(
            (
                o.overhead_kw + o.slots * problem.gpu_kw[g]
                for g, d in sol.servers.items()
                for o in problem.servers.get(g, [])
                if o.id in d
            ),
            default=0.0,
        )
        _, warn = bom.racks(node_kw, nodes, problem.catalog.economics)
        if warn:
            out.append({"rule": None, "code": "rack-power", "message": warn})
    considered = set(problem.considered) | {
        sid for g in problem.considered for sid in (s.id for s in problem.servers.get(g, []))
    }
    for item in problem.catalog.ignored_after_as_of:
        if item["entry"] in considered:
            out.append({"rule": None, "code": "as-of", "message": f"{item['entry']}: {item['message']}"})
    return out


def _network_warning(problem: Problem) -> dict:
    """The bought network's price rests on a cluster sheet's band and a reseller's NIC at the catalog's port speed."""
    port = (problem.catalog.economics.network or {}).get("nic_gbps") if problem.catalog.economics else None
    nics = f"{port.value:g} Gb/s NICs" if port is not None and port.value else "NICs"
    return {
        "rule": None,
        "code": "low-confidence-price",
        "message": "the network is costed from a sourced cluster sheet's per-GPU band for its size "
        f"(switches, cables, optics) and {nics} (one per GPU, or the share the GPU's network "
        "is) at a reseller's list price, both low confidence; get a quote before committing",
    }
