"""The catalog's entries: GPUs (with their interconnect and prices), the servers that hold them,
model presets, sources and operating assumptions, each a typed, range-checked model."""

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from advisor.data.catalog_figures import (
    CoolingFigure,
    DateFigure,
    Figure,
    FlagFigure,
    LeadTimeFigure,
    MarketsFigure,
    TensorFigure,
    check_date,
    positive_figure,
)
from advisor.data.catalog_prices import EndOfLife, Prices, Purchase, RentalOffer
from advisor.data.source_grades import LEGACY_KINDS
from advisor.inputs.strict import Strict


class Interconnect(Strict):
    link: Literal["nvlink", "infinity_fabric", "roce", "ici", "hccs", "none"]
    link_gbps: Figure
    link_domain: Figure
    p2p: FlagFigure
    pcie_gen: int | None = None
    pcie_gbps: Figure

    @field_validator("link_gbps", "pcie_gbps")
    @classmethod
    def _positive(cls, fig: Figure) -> Figure:
        return positive_figure(fig)

    @field_validator("link_domain")
    @classmethod
    def _at_least_one(cls, fig: Figure) -> Figure:
        if fig.value is not None and fig.value < 1:
            raise ValueError(f"must be at least 1, got {fig.value:g}")
        return fig


class GPU(Strict):
    """One accelerator as the estimate, the rules and the optimizer see it."""

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9.]+)*$")
    name: str = Field(min_length=1, max_length=1000)  # printed in tables, memos and charts: bounded, as every text
    vendor: str
    architecture: str | None = None
    product_class: Literal["consumer", "workstation", "datacenter", "cloud_only"]
    brand: str | None = None
    form_factor: Literal["pcie", "sxm", "oam", "cloud"]
    launch: DateFigure
    memory_gb: Figure
    memory_bandwidth_gbps: Figure
    tensor_tflops: dict[str, TensorFigure]
    fp32_tflops: Figure
    interconnect: Interconnect
    tdp_w: Figure
    die_area_mm2: Figure
    tpp: Figure
    performance_density: Figure
    prices: Prices
    end_of_life: EndOfLife | None = None
    cooling: CoolingFigure | None = None
    lead_time: LeadTimeFigure | None = (
        None  # order to delivery; required with a purchase price (days: null = unknown, said)
    )
    markets: MarketsFigure | None = None  # where a market-specific SKU is sold (rules MKT*); absent: worldwide
    note: str | None = None

    @field_validator(
        "memory_gb", "memory_bandwidth_gbps", "fp32_tflops", "tdp_w", "die_area_mm2", "tpp", "performance_density"
    )
    @classmethod
    def _positive(cls, fig: Figure) -> Figure:
        return positive_figure(fig)

    @field_validator("tensor_tflops")
    @classmethod
    def _positive_rates(cls, rates: dict[str, TensorFigure]) -> dict[str, TensorFigure]:
        for key, fig in rates.items():
            if fig.value is not None and fig.value <= 0:
                raise ValueError(f"{key} must be positive, got {fig.value:g}")
        return rates

    def dense_tflops(self, precision: str) -> float | None:
        """Dense tensor rate a training job gets at `precision` (FP32 accumulate), or None."""
        fig = self.tensor_tflops.get(precision)
        return fig.value if fig else None

    def has_precision(self, precision: str) -> bool | None:
        """Whether the part has tensor `precision`: True (a rate, or a format the sources confirm),
        False (it lacks it: `supported: false`, sourced), None (no source says)."""
        fig = self.tensor_tflops.get(precision)
        return fig.has if fig is not None else None

    @property
    def purchase_usd(self) -> float | None:
        p = self.prices.purchase
        return p.usd if p else None

    @property
    def rental(self) -> RentalOffer | None:
        """The cheapest dated on-demand offer (interruptible bids, marketplace medians and undated
        listings are not plans)."""
        offers = [o for o in self.prices.rent if o.pricing == "on_demand" and o.as_of is not None]
        return min(offers, key=lambda o: (o.usd_per_gpu_hour, o.provider)) if offers else None

    def rentals(self, pricing: str) -> list[RentalOffer]:
        """Dated offers of one kind (on_demand, reserved_1y, reserved_3y, spot, capacity_block, ...),
        cheapest first: what the economics layer prices rental kinds with."""
        offers = [o for o in self.prices.rent if o.pricing == pricing and o.as_of is not None]
        return sorted(offers, key=lambda o: (o.usd_per_gpu_hour, o.provider))

    @property
    def availability(self) -> str:
        """'buy and rent', 'buy only', 'rent only' or 'neither', from the prices the catalog holds."""
        buy, rent = self.purchase_usd is not None, self.rental is not None
        return {
            (True, True): "buy and rent",
            (True, False): "buy only",
            (False, True): "rent only",
            (False, False): "neither",
        }[(buy, rent)]


