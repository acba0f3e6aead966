"""LLM serving speed: prefill and decode step times on one replica's GPUs (docs/model.md,
"Serving"); the queue that turns a request rate into p-th percentile TTFT and TPOT, and the rate a
replica sustains under an SLO, are advisor/perf/serve_capacity.py.

Everything here takes plain numbers and dataclasses (`ServeModel`, `Hardware`, `ServeParams`); the
catalog adapter lives in advisor/perf/serving.py, the public `serve_estimate` in serving_estimate.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from advisor.perf.kv import (
    WEIGHT_BYTES,
    ServeModel,
    kv_bytes_per_token,
)
from advisor.perf.precision import PrecisionPlan, plan_precision

ACT_BYTES = 2.0  # activations cross the tensor-parallel all-reduce in bf16/fp16


@dataclass(frozen=True)
class Hardware:
    """One GPU's figures as the serving model needs them (from advisor.catalog.GPU)."""

    name: str
    memory_gb: float
    bandwidth_gbps: float  # GB/s
    tflops: dict  # precision -> dense TFLOPs (None/absent: unsupported)
    link_gbps: float = 0.0  # scale-up link, GB/s both directions together (0: none)
    link_domain: int = 1  # GPUs that share that link
    pcie_gbps: float = 64.0  # GB/s both directions together
    p2p: bool = True
    vendor: str = ""
    matmul_fraction: dict = field(
        default_factory=dict
    )  # precision -> measured best GEMM rate / dense peak (MAMF; absent: 1)
    rate_notes: dict = field(default_factory=dict)  # precision -> the catalog's note on a missing (null) rate
    generation: str = ""  # the catalog architecture's first word (hopper, cdna3, ...)
    evidence: str = "datasheet"  # same_generation when published runs of its generation are fitted
    link_efficiency: float | None = None  # the collective library's share of a link's rate (catalog/estimator.yaml)
    memory_read_share: float = (
        1.0  # a pure streaming read's measured share of the datasheet bandwidth (1: the datasheet)
    )


