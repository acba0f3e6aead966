"""The training estimate of one job on n GPUs (`evaluate`), and `advisor.estimate(...)`, its public
form: memory, tokens/s, MFU, the layout and the step split into compute, memory and communication."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.data.evidence import Evidence
from advisor.errors import InputError
from advisor.perf.band import band
from advisor.perf.estimate_notes import held_note, layout_notes, shape_notes
from advisor.perf.fit_reason import does_not_fit
from advisor.perf.jobspec import JobSpec, spec_from_flags
from advisor.perf.layout import (
    STRATEGIES,
    canonical_strategy,
    choose_layout,
    layout_batch,
    min_gpus,
)
from advisor.perf.memory import (
    GB,
    Layout,
    default_batch_tokens,
    layout_memory,
    trainable_params,
)
from advisor.perf.speed_basis import calibration_basis, ceilings, speed_basis
from advisor.perf.step_parts import empty_parts, held_parts, measured_parts
from advisor.perf.training import generation, mfu_flops_per_token


@dataclass
class Estimate:
    """The estimator's answer for one job on `gpu_count` GPUs: whether it fits, its speed and MFU,
    and where the step time and the memory go."""

    gpu: str
    gpu_count: int
    fits: bool
    memory_per_gpu_gb: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    mfu: float
    step_breakdown: dict
    memory_breakdown: dict
    layout: dict
    binding: str
    reason: str | None = None
    notes: list = field(default_factory=list)
    speed_evidence: str = "datasheet"  # measured | same_generation | datasheet | transferred (perf/speed_basis.py)
    derating: dict | None = None  # {factor, source, note} applied to a datasheet speed
    evidence_note: str | None = None  # what a speed not measured on this GPU rests on
    tokens_per_s_upper: float = 0.0  # the upper end: the model up to the best published MFU, not derated
    speed_source: str | None = None  # the user's measurement a measured or transferred speed comes from
    speed_spread: float | None = None  # P10-P90 half-width of a speed that is the user's measurement
    model_notes: list = field(default_factory=list)  # how the model's speed was held: not said of a measured one

    def to_dict(self) -> dict:
        return asdict(self)


def evaluate(job: JobSpec, gpu: GPU, count: int, p: Params) -> Estimate:
    """Memory and speed of `job` on `count` GPUs of type `gpu`, in the fastest layout that fits; the
    job's own measurements (`job.measured`, perf/measured.py) replace or move the speed."""
    if not job.measured:
        return _own_estimator(_evaluate(job, gpu, count, p), gpu, job.precision, p)
    # (a job with its own speeds only: two frozen dataclasses' start-up)
    from advisor.perf.measured import applied, runs_ceiling, transfer

    bare = replace(job, measured=())
    e = _own_estimator(_evaluate(bare, gpu, count, p), gpu, job.precision, p)
    if not e.fits:
        return e
    t = transfer(
        job.measured,
        gpu,
        count,
        lambda m: _evaluate(bare, m.figures, m.count, p).tokens_per_s,
        p.measured_software_share,
    )
    if t is None:
        return e
    per_token = mfu_flops_per_token(bare.model, bare.kind)
    ceiling = runs_ceiling(bare, t.runs, gpu, count, per_token)
    factor, upper, note = applied(t, e.tokens_per_s, e.tokens_per_s_upper, e.mfu, ceiling)
    return replace(
        e,
        tokens_per_s=e.tokens_per_s * factor,
        step_breakdown=measured_parts(
            e.step_breakdown, e.layout["global_batch_tokens"], e.tokens_per_s, factor, t.level
        ),
        tokens_per_s_per_gpu=e.tokens_per_s_per_gpu * factor,
        mfu=e.mfu * factor,
        tokens_per_s_upper=upper,
        speed_evidence=t.level,
        speed_source=t.source,
        speed_spread=t.spread,
        derating=None if t.level == "measured" else e.derating,
        evidence_note=note,
        notes=[n for n in e.notes if n != e.evidence_note and (t.level != "measured" or n not in e.model_notes)]
        + [note],
    )


