"""The candidates one solve may use (`usable_candidates`): those meeting a scenario's limits,
without the dominated ones. Kept apart from the MILP so the filter, the part every re-solve
shares, can be remembered per problem."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from advisor.solve.constraints import bounds
from advisor.solve.constraints.base import Bounds
from advisor.solve.constraints.gpu_count import RentedCounts, draw_band, rented_counts
from advisor.solve.problem import Candidate, Problem, ServeCandidate
from advisor.solve.reserved import pool_key, pooling
from advisor.solve.scenario import Scenario
from advisor.solve.serving_bridge import serving_allowed
from advisor.solve.settings import FLEET_JOBS

Pooled = Callable[[Candidate], bool] | None  # does a candidate share reserved nodes (solve/reserved.py)


def usable_candidates(
    problem: Problem, sc: Scenario, faster_too: bool = False, by_band: bool = False
) -> list[list[Candidate]]:
    """Per class: candidates within the Bounds the constraint families set under the scenario (its
    deadlines at the confidence quantile, a makespan cap on the estimate, a single job's GPU-count
    bounds, the stock) and its GPU-type restriction, without those another candidate of the same
    type and ownership dominates (on cost alone, or also on time with `faster_too`). A class's
    answer is kept in the problem by what decides it (its bounds, the GPU-type restriction and the
    speed factors of its GPUs): every re-solve with the same ones (a price, budget or power change,
    say) reuses it."""
    out = []
    memo = problem.solver_cache.setdefault("usable", {})
    speed = tuple(sorted(sc.speed_factor.items()))
    factors = sc.speed_factor
    for k, cands in enumerate(problem.candidates):
        b = bounds(problem, sc, k)
        key = (
            k,
            faster_too,
            b.planned_hours,
            b.hours,
            sc.only_gpu,
            sc.ownership,
            b.min_count,
            b.max_count,
            b.start_scale,
            speed,
            apart := tuple(sorted(sc.offer_factor)),
            by_band,
        )
        hit = memo.get(key)
        if hit is None:
            if sc.only_gpu is not None:
                cands = _of_gpu(problem, k, sc.only_gpu)
            hit = memo[key] = undominated(
                [
                    at_speed(c, factors.get(c.gpu, 1.0))
                    for c in cands
                    if sc.ownership in (None, c.ownership) and within(c, b, factors.get(c.gpu, 1.0))
                ],
                faster_too,
                rented_counts(problem),
                frozenset(apart),
                (lambda c: pool_key(problem, c) is not None) if pooling(problem) else None,
                timed(problem, k),
                by_band,
            )
        out.append(list(hit))
    return out


def within(c: Candidate, b: Bounds, factor: float = 1.0) -> bool:
    """Does candidate c, at `factor` x its estimated speed, meet bounds b (from its start)?"""
    hours = c.hours if factor == 1.0 else c.hours / factor
    start = c.start_hours * b.start_scale
    return (
        start + hours * c.time_factor <= b.planned_hours * (1 + 1e-9)
        and start + hours <= b.hours * (1 + 1e-9)
        and (b.max_count is None or c.count <= b.max_count)
        and (b.min_count is None or c.count >= b.min_count)
        and c.count <= b.max_count_of.get(c.gpu, math.inf)
    )


def usable_serving(problem: Problem, sc: Scenario) -> list[list[ServeCandidate]]:
    """Per serving class: candidates on the scenario's GPU type (only_gpu) and ownership, within the stock."""
    return [[c for c in cs if serving_allowed(problem, sc, c)] for cs in problem.serve_candidates]


def _of_gpu(problem: Problem, k: int, gpu: str) -> list[Candidate]:
    """Class k's candidates of one GPU type, in order (an explanation about one type filters these
    many times: a deadline bisection per GPU type not chosen)."""
    by_class: dict[int, dict[str, list[Candidate]]] = problem.solver_cache.setdefault("by_gpu", {})
    groups = by_class.get(k)
    if groups is None:
        groups = by_class[k] = {}
        for c in problem.candidates[k]:
            groups.setdefault(c.gpu, []).append(c)
    return groups.get(gpu, [])


