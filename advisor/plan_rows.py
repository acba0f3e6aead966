"""The parts of a plan read straight from a solved problem: its jobs, what it buys and rents, its
servers and its assumptions. assemble.py puts them into the Plan beside the explanations."""

from __future__ import annotations

import math
from typing import Any

from advisor.solve import ledger
from advisor.solve.constraints.at_once import off_peak_hours
from advisor.solve.constraints.gpu_count import Held, held_counts, held_grade
from advisor.solve.problem import Problem, ServeCandidate
from advisor.solve.serving_bridge import stands_in_for
from advisor.solve.serving_nodes import bill_key
from advisor.solve.solution import Solution

JSONObject = dict[str, Any]


def plan_jobs(problem: Problem, sol: Solution) -> list[JSONObject]:
    """The plan's `jobs`: each training job's assignment with its estimate (speed, goodput, memory,
    MFU, step time, layout) and where the speed comes from."""
    jobs, nights = [], off_peak_hours(problem, sol)
    for j, (c, n) in enumerate(sol.assignment):
        e = c.estimate
        cls = problem.classes[c.cls]
        jobs.append(
            {
                "name": cls.name(problem.workload),
                "gpu": c.gpu,
                "gpu_count": c.count,
                "ownership": c.ownership,
                "copies": n,
                "tokens_per_s": e.tokens_per_s,
                "wall_days": c.hours / 24,
                "goodput": {
                    "fraction": c.goodput,
                    "lost_days": c.hours * (1 - c.goodput) / 24,
                    "source": "workload" if cls.goodput is not None else "model (docs/model.md §1.6)",
                },
                "memory_per_gpu_gb": e.memory_per_gpu_gb,
                "mfu": e.mfu,
                "binding_factor": e.binding,
                "step_breakdown": e.step_breakdown,
                "layout": e.layout,
                "speed_evidence": e.speed_evidence,
                "derating": e.derating,
                "speed_source": e.speed_source,
                "evidence_note": e.evidence_note,
                **({"hours_a_day": nights[j]} if j in nights else {}),
            }
        )
    return jobs


def plan_assumptions(problem: Problem, sol: Solution) -> JSONObject:
    """The plan's `assumptions`: the deployment, its cost rates and limits, and the residual value
    of each GPU bought."""
    d, costs = problem.workload.deployment, problem.costs
    return {
        "deployment": d.context,
        "region": d.region,
        "ownership": d.ownership,
        "horizon_months": d.horizon_months,
        "electricity_usd_per_kwh": costs.electricity_usd_per_kwh,
        "pue": costs.pue,
        "hosting_usd_per_kw_month": costs.hosting_usd_per_kw_month,
        "power_limit_kw": problem.power_limit_kw,
        "power_limit_rule": problem.power_rule,
        "discount_rate": costs.discount_rate,
        "discount_rate_source": costs.discount_source,
        "utilization": costs.utilization,
        "useful_life_years": costs.useful_life_years,
        "rent_kinds": list(d.rent_kinds),
        "budget_usd": problem.workload.budget_usd,
        "budget_basis": problem.workload.budget_basis,
        "residual_value": {
            g: {"fraction": r.fraction, "curve": r.curve, "confidence": r.confidence, "note": r.note}
            for g, r in sorted(problem.residual.items())
            if g in sol.bought
        },
    }


