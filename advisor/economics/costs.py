"""Per-deployment cost rates (electricity, PUE, hosting per kW-month, the horizon, the discount rate,
utilization), from the catalog's sourced assumptions and economics or the workload's overrides, and
the per-kW coefficients the optimizer charges owned hardware over the horizon (nominal and present
value)."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.data.catalog import Catalog
from advisor.economics.bom import colocation
from advisor.economics.ownership import finance_for
from advisor.inputs.units import HOURS_PER_MONTH, HOURS_PER_YEAR
from advisor.inputs.workload import Workload


@dataclass(frozen=True)
class Costs:
    """Per-deployment rates, from the catalog's assumptions or the workload's overrides."""

    electricity_usd_per_kwh: float
    pue: float
    hosting_usd_per_kw_month: float
    horizon_hours: float
    sources: tuple
    discount_rate: float = 0.0
    discount_source: str = ""
    utilization: float | None = None  # share of the horizon owned GPUs run (None: the jobs' own hours)
    useful_life_years: float = 5.0
    tax_recoverable: bool | None = None  # finance.tax_recoverable: None takes the region's rule
    services_tax_rate: float = 0.0  # a VAT/GST on rent, support, hosting and electricity the buyer cannot reclaim
    services_tax_source: tuple = ()
    services_tax_confidence: str = "low"

    @property
    def services_taxed(self) -> float:
        """Per dollar of rent, support, hosting or electricity, what the buyer pays with its tax."""
        return 1.0 + self.services_tax_rate

    @property
    def horizon_years(self) -> float:
        return self.horizon_hours / HOURS_PER_YEAR

    def job_energy_usd(self, gpu_hours: float, kw_per_gpu: float) -> float:
        """Nominal energy of one job on owned GPUs (0 when utilization charges energy per kW)."""
        if self.utilization is not None:
            return 0.0
        return gpu_hours * kw_per_gpu * self.pue * self.electricity_usd_per_kwh


def deployment_costs(workload: Workload, catalog: Catalog) -> Costs:
    d = workload.deployment
    site = d.site
    sources = []

    def pick(override: float | None, key: str) -> float:
        if override is not None:
            return override
        a = catalog.assumption(f"{key}_{site}")
        sources.extend(a.source)
        assert a.value is not None  # the catalog loader refuses a null assumption (data/bounds.py)
        return a.value

    if d.hosting_usd_per_kw_month is not None:
        hosting = d.hosting_usd_per_kw_month
    elif site == "datacenter" and (fig := colocation(catalog.economics, d.region)) is not None:
        hosting = float(fig.value or 0.0)  # economics.yaml's colocation rate: the one source of truth
        sources.extend(fig.source)
    else:
        hosting = pick(None, "hosting_usd_per_kw_month")
    fin = finance_for(workload, catalog)
    services_rate, services_source, services_confidence = services_tax(
        catalog, d.region, workload.finance.tax_recoverable
    )
    return Costs(
        electricity_usd_per_kwh=pick(d.electricity_usd_per_kwh, "electricity_usd_per_kwh"),
        pue=pick(d.pue, "pue"),
        hosting_usd_per_kw_month=hosting,
        horizon_hours=d.horizon_months * HOURS_PER_MONTH,
        sources=tuple(sorted(set(sources))),
        discount_rate=fin.discount_rate,
        discount_source=fin.discount_source,
        utilization=fin.utilization,
        useful_life_years=fin.useful_life_years,
        tax_recoverable=workload.finance.tax_recoverable,
        services_tax_rate=services_rate,
        services_tax_source=services_source,
        services_tax_confidence=services_confidence,
    )


def services_tax(catalog: Catalog, region: str, recoverable: bool | None) -> tuple[float, tuple, str]:
    """(rate, sources, confidence) of the tax on the services a plan pays (rent, support, hosting, electricity) as a
    cost: a VAT/GST's sourced services rate where the buyer cannot reclaim it (`recoverable` False, or a
    region whose VAT no one reclaims), else 0 -- a reclaimed VAT costs nothing, and a US sales tax is on
    goods (docs/model.md 2.4)."""
    t = catalog.economics.sales_tax.get(region.upper()) if catalog.economics is not None else None
    if t is None or t.kind == "sales_tax" or t.services_rate is None:
        return 0.0, (), "low"
    if t.recoverable and recoverable is not False:
        return 0.0, (), "low"
    return t.services_rate, tuple(t.services_source), t.confidence
