"""What one solve enforces: the workload's own limits, or a counterfactual an explanation asks
about ("without the budget", "with the deadlines doubled", "only H100s", "rent 6% dearer").

A Scenario holds the values to enforce, never "as the workload says" markers: `baseline(problem)`
reads them from the workload once, and a counterfactual is `baseline(problem).but(budget_usd=None)`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from advisor.solve.serving_nodes import bill_key

if TYPE_CHECKING:
    from advisor.solve.problem import Candidate, Problem, ServeCandidate


@dataclass(frozen=True)
class Scenario:
    """The limits and factors one solve runs under: the plan's own, or a counterfactual's."""

    budget_usd: float | None  # total cost cap (None: no cap)
    power_limit_kw: float | None  # owned kW cap (None: no cap)
    gpu_lower: int | None  # fleet size bounds (gpus.min / gpus.count)
    gpu_upper: int | None  # (gpus.max / gpus.count)
    deadline_scale: float = 1.0  # every deadline x this ...
    deadline_extra_hours: float = 0.0  # ... + this
    makespan_hours: float | None = None  # every job done within this (frontier, --objective time)
    only_gpu: str | None = None  # every job on this GPU type (forced cost of an alternative)
    ownership: str | None = None  # every GPU bought, or every GPU rented (the other way to own)
    price_factor: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # GPU id -> factor on its purchase price and rental rate (break-even prices)
    rent_factor: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # GPU id -> factor on its rental rate only (switching between buying and renting one type)
    buy_factor: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # GPU id -> factor on its purchase price only
    offer_factor: Mapping[tuple[str, str], float] = field(default_factory=lambda: MappingProxyType({}))
    # (GPU id, provider) -> factor on that one rental offer's rate (the price a quoted offer loses at)
    traffic_factor: float = 1.0  # every serving class's peak rate x this (traffic sensitivity)
    speed_factor: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # GPU id -> real speed / estimated speed: hours, GPU-hours and run cost scale by 1 / factor
    horizon_hours: float | None = None  # every job done within this (the deployment's horizon; None: lifted)
    budget_basis: str = "cash"  # what budget_usd caps: cash | present_value
    lead_scale: float = 1.0  # purchases' lead times and rentals' provisioning x this (0: lifted)

    def but(self, **changes: Any) -> Scenario:
        """This scenario with some values changed."""
        for key in ("price_factor", "rent_factor", "buy_factor", "offer_factor", "speed_factor"):
            if key in changes:
                changes[key] = MappingProxyType(dict(changes[key]))
        return dataclasses.replace(self, **changes)

    def deadline(self, hours: float | None) -> float | None:
        """A job's deadline under this scenario (hours), the makespan cap included."""
        due = None if hours is None else hours * self.deadline_scale + self.deadline_extra_hours
        if self.makespan_hours is not None:
            due = self.makespan_hours if due is None else min(due, self.makespan_hours)
        return due

    def job_deadline(self, hours: float | None) -> float | None:
        """A job's own deadline under this scenario (hours), without the makespan cap."""
        return None if hours is None else hours * self.deadline_scale + self.deadline_extra_hours

    def rent_price(self, gpu: str, provider: str | None = None) -> float:
        """The factor on a rental rate of `gpu` (on `provider`'s offer's, when given)."""
        one = self.offer_factor.get((gpu, provider), 1.0) if provider is not None else 1.0
        return self.price_factor.get(gpu, 1.0) * self.rent_factor.get(gpu, 1.0) * one

    def run_price(self, c: Candidate | ServeCandidate) -> float:
        """The factor on candidate c's run cost: its offer's rental rate's (rented), 1 (bought: energy)."""
        if c.ownership != "rent":
            return 1.0
        key = bill_key(c)
        return self.rent_price(c.gpu, key[1] if key is not None else None)

    def buy_price(self, gpu: str) -> float:
        return self.price_factor.get(gpu, 1.0) * self.buy_factor.get(gpu, 1.0)


def baseline(problem: Problem) -> Scenario:
    """The workload as written: its budget (and what it caps), the power limit in force (its own or a
    rule's), its GPU-count bounds, the horizon every job finishes within."""
    wl = problem.workload
    return Scenario(
        budget_usd=wl.budget_usd,
        power_limit_kw=problem.power_limit_kw,
        gpu_lower=wl.gpus.lower,
        gpu_upper=wl.gpus.upper,
        horizon_hours=problem.costs.horizon_hours,
        budget_basis=wl.budget_basis,
    )