def _own_estimator(e: Estimate, gpu: GPU, precision: str, p: Params) -> Estimate:
    """`e` labelled as the user's own when their calibrated estimator (`advisor calibrate`) set its
    speed: the figure is the model's with their fitted efficiency (the fit ran through this same model,
    their runs' provenance in force, so with no datasheet derating on the parts they cover:
    speed_basis.speed_basis), its evidence and source are the user's runs (calibration_basis)."""
    own = calibration_basis(gpu, precision, p) if p.calibrated_from and e.fits else None
    if own is None:
        return e
    level, source = own
    note = f"{source}: the speed your own estimator (--catalog) gives"
    return replace(
        e,
        speed_evidence=level,
        speed_source=source,
        derating=None if level == "measured" else e.derating,
        evidence_note=note,
        notes=[n for n in e.notes if n != e.evidence_note] + [note],
    )


def _evaluate(job: JobSpec, gpu: GPU, count: int, p: Params) -> Estimate:
    """`evaluate` without the job's measurements."""
    m = job.model
    peak = gpu.dense_tflops(job.precision)
    notes = shape_notes(job)
    ev, derate, ev_note = speed_basis(job, gpu, p)
    if ev_note:
        notes.append(ev_note)
    empty: dict[str, Any] = dict(
        gpu=gpu.id,
        gpu_count=count,
        memory_per_gpu_gb=0.0,
        tokens_per_s=0.0,
        tokens_per_s_per_gpu=0.0,
        mfu=0.0,
        step_breakdown=empty_parts(),
        memory_breakdown={},
        layout={},
        binding="none",
        notes=notes,
        speed_evidence=ev.level,
        derating=derate,
        evidence_note=ev_note,
    )
    if not peak:
        return Estimate(fits=False, reason=f"{gpu.name} has no {job.precision} tensor rate in the catalog", **empty)
    if gpu.memory_bandwidth_gbps.value is None or gpu.memory_gb.value is None:
        return Estimate(fits=False, reason=f"{gpu.name}'s memory size or bandwidth is unknown", **empty)
    chosen = choose_layout(job, gpu, count, p)
    if chosen is None:
        need, reason = does_not_fit(job, gpu, count, p)
        empty["memory_per_gpu_gb"] = round(need, 3)
        return Estimate(fits=False, reason=reason, **empty)
    lay, t, tps, needs_tp = chosen
    batch = layout_batch(job, lay, p)
    mem = layout_memory(job, lay, p, batch)
    parts = {"compute": t["compute_s"], "memory_bandwidth": t["memory_s"], "interconnect": t["comm_s"]}
    binding = max(parts, key=lambda k: parts[k])
    flops = mfu_flops_per_token(m, job.kind)
    mfu = tps / count * flops / (peak * 1e12)
    tps, mfu, upper, held, step_parts = _held_speed(job, gpu, lay, batch, tps, mfu, t, ev, derate, p)
    notes += held
    asked = job.global_batch_tokens or default_batch_tokens(m, p)
    notes += layout_notes(gpu, count, lay, t, batch, asked, needs_tp)
    return Estimate(
        gpu=gpu.id,
        gpu_count=count,
        fits=True,
        memory_per_gpu_gb=round(sum(mem.values()) / GB, 3),
        tokens_per_s=tps,
        tokens_per_s_per_gpu=tps / count,
        mfu=mfu,
        step_breakdown=step_parts,
        memory_breakdown={k: round(v / GB, 3) for k, v in mem.items()},
        layout=_layout_row(m.seq_len, count, lay, t, batch, asked, needs_tp),
        binding=binding,
        notes=notes,
        speed_evidence=ev.level,
        derating=derate,
        evidence_note=ev_note,
        tokens_per_s_upper=upper,
        model_notes=held,
    )


