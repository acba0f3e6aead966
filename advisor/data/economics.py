"""The economics data file (catalog/economics.yaml) as typed, range-checked models: residual value
by GPU generation, useful life, cost of capital, colocation, rack power and cooling, network fabric,
storage, failures and interruptions, rental terms. Every figure is sourced, dated and graded; an
unknown one is null with a note. The economics layer computes with these; this module only reads."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from advisor.data.catalog_figures import check_date
from advisor.inputs.strict import Strict

# unit -> (low, high) a value in that unit may take; ranges catch a percent typed as a fraction
UNIT_RANGES = {
    "fraction": (0.0, 1.0), "fraction per year": (0.0, 1.0), "years": (0.0, 30.0),
    "USD/kW-month": (0.0, 10_000.0), "kW per rack": (0.0, 1_000.0), "kW per system": (0.0, 1_000.0),
    "USD": (0.0, 1e9), "USD per TB": (0.0, 1e6), "count": (0.0, 1e9), "per GPU-day": (0.0, 1.0),
    "hours": (0.0, 1e6), "days": (0.0, 3_660.0), "weeks": (0.0, 520.0), "Gb/s": (0.0, 1e5),
}


class EconFigure(Strict):
    """One sourced figure: `value` (null = unknown, with a note), optional `low`/`high` band."""

    value: float | None
    low: float | None = None
    high: float | None = None
    unit: str
    as_of: str | None = None
    confidence: Literal["high", "medium", "low"]
    source: list[str] = []
    note: str | None = None

    _date = field_validator("as_of")(check_date)   # the catalog's check: also refuses month 13

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str) -> str:
        if v not in UNIT_RANGES:
            raise ValueError(f"unit {v!r} is not one of: {', '.join(UNIT_RANGES)}")
        return v

    @model_validator(mode="after")
    def _checks(self):
        lo, hi = UNIT_RANGES[self.unit]
        for name in ("value", "low", "high"):
            x = getattr(self, name)
            if x is not None and not lo <= x <= hi:
                raise ValueError(f"{name} {x:g} is outside {lo:g}..{hi:g} {self.unit}")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError("low must not exceed high")
        if self.value is None and self.low is None and not self.note:
            raise ValueError("value is null, so a note must say why it is unknown")
        if (self.value is not None or self.low is not None) and not self.source:
            raise ValueError("a known figure must cite at least one source id")
        return self


class ResidualPoint(Strict):
    years: float = Field(ge=0, le=30)
    fraction: float | None = Field(ge=0, le=1.5)
    low: float | None = Field(default=None, ge=0, le=1.5)
    high: float | None = Field(default=None, ge=0, le=1.5)


class ResidualCurve(Strict):
    """Fraction of the new price a GPU of this generation fetches used after `years`."""

    gpus: list[str] = Field(min_length=1)
    points: list[ResidualPoint] = Field(min_length=1)
    as_of: str | None = None
    confidence: Literal["high", "medium", "low"]
    source: list[str] = Field(min_length=1)
    note: str

    @model_validator(mode="after")
    def _ordered(self):
        years = [p.years for p in self.points]
        if years != sorted(years):
            raise ValueError("points must be in increasing order of years")
        return self


class UsefulLifePoint(Strict):
    company: str
    years: float = Field(gt=0, le=30)
    as_of: str
    confidence: Literal["high", "medium", "low"]
    source: list[str] = Field(min_length=1)
    note: str | None = None


class LiquidOnly(Strict):
    system: str
    kw_per_rack: float | None = Field(gt=0, le=1_000)
    gpus: list[str] = []
    confidence: Literal["high", "medium", "low"]
    source: list[str] = Field(min_length=1)
    note: str | None = None


class SpotInterruption(Strict):
    instance: str
    gpu: str
    rate_low: float = Field(ge=0, le=1)
    rate_high: float = Field(ge=0, le=1)
    period_days: float = Field(gt=0, le=366)
    as_of: str
    confidence: Literal["high", "medium", "low"]
    source: list[str] = Field(min_length=1)
    note: str | None = None


class Economics(Strict):
    residual_value: dict[str, ResidualCurve]
    useful_life_years: EconFigure
    useful_life_filings: list[UsefulLifePoint]
    cost_of_capital: dict[str, EconFigure]
    colocation_usd_per_kw_month: dict[str, EconFigure]
    power_and_cooling: dict[str, EconFigure]
    liquid_only_systems: list[LiquidOnly]
    network: dict[str, EconFigure]
    storage: dict[str, EconFigure]
    reliability: dict[str, EconFigure]
    spot_interruption: list[SpotInterruption]
    rental_terms: dict[str, EconFigure]
    lead_times: dict[str, EconFigure]          # issue 29: `network` (switches, NICs, optics), in days

    @field_validator("lead_times")
    @classmethod
    def _network_lead_time(cls, v: dict) -> dict:
        fig = v.get("network")
        if fig is None or fig.unit != "days":
            raise ValueError("lead_times needs `network`, in days (value: null with a note when unknown)")
        return v

    @field_validator("cost_of_capital")
    @classmethod
    def _has_default(cls, v: dict) -> dict:
        if "default" not in v or v["default"].value is None:
            raise ValueError("cost_of_capital needs a `default` with a value")
        return v
