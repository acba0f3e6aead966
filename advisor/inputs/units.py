"""Quantities with units as people write them: "124M" parameters, "10B" tokens, "7d", "3.6kW".

Every parser is strict: a value it cannot read raises ValueError with what is allowed, and
pydantic turns that into an error naming the field.
"""

from __future__ import annotations

import math
import re

from advisor.errors import show

_NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"

COUNT_SUFFIXES = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
DURATION_HOURS = {"min": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}
HOURS_PER_YEAR = 8760.0  # 365 days: a reservation's term, discounting's year
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730 h: a month of the horizon, a rental term, a hosting bill
POWER_KW = {"W": 1e-3, "kW": 1.0, "MW": 1e3}
# units as people also write them (any case): "1 trillion", "7 billion", "10k", "30 days", "2 weeks"
COUNT_WORDS = {
    "k": "K",
    "thousand": "K",
    "m": "M",
    "mn": "M",
    "million": "M",
    "b": "B",
    "bn": "B",
    "billion": "B",
    "t": "T",
    "tn": "T",
    "trillion": "T",
}
DURATION_WORDS = {
    "min": "min",  # (any case: 7 MIN)
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "day": "d",
    "days": "d",
    "wk": "w",
    "wks": "w",
    "week": "w",
    "weeks": "w",
}
POWER_WORDS = {
    "w": "W",
    "watt": "W",
    "watts": "W",
    "kw": "kW",
    "kilowatt": "kW",
    "kilowatts": "kW",
    "mw": "MW",
    "megawatt": "MW",
    "megawatts": "MW",
}


def _finite_positive(x: float, what: str) -> float:
    if not math.isfinite(x):
        raise ValueError(f"{what} must be a finite number, got {x!r}")
    if x <= 0:
        raise ValueError(f"{what} must be greater than zero, got {x!r}")
    return x


def _parse(
    value: object, table: dict[str, float], what: str, example: str, bare_ok: bool, words: dict[str, str] | None = None
) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, got {value!r}; write it like {example}")
    if isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:  # an integer of hundreds of digits
            raise ValueError(f"{what} of {len(str(value)):,} digits is far too large") from None
        if not bare_ok and math.isfinite(x):
            raise ValueError(
                f"{what} needs a unit; write it like {example} (allowed units: {', '.join(u for u in table if u)})"
            )
        return _finite_positive(x, what)
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a number or a string like {example}, got {show(value)}")
    text = re.sub(r"(?<=[0-9])[,_](?=[0-9])", "", value.strip())  # 1,000 or 1_000: separators between digits only
    m = re.fullmatch(_NUMBER + r"\s*([A-Za-z]*)", text)
    if not m:
        raise ValueError(f"cannot read {show(value)} as {what}; write it like {example}")
    number, unit = m.group(1), m.group(2)
    if unit not in table and words:
        unit = words.get(unit.lower(), unit)
    allowed = ", ".join(u for u in table if u) or "none"
    if unit == "" and not bare_ok:
        raise ValueError(f"{what} needs a unit; write it like {example} (allowed units: {allowed})")
    if unit not in table and unit != "":
        raise ValueError(
            f"unknown unit {unit!r} in {show(value)} for {what}; allowed units: {allowed} (e.g. {example})"
        )
    return _finite_positive(float(number) * table.get(unit, 1.0), what)


def schema_pattern(table: dict[str, float], words: dict[str, str] | None = None, bare_ok: bool = False) -> str:
    """The JSON-schema pattern of the strings `_parse` reads with `table` and `words`, so an editor
    checking a workload against `advisor schema` takes what the tool takes ('30 days', '10k', '1.5e9'):
    a number (',' or '_' between digits), a unit as the table writes it or a word in any case, none where
    `bare_ok` (the parser's own argument). Ranges and floors are the validator's (minimum, not a pattern)."""

    def any_case(word: str) -> str:
        return "".join(f"[{c.lower()}{c.upper()}]" for c in word)

    units = [re.escape(u) for u in sorted((u for u in table if u), key=len, reverse=True)]
    unit = "(" + "|".join(units + [any_case(w) for w in sorted(words or {}, key=len, reverse=True)]) + ")"
    digits = r"[0-9]([,_]?[0-9])*"
    return rf"^\s*{digits}(\.{digits})?([eE][+-]?[0-9]+)?\s*" + unit + ("?" if bare_ok else "") + r"\s*$"


def parse_count(value: object, what: str = "a count") -> float:
    """'124M' -> 124e6, '10B' -> 1e10, '1T' -> 1e12, '7 billion', '10k'; plain numbers pass through."""
    return _parse(value, COUNT_SUFFIXES, what, "124M, 10B or 1T", bare_ok=True, words=COUNT_WORDS)


def parse_duration_hours(value: object, what: str = "a duration") -> float:
    """'36h' -> 36, '7d' -> 168, '2w' -> 336, '30 days' -> 720, '90min' -> 1.5 (hours). A bare number is
    refused: hours or days?"""
    return _parse(value, DURATION_HOURS, what, "36h, 7d or 2w", bare_ok=False, words=DURATION_WORDS)


def parse_power_kw(value: object, what: str = "a power") -> float:
    """'3.6kW' -> 3.6, '1500W' -> 1.5, '2MW' -> 2000 (kW). A bare number is read as kW."""
    return _parse(value, POWER_KW, what, "3.6kW or 1500W", bare_ok=True, words=POWER_WORDS)
