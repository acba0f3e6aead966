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
import operator
from collections.abc import Callable
from typing import Any, TypeVar

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.data.evidence import family_of, generation_of
from advisor.perf.jobspec import JobSpec, ModelSpec
from advisor.perf.memory import GB, Layout, job_figures, micro_batches_per_step

T = TypeVar("T")

DEQUANT_BYTES = 4.127 / 8 + 2.0 + 2.0  # read NF4 weights, write and re-read them in bf16, per parameter and pass
OPTIMIZER_STEP_BYTES = 32.0  # bytes one AdamW update reads and writes per parameter (master, m, v, grad)


def mfu_flops_per_token(m: ModelSpec, kind: str = "pretrain") -> float:
    """Model FLOPs per token in the PaLM/MosaicML MFU convention (attention counted non-causally)."""
    return m.matmul_flops_per_token(kind) + 12.0 * m.layers * m.seq_len * m.hidden


_LOOKUPS: dict[tuple, tuple] = {}  # (table id, GPU id, architecture) -> (table, value or _NONE)
_NONE = object()


def generation(gpu: GPU) -> str:
    """The GPU's generation as the estimator's tables key it: volta, turing, ampere, ada, hopper,
    blackwell, cdna2, cdna3, rdna3, gaudi (advisor/data/evidence.py `generation_of`)."""
    return generation_of(gpu.architecture)


def gpu_value(table: Any, gpu: GPU, default: Any = None) -> Any:
    """A per-GPU value: the GPU id, then its generation ('ampere', 'cdna3'), its family word
    ('cdna'), then default. `table` is an estimator.yaml entry as parsed: a number, or a mapping of
    those keys to numbers or to {precision: number} mappings."""
    if not isinstance(table, dict):
        return table
    key = (id(table), gpu.id, gpu.architecture)
    hit = _LOOKUPS.get(key)
    if hit is None or hit[0] is not table:  # (the table is kept in the entry, so its id stays unique)
        hit = _LOOKUPS[key] = (table, _find(table, gpu))
    return default if hit[1] is _NONE else hit[1]


def _find(table: dict[str, Any], gpu: GPU) -> Any:
    gen = generation(gpu)
    for key in (gpu.id, gen, family_of(gen), "default"):
        if key in table:
            return table[key]
    return _NONE


def by_precision(entry: Any, precision: str, fp8_ratio: float = 1.0) -> float | None:
    """A {bf16: x, fp8: y} entry at `precision`; fp8 falls back to bf16 x `fp8_ratio`."""
    if not isinstance(entry, dict):
        return None if entry is None else float(entry)
    if precision in entry:
        return float(entry[precision])
    if precision == "fp8" and "bf16" in entry:
        return float(entry["bf16"]) * fp8_ratio
    return float(entry["bf16"]) if "bf16" in entry else None


def achievable_fraction(gpu: GPU, precision: str, p: Params) -> float:
    """Best measured GEMM rate / dense peak for this GPU and precision (MAMF, docs/model.md §1)."""
    v = by_precision(gpu_value(p.architecture_efficiency, gpu, 1.0), precision)
    return 1.0 if v is None else v


def framework_efficiency(gpu: GPU, precision: str, p: Params) -> float:
    """Share of the GPU's MAMF a training step's matrix multiplies reach, by generation and
    precision (fitted where calibration rows exist, the shared default elsewhere), times the
    vendor software factor (AMD, Intel: docs/model.md §1.5)."""
    table = p.framework_efficiency or {"default": {"bf16": p.matmul_efficiency_max}}
    entry = gpu_value(table, gpu, table.get("default"))
    v = by_precision(entry, precision, p.fp8_framework_ratio)
    if v is None:
        v = by_precision(table["default"], precision, p.fp8_framework_ratio) or 1.0
    return v * software_factor(gpu, p)


def software_factor(gpu: GPU, p: Params) -> float:
    return float(gpu_value(p.software_factor or {}, gpu, 1.0))


def era_factor(job: JobSpec, p: Params) -> float:
    """Compute-rate factor of an older software stack a calibration row ran (catalog/estimator.yaml
    `software_era_factor`); 1 for today's software, which every user estimate assumes."""
    if not job.software_era:
        return 1.0
    return float((p.software_era_factor or {}).get(job.software_era, 1.0))


