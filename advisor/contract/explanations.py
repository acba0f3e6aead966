"""Why the plan is what it is: GPUs not chosen and their reasons, binding constraints, break-evens
and marginal values, the diagnosis of an infeasible workload, warnings."""

from typing import Literal

from advisor.contract.base import Num, Out, Ownership


class Reason(Out):
    """Why a GPU was not chosen; `primary` marks the one reason a reader is shown first."""

    rule: str | None
    code: str
    needed: Num | None = None
    limit: Num | None = None
    limit_rule: str | None = None
    message: str
    severity: str | None = None
    primary: bool | None = None


class ForcedRental(Out):
    """The rental offer the best plan forced onto a GPU rents most of it on: the rate it was costed at."""

    provider: str
    usd_per_gpu_hour: Num
    as_of: str | None
    source: list[str]


class Rejected(Out):
    gpu: str
    forced_cost_usd: Num | None
    forced_ownership: str | None = None  # buy, rent or mixed
    forced_rental: ForcedRental | None = None
    reasons: list[Reason]
    name: str


class Binding(Out):
    """A constraint of the plan, whether it binds and its slack in `unit`."""

    constraint: str
    binding: bool
    message: str
    slack: Num | None
    unit: str
    rule: str | None = None


class Runner(Out):
    """What wins after a rise: the pair, and the offer it rents on (rented)."""

    gpu: str
    ownership: Ownership
    provider: str | None = None
    usd_per_gpu_hour: Num | None = None


class BreakEven(Out):
    """The price change at which the choice changes (verified by re-solving)."""

    gpu: str
    ownership: Ownership
    direction: Literal["rise", "fall"]
    what: str
    provider: str | None = None  # a rented pair's: the one offer whose rate moves (the others stay)
    verified: bool | None = None
    then: Runner | None = None
    factor: Num | None = None
    price: Num | None = None
    message: str


class Marginal(Out):
    change: str
    saving_usd: Num | None
    binding: bool
    message: str


class SpeedBreakEven(Out):
    """The speed error at which the choice changes; ownership null for the runner-up."""

    gpu: str
    ownership: Ownership | None
    direction: Literal["slower", "faster"]
    what: Literal["speed"]
    factor: Num | None
    percent: int | None
    switches_to: str | None
    message: str


class Traffic(Out):
    change: str
    replicas_added: int | None
    extra_cost_usd: Num | None
    message: str


class Sensitivity(Out):
    break_even: list[BreakEven]
    marginal: list[Marginal]
    speed: list[SpeedBreakEven] | None = None
    traffic: list[Traffic] | None = None


class Diagnosis(Out):
    """Why no plan exists: a shortfall, or a lever whose `relaxation` (workload field -> value,
    e.g. "gpus.max": 16) was re-solved and gives a plan."""

    constraint: str
    relaxation: dict[str, Num | str] | None
    kind: Literal["shortfall", "lever", "nothing"]
    gpu: str | None = None
    gpu_hours: Num | None = None
    needed: Num | None = None
    rule: str | None = None
    message: str


class PlanWarning(Out):
    rule: str | None
    code: str
    message: str
