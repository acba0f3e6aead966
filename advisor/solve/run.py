"""Running a PuLP model: the solver (HiGHS through highspy, one thread and a seed for
deterministic results; CBC when highspy is missing), quiet stdout, the MIP gap, and the progress
hook (`progress`): solves and stages are counted in STATUS, and a caller that wants to (the CLI, on
a terminal) gets a status line while planning runs long, e.g. "explaining: re-solve 12, best $1.23M,
gap 0.01%, 14 s"."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pulp

from advisor.errors import NoPlanInTime
from advisor.solve.settings import DEFAULT_GAP
from advisor.ticker import ticking


def solver_for(time_limit: float | None, gap: float | None = None) -> tuple[str, pulp.LpSolver]:
    try:
        import highspy  # noqa: F401

        # Proven to the few-jobs gap (0.01%) a plan is its optimum however HiGHS searches: there it searches
        # without restarts after the root, as the robustness draws do (solve/redraw.py); train-and-serve's
        # price break-evens took ~25% less CPU, every plan the same (docs/performance.md). At a fleet's
        # or an explanation's 1% the search decides which plan within the gap it returns: defaults there.
        restart = {} if gap is None or gap > DEFAULT_GAP else {"mip_allow_restart": False}
        return "highs", pulp.HiGHS(msg=False, timeLimit=time_limit, threads=1, random_seed=0, gapRel=gap, **restart)
    except ImportError:
        return "cbc", cbc_solver(time_limit, gap)


def start_from(solver: pulp.LpSolver, start: Mapping[str, float]) -> None:
    """Hand PuLP's HiGHS `start` (column name -> value: a plan of the same problem under another
    scenario) before it runs. HiGHS keeps it as its first incumbent only where it is feasible, and the
    gap it proves is the same; an objective that does not add up to the plan's costs x its columns
    (highspy 1.16 once took a start for the answer without a search: bench/warm_start.py) is searched
    again from nothing."""
    solver.callSolver = functools.partial(_run_from, start)  # (an instance of PuLP's HiGHS: its run, from `start`)


def _run_from(start: Mapping[str, float], lp: pulp.LpProblem) -> None:
    import highspy
    import numpy as np

    h = lp.solverModel
    values = np.zeros(h.getNumCol())
    for v in lp.variables():  # (PuLP's HiGHS numbers the columns v.index as it builds them)
        values[v.index] = start.get(v.name, 0.0)
    sol = highspy.HighsSolution()
    sol.col_value, sol.value_valid = values.tolist(), True
    h.setSolution(sol)
    h.run()
    if h.getInfo().primal_solution_status == 2 and not objective_adds_up(h):
        h.clearSolver()
        h.run()


def objective_adds_up(h: Any) -> bool:
    """Is a highspy model's reported objective its costs x its solution's columns? (highspy 1.16 once
    returned a start as "optimal" with objective 0 and no search: bench/warm_start.py.)"""
    import numpy as np

    x = np.asarray(h.getSolution().col_value)
    want = float(np.dot(np.asarray(h.getLp().col_cost_), x)) + float(h.getLp().offset_)
    got = h.getInfo().objective_function_value
    return abs(got - want) <= 1e-6 * max(1.0, abs(want))


def check_found(status: str, name: str, time_limit: float | None) -> None:
    """Raise NoPlanInTime when a run stopped without a plan (status "none")."""
    if status == "none":
        limit = f" within the {time_limit:g} s time limit" if time_limit is not None else ""
        raise NoPlanInTime(f"the {name} solver found no plan{limit}; raise `time_limit` or simplify the workload")


def cbc_solver(time_limit: float | None, gap: float | None = None) -> pulp.LpSolver:
    """The CBC binary bundled with PuLP 3 (PuLP 4 will want `pulp[cbc]` and COIN_CMD)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=1, gapRel=gap)


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """highspy prints a banner from C++ whenever a Highs object is built, whatever the options;
    keep it out of our stdout (which may be JSON) by pointing file descriptor 1 at /dev/null."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (embedded use): nothing to protect
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def printed_gap(gap: float) -> float:
    """A relative gap as plans print it, to 6 decimals, rounded up: the claim "the plan is within
    this gap of the optimum" must hold at the precision it is printed (to the nearest, a polished
    plan $3.74 above the least cost printed 1.9e-05 for 1.90e-05 and claimed a bound 1 cent too high)."""
    return math.ceil(gap * 1e6 - 1e-6) / 1e6


def read_gap(prob: pulp.LpProblem, name: str, proven: bool = True) -> float | None:
    if name != "highs":
        return 0.0 if proven else None
    try:
        return printed_gap(float(prob.solverModel.getInfo().mip_gap))
    except Exception:  # an LP, or a model presolve solved outright, has no MIP gap
        return 0.0 if proven else None


@dataclass
class Status:
    """What a long plan is doing, for the progress line: the stage (solving, explaining, ...), its
    steps so far (and how many, when known), and the best plan cost and MIP gap found so far."""

    solves: int = 0  # solver runs since progress() began
    stage: str = "planning"
    done: int = 0  # steps of the stage: solves, or draws when the stage counts them
    total: int | None = None
    best_usd: float | None = None  # the least cost among the stage's own solves (not the explanations')
    gap: float | None = None
    counting: bool = False  # the stage counts its own steps (step()), not solves

    def line(self, elapsed: float) -> str:
        what = "draw" if self.counting else ("re-solve" if self.stage == "explaining" else "solve")
        if self.done:
            step = f"{what} {self.done:,}" + (f"/{self.total:,}" if self.total else "")
        else:
            step = "building the options" if not self.solves else f"{what} 1"
        best = f", best {_money(self.best_usd)}" if self.best_usd is not None else ""
        gap = f", gap {100 * self.gap:.2g}%" if self.gap is not None and self.best_usd is not None else ""
        return f"{self.stage}: {step}{best}{gap}, {elapsed:.0f} s"


STATUS = Status()


def _money(usd: float) -> str:
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(usd) >= size:
            return f"${usd / size:.3g}{unit}"
    return f"${usd:,.0f}"


def count_solve(objective_usd: float | None = None, gap: float | None = None, explaining: bool = False) -> None:
    """A solve finished (milp.solve): counted, and its cost kept as the best so far unless it is
    one of the explanations' re-solves or a draw (those price other choices or prices, not the plan)."""
    STATUS.solves += 1
    if not STATUS.counting:
        STATUS.done += 1
    if (
        objective_usd is not None
        and not explaining
        and not STATUS.counting
        and (STATUS.best_usd is None or objective_usd < STATUS.best_usd)
    ):
        STATUS.best_usd, STATUS.gap = objective_usd, gap


