"""What a GPU or a server costs: purchase records (dated, graded, new or used) and rental offers of
every kind (on demand, reserved, spot with its interruption band, ...), each sourced."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from advisor.data.catalog_figures import MAX_USD, Confidence, check_date
from advisor.inputs.strict import Strict

_RENT_ALIASES = {"interruptible": "spot", "reserved": "reserved_1y"}   # names used before issue 14


class Purchase(Strict):
    """What one unit costs to buy, when, in what condition and who said so. `confidence`: how far
    a finance reader may trust it (high: vendor or price catalog; medium: trade press, analyst
    data; low: aggregator, forum, single unsourced estimate)."""

    usd: float | None = Field(gt=0, le=MAX_USD)
    as_of: str | None
    kind: Literal["msrp", "list", "street", "estimate", "quote"] | None = None
    condition: Literal["new", "used", "refurbished"] = "new"
    confidence: Confidence | None = None
    usd_range: tuple[float, float] | None = None
    warranty: str | None = None
    source: list[str] = []
    note: str | None = None

    _v = field_validator("as_of")(check_date)

    @model_validator(mode="after")
    def _dated(self) -> Purchase:
        if self.usd is not None:
            if self.as_of is None:
                raise ValueError("a purchase price needs as_of (the date it was valid)")
            if not self.source:
                raise ValueError("a purchase price must cite at least one source id")
            if self.confidence is None:
                raise ValueError("a purchase price needs confidence: high, medium or low")
            if self.condition != "new" and not self.warranty:
                raise ValueError(f"a {self.condition} purchase needs a warranty caveat (who, if anyone, warrants it)")
        elif not self.note:
            raise ValueError("usd is null, so a note must say why it is unknown")
        if self.usd_range is not None and not 0 < self.usd_range[0] <= self.usd_range[1] <= MAX_USD:
            raise ValueError("usd_range is [low, high] with 0 < low <= high")
        return self


class Interruption(Strict):
    """How often a spot instance is taken back: the band of the share of instances interrupted per
    `period_days`, as a provider's spot advisor prints it."""

    rate_low: float = Field(ge=0, le=1)
    rate_high: float = Field(ge=0, le=1)
    period_days: float = Field(gt=0, le=366)
    as_of: str | None = None
    confidence: Confidence
    source: list[str] = Field(min_length=1)
    note: str | None = None

    _v = field_validator("as_of")(check_date)


class RentalOffer(Strict):
    """One provider's price for a GPU-hour, of one kind (`pricing`). An undated listing (`as_of:
    null`, with a note) is documentation, never planned on. The smallest rentable block is
    `gpus_per_node` x `min_nodes`; `billing_hours` is the billing granularity (null: not sourced)."""

    provider: str
    usd_per_gpu_hour: float = Field(gt=0, le=MAX_USD)
    as_of: str | None
    pricing: Literal["on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block", "marketplace",
                     "serverless"]
    confidence: Confidence
    source: list[str] = Field(min_length=1)
    region: str | None = None
    gpus_per_node: int | None = Field(default=None, ge=1, le=1024)
    min_nodes: int = Field(default=1, ge=1, le=100_000)
    billing_hours: float | None = Field(default=None, gt=0, le=8784)
    interruption: Interruption | None = None
    note: str | None = None

    _v = field_validator("as_of")(check_date)

    @model_validator(mode="before")
    @classmethod
    def _old_kind_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("pricing") in _RENT_ALIASES:
            data = {**data, "pricing": _RENT_ALIASES[data["pricing"]]}
        return data

    @model_validator(mode="after")
    def _checks(self) -> RentalOffer:
        if self.as_of is None and not self.note:
            raise ValueError("as_of is null, so a note must say why the offer is undated")
        if self.interruption is not None and self.pricing not in ("spot", "marketplace"):
            raise ValueError("only a spot or marketplace offer has an interruption rate")
        return self

    @property
    def min_gpus(self) -> int:
        """The smallest number of GPUs one can rent at this price."""
        return (self.gpus_per_node or 1) * self.min_nodes


class EndOfLife(Strict):
    """A part no longer made: since when, and whether it can still be bought new."""

    value: str | None
    new_purchase: Literal["available", "limited", "unavailable"]
    confidence: Confidence
    source: list[str] = Field(min_length=1)
    note: str | None = None

    _v = field_validator("value")(check_date)


class Prices(Strict):
    """`purchase` is the record plans use; `other_purchases` holds earlier and used-market records
    (`--as-of` falls back to them); `rent` holds rental offers of every kind."""

    purchase: Purchase | None = None
    other_purchases: list[Purchase] = []
    rent: list[RentalOffer] = []
