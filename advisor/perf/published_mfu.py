"""The published MFUs a GPU is held to: the best (`mfu_cap`, the upper end of every estimate) and the
median (`mfu_median`, the base case where today's kernels are credited) of its generation's runs
(catalog/estimator.yaml), scaled from the GPU the runs ran on to this one by their measured GEMM
shares (`run_scale`)."""

from __future__ import annotations

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.perf.training import achievable_fraction, by_precision, gpu_value, server_size


def run_scale(gpu: GPU, precision: str, p: Params) -> float:
    """A generation's published MFUs (`mfu_cap`, `mfu_median`) were measured on one of its GPUs
    (`mfu_measured_on`); a sibling whose best GEMM reaches another share of its peak (MAMF,
    `architecture_efficiency`) reaches them in that ratio: Gaudi 3's bf16 GEMMs reach 67.7% of its
    peak where the Gaudi 2 that ran the runs reaches 96.9%."""
    ref = gpu_value(p.mfu_measured_on or {}, gpu)
    if not isinstance(ref, str) or ref == gpu.id:
        return 1.0
    table = p.architecture_efficiency
    measured = by_precision(table.get(ref, table.get("default")), precision)
    return achievable_fraction(gpu, precision, p) / measured if measured else 1.0


def published_mfu(table: dict | None, gpu: GPU, precision: str, p: Params, count: int = 1) -> float | None:
    """A published MFU of the GPU's generation at `precision` from `table` (catalog/estimator.yaml
    `mfu_cap` or `mfu_median`), scaled to this GPU's GEMM share (`run_scale`): a job spanning servers
    takes the multi-server runs (`<precision>_multiserver`) when the table has them; None when it has
    nothing at this precision."""
    if not table:
        return None
    entry = gpu_value(table, gpu)
    if isinstance(entry, dict) and count > server_size(gpu, p) and f"{precision}_multiserver" in entry:
        return float(entry[f"{precision}_multiserver"]) * run_scale(gpu, precision, p)
    value = by_precision(entry, precision)
    return None if value is None else value * run_scale(gpu, precision, p)


def mfu_cap(gpu: GPU, precision: str, p: Params, count: int = 1) -> float | None:
    """The best published MFU for the GPU's generation at `precision` (`published_mfu` of `mfu_cap`,
    each with its source); predictions never exceed it. With no run at this precision, another
    precision's cap scaled by how much of its own peak the GPU's best GEMM reaches at each (fp8 0.709
    vs bf16 0.803 on an H100)."""
    entry = gpu_value(p.mfu_cap or {}, gpu)
    spans = count > server_size(gpu, p) and f"{precision}_multiserver" in (entry if isinstance(entry, dict) else {})
    if isinstance(entry, dict) and precision not in entry and not spans:
        other = "bf16" if "bf16" in entry else "fp8" if "fp8" in entry else None
        if other is not None:
            ratio = achievable_fraction(gpu, precision, p) / achievable_fraction(gpu, other, p)
            cap = published_mfu(p.mfu_cap, gpu, other, p, count)
            return None if cap is None else cap * ratio
    return published_mfu(p.mfu_cap, gpu, precision, p, count)


def mfu_median(gpu: GPU, precision: str, p: Params, count: int = 1) -> float | None:
    """The median published MFU of the GPU's generation at `precision` (catalog/estimator.yaml
    `mfu_median`, through published_mfu)."""
    return published_mfu(p.mfu_median, gpu, precision, p, count)
