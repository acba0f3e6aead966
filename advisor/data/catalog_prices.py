"""What a GPU or a server costs: purchase records (dated, graded, new or used) and rental offers as
the products providers sell (node size, fabric, largest order, term, billing step, kind, provider
tier, provisioning time; spot with its interruption band), each sourced."""

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from advisor.data.catalog_figures import MAX_USD, Confidence, LeadTimeFigure, check_date
from advisor.inputs.strict import Strict
from advisor.inputs.units import HOURS_PER_YEAR

_RENT_ALIASES = {"interruptible": "spot", "reserved": "reserved_1y"}  # names used before issue 14
RENT_KINDS = (
    "on_demand",
    "reserved_1y",
    "reserved_3y",
    "capacity_block",
    "cluster_term",
    "spot",
    "marketplace",
    "serverless",
)
FABRICS = ("infiniband", "roce", "ethernet", "none")
TIERS = ("hyperscaler", "neocloud", "marketplace")
TERM_HOURS = {"reserved_1y": HOURS_PER_YEAR, "reserved_3y": 3 * HOURS_PER_YEAR}  # a reservation's term


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
    def _dated(self) -> "Purchase":
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
        if (
            self.usd is not None
            and self.usd_range is not None
            and not self.usd_range[0] <= self.usd <= self.usd_range[1]
        ):
            # (the band the draws take as the price's P10-P90: one beside the price drew $1 for a $20,000 GPU)
            low, high = self.usd_range
            raise ValueError(
                f"usd_range [{low:g}, {high:g}] must contain usd {self.usd:g}: it is the price's P10-P90 band"
            )
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


class Fabric(Strict):
    """How an offer's nodes are joined for collective traffic between nodes: `kind` infiniband,
    roce (RDMA over Converged Ethernet), ethernet (including AWS EFA, RDMA-capable Ethernet) or
    none (nodes share only a general network, e.g. pods at 100 Mb/s), and the line rate per GPU in
    Gb/s each way (one 400 Gb/s NDR port per GPU = 400). `kind: null` is an explicit unknown (the
    provider does not publish it): a note says so, and no multi-node job is planned on it."""

    kind: Literal["infiniband", "roce", "ethernet", "none"] | None
    gbps_per_gpu: float | None = Field(default=None, gt=0, le=100_000)
    source: list[str] = []
    note: str | None = None

    @model_validator(mode="after")
    def _sourced(self) -> "Fabric":
        if self.kind is None and not self.note:
            raise ValueError("kind is null (not published), so a note must say where it was looked for")
        if self.kind is not None and not self.source:
            raise ValueError(f"a fabric of kind {self.kind} must cite at least one source id")
        if self.gbps_per_gpu is not None and self.kind in (None, "none"):
            raise ValueError("gbps_per_gpu belongs to a fabric of kind infiniband, roce or ethernet")
        return self

    @property
    def joins_nodes(self) -> bool:
        """Whether it is a network for collective traffic whose bandwidth is published."""
        return self.kind in ("infiniband", "roce", "ethernet") and self.gbps_per_gpu is not None


class SizeSeen(Strict):
    """The largest single order an offer's sources show on sale, where it publishes no largest
    order: above it the listed rate is an assumption (a quote is needed), as above a published one."""

    gpus: int = Field(ge=1, le=10_000_000)
    source: list[str] = Field(min_length=1)
    note: str = Field(min_length=1)  # what the sources say, in their words ("" passed as one)