def ffn_width(hidden: int, ffn: int | None) -> int:
    """The MLP's width: `ffn` as given, else GPT's 4 x hidden."""
    return ffn or 4 * hidden


def gated_mlp(hidden: int, ffn: int | None) -> bool:
    """A SwiGLU-style MLP (Llama), three matrices: assumed when the MLP width is given and is not 4 x hidden."""
    return ffn is not None and ffn != 4 * hidden


def kv_width(hidden: int, heads: int, kv_heads: int | None) -> float:
    """The width of the k and v projections: hidden x kv_heads / heads (grouped-query attention)."""
    return hidden * (kv_heads or heads) / heads


def block_matrices(layers: int, hidden: int, ffn: int | None, heads: int, kv_heads: int | None) -> float:
    """Weights of `layers` transformer blocks' matrices (attention q, k, v, o and the MLP: a SwiGLU
    one's three), for a preset as for a workload's shape (perf/jobspec.ModelSpec.block_params): what a
    model's `params` must hold at least."""
    h, f, kv = float(hidden), float(ffn_width(hidden, ffn)), kv_width(hidden, heads, kv_heads)
    return layers * (2.0 * h * h + 2.0 * h * kv + (3.0 if gated_mlp(hidden, ffn) else 2.0) * h * f)


def matrices_beyond_params(
    params: float, layers: int, hidden: int, ffn: int | None, heads: int, kv_heads: int | None
) -> str | None:
    """Why a shape cannot hold `params` (its blocks' matrices alone hold more), or None: the words a
    preset's and a workload's refusals share (params 1,000 with GPT-2's shape planned "0 GPU-hours")."""
    blocks = block_matrices(layers, hidden, ffn, heads, kv_heads)
    if blocks <= params:
        return None
    return (
        f"{layers:,} layers of hidden {hidden:,} (MLP {ffn_width(hidden, ffn):,}) hold {blocks:,.0f} parameters in "
        f"their matrices alone, more than params ({params:,.0f}): check params, layers, hidden and ffn"
    )


class ModelPreset(Strict):
    """One model preset, for training and serving (catalog/models.yaml says what each field means).
    The serving fields default to a dense model served up to its pre-training context."""

    params: int = Field(gt=0)
    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int | None = None
    ffn: int | None = None
    vocab: int = Field(gt=0)
    seq_len: int = Field(gt=0)
    tied_embeddings: bool = False
    head_dim: int | None = Field(default=None, gt=0)
    max_context: int | None = Field(default=None, gt=0)
    active_params: int | None = Field(default=None, gt=0)
    experts: int = Field(default=0, ge=0)
    experts_per_token: int = Field(default=0, ge=0)
    expert_params: int = Field(default=0, ge=0)
    kv_elements: int | None = Field(default=None, gt=0)
    kv_split_by_tp: bool = True
    source: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> "ModelPreset":
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) must divide heads ({self.heads})")
        if self.active_params is not None and self.active_params > self.params:
            raise ValueError(f"active_params ({self.active_params:,}) cannot exceed params ({self.params:,})")
        if beyond := matrices_beyond_params(self.params, self.layers, self.hidden, self.ffn, self.heads, self.kv_heads):
            raise ValueError(beyond)
        if self.expert_params > self.params:
            raise ValueError(f"expert_params ({self.expert_params:,}) cannot exceed params ({self.params:,})")
        if (self.experts > 0) != (self.experts_per_token > 0) or self.experts_per_token > self.experts:
            raise ValueError(
                "a mixture of experts gives experts and experts_per_token (at most experts); a dense model neither"
            )
        if self.experts and not self.expert_params:
            raise ValueError("a mixture of experts gives expert_params (the parameters in all routed experts)")
        return self


