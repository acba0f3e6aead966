"""What a plan says about its serving jobs (issue 17): per chosen replica layout the rate it
sustains, the latency at peak and what limits it; whether its owned GPUs are lent to training;
the constraint slack; and, by re-solving, what more traffic costs and what the mix of GPU types
saves against the best single type (Mélange's comparison).
"""

from __future__ import annotations

import csv
import math
from functools import lru_cache
from typing import Any

from advisor.data.resources import data_dir
from advisor.inputs.loader import load_yaml_file
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.perf.serve import Setup
from advisor.perf.serve_capacity import operating_points
from advisor.perf.serving import hardware, load_params
from advisor.solve.constraints.at_once import off_peak_hours
from advisor.solve.constraints.serving import held_with_one_down
from advisor.solve.milp import solve
from advisor.solve.problem import Problem, ServeCandidate
from advisor.solve.scenario import baseline
from advisor.solve.serving_bridge import late_types, stands_in_for, waits
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

TRAFFIC_STEP = 1.3  # "+30% traffic"


@lru_cache(maxsize=1)
def measured_gpus() -> frozenset:
    """GPU ids with at least one measured serving run the model is fitted to (catalog/serving_calibration.csv)."""
    with open(data_dir("catalog") / "serving_calibration.csv", newline="", encoding="utf-8") as f:
        return frozenset(r["gpu"] for r in csv.DictReader(f) if r.get("fit") == "yes")


@lru_cache(maxsize=1)
def serving_band() -> dict:
    """The serving model's measured error (catalog/serving_accuracy.yaml, from docs/accuracy.md)."""
    return dict(load_yaml_file(data_dir("catalog") / "serving_accuracy.yaml", "catalog file") or {})


def _latency_at(problem: Problem, c: ServeCandidate, load: float) -> tuple[float, float]:
    """p-th percentile (TTFT, TPOT) in ms of one replica of `c` receiving `load` requests/s (<= its rate):
    the batch whose Little's-law rate is `load`, found by bisection (the rate rises with the batch)."""
    cls = problem.serve_classes[c.cls]
    r = c.result
    if load >= r.requests_per_s * 0.9999 or r.batch <= 0:
        return r.ttft_ms, r.tpot_ms
    s = Setup(
        cls.model,
        hardware(problem.catalog.gpus[c.gpu], problem.catalog),
        cls.precision,
        c.tp,
        c.pp,
        r.engine,
        load_params(),
        (cls.input_len, cls.output_len),  # the shape the replica was sized at: a measured one's own factor
    )
    slots = r.slots if cls.ttft_ms is not None else None  # as replica_capacity
    point = operating_points(s, cls.input_len, cls.output_len, cls.percentile)
    lo, hi = 1e-6, r.batch
    for _ in range(40):
        mid = (lo + hi) / 2
        if point(mid)["requests_per_s"] < load:
            lo = mid
        else:
            hi = mid
    pt = point(hi, slots)
    return pt["ttft_s"] * 1e3, pt["tpot_s"] * 1e3


def serving_rows(problem: Problem, sol: Solution) -> list[dict]:
    """`serving` in the plan: one row per (class, chosen layout)."""
    out = []
    lent_to = _lending(problem, sol)
    for c, n in sol.serving:
        cls = problem.serve_classes[c.cls]
        capacity = sum(o.requests_per_s * m for o, m in sol.serving if o.cls == c.cls)
        load = min(cls.peak_rps / capacity, 1.0) if capacity else 1.0
        ttft, tpot = _latency_at(problem, c, c.requests_per_s * load)
        r = c.result
        out.append(
            {
                "name": cls.name,
                "job": cls.job_name,
                "model": cls.model.name,
                "precision": cls.precision,
                "input_tokens": cls.input_len,
                "output_tokens": cls.output_len,
                "served_precision": r.precision or cls.precision,
                "gpu": c.gpu,
                "tensor_parallel": c.tp,
                "pipeline_parallel": c.pp,
                "replicas": n,
                "gpu_count": n * c.gpus,
                "ownership": c.ownership,
                "engine": r.engine,
                "requests_per_s_per_replica": c.requests_per_s,
                "peak_requests_per_s": cls.peak_rps,
                "utilization_at_peak": load,
                "ttft_ms": ttft,
                "tpot_ms": tpot,
                "slo": {"ttft_ms": cls.ttft_ms, "tpot_ms": cls.tpot_ms, "percentile": cls.percentile},
                "limited_by": r.limited_by,
                "max_batch": r.max_batch,
                "kv_cache_gb_per_gpu": r.kv_cache_gb_per_gpu,
                "months": cls.hours / HOURS_PER_MONTH,
                "measured_gpu": c.gpu in measured_gpus(),
                "speed_evidence": r.speed_evidence,
                "speed_source": r.speed_source,
                "shared_with_training": lent_to.get((cls.job, c.gpu)) if c.ownership == "buy" else None,
                "availability": "n+1" if cls.spare else "none",
                "requests_per_s_one_down": held_with_one_down(sol, c.cls, True),
            }
        )
    return out


