"""The economics data file (catalog/economics.yaml) as typed, range-checked models: residual value
by GPU generation, useful life, cost of capital, colocation, rack power and cooling, network fabric,
storage, failures and interruptions, rental terms. Every figure is sourced, dated and graded; an
unknown one is null with a note. The economics layer computes with these; this module only reads."""

from typing import Literal

from pydantic import Field, field_validator, model_validator

from advisor.data.catalog_figures import check_date
from advisor.inputs.strict import Strict

# unit -> (low, high) a value in that unit may take; ranges catch a percent typed as a fraction
UNIT_RANGES = {
    "fraction": (0.0, 1.0),
    "fraction per year": (0.0, 1.0),
    "years": (0.0, 30.0),
    "USD/kW-month": (0.0, 10_000.0),
    "kW per rack": (0.0, 1_000.0),
    "kW per system": (0.0, 1_000.0),
    "USD": (0.0, 1e9),
    "USD per TB": (0.0, 1e6),
    "count": (0.0, 1e9),
    "per GPU-day": (0.0, 1.0),
    "hours": (0.0, 1e6),
    "days": (0.0, 3_660.0),
    "weeks": (0.0, 520.0),
    "Gb/s": (0.0, 1e5),
    "bytes per token": (0.0, 1e3),
    "bytes per parameter": (0.0, 1e3),
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

    _date = field_validator("as_of")(check_date)  # the catalog's check: also refuses month 13

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str) -> str:
        if v not in UNIT_RANGES:
            raise ValueError(f"unit {v!r} is not one of: {', '.join(UNIT_RANGES)}")
        return v

    @model_validator(mode="after")
    def _checks(self) -> "EconFigure":
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
    """The used-market price of a GPU `years` after it was new, as a fraction of its new price: a
    value, or a band (`fraction: null` with `low`/`high`). Each point cites its own sources."""

    years: float = Field(ge=0, le=30)
    fraction: float | None = Field(ge=0, le=1.5)
    low: float | None = Field(default=None, ge=0, le=1.5)
    high: float | None = Field(default=None, ge=0, le=1.5)
    source: list[str] = []
    note: str | None = None

    @property
    def conservative(self) -> float | None:
        """The value a buyer should count on: the fraction, else the band's low end."""
        return self.fraction if self.fraction is not None else self.low


class ResidualCurve(Strict):
    """What a GPU of this generation fetches on the used market as it ages (fraction of the new
    price), from sourced used-market prices: the first point is at 0 years and below 1 (a new part
    resold is a used part) and the curve never rises. A generation with no sourced used-market
    price borrows another's curve (`like`), said in its note."""

    gpus: list[str] = Field(min_length=1)
    points: list[ResidualPoint] = []
    like: str | None = None
    as_of: str | None = None
    confidence: Literal["high", "medium", "low"]
    source: list[str] = Field(min_length=1)
    note: str

    _date = field_validator("as_of")(check_date)

    @model_validator(mode="after")
    def _shape(self) -> "ResidualCurve":
        if (self.like is None) == (not self.points):
            raise ValueError("a curve has its own points or borrows another's (`like: GENERATION`), not both")
        if not self.points:
            return self
        years = [p.years for p in self.points]
        if years != sorted(years) or len(set(years)) != len(years):
            raise ValueError("points must be in strictly increasing order of years")
        first = self.points[0]
        if first.years != 0 or first.conservative is None or first.conservative >= 1:
            raise ValueError(
                "the first point is at years 0 and below 1: a new part resold is a used part "
                "(no generation fetches 100% of its price at month 0)"
            )
        values = [p.conservative for p in self.points]
        known = [v for v in values if v is not None]
        if len(known) != len(values):
            raise ValueError("every point needs a fraction or a low end")
        if any(b > a for a, b in zip(known, known[1:])):
            raise ValueError("the curve must not rise with age (fractions, or band low ends, non-increasing)")
        return self


class NetworkBand(Strict):
    """The scale-out fabric's cost per networked GPU for clusters up to `up_to_gpus` GPUs (null:
    no top): switches, cables and optics, NICs excluded."""

    up_to_gpus: int | None = Field(ge=2, le=10_000_000)
    usd_per_gpu: float = Field(ge=0, le=1e6)
    as_of: str
    confidence: Literal["high", "medium", "low"]
    source: list[str] = Field(min_length=1)
    note: str

    _date = field_validator("as_of")(check_date)


class TaxRate(Strict):
    """Tax on bought hardware in one region: `recoverable` when a registered business reclaims it
    as input tax (VAT, GST): paid, then credited, so cash but not a cost."""

    rate: float = Field(ge=0, le=0.5)
    kind: Literal["sales_tax", "vat", "gst", "consumption_tax"]
    recoverable: bool
    as_of: str
    confidence: Literal["high", "medium", "low"]
    source: list[str] = Field(min_length=1)
    note: str | None = None
    # a VAT/GST's rate on the services a plan pays (rent, support, hosting, electricity), with its
    # sources: a cost only for a buyer that cannot reclaim it; null when not sourced (none counted, said)
    services_rate: float | None = Field(default=None, ge=0, le=0.5)
    services_source: list[str] = Field(default_factory=list)

    _date = field_validator("as_of")(check_date)


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
    used_market_discount: EconFigure  # the dealer's spread: what a seller gets below the used list price
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
    lead_times: dict[str, EconFigure]  # issue 29: `network` (switches, NICs, optics), in days
    network_bands: list[NetworkBand]  # issue 29: fabric $ per networked GPU by cluster size
    support: dict[str, EconFigure]  # issue 29: service contracts, software licences
    burn_in: dict[str, EconFigure]  # issue 29: the acceptance soak before production
    sales_tax: dict[str, TaxRate]  # issue 29: by region (ISO 3166 alpha-2)

    @field_validator("residual_value")
    @classmethod
    def _borrowed_curves_exist(cls, v: dict) -> dict:
        for name, curve in v.items():
            seen = {name}
            while curve.like is not None:
                if curve.like not in v:
                    raise ValueError(f"{name}: like {curve.like!r} names no curve; known: {', '.join(sorted(v))}")
                if curve.like in seen:
                    raise ValueError(f"{name}: curves borrow each other in a circle ({', '.join(sorted(seen))})")
                seen.add(curve.like)
                curve = v[curve.like]
        return v

    @field_validator("network_bands")
    @classmethod
    def _bands_ordered(cls, v: list) -> list:
        tops = [b.up_to_gpus for b in v]
        if not v or tops[-1] is not None or any(t is None for t in tops[:-1]) or tops[:-1] != sorted(set(tops[:-1])):
            raise ValueError("network_bands rise by up_to_gpus, and only the last is open (up_to_gpus: null)")
        return v

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
