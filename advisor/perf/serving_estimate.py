"""The whole serving estimate `advisor estimate --kind serve` prints (docs/model.md, Serving): a
model on `count` GPUs of one type at a request class and SLO, as JSON (`serve_estimate`, from the
library's arguments `estimate_serving`), and the serving model of a workload's serving job with the
speeds the user measured (`serving_model`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from advisor.data.catalog import GPU, Catalog, load_catalog
from advisor.errors import InputError
from advisor.inputs.jobs import ServeJob
from advisor.perf.estimate import require_gpu
from advisor.perf.kv import Memory, ServeModel, check_precision, load_model, memory
from advisor.perf.precision import PrecisionPlan, plan_precision
from advisor.perf.serve import Hardware, ServeParams, Setup
from advisor.perf.serve_capacity import ReplicaResult
from advisor.perf.serving import (
    TP_SIZES,
    as_serve_model,
    best_layout,
    check_lengths,
    default_engine,
    hardware,
    load_params,
)
from advisor.perf.serving_measured import label, not_a_run, too_slow, transfer
from advisor.perf.training import generation


def _check_request(count: Any, tensor_parallel: int | None, ttft_ms: Any, tpot_ms: Any, percentile: float) -> None:
    """The GPU count, tensor-parallel size, latency limits and percentile of a serving estimate,
    checked before anything is computed."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise InputError(f"`count`: must be a whole number of GPUs of at least 1 (given {count!r})", field="count")
    if tensor_parallel is not None and (tensor_parallel not in TP_SIZES or tensor_parallel > count):
        raise InputError(
            f"`tensor_parallel`: must be one of {', '.join(map(str, TP_SIZES))} and at most count "
            f"({count}); given {tensor_parallel!r}",
            field="tensor_parallel",
        )
    for name, v in (("ttft_ms", ttft_ms), ("tpot_ms", tpot_ms)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1e9):
            raise InputError(
                f"`{name}`: a latency limit is a positive number of milliseconds (given {v!r})", field=name
            )
    if not 50 <= percentile < 100:
        raise InputError(f"`percentile`: must be at least 50 and below 100 (given {percentile!r})", field="percentile")


def serve_estimate(
    model: str | ServeModel,
    gpu: GPU | str | Hardware,
    count: int,
    precision: str,
    input_len: int,
    output_len: int,
    ttft_ms: float | None = None,
    tpot_ms: float | None = None,
    percentile: float = 99,
    tensor_parallel: int | None = None,
    catalog: Catalog | None = None,
    engine: str | None = None,
    max_batch: int | None = None,
    params: ServeParams | None = None,
) -> dict[str, Any]:
    """Serving a model on `count` GPUs (a catalog GPU, its id, or a `Hardware`): whole-system output
    tokens/s under the SLO when one is given, else the offline peak; JSON-able."""
    m, hw = _checked_request(
        model, gpu, count, precision, input_len, output_len, ttft_ms, tpot_ms, percentile, tensor_parallel, catalog
    )
    params = params or load_params()
    slo = ttft_ms is not None or tpot_ms is not None
    r = best_layout(
        m,
        hw,
        count,
        precision,
        input_len,
        output_len,
        ttft_ms,
        tpot_ms,
        percentile,
        tensor_parallel,
        engine,
        params,
        max_batch,
    )
    plan = plan_precision(hw.name, hw.tflops, hw.rate_notes, precision)
    served_by = engine or default_engine(hw, params)
    evidence, source, _ = Setup(
        m, hw, precision, tensor_parallel or 1, 1, served_by, params, (input_len, output_len)
    ).evidence()
    out = {
        "kind": "serve",
        "model": m.name,
        "gpu": hw.name,
        "gpu_count": count,
        "precision": precision,
        "input_len": input_len,
        "output_len": output_len,
        "slo": {"ttft_ms": ttft_ms, "tpot_ms": tpot_ms, "percentile": percentile} if slo else None,
        "engine": served_by,
        "served_precision": plan.served,
        "speed_evidence": evidence,
        "speed_source": source,
        "compute_precision": plan.compute,
        "warnings": [{"code": "precision-not-on-gpu", "message": plan.warning}] if plan.warning else [],
    }
    if r is None:
        unserved = _unserved(m, hw, plan, count, precision, input_len, output_len, tensor_parallel, served_by, params)
        return {**out, "fits": False, **unserved}
    return {**out, "fits": True, **_served(r, count, output_len)}


