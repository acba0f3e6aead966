"""at_once: jobs with deadlines on bought GPUs run at once, or in turn where their deadlines allow.

  lanes_k_c        t_c u[k,c] >= y[k,c]          (u: lanes of n_c GPUs, t_c = in_turn copies one after
                                                  another in each, from arrival, each by the deadline)
  at_once_g_k      N[g] >= sum_c n_c u[k,c]      (a job's lanes at once)
  at_once_g_k_k'_s N[g] >= sum_(c of k in s) n_c u[k,c] + sum_(c' of k' that cannot run in turn with s's
                   columns) n_c' u[k',c']   (one row per job pair and set of clashing columns: a job runs on
                   one column, so the columns of k that clash with the same ones of k' share it)

GPU-hours alone (capacity_g_l) do not hold jobs of fixed sizes: two 24-GPU jobs fit 32 GPUs' hours,
not 32 GPUs at once, and a 24-GPU job uses no free GPU beyond its 24. Two jobs whose planned times
do not fit one after the other (the earlier deadline first) between the GPUs' arrival and the later
deadline must run at once; those that fit may share GPUs in turn. Exact for two jobs; for three or
more pairwise fits do not prove a schedule (docs/model.md §2.2): solve/late_cuts.py adds rows while
finish_hours' list schedule of the plan's own sizes (earliest deadline first, or another order on
time) has a job late, and the
deadline rows report each job's finish on that schedule, so a miss that escapes them (a job with
copies beside others) shows as negative slack, never as a false finish day.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import pulp

from advisor.solve.constraints.base import NO_DEADLINE, past
from advisor.solve.constraints.gpu_count import copies_held
from advisor.solve.rows import GE, row, safe
from advisor.solve.scenario import Scenario, baseline

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Candidate, Problem
    from advisor.solve.solution import Solution


def runs_at_once(problem: Problem, sc: Scenario, k: int) -> bool:
    """Does class k hold its owned GPUs from their arrival (it has a deadline the scenario keeps: the
    plan's times start it then)?"""
    return problem.classes[k].deadline is not None and sc.deadline_scale < NO_DEADLINE


def window(problem: Problem, sc: Scenario, c: Candidate) -> float:
    """The hours from c's GPUs' arrival to its job's deadline."""
    due = sc.job_deadline(problem.classes[c.cls].deadline)
    assert due is not None
    return due * (1 + 1e-9) - c.start_hours * sc.lead_scale


def in_turn(problem: Problem, sc: Scenario, c: Candidate) -> int:
    """How many copies of c's job run one after another on the same c.count GPUs, from their arrival,
    each done by the job's deadline (at least 1: c meets it, its Bounds)."""
    return max(1, math.floor(window(problem, sc, c) / c.planned_hours)) if c.planned_hours > 0 else 1


def in_turn_fits(problem: Problem, sc: Scenario, a: Candidate, b: Candidate) -> bool:
    """Can the jobs of two columns on the same bought GPUs (one arrival) run one after the other from
    it, the earlier deadline first, each done by its own (else they must run at once)? The first is
    done by its own deadline (its Bounds), so: both within the later deadline's window, at turn_hours."""
    return fits(turn_hours(problem, a), window(problem, sc, a), turn_hours(problem, b), window(problem, sc, b))


def lent_hours(problem: Problem, g: str) -> float | None:
    """The fewest off-peak hours a day a serving class on bought g lends training (None: none lends)."""
    lend = [
        problem.serve_classes[k].off_peak_hours
        for k, cs in enumerate(problem.serve_candidates)
        if problem.serve_classes[k].off_peak_hours > 0 and any(c.gpu == g and c.ownership == "buy" for c in cs)
    ]
    return min(lend) if lend else None


def turn_hours(problem: Problem, c: Candidate) -> float:
    """A column's planned hours as two jobs' turns count them: spread over the lent off-peak hours on a type
    serving lends (review30: two fine-tunes on 5 RTX 6000 Ada, 4 serving, both in 8-hour nights one after
    the other, were held to fit in turn by their hours around the clock and the second finished on day 79.0
    of 78). So jobs that fit in turn only around the clock run at once: on GPUs of their own, not one
    night after another."""
    lend = lent_hours(problem, c.gpu) if c.ownership == "buy" else None
    return c.planned_hours * (24 / lend if lend else 1.0)


def fits(hours_a: float, window_a: float, hours_b: float, window_b: float) -> bool:
    """in_turn_fits on the columns' planned hours and windows."""
    return hours_a + hours_b <= max(window_a, window_b)


def deadline_columns(problem: Problem, sc: Scenario, pairs: Iterable[tuple[int, int, Candidate]]) -> dict[str, list]:
    """Per bought GPU type, the (k, i, c) of jobs with deadlines that may run on it."""
    out: dict[str, list] = {}
    for k, i, c in pairs:
        if c.ownership == "buy" and runs_at_once(problem, sc, k):
            out.setdefault(c.gpu, []).append((k, i, c))
    return out


def _lanes(m: Model, k: int, i: int, c: Candidate) -> pulp.LpVariable:
    """u[k,c]: the lanes of c.count GPUs column c holds at once, its copies in_turn in each: y itself
    for one job run alone, else ceil(y / in_turn) (a share of a job's tokens holds all its GPUs)."""
    turns = in_turn(m.problem, m.sc, c)
    if turns == 1 and m.integral:
        return m.y[k, i]
    u = m.prob.add_variable(f"lanes_{k}_{i}", lowBound=0, upBound=m.y[k, i].upBound, cat="Integer")
    m.prob += row([(u, turns), (m.y[k, i], -1)], GE), f"lanes_{k}_{i}"
    return u


def at_once_rows(m: Model) -> None:
    """at_once_g_k: a job's lanes on bought GPUs of type g are held at once; at_once_g_k_k'_s: so are
    a column's of job k and those of job k' it cannot run in turn with (in_turn_fits), one row per
    set of such columns of k'."""
    p, sc = m.problem, m.sc
    for g, cols in deadline_columns(p, sc, m.pairs()).items():
        lanes = {(k, i): _lanes(m, k, i, c) for k, i, c in cols if p.classes[k].multiplicity > 1 or not m.integral}
        u = lambda k, i: lanes.get((k, i), m.y[k, i])  # noqa: E731
        for k in sorted({k for k, _, _ in cols if p.classes[k].multiplicity > 1 or not m.integral}):
            mine = [(u(kk, i), -c.count) for kk, i, c in cols if kk == k]
            m.prob += row([(m.N[g], 1), *mine], GE), f"at_once_{safe(g)}_{k}"
        by_class: dict[int, list] = {}
        for k, i, c in cols:
            by_class.setdefault(k, []).append((i, c.count, turn_hours(p, c), window(p, sc, c)))
        for k, other in itertools.combinations(sorted(by_class), 2):
            rows: dict[tuple, list] = {}  # the columns of `other` a column of k clashes with -> those columns of k
            for i, n, hours, win in by_class[k]:
                clash = tuple((j, nj) for j, nj, hj, wj in by_class[other] if not fits(hours, win, hj, wj))
                if clash:
                    rows.setdefault(clash, []).append((i, n))
            for n, (clash, mine) in enumerate(rows.items()):
                terms = [(u(k, i), -count) for i, count in mine] + [(u(other, j), -count) for j, count in clash]
                m.prob += row([(m.N[g], 1), *terms], GE), f"at_once_{safe(g)}_{k}_{other}_{n}"


def clashes(problem: Problem, sol: Solution, sc: Scenario, g: str, n: int) -> list[str]:
    """Two jobs with deadlines on bought g that cannot run in turn but do not fit at once."""
    mine = [
        (c, c.count * math.ceil(copies_held(share) / in_turn(problem, sc, c)))
        for c, share in sol.assignment
        if c.gpu == g and c.ownership == "buy" and runs_at_once(problem, sc, c.cls)
    ]
    return [
        f"{problem.classes[a.cls].name(problem.workload)} ({held_a} {g}) and "
        f"{problem.classes[b.cls].name(problem.workload)} ({held_b}) cannot run in turn, but only {n} are bought"
        for x, (a, held_a) in enumerate(mine)
        for b, held_b in mine[x + 1 :]
        if (a.cls == b.cls or not in_turn_fits(problem, sc, a, b)) and held_a + held_b > n
    ]


def finish_hours(problem: Problem, sol: Solution, sc: Scenario) -> dict[int, float]:
    """Per class with a deadline on bought GPUs, when its last copy is done (hours from today) on a
    list schedule of the plan's own sizes (list_finish: earliest deadline first, or the first other
    order that meets every deadline), each job's hours spread over the off-peak hours it runs in
    (off_peak_hours: two such jobs on the same GPUs run one night after another, review30)."""
    serving = {g: sol.serving_owned(g) for g in sol.bought}
    return list_finish(problem, sc, sol.bought, sol.assignment, spread_factors(problem, sol), serving)


def spread_factors(problem: Problem, sol: Solution) -> list[float]:
    """Per assignment entry, the factor its running time is spread by: 24 / the off-peak hours a day it
    runs in (off_peak_hours), 1 around the clock."""
    nights = off_peak_hours(problem, sol)
    return [24 / nights[j] if j in nights else 1.0 for j in range(len(sol.assignment))]


ORDERS = 6  # a type's blocks (columns) whose other orders are tried when deadline-first leaves one late: 720


def list_finish(
    problem: Problem,
    sc: Scenario,
    bought: Mapping[str, int],
    assignment: Iterable[tuple[Candidate, float]],
    spread: list[float] | None = None,
    serving: Mapping[str, int] | None = None,
) -> dict[int, float]:
    """finish_hours of `bought` GPUs per type and an `assignment` of (column, copies): each column's
    lanes start together when that many of its type's bought GPUs are free, and run their copies in
    turn, columns due first first; where that leaves one late, the first other order (of up to ORDERS
    columns) with none late: earliest deadline first is not always on time where an order is (32 + 16
    GPUs at once, then the third on the first's 32). The lazy rows of late_cuts.py read a solved
    model's values through it, so a plan some order runs on time is neither cut nor warned. `spread`:
    each entry's running time factor, `serving`: the bought GPUs of each type that serve (finish_hours)."""
    out: dict[int, float] = {}
    assignment = list(assignment)
    night = _in_nights(assignment, spread)
    for g, n in bought.items():
        blocks = _deadline_blocks(problem, sc, g, assignment, spread)
        held = ((serving or {}).get(g, 0), night)
        ends = _ends(blocks, n, sc, held)
        if len(blocks) <= ORDERS and not _on_time(blocks, ends):
            tried = ((list(o), _ends(list(o), n, sc, held)) for o in itertools.permutations(blocks))
            blocks, ends = next(((o, e) for o, e in tried if _on_time(o, e)), (blocks, ends))
        for (_, k, *_), end in zip(blocks, ends):
            out[k] = max(out.get(k, 0.0), end)
    return out


def _in_nights(assignment: list[tuple[Candidate, float]], spread: list[float] | None) -> set[int]:
    """The ids of the columns whose running is spread over lent off-peak hours (they may use the serving
    GPUs' nights; the others run around the clock on the GPUs that serve no one: _ends)."""
    return {id(c) for (c, _), f in zip(assignment, spread or []) if f > 1}


def _deadline_blocks(
    problem: Problem,
    sc: Scenario,
    g: str,
    assignment: Iterable[tuple[Candidate, float]],
    spread: list[float] | None = None,
) -> list[tuple]:
    """The blocks (due, class, width, hours, column) of the jobs with deadlines on bought GPUs of type
    g, due first first: each column's copies in as few lanes as their deadline allows (in_turn), its
    hours times its `spread` factor."""
    blocks = []
    for j, (c, share) in enumerate(assignment):
        if c.gpu == g and c.ownership == "buy" and runs_at_once(problem, sc, c.cls):
            copies, turns = copies_held(share), in_turn(problem, sc, c)
            lanes = math.ceil(copies / turns)
            due = sc.job_deadline(problem.classes[c.cls].deadline) or math.inf
            hours = math.ceil(copies / lanes) * c.planned_hours * (spread[j] if spread else 1.0)
            blocks.append((due, c.cls, c.count * lanes, hours, c))
    return sorted(blocks, key=lambda b: b[:2])


def _ends(blocks: list[tuple], n: int, sc: Scenario, held: tuple[int, set[int]] = (0, set())) -> list[float]:
    """The finish hour of each block (due, class, width, hours, column) listed in turn on n GPUs: each
    starts at its GPUs' arrival or when `width` of them are free. held: (how many of the n serve, the
    ids of the columns that run in their off-peak hours): a column that runs around the clock runs on
    the others only (review30b: two 4-GPU jobs on 8 bought, 4 serving, read "finishes in 74.00 of 74.6
    days" for the second, run after the first on the 4 free: 75.0)."""
    busy, night = held
    free, out = [0.0] * n, []  # the hour each GPU is next free, after its arrival; the last `busy` serve
    for _, _, width, hours, c in blocks:
        pool = range(n) if id(c) in night or busy >= n else range(n - busy)
        mine = sorted(pool, key=lambda i: (free[i], i))[: min(width, len(pool))]
        start = max(c.start_hours * sc.lead_scale, free[mine[-1]])
        for i in mine:
            free[i] = start + hours
        out.append(start + hours)
    return out


def _on_time(blocks: list[tuple], ends: list[float]) -> bool:
    """Is every block done by its deadline (late_cuts' and the warning's tolerance)?"""
    return not any(past(end, b[0]) for b, end in zip(blocks, ends))


def class_done_hours(problem: Problem, sol: Solution) -> dict[int, float]:
    """Per placed class, when its last job is done at the workload's confidence (hours from today):
    its columns' start and planned time (spread over the off-peak hours it runs in: off_peak_hours), or
    later where jobs with deadlines wait their turn on bought GPUs (finish_hours), or where the copies of
    a job with none run in turn (_in_turn_done)."""
    out: dict[int, float] = {}
    for (c, _), f in zip(sol.assignment, spread_factors(problem, sol)):
        out[c.cls] = max(out.get(c.cls, 0.0), c.start_hours + c.planned_hours * f)
    for k, hours in [*finish_hours(problem, sol, baseline(problem)).items(), *_in_turn_done(problem, sol)]:
        out[k] = max(out[k], hours)
    return out


def _in_turn_done(problem: Problem, sol: Solution) -> list[tuple[int, float]]:
    """(class, when its last copy is done) for the copies of jobs with no deadline, which the plan runs
    back to back (review29: 36 monthly fine-tunes on 8 rented H100 read "the last done on day 0.4", one
    copy's finish; back to back they end on day 13.6): a rented column's lanes as its rental counts
    them (gpu_count.copies_at_once), a bought column's as many as its type's bought GPUs hold at once,
    after the type's jobs with deadlines (list_finish's order)."""
    from advisor.solve.constraints.gpu_count import copies_at_once

    out, sc = [], baseline(problem)
    waiting: dict[str, list[tuple]] = {}
    for c, share in sol.assignment:
        if runs_at_once(problem, sc, c.cls) or c.planned_hours <= 0:
            continue
        copies = copies_held(share)
        if c.ownership != "buy":
            lanes = max(1, copies_at_once(problem, c, share))
            out.append((c.cls, c.start_hours + math.ceil(copies / lanes) * c.planned_hours))
            continue
        lanes = max(1, min(copies, sol.bought.get(c.gpu, 0) // c.count))
        block = (math.inf, c.cls, c.count * lanes, math.ceil(copies / lanes) * c.planned_hours, c)
        waiting.setdefault(c.gpu, []).append(block)
    spread = spread_factors(problem, sol)
    night = _in_nights(sol.assignment, spread)
    for g, tail in waiting.items():  # after the type's jobs with deadlines, in the order list_finish runs them
        blocks = _deadline_blocks(problem, sc, g, sol.assignment, spread) + sorted(tail, key=lambda b: b[1])
        ends = _ends(blocks, sol.bought[g], sc, (sol.serving_owned(g), night))
        out += [(b[1], end) for b, end in zip(blocks, ends) if b[0] == math.inf]
    return out


def off_peak_hours(problem: Problem, sol: Solution) -> dict[int, float]:
    """{assignment index: hours a day it runs} for each training job on bought GPUs that needs some of
    the serving GPUs (more GPUs at once than its type's bought ones beside the owned serving ones): it
    runs only in the fewest off-peak hours a day a serving class on its type lends, so its running time
    is spread over days of that many hours (train-and-serve's fine-tune: 21.6 hours of running, 2.7
    days in 8-hour nights, read "takes 21.6 hours" and its deadline's slack counted the 21.6 hours)."""
    out = {}
    for j, (c, _) in enumerate(sol.assignment):
        if c.ownership != "buy":
            continue
        lent = [
            problem.serve_classes[s.cls].off_peak_hours
            for s, n in sol.serving
            if s.gpu == c.gpu and s.ownership == "buy" and n and problem.serve_classes[s.cls].off_peak_hours > 0
        ]
        if lent and c.count > sol.bought.get(c.gpu, 0) - sol.serving_owned(c.gpu):
            out[j] = min(lent)
    return out


def makespan_hours(problem: Problem, sol: Solution) -> float:
    """When the plan's last training job is done at its estimated hours, from today (Solution.makespan_hours),
    each spread over the off-peak hours it runs in (off_peak_hours): what --objective time, `frontier` and the
    memo's cost-time chart put on their time axis (review30: a 7-GPU plan "finishing sooner" than the 4-GPU one
    on the same day 76.0)."""
    return max(
        (c.start_hours + c.hours * f for (c, _), f in zip(sol.assignment, spread_factors(problem, sol))), default=0.0
    )
