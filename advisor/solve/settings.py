"""How a solve runs, said explicitly: the relative MIP gap it is proven within, its time limit,
whether the idle-GPU polish runs, and the tally that counts it. Every solve takes one; a plan
records the settings of its own solve and of its explanations' re-solves in its `solver` block.
Nothing about a solve is read from the problem or from the environment."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from advisor.solve.problem import Problem

DEFAULT_GAP = 1e-4  # HiGHS's own default relative MIP gap: a plan is proven optimal within 0.01%
FLEET_GAP = 0.01  # fleets (FLEET_JOBS jobs or more) default to 1%: proven in seconds, not minutes
FLEET_JOBS = 50
EXPLAIN_GAP = 0.01  # explanation re-solves (alternatives, break-evens, marginal values)
EXPLAIN_TIME_LIMIT = 10.0


def default_gap(problem: Problem) -> float:
    """0.01% for a few jobs, 1% for fleets of FLEET_JOBS jobs or more."""
    return FLEET_GAP if problem.job_count >= FLEET_JOBS else DEFAULT_GAP


@dataclass
class SolveTally:
    """Solves counted under one set of settings: how many, and how many stopped at their time
    limit with a plan not proven within the gap (the plan says its explanations are approximate)."""

    solves: int = 0
    unproven: int = 0

    def forked(self) -> dict[str, Callable[..., Any]]:
        """parallel.run's `state` and `merge` for tasks counted here: a child's solves since now, added to
        this tally in the parent (a child's copy of it is otherwise lost)."""
        at_fork = (self.solves, self.unproven)

        def state() -> tuple[int, int]:
            return self.solves - at_fork[0], self.unproven - at_fork[1]

        def merge(extra: tuple[int, int]) -> None:
            self.solves += extra[0]
            self.unproven += extra[1]

        return {"state": state, "merge": merge}


@dataclass(frozen=True)
class SolveSettings:
    """gap: the relative MIP gap (None: default_gap of the problem); time_limit: seconds (None:
    none); polish: put idle bought GPUs to work when that costs < 0.1% (solve/milp.py; None: for
    fewer than FLEET_JOBS jobs, see polishes); tally: where the solve is counted (None: not counted);
    lazy_pairs: for a fleet, at_once's pair rows only where a plan breaks them (lazy_for: the
    explanations' re-solves; never the plan's own solve nor the decision's)."""

    gap: float | None = None
    time_limit: float | None = 30.0
    polish: bool | None = None
    tally: SolveTally | None = None
    lazy_pairs: bool = False

    def gap_for(self, problem: Problem) -> float:
        return default_gap(problem) if self.gap is None else self.gap

    def polishes(self, problem: Problem) -> bool:
        """By default, not for fleets: their plan's cost is proven within 1%, and the polish's 0.1%
        allowance lies inside that gap. Measured (docs/performance.md): on bench/solve.py's fleets of
        200 and 1,000 jobs the polish never finished within its nodes, spending 3-6 s a plan for nothing."""
        return problem.job_count < FLEET_JOBS if self.polish is None else self.polish

    def lazy_for(self, problem: Problem) -> bool:
        """Does a solve leave at_once's pair rows out until its plan breaks one (solve/lazy_pairs.py)?
        Only a re-solve that asks (lazy_pairs) of a fleet (FLEET_JOBS jobs or more): a few jobs' plans
        and explanations keep the search they have."""
        return self.lazy_pairs and problem.job_count >= FLEET_JOBS

    def explaining(self, problem: Problem) -> SolveSettings:
        """The settings of an explanation's re-solves: a gap of at least EXPLAIN_GAP, a time limit of
        at most EXPLAIN_TIME_LIMIT, a fresh tally, no idle-GPU polish for fleets (polishes), and a
        fleet's pair rows left out until a plan breaks one (lazy_for)."""
        limit = EXPLAIN_TIME_LIMIT if self.time_limit is None else min(self.time_limit, EXPLAIN_TIME_LIMIT)
        return SolveSettings(
            gap=max(EXPLAIN_GAP, self.gap or 0.0),
            time_limit=limit,
            polish=None,
            tally=SolveTally(),
            lazy_pairs=True,
        )

    def but(self, **changes: object) -> SolveSettings:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
