"""What the estimators need from a job: the model's shape (ModelSpec) and the job's settings
(JobSpec), resolved from a workload job, a preset, or command-line style fields."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from advisor.data import catalog_entries as shapes
from advisor.data.catalog import Catalog
from advisor.errors import InputError
from advisor.inputs.jobs import Job
from advisor.inputs.quantities import MAX_TOKENS


@dataclass(frozen=True)
class ModelSpec:
    """A transformer's shape. `shape_inferred` is True when layers/hidden were derived from params."""

    params: float
    layers: int
    hidden: int
    heads: int
    vocab: int
    seq_len: int
    ffn: int | None = None
    kv_heads: int | None = None
    tied_embeddings: bool = False
    shape_inferred: bool = False
    name: str | None = None
    active_params: float | None = None  # a mixture of experts: the parameters one token passes through
    # the job's own measurements on their way from resolve_model to job_spec (not part of the shape)
    measured: tuple = field(default=(), compare=False, hash=False, repr=False)

    @property
    def embedding_params(self) -> float:
        return self.vocab * self.hidden

    @property
    def matmul_params(self) -> float:
        """Parameters that take part in a matrix multiply per token (the input lookup does not;
        a tied output head does; a mixture of experts counts the experts a token is routed to)."""
        used = self.active_params if self.active_params is not None else self.params
        return max(0.0, used - (0 if self.tied_embeddings else self.embedding_params))

    def matmul_flops_per_token(self, kind: str = "pretrain") -> float:
        """The weight matmuls' FLOPs per token trained: 6 a parameter (forward, and backward to
        activations and weights), 4 for LoRA's frozen weights (no weight gradient)."""
        return (4.0 if kind in ("lora", "qlora") else 6.0) * self.matmul_params

    @property
    def block_params(self) -> float:
        """Weights of the L transformer blocks' matrices (attention q, k, v, o and the MLP)."""
        return shapes.block_matrices(self.layers, self.hidden, self.ffn, self.heads, self.kv_heads)

    @property
    def ffn_width(self) -> int:
        return shapes.ffn_width(self.hidden, self.ffn)

    @property
    def gated_mlp(self) -> bool:
        """A SwiGLU-style MLP (Llama): assumed when the MLP width is given and is not 4 x hidden."""
        return shapes.gated_mlp(self.hidden, self.ffn)

    @property
    def kv_width(self) -> float:
        return shapes.kv_width(self.hidden, self.heads, self.kv_heads)


@dataclass(frozen=True)
class JobSpec:
    """What the estimator needs from a job (the workload's Job, resolved). `strategy`,
    `tensor_parallel` and `pipeline_parallel` fix the layout; None lets `evaluate` choose."""

    model: ModelSpec
    kind: str = "pretrain"  # pretrain | finetune | lora | qlora
    precision: str = "bf16"
    micro_batch: int | None = None
    checkpointing: bool | None = None
    global_batch_tokens: float | None = None
    lora_rank: int = 16
    optimizer: str = "adamw"  # adamw | adamw-8bit
    strategy: str | None = None  # ddp | zero1 | zero2 | zero3 (= fsdp)
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    context_parallel: int | None = None
    attention_kernel: str | None = None  # None: today's kernels; "fa2": FlashAttention-2-era (calibration rows)
    grad_reduce_bytes: float = 2.0  # bytes per gradient reduced: 2 (bf16), 4 (fp32, FSDP's default)
    recompute_fraction: float = 0.0  # share of the forward matmuls recomputed without full checkpointing (selective AC)
    virtual_stages: int | None = None  # pipeline model chunks per GPU; None: the estimator's default (interleaved 1F1B)
    software_era: str | None = (
        None  # None: today's software; a calibration row's older stack (Params.software_era_factor)
    )
    tp_overlap: bool = False  # tensor-parallel all-reduces overlapped with GEMMs (Params.tp_comm_overlap)
    fp8_param_gather: bool = False  # ZeRO's parameter all-gather in fp8, 1 byte a parameter (training.gathered_bytes)
    fp8_tp_gather: bool = False  # tensor parallelism's activation all-gathers in fp8 (training.tp_gather_share)
    fused_elementwise: bool = True  # elementwise work fused (today's software); False: eager code (older rows)
    measured: tuple = ()  # the user's own speeds (perf/measured.py MeasuredSpeed): evaluate uses them
    software: str = "public"  # public | vendor_tuned: the stack an AMD Instinct speed assumes (perf/speed_basis.py)