class RentalOffer(Strict):
    """One provider's price for a GPU-hour, as the product it is sold as (`pricing` is its kind).
    An undated listing (`as_of: null`, with a note) is documentation, never planned on.

    A node holds `gpus_per_node` GPUs (null: not published, one assumed, with a note); the smallest
    block is `min_gpus` (whole nodes x `min_nodes` unless `whole_nodes: false`, a pod rentable by
    the GPU). `fabric` says how nodes are joined; `max_gpus_per_order` / `max_gpus_per_provider` the
    largest published order (null: not published; then `largest_order_seen`, the largest order its
    sources show on sale, else one node, is the size its rate is evidenced at). `min_term_hours` is the shortest commitment
    (a reservation's term by default), paid in full; `billing_hours` the billing step; `paid`
    upfront, monthly or as_used (default by kind). `tier`: hyperscaler, neocloud or marketplace
    (community hosts, bid markets), so plans compare GPUs on comparable offers."""

    provider: str
    usd_per_gpu_hour: float = Field(gt=0, le=MAX_USD)
    as_of: str | None
    pricing: Literal[
        "on_demand", "reserved_1y", "reserved_3y", "capacity_block", "cluster_term", "spot", "marketplace", "serverless"
    ]
    confidence: Confidence
    source: list[str] = Field(min_length=1)
    region: str | None = None
    min_nodes: int = Field(default=1, ge=1, le=100_000)
    whole_nodes: bool = True
    billing_hours: float | None = Field(default=None, gt=0, le=8784)
    min_term_hours: float | None = Field(default=None, gt=0, le=5 * 8784)
    max_term_hours: float | None = Field(default=None, gt=0, le=5 * 8784)
    max_gpus_per_order: int | None = Field(default=None, ge=1, le=10_000_000)
    max_gpus_per_provider: int | None = Field(default=None, ge=1, le=10_000_000)
    largest_order_seen: SizeSeen | None = None
    paid: Literal["upfront", "monthly", "as_used"] | None = None
    provisioning: LeadTimeFigure | None = None
    interruption: Interruption | None = None
    note: str | None = None
    # required, declared last so that a malformed offer's own mistake is reported before a missing key
    gpus_per_node: int | None = Field(ge=1, le=1024)
    fabric: Fabric
    tier: Literal["hyperscaler", "neocloud", "marketplace"]

    _v = field_validator("as_of")(check_date)

    @model_validator(mode="before")
    @classmethod
    def _old_kind_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("pricing") in _RENT_ALIASES:
            data = {**data, "pricing": _RENT_ALIASES[data["pricing"]]}
        return data

    @model_validator(mode="after")
    def _checks(self) -> "RentalOffer":
        if self.as_of is None and not self.note:
            raise ValueError("as_of is null, so a note must say why the offer is undated")
        if self.gpus_per_node is None and not self.note:
            raise ValueError("gpus_per_node is null (not published), so a note must say so")
        if self.interruption is not None and self.pricing not in ("spot", "marketplace"):
            raise ValueError("only a spot or marketplace offer has an interruption rate")
        if self.pricing == "cluster_term" and self.min_term_hours is None:
            raise ValueError("a cluster_term offer needs min_term_hours, its shortest contract")
        if (
            self.min_term_hours is not None
            and self.max_term_hours is not None
            and self.min_term_hours > self.max_term_hours
        ):
            raise ValueError("min_term_hours must not exceed max_term_hours")
        return self

    @property
    def node_gpus(self) -> int:
        """GPUs per node (one when not published)."""
        return self.gpus_per_node or 1

    @property
    def min_gpus(self) -> int:
        """The smallest number of GPUs one can rent at this price."""
        return self.min_nodes if not self.whole_nodes else self.node_gpus * self.min_nodes

    @property
    def order_evidenced(self) -> tuple[int, str]:
        """(GPUs, where): the largest single order its rate is evidenced at: the published largest
        order, else the largest its sources show on sale, else one node, the product it lists."""
        if self.max_gpus_per_order is not None:
            return self.max_gpus_per_order, f"per order {self.provider} publishes"
        return self._seen or (max(self.min_gpus, self.node_gpus), f"in one node, the product {self.provider} lists")

    @property
    def provider_evidenced(self) -> tuple[int, str] | None:
        """(GPUs, where): the most held at once over several orders its rate is evidenced at: the
        published most per provider, else the largest order its sources show on sale; None when
        neither is known (separate nodes of a per-node listing are not questioned)."""
        if self.max_gpus_per_provider is not None:
            return self.max_gpus_per_provider, f"per provider {self.provider} publishes"
        return self._seen

    @property
    def _seen(self) -> tuple[int, str] | None:
        """(GPUs, where) of `largest_order_seen`, if any."""
        seen = self.largest_order_seen
        return None if seen is None else (seen.gpus, f"in one order the sources of {self.provider} show on sale")

    def confidence_at(self, gpus: int, at_once: int = 0) -> Confidence:
        """Its rate's confidence for one order of `gpus`, `at_once` GPUs held on it in all: low above
        the size it is evidenced at (the listed rate is then an assumption: a quote is needed), else
        its own grade."""
        most = self.provider_evidenced
        over = gpus > self.order_evidenced[0] or (most is not None and at_once > most[0])
        return "low" if over else self.confidence

    @property
    def term_hours(self) -> float | None:
        """The shortest commitment paid in full: the offer's own, else a reservation's term."""
        return self.min_term_hours if self.min_term_hours is not None else TERM_HOURS.get(self.pricing)

    @property
    def payment(self) -> str:
        """When the rent is paid: the offer's own `paid`, else by kind (capacity blocks and cluster
        contracts up front, reservations monthly, the rest as used)."""
        if self.paid is not None:
            return self.paid
        return {
            "capacity_block": "upfront",
            "cluster_term": "upfront",
            "reserved_1y": "monthly",
            "reserved_3y": "monthly",
        }.get(self.pricing, "as_used")


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
    # the earliest new price record's date, kept when an override's quote replaces the records: what a part
    # of unverified launch is aged from when bought used (economics/ownership.purchase_age_years)
    first_new_as_of: str | None = None

    _v = field_validator("first_new_as_of")(check_date)
