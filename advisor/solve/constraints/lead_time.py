"""lead time: bought hardware works only once it arrives (the last of the GPU, its servers and the
network, then the burn-in: economics/lead_time.py), and a rental once it is provisioned. No row of
its own: a candidate's start counts against its deadline and the horizon (their Bounds), and an
owned GPU's capacity starts at its arrival (the capacity family's rows). When no plan exists
because hardware arrives too late, the diagnosis names the lead time, with what would do instead:
renting (no lead time) or a later deadline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.contract.facts import Lever, Shortfall
from advisor.solve.constraints.base import Family, Run
from advisor.solve.constraints.gpu_count import GpuCount
from advisor.solve.scenario import Scenario, baseline

if TYPE_CHECKING:
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution


class LeadTime(Family):
    name = "lead_time"

    def bounds(self, problem: Problem, sc: Scenario, k: int) -> dict[str, Any]:
        return {} if sc.lead_scale == 1.0 else {"start_scale": sc.lead_scale}

    def structure(self, problem: Problem, sc: Scenario) -> tuple:
        return (sc.lead_scale,)

    def shortfall(self, problem: Problem, free: Solution) -> list[Shortfall]:
        """The bought options whose arrival alone leaves no time for their job before its deadline."""
        out = []
        sc = baseline(problem)
        for k, (cls, cands) in enumerate(zip(problem.classes, problem.candidates)):
            if cls.deadline is None:
                continue
            late = [
                c
                for c in cands
                if c.ownership == "buy"
                and c.start_hours
                and c.done_hours() > cls.deadline
                and c.hours * c.time_factor <= cls.deadline
            ]
            if late:
                # the soonest done within the GPU count the job may use (the gpu_count family's bounds: the
                # workload's count binds one job only when it is the only job): the best it can do
                b = GpuCount().bounds(problem, sc, k)
                lo, hi = b.get("min_count"), b.get("max_count")
                fits = [c for c in late if (lo is None or c.count >= lo) and (hi is None or c.count <= hi)] or late
                first = min(fits, key=lambda c: (c.done_hours(), c.gpu))
                arrival = problem.arrival.get(first.gpu)
                out.append(
                    Shortfall(
                        self.name,
                        f"shortfall:lead_time:{cls.name(problem.workload)}",
                        first.start_hours / 24,
                        cls.deadline / 24,
                        facts={
                            "job": cls.name(problem.workload),
                            "gpu": first.gpu,
                            "job_days": first.planned_hours / 24,
                            "lead": arrival.lead if arrival is not None else None,
                        },
                    )
                )
        return out[:1]

    def lever(self, problem: Problem, sc: Scenario, run: Run, exact: bool = True) -> Lever | None:
        """With the lead times lifted, is there a plan? Then they are what rules it out: the GPUs
        would have to be in hand already, or rented for the weeks they take to arrive."""
        if sc.lead_scale == 0.0 or not any(c.start_hours for cs in problem.candidates for c in cs):
            return None
        if not run(problem, sc.but(lead_scale=0.0)).feasible:
            return None
        # the arrivals of the types the scenario may use (an alternative forced onto one type: that type's)
        leads = [a.hours / 24 for g, a in problem.arrival.items() if a.hours and sc.only_gpu in (None, g)]
        return Lever(self.name, "lead_time", {"lead_time_days": 0}, 0.0, min(leads, default=0.0))

    def keep(self, problem: Problem, base: Scenario) -> dict[str, Any] | None:
        return {"lead_scale": 1.0}

    def lifted(self) -> dict[str, Any]:
        return {"lead_scale": 0.0}
