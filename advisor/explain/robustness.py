"""The robustness verdict: draw every GPU type's real speed and prices from their distributions
(catalog/uncertainty.yaml), re-solve, and count how often the recommended purchase (its GPU types,
bought or rented) stays the cheapest plan -- and what wins otherwise.

Seeded (same input, same verdict) and cheap: one model, its coefficients changed per draw
(solve/redraw.py). DRAWS = 200 keeps the check within 3x the plan's own solve on the article
examples (docs/accuracy.md, "Ranges").

Sequential stop: the draws are looked at after every CHECK_EVERY of them, and stop once the 95%
(Wilson) interval of the share that holds is at most SETTLED_WIDTH wide, i.e. the share is known
to within about 5 points (40 of 40 draws hold: 91-100%). The draws are the first of the same
seeded sequence, and the model is built for all of them, so a stopped verdict is the full one cut
short (same input, same verdict); its message says how many were drawn and the interval.
"""
from __future__ import annotations

import math
import random
import time
from collections import Counter

from advisor.explain.ranges import (
    SEED,
    cost_range,
    gpu_prices,
    gpu_speed,
    job_ranges,
    normal,
)
from advisor.solve import parallel
from advisor.solve.candidates import Problem
from advisor.solve.milp import Solution, solve
from advisor.solve.redraw import Redraw, describe, signature
from advisor.solve.run import stage, step
from advisor.solve.scenario import baseline

DRAWS = 200
MIN_DRAWS = 40
CHECK_EVERY = MIN_DRAWS   # draws between two looks at the verdict (so never fewer than MIN_DRAWS)
SETTLED_WIDTH = 0.10   # stop once the hold share's 95% interval is at most 10 points wide
Z95 = 1.959964         # the two-sided 95% normal quantile
COLUMNS_AT_FULL = 400   # models with more candidate columns get proportionally fewer draws (not below MIN_DRAWS)


def draws_for(columns: int, draws: int = DRAWS) -> int:
    """N: 200 draws, fewer for large models so the check stays near 3x the plan's time (deterministic)."""
    return max(min(draws, MIN_DRAWS), min(draws, draws * COLUMNS_AT_FULL // max(columns, 1)))


def wilson(held: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a share `held` of `n` (exact enough at 0 and n, unlike +-1.96 sd)."""
    p, z2 = held / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def settled(held: int, n: int) -> bool:
    """Is the verdict decided: the 95% interval of the hold share at most SETTLED_WIDTH wide?"""
    lo, hi = wilson(held, n)
    return hi - lo <= SETTLED_WIDTH


def robustness(problem: Problem, sol: Solution, time_limit: float | None = 30.0,
               draws: int = DRAWS, seed: int = SEED) -> dict | None:
    """{draws, seed, holds, holds_share, alternatives: [{purchase, share}], message}; None without a plan."""
    if not sol.feasible or draws <= 0:
        return None
    gids = [g for g in problem.considered if g not in problem.rejected]
    rng = random.Random(seed)
    dists = {g: (gpu_speed(problem, g), *gpu_prices(problem, g)) for g in gids}
    samples = []
    for _ in range(draws):
        speed, buy, rent = {}, {}, {}
        for g in gids:
            s_d, b_d, r_d = dists[g]
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
    got_all: list = []
    per_draw = None   # CPU s of a draw, measured on the first: is a block worth a second process?
    with stage("robustness", total=draws):   # the CLI's progress line counts the draws
        while len(got_all) < draws:
            start = len(got_all)
            block = samples[start:min(draws, start + CHECK_EVERY)]
            if per_draw is None:
                t = time.process_time()
                got = [redraw.choice(*block[0])]
                per_draw = time.process_time() - t
                block = block[1:]
            else:
                got = []
            # each draw is a fresh HiGHS run of the model with that draw's coefficients: a block's
            # draws over both cores (solve/parallel.py), merged in index order, as drawn serially
            got += parallel.run(lambda i: redraw.choice(*block[i]), len(block), work_s=per_draw * len(block))
            for one in got:
                got_all.append(one)
                held += one is not None and one[0] == chosen
                step()
            n = len(got_all)
            if n < draws and settled(held, n):   # looked at every CHECK_EVERY draws
                break
    for got in got_all:
        if got is None or got[0] != chosen:
            other[describe(got[1], names) if got else "no feasible plan"] += 1
    planned, draws = draws, len(got_all)
    ranked = sorted(other.items(), key=lambda kv: (-kv[1], kv[0]))
    alts: list[dict] = [{"purchase": k, "share": v / draws} for k, v in ranked]
    share = held / draws
    mine = describe(signature(sol.bought, sol.assignment), names)
    msg = f"the choice ({mine}) holds in {100 * share:.0f}% of {draws} draws of speed and price"
    if alts:
        msg += f"; otherwise {alts[0]['purchase']} ({100 * alts[0]['share']:.0f}%)"
    if draws < planned:
        lo, hi = wilson(held, draws)
        msg += f" (stopped at {draws} of {planned} draws: settled, 95% interval {100 * lo:.0f}-{100 * hi:.0f}%)"
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
