"""Hard constraints as invariants: every plan that leaves `plan()` is checked, from the Solution's
own numbers (GPUs bought, servers, jobs placed), against every constraint family's limits
(solve/constraints/) -- whatever step produced it (the least-cost MILP, the idle-GPU polish, the
makespan sweep). A violation is a bug: `check` raises ConstraintViolation (exit 1), so a broken
plan is refused, never printed."""

from __future__ import annotations

from advisor.errors import AdvisorError
from advisor.solve.constraints import FAMILIES
from advisor.solve.problem import Problem
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.solution import Solution


class ConstraintViolation(AdvisorError):
    """The optimizer produced a plan that breaks a hard constraint of its workload (a bug)."""

    exit_code = 1


def violations(problem: Problem, sol: Solution, scenario: Scenario | None = None) -> list[str]:
    """What `sol` breaks of `scenario` (the workload as written by default); empty when it holds."""
    if not sol.feasible:
        return []
    sc = scenario or baseline(problem)
    return [v for family in FAMILIES for v in family.violations(problem, sol, sc)]


def check(problem: Problem, sol: Solution, scenario: Scenario | None = None) -> None:
    """Raise ConstraintViolation when `sol` breaks a hard constraint of `scenario` (the workload)."""
    found = violations(problem, sol, scenario)
    if found:
        raise ConstraintViolation(
            "the optimizer produced a plan that breaks a hard constraint of the workload, so it is refused "
            f"rather than printed: {'; '.join(found)}. This is a bug in gpu-advisor: please report it with "
            "the workload file"
        )
