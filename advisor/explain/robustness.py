"""The robustness verdict: draw every GPU type's real speed and prices from their distributions
(catalog/uncertainty.yaml), re-solve, and count how often the recommended purchase (its GPU types,
bought or rented) stays the cheapest plan -- and what wins otherwise.

Seeded (same input, same verdict) and cheap: one model, its coefficients changed per draw
(solve/redraw.py). DRAWS = 200 keeps the check within 3x the plan's own solve on the article
examples (docs/accuracy.md, "Ranges").
"""
from __future__ import annotations

import random
from collections import Counter

from advisor.explain.ranges import (
    SEED,
    cost_range,
    gpu_prices,
    gpu_speed,
    job_ranges,
    normal,
)
from advisor.solve.candidates import Problem
from advisor.solve.milp import Solution, solve
from advisor.solve.redraw import Redraw, describe, signature
from advisor.solve.run import stage, step
from advisor.solve.scenario import baseline

DRAWS = 200
MIN_DRAWS = 40
COLUMNS_AT_FULL = 400   # models with more candidate columns get proportionally fewer draws (not below MIN_DRAWS)


def draws_for(columns: int, draws: int = DRAWS) -> int:
    """N: 200 draws, fewer for large models so the check stays near 3x the plan's time (deterministic)."""
    return max(min(draws, MIN_DRAWS), min(draws, draws * COLUMNS_AT_FULL // max(columns, 1)))


def robustness(problem: Problem, sol: Solution, time_limit: float | None = 30.0,
               draws: int = DRAWS, seed: int = SEED) -> dict | None:
    """{draws, seed, holds, holds_share, alternatives: [{purchase, share}], message}; None without a plan."""
    if not sol.feasible or draws <= 0:
        return None
    gids = [g for g in problem.considered if g not in problem.rejected]
    rng = random.Random(seed)
    samples = []
    for _ in range(draws):
        speed, buy, rent = {}, {}, {}
        for g in gids:
            s_d = gpu_speed(problem, g)
            b_d, r_d = gpu_prices(problem, g)
            speed[g], buy[g], rent[g] = (s_d.factor_at(normal(rng)), b_d.factor_at(normal(rng)),
                                         r_d.factor_at(normal(rng)))
        samples.append((speed, buy, rent))
    fastest = {g: max(s[0][g] for s in samples) for g in gids}
    columns = sum(len(cs) for cs in problem.candidates)
    samples = samples[:draws_for(columns, draws)]
    draws = len(samples)
    redraw = Redraw(problem, baseline(problem), fastest, time_limit, [s[0] for s in samples])
    chosen = frozenset((c.gpu, c.ownership) for c in sol.chosen)
    names = {g: problem.catalog.gpus[g].name for g in gids}
    held, other = 0, Counter[str]()
    with stage("robustness", total=draws):   # the CLI's progress line counts the draws
        got_all = []
        for speed, buy, rent in samples:
            got_all.append(redraw.choice(speed, buy, rent))
            step()
    for got in got_all:
        if got is not None and got[0] == chosen:
            held += 1
        else:
            other[describe(got[1], names) if got else "no feasible plan"] += 1
    ranked = sorted(other.items(), key=lambda kv: (-kv[1], kv[0]))
    alts: list[dict] = [{"purchase": k, "share": v / draws} for k, v in ranked]
    share = held / draws
    mine = describe(signature(sol.bought, sol.assignment), names)
    msg = f"the choice ({mine}) holds in {100 * share:.0f}% of {draws} draws of speed and price"
    if alts:
        msg += f"; otherwise {alts[0]['purchase']} ({100 * alts[0]['share']:.0f}%)"
    return {"draws": draws, "seed": seed, "holds": held, "holds_share": share, "alternatives": alts[:5],
            "reused_model": redraw.model is not None, "message": msg}


def plan_ranges(problem: Problem, sol: Solution, jobs: list[dict], *, robust: bool,
                time_limit: float | None = 30.0) -> dict:
    """The range keys of a plan (DESIGN.md §5): each job's `wall_days_range` and `wall_days_planned`
    (added to `jobs` in place), `total_cost_usd_range`, the `confidence` deadlines were held at, and
    (robust=True) the `robustness` verdict. Existing keys are left as they are."""
    level = problem.workload.confidence
    out: dict = {"confidence": {"level": level, "quantile": f"P{round(100 * level)}",
                                "message": f"every deadline holds at the P{round(100 * level)} job time "
                                           f"(workload confidence {level:g}; default 0.8)"}}
    if not sol.feasible:
        return out
    for job, extra in zip(jobs, job_ranges(problem, sol)):
        job.update(extra)
    out["total_cost_usd_range"] = cost_range(problem, sol)
    if robust:
        out["robustness"] = robustness(problem, sol, time_limit)
    return out


def range_points(problem: Problem, time_limit: float | None = 30.0) -> list[dict]:
    """For the memo's cost-time chart with whiskers: per allowed GPU type, its cheapest plan using
    only that type, with P10/P50/P90 completion days and total cost."""
    out = []
    for gid in problem.considered:
        if gid in problem.rejected:
            continue
        s = solve(problem, baseline(problem).but(only_gpu=gid), time_limit=time_limit)
        if not s.feasible:
            continue
        spans = job_ranges(problem, s)
        days = {k: max(r["wall_days_range"][k] for r in spans) for k in ("p10", "p50", "p90")}
        out.append({"gpu": gid, "days": days, "cost_usd": s.objective_usd, "cost_usd_range": cost_range(problem, s)})
    return out