def elementwise_share(job: JobSpec, p: Params) -> float:
    """Share of the norms', residuals' and activations' traffic a step moves: all of it in eager code;
    `fused_memory_share` when its elementwise work is fused into few kernels (torch.compile, llm.c's
    hand-fused kernels, Transformer Engine's fused norm-GEMM and bias-activation kernels: JobSpec
    `fused_elementwise`)."""
    return p.fused_memory_share if job.fused_elementwise else 1.0


def elementwise_bytes(job: JobSpec, p: Params, ckpt: Any) -> Any:
    """Memory-bound bytes per token of one model replica (`ckpt` 1 when recomputing the forward): the
    fitted traffic per activation element (h + f) per layer and of the logits, at the share fusion
    leaves, plus an fp8 run's quantization of every GEMM input and gradient
    (`fp8_cast_bytes_per_layer_element`). Fusion does not remove the quantization: each fp8 GEMM
    operand is written in fp8 in the layout its GEMM reads, and on Hopper, whose fp8 GEMMs take only
    the TN layout, a second transposed copy for the backward (Transformer Engine, "Performance
    considerations: handling transposes"; cuBLASLt: "A must be transposed and B non-transposed")."""
    m = job.model
    fusable = (
        p.memory_bytes_per_layer_element * m.layers * (m.hidden + m.ffn_width)
        + p.memory_bytes_per_vocab_element * m.vocab
    ) * elementwise_share(job, p)
    cast = p.fp8_cast_bytes_per_layer_element * m.layers * (m.hidden + m.ffn_width) if job.precision == "fp8" else 0.0
    return (fusable + cast) * (3.0 + ckpt) / 3.0


def tp_exposed(job: JobSpec, p: Params) -> float:
    """Share of the tensor-parallel all-reduces left on the critical path: all of it, unless the run
    overlaps them with its GEMMs (Megatron-Core/Transformer Engine userbuffers `tp_comm_overlap`,
    torchtitan async TP: JobSpec `tp_overlap`), which hides `tp_comm_overlap` of it."""
    return 1.0 - p.tp_comm_overlap if job.tp_overlap else 1.0


def tp_gather_share(job: JobSpec) -> float:
    """Share of the bf16 tensor-parallel traffic a run moves. Each all-reduce of the activations is,
    under sequence parallelism, an all-gather and a reduce-scatter of 2 bytes an element; a run that
    casts to fp8 before gathering (`fp8_tp_gather`: torchao's Float8ColwiseParallel,
    Float8RowwiseParallel and PrepareFloat8ModuleInput, which torchtitan applies with Float8 and TP;
    Transformer Engine's LayerNormLinear, LayerNormMLP and row-parallel gradient gathers) gathers the
    activations forward and their gradients backward at 1 byte, while the reduce-scatters of the
    outputs and of the input gradients stay in bf16: (1 + 2) / (2 + 2)."""
    return (1.0 + 2.0) / (2.0 + 2.0) if job.fp8_tp_gather and job.precision == "fp8" else 1.0


def tp_bytes_per_token(job: JobSpec, p: Params, tp: Any, ckpt: Any) -> Any:
    """Bytes one token moves per layer through the tensor-parallel group's collectives on the critical
    path: four all-reduces of the activations (two forward, two backward; six when recomputing), a ring
    all-reduce moving 2 (tp - 1) / tp of its 2-byte elements (`tp_gather_share` of them with fp8 gathers,
    `tp_exposed` not hidden behind GEMMs). `tp`, `ckpt` (1.0 recomputing, else 0.0): numbers, or numpy
    arrays that broadcast (perf/layout_grid.py's whole grid): one order of operations, equal to the bit."""
    moved = tp_exposed(job, p) * tp_gather_share(job)
    return (4.0 + 2.0 * ckpt) * 2.0 * (tp - 1) / tp * 2.0 * job.model.hidden * moved


def op_sac_recompute_fraction(m: ModelSpec, precision: str = "bf16") -> float:
    """Share of a layer's forward matmul FLOPs torchtitan's per-op selective activation
    checkpointing recomputes. Its policy saves every compute op's output "except every second mm"
    (torchtitan parallelize_llama.py `_save_list`), counting aten.mm calls in forward order wq, wk,
    wv, wo, w1, w3, w2 (w1, w2 without a gated MLP): wk, wo and w3 (w2) are recomputed. Float8
    linears call aten._scaled_mm, which that list does not hold: every forward matmul is recomputed."""
    if precision == "fp8":
        return 1.0
    h, kv, f = float(m.hidden), float(m.kv_width), float(m.ffn_width)
    mlp = 3.0 if m.gated_mlp else 2.0
    total = 2.0 * h * h + 2.0 * h * kv + mlp * h * f
    return (h * kv + h * h + h * f) / total


