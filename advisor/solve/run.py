"""Running a PuLP model: the solver (HiGHS through highspy, one thread and a seed for
deterministic results; CBC when highspy is missing), quiet stdout, and the MIP gap."""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

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
