"""Physical ranges of catalog figures and limits on the sizes that drive work, so that a
`--catalog` override can neither crash a plan (a null PUE, a zero bandwidth) nor run unbounded
(a thousand GPU types). Each range is wide -- far beyond any part shipped -- but finite, and an
error states it. docs/limits.md lists them all."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from advisor.errors import InputError
from advisor.inputs.quantities import MIN_POWER_W, PURCHASE_USD_RANGE

if TYPE_CHECKING:
    from advisor.inputs.workload import Workload

# figure -> (lowest, highest, unit); the built-in catalog sits well inside every range
GPU_RANGES = {
    "memory_gb": (1.0, 10_000.0, "GB"),
    "memory_bandwidth_gbps": (1.0, 100_000.0, "GB/s (1 GB/s to 100 TB/s)"),
    "fp32_tflops": (0.01, 100_000.0, "TFLOPs"),
    "tdp_w": (MIN_POWER_W, 20_000.0, "W"),  # a workload's power limit has the same floor
    "die_area_mm2": (1.0, 100_000.0, "mm²"),
    "tpp": (0.001, 10_000_000.0, "TPP"),
    "performance_density": (0.0001, 100_000.0, "TPP/mm²"),
}
TENSOR_RANGE = (0.01, 1_000_000.0, "TFLOPs")
INTERCONNECT_RANGES = {
    "link_gbps": (0.1, 100_000.0, "GB/s"),
    "link_domain": (1.0, 100_000.0, "GPUs"),
    "pcie_gbps": (0.1, 10_000.0, "GB/s"),
}
SERVER_RANGES = {
    "power_overhead_w": (0.0, 1_000_000.0, "W"),
    "network_usd_per_server": (0.0, 10_000_000.0, "USD"),
    "network_gbps_per_server": (0.0, 100_000.0, "GB/s"),
}
PURCHASE_USD = (*PURCHASE_USD_RANGE, "USD")  # one GPU, or one server without its GPUs
RENT_USD_PER_HOUR = (0.001, 10_000.0, "USD per GPU-hour")
SERVER_SLOTS = (1, 1024, "GPUs")
# operating assumptions, by their unit; every assumption is used by the cost model, so none is null
ASSUMPTION_RANGES = {
    "ratio": (1.0, 3.0, "(a PUE)"),
    "USD/kWh": (0.0, 5.0, "USD/kWh"),
    "USD/kW-month": (0.0, 10_000.0, "USD/kW-month"),
}
MODEL_RANGES = {
    "params": (1, 10**14),
    "layers": (1, 1000),
    "hidden": (1, 200_000),
    "heads": (1, 2048),
    "kv_heads": (1, 2048),
    "ffn": (1, 1_000_000),
    "vocab": (1, 10_000_000),
    "seq_len": (1, 10_000_000),
    "head_dim": (1, 65_536),
    "max_context": (1, 100_000_000),
    "active_params": (1, 10**14),
    "experts": (0, 100_000),
    "experts_per_token": (0, 100_000),
    "expert_params": (0, 10**14),
    "kv_elements": (1, 10_000_000),
}

# sizes that drive work: candidates, MILP columns and the explanations' re-solves grow with them
MAX_GPU_TYPES = 120  # the built-in catalog holds 28; planning time grows about quadratically
MAX_SERVERS = 200
MAX_MODELS = 1000
MAX_SOURCES = 5000
MAX_RULES = 500  # the built-in rules number a few dozen
# distinct jobs x GPU types considered: each pair costs at least one layout search before any candidate
# exists; the built-in catalog gives ~7 candidate configurations a pair, so past this many pairs a plan
# would reach solve/candidates.py's MAX_CANDIDATES only after a minute of estimating
MAX_JOB_GPU_PAIRS = 25_000
# runs in one `advisor calibrate` file: its leave-one-out error refits once per run, so its time grows as the
# square of the runs (400 runs: 34 s of CPU); five times the 110 steady-state runs of catalog/calibration.csv
MAX_RUNS = 500


def num(x: float) -> str:
    """10000000 -> '10,000,000', 0.001 -> '0.001' (never 1e+07)."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,g}"


def _range_text(lo: float, hi: float, unit: str) -> str:
    return f"between {num(lo)} and {num(hi)} {unit}".rstrip()


def _check(value: float | None, bounds: tuple[float, float, str], where: str, name: str) -> None:
    lo, hi, unit = bounds
    if value is not None and not lo <= value <= hi:
        raise InputError(
            f"{name}: {where} is {value:g}, outside the physical range this tool accepts: it must be "
            f"{_range_text(lo, hi, unit)} (or null with a note when unknown)",
            file=name,
            field=where,
        )