def _held_speed(
    job: JobSpec,
    gpu: GPU,
    lay: Layout,
    batch: float,
    tps: float,
    mfu: float,
    t: dict,
    ev: Evidence,
    derate: dict[str, Any] | None,
    p: Params,
) -> tuple[float, float, float, list[str], dict]:
    """(tokens/s, MFU, upper tokens/s, why it was held, the step's parts: perf/step_parts.py) from the
    layout's modelled `tps` at `mfu`: never above the best published run of the generation
    (perf/speed_basis.ceilings), then derated when the speed rests on a datasheet."""
    base, upper, held = ceilings(job, gpu, lay, batch, tps, mfu, t, ev, p)
    notes = [held_note(job, gpu, lay, p, mfu, tps, upper)] if upper < tps * 0.9999 else []
    if held:
        notes.append(held)
    parts = held_parts(t, batch, tps, base, base * derate["factor"] if derate else base)
    if derate:
        base, upper = base * derate["factor"], upper * derate["upper"]
    return base, mfu * base / tps, upper, notes, parts


def _layout_row(
    seq_len: int, count: int, lay: Layout, t: dict, batch: float, asked: float, needs_tp: bool
) -> dict[str, Any]:
    """The estimate's `layout`: the strategy and parallel sizes chosen, with what they imply (idle
    GPUs, gradient accumulation, the pipeline bubble, the interconnect tier, the global batch)."""
    strategy = "single" if count == 1 else lay.strategy
    return {
        "strategy": strategy,
        "shards": lay.shard_group if lay.strategy == "zero3" else 1,
        "micro_batch": lay.micro_batch,
        "checkpointing": lay.checkpointing,
        "data_parallel": lay.dp,
        "tensor_parallel": lay.tp,
        "pipeline_parallel": lay.pp,
        "needs_tensor_parallel": needs_tp,
        "idle_gpus": count - lay.count,
        "gradient_accumulation": round(t["micro_batches"], 2),
        "pipeline_bubble": round(t["bubble"], 4),
        "context_parallel": lay.cp,
        "interconnect": t["tier"],
        "global_batch_tokens": batch,
        "seq_len": seq_len,
        "batch_changed": batch > asked * 1.0001,
    }


def params_from(catalog: Any) -> Params:
    """The estimator's parameters from the catalog (catalog/estimator.yaml, or an override)."""
    try:
        return Params(**catalog.estimator)
    except TypeError as exc:
        raise InputError(f"catalog estimator parameters: {exc}", field="estimator") from None


def require_gpu(gpu: str | None) -> str:
    """The GPU id an estimate is for; none given is an InputError naming `gpu`."""
    if gpu is None:
        raise InputError("`gpu`: give a GPU id such as h100-sxm (see `advisor catalog list`)", field="gpu")
    return gpu


def estimate(
    *,
    gpu: str | None = None,
    count: int = 1,
    model: str | None = None,
    params: float | str | None = None,
    layers: int | None = None,
    hidden: int | None = None,
    seq_len: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    ffn: int | None = None,
    vocab: int | None = None,
    tied_embeddings: bool | None = None,
    active_params: float | str | None = None,
    precision: str = "bf16",
    kind: str = "pretrain",
    micro_batch: int | None = None,
    checkpointing: bool | None = None,
    global_batch_tokens: float | str | None = None,
    optimizer: str = "adamw",
    lora_rank: int = 16,
    strategy: str | None = None,
    tensor_parallel: int | None = None,
    pipeline_parallel: int | None = None,
    software: str = "public",
    catalog: Any = None,
) -> dict:
    """advisor.estimate(...): memory and speed of one job on `count` GPUs, as the JSON of
    `advisor estimate --format json` (README.md, `advisor estimate`). `catalog` is a Catalog, a path to an
    override file, or None for the built-in one. `strategy` (ddp, zero1, zero2, zero3 or fsdp),
    `tensor_parallel` and `pipeline_parallel` fix the layout; by default the fastest is chosen. `software`:
    public or vendor_tuned, the training stack an AMD Instinct speed assumes (docs/model.md §1.7)."""
    from advisor.data.catalog import Catalog, load_catalog

    gpu = require_gpu(gpu)
    if not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog)
    spec = spec_from_flags(
        catalog,
        model=model,
        params=params,
        layers=layers,
        hidden=hidden,
        seq_len=seq_len,
        heads=heads,
        kv_heads=kv_heads,
        ffn=ffn,
        vocab=vocab,
        tied_embeddings=tied_embeddings,
        active_params=active_params,
        precision=precision,
        kind=kind,
        micro_batch=micro_batch,
        checkpointing=checkpointing,
        global_batch_tokens=global_batch_tokens,
        optimizer=optimizer,
        lora_rank=lora_rank,
        software=software,
    )
    spec = replace(
        spec,
        strategy=_check_layout_flags(spec, count, strategy, tensor_parallel, pipeline_parallel),
        tensor_parallel=tensor_parallel,
        pipeline_parallel=pipeline_parallel,
    )
    p = params_from(catalog)
    g = catalog.gpu(gpu)
    return _estimate_json(evaluate(spec, g, count, p), spec, g, p, precision)


