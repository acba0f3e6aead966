"""Bytes per GPU of a training job in a given layout: weights, gradients, optimizer state,
activations and overhead (docs/model.md §1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.perf.jobspec import JobSpec, ModelSpec

GB = 1e9
# QLoRA (Dettmers et al. 2023, arXiv:2305.14314, §3): 4-bit NormalFloat base weights with double
# quantization cost 4.127 bits per parameter (0.5 byte plus 0.127 bit of block constants)
QLORA_WEIGHT_BYTES = 4.127 / 8


@dataclass(frozen=True)
class Layout:
    """How a job is split over its GPUs: sharding strategy, data/tensor/pipeline/context parallel
    degrees, micro-batch and activation checkpointing."""

    strategy: str  # ddp | zero1 | zero2 | zero3 (data-parallel sharding)
    dp: int
    tp: int
    pp: int
    micro_batch: int
    checkpointing: bool
    cp: int = 1  # context parallel: each sequence split over cp GPUs (ring attention)

    @property
    def count(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def shard_group(self) -> int:
        """GPUs that hold the same model slice: ZeRO shards and gradients reduce over dp x cp."""
        return self.dp * self.cp


def bytes_per_param(job: JobSpec) -> dict:
    """Bytes per parameter for weights, gradients and optimizer state (mixed-precision Adam:
    2 + 2 + 12 = 16 unsharded; an 8-bit optimizer keeps 2 bytes of moments instead of 8)."""
    master_and_moments = 4 + (2 if job.optimizer == "adamw-8bit" else 8)
    weights = QLORA_WEIGHT_BYTES if job.kind == "qlora" else 2.0
    return {"weights": weights, "gradients": 2.0, "optimizer": float(master_and_moments)}


def trainable_params(job: JobSpec) -> float:
    m = job.model
    if job.kind not in ("lora", "qlora"):
        return m.params
    # LoRA adapters of rank r on the attention projections (q, k, v, o) of every layer: A is
    # in x r, B is r x out; k and v are narrower with grouped-query attention
    per_layer = job.lora_rank * (2 * (m.hidden + m.hidden) + 2 * (m.hidden + m.kv_width))
    if job.kind == "qlora":  # QLoRA puts adapters on every linear layer, the MLP's too (paper §3)
        per_layer += job.lora_rank * (3 if m.gated_mlp else 2) * (m.hidden + m.ffn_width)
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
    attention = 6 * m.hidden + 4 * m.kv_width  # qkv input, q, k, v, projection input (bf16)
    mlp = 2 * m.hidden + (6 if m.gated_mlp else 4) * m.ffn_width  # fc1 input, activation input and output
    norms = 4 * m.hidden
    return sb * (attention + mlp + norms) / tp


def micro_batches_per_step(job: JobSpec, lay: Layout, batch: float) -> float:
    return max(1.0, batch / (lay.dp * lay.micro_batch * job.model.seq_len))


def layout_memory(job: JobSpec, lay: Layout, p: Params, batch: float) -> dict:
    """Bytes per GPU for one layout: the model's state split by tensor and pipeline parallelism
    and sharded over the data-parallel group by ZeRO, plus activations and overhead."""
    weights, gradients, optimizer, activations = _parts(job, lay, batch)
    return {
        "weights": weights,
        "gradients": gradients,
        "optimizer": optimizer,
        "activations": activations,
        "overhead": p.overhead_gb * GB,
    }


def memory_total(job: JobSpec, lay: Layout, p: Params, batch: float) -> float:
    """sum(layout_memory(...).values()), added in the same order (so equal to the bit), without the dict:
    the layout search asks it ~10^6 times on a large fleet."""
    weights, gradients, optimizer, activations = _parts(job, lay, batch)
    return weights + gradients + optimizer + activations + p.overhead_gb * GB


_JOB_FIGURES: dict[int, tuple] = {}  # id(job) -> (job, its per-job figures): asked ~10^6 times


def job_figures(job: JobSpec) -> tuple:
    """(bytes per parameter, trainable parameters, a layer's activation elements per token
    without checkpointing) of a job, computed once per job object."""
    hit = _JOB_FIGURES.get(id(job))
    if hit is None or hit[0] is not job:  # (the job is kept in the entry, so its id stays unique)
        if len(_JOB_FIGURES) > 10_000:
            _JOB_FIGURES.clear()
        m = job.model
        bpp = bytes_per_param(job)
        per_token = (
            6 * m.hidden + 4 * m.kv_width + (2 * m.hidden + (6 if m.gated_mlp else 4) * m.ffn_width) + 4 * m.hidden
        )
        hit = _JOB_FIGURES[id(job)] = (
            job,
            (bpp["weights"], bpp["gradients"], bpp["optimizer"]),
            trainable_params(job),
            per_token,
        )
    return hit


def _parts(job: JobSpec, lay: Layout, batch: float) -> tuple[float, float, float, float]:
    """Weights, gradients, optimizer state and activations (+ logits) per GPU: `layout_memory`'s figures,
    computed as `activation_bytes_per_layer` and `trainable_params` do, with the per-job ones kept."""
    m = job.model
    _, (bpp_w, bpp_g, bpp_o), trainable, per_token = job_figures(job)
    split = lay.tp * lay.pp
    stage_params = m.params / split
    stage_train = trainable / split
    z = lay.dp * lay.cp
    strategy = lay.strategy
    s0 = z if strategy == "zero3" else 1
    s1 = z if strategy in ("zero2", "zero3") else 1
    s2 = 1 if strategy == "ddp" else z
    weights = stage_params * bpp_w / s0
    if s0 > 1:  # the layer being computed and the next one are gathered in full
        weights += 2 * m.params / m.layers / lay.tp * bpp_w
    gradients = stage_train * bpp_g / s1
    optimizer = stage_train * bpp_o / s2
    layers_here = math.ceil(m.layers / lay.pp)
    in_flight = min(
        lay.pp, math.ceil(max(1.0, batch / (lay.dp * lay.micro_batch * m.seq_len)))
    )  # 1F1B: the first stage holds pp micro-batches
    sb = m.seq_len * lay.micro_batch
    full = sb * per_token / lay.tp  # activation_bytes_per_layer(job, mb, False, tp)
    if lay.checkpointing:
        act = 2.0 * sb * m.hidden / lay.tp * layers_here * in_flight
        act += full  # plus one layer's full activations while it is recomputed
    else:
        act = full * layers_here * in_flight
    act /= lay.cp
    logits = 4.0 * m.seq_len * lay.micro_batch * m.vocab / lay.tp / lay.cp  # fp32 logits for the loss
    return weights, gradients, optimizer, act + logits


def memory_per_gpu(
    job: JobSpec,
    shards: int,
    micro_batch: int,
    checkpointing: bool,
    p: Params,
    strategy: str = "zero3",
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
) -> dict:
    """Bytes per GPU by part, for `shards` data-parallel GPUs (1 = unsharded) with `strategy`."""
    lay = Layout(
        strategy if shards > 1 else "ddp", shards, tensor_parallel, pipeline_parallel, micro_batch, checkpointing
    )
    return layout_memory(job, lay, p, job.global_batch_tokens or default_batch_tokens(job.model, p))


def usable_bytes(gpu: GPU, p: Params) -> float | None:
    cap = gpu.memory_gb.value
    return None if cap is None else cap * GB * p.usable_memory_fraction


def default_batch_tokens(m: ModelSpec, p: Params) -> float:
    """The catalog's global batch for a model of m's size (estimator `batch_tokens_by_params`, pairs in
    ascending size, the last for any larger model), at least one sequence: a step takes whole
    sequences (a 350M model at a 1M-token context took half a sequence a step, and an override's
    [[1e15, 1]] a 1-token batch that the batch re-plan then reported as the workload's own field)."""
    tokens = next((t for most, t in p.batch_tokens_by_params if m.params <= float(most)), None)
    return max(float(p.batch_tokens_by_params[-1][1] if tokens is None else tokens), float(m.seq_len))