def check_sizes(raw: dict, name: str) -> None:
    """Refuse a catalog whose sections exceed the documented limits (before any validation)."""
    for key, limit in (
        ("gpus", MAX_GPU_TYPES),
        ("servers", MAX_SERVERS),
        ("models", MAX_MODELS),
        ("sources", MAX_SOURCES),
    ):
        if len(raw.get(key) or {}) > limit:
            raise InputError(
                f"{name}: the catalog would hold {len(raw[key]):,} {key}; the limit is {limit:,} "
                f"(planning time grows with it; see docs/limits.md). Keep only the {key} you "
                "mean to compare, or narrow a plan with gpus.allow.",
                file=name,
                field=key,
            )


def check_catalog(sections: dict, name: str) -> None:
    """Every figure of every GPU, server, assumption and model preset within its physical range."""
    for gid, g in sorted(sections["gpus"].items()):
        for fld, bounds in GPU_RANGES.items():
            _check(getattr(g, fld).value, bounds, f"gpus[{gid}].{fld}.value", name)
        for prec, fig in sorted(g.tensor_tflops.items()):
            _check(fig.value, TENSOR_RANGE, f"gpus[{gid}].tensor_tflops.{prec}.value", name)
        for fld, bounds in INTERCONNECT_RANGES.items():
            _check(getattr(g.interconnect, fld).value, bounds, f"gpus[{gid}].interconnect.{fld}.value", name)
        if g.prices.purchase is not None:
            _check(g.prices.purchase.usd, PURCHASE_USD, f"gpus[{gid}].prices.purchase.usd", name)
        for i, other in enumerate(getattr(g.prices, "other_purchases", [])):
            _check(other.usd, PURCHASE_USD, f"gpus[{gid}].prices.other_purchases[{i}].usd", name)
        for i, offer in enumerate(g.prices.rent):
            _check(offer.usd_per_gpu_hour, RENT_USD_PER_HOUR, f"gpus[{gid}].prices.rent[{i}].usd_per_gpu_hour", name)
    for sid, s in sorted(sections["servers"].items()):
        for fld, bounds in SERVER_RANGES.items():
            _check(getattr(s, fld).value, bounds, f"servers[{sid}].{fld}.value", name)
        _check(s.purchase.usd, PURCHASE_USD, f"servers[{sid}].purchase.usd", name)
        _check(s.gpu_slots, SERVER_SLOTS, f"servers[{sid}].gpu_slots", name)
    for key, a in sorted(sections["assumptions"].items()):
        where = f"assumptions[{key}].value"
        if a.value is None:
            raise InputError(
                f"{name}: {where} is null; the cost model uses every assumption, so it needs a number "
                f"({_range_text(*ASSUMPTION_RANGES.get(a.unit, (0.0, 1e9, a.unit)))})",
                file=name,
                field=where,
            )
        _check(a.value, ASSUMPTION_RANGES.get(a.unit, (0.0, 1e9, a.unit)), where, name)
    for mid, m in sorted(sections["models"].items()):
        for fld, (lo, hi) in MODEL_RANGES.items():
            _check(getattr(m, fld), (lo, hi, ""), f"models[{mid}].{fld}", name)


def distinct_jobs(workload: Workload) -> int:
    """Jobs that differ in more than their name and repeat count (the planner makes one class of
    identical jobs, however many there are)."""
    return len({job.model_dump_json(exclude={"name", "repeat"}) for job in workload.jobs})


def gpu_types_considered(workload: Workload, gpu_ids: Iterable[str]) -> int:
    """The GPU types a plan weighs: gpus.allow (those in the catalog) or the catalog's, less gpus.deny."""
    known = set(gpu_ids)
    allow = workload.gpus.allow
    ids = {g for g in allow if g in known} if allow is not None else known
    return len(ids - set(workload.gpus.deny))


def check_workload_size(workload: Workload, gpu_ids: Iterable[str]) -> None:
    """Refuse, before any estimating, a workload whose distinct jobs x GPU types exceed MAX_JOB_GPU_PAIRS.
    Its jobs are told apart only when there are enough of them to exceed it (telling them apart builds
    pydantic's serializer for a job: ~3 ms of a cold `advisor plan`)."""
    types = gpu_types_considered(workload, gpu_ids)
    if len(workload.jobs) * types <= MAX_JOB_GPU_PAIRS:
        return  # distinct jobs are at most the jobs written
    jobs = distinct_jobs(workload)
    if jobs * types > MAX_JOB_GPU_PAIRS:
        raise InputError(
            f"jobs: the workload has {jobs:,} distinct jobs x {types:,} GPU types = {jobs * types:,} "
            f"(job, GPU) pairs to estimate; the limit is {MAX_JOB_GPU_PAIRS:,} (see docs/limits.md). "
            "Narrow it with gpus.allow, or give identical jobs as one job with repeat:",
            field="jobs",
        )