def at_speed(c: Candidate, factor: float) -> Candidate:
    """The candidate if its GPU's real speed is `factor` x the estimate (Scenario.speed_factor)."""
    if factor == 1.0:
        return c
    if c.commits:  # what its term bills at this speed (Candidate.run_cost_scale), else / factor
        scale = c.run_cost_scale(factor)
        run, nominal = c.run_cost_usd * scale, None if c.run_cost_nominal is None else c.run_cost_nominal * scale
    else:
        run, nominal = c.run_cost_usd / factor, None if c.run_cost_nominal is None else c.run_cost_nominal / factor
    # what dataclasses.replace gives (Candidate has no __post_init__ or slots), 3.5x faster: a robustness
    # model makes one per candidate of every GPU type (62,000 in the 200-job fleet)
    out = object.__new__(Candidate)
    out.__dict__.update(c.__dict__)
    out.tokens_per_s, out.hours = c.tokens_per_s * factor, c.hours / factor
    out.run_cost_usd, out.run_cost_nominal = run, nominal
    if c.commits and c.billed_hours:
        out.billed_hours = c.billed_hours * scale
    return out


def timed(problem: Problem, k: int) -> bool:
    """Does the time of class k's bought columns count in their dominance: it is one job with a
    deadline, beside two or more such (they run at once or in turn on a bought GPU type: late_cuts.py),
    in a workload of fewer than FLEET_JOBS jobs? Then a column on more GPUs that is faster may let the
    jobs run in turn on fewer GPUs than a cheaper, slower one at once: three pretrains due in 45-55
    days run on 48 H100 at 32, 16 and 32 GPUs (tests/test_late_rows.py), where their cheapest columns (24, 16 and
    16 GPUs) need 56 at once. Elsewhere cost dominance stands: a fleet's plan is proven within 1% (no
    polish) and its columns would multiply; jobs with copies are not held by the late rows."""
    single = sum(c.deadline is not None and c.multiplicity == 1 for c in problem.classes)
    cls = problem.classes[k]
    return (
        cls.deadline is not None
        and cls.multiplicity == 1
        and single >= 3
        and problem.job_count < FLEET_JOBS
        and not problem.workload.allow_mixed
    )


