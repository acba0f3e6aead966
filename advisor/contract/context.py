"""What a page needs besides the plan: the workload it answers, the catalog entries and rules it
cites, the GPU types considered, each job's requirement and the platforms an owned GPU goes into.

present/ renders a typed `Plan` and this `PlanContext`, never the solver's Problem:
`advisor.report.plan_context` builds it from what `plan()` returns. Types only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from advisor.data.catalog import Catalog
from advisor.data.rules import RuleSet
from advisor.inputs.workload import Workload


@dataclass(frozen=True)
class JobInfo:
    """One training job (or identical jobs planned together) as the plan names it, with what the
    workload asked of it."""

    name: str
    tokens: float
    precision: str
    deadline_hours: float | None


@dataclass(frozen=True)
class Host:
    """The platforms (servers, workstations) an owned GPU type can be installed in."""

    servers: tuple[str, ...]


@dataclass(frozen=True)
class PlanContext:
    """Everything a memo or a table reads that is not in the plan's JSON."""

    workload: Workload
    catalog: Catalog
    rules: RuleSet
    considered: tuple[str, ...]  # GPU ids considered (after allow/deny), in catalog order
    jobs: tuple[JobInfo, ...]  # training jobs, in the plan's order
    hosts: Mapping[str, Host] = field(default_factory=dict)  # gpu id -> platforms for owned GPUs

    def job(self, name: str) -> JobInfo | None:
        """The job the plan calls `name` (None for a name the workload does not have)."""
        return next((j for j in self.jobs if j.name == name), None)

    def gpu_name(self, gid: str) -> str:
        """A GPU's display name ('NVIDIA H100 SXM5 80GB'), its id when the catalog lacks it."""
        g = self.catalog.gpus.get(gid)
        return g.name if g is not None else gid

    @property
    def deadlines(self) -> list[float]:
        """The training jobs' deadlines in hours (jobs without one left out)."""
        return [j.deadline_hours for j in self.jobs if j.deadline_hours]