DEFAULT_VOCAB = 50257  # a shape without `vocab`: GPT-2's tokenizer
DEFAULT_SEQ_LEN = 2048  # a shape without `seq_len`


def infers_tied(m: ModelSpec) -> bool:
    """Whether a shape given without `tied_embeddings` shares its output head with the input
    embedding: the parameters beyond the transformer blocks are one vocab x hidden matrix (tied:
    GPT-2, MPT) or two (untied: Llama). Nearer one -> tied. With layers or hidden inferred from
    the parameter count the split cannot be read, and every parameter counts as a matmul
    parameter (6N FLOPs per token, the usual convention)."""
    if m.shape_inferred:
        return True
    return m.params - m.block_params < 1.5 * m.embedding_params


def preset_spec(catalog: Catalog, preset_id: str, seq_len: int | None = None) -> ModelSpec:
    """The catalog preset `preset_id` as a ModelSpec (its own sequence length unless `seq_len` is given;
    a mixture of experts with its active parameters)."""
    preset = catalog.models[preset_id]
    active = preset.active_params if preset.active_params not in (None, preset.params) else None
    return ModelSpec(
        params=preset.params,
        layers=preset.layers,
        hidden=preset.hidden,
        heads=preset.heads,
        vocab=preset.vocab,
        seq_len=seq_len or preset.seq_len,
        ffn=preset.ffn,
        kv_heads=preset.kv_heads,
        tied_embeddings=preset.tied_embeddings,
        name=preset_id,
        active_params=active,
    )


def below_one_sequence(batch: float | None, seq_len: int) -> str:
    """Why a global batch of `batch` tokens cannot be ('' when it can): less than one sequence. It was
    raised silently to whole sequences (`global_batch_tokens: 1` planned at 16,384)."""
    if batch is None or batch >= seq_len:
        return ""
    return (
        f"a global batch of {batch:,.4g} tokens is less than one sequence: a step takes whole sequences of "
        f"{seq_len:,} tokens (the model's seq_len), so give at least {seq_len:,}, or leave it out for the "
        "estimator's default"
    )


def _named(field: str) -> str:
    """A field as an error names it: a workload's `jobs[0].x` as is (the CLI adds the file and line), a
    flag's `x` in backticks (the CLI shows it as --x)."""
    return field if field.startswith("jobs[") else f"`{field}`"


def resolve_model(job: Job, catalog: Catalog, where: str) -> ModelSpec:
    """A preset name or an explicit shape -> ModelSpec; a missing shape is inferred and said so. The
    job's `measured:` speeds ride along (checked against the catalog) for `job_spec`; perf/measured.py
    is imported for a job that has some."""
    shape = _resolve_shape(job, catalog, where)
    if short := below_one_sequence(job.global_batch_tokens, shape.seq_len):
        at = f"{where}.global_batch_tokens" if where.startswith("jobs[") else "global_batch_tokens"
        raise InputError(f"{_named(at)}: {short}", field=at)
    if not job.measured:
        return replace(shape, measured=())
    from advisor.perf.measured import measured_speeds

    return replace(shape, measured=measured_speeds(job, catalog, where))


