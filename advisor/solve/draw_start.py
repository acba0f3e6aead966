"""How HiGHS searches each robustness draw (solve/redraw.py) and where that search starts.

A draw is proven within the plan's gap whatever the start and the heuristics, so at the few-jobs gap
(0.01%) they change its time, not its plan. HiGHS keeps a start only where its integer values fit the
draw; a draw left without one spends its time in root cuts (docs/performance.md). So a draw may start
from two plans, both solved once before any draw: the plan at the slowest speeds any draw gives (each
GPU type at its slowest drawn speed and serving rate, prices at their centres), which holds the most
capacity, and the model's as built (the fastest speeds). A draw takes the first whose integer columns
lie within its own bounds (a faster draw drops the candidates a now-feasible one dominates, and the
slow plan may use them): a choice made from the draw's own columns alone, so every draw starts from
the same plan in whatever process and order it is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from advisor.solve.settings import DEFAULT_GAP

if TYPE_CHECKING:
    import numpy as np

PROBING = 1 << 15  # HiGHS probing, off under a fleet ceiling: 97% of a draw there (docs/performance.md)


def tune(h: Any, time_limit: float | None, gap: float, ceiling: bool) -> None:
    """The HiGHS options of every draw of the model `h`: its time limit and gap, and the search
    settings measured on the draws (`ceiling`: the scenario caps the fleet's GPUs)."""
    h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else float("inf"))
    h.setOptionValue("mip_rel_gap", float(gap))
    # Without the RINS sub-MIP heuristic: the 200-job fleet's 40 draws took 24.0 s of CPU against
    # 30.2 s with it (3 interleaved runs each, 22.9-25.0 against 29.2-31.9 s), every draw still proven
    # within the gap; 5 of the 40 then settle on another purchase within that gap.
    h.setOptionValue("mip_heuristic_run_rins", False)
    # Proven to the few-jobs gap (0.01%) each draw's plan is its optimum however HiGHS searches, and
    # without restarts after the root (started from a plan, below) train-and-serve's 200 draws took
    # 10.2 s of CPU against 21.0 s, every plan the same; without the feasibility-jump heuristic too
    # (a start is at hand) serve-70b-datacenter's took 18.0 s against 23.7 s and train-and-serve's
    # 18.9 s against 20.9 s (each draw both ways in turn, one start), every answer the same. At the fleets' 1%
    # the search decides which plan within the gap it returns (4 of the 200-job fleet's first 40
    # draws changed): there HiGHS keeps its defaults.
    if gap <= DEFAULT_GAP:
        h.setOptionValue("mip_allow_restart", False)
        h.setOptionValue("mip_heuristic_run_feasibility_jump", False)
    h.setOptionValue("presolve_rule_off", PROBING if ceiling else 0)  # (gpu_count_max)


def slowest(
    gpus: Sequence[str], draws: Sequence[Mapping[str, float]], serves: Sequence[Mapping[str, float] | None]
) -> tuple[dict[str, float], dict[str, float]]:
    """(speed, serving rate) per GPU type, each its slowest over the draws (a draw without a serving
    rate serves at its speed, redraw_serving.Draw): the scenario the draws start from."""
    rates = [d if i >= len(serves) or (s := serves[i]) is None else s for i, d in enumerate(draws)]
    speed = {g: min(d.get(g, 1.0) for d in draws) for g in gpus}
    serve = {g: min(d.get(g, 1.0) for d in rates) for g in gpus}
    return speed, serve


def plan_of(h: Any) -> list[float] | None:
    """The columns of a HiGHS run of `h` as it stands, or None without a feasible plan."""
    import highspy

    h.clearSolver()
    if h.run() == highspy.HighsStatus.kError or h.getInfo().primal_solution_status != 2:
        return None
    return list(h.getSolution().col_value)


class Starts:
    """The plans a draw may start from, in order of preference: `pick` gives the first whose integer
    columns lie within the bounds the draw set (else the last, the model's as built), or None."""

    def __init__(self, h: Any, plans: Sequence[list[float]]):
        import numpy as np

        kinds = np.array([int(t) for t in h.getLp().integrality_], dtype=int)  # (HighsVarType: 0 continuous)
        self.integer = np.flatnonzero(kinds != 0) if len(kinds) else np.arange(h.getNumCol())
        self.plans: list[np.ndarray] = [np.asarray(x, dtype=float) for x in plans]

    def pick(self, h: Any) -> list[float] | None:
        import numpy as np

        if not self.plans:
            return None
        lp = h.getLp()
        low, high = np.asarray(lp.col_lower_)[self.integer], np.asarray(lp.col_upper_)[self.integer]
        for x in self.plans[:-1]:
            v = x[self.integer]
            if bool(np.all((v >= low - BOUND_TOLERANCE) & (v <= high + BOUND_TOLERANCE))):
                return x.tolist()
        return self.plans[-1].tolist()


BOUND_TOLERANCE = 1e-6  # HiGHS's own default primal feasibility tolerance
