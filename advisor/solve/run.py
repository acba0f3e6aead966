"""Running a PuLP model: the solver (HiGHS through highspy, one thread and a seed for
deterministic results; CBC when highspy is missing), quiet stdout, the MIP gap, and a progress
hook (`progress`): solves are counted, and a caller that wants to (the CLI, on a terminal) gets a
line every few seconds while planning runs long."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pulp


def solver_for(time_limit: float | None, gap: float | None = None) -> tuple[str, pulp.LpSolver]:
    try:
        import highspy  # noqa: F401
        return "highs", pulp.HiGHS(msg=False, timeLimit=time_limit, threads=1, random_seed=0, gapRel=gap)
    except ImportError:
        return "cbc", cbc_solver(time_limit, gap)


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


def read_gap(prob: pulp.LpProblem, name: str, proven: bool = True) -> float | None:
    if name != "highs":
        return 0.0 if proven else None
    try:
        return round(float(prob.solverModel.getInfo().mip_gap), 6)
    except Exception:  # an LP, or a model presolve solved outright, has no MIP gap
        return 0.0 if proven else None


_SOLVES = [0]   # solver runs so far in this process (read by the progress hook only)


def count_solve() -> None:
    _SOLVES[0] += 1


@contextlib.contextmanager
def progress(write: Callable[[str], None], after: float = 3.0, every: float = 5.0) -> Iterator[None]:
    """While the block runs longer than `after` seconds, call `write` with a one-line status every
    `every` seconds (solves so far, seconds elapsed). Output is the caller's: nothing is printed
    unless it asks."""
    start, first, stop = time.monotonic(), _SOLVES[0], threading.Event()

    def loop() -> None:
        wait = after
        while not stop.wait(wait):
            done = _SOLVES[0] - first
            write(f"still planning: {f'{done:,} solves' if done else 'building the options'} in "
                  f"{time.monotonic() - start:.0f} s "
                  "(each solve stops at --time-limit)")
            wait = every

    ticker = threading.Thread(target=loop, name="advisor-progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
