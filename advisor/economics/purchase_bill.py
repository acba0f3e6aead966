"""The costs of a purchase beyond its GPUs and servers: NICs and the fabric by cluster size,
storage by model size and token count, support contracts, sales tax or VAT by region and burn-in,
each sourced, as LINEAR per-unit coefficients a MILP multiplies by its variables (per bought GPU,
per networked GPU in a scale band, per dollar of hardware). The plan's bill of materials, line by
line, is solve/ledger.py's `bill_of_materials`."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.data.catalog import Catalog
from advisor.data.economics import EconFigure, Economics, NetworkBand
from advisor.economics import bom
from advisor.economics.costs import Costs

TB = 1e12


@dataclass(frozen=True)
class Coefficient:
    """USD per unit (`per` says of what; None: unknown, with the note), when it is paid, and what it
    rests on."""

    usd: float | None
    per: str
    when: str
    confidence: str
    source: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class TaxCoefficients:
    """Tax on each dollar of bought hardware in a region: `paid_rate` leaves at purchase;
    `cost_rate` (and `cash_rate`, what a budget counts) is 0 where a registered business reclaims
    it as input tax (VAT, GST), the paid rate where it cannot (US sales tax)."""

    region: str
    kind: str | None
    paid_rate: float | None
    cost_rate: float | None
    recoverable: bool | None
    confidence: str
    source: tuple[str, ...]
    note: str

    @property
    def cash_rate(self) -> float | None:
        return self.cost_rate


@dataclass(frozen=True)
class BoughtGpuCoefficients:
    """Per bought GPU, beyond its price and server: support per dollar of hardware per month, tax
    per dollar of hardware, the burn-in's energy per GPU and the days it delays the start."""

    support: Coefficient
    tax: TaxCoefficients
    burn_in_energy: Coefficient
    burn_in_days: float


@dataclass(frozen=True)
class StorageNeed:
    """Training storage: the dataset once plus the checkpoints kept, in TB, and its price."""

    tb: float
    dataset_tb: float
    checkpoint_tb: float
    usd: float | None
    confidence: str
    source: tuple[str, ...]
    note: str


def _figure(section: dict[str, EconFigure] | None, key: str) -> EconFigure | None:
    fig = (section or {}).get(key)
    return fig if fig is not None and fig.value is not None else None


def _worst(*grades: str) -> str:
    return min(grades, key=("low", "medium", "high").index) if grades else "low"


def network_band(econ: Economics, gpus: int) -> NetworkBand:
    """The scale band that holds a cluster of `gpus` networked GPUs."""
    return next(b for b in econ.network_bands if b.up_to_gpus is None or gpus <= b.up_to_gpus)


def network_share(econ: Economics, gbps_each_way: float) -> float:
    """The share of the priced network (`nic_gbps` per port, `nics_per_8gpu_node` ports per 8 GPUs)
    that `gbps_each_way` GB/s per GPU between servers is: a PCIe server's 200 Gb/s NIC for eight
    cards is 1/16 of a 400 Gb/s NIC per GPU, and is billed so. 1 when the port speed is unsourced."""
    port, per_node = _figure(econ.network, "nic_gbps"), _figure(econ.network, "nics_per_8gpu_node")
    if port is None:
        return 1.0
    priced = float(port.value or 0.0) * ((per_node.value or 8.0) / 8.0 if per_node else 1.0)
    return gbps_each_way * 8.0 / priced if priced else 1.0


def nic_per_gpu(econ: Economics, share: float = 1.0) -> Coefficient:
    """`share` of one 400 Gb/s NIC per networked GPU (the DGX reference ratio), bought up front."""
    nic, per_node = _figure(econ.network, "nic_usd"), _figure(econ.network, "nics_per_8gpu_node")
    ratio = ((per_node.value or 8.0) / 8.0 if per_node else 1.0) * share
    if nic is None:
        return Coefficient(None, "networked GPU", "upfront", "low", (), "no sourced NIC price")
    src = tuple(dict.fromkeys(nic.source + (per_node.source if per_node else [])))
    return Coefficient(
        float(nic.value or 0.0) * ratio,
        "networked GPU",
        "upfront",
        nic.confidence,
        src,
        f"{ratio:g} NIC per GPU at ${nic.value:,.0f} ({nic.note})",
    )


