"""The performance model: memory per GPU, the minimum GPU count, and tokens/s for n GPUs.

Pure functions of the model's shape, the GPU's catalog figures and a handful of fitted
parameters (catalog/estimator.yaml, documented in docs/model.md). A step's time has three
parts, reported separately so explanations can say which of the article's factors binds:
  compute_s  matrix FLOPs against the dense tensor rate, at an efficiency that grows with
             the matrices' size;
  memory_s   memory-bound work (norms, activations, softmax over the vocabulary, the optimizer
             update) against memory bandwidth: its share grows as models shrink;
  comm_s     gradient/parameter traffic over the interconnect tier actually crossed (NVLink,
             PCIe with or without peer-to-peer, the network between servers), after overlap.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from .catalog import GPU

GB = 1e9


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

    @property
    def embedding_params(self) -> float:
        return self.vocab * self.hidden

    @property
    def matmul_params(self) -> float:
        """Parameters that take part in a matrix multiply per token (the input lookup does not;
        a tied output head does)."""
        return self.params - (0 if self.tied_embeddings else self.embedding_params)


@dataclass(frozen=True)
class JobSpec:
    """What the estimator needs from a job (the workload's Job, resolved)."""

    model: ModelSpec
    kind: str = "pretrain"                 # pretrain | finetune | lora
    precision: str = "bf16"
    micro_batch: int | None = None
    checkpointing: bool | None = None
    global_batch_tokens: float | None = None
    lora_rank: int = 16
    optimizer: str = "adamw"               # adamw | adamw-8bit


@dataclass(frozen=True)
class Params:
    """Free parameters of the model; values live in catalog/estimator.yaml with their fit."""

    matmul_efficiency_max: float           # best fraction of the dense rate a large GEMM reaches
    matmul_efficiency_half_hidden: float   # hidden size at which half of that is reached
    architecture_efficiency: dict          # per-architecture multiplier on the above (fitted)
    memory_bytes_per_layer_element: float  # bytes moved per hidden element per layer per token
    memory_bytes_per_vocab_element: float  # bytes moved per vocabulary entry per token (logits)
    comm_overlap: float                    # fraction of compute time communication can hide behind
    link_efficiency: float                 # achieved / nominal per-direction link bandwidth
    no_p2p_factor: float                   # PCIe bandwidth multiplier when peer-to-peer is off
    network_gbps_per_gpu: float            # inter-server bandwidth per GPU, GB/s per direction
    server_gpus: int                       # GPUs per server when the link domain does not say
    overhead_gb: float                     # CUDA context, allocator fragmentation, buffers
    usable_memory_fraction: float          # share of memory the allocator can actually hand out
    batch_tokens_by_params: list           # [[max_params, global_batch_tokens], ...]


@dataclass
class Estimate:
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

    def to_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------- memory

def bytes_per_param(job: JobSpec) -> dict:
    """Bytes per parameter for weights, gradients and optimizer state (mixed-precision Adam:
    2 + 2 + 12 = 16 unsharded; an 8-bit optimizer keeps 2 bytes of moments instead of 8)."""
    master_and_moments = 4 + (2 if job.optimizer == "adamw-8bit" else 8)
    return {"weights": 2.0, "gradients": 2.0, "optimizer": float(master_and_moments)}


def trainable_params(job: JobSpec) -> float:
    m = job.model
    if job.kind != "lora":
        return m.params
    # LoRA adapters of rank r on the four attention projections of every layer
    return m.layers * 4 * 2 * m.hidden * job.lora_rank


def activation_bytes_per_layer(job: JobSpec, micro_batch: int, checkpointing: bool) -> float:
    """Korthikanti et al. 2022: s*b*h*34 bytes per layer without recomputation (attention scores
    are not stored: flash attention), 2*s*b*h with full activation checkpointing."""
    m = job.model
    sbh = m.seq_len * micro_batch * m.hidden
    return 2.0 * sbh if checkpointing else 34.0 * sbh


def memory_per_gpu(job: JobSpec, shards: int, micro_batch: int, checkpointing: bool, p: Params) -> dict:
    """Bytes per GPU when parameters, gradients and optimizer state are sharded over `shards`
    GPUs (ZeRO-3 / FSDP; 1 = unsharded)."""
    m = job.model
    bpp = bytes_per_param(job)
    train = trainable_params(job)
    weights = m.params * bpp["weights"] / shards
    gradients = train * bpp["gradients"] / shards
    optimizer = train * bpp["optimizer"] / shards
    if shards > 1:  # one layer's full weights are gathered at a time
        weights += m.params / m.layers * bpp["weights"]
    layers_held = m.layers if not checkpointing else m.layers
    act = activation_bytes_per_layer(job, micro_batch, checkpointing) * layers_held
    if checkpointing:  # plus one layer's full activations while it is recomputed
        act += activation_bytes_per_layer(job, micro_batch, False)
    logits = 4.0 * m.seq_len * micro_batch * m.vocab  # fp32 logits for the loss
    return {
        "weights": weights, "gradients": gradients, "optimizer": optimizer,
        "activations": act + logits, "overhead": p.overhead_gb * GB,
    }


def usable_bytes(gpu: GPU, p: Params) -> float | None:
    cap = gpu.memory_gb.value
    return None if cap is None else cap * GB * p.usable_memory_fraction


def choose_layout(job: JobSpec, gpu: GPU, count: int, p: Params) -> dict | None:
    """The cheapest-to-run layout that fits: no sharding if it fits, else ZeRO-3 over all GPUs;
    the largest micro-batch up to 64K tokens; checkpointing only when needed (or asked)."""
    cap = usable_bytes(gpu, p)
    if cap is None:
        return None
    shard_options = [1, count] if count > 1 else [1]
    ckpt_options = [job.checkpointing] if job.checkpointing is not None else [False, True]
    mb_options = [job.micro_batch] if job.micro_batch else [
        b for b in (64, 32, 16, 8, 4, 2, 1) if b * job.model.seq_len <= 65536] or [1]
    for shards in shard_options:
        for ckpt in ckpt_options:
            for mb in mb_options:
                mem = memory_per_gpu(job, shards, mb, ckpt, p)
                if sum(mem.values()) <= cap:
                    return {"strategy": "single" if count == 1 else ("ddp" if shards == 1 else "zero3"),
                            "shards": shards, "micro_batch": mb, "checkpointing": ckpt,
                            "data_parallel": count, "tensor_parallel": 1, "memory": mem}
    return None


def min_gpus(job: JobSpec, gpu: GPU, p: Params, limit: int = 100_000) -> int | None:
    """Smallest GPU count whose memory holds the job (ZeRO-3 over all of them), or None."""
    cap = usable_bytes(gpu, p)
    if cap is None:
        return None
    lo, hi = 1, 1
    while choose_layout(job, gpu, hi, p) is None:
        if hi >= limit:
            return None
        lo, hi = hi + 1, min(hi * 2, limit)
    while lo < hi:  # memory per GPU falls as count grows, so bisect
        mid = (lo + hi) // 2
        if choose_layout(job, gpu, mid, p) is None:
            lo = mid + 1
        else:
            hi = mid
    return hi


# --------------------------------------------------------------------------- time

def flops_per_token(m: ModelSpec) -> float:
    """Training FLOPs per token: 6 per matmul parameter plus causal attention (6*L*s*h)."""
    return 6.0 * m.matmul_params + 6.0 * m.layers * m.seq_len * m.hidden


def mfu_flops_per_token(m: ModelSpec) -> float:
    """FLOPs per token in the PaLM/MosaicML MFU convention (attention counted non-causally)."""
    return 6.0 * m.matmul_params + 12.0 * m.layers * m.seq_len * m.hidden


def matmul_efficiency(m: ModelSpec, gpu: GPU, p: Params) -> float:
    arch = (gpu.architecture or "").split()[0].lower() if gpu.architecture else ""
    factor = p.architecture_efficiency.get(arch, p.architecture_efficiency.get("default", 1.0))
    return p.matmul_efficiency_max * factor * m.hidden / (m.hidden + p.matmul_efficiency_half_hidden)


def default_batch_tokens(m: ModelSpec, p: Params) -> float:
    for max_params, tokens in p.batch_tokens_by_params:
        if m.params <= float(max_params):
            return float(tokens)
    return float(p.batch_tokens_by_params[-1][1])


def interconnect_tier(gpu: GPU, count: int, p: Params) -> dict:
    """Which links an all-reduce over `count` GPUs crosses, with per-direction GB/s."""
    ic = gpu.interconnect
    domain = int(ic.link_domain.value or 1)
    pcie = (ic.pcie_gbps.value or 0) / 2 * p.link_efficiency
    if ic.p2p.value is not True:
        pcie *= p.no_p2p_factor
    link = (ic.link_gbps.value or 0) / 2 * p.link_efficiency
    server = domain if domain > 1 and ic.link != "none" and domain >= p.server_gpus else p.server_gpus
    if count <= 1:
        return {"tier": "none", "intra_gbps": 0.0, "servers": 1, "per_server": 1}
    local = min(count, server)
    servers = math.ceil(count / server)
    if ic.link != "none" and link > 0 and local <= domain:
        intra, name = link, ic.link
    else:
        intra, name = pcie, ("pcie-p2p" if ic.p2p.value is True else "pcie-via-host")
    if servers > 1:
        name += "+network"
    return {"tier": name, "intra_gbps": intra, "servers": servers, "per_server": local,
            "network_gbps": p.network_gbps_per_gpu}


def comm_seconds_per_step(job: JobSpec, gpu: GPU, count: int, layout: dict, p: Params) -> tuple[float, dict]:
    """Unoverlapped communication time of one optimizer step, and the tier used."""
    tier = interconnect_tier(gpu, count, p)
    if count <= 1:
        return 0.0, tier
    grad_bytes = 2.0 * trainable_params(job)
    # all-reduce of gradients (DDP) moves 2x; ZeRO-3 gathers parameters twice and reduce-scatters
    volume = 2.0 * grad_bytes
    if layout["shards"] > 1:
        volume = 2.0 * 2.0 * job.model.params + grad_bytes
    k, m = tier["per_server"], tier["servers"]
    t = (k - 1) / k * volume / (tier["intra_gbps"] * GB) if k > 1 else 0.0
    if m > 1:
        t += (m - 1) / m * volume / k / (tier["network_gbps"] * GB)
    return t, tier


def evaluate(job: JobSpec, gpu: GPU, count: int, p: Params) -> Estimate:
    """Memory and speed of `job` on `count` GPUs of type `gpu`."""
    m = job.model
    peak = gpu.dense_tflops(job.precision)
    notes = []
    if m.shape_inferred:
        notes.append("layers and hidden size were inferred from the parameter count; give them for a better estimate")
    empty = dict(gpu=gpu.id, gpu_count=count, memory_per_gpu_gb=0.0, tokens_per_s=0.0, tokens_per_s_per_gpu=0.0,
                 mfu=0.0, step_breakdown={"compute_s": 0.0, "memory_s": 0.0, "comm_s": 0.0},
                 memory_breakdown={}, layout={}, binding="none", notes=notes)
    if not peak:
        return Estimate(fits=False, reason=f"{gpu.name} has no {job.precision} tensor rate in the catalog", **empty)
    if gpu.memory_bandwidth_gbps.value is None or gpu.memory_gb.value is None:
        return Estimate(fits=False, reason=f"{gpu.name}'s memory size or bandwidth is unknown", **empty)
    layout = choose_layout(job, gpu, count, p)
    if layout is None:
        full = memory_per_gpu(job, count, 1, True, p)
        need = sum(full.values()) / GB
        empty["memory_per_gpu_gb"] = round(need, 3)
        return Estimate(fits=False, reason=(
            f"needs {need:.1f} GB per GPU even sharded over {count} with checkpointing; "
            f"{gpu.name} has {gpu.memory_gb.value:g} GB"), **empty)
    mem = layout.pop("memory")
    batch = job.global_batch_tokens or default_batch_tokens(m, p)
    batch = max(batch, count * layout["micro_batch"] * m.seq_len)
    tokens_per_gpu = batch / count
    recompute = 4.0 / 3.0 if layout["checkpointing"] else 1.0
    eff = matmul_efficiency(m, gpu, p)
    compute_s = tokens_per_gpu * flops_per_token(m) * recompute / (peak * 1e12 * eff)
    elementwise = (p.memory_bytes_per_layer_element * m.layers * m.hidden
                   + p.memory_bytes_per_vocab_element * m.vocab) * tokens_per_gpu
    optimizer_traffic = 2.0 * 16.0 * trainable_params(job) / layout["shards"]
    memory_s = (elementwise + optimizer_traffic) / (gpu.memory_bandwidth_gbps.value * GB)
    comm_raw, tier = comm_seconds_per_step(job, gpu, count, layout, p)
    comm_s = max(0.0, comm_raw - p.comm_overlap * (compute_s + memory_s))
    step = compute_s + memory_s + comm_s
    tps = batch / step
    parts = {"compute": compute_s, "memory_bandwidth": memory_s, "interconnect": comm_s}
    binding = max(parts, key=parts.get)
    mfu = tps / count * mfu_flops_per_token(m) / (peak * 1e12)
    layout["interconnect"] = tier["tier"]
    layout["global_batch_tokens"] = batch
    return Estimate(
        gpu=gpu.id, gpu_count=count, fits=True,
        memory_per_gpu_gb=round(sum(mem.values()) / GB, 3),
        tokens_per_s=tps, tokens_per_s_per_gpu=tps / count, mfu=mfu,
        step_breakdown={"compute_s": compute_s, "memory_s": memory_s, "comm_s": comm_s},
        memory_breakdown={k: round(v / GB, 3) for k, v in mem.items()},
        layout=layout, binding=binding, notes=notes)


def params_from(catalog) -> Params:
    """The estimator's parameters from the catalog (catalog/estimator.yaml, or an override)."""
    from .errors import InputError

    try:
        return Params(**catalog.estimator)
    except TypeError as exc:
        raise InputError(f"catalog estimator parameters: {exc}", field="estimator") from None


def estimate(*, gpu: str, count: int = 1, model: str | None = None, params: float | str | None = None,
             layers: int | None = None, hidden: int | None = None, seq_len: int | None = None,
             precision: str = "bf16", kind: str = "pretrain", micro_batch: int | None = None,
             checkpointing: bool | None = None, global_batch_tokens: float | str | None = None,
             catalog=None) -> dict:
    """advisor.estimate(...): memory and speed of one job on `count` GPUs, as the JSON of
    `advisor estimate --format json` (DESIGN.md §5). `catalog` is a Catalog, a path to an
    override file, or None for the built-in one."""
    from .candidates import job_spec, resolve_model
    from .catalog import Catalog, load_catalog
    from .errors import InputError
    from .workload import Job

    if not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog)
    if (model is None) == (params is None):
        raise InputError("give either --model PRESET or --params N (with optional --layers/--hidden/--seq-len)",
                         field="model")
    shape = model if model is not None else {k: v for k, v in dict(
        params=params, layers=layers, hidden=hidden, seq_len=seq_len).items() if v is not None}
    try:
        job = Job(model=shape, tokens=1e9, precision=precision, kind=kind, micro_batch=micro_batch,
                  checkpointing=checkpointing, global_batch_tokens=global_batch_tokens,
                  seq_len=seq_len if model is not None else None)
    except Exception as exc:  # pydantic's ValidationError, reworded for flags
        from pydantic import ValidationError
        if not isinstance(exc, ValidationError):
            raise
        from .errors import describe, first_error
        err = first_error(exc.errors(), lambda loc: tuple(p for p in loc if p not in ("str", "ModelShape")))
        field = ".".join(str(p) for p in err["loc"] if p not in ("str", "ModelShape"))
        raise InputError(f"--{field.replace('model.', '').replace('_', '-')}: {describe(err)}", field=field) from None
    spec = job_spec(job, resolve_model(job, catalog, "estimate"))
    p = params_from(catalog)
    g = catalog.gpu(gpu)
    e = evaluate(spec, g, count, p)
    out = {
        "gpu": e.gpu, "gpu_count": e.gpu_count, "fits": e.fits, "memory_per_gpu_gb": e.memory_per_gpu_gb,
        "tokens_per_s": round(e.tokens_per_s, 1), "tokens_per_s_per_gpu": round(e.tokens_per_s_per_gpu, 1),
        "mfu": round(e.mfu, 4),
        "step_breakdown": {k: round(v, 6) for k, v in e.step_breakdown.items()},
        "memory_breakdown_gb": e.memory_breakdown, "layout": e.layout, "binding": e.binding,
        "min_gpus": min_gpus(spec, g, p), "dense_tflops": g.dense_tflops(precision),
        "model": {"params": spec.model.params, "layers": spec.model.layers, "hidden": spec.model.hidden,
                  "seq_len": spec.model.seq_len, "shape_inferred": spec.model.shape_inferred},
        "reason": e.reason, "notes": e.notes,
    }
    return out