@dataclass(frozen=True)
class ServeParams:
    """Efficiency parameters; values and fit in catalog/serving_estimator.yaml."""

    decode_bandwidth_efficiency: float  # fitted: achieved / the GPU's measured streaming-read bandwidth in decode
    decode_compute_efficiency: float  # fitted: achieved / dense peak for decode GEMMs
    prefill_compute_efficiency: float  # fitted: achieved / dense peak in prefill
    engine_factor: dict  # fitted: software speed relative to TensorRT-LLM, by engine
    step_overhead_ms: float  # assumption/fitted: fixed time per decode step (launch, scheduler)
    usable_memory_fraction: float  # assumption
    overhead_gb: float  # assumption
    allreduce_latency_us: float  # assumption
    no_p2p_factor: float  # assumption
    max_batch: dict  # assumption: engine's default sequence cap, by engine
    default_engine: dict  # which engine a vendor's GPU is assumed to run
    engine_compute_factor: dict = field(default_factory=dict)  # fitted: extra factor on compute only, by engine
    seq_overhead_us: float = 0.0  # fitted: host time per sequence per decode step (scheduling, sampling)
    layer_overhead_us: float = 0.0  # fitted: fixed time per layer per decode step (each layer's ~10 kernels have a floor however small the batch)
    activation_bytes_per_layer_element: float = 0.0  # fitted: HBM bytes the non-GEMM kernels (norms, residual adds, RoPE, SiLU-and-multiply, activation quantization) move per activation element (hidden + MLP width per GPU) per layer per token
    engine_seq_overhead_us: dict = field(default_factory=dict)  # fitted: the same for engines whose host loop differs
    kv_reserved_output_share: dict = field(
        default_factory=dict
    )  # sourced: share of the output a scheduler policy reserves KV for at admission, by policy
    scheduler_policy: dict = field(
        default_factory=dict
    )  # sourced: each engine's default capacity policy (a key of kv_reserved_output_share)
    visible_memory_mib: dict = field(
        default_factory=dict
    )  # sourced: memory CUDA sees (nvidia-smi) where ECC or firmware takes a share, by GPU id
    kv_static: dict = field(
        default_factory=dict
    )  # sourced: engines with static shapes, whose KV is padded to a fixed total (tokens; 0: the request's I + O)
    max_batch_large_memory: dict = field(default_factory=dict)  # sourced: engine -> {min_gib, max_batch, not_on}
    measured_software_share: float = 0.5  # derived: share of a user's measured deviation moved to every GPU
    measured_factor_floor: float = 0.0  # derived: the slowest published run against the model (measured / held out)
    power_limit_exponent: float = (
        0.0  # derived: sustained GEMM rate of one die ~ (board power limit)^x (advisor/perf/power_limit.py)
    )
    power_reference: dict = field(
        default_factory=dict
    )  # sourced: GPU id -> the same die's part whose matmul rate was measured
    memory_read_share: dict = field(
        default_factory=dict
    )  # measured: GPU id -> a streaming read's share of its datasheet bandwidth ("default": a part without one)
    notes: dict = field(default_factory=dict)

    def factor(self, engine: str) -> float:
        return float(self.engine_factor.get(engine, self.engine_factor.get("default", 1.0)))

    def compute_factor(self, engine: str) -> float:
        """Engine speed on the GEMMs: the common factor times a compute-only one (1.0 unless fitted)."""
        return self.factor(engine) * float(self.engine_compute_factor.get(engine, 1.0))

    def seq_overhead(self, engine: str) -> float:
        """Host microseconds per sequence per decode step: a Python scheduler (vLLM) pays more than a C++ one."""
        return float(self.engine_seq_overhead_us.get(engine, self.seq_overhead_us))

    def kv_reserve(self, engine: str) -> float:
        """Output tokens per sequence a scheduler holds KV for, as a share of O: 0.5 when it allocates
        as tokens arrive (paged cache, progress spread evenly: the mean), 1.0 when it reserves a
        request's whole output at admission (TensorRT-LLM's default GUARANTEED_NO_EVICT)."""
        policy = self.scheduler_policy.get(engine, self.scheduler_policy.get("default", "max_util"))
        return float(self.kv_reserved_output_share[policy])

    def kv_tokens(self, engine: str, input_len: float, output_len: float) -> tuple[float, float]:
        """(KV tokens a sequence holds, KV tokens a decode step reads per sequence). Paged caches read
        the mean context I + O/2; static-shape engines (TGI on Gaudi pads every sequence's cache to
        MAX_TOTAL_TOKENS) hold and read the padded total."""
        if engine in self.kv_static:
            total = float(self.kv_static[engine] or input_len + output_len)
            return total, total
        return input_len + self.kv_reserve(engine) * output_len, input_len + output_len / 2

    def batch_cap(self, engine: str, hw: Hardware | None = None) -> int:
        """The engine's default cap on sequences in flight; some raise it on large-memory GPUs (vLLM:
        1,024 instead of 256 from 70 GiB, A100s excepted: `max_batch_large_memory`)."""
        large = self.max_batch_large_memory.get(engine)
        if (
            large
            and hw is not None
            and hw.memory_gb * 1e9 >= float(large["min_gib"]) * 2**30
            and not any(part in hw.name for part in large.get("not_on", []))
        ):
            return int(large["max_batch"])
        return int(self.max_batch.get(engine, self.max_batch.get("default", 2048)))


def compute_tflops(hw: Hardware, precision: str) -> tuple[float | None, str]:
    """Dense rate the GEMMs run at, and the precision that rate belongs to, for a job at `precision`
    (advisor/perf/precision.py: served at a wider precision where the GPU lacks it; int8/int4 are
    weight-only and compute at bf16/fp16)."""
    plan = plan_precision(hw.name, hw.tflops, hw.rate_notes, precision)
    if plan.compute is None:
        return None, ""
    return float(hw.tflops[plan.compute]), plan.compute


def link_gbps_per_direction(hw: Hardware, tp: int, p: ServeParams) -> float:
    """All-reduce bandwidth per direction: the scale-up link inside its domain, else PCIe, at the
    share of the rate the GPU's collective library reaches (the training model's `link_efficiency`)."""
    if hw.link_efficiency is None:
        raise ValueError(f"{hw.name}: Hardware.link_efficiency is not set (perf/serving.hardware sets it)")
    if hw.link_gbps > 0 and tp <= hw.link_domain:
        return hw.link_gbps / 2 * hw.link_efficiency
    return hw.pcie_gbps / 2 * hw.link_efficiency * (1.0 if hw.p2p else p.no_p2p_factor)


