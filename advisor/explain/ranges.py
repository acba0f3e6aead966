"""Ranges, not points: each job's time and the plan's total cost as P10/P50/P90, and how far the
real speed may be from the estimate before the choice flips (re-solved, as price break-evens are).

Job times are analytic (time = tokens / speed, so its quantiles are the speed's, reversed). The
total cost of the chosen plan is a seeded Monte Carlo over speeds (energy and rent scale with
time) and prices (purchase and rent, by each price's confidence; catalog/uncertainty.yaml), drawn
jointly (explain/draws.py): same input, same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from advisor.explain.draws import Prices, estimate_speed, joint_draws
from advisor.explain.plan_cost import PlanCost
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.redraw import describe, signature
from advisor.solve.rental_offers import pairs_of
from advisor.solve.reserved import paid_training
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.settings import FLEET_JOBS, SolveSettings
from advisor.solve.solution import Solution

__all__ = ["COST_DRAWS", "SEED", "cost_range", "job_ranges", "quantile", "speed_sensitivity", "speed_tasks", "triple"]

COST_DRAWS = 2000
SEED = 16
SLOWEST = 0.2  # speed sensitivity searches down to 80% below the estimate ...
FASTEST = 3.0  # ... and up to 200% above it
# the break-even is searched on whole percents: the choice holds at P - 1 and changes at P, both
# decided by solves proven within EXACT_GAP (_decided; a fleet's: approximate when its 1% solves are not)
FIRST_PROBE = 16  # after the limit, the first percent tried (then 32, 64, ... below the limit)
EXACT_GAP = 1e-6  # the two sides of a break-even are decided by solves proven within this of the optimum


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def triple(lo: float, mid: float, hi: float) -> dict:
    return {"p10": lo, "p50": mid, "p90": hi}


def job_ranges(problem: Problem, sol: Solution) -> list[dict]:
    """Per assigned job (plan order): wall days at P10/P50/P90 and at the workload's confidence."""
    out = []
    for c, _ in sol.assignment:  # the job's own estimate: its evidence, the user's measurement, its physics
        d = estimate_speed(problem, c)
        days = c.hours / 24
        out.append(
            {
                "wall_days_range": triple(days / d.factor(0.9), days / d.factor(0.5), days / d.factor(0.1)),
                "wall_days_planned": c.planned_hours / 24,
            }
        )
    return out


def cost_range(problem: Problem, sol: Solution, draws: int = COST_DRAWS, seed: int = SEED) -> dict:
    """P10/P50/P90 of the chosen plan's total cost over joint draws of its GPUs' speeds and prices
    (explain/draws.py; the plan's cost in a draw: explain/plan_cost.py)."""
    cost = PlanCost.of(problem, sol)
    totals = cost.at(joint_draws(problem, draws, seed, gpus=sorted(cost.gpus()))).tolist()
    return triple(quantile(totals, 0.1), quantile(totals, 0.5), quantile(totals, 0.9))


def _what(problem: Problem, s: Solution) -> str:
    if not s.feasible:
        return "no plan meets the constraints"
    return describe(signature(problem, s.bought, s.assignment, s.serving))


def _first_change(holds: Callable[[int], bool], bad: int, good: int = 0) -> int:
    """The smallest whole percent p in (good, bad] at which `holds(p)` is false, by bisection on whole
    percents: holds(good) is known true (0: the plan itself) and holds(bad) false (ceil(log2 (bad -
    good)) re-solves)."""
    while bad - good > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if holds(mid) else (good, mid)
    return bad


def _search(holds: Callable[[int], bool], limit: int) -> tuple[int, int] | None:
    """(good, bad): whole percents with holds(good) true (0: the plan itself) and holds(bad) false;
    None when the choice holds at `limit` (one re-solve, as before). Else the bracket is found from
    FIRST_PROBE up by doubling (below the limit): break-evens mostly lie within a few tens of
    percents, where this brackets them in 1-2 re-solves and leaves (good, bad] narrow: 6 re-solves
    up to 16%, 6-7 up to 32%, against ceil(log2 limit) + 1 (7-8 slower, 8-9 faster) for bisecting
    all of (0, limit]; above 32% it may take up to 3 more."""
    if holds(limit):
        return None
    good, probe = 0, FIRST_PROBE
    while probe < limit and holds(probe):
        good, probe = probe, 2 * probe
    return good, min(probe, limit)


