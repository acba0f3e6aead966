"""Serving a model on GPUs of one type at a request class and SLO: the serving model's view of a
catalog GPU (`hardware`), and `replica_rate`, what the optimizer calls per (model, GPU, TP,
precision, request class, SLO): requests/s one replica sustains and the GPUs it takes; `best_layout`
of `count` GPUs. The whole estimate `advisor estimate --kind serve` prints is
advisor/perf/serving_estimate.py; the math is in advisor/perf/serve.py and kv.py.
"""

from __future__ import annotations

import math
from dataclasses import fields
from functools import lru_cache

from advisor.data.catalog import GPU, Catalog, load_catalog
from advisor.data.estimator import Params
from advisor.errors import InputError
from advisor.inputs.loader import load_yaml_file
from advisor.perf.estimate import params_from
from advisor.perf.kv import ServeModel, check_precision, load_model
from advisor.perf.power_limit import power_limited_shares
from advisor.perf.serve import Hardware, ServeParams, Setup
from advisor.perf.serve_capacity import ReplicaResult, replica_capacity
from advisor.perf.serving_measured import calibrated_gpus
from advisor.perf.training import achievable_fraction, generation, gpu_value

TP_SIZES = (1, 2, 4, 8, 16, 32, 64)
# Catalog memory sizes are the vendors' "GB", which for HBM and GDDR parts are binary: an "80 GB" H100
# shows 81,559 MiB in nvidia-smi. The serving model counts bytes in 1e9, so it converts.
GIB = 1.073741824


@lru_cache(maxsize=4)
def load_params(path: str | None = None) -> ServeParams:
    """Parameters from catalog/serving_estimator.yaml (or `path`)."""
    from advisor.data.resources import data_dir

    doc = load_yaml_file(path or data_dir("catalog") / "serving_estimator.yaml", "catalog file") or {}
    values = dict(doc.get("serving_estimator") or {})
    names = {f.name for f in fields(ServeParams)} - {"notes"}
    missing = names - set(values)
    unknown = set(values) - names
    if missing or unknown:
        raise InputError(
            f"serving_estimator.yaml: missing {sorted(missing)}, unknown {sorted(unknown)}", field="serving_estimator"
        )
    return ServeParams(**values)


def matmul_fraction(gpu: GPU, estimator: Params) -> dict[str, float]:
    """{precision: MAMF share} for a catalog GPU: the training estimator's achievable fraction
    (measured best GEMM rate / dense peak, stas00's MAMF tables) with the parameters of the catalog in
    use. fp4 takes the fp8 share (no fp4 MAMF is published)."""
    row = {q: achievable_fraction(gpu, q, estimator) for q in ("bf16", "fp16", "fp8")}
    row["fp4"] = row["fp8"]
    return row


def memory_bytes_gb(gpu_id: str, memory_gb: float) -> float:
    """Memory CUDA can allocate, in 1e9 bytes: the measured nvidia-smi total where the serving
    parameters list one (GDDR6 datacenter cards keep in-band ECC on and lose 1/16: an L40S shows
    46,068 of 49,152 MiB), else the catalog's binary GB."""
    mib = load_params().visible_memory_mib.get(gpu_id)
    return float(mib) * 2**20 / 1e9 if mib else memory_gb * GIB


def hardware(gpu: GPU, catalog: Catalog | None = None) -> Hardware:
    """The serving model's view of a catalog GPU (advisor.catalog.GPU): figures, never guesses; its
    GEMM rate share from the estimator parameters of `catalog` (None: the built-in catalog)."""
    ic = gpu.interconnect
    tflops = {k: f.value for k, f in gpu.tensor_tflops.items() if f.value}
    notes = {k: f.note for k, f in gpu.tensor_tflops.items() if not f.value and f.note}
    cat = catalog if catalog is not None else load_catalog()
    est = params_from(cat)
    fitted = {generation(cat.gpus[g]) for g in calibrated_gpus() if g in cat.gpus}
    return Hardware(
        name=gpu.id,
        memory_gb=memory_bytes_gb(gpu.id, gpu.memory_gb.value or 0.0),
        bandwidth_gbps=gpu.memory_bandwidth_gbps.value or 0.0,
        tflops=tflops,
        link_gbps=(ic.link_gbps.value or 0.0) if ic.link != "none" else 0.0,
        link_domain=int(ic.link_domain.value or 1),
        pcie_gbps=ic.pcie_gbps.value or 32.0,
        p2p=bool(ic.p2p.value) if ic.p2p.value is not None else True,
        vendor=gpu.vendor,
        matmul_fraction=power_limited_shares(gpu, matmul_fraction(gpu, est), cat, est, load_params()),
        rate_notes=notes,
        generation=generation(gpu),
        evidence="same_generation" if generation(gpu) in fitted else "datasheet",
        link_efficiency=float(gpu_value(est.link_efficiency, gpu)),
        memory_read_share=memory_read_share(gpu.id, load_params()),
    )