def _lending(problem: Problem, sol: Solution) -> dict:
    """(serving job, GPU) -> how its owned GPUs are shared with training jobs on the same type."""
    out = {}
    train = {c.gpu for c in sol.chosen if c.ownership == "buy"}
    for c, _n in sol.serving:
        cls = problem.serve_classes[c.cls]
        if c.ownership == "buy" and c.gpu in train and cls.off_peak_hours > 0:
            out[cls.job, c.gpu] = (
                f"training jobs on {c.gpu} may use these GPUs {cls.off_peak_hours:g} h a day "
                "(off_peak_training_hours); serving has them the rest of the day"
            )
    return out


def serving_warnings(problem: Problem, sol: Solution) -> list[dict]:
    out = []
    band = serving_band()
    for c, _ in sol.serving:
        out += [w for w in c.warnings if w not in out]
    for gid in sorted({c.gpu for c, _ in sol.serving} - measured_gpus()):
        w = {
            "rule": None,
            "code": "no-measured-serving-run",
            "message": f"no measured serving run on {gid} is in the calibration set: its serving rate is the "
            f"model's extrapolation (leave-one-source-out error {band.get('offline_mape', 'unknown')} "
            f"offline, {band.get('server_mape', 'unknown')} under an SLO, on the GPUs that were measured)",
        }
        out.append(w)
    return out + late_service(problem, sol) + off_peak_only(problem, sol)


def off_peak_only(problem: Problem, sol: Solution) -> list[dict]:
    """Each training job that runs only in the serving GPUs' off-peak hours (at_once.off_peak_hours):
    why, and how long its running takes by the day."""
    out = []
    for j, hours_a_day in off_peak_hours(problem, sol).items():
        c = sol.assignment[j][0]
        bought = sol.bought.get(c.gpu, 0)
        free = bought - sol.serving_owned(c.gpu)
        name = problem.classes[c.cls].name(problem.workload)
        out.append(
            {
                "rule": None,
                "code": "off-peak-only",
                "message": f"{name} needs {c.count} {c.gpu} at once and {free if free > 0 else 'none'} of the "
                f"{bought} bought {'is' if free == 1 else 'are'} free of serving, so it runs only in the serving "
                f"GPUs' {hours_a_day:g} off-peak hours a day: its {c.hours:,.1f} hours of running take about "
                f"{c.hours / hours_a_day:,.1f} days, as its finish"
                + (" and its deadline's slack count them" if problem.classes[c.cls].deadline else " counts them"),
            }
        )
    return out


def _late(problem: Problem, sol: Solution, k: int) -> tuple[list[str], int]:
    """Request class k's bought GPU types that arrive after today, and the day the last can serve."""
    late = late_types(problem, [c for c, n in sol.serving if c.cls == k and n > 0])
    return late, math.ceil(max((problem.arrival[g].hours for g in late), default=0.0) / 24 - 1e-9)


def unserved_until(problem: Problem, sol: Solution) -> int | None:
    """The day the last request class served by late bought GPUs with no rented bridge launches (None:
    every class serves from today): what a plan that may not rent leaves unserved."""
    bridged = {b.cls for b, _ in sol.bridges}
    days = []
    for k in range(len(problem.serve_classes)):
        late, day = _late(problem, sol, k)
        if late and k not in bridged:
            days.append(day)
    return max(days, default=None)


