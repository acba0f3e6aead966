"""Lazy rows for three or more jobs with deadlines on one bought GPU type (row generation).

at_once.py's rows hold jobs with deadlines on bought GPUs at once or in turn, a pair at a time: three
24-GPU pretrains on 48 H100 pass every pair and the third finishes 9.6 days late. After each solve,
every bought type's jobs with deadlines are laid out on the plan's own list schedule (at_once.list_finish,
the one the deadline rows and warnings read: earliest deadline first, or the first other order of up to
at_once.ORDERS columns with none late); when a job finishes past
its deadline, rows the solution breaks are added and the model solved again, at most MAX_ROUNDS
times. A plan with no job late costs that schedule and no row. A job still late after the rounds,
or one no row catches, keeps plan_notes' deadline-schedule warning.

The rows reason about Q, jobs of one copy each (y binary) on g, with `ready` g's first arrival:

  lanes_g_r    f L <= N[g];  sum_(k in Q due by d) sum_(c of k, n_c >= f) h_c y[k,c] <= L (d - ready)
               (L: a new integer column; f: a width of the plan's columns; d: a deadline)
  late_g_r_n   N[g] >= w (sum_(k in Q) sum_(c in A_k) y[k,c] - (|Q| - 1))
               (at most s of Q's jobs fit in turn; r = ceil(|Q| / s); A_k: job k's columns of g that
               keep that so, _widened; w: the sum of the r least of each A_k's fewest GPUs)

Why they are valid (no plan that some schedule runs by every deadline breaks them). In a schedule,
each job holds its n_c GPUs over an interval of time. Intervals form an interval graph, which is
perfect: the fewest sets of pairwise disjoint intervals that cover them (lanes: jobs one after
another) equal the most that overlap at one moment. lanes_g: jobs on f GPUs or more overlap at most
floor(N / f) at a moment, so they run in that many lanes, L; within a lane, the jobs due by d start
after `ready` and end by d, so their hours fill at most d - ready. late_g: when every job of Q is on
a column of its A_k, no s + 1 of them run one after another (a chain of slower or equal jobs fits
no better), so at least r overlap at some moment, holding at least w GPUs; otherwise the right-hand
side is at most 0 (y binary: a job is on one column). Both hold for jobs of Q on other columns
(they drop out), and ignore the other jobs on g, which only take GPUs. Exact in that each row cuts a
plan only if no order of its jobs meets their deadlines; a plan that only an order of more than
at_once.ORDERS columns other than earliest deadline first meets breaks none, and keeps the warning. Jobs with copies (lanes,
at_once.py) or a share of their tokens (allow_mixed) are not in Q: a job late beside them keeps it too.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import pulp

from advisor.solve.constraints.at_once import deadline_columns, list_finish
from advisor.solve.constraints.base import past
from advisor.solve.rows import GE, affine, safe

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Candidate

MAX_ROUNDS = 8  # re-solves with late rows before the plan stands with its warning
MAX_JOBS = 10  # jobs one at-once row reasons about (its chains are searched over their subsets)
Cut = tuple[str, list[tuple[pulp.LpVariable, float]], float]  # (name, terms, b): sum(a x) >= b
T = TypeVar("T")  # what a run of the model returns (with_late_rows)
Row = tuple[list[tuple[pulp.LpVariable, float]], float]  # (terms, b): sum(a x) >= b
Column = tuple[int, int, "Candidate"]  # (class k, column i, candidate)


@dataclass
class _Type:
    """One bought GPU type's jobs with deadlines in a solved model: its columns, their first arrival
    (`ready`, hours from today), each job's deadline (hours) and the GPUs the plan buys."""

    m: Model
    g: str
    cols: list[Column]
    ready: float
    due: dict[int, float]
    bought: int

    def in_turn(self, hours: dict[int, float], jobs: Iterable[int]) -> bool:
        """Can these jobs (`hours`: class -> planned hours) run one after another from `ready`, each
        done by its deadline? Tried earliest deadline first: for jobs ready together, the order that
        meets every deadline if any order does."""
        t = self.ready
        for k in sorted(jobs, key=lambda k: (self.due[k], k)):
            t += hours[k]
            if t > self.due[k] * (1 + 1e-9):
                return False
        return True

    def longest_chain(self, hours: dict[int, float]) -> int:
        """The most of these jobs that run one after another (in_turn), at least 1."""
        most = 1
        for size in range(2, len(hours) + 1):
            if not any(self.in_turn(hours, some) for some in itertools.combinations(sorted(hours), size)):
                break
            most = size
        return most


def late_cuts(m: Model, rounds: int = 0) -> list[Cut]:
    """The rows a solved model's values break, per bought GPU type with a job late on the
    list schedule of the model's own sizes (at_once.list_finish; empty: no job is late)."""
    p, sc = m.problem, m.sc
    out: list[Cut] = []
    for g, cols in deadline_columns(p, sc, m.pairs()).items():
        chosen = [(k, i, c) for k, i, c in cols if (m.y[k, i].value() or 0.0) > 1e-6]
        due = {k: sc.job_deadline(p.classes[k].deadline) or math.inf for k, _, _ in cols}
        bought = m.value(m.N[g])
        done = list_finish(p, sc, {g: bought}, [(c, m.y[k, i].value() or 0.0) for k, i, c in chosen])
        late = {k for k, hours in done.items() if past(hours, due[k])}
        alone = [(k, i, c) for k, i, c in chosen if _binary(m, k) and sum(kk == k for kk, _, _ in chosen) == 1]
        if not late & {k for k, _, _ in alone}:
            continue  # (no job is late, or only beside jobs with copies: no row holds those)
        t = _Type(m, g, cols, min(c.start_hours for _, _, c in cols) * sc.lead_scale, due, bought)
        alone.sort(key=lambda x: (due[x[0]], x[0]))
        name = f"late_{safe(g)}_{rounds}"
        rows = _lane_rows(t, alone, name) + _first_rows(t, alone, [j for j, x in enumerate(alone) if x[0] in late])
        out += [(f"{name}_{n}", terms, rhs) for n, (terms, rhs) in enumerate(rows)]
    return out