def _allreduce_s(tokens: float, model: ServeModel, hw: Hardware, tp: int, pp: int, p: ServeParams) -> float:
    """Two all-reduces per layer (after attention and after the MLP) on the critical path."""
    if tp <= 1:
        return 0.0
    bw = link_gbps_per_direction(hw, tp, p) * 1e9
    per = 2 * (tp - 1) / tp * tokens * model.hidden * ACT_BYTES / bw + p.allreduce_latency_us * 1e-6
    return math.ceil(model.layers / pp) * 2 * per


def activation_s(s: "Setup", tokens: float) -> float:
    """Time of one stage's kernels between the GEMMs (norms, residual adds, RoPE, SiLU, quantization) for
    `tokens` tokens: memory-bound kernels of their own, so at the bandwidth and added to the step; bytes =
    activation_bytes_per_layer_element x (hidden + MLP width per GPU, k experts' for a MoE) x layers."""
    m = s.model
    width = m.hidden + (m.ffn or 4 * m.hidden) * max(m.experts_per_token, 1) / s.tp
    stage_layers = math.ceil(m.layers / s.pp)
    return s.params.activation_bytes_per_layer_element * tokens * width * stage_layers / s.bandwidth


def experts_touched(model: ServeModel, tokens: float) -> float:
    """Share of routed experts a step of `tokens` tokens reads (uniform routing): 1 - (1 - k/E)^tokens."""
    if model.experts <= 0:
        return 0.0
    return 1.0 - (1.0 - model.experts_per_token / model.experts) ** max(tokens, 0.0)


@dataclass(frozen=True)
class Setup:
    """A replica: model, GPU, precision (the job's), tensor x pipeline parallel, engine and parameters.
    `served` is the precision the weights and KV cache are held in on this GPU (the job's, or a wider
    one where the GPU has no tensor rate for it: advisor/perf/precision.py)."""

    model: ServeModel
    hw: Hardware
    precision: str
    tp: int
    pp: int
    engine: str
    params: ServeParams
    # (input, output) tokens a request: a measured shape takes its own runs' factor; required of a model
    # with the user's measured speeds (without it the type's mean factor would stand in, unsaid)
    shape: tuple[float, float] | None = None
    plan: PrecisionPlan = field(init=False, repr=False, compare=False)
    speed: float = field(init=False, repr=False, compare=False)  # the user's measured speed factor (1: none)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "plan", plan_precision(self.hw.name, self.hw.tflops, self.hw.rate_notes, self.precision)
        )
        measured = self.model.speed(self.hw.name)
        if measured is not None and self.shape is None:
            raise ValueError(f"a replica of {self.model.name} with measured speeds needs its request shape")
        object.__setattr__(
            self, "speed", measured.at(self.tp, self.pp, *self.shape)[0] if measured and self.shape else 1.0
        )

    def evidence(self) -> tuple[str, str | None, float | None]:
        """(speed_evidence, the measurement it rests on, its stated spread): `measured` on a shape the
        user measured on this GPU, `transferred` where a measurement moved the estimate, else the GPU's own."""
        measured = self.model.speed(self.hw.name)
        if measured is None or self.shape is None:
            return self.hw.evidence, None, None
        exact = self.pp == 1 and (self.tp, int(self.shape[0]), int(self.shape[1])) in measured.shapes
        _, source, spread = measured.at(self.tp, self.pp, *self.shape)
        return ("measured" if exact else "transferred"), source, spread

    @property
    def served(self) -> str:
        return self.plan.served or self.precision

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    # rate and bandwidth are computed once (cached_property: a frozen dataclass without slots keeps them in
    # its __dict__, outside its fields): a replica's capacity bisects on ~100 step times, each reading both
    @cached_property
    def rate(self) -> float:
        """Achievable GEMM rate: the dense peak x the GPU's measured matmul fraction (MAMF) x the engine."""
        at = self.plan.compute
        if at is None:
            return 0.0
        mamf = float(self.hw.matmul_fraction.get(at, self.hw.matmul_fraction.get("bf16", 1.0)))
        return float(self.hw.tflops[at]) * 1e12 * mamf * self.params.compute_factor(self.engine)

    @cached_property
    def bandwidth(self) -> float:
        """Achievable read rate: the datasheet bandwidth x the share a pure streaming read of the part was
        measured to reach (memory type and controller differ by part, as the GEMM rate does) x the engine."""
        hw = self.hw
        return (
            hw.bandwidth_gbps
            * 1e9
            * hw.memory_read_share
            * self.params.decode_bandwidth_efficiency
            * self.params.factor(self.engine)
        )


