"""Typed facts the solver hands to present/ to word: a constraint's slack in a finished plan, a
shortfall or a lever of an infeasible one, a marginal value. The numbers are computed by the
constraint families (advisor/solve/constraints/); the sentences a plan prints are present/'s
(present/constraint_words.py), so the two never disagree on what a constraint measures. The facts
only a diagnosis makes are in diagnosis_facts.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BINDING_TOLERANCE = 0.01  # a continuous constraint binds when its slack is under 1% of its limit


def binds(slack: float, limit: float | None, *, whole: bool = False) -> bool:
    """The one test of a binding constraint: slack under BINDING_TOLERANCE x limit (continuous
    quantities: deadlines, budget, power, serving rates), or zero (whole GPUs: counts and stock). A
    constraint with more slack does not bind, even if relaxing it further lets a cheaper plan in:
    that is what the marginal values measure, by re-solving."""
    if whole or not limit:
        return slack <= 0
    return slack < BINDING_TOLERANCE * abs(limit)


@dataclass(frozen=True)
class Slack:
    """One constraint of a finished plan: what the plan uses of its limit, in `unit`."""

    family: str  # the constraint family's name (how present/ words it)
    constraint: str  # "deadline:pretrain", "budget", "stock:h100-sxm" ...
    used: float
    limit: float
    slack: float
    unit: str
    binding: bool
    rule: str | None = None  # the rule that set the limit (PWR001), None when the workload did
    facts: Mapping[str, Any] = field(default_factory=dict)  # what the words need beyond the numbers


@dataclass(frozen=True)
class Shortfall:
    """What the work needs against one limit, from the cheapest plan with every limit removed."""

    family: str
    constraint: str  # "shortfall:budget" ...
    needed: float
    limit: float
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Lever:
    """One limit relaxed alone to the least value that gives a plan, verified by re-solving."""

    family: str
    constraint: str
    relaxation: Mapping[str, Any]  # workload field -> value (e.g. {"gpus.max": 16})
    needed: float  # the value, in the limit's own unit
    limit: float
    rule: str | None = None
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Marginal:
    """What relaxing a limit a little saves, re-solved (one more day of deadline, an hour under two days;
    10% more budget)."""

    family: str
    change: str
    saving_usd: float
    binding: bool
    slack: float
    unit: str = ""  # what one step of the change is: "day", "hour", "minute" for a deadline