class ModelAlias(Strict):
    """Another name of a preset (a benchmark's, a fine-tune's): `model` is the preset it stands for."""

    model: str
    note: str = Field(min_length=1)


class Source(Strict):
    """Where figures were read. `kind` grades it (catalog/README.md, "Sources"): primary = vendor
    document, price catalog, filing, official statistics; secondary = trade press, analyst data;
    tertiary = aggregator, forum, a page that merely mentions the figure; derived / assumption for
    our own arithmetic and assumptions. `form` keeps the finer description (vendor_copy, ...)."""

    url: str
    title: str | None = None
    kind: Literal["primary", "secondary", "tertiary", "derived", "assumption"]
    form: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_kind(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") in LEGACY_KINDS:
            data = {**data, "kind": LEGACY_KINDS[data["kind"]], "form": data.get("form") or data["kind"]}
        return data


class Assumption(Figure):
    """An operating assumption (electricity price, PUE, hosting rate) a workload may override."""

    as_of: str | None = None
    unit: str

    _v = field_validator("as_of")(check_date)


class Server(Strict):
    """What surrounds purchased GPUs: a workstation, a PCIe server, an HGX (SXM) or OAM platform.

    `purchase` is the price WITHOUT GPUs (the GPUs are priced in gpus.yaml); a GPU is bought as a
    usable unit only together with a server that takes it (`Catalog.servers_for`). `gpu_cooling`
    lists the cooling its cards may have (null: any). `gpu_slots` is
    how many GPUs one server holds; `compatible_gpus` lists the GPU ids it takes (null: any GPU of
    `gpu_form_factor`). `power_overhead_w` is the non-GPU draw of one server at full load;
    `network_usd_per_server` and `network_gbps_per_server` (GB/s, total bidirectional, like every
    bandwidth in the catalog) are the scale-out network each server needs when a job spans servers.
    """

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9.]+)*$")
    name: str
    kind: Literal["workstation", "pcie-server", "hgx", "oam-platform"]
    gpu_form_factor: Literal["pcie", "sxm", "oam"]
    gpu_slots: int = Field(gt=0)
    gpu_cooling: list[Literal["passive", "active", "liquid"]] | None = None
    compatible_gpus: list[str] | None = None
    contexts: list[Literal["office", "datacenter"]] = Field(min_length=1)
    purchase: Purchase
    other_purchases: list[Purchase] = []
    lead_time: LeadTimeFigure | None = (
        None  # order to delivery; required with a purchase price (days: null = unknown, said)
    )
    power_overhead_w: Figure
    network_usd_per_server: Figure
    network_gbps_per_server: Figure
    note: str | None = None

    @field_validator("power_overhead_w", "network_usd_per_server", "network_gbps_per_server")
    @classmethod
    def _not_negative(cls, fig: Figure) -> Figure:
        if fig.value is not None and fig.value < 0:
            raise ValueError(f"must not be negative, got {fig.value:g}")
        return fig

    @property
    def sources_network(self) -> bool:
        """Whether the catalog sources any scale-out network for it (its price or its bandwidth): one
        with neither (the workstation) is not joined to others for a job that spans servers, since
        pricing and timing it with another server's network would invent the figure."""
        return self.network_usd_per_server.value is not None or self.network_gbps_per_server.value is not None

    def takes(self, gpu: GPU) -> bool:
        """Whether this server holds `gpu`: its form factor, the compatibility list when given, and
        the cooling the server is built for when given (a workstation: active cards only; a card
        whose cooling no datasheet states goes into no server that names its cooling)."""
        if gpu.form_factor != self.gpu_form_factor:
            return False
        if self.gpu_cooling is not None and (gpu.cooling is None or gpu.cooling.value not in self.gpu_cooling):
            return False
        return self.compatible_gpus is None or gpu.id in self.compatible_gpus
