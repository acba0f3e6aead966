"""Serving memory: weight bytes at the serving precision, the KV cache per token, and from them the
largest batch a tensor/pipeline-parallel replica holds (docs/model.md, "Serving").

Plain numbers and dataclasses only, so the arithmetic is testable without the catalog.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from advisor.data.catalog import Catalog, load_catalog
from advisor.data.catalog_entries import ModelPreset
from advisor.errors import InputError
from advisor.perf.serving_measured import Speed

SERVE_PRECISIONS = ("bf16", "fp16", "fp8", "fp4", "int8", "int4")

# Bytes per weight. int4/int8 are weight-only formats with group scales: llama.cpp Q4_0 stores 32
# weights in 18 bytes (4.5 bits), Q8_0 in 34 (8.5 bits); GPTQ/AWQ group-128 is 4.25 bits. fp4 is
# NVFP4/MXFP4: 4-bit values plus one 8-bit scale per 16 (NVFP4) or 32 (MXFP4) values.
WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5625, "int8": 1.0625, "int4": 0.5625}
# KV-cache element bytes: fp8 and fp4 deployments keep an fp8 cache (TensorRT-LLM's FP8 KV, the
# MLPerf configs); weight-only int8/int4 keep activations and cache in fp16.
KV_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 1.0, "int8": 2.0, "int4": 2.0}


@dataclass(frozen=True)
class ServeModel:
    """A decoder-only transformer's shape as serving sees it (a preset of catalog/models.yaml)."""

    name: str
    params: float  # total parameters: what memory holds
    active_params: float  # parameters one token multiplies through: what compute costs
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    ffn: int = 0
    experts: int = 0  # routed experts per MoE layer (0: dense)
    experts_per_token: int = 0
    expert_params: float = 0.0  # parameters in all routed experts of all layers
    kv_elements: int | None = None  # KV elements per token and layer (default 2 kv_heads head_dim)
    kv_split_by_tp: bool = True  # False: one latent vector per token, replicated by tensor parallelism
    max_context: int | None = None
    tied: bool = False  # the output head is the input embedding (one table, read twice)
    speeds: tuple[tuple[str, Speed], ...] = ()  # GPU id -> the user's measured speed (advisor/perf/serving_measured.py)
    doubts: tuple[str, ...] = ()  # why a measured run looks wrong (serving_measured.too_slow): plan_notes says it

    def speed(self, gpu_id: str) -> Speed | None:
        """The measured (or transferred) speed factor for a GPU type, None without a measurement."""
        return next((sp for gid, sp in self.speeds if gid == gpu_id), None)

    @property
    def kv_elements_per_layer(self) -> int:
        return self.kv_elements if self.kv_elements is not None else 2 * self.kv_heads * self.head_dim

    @property
    def matmul_active(self) -> float:
        """Active parameters in matrix multiplies: less the input embedding (a table lookup), which a
        tied model's count holds once and multiplies through as its output head."""
        return self.active_params if self.tied else max(self.active_params - self.vocab * self.hidden, 0.0)


def weight_bytes(model: ServeModel, precision: str) -> float:
    """All weights at `precision` (MoE: every expert is resident)."""
    return model.params * WEIGHT_BYTES[precision]


def kv_bytes_per_token(model: ServeModel, precision: str, tp: int = 1, layers: int | None = None) -> float:
    """KV-cache bytes one token occupies on ONE GPU of a tensor-parallel group of `tp`: each GPU keeps
    its share of the KV heads (at least one head when tp > kv_heads: the head is replicated)."""
    layers = model.layers if layers is None else layers
    per_layer: float = model.kv_elements_per_layer
    if model.kv_split_by_tp and tp > 1:
        per_layer = per_layer * math.ceil(model.kv_heads / tp) / model.kv_heads
    return layers * per_layer * KV_BYTES[precision]


@dataclass(frozen=True)
class Memory:
    weights_gb: float  # per GPU
    overhead_gb: float  # per GPU: CUDA context, activations workspace, allocator slack
    kv_capacity_gb: float  # per GPU, left for the KV cache (negative: the weights do not fit)
    kv_per_seq_gb: float  # per GPU, one sequence at the average context
    max_batch: int  # sequences the replica can hold (0: does not fit)

    @property
    def fits(self) -> bool:
        return self.max_batch >= 1


