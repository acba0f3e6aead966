"""The typed facts of a diagnosis (explain/diagnosis.py: why no plan exists) that only a diagnosis
makes; the constraint families' own (Shortfall, Lever) are in facts.py. Apart from them because a
plan that exists never makes one: a frozen dataclass costs ~0.4 ms of start-up to create."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from advisor.contract.facts import Lever, Shortfall


@dataclass(frozen=True)
class NoCandidate:
    """No allowed GPU can run a job at all (its reasons are in `rejected`)."""

    job: str


@dataclass(frozen=True)
class WorkShortfall:
    """The GPU-hours the work needs on the allowed GPU type that needs the fewest."""

    gpu: str
    gpu_name: str
    gpu_hours: float


@dataclass(frozen=True)
class WorkloadLever:
    """A change that needs new candidates (another deployment context, renting as well as
    buying, a larger global batch), re-planned from scratch and found to give a plan."""

    kind: str  # deployment | workload
    relaxation: Mapping[str, Any]  # e.g. {"deployment.context": "cloud"} or {"jobs[].global_batch_tokens x": 2.0}
    was: str  # the deployment context as written


@dataclass(frozen=True)
class Combination:
    """No single lever is enough: the limits a plan needs together (`kept`: the limit kept as
    written, if any), re-solved."""

    kept: str | None  # deadline | budget | power | gpu_count
    needs: tuple[tuple[str, float], ...]  # (family, the value it needs), in the registry's order
    relaxation: Mapping[str, Any]


@dataclass(frozen=True)
class Elsewhere:
    """Only another deployment with every limit lifted gives a plan."""

    change: Mapping[str, Any]  # deployment field -> value
    cost_usd: float
    days: float


@dataclass(frozen=True)
class Nothing:
    """Nothing within the bounds tried gives a plan."""

    max_gpus: int


Diagnosis = NoCandidate | WorkShortfall | Shortfall | Lever | WorkloadLever | Combination | Elsewhere | Nothing
