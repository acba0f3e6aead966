"""Quantities as users write them in a workload ("10B" tokens, "7d", "3.6kW", "$30K"), read by
inputs/units.py and bounded: a figure beyond any real training run is a typo, not a plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import BeforeValidator, JsonValue, WithJsonSchema

from advisor.inputs import units

MAX_TOKENS = 1e15  # 1,000T: far beyond any training run published so far
MAX_GPUS = 100_000  # the largest clusters reported hold about this many GPUs
MAX_PARAMS = 1e14  # 100T parameters
MAX_JOBS = 5_000
MAX_BUDGET_USD = 1e12  # a trillion dollars
# a day, in months: every date a plan gives is a day (a GPU's ready day, a job's finish, a lead time), so a
# horizon or a serving period shorter than one prints "0 GPU-hours" and "(0 days)"
MIN_MONTHS = 24 / units.HOURS_PER_MONTH


def _bounded(
    parse: Callable[[object, str], float], upper: float, what: str, lower: float = 0.0
) -> Callable[[object], float]:
    def check(value: object) -> float:
        x = parse(value, what)
        if x > upper:
            raise ValueError(f"{what} of {x:.3g} is beyond the {upper:.3g} this tool accepts")
        if x < lower:
            raise ValueError(f"{what} of {x:.3g} is below {lower:g}, the least this tool accepts")
        return x

    return check


Count = Annotated[
    float,
    BeforeValidator(_bounded(units.parse_count, MAX_TOKENS, "a count")),
    WithJsonSchema(
        {
            "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": r"^[0-9.]+\s*[KMBT]?$"}],
            "description": "a count: a number or 124M, 10B, 1T",
        }
    ),
]
Params = Annotated[
    float,
    BeforeValidator(_bounded(units.parse_count, MAX_PARAMS, "a parameter count", lower=1)),  # (1e-300 was a model)
    WithJsonSchema(
        {
            "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": r"^[0-9.]+\s*[KMBT]?$"}],
            "description": "parameters: a number or 124M, 7B",
        }
    ),
]
Hours = Annotated[
    float,
    BeforeValidator(_bounded(units.parse_duration_hours, 24 * 365 * 20, "a duration")),
    WithJsonSchema({"type": "string", "pattern": r"^[0-9.]+\s*[hdw]$", "description": "a duration: 36h, 7d or 2w"}),
]
PowerKW = Annotated[
    float,
    BeforeValidator(_bounded(units.parse_power_kw, 1e6, "a power")),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "string", "pattern": r"^[0-9.]+\s*(W|kW|MW)$"},
            ],
            "description": "power in kW: 3.6, 3.6kW or 1500W",
        }
    ),
]


def at_least_a_day(months: float) -> float:
    """A horizon or a serving period of at least a day (MIN_MONTHS)."""
    if months < MIN_MONTHS:
        raise ValueError(
            f"{months:g} months is {months * units.HOURS_PER_MONTH:.2g} hours, less than a day: the plan's dates are "
            f"days; give at least {MIN_MONTHS:.3f} months (one day)"
        )
    return months


# the schema of a field checked by at_least_a_day
MONTHS_SCHEMA: dict[str, JsonValue] = {"minimum": MIN_MONTHS}  # exactly what the validator takes


def usd_amount(value: object, what: str) -> float:
    """30000, '30K', '$30K' or '$30,000' (a workload's amounts and `compare --price`)."""
    return units.parse_count(value.replace("$", "").replace(",", "") if isinstance(value, str) else value, what)


USD = Annotated[
    float,
    BeforeValidator(_bounded(usd_amount, MAX_BUDGET_USD, "an amount in USD")),
    WithJsonSchema(
        {
            "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string"}],
            "description": "US dollars: 30000 or 30K",
        }
    ),
]