def _checked_request(
    model: str | ServeModel,
    gpu: GPU | str | Hardware,
    count: int,
    precision: str,
    input_len: int,
    output_len: int,
    ttft_ms: float | None,
    tpot_ms: float | None,
    percentile: float,
    tensor_parallel: int | None,
    catalog: Catalog | None,
) -> tuple[ServeModel, Hardware]:
    """The model and the GPU's serving figures, after every argument is checked: a bad one is
    reported before anything is computed."""
    m = as_serve_model(model)
    check_precision(precision)
    check_lengths(input_len, output_len, m)
    _check_request(count, tensor_parallel, ttft_ms, tpot_ms, percentile)
    if isinstance(gpu, str):
        gpu = (catalog or load_catalog()).gpu(gpu)
    return m, gpu if isinstance(gpu, Hardware) else hardware(gpu, catalog)


def _unserved(
    m: ServeModel,
    hw: Hardware,
    plan: PrecisionPlan,
    count: int,
    precision: str,
    input_len: int,
    output_len: int,
    tensor_parallel: int | None,
    engine: str,
    params: ServeParams,
) -> dict[str, Any]:
    """The figures of a model no layout serves: why, and the weights per GPU at the widest tensor
    parallelism tried (or the one asked), the rest zero or null."""
    kv_tokens = params.kv_tokens(engine, input_len, output_len)[0]
    mem = memory(
        m,
        plan.served or precision,
        hw.memory_gb,
        tensor_parallel or min(count, 8),
        1,
        kv_tokens,
        params.usable_memory_fraction,
        params.overhead_gb,
    )
    return {
        "reason": _why_not(m, hw, plan, mem, count, params),
        "output_tokens_per_s": 0.0,
        "requests_per_s": 0.0,
        "ttft_ms": None,
        "tpot_ms": None,
        "max_batch": 0,
        "kv_cache_gb_per_gpu": 0.0,
        "weights_gb_per_gpu": round(mem.weights_gb, 3),
        "step_breakdown": None,
        "limited_by": None,
        "tensor_parallel": None,
        "pipeline_parallel": None,
        "replicas": 0,
        "idle_gpus": count,
    }


def _why_not(m: ServeModel, hw: Hardware, plan: PrecisionPlan, mem: Memory, count: int, params: ServeParams) -> str:
    """Why no layout serves the model: the precision the GPU lacks, its unsourced memory, or the
    memory the weights, overhead and KV cache need against what `count` GPUs hold."""
    if plan.refused:
        return f"{hw.name} has {plan.refused}"
    if hw.bandwidth_gbps <= 0 or hw.memory_gb <= 0:
        return f"{hw.name} has no sourced memory size or bandwidth in the catalog, which the serving model needs"
    return (
        f"{m.name} at {plan.served} needs {mem.weights_gb:.1f} GB of weights per GPU plus "
        f"{params.overhead_gb:g} GB overhead and KV cache; {count} x {hw.memory_gb:.1f} GB is not enough"
    )


def _rnd(x: Any, n: int = 6) -> float:
    """A figure of the estimate as JSON shows it: a float to `n` decimals."""
    return round(float(x), n)


