"""The performance model: memory per GPU, the minimum GPU count, the layout, and tokens/s on n GPUs.

Pure functions of the model's shape, the GPU's catalog figures and a handful of parameters
(catalog/estimator.yaml; the formulation, fitted values and their meaning are in docs/model.md §1,
the accuracy against measured runs in docs/accuracy.md). A step's time has three parts, reported
separately so explanations can say which of the article's factors binds:
  compute_s  matrix FLOPs (6N per token plus causal attention) against the dense tensor rate at the
             job's precision, at a share of it that grows with the matrices' size;
  memory_s   memory-bound work (norms, activations, residuals, the logits, the optimizer update)
             against memory bandwidth: its share grows as models shrink;
  comm_s     data-parallel traffic over the interconnect tier actually crossed (NVLink, PCIe with or
             without peer-to-peer, the network between servers) that compute does not hide, plus
             tensor-parallel traffic, which sits on the critical path.
A layout is data parallel (DDP, ZeRO-1/2/3 = FSDP) x tensor parallel x pipeline parallel, with a
micro-batch and activation checkpointing; `evaluate` chooses the fastest that fits.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from .catalog import GPU

GB = 1e9
STRATEGIES = ("ddp", "zero1", "zero2", "zero3")
STRATEGY_ALIASES = {"fsdp": "zero3", "full_shard": "zero3", "shard_grad_op": "zero2"}
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16, 32, 64, 128)
MICRO_BATCHES = (128, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1)
MAX_MICRO_BATCH_TOKENS = 65_536       # larger micro-batches buy nothing once the matrices are large
TP_MARGIN = 0.10                      # tensor parallelism only if >10% faster than any layout without it
OPTIMIZER_STEP_BYTES = 32.0           # bytes one AdamW update reads and writes per parameter (master, m, v, grad)


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
        return max(0.0, self.params - (0 if self.tied_embeddings else self.embedding_params))

    @property
    def ffn_width(self) -> int:
        return self.ffn or 4 * self.hidden

    @property
    def gated_mlp(self) -> bool:
        """A SwiGLU-style MLP (Llama): assumed when the MLP width is given and is not 4 x hidden."""
        return self.ffn is not None and self.ffn != 4 * self.hidden

    @property
    def kv_width(self) -> float:
        return self.hidden * (self.kv_heads or self.heads) / self.heads


@dataclass(frozen=True)
class JobSpec:
    """What the estimator needs from a job (the workload's Job, resolved). `strategy`,
    `tensor_parallel` and `pipeline_parallel` fix the layout; None lets `evaluate` choose."""

    model: ModelSpec
    kind: str = "pretrain"                 # pretrain | finetune | lora
    precision: str = "bf16"
    micro_batch: int | None = None
    checkpointing: bool | None = None
    global_batch_tokens: float | None = None
    lora_rank: int = 16
    optimizer: str = "adamw"               # adamw | adamw-8bit
    strategy: str | None = None            # ddp | zero1 | zero2 | zero3 (= fsdp)
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    grad_reduce_bytes: float = 2.0         # bytes per gradient reduced: 2 (bf16), 4 (fp32, FSDP's default)


@dataclass(frozen=True)
class Params:
    """Parameters of the model; values, fit and meaning in catalog/estimator.yaml and docs/model.md §1."""

    matmul_efficiency_max: float           # fitted: share of the GPU's best GEMM rate a step's matmuls reach
    matmul_efficiency_half_hidden: float   # fixed at 0: h0 of an extra size factor h / (h + h0)
    architecture_efficiency: dict          # measured: best GEMM rate / dense peak, by GPU id or family, precision
    attention_efficiency: float | dict     # fitted: causal flash attention's share of the bf16 peak, by family
    memory_bytes_per_layer_element: float  # fitted: bytes moved per activation element (h + f), layer and token
    memory_bytes_per_vocab_element: float  # assumption: bytes moved per logit per token (softmax, loss)
    comm_overlap: float                    # assumption: share of data-parallel traffic compute can hide
    link_efficiency: float                 # assumption: achieved / nominal per-direction link bandwidth
    no_p2p_factor: float                   # assumption: PCIe bandwidth multiplier when peer-to-peer is off
    network_gbps_per_gpu: float | dict     # assumption: GB/s per GPU per direction between servers, by family
    pipeline_virtual_stages: int           # assumption: model chunks per GPU (interleaved 1F1B)
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


@dataclass(frozen=True)
class Layout:
    strategy: str            # ddp | zero1 | zero2 | zero3 (data-parallel sharding)
    dp: int
    tp: int
    pp: int
    micro_batch: int
    checkpointing: bool

    @property
    def count(self) -> int:
        return self.dp * self.tp * self.pp


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
    # LoRA adapters of rank r on the attention projections (q, k, v, o) of every layer: A is
    # in x r, B is r x out; k and v are narrower with grouped-query attention
    per_layer = job.lora_rank * (2 * (m.hidden + m.hidden) + 2 * (m.hidden + m.kv_width))
    return m.layers * per_layer


def activation_bytes_per_layer(job: JobSpec, micro_batch: int, checkpointing: bool, tp: int = 1) -> float:
    """Activations one layer keeps for the backward pass (Korthikanti et al. 2022, §4): with flash
    attention (no s^2 score matrices) and no dropout (p = 0 in LLM pretraining, so the paper's two
    s*b*h masks go), a 4h GELU MLP layer keeps 32*s*b*h bytes of the paper's 34; with full activation
    checkpointing only the layer's 2*s*b*h input. Tensor parallelism with sequence parallelism
    divides both by t."""
    m = job.model
    sb = m.seq_len * micro_batch
    if checkpointing:
        return 2.0 * sb * m.hidden / tp
    attention = 6 * m.hidden + 4 * m.kv_width        # qkv input, q, k, v, projection input (bf16)
    mlp = 2 * m.hidden + (6 if m.gated_mlp else 4) * m.ffn_width   # fc1 input, activation input and output
    norms = 4 * m.hidden
    return sb * (attention + mlp + norms) / tp


def _micro_batches(job: JobSpec, lay: Layout, batch: float) -> float:
    return max(1.0, batch / (lay.dp * lay.micro_batch * job.model.seq_len))


def _memory(job: JobSpec, lay: Layout, p: Params, batch: float) -> dict:
    """Bytes per GPU for one layout: the model's state split by tensor and pipeline parallelism
    and sharded over the data-parallel group by ZeRO, plus activations and overhead."""
    m = job.model
    bpp = bytes_per_param(job)
    split = lay.tp * lay.pp
    stage_params = m.params / split
    stage_train = trainable_params(job) / split
    shard = {"ddp": (1, 1, 1), "zero1": (1, 1, lay.dp), "zero2": (1, lay.dp, lay.dp),
             "zero3": (lay.dp, lay.dp, lay.dp)}[lay.strategy]
    weights = stage_params * bpp["weights"] / shard[0]
    if shard[0] > 1:  # the layer being computed and the next one are gathered in full
        weights += 2 * m.params / m.layers / lay.tp * bpp["weights"]
    gradients = stage_train * bpp["gradients"] / shard[1]
    optimizer = stage_train * bpp["optimizer"] / shard[2]
    layers_here = math.ceil(m.layers / lay.pp)
    in_flight = min(lay.pp, math.ceil(_micro_batches(job, lay, batch)))  # 1F1B: the first stage holds pp micro-batches
    act = activation_bytes_per_layer(job, lay.micro_batch, lay.checkpointing, lay.tp) * layers_here * in_flight
    if lay.checkpointing:  # plus one layer's full activations while it is recomputed
        act += activation_bytes_per_layer(job, lay.micro_batch, False, lay.tp)
    logits = 4.0 * m.seq_len * lay.micro_batch * m.vocab / lay.tp  # fp32 logits for the loss
    return {"weights": weights, "gradients": gradients, "optimizer": optimizer,
            "activations": act + logits, "overhead": p.overhead_gb * GB}


def memory_per_gpu(job: JobSpec, shards: int, micro_batch: int, checkpointing: bool, p: Params,
                   strategy: str = "zero3", tensor_parallel: int = 1, pipeline_parallel: int = 1) -> dict:
    """Bytes per GPU by part, for `shards` data-parallel GPUs (1 = unsharded) with `strategy`."""
    lay = Layout(strategy if shards > 1 else "ddp", shards, tensor_parallel, pipeline_parallel, micro_batch,
                 checkpointing)
    return _memory(job, lay, p, job.global_batch_tokens or default_batch_tokens(job.model, p))


def usable_bytes(gpu: GPU, p: Params) -> float | None:
    cap = gpu.memory_gb.value
    return None if cap is None else cap * GB * p.usable_memory_fraction


# --------------------------------------------------------------------------- time

def mfu_flops_per_token(m: ModelSpec, kind: str = "pretrain") -> float:
    """Model FLOPs per token in the PaLM/MosaicML MFU convention (attention counted non-causally)."""
    return (4.0 if kind == "lora" else 6.0) * m.matmul_params + 12.0 * m.layers * m.seq_len * m.hidden


def _lookup(table, gpu: GPU, default=None):
    """A per-GPU value: the GPU id, then its architecture family ('ampere', 'hopper'), then default."""
    if not isinstance(table, dict):
        return table
    family = (gpu.architecture or "").split()[0].lower() if gpu.architecture else ""
    for key in (gpu.id, family, "default"):
        if key in table:
            return table[key]
    return default


def achievable_fraction(gpu: GPU, precision: str, p: Params) -> float:
    """Best measured GEMM rate / dense peak for this GPU and precision (MAMF, docs/model.md §1)."""
    entry = _lookup(p.architecture_efficiency, gpu, 1.0)
    if isinstance(entry, dict):
        return float(entry.get(precision, entry.get("bf16", 1.0)))
    return float(entry)


def matmul_efficiency(m: ModelSpec, gpu: GPU, p: Params, precision: str = "bf16") -> float:
    """Share of the dense rate the step's matrix multiplies reach: the GPU's best GEMM share x the
    framework's share of it x a saturating function of the matrices' size (the hidden size)."""
    size = m.hidden / (m.hidden + p.matmul_efficiency_half_hidden)
    return p.matmul_efficiency_max * achievable_fraction(gpu, precision, p) * size


def default_batch_tokens(m: ModelSpec, p: Params) -> float:
    for max_params, tokens in p.batch_tokens_by_params:
        if m.params <= float(max_params):
            return float(tokens)
    return float(p.batch_tokens_by_params[-1][1])


def _server_size(gpu: GPU, p: Params) -> int:
    ic = gpu.interconnect
    domain = int(ic.link_domain.value or 1)
    return domain if ic.link != "none" and domain >= p.server_gpus else p.server_gpus


def _group_tier(gpu: GPU, group: int, stride: int, p: Params) -> dict:
    """Links crossed by a collective over `group` GPUs placed `stride` apart (tensor parallel
    innermost, then data parallel, then pipeline): GB/s per direction inside a server and between
    servers, how many of the group share a server, and how many servers it spans."""
    ic = gpu.interconnect
    server = _server_size(gpu, p)
    domain = int(ic.link_domain.value or 1)
    per_server = max(1, min(group, server // stride)) if stride <= server else 1
    servers = math.ceil(group / per_server)
    link = (ic.link_gbps.value or 0) / 2 * p.link_efficiency
    if ic.link != "none" and link > 0 and per_server * stride <= domain:
        intra, name = link, ic.link
    else:
        intra = (ic.pcie_gbps.value or 0) / 2 * p.link_efficiency
        if ic.p2p.value is not True:
            intra *= p.no_p2p_factor
        name = "pcie-p2p" if ic.p2p.value is True else "pcie-via-host"
    if servers > 1:
        name += "+network"
    net = float(_lookup(p.network_gbps_per_gpu, gpu, 25.0))
    return {"tier": name, "intra_gbps": intra, "network_gbps": net, "per_server": per_server, "servers": servers}


def _collective_seconds(volume: float, tier: dict) -> float:
    """Ring collective moving `volume` bytes per GPU (hierarchically: inside the server, then each
    GPU's share over its own network link)."""
    k, s = tier["per_server"], tier["servers"]
    t = 0.0
    if k > 1 and tier["intra_gbps"] > 0:
        t += (k - 1) / k * volume / (tier["intra_gbps"] * GB)
    if s > 1:
        t += (s - 1) / s * volume / k / (tier["network_gbps"] * GB)
    return t


def _time(job: JobSpec, gpu: GPU, lay: Layout, batch: float, p: Params) -> dict:
    """Seconds per optimizer step, by part, for one layout."""
    m = job.model
    count = lay.count
    peak = gpu.dense_tflops(job.precision) * 1e12
    # fp8 recipes (Transformer Engine) keep attention in bf16
    attn_peak = (gpu.dense_tflops("bf16") or gpu.dense_tflops(job.precision)) * 1e12
    ckpt = 1.0 if lay.checkpointing else 0.0
    passes = (2.0 if job.kind == "lora" else 3.0) + ckpt          # forward, backward (data, weights), recompute
    tokens_per_gpu = batch / count
    imbalance = math.ceil(m.layers / lay.pp) * lay.pp / m.layers  # the slowest pipeline stage sets the pace
    dense = 2.0 * m.matmul_params * passes / (peak * matmul_efficiency(m, gpu, p, job.precision))
    attn_eff = float(_lookup(p.attention_efficiency, gpu, 0.3))
    attention = 2.0 * m.layers * m.seq_len * m.hidden * (3.0 + ckpt) / (attn_peak * attn_eff)
    compute_s = tokens_per_gpu * (dense + attention) * imbalance
    bw = gpu.memory_bandwidth_gbps.value * GB
    elementwise = (p.memory_bytes_per_layer_element * m.layers * (m.hidden + m.ffn_width)
                   + p.memory_bytes_per_vocab_element * m.vocab) * (3.0 + ckpt) / 3.0
    opt_shards = lay.dp if lay.strategy != "ddp" else 1
    optimizer = OPTIMIZER_STEP_BYTES * trainable_params(job) / (lay.tp * lay.pp * opt_shards)
    memory_s = (tokens_per_gpu * elementwise * imbalance + optimizer) / bw
    micro = _micro_batches(job, lay, batch)
    chunks = max(1, min(p.pipeline_virtual_stages, m.layers // lay.pp)) if lay.pp > 1 else 1
    bubble = (lay.pp - 1) / (micro * chunks)
    core = compute_s + memory_s

    # data parallel: gradients (and ZeRO-3's parameter gathers) over the data-parallel group
    dp_s = 0.0
    tier = {"tier": "none"}
    if lay.dp > 1:
        tier = _group_tier(gpu, lay.dp, lay.tp, p)
        grads = job.grad_reduce_bytes * trainable_params(job) / (lay.tp * lay.pp)
        weights = 2.0 * m.params / (lay.tp * lay.pp)
        if lay.strategy in ("ddp", "zero1"):
            volume, window = 2.0 * grads, core / micro * 2.0 / 3.0   # once per step, behind the last backward
        elif lay.strategy == "zero2":
            volume, window = micro * grads + weights, core           # reduce-scatter every micro-batch
        else:
            volume, window = micro * (2.0 * weights + grads), core   # gather twice, reduce-scatter, per micro-batch
        raw = _collective_seconds(volume, tier)
        dp_s = max(raw - window, (1.0 - p.comm_overlap) * raw)
    # tensor parallel: two all-reduces of the activations per layer forward, two backward (and two
    # more when recomputing); they sit on the critical path
    tp_s = 0.0
    if lay.tp > 1:
        tp_tier = _group_tier(gpu, lay.tp, 1, p)
        per_token = (4.0 + 2.0 * ckpt) * 2.0 * (lay.tp - 1) / lay.tp * 2.0 * m.hidden
        tp_s = (batch / lay.dp) * math.ceil(m.layers / lay.pp) * per_token / (tp_tier["intra_gbps"] * GB)
        if tier["tier"] == "none":
            tier = tp_tier
    if lay.pp > 1 and tier["tier"] == "none":
        tier = _group_tier(gpu, lay.pp, lay.tp * lay.dp, p)
    return {"compute_s": compute_s * (1 + bubble), "memory_s": memory_s * (1 + bubble), "comm_s": dp_s + tp_s,
            "bubble": bubble, "tier": tier["tier"], "micro_batches": micro}


# --------------------------------------------------------------------------- layouts

def _strategy(name: str | None) -> str | None:
    if name is None:
        return None
    return STRATEGY_ALIASES.get(name.lower(), name.lower())


def _parallel_sizes(job: JobSpec, gpu: GPU, p: Params) -> tuple[list[int], list[int]]:
    """Tensor-parallel sizes (within a server, dividing the heads) and pipeline sizes to consider."""
    m = job.model
    server = _server_size(gpu, p)
    tps = [job.tensor_parallel] if job.tensor_parallel else [
        t for t in TENSOR_PARALLEL if t <= server and m.heads % t == 0]
    pps = [job.pipeline_parallel] if job.pipeline_parallel else [q for q in PIPELINE_PARALLEL if q <= m.layers]
    return tps, pps


def _options(job: JobSpec, gpu: GPU, count: int, p: Params) -> list[tuple[str, int, int, int]]:
    """(strategy, tp, pp, dp) combinations for `count` GPUs, honouring what the job fixes. When
    tp x pp does not divide `count` the remainder idles (5 GPUs can run tensor parallelism 2 on
    4); such combinations come last, so they win only by being faster."""
    tps, pps = _parallel_sizes(job, gpu, p)
    strategies = [_strategy(job.strategy)] if job.strategy else list(STRATEGIES)
    out = []
    for t in tps:
        for q in pps:
            dp = count // (t * q)
            if dp < 1 or (count % (t * q) and (job.tensor_parallel or job.pipeline_parallel)):
                continue
            for s in strategies:
                if dp == 1 and s != strategies[0] and job.strategy is None:
                    continue  # sharding over one GPU is no sharding
                out.append((s, t, q, dp))
    return sorted(out, key=lambda c: c[1] * c[2] * c[3] < count)  # stable: exact combinations first


def _micro_batch_options(job: JobSpec, dp: int, batch: float) -> list[int]:
    if job.micro_batch:
        return [job.micro_batch]
    s = job.model.seq_len
    cap = max(1.0, min(MAX_MICRO_BATCH_TOKENS / s, batch / (dp * s)))
    return [b for b in MICRO_BATCHES if b <= cap] or [1]


def _fitting(job: JobSpec, gpu: GPU, count: int, p: Params, batch: float, combos) -> list[Layout]:
    """For each (strategy, tp, pp) and checkpointing choice, the largest micro-batch that fits
    (with pipelining every one that fits: smaller ones shrink the bubble)."""
    cap = usable_bytes(gpu, p)
    ckpts = [job.checkpointing] if job.checkpointing is not None else [False, True]
    out = []
    for s, t, q, dp in combos:
        for ckpt in ckpts:
            for mb in _micro_batch_options(job, dp, batch):
                lay = Layout(s, dp, t, q, mb, ckpt)
                if sum(_memory(job, lay, p, batch).values()) <= cap:
                    out.append(lay)
                    if q == 1:
                        break
    return out


def _batch(job: JobSpec, lay: Layout, p: Params) -> float:
    batch = job.global_batch_tokens or default_batch_tokens(job.model, p)
    return max(batch, lay.dp * lay.micro_batch * job.model.seq_len)


def _best(job: JobSpec, gpu: GPU, layouts: list[Layout], p: Params):
    """The fastest layout; a more complex one (listed later) must be over 1% faster to win."""
    best = None
    for lay in layouts:
        t = _time(job, gpu, lay, _batch(job, lay, p), p)
        tps = _batch(job, lay, p) / (t["compute_s"] + t["memory_s"] + t["comm_s"])
        if best is None or tps > best[2] * 1.01:
            best = (lay, t, tps)
    return best


def choose_layout(job: JobSpec, gpu: GPU, count: int, p: Params):
    """The fastest layout that fits on `count` GPUs, as (layout, times, tokens/s, needs_tensor_parallel),
    or None. Pipeline parallelism is tried only when nothing fits without it. Tensor parallelism is
    chosen only when the job cannot run without it or runs more than TP_MARGIN slower; over PCIe
    without peer-to-peer, only when no layout without it (pipelined or not) fits."""
    if usable_bytes(gpu, p) is None:
        return None
    base = job.global_batch_tokens or default_batch_tokens(job.model, p)
    combos = _options(job, gpu, count, p)
    p2p = gpu.interconnect.p2p.value is True or gpu.interconnect.link != "none"
    if p2p:
        phases = [(None, False), (None, True)]
    else:
        phases = [(False, False), (False, True), (True, False), (True, True)]
    for tensor, pipeline in phases:
        stage = [c for c in combos if (c[2] > 1) == pipeline and (tensor is None or (c[1] > 1) == tensor)]
        fits = _fitting(job, gpu, count, p, base, stage) if stage else []
        if not fits:
            continue
        no_tp = _best(job, gpu, [lay for lay in fits if lay.tp == 1], p)
        with_tp = _best(job, gpu, [lay for lay in fits if lay.tp > 1], p)
        if no_tp and (with_tp is None or with_tp[2] <= no_tp[2] * (1 + TP_MARGIN)):
            return no_tp + (False,)
        if job.tensor_parallel:  # fixed by the caller: would the job run (well) without it?
            alt = choose_layout(replace(job, tensor_parallel=1), gpu, count, p)
            return with_tp + (alt is None or with_tp[2] > alt[2] * (1 + TP_MARGIN),)
        return with_tp + (True,)
    return None


def _frugal_fits(job: JobSpec, gpu: GPU, dp: int, t: int, q: int, p: Params, cap: float, batch: float) -> bool:
    """Does the least memory-hungry layout with this (dp, tp, pp) fit?"""
    strategies = [_strategy(job.strategy)] if job.strategy else ["zero3" if dp > 1 else "ddp"]
    ckpt = job.checkpointing if job.checkpointing is not None else True
    mb = job.micro_batch or 1
    return any(sum(_memory(job, Layout(s, dp, t, q, mb, ckpt), p, batch).values()) <= cap for s in strategies)


def min_gpus(job: JobSpec, gpu: GPU, p: Params, limit: int = 100_000) -> int | None:
    """Smallest GPU count on which some layout holds the job, or None (within `limit`)."""
    cap = usable_bytes(gpu, p)
    if cap is None:
        return None
    batch = job.global_batch_tokens or default_batch_tokens(job.model, p)
    tps, pps = _parallel_sizes(job, gpu, p)
    best = None
    for t in tps:
        for q in pps:
            top = limit // (t * q)
            if top < 1 or not _frugal_fits(job, gpu, top, t, q, p, cap, batch):
                continue
            lo, hi = 1, top
            while lo < hi:  # memory per GPU falls as the data-parallel group grows
                mid = (lo + hi) // 2
                if _frugal_fits(job, gpu, mid, t, q, p, cap, batch):
                    hi = mid
                else:
                    lo = mid + 1
            n = lo * t * q
            if best is None or n < best:
                best = n
    return best


# --------------------------------------------------------------------------- the estimate

def evaluate(job: JobSpec, gpu: GPU, count: int, p: Params) -> Estimate:
    """Memory and speed of `job` on `count` GPUs of type `gpu`, in the fastest layout that fits."""
    m = job.model
    peak = gpu.dense_tflops(job.precision)
    notes = []
    if m.shape_inferred:
        notes.append("layers and hidden size were inferred from the parameter count; give them for a better estimate")
    if m.params < 2 * m.embedding_params and not m.tied_embeddings:
        notes.append(f"{m.params:.3g} parameters hardly cover untied input and output embeddings of "
                     f"{m.vocab:,} x {m.hidden:,}: check params, vocab and hidden")
    empty = dict(gpu=gpu.id, gpu_count=count, memory_per_gpu_gb=0.0, tokens_per_s=0.0, tokens_per_s_per_gpu=0.0,
                 mfu=0.0, step_breakdown={"compute_s": 0.0, "memory_s": 0.0, "comm_s": 0.0},
                 memory_breakdown={}, layout={}, binding="none", notes=notes)
    if not peak:
        return Estimate(fits=False, reason=f"{gpu.name} has no {job.precision} tensor rate in the catalog", **empty)
    if gpu.memory_bandwidth_gbps.value is None or gpu.memory_gb.value is None:
        return Estimate(fits=False, reason=f"{gpu.name}'s memory size or bandwidth is unknown", **empty)
    chosen = choose_layout(job, gpu, count, p)
    if chosen is None:
        tp = max([t for t in TENSOR_PARALLEL if count % t == 0 and m.heads % t == 0], default=1)
        batch = job.global_batch_tokens or default_batch_tokens(m, p)
        lay = Layout("zero3" if count > tp else "ddp", max(1, count // tp), tp, 1, job.micro_batch or 1, True)
        need = sum(_memory(job, lay, p, batch).values()) / GB
        empty["memory_per_gpu_gb"] = round(need, 3)
        split = f" sharded over {count} GPUs" + (f" with tensor parallelism {tp}" if tp > 1 else "")
        return Estimate(fits=False, reason=(
            f"needs {need:.1f} GB per GPU even{split} and checkpointing; {gpu.name} has "
            f"{gpu.memory_gb.value:g} GB"), **empty)
    lay, t, tps, needs_tp = chosen
    batch = _batch(job, lay, p)
    mem = _memory(job, lay, p, batch)
    parts = {"compute": t["compute_s"], "memory_bandwidth": t["memory_s"], "interconnect": t["comm_s"]}
    binding = max(parts, key=parts.get)
    mfu = tps / count * mfu_flops_per_token(m, job.kind) / (peak * 1e12)
    if lay.count < count:
        notes.append(f"{count - lay.count} of {count} GPUs idle: tensor x pipeline parallelism "
                     f"{lay.tp} x {lay.pp} on {lay.count} is faster than any layout using all {count}")
    if needs_tp and gpu.interconnect.p2p.value is not True and gpu.interconnect.link == "none":
        notes.append(f"only fits with tensor parallelism {lay.tp}, whose per-layer all-reduces cross PCIe "
                     f"without peer-to-peer on {gpu.name}")
    if lay.pp > 1:
        notes.append(f"pipeline parallelism {lay.pp}: {100 * t['bubble']:.0f}% of each step is pipeline bubble")
    strategy = "single" if count == 1 else lay.strategy
    layout = {"strategy": strategy, "shards": lay.dp if lay.strategy == "zero3" else 1,
              "micro_batch": lay.micro_batch, "checkpointing": lay.checkpointing, "data_parallel": lay.dp,
              "tensor_parallel": lay.tp, "pipeline_parallel": lay.pp, "needs_tensor_parallel": needs_tp,
              "idle_gpus": count - lay.count,
              "gradient_accumulation": round(t["micro_batches"], 2), "pipeline_bubble": round(t["bubble"], 4),
              "interconnect": t["tier"], "global_batch_tokens": batch}
    return Estimate(
        gpu=gpu.id, gpu_count=count, fits=True,
        memory_per_gpu_gb=round(sum(mem.values()) / GB, 3),
        tokens_per_s=tps, tokens_per_s_per_gpu=tps / count, mfu=mfu,
        step_breakdown={k: t[k] for k in ("compute_s", "memory_s", "comm_s")},
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
             optimizer: str = "adamw", lora_rank: int = 16, strategy: str | None = None,
             tensor_parallel: int | None = None, pipeline_parallel: int | None = None,
             catalog=None) -> dict:
    """advisor.estimate(...): memory and speed of one job on `count` GPUs, as the JSON of
    `advisor estimate --format json` (DESIGN.md §5). `catalog` is a Catalog, a path to an
    override file, or None for the built-in one. `strategy` (ddp, zero1, zero2, zero3 or fsdp),
    `tensor_parallel` and `pipeline_parallel` fix the layout; by default the fastest is chosen."""
    from .candidates import spec_from_flags
    from .catalog import Catalog, load_catalog

    if not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog)
    spec = spec_from_flags(catalog, model=model, params=params, layers=layers, hidden=hidden, seq_len=seq_len,
                           precision=precision, kind=kind, micro_batch=micro_batch, checkpointing=checkpointing,
                           global_batch_tokens=global_batch_tokens, optimizer=optimizer, lora_rank=lora_rank)
    spec = replace(spec, strategy=_check_layout_flags(spec, count, strategy, tensor_parallel, pipeline_parallel),
                   tensor_parallel=tensor_parallel, pipeline_parallel=pipeline_parallel)
    p = params_from(catalog)
    g = catalog.gpu(gpu)
    e = evaluate(spec, g, count, p)
    return {
        "gpu": e.gpu, "gpu_count": e.gpu_count, "fits": e.fits, "memory_per_gpu_gb": e.memory_per_gpu_gb,
        "tokens_per_s": round(e.tokens_per_s, 1), "tokens_per_s_per_gpu": round(e.tokens_per_s_per_gpu, 1),
        "mfu": round(e.mfu, 4),
        "step_breakdown": {k: round(v, 6) for k, v in e.step_breakdown.items()},
        "memory_breakdown_gb": e.memory_breakdown, "layout": e.layout, "binding": e.binding,
        "min_gpus": min_gpus(spec, g, p), "dense_tflops": g.dense_tflops(precision),
        "model": {"params": spec.model.params, "layers": spec.model.layers, "hidden": spec.model.hidden,
                  "seq_len": spec.model.seq_len, "shape_inferred": spec.model.shape_inferred},
        "job": {"kind": spec.kind, "precision": spec.precision, "optimizer": spec.optimizer,
                "trainable_params": trainable_params(spec)},
        "reason": e.reason, "notes": e.notes,
    }


def _check_layout_flags(spec: JobSpec, count: int, strategy, tp, pp) -> str | None:
    """Reject a fixed layout that cannot exist, naming the flag (exit 2)."""
    from .errors import InputError

    name = _strategy(strategy)
    if name is not None and name not in STRATEGIES:
        raise InputError(f"--strategy: {strategy!r} is not one of {', '.join(STRATEGIES)} (or fsdp)",
                         field="strategy")
    m = spec.model
    if tp is not None and (tp < 1 or m.heads % tp):
        raise InputError(f"--tensor-parallel: {tp} must divide the model's {m.heads} attention heads",
                         field="tensor_parallel")
    if pp is not None and (pp < 1 or pp > m.layers):
        raise InputError(f"--pipeline-parallel: {pp} must be between 1 and the model's {m.layers} layers",
                         field="pipeline_parallel")
    if count % ((tp or 1) * (pp or 1)):
        raise InputError(f"--count {count} is not a multiple of tensor x pipeline parallelism "
                         f"({tp or 1} x {pp or 1})", field="count")
    return name
