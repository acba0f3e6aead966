"""The cluster's bill of materials beyond GPUs and servers: the scale-out fabric (NICs, leaf and
spine switches, optics) scaling with the node count, storage per TB, racks under the air-cooling
limit per rack, and colocation per kW-month. Every line cites its source or says it is unknown.

Fabric: catalog/economics.yaml sizes a 1,024-GPU non-blocking NDR fat-tree at 48 switches (32
leaves + 16 spines of 64 ports) costing $0.55-0.75M, plus $1.2-1.6M of optics. No unit price is
sourced for a NIC or a transceiver, so switches and optics are costed from those bands' midpoints
per GPU (low confidence, said so), and NICs are listed but not costed. No sourced RoCE price
exists, so the RoCE alternative is named, not priced."""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from advisor.data.economics import EconFigure, Economics

FABRIC_GPUS = 1024.0
SWITCH_RADIX = 64
NORTH_AMERICA = frozenset({"US", "CA", "MX"})


def line(item: str, quantity: float, unit_usd: float | None, source: Iterable[str], confidence: str,
         note: str = "") -> dict[str, Any]:
    total = None if unit_usd is None else quantity * unit_usd
    return {"item": item, "quantity": quantity, "unit_usd": unit_usd, "total_usd": total,
            "source": list(source), "confidence": confidence, "note": note}


@dataclass(frozen=True)
class Fabric:
    """Fabric cost per GPU from the sourced 1,024-GPU bands (midpoint, and the band's ends)."""

    switches_per_gpu: float
    optics_per_gpu: float
    low_per_gpu: float
    high_per_gpu: float
    switches_per_1024: float
    source: tuple

    @property
    def per_gpu(self) -> float:
        return self.switches_per_gpu + self.optics_per_gpu


def _band(fig: EconFigure) -> tuple[float, float, float]:
    """(low, middle, high) of a figure known as a value or a band."""
    low = fig.low if fig.low is not None else (fig.value or 0.0)
    high = fig.high if fig.high is not None else (fig.value if fig.value is not None else low)
    return low, (fig.value if fig.value is not None else (low + high) / 2), high


def fabric(econ: Economics | None) -> Fabric | None:
    net = econ.network if econ else {}
    sw, op = net.get("fabric_switches_usd_per_1024_gpus"), net.get("fabric_optics_usd_per_1024_gpus")
    count = net.get("leaf_spine_switches_per_1024_gpus")
    if sw is None or op is None or sw.low is None or op.low is None:
        return None
    (s_lo, s_mid, s_hi), (o_lo, o_mid, o_hi) = _band(sw), _band(op)
    return Fabric(s_mid / FABRIC_GPUS, o_mid / FABRIC_GPUS, (s_lo + o_lo) / FABRIC_GPUS,
                  (s_hi + o_hi) / FABRIC_GPUS, count.value if count and count.value else 48.0,
                  tuple(dict.fromkeys(sw.source + op.source)))


def switch_count(gpus: int) -> tuple[int, int]:
    """(leaves, spines) of a non-blocking two-tier fat-tree of 64-port switches, one port per GPU:
    one switch up to 64 GPUs; else a leaf per 32 GPUs (32 ports down, 32 up) and half as many spines
    (1,024 GPUs: 32 + 16 = 48, the catalog's sizing rule)."""
    if gpus <= SWITCH_RADIX:
        return 1, 0
    leaves = math.ceil(gpus / (SWITCH_RADIX // 2))
    return leaves, math.ceil(leaves / 2)


def fabric_lines(gpus: int, nodes: int, node_gpus: int, econ: Economics | None) -> list[dict]:
    """NICs, switches and optics for `gpus` GPUs on `nodes` networked nodes."""
    f = fabric(econ)
    if f is None or econ is None or nodes <= 1:
        return []
    net = econ.network
    nic = net.get("nics_per_8gpu_node")
    per_node = (nic.value if nic and nic.value else 8) * node_gpus / 8
    leaves, spines = switch_count(gpus)
    switch_unit = f.switches_per_gpu * FABRIC_GPUS / f.switches_per_1024
    unit_fig = net.get("ib_ndr_switch_64port_usd")
    cross = f" (a single 64-port NDR switch lists at ${unit_fig.value:,.0f}-{unit_fig.high:,.0f})" if unit_fig else ""
    return [
        line("NICs (400 Gb/s, one per GPU)", nodes * per_node, None, nic.source if nic else (), "low",
             _nic_note(net)),
        line(f"InfiniBand NDR switches ({leaves} leaf + {spines} spine)", leaves + spines, switch_unit, f.source, "low",
             f"the 1,024-GPU fat-tree band's midpoint per switch{cross}; a 400G Ethernet/RoCEv2 fabric is said "
             "to be cheaper but no sourced price exists"),
        line("optics and cables for the fabric", gpus, f.optics_per_gpu, f.source, "low",
             "the 1,024-GPU optics band's midpoint per GPU (no per-transceiver price was found)"),
    ]


def _nic_note(net: dict[str, EconFigure]) -> str:
    price = net.get("nic_usd")
    each = (f" ({price.low:,.0f}-{price.high:,.0f} USD each, economics.yaml network.nic_usd)"
            if price is not None and price.low is not None and price.high is not None else "")
    return ("listed, not in this plan's total: server prices derived from complete systems may include them" + each)


def storage_line(tb: float | None, horizon_years: float, econ: Economics | None) -> dict | None:
    """All-flash storage over the horizon: the sourced 10-year $/TB TCO, prorated by the horizon."""
    fig = econ.storage.get("all_flash_usd_per_tb_10y") if econ else None
    if not tb or fig is None or fig.value is None:
        return None
    return line(f"all-flash storage, {tb:g} TB over {horizon_years:g} years", tb, fig.value * horizon_years / 10.0,
                fig.source, fig.confidence, "10-year hardware + power + space TCO per TB (a vendor's paper), "
                "prorated by the horizon; the same for every plan, so not part of total_cost_usd")


def racks(node_kw: float, nodes: int, econ: Economics | None) -> tuple[dict | None, str | None]:
    """Racks needed under the air-cooled kW-per-rack limit, and a warning when one node exceeds it."""
    fig = econ.power_and_cooling.get("air_cooled_kw_per_rack_limit") if econ else None
    if fig is None or fig.value is None or nodes <= 0 or node_kw <= 0:
        return None, None
    per_rack = math.floor(fig.value / node_kw)
    if per_rack < 1:
        return None, (f"one server draws {node_kw:.1f} kW, above the {fig.value:g} kW an air-cooled rack carries: "
                      "plan a high-density or liquid-cooled rack")
    count = math.ceil(nodes / per_rack)
    return line(f"racks ({per_rack} server(s) of {node_kw:.1f} kW per {fig.value:g} kW air-cooled rack)", count, None,
                fig.source, fig.confidence, "space is priced in the colocation rate per kW, not per rack"), None


def colocation(econ: Economics | None, region: str) -> EconFigure | None:
    """The datacenter hosting rate: North American primary markets for US/CA/MX, else global."""
    if econ is None:
        return None
    rates = econ.colocation_usd_per_kw_month
    key = "north_america" if region in NORTH_AMERICA else "global"
    fig = rates.get(key) or rates.get("north_america")
    return fig if fig is not None and fig.value is not None else None