def network_lines(econ: Economics, gpus: int, share: float) -> list[dict]:
    """The NICs and the scale-out fabric of `gpus` networked GPUs, at `share` of the priced
    bandwidth (HardwareTerms.network_share: what the speed assumes)."""
    nic, band = nic_per_gpu(econ, share), network_band(econ, gpus)
    top = f"up to {band.up_to_gpus:,}" if band.up_to_gpus else "above the largest band's"
    port = (econ.network or {}).get("nic_gbps")
    what = "one per GPU" if share == 1.0 else f"{share:g} of one per GPU: the network the speed assumes"
    fabric_note = band.note if share == 1.0 else f"{share:g} x ${band.usd_per_gpu:,.0f} per GPU: {band.note}"
    label = f"NICs ({port.value:g} Gb/s, {what})" if port and port.value else f"NICs ({what})"
    return [
        bom.line(label, gpus, nic.usd, nic.source, nic.confidence, nic.note, kind="nic"),
        bom.line(
            f"scale-out fabric for {gpus:,} GPUs (switches, cables, optics; band {top} GPUs)",
            gpus,
            band.usd_per_gpu * share,
            band.source,
            band.confidence,
            fabric_note,
            kind="fabric",
        ),
    ]


TAX_NAMES = {"sales_tax": "sales tax", "vat": "VAT", "gst": "GST", "consumption_tax": "consumption tax"}  # as written


def tax_coefficients(econ: Economics, region: str, recoverable: bool | None = None) -> TaxCoefficients:
    """The region's tax on hardware; `recoverable` False says the buyer cannot reclaim a VAT/GST a
    registered business would (a university or bank often cannot). A region with no sourced rate is
    unknown, said."""
    t = econ.sales_tax.get(region.upper())
    if t is None:
        return TaxCoefficients(
            region,
            None,
            None,
            None,
            None,
            "low",
            (),
            f"no sourced sales tax or VAT rate for {region}: tax is not counted",
        )
    back = t.recoverable and recoverable is not False  # a buyer may be unable to reclaim; none reclaims a sales tax
    note = (
        f"{TAX_NAMES[t.kind]} {t.rate:.2%}"
        + (", reclaimed as input tax by a registered business: paid, not a cost" if back else ", not recoverable")
        + (f" ({t.note})" if t.note else "")
    )
    return TaxCoefficients(region, t.kind, t.rate, 0.0 if back else t.rate, back, t.confidence, tuple(t.source), note)


def bought_gpu_coefficients(
    catalog: Catalog,
    gpu_id: str,
    region: str,
    costs: Costs,
    server_overhead_kw_per_gpu: float = 0.0,
) -> BoughtGpuCoefficients:
    """The per-unit costs of one bought GPU beyond its price: support (per dollar of hardware per
    month), tax (per dollar of hardware), the burn-in soak's energy (per GPU, at the deployment's
    electricity and PUE) and the days it delays the first job."""
    econ = catalog.economics
    assert econ is not None, "the catalog has no economics section"
    sup = _figure(econ.support, "hardware_contract_fraction_per_year")
    support = (
        Coefficient(
            float(sup.value or 0.0) / 12.0,
            "USD of hardware per month",
            "per_month",
            sup.confidence,
            tuple(sup.source),
            f"{sup.value:.0%} of the hardware's price a year ({sup.note})",
        )
        if sup
        else Coefficient(None, "USD of hardware per month", "per_month", "low", (), "no sourced support rate")
    )
    burn = _figure(econ.burn_in, "hours")
    hours = float(burn.value or 0.0) if burn else 0.0
    kw = (catalog.gpu(gpu_id).tdp_w.value or 0.0) / 1000.0 + server_overhead_kw_per_gpu
    energy = hours * kw * costs.pue * costs.electricity_usd_per_kwh
    burn_note = (
        f"{hours:g} h at full load x {kw:.2f} kW x PUE {costs.pue:g} x ${costs.electricity_usd_per_kwh:g}/kWh"
        + (f" ({burn.note})" if burn else "")
    )
    return BoughtGpuCoefficients(
        support,
        tax_coefficients(econ, region, costs.tax_recoverable),
        Coefficient(
            energy,
            "bought GPU",
            "upfront",
            burn.confidence if burn else "low",
            tuple(burn.source) if burn else (),
            burn_note,
        ),
        hours / 24.0,
    )