def _served(r: ReplicaResult, count: int, output_len: int) -> dict[str, Any]:
    """The best layout's figures for the whole system: its replicas' throughput, its latencies,
    batch, memory and the step time's parts."""
    replicas = count // r.gpus
    pt = r.point
    dec, pre = pt["decode"], pt["prefill"]
    return {
        "output_tokens_per_s": _rnd(replicas * r.requests_per_s * output_len, 3),
        "requests_per_s": _rnd(replicas * r.requests_per_s, 5),
        "requests_per_s_per_replica": _rnd(r.requests_per_s, 5),
        "ttft_ms": _rnd(r.ttft_ms, 3),
        "tpot_ms": _rnd(r.tpot_ms, 3),
        "ttft_mean_ms": _rnd(pt["ttft_mean_s"] * 1e3, 3),
        "tpot_mean_ms": _rnd(pt["tpot_mean_s"] * 1e3, 3),
        "batch_per_replica": _rnd(r.batch, 2),
        "max_batch": r.max_batch,
        "kv_cache_gb_per_gpu": _rnd(r.kv_cache_gb_per_gpu, 3),
        "weights_gb_per_gpu": _rnd(r.weights_gb_per_gpu, 3),
        "step_breakdown": {
            "prefill": {
                "compute_s": _rnd(pre["compute_s"]),
                "memory_s": _rnd(pre["memory_s"]),
                "comm_s": _rnd(pre["comm_s"]),
            },
            "decode": {
                "compute_s": _rnd(dec["compute_s"]),
                "memory_s": _rnd(dec["memory_s"]),
                "comm_s": _rnd(dec["comm_s"]),
                "step_s": _rnd(dec["step_s"]),
            },
        },
        "limited_by": r.limited_by,
        "tensor_parallel": r.tp,
        "pipeline_parallel": r.pp,
        "replicas": replicas,
        "idle_gpus": count - replicas * r.gpus,
        "speed_evidence": r.speed_evidence,
        "speed_source": r.speed_source,
    }


def serving_model(
    job: ServeJob, catalog: Catalog, where: str = "jobs[0]", params: ServeParams | None = None
) -> ServeModel:
    """What a serving job (advisor.inputs.jobs.ServeJob) is served as: its preset, and when it carries
    `measured:` runs, every catalog GPU's speed factor from them (advisor/perf/serving_measured.py). The
    optimizer's candidate builder passes this model to `replica_rate`, which applies the factors."""
    import dataclasses

    model = load_model(job.model, catalog)
    if not job.measured:
        return model
    from advisor.perf.measured import above_peak  # (a job with its own runs only: start-up)

    params = params or load_params()
    factors = []
    for k, run in enumerate(job.measured):
        at = f"{where}.measured[{k}]"
        if run.gpu not in catalog.gpus:
            from advisor.errors import suggest

            raise InputError(f"{at}.gpu: unknown GPU id {run.gpu!r}{suggest(run.gpu, catalog.gpus)}", field=f"{at}.gpu")
        gpu = catalog.gpus[run.gpu]
        per_token = 2.0 * model.matmul_active  # a generated token multiplies through every active weight once
        if impossible := above_peak(
            gpu, run.count, job.precision, per_token, run.output_tokens_per_s, "output tokens/s"
        ):
            raise InputError(f"{at}.output_tokens_per_s: {impossible}", field=f"{at}.output_tokens_per_s")
        try:
            est = serve_estimate(
                model,
                hardware(gpu, catalog),
                run.count,
                job.precision,
                run.input_len,
                run.output_len,
                tensor_parallel=run.tensor_parallel,
                params=params,
            )
        except InputError as exc:
            raise InputError(f"{at}: {exc}", field=at) from None
        if not est["fits"] or est["tensor_parallel"] != run.tensor_parallel or est["pipeline_parallel"] != 1:
            raise InputError(
                f"{at}: {model.name} at {job.precision} on {run.count} x {run.gpu} with tensor parallelism "
                f"{run.tensor_parallel} is not a layout the serving model can run "
                f"({est.get('reason') or 'it needs pipeline stages'}); check gpu, count and tensor_parallel",
                field=at,
            )
        one = _one_at_a_time(model, hardware(gpu, catalog), run, job.precision, params)
        if run.output_tokens_per_s < params.measured_factor_floor * one:
            raise not_a_run(at, run, one, params.measured_factor_floor)
        factors.append((run.gpu, generation(gpu), run.output_tokens_per_s / est["output_tokens_per_s"], run))
    gens = {gid: generation(g) for gid, g in catalog.gpus.items()}
    speeds = transfer(factors, gens, params.measured_software_share)
    doubts = tuple(too_slow(label(run), f, run.count, params.measured_factor_floor) for _, _, f, run in factors)
    return dataclasses.replace(model, speeds=tuple(sorted(speeds.items())), doubts=tuple(d for d in doubts if d))