def _cost_dominance(
    cands: list[Candidate],
    rented: RentedCounts = "fewer",
    any_speed: bool = False,
    apart: frozenset[tuple[str, str]] = frozenset(),
    pooled: Pooled = None,
    timed: bool = False,
    by_band: bool = False,
) -> Iterator[tuple[list[int], np.ndarray, np.ndarray]]:
    """Per (GPU, ownership) group with two or more candidates: (its indices in `cands`, its figures
    (count, GPU-hours, run cost, hours), the matrix whose row o, column c is True when o needs no
    more GPU-hours or run cost than c, its GPU count is as good (no more GPUs; for rented ones, as
    `rented` says: gpu_count.rented_counts) and it differs from c on one of the three). `any_speed`:
    for a model re-costed at other speeds, a commitment (Candidate.commits: billed its term at any
    speed that fits) is in no group, as its cost does not scale as the others' do; nor is a job that shares
    reserved nodes (`pooled`, solve/reserved.pool_key: its cost is its share of a pool, not its own); nor,
    for a (GPU, provider) in `apart` (an offer whose rate a scenario moves alone), is that offer's with the
    others; `by_band`: nor are offers drawn in one band with another's (a draw moves each band's rates by
    its own, explain/draws.py: the redrawn model's; gpu_count.draw_band, by order and GPUs held, not the
    listed grade). `timed` (usable.timed): a bought
    candidate's planned time counts too."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for j, c in enumerate(cands):
        alone = c.commits and (any_speed or (pooled is not None and pooled(c)))
        provider = c.offer.offer.provider if c.offer is not None else ""
        band = draw_band(c.offer.offer, c) if by_band and c.offer is not None else (None, "")
        own = ("apart", provider) if (c.gpu, provider) in apart else band
        groups.setdefault((c.gpu, c.ownership, j if alone else -1, *own), []).append(j)
    figures = np.array(
        [(c.count, c.gpu_hours, c.run_cost_usd, c.hours, c.planned_hours) for c in cands], dtype=float
    ).reshape(-1, 5)
    for members in groups.values():
        if len(members) < 2:
            continue
        f = figures[members]
        n, gh, rc = f[:, 0], f[:, 1], f[:, 2]
        order = rented if cands[members[0]].ownership == "rent" else "fewer"
        if order == "fewer":
            count_ok = n[:, None] <= n[None, :]
        elif order == "more":
            count_ok = n[:, None] >= n[None, :]
        else:
            count_ok = n[:, None] == n[None, :]
        le = count_ok & (gh[:, None] <= gh[None, :]) & (rc[:, None] <= rc[None, :])
        le &= (n[:, None] != n[None, :]) | (gh[:, None] != gh[None, :]) | (rc[:, None] != rc[None, :])
        if timed and cands[members[0]].ownership == "buy":
            le &= f[:, 4][:, None] <= f[:, 4][None, :]
        yield members, f, le


def undominated(
    cands: list[Candidate],
    faster_too: bool = False,
    rented: RentedCounts = "fewer",
    apart: frozenset[tuple[str, str]] = frozenset(),
    pooled: Pooled = None,
    timed: bool = False,
    by_band: bool = False,
) -> list[Candidate]:
    """Drop c' when a candidate of the same GPU and ownership needs no more GPUs (rented ones: a
    count as good for the fleet's size, `rented`), GPU-hours or run cost (the cost objective can
    never prefer c'), and with `faster_too` no more wall time.
    Dominance is transitive (a dominator of a dominator dominates), so what is kept is exactly
    what no candidate dominates: one comparison of every pair within each (GPU, ownership)
    group, as arrays (an offer in `apart`, priced alone, in a group of its own). Candidates keep their order."""
    if len(cands) < 2:
        return list(cands)
    dominated = np.zeros(len(cands), dtype=bool)
    for members, f, le in _cost_dominance(cands, rented, faster_too, apart, pooled, timed, by_band):
        if faster_too:
            le &= f[:, 3][:, None] <= f[:, 3][None, :]
        dominated[members] = le.any(axis=0)
    return [c for c, d in zip(cands, dominated) if not d]


def cost_dominators(
    cands: list[Candidate], rented: RentedCounts = "fewer", timed: bool = False, by_band: bool = False
) -> list[int | None]:
    """Per candidate, the index in `cands` of the fastest candidate of its GPU type and ownership
    that dominates it on cost (a count as good, no more GPU-hours or run cost, and not equal on all three; the
    first such in order on a tie of hours), or None. Cost dominance holds at every speed (a GPU
    type's candidates billed by use all scale alike; a commitment is left out, _cost_dominance), so
    speed models and robustness draws compute it once."""
    out: list[int | None] = [None] * len(cands)
    for members, f, le in _cost_dominance(cands, rented, any_speed=True, timed=timed, by_band=by_band):
        fastest = np.where(le, f[:, 3][:, None], np.inf).argmin(axis=0)  # first of the least hours
        has = np.asarray(le.any(axis=0), dtype=bool)
        for col, o in enumerate(fastest.tolist()):
            if has[col]:
                out[members[col]] = members[o]
    return out


def dominators(problem: Problem, cands: list[list[Candidate]], rented: RentedCounts) -> dict[int, Candidate | None]:
    """Per candidate (by id), the fastest candidate that dominates it on cost (None: nothing does;
    cost_dominators, offers drawn in one band together: gpu_count.draw_band): the same at every speed,
    as a GPU type's candidates all scale alike (what a robustness draw bounds to 0, solve/redraw.py)."""
    return {
        id(c): None if o is None else cs[o]
        for k, cs in enumerate(cands)
        for c, o in zip(cs, cost_dominators(cs, rented, timed(problem, k), by_band=True))
    }
