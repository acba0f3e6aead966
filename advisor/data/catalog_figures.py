"""The catalog's smallest pieces: a figure with where it came from (`_Sourced`: a known value cites
a source, an unknown one is null with a note), dates written YYYY[-MM[-DD]] and their ages, bounds."""

import datetime as dt
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from advisor.inputs.strict import Strict

MAX_FIGURE = 1e9  # no sourced figure (GB, GB/s, TFLOPs, W, mm², TPP) comes near this
MAX_USD = 1e8  # per GPU, or per GPU-hour
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def parse_as_of(text: str | None) -> dt.date | None:
    """'2023-08' -> 2023-08-01; '2024' -> 2024-01-01; None stays None."""
    if text is None:
        return None
    parts = [int(p) for p in text.split("-")] + [1, 1]
    return dt.date(parts[0], parts[1], parts[2])


Confidence = Literal["high", "medium", "low"]
STALE_MONTHS = 18  # a price older than this, against the as-of date, is flagged


def age_months(as_of: str | None, today: dt.date) -> int | None:
    """Whole calendar months from a YYYY[-MM[-DD]] date to `today` (None when undated)."""
    day = parse_as_of(as_of)
    if day is None:
        return None
    return (today.year - day.year) * 12 + today.month - day.month


def check_date(value: str | None) -> str | None:
    if value is not None and not _DATE.match(value):
        raise ValueError(f"a date is written YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}")
    if value is not None:
        parse_as_of(value)  # raises on month 13 and the like
    return value


class _Sourced(Strict):
    """A value with where it came from. A known value cites at least one source; `value: null`
    needs a note saying why it is unknown (and may cite where it was looked for)."""

    source: list[str] = []
    note: str | None = None

    @model_validator(mode="after")
    def _sourced(self) -> "_Sourced":
        value = getattr(self, "value", None)  # each subclass declares `value` with its own type
        if value is None and not self.note:
            raise ValueError("value is null, so a note must say why it is unknown")
        if value is not None and not self.source:
            raise ValueError("a known value must cite at least one source id")
        return self


class Figure(_Sourced):
    """One number with where it came from."""

    value: float | None = Field(ge=0, le=MAX_FIGURE)


class TensorFigure(Figure):
    """A dense tensor rate at one precision. `supported: false` (with `value: null`, a note and a
    source) says the part lacks the format, so no job is planned at it; `value: null` alone says
    only that no source gives the rate (the format may exist: `supported: true`)."""

    supported: bool | None = None

    @model_validator(mode="after")
    def _supported(self) -> "TensorFigure":
        if self.value is not None and self.supported is False:
            raise ValueError("a rate is given, so the format is not unsupported (supported: false needs value: null)")
        if self.supported is False and not self.source:
            raise ValueError("supported: false must cite the source that shows the part lacks the format")
        return self

    @property
    def has(self) -> bool | None:
        """True: the part has the format; False: it lacks it; None: not known."""
        return True if self.value is not None else self.supported


class FlagFigure(_Sourced):
    value: bool | None


class CoolingFigure(_Sourced):
    """How the card is cooled, as its datasheet says: passive (a heat sink that needs a server's
    airflow), active (its own fans) or liquid (needs a facility with liquid cooling)."""

    value: Literal["passive", "active", "liquid"] | None


class MarketsFigure(_Sourced):
    """Where a market-specific part is sold, as ISO 3166 alpha-2 codes (the China-market SKUs:
    CN, HK, MO); absent or null on a part sold worldwide."""

    value: list[str] | None = Field(default=None, min_length=1)

    @field_validator("value")
    @classmethod
    def _codes(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not all(isinstance(c, str) and re.fullmatch(r"[A-Z]{2}", c) for c in v):
            raise ValueError("markets are ISO 3166 alpha-2 codes in capitals, such as CN, HK, MO")
        return v


class DateFigure(_Sourced):
    value: str | None

    _v = field_validator("value")(check_date)


def positive_figure(fig: Figure) -> Figure:
    if fig.value is not None and fig.value <= 0:
        raise ValueError(f"must be positive, got {fig.value:g}")
    return fig


class LeadTimeFigure(Strict):
    """How long from order to working hardware (a purchase: delivery; a rental: provisioning), in
    days, with the band the source gives. `days: null` is an explicit unknown: a note says why (and
    `source` may name where it was looked for). A known time is dated, sourced and graded."""

    days: float | None = Field(ge=0, le=3660)
    low_days: float | None = Field(default=None, ge=0, le=3660)
    high_days: float | None = Field(default=None, ge=0, le=3660)
    as_of: str | None = None
    confidence: Confidence | None = None
    source: list[str] = []
    note: str | None = None

    _v = field_validator("as_of")(check_date)

    @model_validator(mode="after")
    def _sourced(self) -> "LeadTimeFigure":
        if self.days is None:
            if not self.note:
                raise ValueError("days is null (unknown), so a note must say why")
            return self
        missing = [name for name, v in (("as_of", self.as_of), ("confidence", self.confidence)) if v is None]
        if missing or not self.source:
            raise ValueError(
                f"a known lead time needs as_of, confidence and a source (missing: "
                f"{', '.join(missing + ([] if self.source else ['source']))})"
            )
        low = self.low_days if self.low_days is not None else self.days
        high = self.high_days if self.high_days is not None else self.days
        if not low <= self.days <= high:
            raise ValueError(f"days {self.days:g} must lie within low_days..high_days ({low:g}..{high:g})")
        return self