def _one_at_a_time(model: ServeModel, hw: Hardware, run: Any, precision: str, params: ServeParams) -> float:
    """Output tokens/s of `run`'s GPUs serving one request at a time on each replica (max_batch 1), at
    its shape: what a throughput run at full load beats, batching only adding to it."""
    one = serve_estimate(
        model, hw, run.count, precision, run.input_len, run.output_len,
        tensor_parallel=run.tensor_parallel, params=params, max_batch=1,
    )  # fmt: skip
    return float(one.get("output_tokens_per_s") or 0.0)


def estimate_serving(
    *,
    gpu: str | None = None,
    count: int = 1,
    model: str | None = None,
    params: float | str | None = None,
    layers: int | None = None,
    hidden: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    experts: int | None = None,
    active_params: float | str | None = None,
    precision: str = "bf16",
    input_len: int | None = None,
    output_len: int | None = None,
    ttft_ms: float | None = None,
    tpot_ms: float | None = None,
    percentile: float = 99,
    tensor_parallel: int | None = None,
    catalog: Catalog | str | Path | None = None,
    list_models: bool = False,
) -> dict[str, Any]:
    """advisor.estimate(kind="serve", ...) and `advisor estimate --kind serve`: a preset (`model`, id or
    alias) or a custom shape (`params`, `layers`, `hidden`, `heads`, ...) served on `count` GPUs, as
    JSON (or the preset list, as `advisor models`). `catalog` is a Catalog, a path to an override file, or None for the built-in one.
    Bad arguments are InputErrors naming the parameter in backticks (the CLI shows its flag)."""
    from advisor.data.catalog_view import presets
    from advisor.inputs.units import parse_count
    from advisor.perf.kv import custom_model

    if not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog) if catalog else load_catalog()
    if list_models:
        return presets(catalog)
    if input_len is None or output_len is None:
        raise InputError(
            "`input_len` and `output_len`: give the request's prompt and output tokens, e.g. 1000 and 300",
            field="input_len",
        )
    if model and params:
        raise InputError(
            "give either `model` (a preset) or `params` with `layers`, `hidden` and `heads`", field="model"
        )
    if params:
        missing = [f"`{n}`" for n, v in (("layers", layers), ("hidden", hidden), ("heads", heads)) if v is None]
        if missing or layers is None or hidden is None or heads is None:
            raise InputError(f"`params`: a custom serving model needs {', '.join(missing)} too", field="params")
        try:
            total, active = (
                parse_count(params, "params"),
                parse_count(active_params, "active_params") if active_params else None,
            )
        except ValueError as exc:
            raise InputError(f"`params`/`active_params`: {exc}", field="params") from None
        served = custom_model(total, layers, hidden, heads, kv_heads, active, experts)
    else:
        served = load_model(model or "", catalog)
    gpu = require_gpu(gpu)
    if gpu not in catalog.gpus:
        from advisor.errors import suggest

        raise InputError(f"`gpu`: unknown GPU id {gpu!r}{suggest(gpu, catalog.gpus)}", field="gpu")
    return serve_estimate(
        served,
        catalog.gpus[gpu],
        count,
        precision,
        input_len,
        output_len,
        ttft_ms,
        tpot_ms,
        percentile,
        tensor_parallel,
        catalog,
    )
