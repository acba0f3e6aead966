"""Bill-of-materials lines, racks under the air-cooling limit per rack, and colocation per kW-month:
what solve/ledger.py lists beside the lines it prices with economics/purchase_bill.py (tax, burn-in,
support, the network by cluster-size band and the NICs, storage). Every line cites its source or
says it is unknown."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from advisor.contract.costs import BomKind
from advisor.data.economics import EconFigure, Economics

NORTH_AMERICA = frozenset({"US", "CA", "MX"})


def line(
    item: str,
    quantity: float,
    unit_usd: float | None,
    source: Iterable[str],
    confidence: str,
    note: str = "",
    *,
    kind: BomKind,
) -> dict[str, Any]:
    """One bill line; a `tax` line's quantity is its dollar base and its unit the rate."""
    total = None if unit_usd is None else quantity * unit_usd
    return {
        "item": item,
        "kind": kind,
        "quantity": quantity,
        "unit_usd": unit_usd,
        "total_usd": total,
        "source": list(source),
        "confidence": confidence,
        "note": note,
    }


def racks(node_kw: float, nodes: int, econ: Economics | None) -> tuple[dict | None, str | None]:
    """Racks needed under the air-cooled kW-per-rack limit, and a warning when one node exceeds it."""
    fig = econ.power_and_cooling.get("air_cooled_kw_per_rack_limit") if econ else None
    if fig is None or fig.value is None or nodes <= 0 or node_kw <= 0:
        return None, None
    per_rack = math.floor(fig.value / node_kw)
    if per_rack < 1:
        return None, (
            f"one server draws {node_kw:.1f} kW, above the {fig.value:g} kW an air-cooled rack carries: "
            "plan a high-density or liquid-cooled rack"
        )
    count = math.ceil(nodes / per_rack)
    return line(
        f"{'a rack' if count == 1 else 'racks'} for {nodes} server{'s' if nodes != 1 else ''} of {node_kw:.1f} kW "
        f"(a {fig.value:g} kW air-cooled rack holds {per_rack})",
        count,
        None,
        fig.source,
        fig.confidence,
        "space is priced in the colocation rate per kW, not per rack",
        kind="racks",
    ), None


def colocation(econ: Economics | None, region: str) -> EconFigure | None:
    """The datacenter hosting rate: North American primary markets for US/CA/MX, else global."""
    if econ is None:
        return None
    rates = econ.colocation_usd_per_kw_month
    key = "north_america" if region in NORTH_AMERICA else "global"
    fig = rates.get(key) or rates.get("north_america")
    return fig if fig is not None and fig.value is not None else None