def purchase_rows(problem: Problem, sol: Solution) -> list[JSONObject]:
    """The plan's `purchase`: what is bought and rented for training (solve/ledger.py), then the
    GPUs rented on demand to serve, per GPU type and offer (each layout's own: solve/serving_offers.py)."""
    items = ledger.purchase_items(problem, sol)
    rented: dict[tuple[str, str], JSONObject] = {}
    at_once = held_counts(problem, sol)
    for c, n in sol.serving:  # serving replicas rented on demand for the serving months
        key = bill_key(c)
        if key is None or c.offer is None:
            continue
        entry = rented.setdefault(key, _rented_row(c, "serving"))
        entry["count"] += c.gpus * n
        if held_grade(c.offer.offer, c, at_once) == "low":
            entry["confidence"] = "low"  # replicas held at once above what its rate is evidenced at
        entry["gpu_hours"] += c.gpu_hours * n
    for key, entry in rented.items():  # an offer sold by whole nodes bills the idle GPUs of its nodes too
        idle, layout = sol.serving_idle.get(key, (0, None))
        entry["billed_gpus"] = entry["count"] + idle
        entry["billed_gpu_hours"] = entry["gpu_hours"] + (idle * layout.hours if idle else 0.0)
    return items + [rented[k] for k in sorted(rented)] + bridge_rows(sol, at_once)


def bridge_rows(sol: Solution, at_once: Held) -> list[JSONObject]:
    """The GPUs rented on demand to serve until bought serving GPUs arrive (solve/serving_bridge.py):
    one row per rented type, offer and arrival, with its hours and GPUs, graded as the serving rows
    (`at_once`: gpu_count.held_counts, the bridges among them)."""
    rows: dict[tuple[tuple[str, str], float], JSONObject] = {}
    for b, n in sol.bridges:
        key = bill_key(b)
        assert key is not None and b.offer is not None, f"{b.gpu} rented as a bridge without an offer"
        entry = rows.setdefault(
            (key, b.hours),
            {
                **_rented_row(b, "bridge"),
                "bridges": ", ".join(stands_in_for(b, sol.bought)),
                "hours": b.hours,
                "billed_gpus": 0,
                "billed_gpu_hours": 0.0,
            },
        )
        if held_grade(b.offer.offer, b, at_once) == "low":
            entry["confidence"] = "low"  # bridges held at once above what its rate is evidenced at
        entry["count"] += b.gpus * n
        entry["gpu_hours"] += b.gpu_hours * n
        entry["billed_gpu_hours"] += b.gpu_hours * n
        entry["billed_gpus"] += b.gpus * n
        served = sorted({*entry["bridges"].split(", "), *stands_in_for(b, sol.bought)} - {""})
        entry["bridges"] = ", ".join(served)  # two classes' bridges of one offer and arrival share a row
    for (_, a, key), (idle, layout) in sol.bridge_idle.items():  # whole nodes billed beyond the replicas
        if (key, a) in rows:
            rows[key, a]["billed_gpus"] += idle
            rows[key, a]["billed_gpu_hours"] += idle * layout.hours
    return [rows[k] for k in sorted(rows)]


def _rented_row(c: ServeCandidate, use: str) -> JSONObject:
    """A purchase row of GPUs rented on demand on layout c's offer, before its counts are added."""
    assert c.offer is not None
    rate = c.offer.offer
    return {
        "gpu": c.gpu,
        "count": 0,
        "ownership": "rent",
        "unit_price_usd": rate.usd_per_gpu_hour,
        "gpu_hours": 0.0,
        "provider": rate.provider,
        "as_of": rate.as_of,
        "confidence": rate.confidence_at(c.order_gpus),
        "rent_kind": rate.pricing,
        **ledger.offer_terms(rate),
        "use": use,
    }


def plan_servers(problem: Problem, sol: Solution) -> list[JSONObject]:
    """The plan's `servers`: each host server bought per GPU type, its price and how many are networked."""
    out = []
    for g, servers in sorted(sol.servers.items()):
        opts = {s.id: s for s in problem.servers.get(g, [])}
        # the GPUs the widest job spans, counted in the type's largest server (solution.networked): held in
        # servers of fewer slots they join more of them (128 GPUs: 16 eight-slot servers, 32 four-slot towers)
        joined = sol.networked.get(g, 0) * max((o.slots for o in opts.values()), default=1)
        for sid, n in sorted(servers.items()):
            out.append(
                {
                    "server": sid,
                    "gpu": g,
                    "count": n,
                    "unit_price_usd": opts[sid].price_usd,
                    "networked": min(n, math.ceil(joined / opts[sid].slots)),
                }
            )
    return out