def speed_sensitivity(problem: Problem, sol: Solution, alts: dict, settings: SolveSettings) -> list[dict]:
    """How much slower than estimated the chosen GPU may really be, and how much faster the
    runner-up would have to be, before the choice changes: the limit first, then doubling from
    FIRST_PROBE to bracket the change and bisection inside it, on Scenario.speed_factor, re-solving
    each step at `settings` (assemble: the plan's own gap). The choice is (GPU, buy or rent), so
    renting instead of buying the same GPU counts as a change. `percent` P is a whole percent: the
    choice holds at P - 1 and has changed at P, both decided by solves proven within EXACT_GAP
    (_decided; `switches_to` is the plan at P), else the message says it is approximate."""
    return [e for task in speed_tasks(problem, sol, alts, settings) for e in task()]


def speed_tasks(
    problem: Problem, sol: Solution, alts: dict, settings: SolveSettings, prices: Prices | None = None
) -> list[Callable[[], list[dict]]]:
    """speed_sensitivity as independent calls, one per GPU type (the chosen one slower, the
    runner-up faster): each search is sequential, the two are not (solve/parallel.py runs them
    on both cores). Their entries, concatenated in order, are speed_sensitivity's."""
    if not sol.feasible or not sol.chosen or (prices is not None and problem.job_count >= FLEET_JOBS):
        return []  # (a fleet chosen on expected cost: not searched, as its price break-evens, sensitivity.searched)
    chosen = _most_spent(problem, sol)
    gid, own = chosen
    base = baseline(problem) if prices is None else prices.on(baseline(problem))  # (expected prices: see decision.py)
    slowest, fastest = round(100 * (SLOWEST - 1)), round(100 * (FASTEST - 1))  # -80, +200

    def slower() -> list[dict]:
        return _speed_break_even(
            problem,
            base,
            settings,
            gid,
            -1,
            lambda s: s.feasible and chosen in pairs_of(s),
            -slowest,
            {"gpu": gid, "ownership": own, "direction": "slower", "what": "speed"},
            f"{gid} ({own}) stays the choice even if its real speed is {100 * (1 - SLOWEST):.0f}% below the estimate",
            lambda pct, to: (
                f"{gid} ({own}) stays the choice unless its real speed is {pct} below the estimate (then: {to})"
            ),
        )

    tasks = [slower]
    costed = {g: a["forced_cost_usd"] for g, a in alts.items() if a.get("forced_cost_usd") is not None}
    if costed:
        runner = min(sorted(costed), key=lambda g: costed[g])

        def faster() -> list[dict]:  # holds while the runner-up is still not chosen
            return _speed_break_even(
                problem,
                base,
                settings,
                runner,
                1,
                lambda s: not (s.feasible and runner in s.gpu_types()),
                fastest,
                {"gpu": runner, "ownership": None, "direction": "faster", "what": "speed"},
                f"{runner} (runner-up) would not become the choice even at "
                f"{100 * (FASTEST - 1):.0f}% above its estimated speed",
                lambda pct, to: (
                    f"{runner} becomes the choice if its real speed is {pct} above the estimate (then: {to})"
                ),
            )

        tasks.append(faster)
    return tasks


def _most_spent(problem: Problem, sol: Solution) -> tuple[str, str]:
    """The (GPU, ownership) the plan spends most on, running and buying: the choice whose real speed
    the slower search moves (ties: the first in sorted order)."""
    spend: dict[tuple[str, str], float] = {}
    for c, n in paid_training(problem, sol.assignment):
        spend[c.gpu, c.ownership] = spend.get((c.gpu, c.ownership), 0.0) + c.run_cost_usd * n
    for g, n in sol.bought.items():
        spend[g, "buy"] = spend.get((g, "buy"), 0.0) + (problem.unit_price[g] or 0.0) * n
    return max(sorted(spend), key=lambda k: spend[k])