@dataclass(frozen=True)
class HardwareTerms:
    """The linear terms of one bought GPU type beyond its price, as the MILP charges them:
    `tax_rate` on every hardware dollar (GPU, server, network, storage; 0 where reclaimed or
    unsourced), the burn-in's energy per GPU, support per hardware dollar per month held (on the
    GPU's price; a server's, whole, solve/server_terms.py), and the scale-out network
    per networked GPU by cluster size (its band's fabric plus the NIC)."""

    tax_rate: float
    burn_in_usd: float
    support_rate_month: float
    nic_usd: float | None
    bands: tuple[NetworkBand, ...]
    fallback_per_gpu: float | None = None  # a server's own network price per slot, when no band is sourced
    network_share: float = 1.0  # of the priced NIC and fabric per GPU: the bandwidth the speed assumes
    burn_in_usd_per_kw: float = 0.0  # the burn-in's energy per kW soaked (a server's own power: solve/server_terms.py)

    def network_usd(self, gpus: int) -> float | None:
        """The network joining `gpus` GPUs (whole servers), tax included; None: it cannot be costed."""
        if self.bands:
            band = next(b for b in self.bands if b.up_to_gpus is None or gpus <= b.up_to_gpus)
            per_gpu = band.usd_per_gpu * self.network_share + (self.nic_usd or 0.0)
        elif self.fallback_per_gpu is not None:
            per_gpu = self.fallback_per_gpu
        else:
            return None
        return gpus * per_gpu * (1.0 + self.tax_rate)


def hardware_terms(
    catalog: Catalog,
    gpu_id: str,
    region: str,
    costs: Costs,
    fallback_per_gpu: float | None,
    network_gbps: float | None = None,
) -> HardwareTerms:
    """HardwareTerms of one GPU type from the catalog's sourced economics (unknown figures count 0,
    and their bill lines say so); its NIC and fabric at the share of the priced network that
    `network_gbps` (GB/s per GPU each way, the bandwidth its speed assumes) is."""
    econ = catalog.economics
    if econ is None:
        return HardwareTerms(0.0, 0.0, 0.0, None, (), fallback_per_gpu)
    k = bought_gpu_coefficients(catalog, gpu_id, region, costs)
    share = network_share(econ, network_gbps) if network_gbps is not None else 1.0
    return HardwareTerms(  # burn-in's electricity and support are services: with their unreclaimed tax
        k.tax.cost_rate or 0.0,
        (k.burn_in_energy.usd or 0.0) * costs.services_taxed,
        (k.support.usd or 0.0) * costs.services_taxed,
        nic_per_gpu(econ, share).usd,
        tuple(econ.network_bands),
        fallback_per_gpu,
        share,
        k.burn_in_days * 24.0 * costs.pue * costs.electricity_usd_per_kwh * costs.services_taxed,
    )


def storage_need(econ: Economics, params: float, tokens: float) -> StorageNeed:
    """The default training storage for a model of `params` parameters on `tokens` tokens: the
    dataset once (bytes per token as stored) plus the checkpoints kept (bytes per parameter each),
    priced at the flash $/TB, bought up front."""
    st = econ.storage
    per_token, per_param = _figure(st, "dataset_bytes_per_token"), _figure(st, "checkpoint_bytes_per_param")
    kept, price = _figure(st, "checkpoints_kept"), _figure(st, "flash_usd_per_tb")
    figs = [f for f in (per_token, per_param, kept, price) if f is not None]
    dataset = tokens * float(per_token.value or 0.0) / TB if per_token else 0.0
    ckpt = (
        params * float(per_param.value or 0.0) * float(kept.value if kept and kept.value else 1.0) / TB
        if per_param
        else 0.0
    )
    tb = dataset + ckpt
    usd = tb * float(price.value or 0.0) if price else None
    note = (
        f"dataset {tokens:.3g} tokens x {per_token.value if per_token else '?'} B = {dataset:,.3g} TB; "
        f"{kept.value if kept else '?':g} checkpoint(s) of {params:.3g} parameters x "
        f"{per_param.value if per_param else '?'} B = {ckpt:,.3g} TB"
        + (f"; at ${price.value:g}/TB of flash" if price else "; no sourced $/TB")
    )
    return StorageNeed(
        tb,
        dataset,
        ckpt,
        usd,
        _worst(*(f.confidence for f in figs)),
        tuple(dict.fromkeys(s for f in figs for s in f.source)),
        note,
    )


__all__ = [
    "Coefficient",
    "TaxCoefficients",
    "BoughtGpuCoefficients",
    "StorageNeed",
    "HardwareTerms",
    "hardware_terms",
    "network_band",
    "nic_per_gpu",
    "network_share",
    "network_lines",
    "tax_coefficients",
    "bought_gpu_coefficients",
    "storage_need",
]
