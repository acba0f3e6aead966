"""Where and how a workload runs: the deployment (site, region, ownership, power, facility), the
finance terms, and which GPUs a plan may choose. `Deployment` decides site and ownerships in one place."""

from typing import Literal

from pydantic import Field, field_validator, model_validator

from advisor.inputs.known import GpuId
from advisor.inputs.quantities import (
    MAX_GPUS,
    MIN_SHARE,
    MIN_STORAGE_TB,
    MONTHS_SCHEMA,
    STORAGE_WHY,
    UTILIZATION_WHY,
    PowerKW,
    at_least,
    at_least_a_day,
    floor_schema,
)
from advisor.inputs.regions import check_region
from advisor.inputs.strict import Written

RentKind = Literal["on_demand", "reserved_1y", "reserved_3y", "capacity_block", "cluster_term", "spot"]
# what a plan rents from unless the workload says otherwise: every kind but spot (issue 29)
DEFAULT_RENT_KINDS: tuple[RentKind, ...] = ("on_demand", "reserved_1y", "reserved_3y", "capacity_block", "cluster_term")


class Deployment(Written):
    context: Literal["office", "datacenter", "cloud"] = Field(description="where the GPUs run")
    region: str = Field(default="US", description="ISO 3166 alpha-2 country code; drives export-control rules")
    ownership: Literal["buy", "rent", "any"] = "any"
    power_limit_kw: PowerKW | None = None
    electricity_usd_per_kwh: float | None = Field(default=None, gt=0, le=5)
    pue: float | None = Field(default=None, ge=1.0, le=3.0)
    hosting_usd_per_kw_month: float | None = Field(default=None, ge=0, le=10_000)
    horizon_months: float = Field(default=36, gt=0, le=240, json_schema_extra=MONTHS_SCHEMA)
    # issue 14 (economics): rental kinds allowed, owned-GPU utilization, facility, storage. Issue 29:
    # commitments are considered by default (a term is paid in full, so one is chosen only where the
    # need makes it cheapest); spot only when listed
    rent_kinds: list[RentKind] = Field(
        default=list(DEFAULT_RENT_KINDS),
        min_length=1,
        description=(
            "rental kinds a plan may use [on_demand, reserved_1y, reserved_3y, capacity_block, cluster_term]; "
            "spot only when listed"
        ),
    )
    utilization: float | None = Field(
        default=None,
        le=1,
        json_schema_extra=floor_schema(MIN_SHARE),
        description=(
            "share of the horizon owned GPUs run (energy is costed for it); default: the planned jobs' own hours"
        ),
    )
    liquid_cooling: bool = Field(
        default=False, description="the facility offers liquid cooling (needed by liquid-only systems)"
    )
    storage_tb: float | None = Field(
        default=None,
        le=1e7,
        json_schema_extra=floor_schema(MIN_STORAGE_TB, none=0),
        description="training storage to cost, TB [none]",
    )
    lead_time_days: float | None = Field(
        default=None,
        ge=0,
        le=3650,
        description=(
            "days from today until bought hardware can work (delivery and burn-in), as your vendor quotes it, or 0 for "
            "hardware in hand; overrides the catalog's sourced lead times [the catalog's, per part]"
        ),
    )

    @property
    def site(self) -> str:
        """Whose building the owned hardware's costs follow: the cloud is rented hardware in a
        datacenter, so its rates are the datacenter's. The one place this is decided."""
        return "datacenter" if self.context == "cloud" else self.context

    @property
    def ownerships(self) -> list[str]:
        """The ownerships a plan may use: the cloud rents; otherwise as the workload says."""
        if self.context == "cloud":
            return ["rent"]
        return ["buy", "rent"] if self.ownership == "any" else [self.ownership]

    @property
    def renting_only(self) -> bool:
        return self.ownerships == ["rent"]

    def moved_to(self, **changes: object) -> "Deployment":
        """This deployment with another context or ownership (a diagnosis lever); moving to the
        cloud turns `buy` into `any`, since the cloud only rents."""
        d = self.model_copy(update=changes)
        return d.model_copy(update={"ownership": "any"}) if d.context == "cloud" and d.ownership == "buy" else d

    @model_validator(mode="after")
    def _cloud_is_rented(self) -> "Deployment":
        if self.context == "cloud" and self.ownership == "buy":
            raise ValueError("context cloud means renting GPUs; to buy GPUs and host them, use context: datacenter")
        return self

    @field_validator("horizon_months")
    @classmethod
    def _a_day(cls, v: float) -> float:
        return at_least_a_day(v)

    _utilization = field_validator("utilization")(at_least(MIN_SHARE, UTILIZATION_WHY))
    _storage = field_validator("storage_tb")(at_least(MIN_STORAGE_TB, STORAGE_WHY, none=0))

    @field_validator("region", mode="before")
    @classmethod
    def _region(cls, v: object) -> str:
        return check_region(v)


class Finance(Written):
    """How money is valued over time (issue 14): the buyer's discount rate (cost of capital) and how
    much of the horizon owned GPUs are used."""

    discount_rate: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description=(
            "cost of capital per year as a fraction (0.10 = 10%); default: the catalog's sourced economics.cost_of_capital"
        ),
    )
    utilization: float | None = Field(
        default=None, le=1, json_schema_extra=floor_schema(MIN_SHARE), description="as deployment.utilization"
    )
    _utilization = field_validator("utilization")(at_least(MIN_SHARE, UTILIZATION_WHY))
    tax_recoverable: bool | None = Field(
        default=None,
        description=(
            "whether the buyer can reclaim VAT/GST on hardware as input tax [the region's rule: a registered "
            "business reclaims it; a US sales tax never]; false (a university, a bank, a buyer not registered) "
            "counts it as a cost and in the cash a budget caps"
        ),
    )


class GpuSelection(Written):
    count: int | None = Field(default=None, gt=0, le=MAX_GPUS, description="exactly this many GPUs in the plan")
    min: int | None = Field(default=None, gt=0, le=MAX_GPUS)
    max: int | None = Field(default=None, gt=0, le=MAX_GPUS)
    allow: list[GpuId] | None = Field(default=None, description="candidate GPU ids; all catalog GPUs when absent")
    deny: list[GpuId] = []
    stock: dict[GpuId, int] | None = Field(
        default=None, description="most units of a GPU type that can be bought or rented"
    )

    @field_validator("stock")
    @classmethod
    def _stock(cls, v: dict[str, int] | None) -> dict[str, int] | None:
        for gid, n in (v or {}).items():
            if n < 0 or n > MAX_GPUS:
                raise ValueError(f"stock of {gid} must be between 0 and {MAX_GPUS}, got {n}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "GpuSelection":
        if self.count is not None and (self.min is not None or self.max is not None):
            raise ValueError("give either count, or min and/or max, not both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        if self.allow is not None and not self.allow:
            raise ValueError("allow is empty, so no GPU could be chosen; remove it to consider every GPU")
        return self

    @property
    def lower(self) -> int | None:
        return self.count if self.count is not None else self.min

    @property
    def upper(self) -> int | None:
        return self.count if self.count is not None else self.max
