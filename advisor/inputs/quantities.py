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


# the least power a GPU may draw, a workload's power limit or a catalog GPU's tdp_w (data/bounds.py):
# a limit below it powers no GPU (1e-300 kW was accepted, and printed, for a rented plan)
MIN_POWER_W = 1.0
MIN_POWER_KW = MIN_POWER_W / 1000
# a purchase price of one GPU, or one server without its GPUs: a catalog's (data/bounds.py) or `compare
# --price`'s (1e-300 printed "$0.00" and a 300-digit "price x" there)
PURCHASE_USD_RANGE = (1.0, 10_000_000.0)
# the least share of time or speed a workload states (utilization, goodput, a measurement's spread): the
# plan states each to the percent -- utilization under it as 0% or 1%, a run's band as '1.00-1.00x' -- and
# 1e-300 was taken (a goodput of 1e-300 left no plan, exit 3, instead of naming the field)
MIN_SHARE = 0.01
# the least traffic a serving job, and each class of its mix, has: a request a day (the plan's dates are
# days). 1e-10 requests/s sat under the solver's tolerance, "held" by no replica (exit 1), and a class of
# share 1e-300 was planned with none
MIN_REQUESTS_PER_S = 1 / (24 * 3600)
REQUESTS_WHY = "less than a request a day is no serving job (the plan's dates are days)"
# the least storage a workload costs but none (0): a gigabyte, the unit storage is sold and billed in
MIN_STORAGE_TB = 0.001
# the least latency limit a serving job states, as the plan prints them: TTFT in whole milliseconds, TPOT to
# 0.1 ms; a limit of 1e-300 ms was taken, and planned to "no GPU meets it" (exit 3) naming no field
MIN_TTFT_MS = 1.0
MIN_TPOT_MS = 0.1
TTFT_WHY = "the plan states time to first token in whole milliseconds: a limit under 1 ms reads 0 ms"
TPOT_WHY = "the plan states time per output token to 0.1 ms: a limit under it reads 0.0 ms"
# the least deadline: the plan states a time under a minute in whole seconds (durations.duration; a
# deadline of 1e-300 days was taken, exit 3)
MIN_DEADLINE_HOURS = 1 / 3600
DEADLINE_WHY = (
    " (a second: the plan states a time under a minute in whole seconds, so a shorter deadline reads 1 second)"
)
UTILIZATION_WHY = (
    "the plan states utilization in whole percent, and under 1% the percentage printed (0% or 1%) is not "
    "the share the energy is costed at"
)
GOODPUT_WHY = (
    "under 1% of its wall time training, a job would lose 99 hours in 100, which no failure record comes near "
    "(Llama 3 405B on 16,384 H100 kept over 90%, catalog/estimator.yaml goodput)"
)
SPREAD_WHY = "a run's P10-P90 band is stated to 0.01x of it (0.99-1.01x at 0.01): a narrower one prints as 1.00-1.00x"
STORAGE_WHY = "storage is sold and billed by the gigabyte (0.001 TB); 0 costs none"


def _bounded(
    parse: Callable[[object, str], float], upper: float, what: str, lower: float = 0.0, why: str = "", unit: str = ""
) -> Callable[[object], float]:
    """A field's parser, refusing a figure above `upper` or below `lower` (saying `why`), both in `unit`."""

    def check(value: object) -> float:
        x = parse(value, what)
        if x > upper:
            raise ValueError(f"{what} of {x:.3g}{unit} is beyond the {upper:.3g}{unit} this tool accepts")
        if x < lower:
            raise ValueError(
                f"{what} of {x:.6g}{unit} is below {_shown_up(lower)}{unit}, the least this tool accepts{why}"
            )
        return x

    return check


def at_least(least: float, why: str, none: float | None = None) -> Callable[[float | None], float | None]:
    """A field validator: the figure unless it is below `least` (`none`, if given, stays allowed: "no
    such cost"), saying `why` and the bound; the field's schema is floor_schema(least, none)."""

    def check(v: float | None) -> float | None:
        if v is None or v >= least or v == none:
            return v
        bound = _shown_up(least)
        allowed = f"{none:g} or at least {bound}" if none is not None else f"at least {bound}"
        raise ValueError(f"{v:.6g} is below {bound}: {why}; give {allowed}")

    return check


def _shown_up(x: float) -> str:
    """x in the fewest digits (six or more) that are not below it: 'give at least' a figure that passes
    (1/86,400 requests/s printed as 1.15741e-05, the given 1.1574e-05 as 1.16e-05, 'below' it)."""
    for digits in range(6, 18):
        text = f"{x:.{digits}g}"
        if float(text) >= x:
            return text
    return repr(x)


def floor_schema(least: float, none: float | None = None) -> Callable[[dict[str, JsonValue]], None]:
    """The JSON schema of a field checked by at_least: its number (the field's own, or the number branch
    of an optional field's anyOf) takes exactly the bound the validator takes."""
    bound: dict[str, JsonValue] = {"minimum": least}
    if none is not None:
        bound = {"anyOf": [{"const": none}, {"minimum": least}]}

    def extra(schema: dict[str, JsonValue]) -> None:
        branches = schema.get("anyOf")
        for branch in branches if isinstance(branches, list) else [schema]:
            if isinstance(branch, dict) and branch.get("type") == "number":
                branch.update(bound)

    return extra


COUNT_PATTERN = units.schema_pattern(units.COUNT_SUFFIXES, units.COUNT_WORDS, bare_ok=True)
Count = Annotated[
    float,
    BeforeValidator(_bounded(units.parse_count, MAX_TOKENS, "a count")),
    WithJsonSchema(
        {
            "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": COUNT_PATTERN}],
            "description": "a count: a number or 124M, 10B, 1T",
        }
    ),
]
Params = Annotated[
    float,
    BeforeValidator(_bounded(units.parse_count, MAX_PARAMS, "a parameter count", lower=1)),  # (1e-300 was a model)
    WithJsonSchema(
        {
            "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": COUNT_PATTERN}],
            "description": "parameters: a number or 124M, 7B",
        }
    ),
]
# a deadline's hours: a workload's `deadline`, `crossover --deadline`
deadline_hours = _bounded(
    units.parse_duration_hours, 24 * 365 * 20, "a duration", MIN_DEADLINE_HOURS, DEADLINE_WHY, " hours"
)
Hours = Annotated[
    float,
    BeforeValidator(deadline_hours),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": units.schema_pattern(units.DURATION_HOURS, units.DURATION_WORDS),
            "description": "a duration of at least a second: 90min, 36h, 7d or 2w",
        }
    ),
]
PowerKW = Annotated[
    float,
    BeforeValidator(
        _bounded(
            units.parse_power_kw,
            1e6,
            "a power",
            MIN_POWER_KW,
            " (1 W: the least a GPU may draw, so any limit below powers none)",
        )
    ),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": MIN_POWER_KW},
                {"type": "string", "pattern": units.schema_pattern(units.POWER_KW, units.POWER_WORDS, bare_ok=True)},
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
