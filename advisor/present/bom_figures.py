"""A bill-of-materials line's quantity and unit price as printed, so that a finance reader who
multiplies them gets the extended price printed beside them, to the cent, at any size.

The plan gives a line's quantity and unit price to 6 significant digits and its amount to the cent
(contract/numbers.py), so on a large line (1,216.70 GPU-months x $804.6875 = $979,064.38) the two
rounded figures multiply to a different amount ($979,062.66). The unit price is printed with the plan's
own digits when they multiply out; when they cannot, it is the amount over the quantity as printed, to
as many decimals as the cent needs, and the line says so."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from advisor.contract.numbers import HALF_CENT
from advisor.present.words import usd, usd_cents

MAX_PLACES = 12  # decimals of a unit price derived from its amount: the cent of a $1e10 line


def _dec(x: float) -> Decimal:
    return Decimal(repr(float(x)))


def plain(x: Decimal) -> str:
    """A quantity with thousands separators and every digit it has: 1,216.7, 38.4, 1.66832, 256."""
    text = f"{x.normalize():,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _places(x: Decimal) -> int:
    return max(0, -x.normalize().as_tuple().exponent)  # type: ignore[operator]


def _fits(quantity: Decimal, unit: Decimal, total: Decimal, scale: Decimal = Decimal(1)) -> bool:
    return abs(quantity * unit / scale - total) <= HALF_CENT


def unit_shown(quantity: Decimal, unit_usd: float, total: Decimal, scale: Decimal = Decimal(1)) -> tuple[Decimal, bool]:
    """(the unit to print, whether it is derived from the amount): the plan's unit at the fewest
    decimals (2 or more) at which quantity x unit / scale rounds to the amount; else amount x scale /
    quantity at the fewest decimals that do."""
    unit = _dec(unit_usd)
    for places in range(2, max(2, _places(unit)) + 1):
        shown = unit.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if _fits(quantity, shown, total, scale):
            return shown, False
    exact = total * scale / quantity
    for places in range(2, MAX_PLACES + 1):
        shown = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if _fits(quantity, shown, total, scale):
            return shown, True
    return exact.quantize(Decimal(1).scaleb(-MAX_PLACES), rounding=ROUND_HALF_UP), True


def quantity_and_unit(
    kind: str, quantity: float, unit_usd: float | None, total_usd: float | None
) -> tuple[str, str, str | None]:
    """(quantity, unit price, a note when the unit is derived from the amount) as a reader checks
    them: a tax line is a rate (in %) on a dollar base; a lump sum's unit is its total."""
    if kind == "tax":
        base = usd_cents(quantity)
        if total_usd is None or unit_usd is None or not quantity:
            return base, f"{(unit_usd or 0.0) * 100:.2f}%", None
        rate, derived = unit_shown(
            Decimal(base.lstrip("$").replace(",", "")), unit_usd * 100, _dec(total_usd), Decimal(100)
        )
        note = f"the rate shown is the amount over the base ({usd_cents(total_usd)} / {base})" if derived else None
        return base, f"{rate}%", note
    if quantity == 1 and total_usd is not None:  # a lump sum: its unit is its total, to the cent
        return "1", usd_cents(total_usd), None
    qty = _dec(quantity)
    if unit_usd is None or total_usd is None or not quantity:
        return plain(qty), usd(unit_usd), None
    if float(unit_usd).is_integer() and _fits(qty, _dec(unit_usd), _dec(total_usd)):
        return plain(qty), usd(unit_usd), None
    unit, derived = unit_shown(qty, unit_usd, _dec(total_usd))
    note = (
        f"the unit price shown is the amount over the quantity as printed ({usd_cents(total_usd)} / {plain(qty)}); "
        f"the plan gives the unit as ${float(unit_usd):,.10g} and both to 6 significant digits"
        if derived
        else None
    )
    return plain(qty), f"${unit:,}", note
