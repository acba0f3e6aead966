"""Numbers as the plan prints them, so that the same input gives byte-identical JSON and a budget
is compared at the precision a total is printed with: money to the cent (half up), other figures
to 6 significant digits."""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

HALF_CENT = Decimal("0.005")  # a figure printed to the cent is right within this


def cents(usd: float) -> float:
    """Money to the cent, half up (as printed; constraints compare at this precision)."""
    return float(Decimal(repr(usd)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def usd(x: float | None) -> str:
    """Whole dollars, with cents only for small amounts that have them: $1,601, $2.13 (the words of the
    plan, the memo and the JSON's messages alike: a noise of $1.44 is never "$1" in one and "$1.44" in another)."""
    if x is None:
        return "n/a"
    c = cents(x)  # to the cent as the JSON holds it, half up: $2.675 is "$2.68" here as there, $9.9992 "$10"
    if 0 < abs(c) < 10 and round(c) != c:
        return f"${c:,.2f}"
    return f"${x:,.0f}"


PLAN_WIDE_KINDS = ("hosting", "electricity")  # bill amounts summed over every GPU's time: no rate to re-multiply
ONE_SUM_KINDS = (*PLAN_WIDE_KINDS, "rent")  # bill lines billed as one sum (quantity 1, unit = total)


def whole_cents(usd: float) -> bool:
    """Is an amount written in whole cents (to 1e-6 of a cent)? A budget that is caps every figure that
    prints as it; one between cents ($37,930.209) caps at itself and prints to its own digits
    (solve/constraints/budget.cap, present/constraint_words.budget_usd). A non-zero amount under a cent
    is not ($1e-9 read "$0.00", review29 L7)."""
    return abs(usd * 100 - round(usd * 100)) < 1e-6 and (usd == 0 or abs(usd) >= 0.01 - 1e-8)


def is_money(key: str, entry: dict[str, Any]) -> bool:
    """An amount of dollars (a total, a cost, a saving, a USD slack), printed to the cent; not a unit
    price or rate (unit_price_usd, unit_usd, usd_per_gpu_hour), which keeps its digits."""
    if key == "slack":
        return entry.get("unit") == "USD"
    if key == "quantity":  # a tax line's quantity is its dollar base (economics/bom.line)
        return entry.get("kind") == "tax"
    if key == "unit_usd" and entry.get("kind") in ONE_SUM_KINDS:  # billed as one sum: its unit is its total
        return True
    return key.endswith("_usd") and not key.startswith("unit") and "_per_" not in key


def rounded(obj: Any) -> Any:
    """Fixed float formatting so the same input gives byte-identical JSON: money to the cent (half
    up), other figures to 6 significant digits (to the cent from a million up)."""
    if isinstance(obj, float):
        if obj != obj or obj in (float("inf"), float("-inf")):
            return None
        return float(f"{obj:.6g}") if abs(obj) < 1e6 else round(obj, 2)
    if isinstance(obj, dict):
        return {
            k: cents(v)
            if isinstance(v, float) and v == v and abs(v) != float("inf") and is_money(k, obj)
            else rounded(v)
            for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return [rounded(v) for v in obj]
    return obj


def cents_adding_to(
    lines: dict[str, float], total: float, absorbs: Callable[[str, float], bool] | None = None
) -> dict[str, float]:
    """Cost lines to the cent that add up to the total printed beside them (largest remainder): each
    line to the cent, then the cents rounding lost or gained go, one each, to the lines whose rounding
    moved them furthest the other way, so a reader who adds the printed lines gets the printed total
    and an exact line (8 x $5,000) stays exact. `absorbs(line, amount)` says a line still reads right
    at the moved amount (a lump sum, whose unit is its total): such lines take the cents first, so a
    rate x base line keeps its rate."""
    out = {k: cents(v) for k, v in lines.items()}
    drift = round((Decimal(repr(cents(total))) - sum((Decimal(repr(v)) for v in out.values()), Decimal(0))) * 100)
    if not out or not drift or abs(drift) > len(out):  # nothing to put right, or a missing line, not rounding
        return out
    step = 1 if drift > 0 else -1

    def moved(k: str) -> float:
        return float(Decimal(repr(out[k])) + Decimal(step) / 100)

    # lines that absorb a cent first, then those rounded furthest against the drift (ties by name)
    order = sorted(
        out, key=lambda k: (absorbs is not None and not absorbs(k, moved(k)), -step * (lines[k] - out[k]), k)
    )
    for k in order[: abs(drift)]:
        out[k] = moved(k)
    return out


def share_of_draws(held: int, draws: int) -> str:
    """A count of draws as a share, never "0%" for some nor "100%" for all but some: "none", "under 1%",
    "32%", "over 99%", "100%"."""
    if not held or held >= draws:
        return "none" if not held else "100%"
    pct = 100 * held / draws
    return "under 1%" if pct < 1 else "over 99%" if pct > 99 else f"{pct:.0f}%"
