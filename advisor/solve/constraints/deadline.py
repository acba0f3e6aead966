"""deadline: every job finishes by its deadline, held at the workload's confidence quantile of its
time (a candidate's `planned_hours`, the P80 by default); a makespan cap (the frontier,
`--objective time`) holds the estimate's own hours. The family has no row: a candidate that misses
its class's deadline is not a column of the model (its Bounds), and owned GPU-hours are held by
the capacity family's rows at each deadline level. Its slack is measured on the same planned hours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Marginal, Shortfall, Slack, binds
from advisor.durations import deadline_phrase, deadline_step, in_days
from advisor.solve.constraints.at_once import class_done_hours, spread_factors
from advisor.solve.constraints.base import NO_DEADLINE, Family, Need, Rebuild, Run, past
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.search import smallest

if TYPE_CHECKING:
    from advisor.solve.problem import Candidate, JobClass, Problem
    from advisor.solve.solution import Solution

TOLERANCE = 1e-9  # relative: a candidate exactly at its deadline meets it


def meets(c: Candidate, due_hours: float | None) -> bool:
    """Does a candidate finish by a deadline in hours from today: its start (a purchase's lead time,
    a rental's provisioning) and its planned time at the workload's confidence?"""
    return due_hours is None or c.done_hours() <= due_hours * (1 + TOLERANCE)


def planned_makespan(sol: Solution) -> float:
    """When the plan's last job is done at the workload's confidence, in hours from today."""
    return max((c.done_hours() for c in sol.chosen), default=0.0)


def too_slow(name: str, fastest: Candidate, cls: JobClass, ownership: str, confidence: float) -> str:
    """Why a GPU type cannot meet a job's deadline even on its fastest candidate."""
    assert cls.deadline is not None
    verb = "arrive" if ownership == "buy" else "be provisioned"
    if fastest.start_hours >= cls.deadline:  # the lead time alone: no GPU count helps
        return (
            f"{name}: {'bought' if ownership == 'buy' else 'rented'} GPUs take {in_days(fastest.start_hours / 24)} "
            f"to {verb}, past the {deadline_phrase(cls.deadline)} before any work starts"
        )
    start = f" after {in_days(fastest.start_hours / 24)} to {verb}" if fastest.start_hours else ""
    return (
        f"{name}: even {fastest.count:,} GPU{'' if fastest.count == 1 else 's'} ({ownership}) "
        f"take{'s' if fastest.count == 1 else ''} {in_days(fastest.planned_hours / 24)}{start} "
        f"at confidence {confidence:g} ({in_days(fastest.hours / 24)} estimated), "
        f"past the {deadline_phrase(cls.deadline)}"
    )


class Deadline(Family):
    name = "deadline"

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        due = sc.job_deadline(problem.classes[k].deadline)
        if due is not None:
            out["planned_hours"] = due
        if sc.makespan_hours is not None:
            out["hours"] = sc.makespan_hours
        return out

    def structure(self, problem: Problem, sc: Scenario) -> tuple:
        return (sc.deadline_scale, sc.deadline_extra_hours, sc.makespan_hours)

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out = []
        for c, _ in sol.assignment:
            cls = problem.classes[c.cls]
            due = sc.job_deadline(cls.deadline)
            done = c.done_hours(sc.lead_scale)
            if due is not None and past(done, due):
                out.append(
                    f"{cls.name(problem.workload)} is done {done:.6g} h from today at its confidence quantile, "
                    f"past its {due:.6g} h deadline"
                )
            end = c.start_hours * sc.lead_scale + c.hours
            if sc.makespan_hours is not None and past(end, sc.makespan_hours):
                out.append(
                    f"{cls.name(problem.workload)} is done {end:.6g} h from today, past the "
                    f"{sc.makespan_hours:.6g} h cap"
                )
        return out

    def slack(self, problem: Problem, sol: Solution) -> list[Slack]:
        out, done, spread = [], class_done_hours(problem, sol), spread_factors(problem, sol)
        for k, cls in enumerate(problem.classes):
            if cls.deadline is None:
                continue
            # each column's running spread over the off-peak hours it borrows (at_once.spread_factors)
            mine = [(c, f) for (c, _), f in zip(sol.assignment, spread) if c.cls == k]
            wait = done[k] - max(c.start_hours + c.planned_hours * f for c, f in mine)  # its turn on bought GPUs
            planned = done[k] / 24
            estimate = (max(c.start_hours + c.hours * f for c, f in mine) + wait) / 24
            start = max(c.start_hours for c, _ in mine) / 24
            limit = cls.deadline / 24
            out.append(
                Slack(
                    self.name,
                    f"deadline:{cls.name(problem.workload)}",
                    planned,
                    limit,
                    limit - planned,
                    "days",
                    binds(limit - planned, limit),
                    facts={
                        "job": cls.name(problem.workload),
                        "estimate_days": estimate,
                        "start_days": start,
                        **({"wait_days": wait / 24} if wait > 0 else {}),
                        "confidence": problem.workload.confidence,
                    },
                )
            )
        return out

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        dl = [c.deadline for c in problem.classes if c.deadline]
        needed = planned_makespan(free)
        if dl and needed > min(dl) * (1 + TOLERANCE):
            return [Shortfall(self.name, "shortfall:deadline", needed / 24, min(dl) / 24)]
        return []

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        deadlines = [c.deadline for c in problem.classes if c.deadline]
        if not deadlines or not run(problem, sc.but(deadline_scale=NO_DEADLINE)).feasible:
            return None
        scale = smallest(lambda f: run(problem, sc.but(deadline_scale=f)).feasible, 1.0, 2.0)
        shortest = min(deadlines) / 24
        return Lever(
            self.name,
            "deadline",
            {"deadline_scale": round(scale, 3)},
            shortest * scale,
            shortest,
            facts={"scale": scale},
        )

    def need(self, problem: Problem, plan: Solution) -> Need | None:
        dl = [c.deadline for c in problem.classes if c.deadline]
        needed = planned_makespan(plan)
        if not dl or needed <= min(dl):
            return None
        scale = needed / min(dl) * (1 + 1e-6)
        return Need(self.name, {"deadline_scale": scale}, {"deadline_scale": round(scale, 4)}, needed / 24)

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        return {"deadline_scale": 1.0} if any(c.deadline for c in problem.classes) else None

    def lifted(self) -> dict[str, Any]:
        return {"deadline_scale": NO_DEADLINE}

    def marginal(
        self, problem: Problem, sol: Solution, run: Run, slacks: list[Slack], rebuild: Rebuild | None = None
    ) -> Marginal | None:
        mine = [s for s in slacks if s.family == self.name]
        if not mine:
            return None
        step, unit = deadline_step(min(c.deadline for c in problem.classes if c.deadline))
        s = run(problem, baseline(problem).but(deadline_extra_hours=step))
        saving = max((sol.objective_usd or 0.0) - (s.objective_usd or 0.0) if s.feasible else 0.0, 0.0)
        return Marginal(
            self.name,
            f"deadline +1 {unit}",
            round(saving, 2),
            any(x.binding for x in mine),
            min(x.slack for x in mine),
            unit,
        )