def memory(
    model: ServeModel,
    precision: str,
    memory_gb: float,
    tp: int,
    pp: int,
    context: float,
    usable_fraction: float,
    overhead_gb: float,
) -> Memory:
    """Per-GPU memory of one replica (tp x pp GPUs) and the largest batch at `context` tokens of KV per
    sequence. Weights split evenly over the tp x pp GPUs; each pipeline stage caches its own layers. The
    KV cache gets `usable_fraction` of what weights and overhead leave (TensorRT-LLM's
    kv_cache_free_gpu_mem_fraction)."""
    w = weight_bytes(model, precision) / (tp * pp) / 1e9
    stage_layers = math.ceil(model.layers / pp)
    kv_seq = kv_bytes_per_token(model, precision, tp, stage_layers) * context / 1e9
    capacity = (memory_gb - overhead_gb - w) * usable_fraction  # engines give the KV cache a share of what is free
    batch = int(capacity // kv_seq) if capacity > 0 and kv_seq > 0 else 0
    return Memory(w, overhead_gb, capacity, kv_seq, max(batch, 0))


# ----------------------------------------------------------------------------- presets


def serve_model(preset_id: str, preset: ModelPreset) -> ServeModel:
    """The serving view of a catalog preset (catalog/models.yaml): a dense model unless it names
    experts; head width hidden / heads and context its pre-training length unless given."""
    return ServeModel(
        name=preset_id,
        params=float(preset.params),
        active_params=float(preset.active_params or preset.params),
        layers=preset.layers,
        hidden=preset.hidden,
        heads=preset.heads,
        kv_heads=preset.kv_heads or preset.heads,
        head_dim=preset.head_dim or preset.hidden // preset.heads,
        vocab=preset.vocab,
        ffn=preset.ffn or 0,
        experts=preset.experts,
        experts_per_token=preset.experts_per_token,
        expert_params=float(preset.expert_params),
        kv_elements=preset.kv_elements,
        kv_split_by_tp=preset.kv_split_by_tp,
        max_context=preset.max_context or preset.seq_len,
        tied=preset.tied_embeddings,
    )


@lru_cache(maxsize=64)
def _builtin_model(name: str) -> ServeModel:
    return load_model(name, load_catalog())


def load_model(name: str, catalog: Catalog | None = None) -> ServeModel:
    """A preset of `catalog` (None: the built-in one) by id or alias (catalog/models.yaml)."""
    if catalog is None:
        return _builtin_model(str(name).lower())
    try:
        preset_id = catalog.model_id(name)
    except InputError as exc:
        raise InputError(f"`model`: {exc}", field="model") from None
    return serve_model(preset_id, catalog.models[preset_id])


def check_precision(precision: str) -> str:
    if precision not in SERVE_PRECISIONS:
        raise InputError(
            f"`precision`: {precision!r} is not a serving precision; allowed: "
            f"{', '.join(SERVE_PRECISIONS)} (int8/int4 are weight-only)",
            field="precision",
        )
    return precision


def custom_model(
    params: float,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int | None = None,
    active_params: float | None = None,
    experts: int | None = None,
) -> ServeModel:
    """A model given by its shape (advisor estimate --kind serve --params ...). The embedding is not
    subtracted (no vocabulary given) and a mixture of experts is served as if every weight were read
    each decode step (exact at large batch, pessimistic at batch 1): only its compute uses active_params."""
    if hidden % heads:
        raise InputError(f"`heads`: {heads} must divide hidden ({hidden})", field="heads")
    if kv_heads is not None and heads % kv_heads:
        raise InputError(f"`kv_heads`: {kv_heads} must divide heads ({heads})", field="kv_heads")
    if active_params is not None and active_params > params:
        raise InputError("`active_params`: cannot exceed params", field="active_params")
    if experts is not None and active_params is None:
        raise InputError(
            "`experts`: give `active_params` too (the parameters one token multiplies through)", field="experts"
        )
    return ServeModel(
        name="custom",
        params=params,
        active_params=active_params or params,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads or heads,
        head_dim=hidden // heads,
        vocab=0,
    )