def _speed_break_even(
    problem: Problem,
    base: Scenario,
    settings: SolveSettings,
    g: str,
    sign: int,
    holds_at: Callable[[Solution], bool],
    limit: int,
    entry: dict,
    never: str,
    changes: Callable[[str, str], str],
) -> list[dict]:
    """One task of speed_tasks: the first whole percent (slower: sign -1, faster: +1) at which
    holds_at stops being true, searched on re-solves at `settings` with g's speed moved, then decided
    (_decided); `entry` the fields that do not depend on it, `never` the message when it holds up to
    `limit`."""
    solved: dict[tuple[int, float | None], Solution] = {}

    def at(pct: int, gap: float | None = None) -> Solution:  # the plan when g's real speed is pct% off its estimate
        if (pct, gap) not in solved:
            sc = base.but(speed_factor={g: (100 + sign * pct) / 100})
            solved[pct, gap] = solve(problem, sc, settings if gap is None else settings.but(gap=gap))
        return solved[pct, gap]

    found, gap = _decided(problem, at, holds_at, limit)
    caveat = "" if gap is None else f" ({_approximate(gap)})"
    if found is None:
        return [{**entry, "factor": None, "percent": None, "switches_to": None, "message": never + caveat}]
    to = _what(problem, _sure(problem, at, found))
    at_least = f"\u2265 {found}%" if gap is None else f"about {found}% or more"
    return [
        {
            **entry,
            "factor": round(1 + sign * found / 100, 2),
            "percent": found,
            "switches_to": to,
            "message": changes(at_least, to) + caveat,
        }
    ]


def _approximate(gap: float) -> str:
    """Why a break-even decided by solves proven only within `gap` (a fleet's 1%) is approximate."""
    proven = (
        "were not proven optimal within the time limit"
        if math.isinf(gap)
        else f"are proven only within {gap:.2%} of the least cost"
    )
    return f"approximate: its re-solves {proven}, and a few percent of speed can move the cost by less"


def _exact(sol: Solution) -> bool:
    """Is `sol` proven within EXACT_GAP of the optimum (no plan of the other side is cheaper by more)?"""
    gap = sol.solver.get("gap")
    return not sol.feasible or (bool(sol.solver.get("proven_optimal")) and gap is not None and gap <= EXACT_GAP)


def _sure(problem: Problem, at: Callable[..., Solution], pct: int) -> Solution:
    """The plan at pct decided at EXACT_GAP: the search's own when it is proven that close, else
    re-solved at EXACT_GAP (a problem of fewer than FLEET_JOBS jobs; a fleet's stays the search's)."""
    s = at(pct)
    return s if _exact(s) or problem.job_count >= FLEET_JOBS else at(pct, EXACT_GAP)


def _decided(
    problem: Problem, at: Callable[..., Solution], holds_at: Callable[[Solution], bool], limit: int
) -> tuple[int | None, float | None]:
    """(the first whole percent P at which the choice has changed, None when it holds at `limit`; None when that
    is exact, else the widest gap its deciding solves are proven within). The search runs on the re-solves' gap;
    its answer is then checked at EXACT_GAP (P - 1 holds, P changed; or the limit holds), and searched again on
    such solves if the check fails: a few percent of speed moves a plan's cost by well under the explanations'
    1%, so a gap-tolerant re-solve may keep the choice several percent past its break-even (train-and-serve: 48%
    printed where exact re-solves change it at 41%). Exact when every solve deciding the answer is proven within
    EXACT_GAP; a fleet's (FLEET_JOBS jobs or more) is not re-solved tighter: approximate unless its own solves
    are proven that close."""

    def loose(pct: int) -> bool:
        return holds_at(at(pct))

    def sure(pct: int) -> bool:
        return pct == 0 or holds_at(_sure(problem, at, pct))

    def answer(holds: Callable[[int], bool]) -> int | None:
        bracket = _search(holds, limit)
        return None if bracket is None else _first_change(holds, bracket[1], bracket[0])

    found = answer(loose)
    ok = sure(limit) if found is None else sure(found - 1) and not sure(found)
    if not ok:
        found = answer(sure)
    deciding = [_sure(problem, at, p) for p in ([limit] if found is None else [found - 1, found]) if p > 0]
    if all(_exact(s) for s in deciding):
        return found, None
    return found, max(_gap(s) for s in deciding)


def _gap(sol: Solution) -> float:
    """The relative gap `sol` is proven within (infinite when its time limit stopped it unproven)."""
    gap = sol.solver.get("gap")
    if not sol.feasible:
        return 0.0  # (infeasibility is proven, not within a gap)
    return math.inf if gap is None or not sol.solver.get("proven_optimal") else float(gap)
