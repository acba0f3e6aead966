"""The money parts of a plan: costs, what to buy or rent, servers, bill of materials, break-even
months, depreciation; and the P10/P50/P90 triple of every range."""

from typing import Literal

from advisor.contract.base import Num, Out, Ownership

# the cost breakdown's lines that are services, not goods: a VAT the buyer cannot reclaim is charged
# on them apart (`services_tax_usd`; economics/purchase_bill.py services_rate)
SERVICES = ("burn_in_usd", "support_usd", "energy_usd", "hosting_usd", "rental_usd", "bridge_usd")


class CostBreakdown(Out):
    """Nominal cash by part, what a budget caps: the hardware and its tax, burn-in and storage paid
    up front, then support, energy, hosting and rent over the horizon; resale is not deducted.
    Every part null when there is no plan."""

    purchase_usd: Num | None
    servers_usd: Num | None
    network_usd: Num | None = None  # NICs and the fabric joining the servers of a multi-server job
    storage_usd: Num | None = None  # the training data and checkpoints, on every training plan
    tax_usd: Num | None = None  # sales tax on the hardware (a reclaimed VAT is not a cost)
    burn_in_usd: Num | None = None  # the energy of the burn-in soak before work
    support_usd: Num | None = None  # the hardware support contract while held
    energy_usd: Num | None
    hosting_usd: Num | None
    rental_usd: Num | None
    bridge_usd: Num | None = None  # rent of the replicas serving until bought serving GPUs arrive
    services_tax_usd: Num | None = None  # a VAT the buyer cannot reclaim on rent, support, hosting, electricity


class CostBreakdownPV(Out):
    """Present value by part (what the plan minimises): the up-front lines as paid, the streams
    discounted as paid, and `residual_usd`, each resale at its disposal month (negative)."""

    purchase_usd: Num
    servers_usd: Num
    network_usd: Num = 0.0
    storage_usd: Num = 0.0
    tax_usd: Num = 0.0
    burn_in_usd: Num = 0.0
    residual_usd: Num
    support_usd: Num = 0.0
    energy_usd: Num
    hosting_usd: Num
    rental_usd: Num
    bridge_usd: Num = 0.0
    services_tax_usd: Num = 0.0


class PurchaseItem(Out):
    """A GPU type bought, rented for training (by rent kind) or rented on demand for serving."""

    gpu: str
    count: int
    ownership: Ownership
    unit_price_usd: Num | None
    gpu_hours: Num | None
    rent_kind: str | None = None
    provider: str | None = None
    as_of: str | None = None
    confidence: str | None = None
    condition: str | None = None
    billed_gpus: int | None = None
    # a rental: the GPU-hours paid at unit_price_usd (whole nodes, billing steps, minimum term)
    billed_gpu_hours: Num | None = None
    use: Literal["serving", "bridge"] | None = None  # bridge: serving until bought serving GPUs arrive
    bridges: str | None = None  # a bridge: the bought GPU type it serves for until that type arrives
    hours: Num | None = None  # a bridge: the hours it is rented (the bought GPUs' lead time and burn-in)
    # a purchase: the order's lead time (None: unknown) and the day its GPUs can work (delivery and burn-in)
    lead_time_days: Num | None = None
    lead_time_confidence: str | None = None
    ready_days: Num | None = None  # a rental: the offer's provisioning time
    # a rental offer as the product it is sold as
    gpus_per_node: int | None = None
    fabric: Literal["infiniband", "roce", "ethernet", "none", "unknown"] | None = None
    fabric_gbps_per_gpu: Num | None = None
    tier: Literal["hyperscaler", "neocloud", "marketplace"] | None = None
    term_months: Num | None = None  # the shortest commitment, paid in full
    # when the rent is paid: the term in full on day 0 (cluster terms, capacity blocks), monthly over
    # the term (reservations), or as the GPU-hours are used
    payment: Literal["upfront", "monthly", "as_used"] | None = None


class ServerItem(Out):
    server: str
    gpu: str
    count: int
    unit_price_usd: Num | None
    networked: int


# what a bill line buys, for a script that sums or quotes lines by kind rather than by their words
BomKind = Literal[
    "gpu", "server", "nic", "fabric", "racks", "storage", "tax", "burn_in", "support", "hosting", "electricity", "rent"
]


class BomItem(Out):
    item: str
    kind: BomKind
    quantity: Num
    unit_usd: Num | None
    total_usd: Num | None
    source: list[str]
    confidence: str | None
    note: str | None


class BreakEvenMonths(Out):
    gpu: str
    count: int
    months: Num | None
    months_without_resale: Num | None
    rent_usd_per_gpu_hour: Num | None  # None: no rental can run the fleet's jobs (the message says why)
    rent_provider: str | None
    rent_kind: str | None
    message: str


class DepreciationYear(Out):
    year: int
    depreciation_usd: Num
    book_value_usd: Num


class Triple(Out):
    """P10 / P50 / P90 of a quantity."""

    p10: Num | None
    p50: Num | None
    p90: Num | None