def matmul_efficiency(m: ModelSpec, gpu: GPU, p: Params, precision: str = "bf16", tp: int = 1) -> float:
    """Share of the dense rate the step's matrix multiplies reach: the GPU's best GEMM share x the
    framework's share of it (by generation and precision) x a saturating function of the
    matrices' size (the hidden size per tensor-parallel shard, h / t)."""
    width = m.hidden / tp  # tensor parallelism shards the matrices: each GPU's are narrower
    size = width / (width + p.matmul_efficiency_half_hidden)
    return achievable_fraction(gpu, precision, p) * framework_efficiency(gpu, precision, p) * size


def server_size(gpu: GPU, p: Params) -> int:
    ic = gpu.interconnect
    domain = int(ic.link_domain.value or 1)
    return domain if ic.link != "none" and domain >= p.server_gpus else p.server_gpus


def _group_tier(gpu: GPU, group: int, stride: int, p: Params) -> dict:
    """Links crossed by a collective over `group` GPUs placed `stride` apart (tensor parallel
    innermost, then data parallel, then pipeline): GB/s per direction inside a server and between
    servers, how many of the group share a server, and how many servers it spans."""
    ic = gpu.interconnect
    server = server_size(gpu, p)
    domain = int(ic.link_domain.value or 1)
    per_server = max(1, min(group, server // stride)) if stride <= server else 1
    servers = math.ceil(group / per_server)
    efficiency = float(gpu_value(p.link_efficiency, gpu))  # the collective library's share of the link rate
    link = (ic.link_gbps.value or 0) / 2 * efficiency
    name: str
    if ic.link != "none" and link > 0 and per_server * stride <= domain:
        intra, name = link, ic.link
    else:
        intra = (ic.pcie_gbps.value or 0) / 2 * efficiency
        if ic.p2p.value is not True:
            intra *= p.no_p2p_factor
        name = "pcie-p2p" if ic.p2p.value is True else "pcie-via-host"
    if servers > 1:
        name += "+network"
    net = default_network_gbps(gpu, p)
    return {"tier": name, "intra_gbps": intra, "network_gbps": net, "per_server": per_server, "servers": servers}


def default_network_gbps(gpu: GPU, p: Params) -> float:
    """GB/s per GPU per direction between servers that the estimate assumes (estimator.yaml
    `network_gbps_per_gpu`: the GPU's entry, else the table's `default`, which the catalog check
    requires) where a rental offer publishes no fabric bandwidth to use instead."""
    return float(gpu_value(p.network_gbps_per_gpu, gpu))


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


_ONCE: dict[tuple, tuple] = {}  # the layout search's per-GPU figures, computed once per (objects, values)


def computed_once(fn: Callable[..., T], objs: tuple[object, ...], values: tuple[object, ...], *args: Any) -> T:
    """fn(*args), remembered by the identity of `objs` (kept in the entry, so their ids stay
    unique) and `values`: the layout search asks the same per-GPU figures ~10^5 times."""
    key = (fn, *map(id, objs), *values)
    hit = _ONCE.get(key)
    if hit is None or not all(map(operator.is_, hit[0], objs)):
        if len(_ONCE) > 100_000:
            _ONCE.clear()
        hit = _ONCE[key] = (objs, fn(*args))
    return hit[1]


def _attention_efficiency(gpu: GPU, p: Params, kernel: str) -> float:
    eff = float(gpu_value(p.attention_efficiency, gpu, 0.3)) * software_factor(gpu, p)
    if kernel != "fa2":  # today's kernels (FlashAttention-3 on Hopper) over the calibrated FA2 era
        eff *= float(gpu_value(p.attention_kernel_speedup or {}, gpu, 1.0))
    return eff


def comm_tier(gpu: GPU, group: int, stride: int, p: Params) -> dict:
    return computed_once(_group_tier, (gpu, p), (group, stride), gpu, group, stride, p)


def seconds_per_token(job: JobSpec, gpu: GPU, p: Params, tp: int, checkpointing: bool) -> tuple[float, float]:
    """Seconds per token of the step's matrix multiplies and of its attention, on one GPU."""
    m = job.model
    peak = (gpu.dense_tflops(job.precision) or 0.0) * 1e12  # evaluate() checked the rates exist
    # fp8 recipes (Transformer Engine) keep attention in bf16
    attn_peak = (gpu.dense_tflops("bf16") or gpu.dense_tflops(job.precision) or 0.0) * 1e12
    ckpt = 1.0 if checkpointing else 0.0
    recompute = ckpt or job.recompute_fraction  # full checkpointing reruns every forward matmul, selective AC a share
    passes = (2.0 if job.kind in ("lora", "qlora") else 3.0) + recompute  # forward, backward (data, weights), recompute
    era = era_factor(job, p)
    dense = (
        2.0
        * m.matmul_params
        * passes
        / (
            peak
            * era
            * computed_once(matmul_efficiency, (m, gpu, p), (job.precision, tp), m, gpu, p, job.precision, tp)
        )
    )
    attn_eff = (
        computed_once(_attention_efficiency, (gpu, p), (job.attention_kernel,), gpu, p, job.attention_kernel) * era
    )
    attention = 2.0 * m.layers * m.seq_len * m.hidden * (3.0 + ckpt) / (attn_peak * attn_eff)
    return dense, attention


def _bubble(job: JobSpec, lay: Layout, micro: float, p: Params) -> float:
    """Share of the step the pipeline idles (interleaved 1F1B with `chunks` model chunks per GPU)."""
    virtual = job.virtual_stages or p.pipeline_virtual_stages
    chunks = max(1, min(virtual, job.model.layers // lay.pp)) if lay.pp > 1 else 1
    return (lay.pp - 1) / (micro * chunks)


def _core(
    job: JobSpec, gpu: GPU, lay: Layout, batch: float, p: Params, per_token: tuple[float, float] | None, opt_shards: int
) -> tuple[float, float, float, float, float, float]:
    """The step's compute and memory-bound seconds before the bubble, the bubble, the micro-batches,
    attention seconds per token and tokens per GPU (`opt_shards`: GPUs sharing the optimizer state)."""
    m = job.model
    count = lay.count
    ckpt = 1.0 if lay.checkpointing else 0.0
    tokens_per_gpu = batch / count
    imbalance = math.ceil(m.layers / lay.pp) * lay.pp / m.layers  # the slowest pipeline stage sets the pace
    dense, attention = per_token or seconds_per_token(job, gpu, p, lay.tp, lay.checkpointing)
    compute_s = tokens_per_gpu * (dense + attention) * imbalance
    bw = (gpu.memory_bandwidth_gbps.value or 0.0) * GB
    elementwise = elementwise_bytes(job, p, ckpt)
    optimizer = OPTIMIZER_STEP_BYTES * job_figures(job)[2] / (lay.tp * lay.pp * opt_shards)  # trainable_params(job)
    micro = micro_batches_per_step(job, lay, batch)
    dequant = 0.0
    if job.kind == "qlora":  # every pass dequantizes the 4-bit weights it uses into a bf16 buffer the GEMM reads
        dequant = DEQUANT_BYTES * m.params / (lay.tp * lay.pp) * (2.0 + ckpt) * micro * imbalance
    memory_s = (tokens_per_gpu * elementwise * imbalance + optimizer + dequant) / bw
    return compute_s, memory_s, _bubble(job, lay, micro, p), micro, attention, tokens_per_gpu


def gathered_bytes(job: JobSpec, otherwise: float) -> float:
    """Bytes a sharded strategy all-gathers per parameter: 1 where the run keeps and gathers its fp8
    parameters in fp8 (`fp8_param_gather`: Megatron-Core's `--fp8-param-gather`, set by Megatron-Bridge's
    fp8 recipes and NVIDIA's MLPerf `FP8_PARAM_GATHER=True`), else `otherwise` (the bf16 copy, or for
    ZeRO-1 the gradient's bytes, the model's assumption before the option existed)."""
    return 1.0 if job.fp8_param_gather else otherwise


def step_time(
    job: JobSpec, gpu: GPU, lay: Layout, batch: float, p: Params, rates: tuple[float, float] | None = None
) -> dict:
    """Seconds per optimizer step, by part, for one layout (`rates`: `seconds_per_token`'s answer, if known)."""
    m = job.model
    count = lay.count
    ckpt = 1.0 if lay.checkpointing else 0.0
    imbalance = math.ceil(m.layers / lay.pp) * lay.pp / m.layers  # the slowest pipeline stage sets the pace
    opt_shards = lay.shard_group if lay.strategy != "ddp" else 1
    compute_s, memory_s, bubble, micro, attention, tokens_per_gpu = _core(job, gpu, lay, batch, p, rates, opt_shards)
    core = compute_s + memory_s

    # data parallel: gradients (and ZeRO-3's parameter gathers) over the data-parallel group
    dp_s = 0.0
    tier = {"tier": "none"}
    if lay.shard_group > 1:
        tier = comm_tier(gpu, lay.shard_group, lay.tp, p)
        grads = job.grad_reduce_bytes * job_figures(job)[2] / (lay.tp * lay.pp)  # trainable_params(job)
        weights = gathered_bytes(job, 2.0) * m.params / (lay.tp * lay.pp)
        if lay.strategy in ("ddp", "zero1"):  # all-reduce, or ZeRO-1's reduce-scatter and parameter all-gather
            gather = gathered_bytes(job, job.grad_reduce_bytes) * job_figures(job)[2] / (lay.tp * lay.pp)
            volume = grads + (gather if lay.strategy == "zero1" else grads)
            window = core / micro * 2.0 / 3.0  # once per step, behind the last backward
        elif lay.strategy == "zero2":
            volume, window = micro * grads + weights, core  # reduce-scatter every micro-batch
        else:
            volume, window = micro * (2.0 * weights + grads), core  # gather twice, reduce-scatter, per micro-batch
        raw = _collective_seconds(volume, tier)
        dp_s = max(raw - window, (1.0 - p.comm_overlap) * raw)
    # tensor parallel: two all-reduces of the activations per layer forward, two backward (and two
    # more when recomputing); they sit on the critical path
    tp_s = 0.0
    if lay.tp > 1:
        tp_tier = comm_tier(gpu, lay.tp, 1, p)
        per_token = tp_bytes_per_token(job, p, lay.tp, ckpt)
        # an intra-server bandwidth no source gives (intra_gbps 0) cannot carry tensor parallelism
        tp_s = (
            (batch / lay.shard_group) * math.ceil(m.layers / lay.pp) * per_token / (tp_tier["intra_gbps"] * GB)
            if tp_tier["intra_gbps"] > 0
            else math.inf
        )
        if tier["tier"] == "none":
            tier = tp_tier
    # context parallel: a ring passes each chunk's keys and values (and their gradients backward)
    # to the other cp - 1 GPUs per layer; it hides behind the attention it feeds
    cp_s = 0.0
    if lay.cp > 1:
        cp_tier = comm_tier(gpu, lay.cp, lay.tp, p)
        kv = (batch / lay.shard_group) * math.ceil(m.layers / lay.pp) * 2.0 * m.kv_width * 2.0 / lay.tp
        link = cp_tier["intra_gbps"] if cp_tier["servers"] == 1 else cp_tier["network_gbps"]
        raw = (lay.cp - 1) / lay.cp * kv * (3.0 + ckpt) / (link * GB) if link > 0 else math.inf
        cp_s = max(0.0, raw - tokens_per_gpu * attention * imbalance)
        if tier["tier"] == "none":
            tier = cp_tier
    if lay.pp > 1 and tier["tier"] == "none":
        tier = comm_tier(gpu, lay.pp, lay.tp * lay.dp, p)
    # every step waits for the slowest of S servers: with per-server step-time jitter sigma the
    # expected maximum of S is about sigma sqrt(2 ln S) above the mean (Gumbel), so the loss grows
    # with scale (GPUs inside one server run in NVLink lockstep)
    servers = math.ceil(count / computed_once(server_size, (gpu, p), (), gpu, p))
    sync_s = p.step_jitter * math.sqrt(2.0 * math.log(servers)) * core * (1 + bubble) if servers > 1 else 0.0
    return {
        "compute_s": compute_s * (1 + bubble),
        "memory_s": memory_s * (1 + bubble),
        "comm_s": dp_s + tp_s + cp_s + sync_s,
        "bubble": bubble,
        "tier": tier["tier"],
        "micro_batches": micro,
    }