def _lane_rows(t: _Type, jobs: list[Column], name: str) -> list[Row]:
    """lanes_g: for the narrowest width f of some jobs in the plan, no more than L of the jobs on f GPUs
    or more run at once, L an integer with f L <= N[g]; they run in at most L lanes, one after another
    in each, so those due by d fill at most L (d - ready) hours of them (first width, deadline broken):
      f L <= N[g],   sum_(k due by d) sum_(c of k, n_c >= f) h_c y[k,c] <= L (d - ready)"""
    m = t.m
    for f in sorted({c.count for _, _, c in jobs}):
        mine = [(k, c) for k, _, c in jobs if c.count >= f]
        for d in sorted({t.due[k] for k, _ in mine}):
            early = {k for k, _ in mine if t.due[k] <= d}
            if sum(c.planned_hours for k, c in mine if k in early) <= t.bought // f * (d - t.ready) * (1 + 1e-9):
                continue
            lanes = _column(f"{name}_lanes", m.N[t.g].upBound)
            wide = [(m.y[k, i], -c.planned_hours) for k, i, c in t.cols if k in early and c.count >= f]
            return [([(m.N[t.g], 1.0), (lanes, -float(f))], 0.0), ([(lanes, d - t.ready), *wide], 0.0)]
    return []


def _column(name: str, most: float | None) -> pulp.LpVariable:
    """An integer column of the rows' own, in no model yet: a fresh PuLP build takes it with its row,
    the fast path's HighsModel.add_rows adds it for one solve (PuLP 3 deprecates building it alone)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pulp.LpVariable(name, lowBound=0, upBound=most, cat="Integer")


def _first_rows(t: _Type, jobs: list[Column], late: list[int]) -> list[Row]:
    """The first at-once rows (_at_once) the plan breaks over a run of `jobs` in deadline order, up to
    MAX_JOBS of them, holding a late one (`late`: their places): the longest runs first."""
    for size in range(min(len(jobs), MAX_JOBS), 1, -1):
        for first in range(max(0, min(late) - size + 1), min(max(late), len(jobs) - size) + 1):
            run = jobs[first : first + size]
            # (a row asks for no more GPUs than the run's columns hold together: skip the runs that fit)
            rows = _at_once(t, run) if sum(c.count for _, _, c in run) > t.bought else []
            if rows:
                return rows
    return []


def _at_once(t: _Type, jobs: list[Column]) -> list[Row]:
    """The rows for the jobs Q of `jobs` (one column each) that the plan's GPUs break: no more than s
    of them fit in turn (longest_chain), so r = ceil(|Q| / s) run at once. The A_k of one are the
    columns no narrower than the plan's narrowest, of the other no narrower than each job's own."""
    s = t.longest_chain({k: c.planned_hours for k, _, c in jobs})
    r = math.ceil(len(jobs) / s)
    narrowest = min(c.count for _, _, c in jobs)
    out = []
    for floor in ({k: narrowest for k, _, _ in jobs}, {k: c.count for k, _, c in jobs}):
        groups = _widened(t, jobs, s, floor)
        least = sum(sorted(min(c.count for _, c in cs) for cs in groups.values())[:r])
        if least > t.bought + 0.5:
            terms = [(t.m.y[k, i], -float(least)) for k, cs in groups.items() for i, c in cs]
            out.append(([(t.m.N[t.g], 1.0), *terms], -float(least) * (len(jobs) - 1)))
    return out


def _widened(t: _Type, jobs: list[Column], s: int, floor: dict[int, int]) -> dict[int, list]:
    """A_k: each job's column in the plan, then (slowest first) each other column of its job on the
    same GPU type, no narrower than its `floor`, that at its job's fastest so far still lets no s + 1
    of them run in turn: one row then forbids every choice of those columns with too few GPUs."""
    groups = {k: [(i, c)] for k, i, c in jobs}
    fastest = {k: c.planned_hours for k, _, c in jobs}
    for k, i, c in sorted(t.cols, key=lambda x: (-x[2].planned_hours, x[0], x[1])):
        if k not in groups or any(i == j for j, _ in groups[k]) or c.count < floor[k]:
            continue
        trial = {**fastest, k: min(fastest[k], c.planned_hours)}
        if not any(t.in_turn(trial, some) for some in itertools.combinations(sorted(trial), s + 1)):
            groups[k].append((i, c))
            fastest = trial
    return groups


def _binary(m: Model, k: int) -> bool:
    """Is job k one job on one column (y binary), as the rows' terms count it?"""
    return m.integral and m.problem.classes[k].multiplicity == 1


def with_late_rows(m: Model, run: Callable[[], T], found: Callable[[T], bool], add: Callable[[list[Cut]], None]) -> T:
    """`run` the model and, while its result is a plan (`found`) with a job late that a row catches,
    `add` the rows and run again, at most MAX_ROUNDS times; the last result."""
    got = run()
    for rounds in range(MAX_ROUNDS):
        if not found(got) or not (cuts := late_cuts(m, rounds)):
            break
        add(cuts)
        got = run()
    return got


def add_to_pulp(m: Model, cuts: list[Cut]) -> None:
    """The rows into the PuLP model (a fresh build's: they stay with it)."""
    for name, terms, rhs in cuts:
        m.prob += pulp.LpConstraint(affine(terms, -rhs), GE), name