def _resolve_shape(job: Job, catalog: Catalog, where: str) -> ModelSpec:
    if isinstance(job.model, str):
        try:
            preset_id = catalog.model_id(job.model)
        except InputError:
            from advisor.errors import suggest

            known = list(catalog.models) + list(catalog.model_aliases)
            raise InputError(
                f"{where}.model: unknown model preset {job.model!r}{suggest(job.model, known)}; "
                f"presets: {', '.join(sorted(catalog.models))}; or give {{params: 7B, layers: 32, hidden: 4096}}",
                field=f"{where}.model",
            ) from None
        return preset_spec(catalog, preset_id, job.seq_len)
    shape = job.model
    inferred = shape.layers is None or shape.hidden is None
    hidden = shape.hidden
    layers = shape.layers
    if hidden is None and layers is not None:
        hidden = max(64, int(round(math.sqrt(shape.params / (12 * layers)) / 64)) * 64)
    elif hidden is None:
        # GPT-3 family aspect ratio hidden/layers = 128 with params = 12 * layers * hidden^2
        hidden = max(64, int(round((128 * shape.params / 12) ** (1 / 3) / 64)) * 64)
    if layers is None:
        layers = max(1, int(round(shape.params / (12 * hidden * hidden))))
    heads = shape.heads or max(1, hidden // 128)
    m = ModelSpec(
        params=shape.params,
        layers=layers,
        hidden=hidden,
        heads=heads,
        vocab=shape.vocab or DEFAULT_VOCAB,
        seq_len=job.seq_len or shape.seq_len or DEFAULT_SEQ_LEN,
        ffn=shape.ffn,
        kv_heads=shape.kv_heads,
        shape_inferred=inferred,
        name=None,
        active_params=shape.active_params if shape.active_params not in (None, shape.params) else None,
    )
    beyond = shapes.matrices_beyond_params(shape.params, layers, hidden, m.ffn, heads, m.kv_heads)
    if beyond and not inferred:
        at = f"{where}.model" if where.startswith("jobs[") else "params"
        raise InputError(f"{_named(at)}: {beyond}", field=at)
    tied = shape.tied_embeddings if shape.tied_embeddings is not None else infers_tied(m)
    return replace(m, tied_embeddings=tied)


def spec_from_flags(
    catalog: Catalog,
    *,
    model: str | None = None,
    params: Any = None,
    layers: int | None = None,
    hidden: int | None = None,
    seq_len: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    ffn: int | None = None,
    vocab: int | None = None,
    tied_embeddings: bool | None = None,
    active_params: Any = None,
    **job_fields: Any,
) -> JobSpec:
    """A JobSpec from command-line style arguments (a preset, or params with an optional shape),
    with every invalid value reported as the field that carries it (`` `params`: ... ``, exit 2; the CLI
    layer shows the flag, advisor/cli/base.py)."""
    shape_fields = dict(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        ffn=ffn,
        vocab=vocab,
        tied_embeddings=tied_embeddings,
        active_params=active_params,
    )
    _check_model_flags(catalog, model, params, shape_fields)
    given = {k: v for k, v in dict(params=params, seq_len=seq_len, **shape_fields).items() if v is not None}
    shape: Any = model if model is not None else given
    job = _flag_job(shape, seq_len if model is not None else None, job_fields)
    return job_spec(job, resolve_model(job, catalog, "model"))


def _check_model_flags(catalog: Catalog, model: str | None, params: Any, shape_fields: dict[str, Any]) -> None:
    """Either a preset the catalog knows or a parameter count, and a preset with no shape given
    beside it (the preset fixes the shape): each refused naming its field."""
    if (model is None) == (params is None):
        raise InputError(
            "give either `model` PRESET or `params` N (with optional `layers`/`hidden`/`seq_len`)", field="model"
        )
    if model is not None and model not in catalog.models and str(model).lower() not in catalog.model_aliases:
        from advisor.errors import suggest

        known = list(catalog.models) + list(catalog.model_aliases)
        raise InputError(
            f"`model`: unknown model preset {model!r}{suggest(model, known)}; presets: "
            f"{', '.join(sorted(catalog.models))}",
            field="model",
        )
    given = [k for k, v in shape_fields.items() if v is not None]
    if model is not None and given:
        raise InputError(
            f"`{given[0]}`: the preset {model!r} fixes the model's shape; describe a shape with "
            "`params` (and layers, hidden, ...) instead of a preset",
            field=given[0],
        )


def _flag_job(shape: Any, seq_len: int | None, job_fields: dict[str, Any]) -> Job:
    """The workload Job of the flags (a preset or a shape), validated as a workload's job is, its
    first error reported as the field that carries it (`` `params`: ... ``)."""
    from pydantic import ValidationError

    from advisor.errors import describe, first_error
    from advisor.inputs.phrasing import clean_loc

    try:
        # (a speed does not depend on the token budget: the most allowed, so that no global batch is refused for it)
        return Job(model=shape, tokens=MAX_TOKENS, seq_len=seq_len, **job_fields)
    except ValidationError as exc:
        err = first_error(exc.errors(), clean_loc)
        field = ".".join(str(p) for p in clean_loc(err["loc"]))
        raise InputError(f"`{field.replace('model.', '')}`: {describe(err)}", field=field) from None


def job_spec(job: Job, model: ModelSpec, software: str = "public") -> JobSpec:
    """The estimator's view of a workload job; its measurements (resolved by `resolve_model`) move
    from the model to the job. `software`: the workload's default stack, for a job that states none."""
    return JobSpec(
        model=replace(model, measured=()),
        kind=job.kind,
        precision=job.precision,
        micro_batch=job.micro_batch,
        checkpointing=job.checkpointing,
        global_batch_tokens=job.global_batch_tokens,
        lora_rank=job.lora_rank,
        optimizer=job.optimizer,
        measured=model.measured,
        software=job.software or software,
    )