def decode_step(s: Setup, batch: float, context: float) -> dict:
    """One pipeline stage's decode step for `batch` sequences at mean KV `context` (seconds)."""
    return decode_steps(s, context)(batch)


def decode_steps(s: Setup, context: float) -> Callable[[float], dict]:
    """decode_step at any batch of one replica and context: what does not depend on the batch (the
    weights' bytes, the KV bytes per token, a sequence's FLOPs, the fixed host time) computed once."""
    m, pp, tp = s.model, s.pp, s.tp
    wb = WEIGHT_BYTES[s.served]
    dense = (m.params - m.expert_params) * wb
    expert_bytes = m.expert_params * wb
    stage_layers = math.ceil(m.layers / pp)
    kv_per_token = kv_bytes_per_token(m, s.served, tp, stage_layers)
    sequence_flops = 2 * m.matmul_active + 4 * m.layers * context * m.heads * m.head_dim
    rate = s.rate * s.params.decode_compute_efficiency
    host_fixed_ms = s.params.step_overhead_ms + s.params.layer_overhead_us * 1e-3 * stage_layers
    sequence_ms = s.params.seq_overhead(s.engine) * 1e-3
    k = 1.0 / s.speed  # a user's measurement scales every part of the step alike

    def step(batch: float) -> dict:
        experts = expert_bytes * experts_touched(m, batch)
        kv = batch * context * kv_per_token
        memory_s = ((dense + experts) / (tp * pp) + kv) / s.bandwidth
        compute_s = batch * sequence_flops / (tp * pp) / rate
        comm_s = _allreduce_s(batch, m, s.hw, tp, pp, s.params)
        host_s = (host_fixed_ms + sequence_ms * batch) * 1e-3
        step = max(compute_s, memory_s) + comm_s + host_s + activation_s(s, batch)
        return {"compute_s": compute_s * k, "memory_s": memory_s * k, "comm_s": comm_s * k, "step_s": step * k}

    return step


def prefill(s: Setup, tokens: float) -> dict:
    """One prompt of `tokens` tokens through one stage: compute (incl. causal attention), the weight read
    it needs when alone, and the all-reduces. `busy_s` is what it displaces inside a running batch:
    chunked prefill merges its tokens into the decode batch's GEMMs (whose weights that step reads
    anyway), so they run at the large-batch decode rate; `latency_s` is its time alone (standalone
    prefill kernels, `prefill_compute_efficiency`)."""
    m, pp, tp = s.model, s.pp, s.tp
    head = m.vocab * m.hidden  # on the last position only: no prompt logits unless asked (return_context_logits)
    flops = (
        2 * max(m.matmul_active - head, 0.0) * tokens + 2 * head + 2 * m.layers * tokens**2 * m.heads * m.head_dim
    ) / (tp * pp)
    compute_s = flops / (s.rate * s.params.prefill_compute_efficiency)
    batched_s = flops / (s.rate * s.params.decode_compute_efficiency)
    wb = WEIGHT_BYTES[s.served]
    read = ((m.params - m.expert_params) + m.expert_params * experts_touched(m, tokens)) * wb / (tp * pp)
    memory_s = read / s.bandwidth
    comm_s = _allreduce_s(tokens, m, s.hw, tp, pp, s.params)
    act_s = activation_s(s, tokens)
    k = 1.0 / s.speed
    return {
        "compute_s": compute_s * k,
        "memory_s": memory_s * k,
        "comm_s": comm_s * k,
        "busy_s": (batched_s + comm_s + act_s) * k,
        "latency_s": (max(compute_s, memory_s) + comm_s + act_s) * k,
    }
