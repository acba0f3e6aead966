"""What a constraint family is, and the typed results its parts give.

A family (docs/model.md §2.2) is the unit of the solver: one module under solve/constraints/
holds its MILP rows, its check of a finished plan, its slack (measured on the very quantity its
rows constrain), the lever that relaxes it when no plan exists, and what it contributes to the
fast path's model (the right-hand sides a scenario sets, the structure it decides). The MILP
builder, the plan checker, the binding table and the diagnosis are loops over the registry
(solve/constraints/__init__.py); their results are typed facts (contract/facts.py) that present/ words.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Marginal, Shortfall, Slack
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution

NO_DEADLINE = 1e9  # deadline_scale that removes every deadline
UNBOUNDED = 1e30  # PuLP refuses an infinite right-hand side; HiGHS reads >= 1e20 as infinite


def past(hours: float, limit: float) -> bool:
    """Is `hours` later than `limit` beyond the solver's tolerance (1e-6, relative and absolute): the one
    test of a deadline, horizon or holding period the rows, the lazy cuts, the schedule and the warnings share."""
    return hours > limit * (1 + 1e-6) + 1e-6


Run = Callable[["Problem", Scenario], "Solution"]  # a solve of a problem under a scenario
Rebuild = Callable[..., "Problem"]  # the problem again with other deployment fields (assemble._rebuilder)


@dataclass(frozen=True)
class Need:
    """What a plan needs of one limit beyond the workload's: the scenario change that admits it."""

    family: str
    change: Mapping[str, Any]  # Scenario field -> value
    relaxation: Mapping[str, Any]  # workload field -> value, as the diagnosis prints it
    needed: float


@dataclass(frozen=True)
class Bounds:
    """What the candidates a scenario may use must meet, per job class: the start and the planned
    (confidence) hours within `planned_hours` (a deadline, the horizon), the start and the estimate's
    hours within `hours` (a makespan cap), the GPU count within [min_count, max_count], and per GPU
    type at most `max_count_of` GPUs at once."""

    planned_hours: float = math.inf
    hours: float = math.inf
    min_count: int | None = None
    max_count: int | None = None
    max_count_of: Mapping[str, float] = field(default_factory=dict)
    start_scale: float = 1.0  # of a candidate's start (lead time, provisioning); 0 when a diagnosis lifts it


class Family:
    """A constraint family. Every part is optional: the defaults contribute nothing."""

    name = ""

    def rows(self, m: Model) -> None:
        """Add the family's rows to the model (names as in docs/model.md)."""

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        """What `sol` breaks of the family's limits under `sc` (a bug if not empty)."""
        return []

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        return []

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        return []

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        """The least relaxation of this limit alone (from `sc`) that gives a plan, re-solved (None when
        lifting the limit altogether gives none). exact=False: the cheapest plan without the limit
        says what it needs, with no search for the least value (a GPU's reasons for not being chosen)."""
        return None

    def need(self, problem: Problem, plan: Solution) -> Need | None:
        """What `plan` needs of this limit beyond the workload's (None: it keeps the limit)."""
        return None

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        """The scenario values that keep this limit as written (None: the workload sets none)."""
        return None

    def lifted(self) -> dict[str, Any]:
        """The scenario values that remove this limit."""
        return {}

    def marginal(
        self, problem: Problem, sol: Solution, run: Run, slacks: list[Slack], rebuild: Rebuild | None = None
    ) -> Marginal | None:
        """What relaxing this limit a little saves, re-solved (`rebuild`: the problem over another deployment)."""
        return None

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        """This family's part of class k's candidate Bounds under `sc`."""
        return {}

    def structure(self, problem: Problem, sc: Scenario) -> tuple:
        """What of `sc` decides the model's rows and columns (the fast path builds one model per value)."""
        return ()

    def limits(self, sc: Scenario) -> dict[str, tuple[float, float]]:
        """Row name -> (lower, upper) right-hand side that `sc` sets on rows built unbounded."""
        return {}

    def unbounded(self, sc: Scenario) -> dict[str, Any]:
        """The scenario values under which the fast path builds its shared model: every row of the
        family present with an unbounded right-hand side."""
        return {}