def memory_read_share(gpu_id: str, params: ServeParams) -> float:
    """A pure streaming read's measured share of the part's datasheet bandwidth (catalog/serving_estimator.yaml
    `memory_read_share`, each with its source there); a part without one takes the `default`."""
    shares = params.memory_read_share
    return float(shares.get(gpu_id, shares.get("default", 1.0)))


def default_engine(hw: Hardware, params: ServeParams) -> str:
    vendor = hw.vendor.lower()
    for key, engine in params.default_engine.items():
        if key != "default" and key in vendor:
            return engine
    return params.default_engine.get("default", "vllm")


def as_serve_model(model: str | ServeModel) -> ServeModel:
    """A serving model given as itself or as a preset's name."""
    return model if isinstance(model, ServeModel) else load_model(model)


def check_lengths(input_len: float, output_len: float, model: ServeModel) -> None:
    """A request's prompt and output tokens: whole, at least 1, within the model's context window."""
    for name, v in (("input_len", input_len), ("output_len", output_len)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 1:
            raise InputError(f"{name}: must be a whole number of tokens of at least 1 (given {v!r})", field=name)
    if model.max_context and input_len + output_len > model.max_context:
        raise InputError(
            f"input_len + output_len = {input_len + output_len:g} exceeds {model.name}'s context "
            f"window of {model.max_context} tokens",
            field="input_len",
        )


def replica_rate(
    model: str | ServeModel,
    hw: Hardware,
    tp: int,
    precision: str,
    input_len: float,
    output_len: float,
    ttft_ms: float | None = None,
    tpot_ms: float | None = None,
    percentile: float = 99,
    pp: int = 1,
    engine: str | None = None,
    params: ServeParams | None = None,
    max_batch: int | None = None,
) -> ReplicaResult | None:
    """For the optimizer: requests/s one replica of tp x pp GPUs sustains under the SLO (`.requests_per_s`,
    `.gpus`), or None when the model does not fit or the GPU has no rate for the precision."""
    params = params or load_params()
    m = as_serve_model(model)
    check_precision(precision)
    setup = Setup(m, hw, precision, tp, pp, engine or default_engine(hw, params), params, (input_len, output_len))
    return replica_capacity(setup, input_len, output_len, ttft_ms, tpot_ms, percentile, max_batch)


def best_layout(
    model: ServeModel,
    hw: Hardware,
    count: int,
    precision: str,
    input_len: float,
    output_len: float,
    ttft_ms: float | None = None,
    tpot_ms: float | None = None,
    percentile: float = 99,
    tensor_parallel: int | None = None,
    engine: str | None = None,
    params: ServeParams | None = None,
    max_batch: int | None = None,
) -> ReplicaResult | None:
    """The tensor-parallel size (and pipeline depth, only when no TP alone fits) that gives `count` GPUs
    the highest total rate; ties go to the smaller TP. None when nothing fits."""
    params = params or load_params()
    tps = [tensor_parallel] if tensor_parallel else [t for t in TP_SIZES if t <= count]
    best: tuple[float, ReplicaResult] | None = None
    for pp in (1, 2, 4, 8):
        for tp in tps:
            if tp * pp > count or (pp > 1 and tp < min(count // pp, hw.link_domain or 1, 8)):
                continue
            r = replica_rate(
                model,
                hw,
                tp,
                precision,
                input_len,
                output_len,
                ttft_ms,
                tpot_ms,
                percentile,
                pp,
                engine,
                params,
                max_batch,
            )
            if r is None:
                continue
            total = (count // r.gpus) * r.requests_per_s
            if best is None or total > best[0] * 1.0001:
                best = (total, r)
        if best is not None:
            break
    return best[1] if best else None
