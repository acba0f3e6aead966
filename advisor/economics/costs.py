"""Per-deployment cost rates (electricity, PUE, hosting per kW-month, the horizon), from the
catalog's sourced assumptions or the workload's own overrides."""
from __future__ import annotations

from dataclasses import dataclass

from advisor.data.catalog import Catalog
from advisor.inputs.workload import Workload

HOURS_PER_MONTH = 730.0   # 8,760 h / 12


@dataclass(frozen=True)
class Costs:
    """Per-deployment rates, from the catalog's assumptions or the workload's overrides."""

    electricity_usd_per_kwh: float
    pue: float
    hosting_usd_per_kw_month: float
    horizon_hours: float
    sources: tuple


def deployment_costs(workload: Workload, catalog: Catalog) -> Costs:
    d = workload.deployment
    site = d.site
    sources = []

    def pick(override, key):
        if override is not None:
            return override
        a = catalog.assumption(f"{key}_{site}")
        sources.extend(a.source)
        return a.value

    return Costs(
        electricity_usd_per_kwh=pick(d.electricity_usd_per_kwh, "electricity_usd_per_kwh"),
        pue=pick(d.pue, "pue"),
        hosting_usd_per_kw_month=pick(d.hosting_usd_per_kw_month, "hosting_usd_per_kw_month"),
        horizon_hours=d.horizon_months * HOURS_PER_MONTH,
        sources=tuple(sorted(set(sources))),
    )