def plan_chosen(objective_usd: float | None, gap: float | None) -> None:
    """The plan a buyer gets is chosen (explain/decision.py: it may not be the least-cost solve): the
    progress line's best is its cost from here on, not the least cost any solve found."""
    STATUS.best_usd, STATUS.gap = objective_usd, gap


@contextlib.contextmanager
def stage(name: str, total: int | None = None) -> Iterator[None]:
    """Name what runs inside (e.g. "explaining"), with `total` steps counted by step() when known;
    the previous stage comes back after."""
    saved = dataclasses.replace(STATUS)
    STATUS.stage, STATUS.done, STATUS.total, STATUS.counting = name, 0, total, total is not None
    try:
        yield
    finally:
        solves, best, gap = STATUS.solves, STATUS.best_usd, STATUS.gap
        for f in dataclasses.fields(Status):
            setattr(STATUS, f.name, getattr(saved, f.name))
        STATUS.solves = solves
        if saved.best_usd is None:  # the plan's cost stays known to the stages after it
            STATUS.best_usd, STATUS.gap = best, gap


def step() -> None:
    """One step of a stage that counts its own (e.g. a draw of the robustness check)."""
    STATUS.done += 1


@contextlib.contextmanager
def progress(write: Callable[[str], None], after: float = 3.0, every: float = 5.0) -> Iterator[None]:
    """While the block runs longer than `after` seconds, call `write` with a one-line status every
    `every` seconds (Status.line: stage, steps, best cost and gap so far, seconds elapsed). Output is
    the caller's: nothing is printed unless it asks (the CLI does, on a terminal only)."""
    STATUS.solves = STATUS.done = 0
    STATUS.best_usd = STATUS.gap = None
    with ticking(lambda elapsed: write(STATUS.line(elapsed)), after, every):
        yield