def _estimate_json(e: Estimate, spec: JobSpec, g: GPU, p: Params, precision: str) -> dict:
    """The JSON of `advisor estimate --format json`: the estimate `e` of `spec` on GPUs `g`, rounded
    as it prints, with the fewest GPUs that fit, the accuracy band and the job as resolved."""
    from advisor.perf.measured import doubts

    return {
        "gpu": e.gpu,
        "gpu_count": e.gpu_count,
        "fits": e.fits,
        "memory_per_gpu_gb": e.memory_per_gpu_gb,
        "tokens_per_s": round(e.tokens_per_s, 1),
        "tokens_per_s_per_gpu": round(e.tokens_per_s_per_gpu, 1),
        "mfu": round(e.mfu, 4),
        "step_breakdown": {k: round(v, 6) for k, v in e.step_breakdown.items()},
        "memory_breakdown_gb": e.memory_breakdown,
        "layout": e.layout,
        "binding": e.binding,
        "min_gpus": min_gpus(spec, g, p),
        "dense_tflops": g.dense_tflops(precision),
        "generation": generation(g),
        # a public-stack speed with a per-stack derating (AMD) has no scored run: the CDNA rows are vendor-tuned
        "accuracy_band": None if (e.derating or {}).get("software") == "public" else band(g, precision),
        "model": {
            "params": spec.model.params,
            "layers": spec.model.layers,
            "hidden": spec.model.hidden,
            "seq_len": spec.model.seq_len,
            "vocab": spec.model.vocab,
            "tied_embeddings": spec.model.tied_embeddings,
            "shape_inferred": spec.model.shape_inferred,
        },
        "job": {
            "kind": spec.kind,
            "precision": spec.precision,
            "optimizer": spec.optimizer,
            "software": spec.software,
            "trainable_params": trainable_params(spec),
        },
        "speed_evidence": e.speed_evidence,
        "derating": e.derating,
        "evidence_note": e.evidence_note,
        "tokens_per_s_upper": round(e.tokens_per_s_upper, 1),
        "reason": e.reason,
        "notes": [*e.notes, *doubts(spec, mfu_flops_per_token(spec.model, spec.kind), p.measured_mfu_floor)],
    }


def _check_layout_flags(spec: JobSpec, count: int, strategy: str | None, tp: int | None, pp: int | None) -> str | None:
    """Reject a fixed layout that cannot exist, naming the field (exit 2; the CLI shows its flag)."""

    name = canonical_strategy(strategy)
    if name is not None and name not in STRATEGIES:
        raise InputError(f"`strategy`: {strategy!r} is not one of {', '.join(STRATEGIES)} (or fsdp)", field="strategy")
    m = spec.model
    if tp is not None and (tp < 1 or m.heads % tp):
        raise InputError(
            f"`tensor_parallel`: {tp} must divide the model's {m.heads} attention heads", field="tensor_parallel"
        )
    if pp is not None and (pp < 1 or pp > m.layers):
        raise InputError(
            f"`pipeline_parallel`: {pp} must be between 1 and the model's {m.layers} layers", field="pipeline_parallel"
        )
    if count % ((tp or 1) * (pp or 1)):
        raise InputError(
            f"`count` {count} is not a multiple of tensor x pipeline parallelism ({tp or 1} x {pp or 1})", field="count"
        )
    return name