def late_service(problem: Problem, sol: Solution) -> list[dict]:
    """A request class served by bought GPUs that arrive after today (lead time, then burn-in): the
    bridge the plan rents until then (its cash is in the plan's cost, `bridge_usd`: solve/serving_bridge.py
    prices it), or, with none (`until_arrival: wait`, or no rented layout allowed), the day it launches."""
    out = []
    for k, cls in enumerate(problem.serve_classes):
        late, day = _late(problem, sol, k)
        if not late:
            continue
        names = " and ".join(problem.catalog.gpus[g].name for g in late)
        msg = f"{cls.name}: served by bought {names}, which arrive{' by' if len(late) > 1 else ' on'} day {day} (lead time, then burn-in). "
        bridges = [(b, n) for b, n in sol.bridges if b.cls == k]
        if bridges:
            idle = [(b, x / b.gpus) for key, (x, b) in sorted(sol.bridge_idle.items()) if key[0] == k]
            cash = sum((b.run_cost_nominal or b.run_cost_usd) * n for b, n in bridges + idle)
            rented = "; ".join(
                f"{n} replica{'s' if n != 1 else ''} of {b.gpus} {problem.catalog.gpus[b.gpu].name} for "
                f"{b.hours:,.0f} h"
                + (f" (until the {', '.join(stands_in_for(b, sol.bought))} arrive)" if len(late) > 1 else "")
                for b, n in bridges
            )
            extra = sum(x for x, _ in sol.bridge_idle.values()) and any(key[0] == k for key in sol.bridge_idle)
            msg += (
                f"Until then the plan rents {rented}, which with the replicas already up hold the peak"
                f"{' with any one replica down' if cls.spare else ''}: ${cash:,.0f} in cash"
                + (" (whole nodes billed)" if extra else "")
                + ", in the plan's cost as bridge_usd."
            )
            out.append({"rule": None, "code": "serving-bridge", "message": msg})
            continue
        if waits(problem, k):
            msg += "The workload waits for them (until_arrival: wait): serving launches that day."
        else:
            msg += (
                "No rented layout is allowed here (deployment.ownership or the catalog's rates) to serve until "
                "then: plan the launch for that day."
            )
        out.append({"rule": None, "code": "serving-starts-late", "message": msg})
    return out


def serving_insights(problem: Problem, sol: Solution, settings: SolveSettings) -> dict:
    """Re-solves: +30% traffic, and the best plan on one GPU type for the mix's saving."""
    if not sol.serving or not sol.feasible:
        return {}
    base = baseline(problem)
    replicas = sum(n for _, n in sol.serving)
    more = solve(problem, base.but(traffic_factor=TRAFFIC_STEP), settings)
    step = f"+{round(100 * (TRAFFIC_STEP - 1))}% traffic"
    if more.feasible:
        added = sum(n for _, n in more.serving) - replicas
        extra = float(more.objective_usd or 0.0) - float(sol.objective_usd or 0.0)
        traffic = {
            "change": step,
            "replicas_added": added,
            "extra_cost_usd": round(extra, 2),
            "message": (
                f"{step} adds {added} replica{'s' if added != 1 else ''}, ${extra:,.0f}"
                if added > 0
                else f"{step} needs no more replicas"
                + (f" but a dearer layout, ${extra:,.0f}" if extra > 0.5 else " and costs nothing more")
            ),
        }
    else:
        traffic = {
            "change": step,
            "replicas_added": None,
            "extra_cost_usd": None,
            "message": f"{step} has no plan within the workload's limits",
        }
    singles = []
    for gid in sorted({c.gpu for cs in problem.serve_candidates for c in cs}):
        s = solve(problem, base.but(only_gpu=gid), settings)
        if s.feasible:
            singles.append((float(s.objective_usd or 0.0), gid))
    types = sorted(sol.gpu_types())
    mix: dict[str, Any] = {"gpu_types": types, "cost_usd": sol.objective_usd}
    if singles:
        cost, gid = min(singles)
        saving = cost - float(sol.objective_usd or 0.0)
        mix.update(
            {
                "best_single_gpu": gid,
                "best_single_cost_usd": cost,
                "saving_usd": round(saving, 2),
                "saving_pct": round(100 * saving / cost, 2) if cost else 0.0,
                "message": _mix_words(types, saving, cost, gid),
            }
        )
    return {"traffic": traffic, "mix": mix}


def _mix_words(types: list[str], saving: float, cost: float, gid: str) -> str:
    """What the plan's GPU types save against the best plan on one type (`gid`, `cost`): a mix that ties
    with one type is said to tie, not called "one GPU type" (audit28: "one GPU type (rtx-3090, rtx-a6000)")."""
    if len(types) == 1:
        return f"one GPU type ({types[0]}) is the cheapest; no mix saves money"
    mix, single = f"the mix of {', '.join(types)}", f"the best plan on one GPU type ({gid}, ${cost:,.0f})"
    if saving > 0.5:
        return f"{mix} costs ${saving:,.0f} ({100 * saving / cost:.1f}%) less than {single}"
    if saving >= -0.5:
        return f"{mix} costs the same as {single}: no mix saves money, and either can be bought"
    return f"{mix} costs ${-saving:,.0f} more than {single}, within the solver's gap: no mix saves money"
