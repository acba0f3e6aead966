"""Durations in words, in the unit their size needs: a deadline, a job's time, a slack. Below the
solver and the plan's words alike: solve/ words its deadline refusals with them, present/ its tables
and memos, so a deadline and the times set against it are said in one unit."""

from __future__ import annotations

DAYS_FROM_HOURS = 48  # duration says a span in days from two days up, in hours below


def _num(x: float) -> str:
    """One decimal, none when it is zero: 7.0 -> '7', 1.58 -> '1.6'."""
    text = f"{x:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def duration(hours: float, short: bool = False) -> str:
    """'40 seconds', '1.5 minutes', '45 minutes', '5 hours', '38.1 hours (1.6 days)' ('38.1 hours' when
    short), '7 days'."""
    if round(hours * 3600) < 60:  # (59.6 seconds read "60 seconds", 59.9 minutes "60 minutes": review25b)
        seconds = max(1, round(hours * 3600))
        return f"{seconds} second" + ("" if seconds == 1 else "s")
    minutes = _num(hours * 60) if hours * 60 < 10 else f"{hours * 60:,.0f}"
    if hours < 1 and minutes != "60":
        return f"{minutes} minute" + ("" if minutes == "1" else "s")
    if hours < DAYS_FROM_HOURS:
        text = _num(hours)
        day = _num(hours / 24)
        days = "" if short or hours < 24 else f" ({day} day{'' if day == '1' else 's'})"  # not '1 hour (0 days)'
        return f"{text} hour" + ("" if text == "1" else "s") + days
    return f"{_num(hours / 24)} days"


def in_days(days: float, digits: int = 1) -> str:
    """A span the plan holds in days, in the unit duration says it in: in its words under two days ('38
    minutes', where '0.0 days' said nothing of a job due within the hour), from two days at `digits`
    decimals as the plan's day figures are printed ('12.4 days'); '0 hours' under half a second."""
    if abs(days) * 86400 < 0.5:
        return "0 hours"
    if days < 0:
        return "-" + in_days(-days, digits)
    return duration(days * 24) if days * 24 < DAYS_FROM_HOURS else f"{days:,.{digits}f} days"


def deadline_phrase(hours: float) -> str:
    """168 -> '7-day deadline', 36 -> '36-hour deadline', 0.75 -> '45-minute deadline': in duration's units
    (under three minutes a deadline read '0-hour')."""
    number, unit = duration(hours, short=True).split(" ")
    return f"{number}-{unit.removesuffix('s')} deadline"


def deadline_step(hours: float) -> tuple[float, str]:
    """The little more of a deadline its marginal value is re-solved at, in the unit the deadline is
    said in (duration): a day from two days up, an hour from an hour, a minute below (a day more on
    a 6-hour deadline is five times the deadline, not a little more)."""
    unit = duration(hours, short=True).split(" ")[1].removesuffix("s")  # (59.9 minutes is said '1 hour')
    return {"day": (24.0, "day"), "hour": (1.0, "hour")}.get(unit, (1 / 60, "minute"))
