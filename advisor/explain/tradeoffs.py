"""Trade-offs a memo charts: the cheapest plan per GPU type under a sweep of completion-time
caps (cost against time), and training speed per dollar of each considered GPU. Computed by
re-solving and estimating here, so that the memo only draws them."""

from __future__ import annotations

from advisor.data.estimator import Params
from advisor.perf import evaluate, min_gpus
from advisor.solve.constraints.at_once import makespan_hours
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.sweeps import frontier


def _sample(values: list, n: int) -> list:
    if len(values) <= n:
        return values
    step = (len(values) - 1) / (n - 1)
    return sorted({values[round(i * step)] for i in range(n)})


def cost_time_points(problem: Problem, settings: SolveSettings, per_gpu: int = 10) -> dict:
    """For the cost-time chart: per allowed GPU type, the cheapest plan using only it under a
    sweep of completion-time caps (hours, USD, GPU count), and the Pareto front of all of them."""
    series = {}
    for gid in problem.considered:
        if gid in problem.rejected:
            continue
        # completion times from today (a candidate's start, then its hours): the makespan caps worth trying
        hours = sorted({round(c.start_hours + c.hours, 9) for cs in problem.candidates for c in cs if c.gpu == gid})
        points: list[tuple[float, float, int]] = []
        for h in _sample(hours, per_gpu):
            s = solve(problem, baseline(problem).but(only_gpu=gid, makespan_hours=h), settings)
            if s.objective_usd is not None:  # feasible
                n = sum(s.bought.values()) or max((c.count for c in s.chosen), default=0)
                point = (makespan_hours(problem, s), s.objective_usd, n)
                if all(abs(point[0] - p[0]) > 1e-9 or abs(point[1] - p[1]) > 1e-6 for p in points):
                    points.append(point)
        if points:
            series[gid] = sorted(points)
    front = [(makespan_hours(problem, s), s.objective_usd) for s in frontier(problem, settings, points=16)]
    return {"series": series, "front": front}


def value_points(problem: Problem, params: Params) -> dict:
    """For the value chart: tokens/s per $1,000 of purchase price (or, when the workload rents,
    million tokens per $1 of rent) of each considered GPU on the first job, on the fewest GPUs
    that hold it."""
    renting = problem.workload.deployment.renting_only
    cls = problem.classes[0]
    rows = []
    for gid in problem.considered:
        g = problem.catalog.gpus[gid]
        rule_ids = (
            sorted({r["rule"] for r in problem.rejected[gid].reasons if r.get("rule")})
            if gid in problem.rejected
            else []
        )
        n = min_gpus(cls.spec, g, params)
        est = evaluate(cls.spec, g, n, params) if n else None
        price = (g.rental.usd_per_gpu_hour if g.rental else None) if renting else g.purchase_usd
        value, note = None, None
        if est is None or n is None or not est.fits:
            note = "does not fit in memory"
        elif price is None:
            note = f"no {'rental' if renting else 'purchase'} price in the catalog"
        else:
            value = est.tokens_per_s * 3600 / (n * price) / 1e6 if renting else est.tokens_per_s / (n * price) * 1000
        rows.append({"gpu": gid, "name": g.name, "count": n, "value": value, "note": note, "rules": rule_ids})
    unit = "million tokens per $1 of rent" if renting else "tokens/s per $1,000 of purchase price"
    return {"rows": rows, "unit": unit, "job": cls.name(problem.workload), "renting": renting}
