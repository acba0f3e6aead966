"""The jobs of a workload: a training job (`Job`, with its model given by preset or by shape) or a
serving job (`ServeJob`: traffic, request mix, latency SLO), told apart by `kind`."""

import datetime as dt
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, ValidationInfo, field_validator, model_validator

from advisor.inputs.known import GpuId, check_preset, check_serving_model
from advisor.inputs.quantities import (
    GOODPUT_WHY,
    MAX_GPUS,
    MAX_JOBS,
    MIN_REQUESTS_PER_S,
    MIN_SHARE,
    MIN_TPOT_MS,
    MIN_TTFT_MS,
    MONTHS_SCHEMA,
    REQUESTS_WHY,
    SPREAD_WHY,
    TPOT_WHY,
    TTFT_WHY,
    Count,
    Hours,
    Params,
    at_least,
    at_least_a_day,
    floor_schema,
)
from advisor.inputs.strict import Written, spoken

# a job's fields that may be written at the top level of a workload (one job, in the user's words):
# a training job's, and a serving job's (with `kind: serve`)
TRAINING_SHORTHAND = (
    "model",
    "tokens",
    "precision",
    "deadline",
    "kind",
    "micro_batch",
    "checkpointing",
    "global_batch_tokens",
    "lora_rank",
    "optimizer",
    "seq_len",
    "goodput",
    "measured",
)
SERVING_SHORTHAND = ("traffic", "slo", "months", "off_peak_training_hours", "availability", "until_arrival")
JOB_SHORTHAND = TRAINING_SHORTHAND + SERVING_SHORTHAND
# the training software a speed assumes (docs/model.md §1.7): what a buyer installs, or the vendor's own tuned code
Software = Literal["public", "vendor_tuned"]
SOFTWARE_HELP = (
    "the training software the speed assumes: public (the frameworks a buyer installs: PyTorch, Megatron, the "
    "vendor's public ROCm or CUDA builds) or vendor_tuned (the vendor's own tuned code, e.g. AMD's MLPerf "
    "containers); changes an AMD Instinct speed, no other vendor's"
)
DEFAULT_SPREAD = 0.05  # a measurement's P10-P90 half-width when none is given (docs/model.md §1.8)


def not_above(other: str, why: Callable[[float, float], str]) -> Callable[[Any, ValidationInfo], Any]:
    """A field validator: the value unless it exceeds field `other` of the same record (either missing: kept)."""

    def check(v: Any, info: ValidationInfo) -> Any:
        bound = info.data.get(other)
        if v is not None and bound is not None and v > bound:
            raise ValueError(why(v, bound))
        return v

    return check


class ModelShape(Written):
    """A model given by its size (and, better, its shape) instead of a preset name. Defaults
    (advisor/perf/jobspec.py `resolve_model`): vocab 50,257 (GPT-2's tokenizer); tied_embeddings
    inferred from the parameter count when layers and hidden are given (tied when what the layers
    leave over is nearer one vocab x hidden matrix than two), else tied (every parameter in a matmul:
    6N FLOPs per token); heads hidden / 128; ffn 4 x hidden; seq_len 2,048."""

    params: Params = Field(description="parameter count, e.g. 124M or 7B")
    layers: int | None = Field(default=None, gt=0, le=1000)
    hidden: int | None = Field(default=None, gt=0, le=200_000)
    heads: int | None = Field(default=None, gt=0, le=2048)
    kv_heads: int | None = Field(default=None, gt=0, le=2048)
    ffn: int | None = Field(default=None, gt=0, le=1_000_000)
    vocab: int | None = Field(default=None, gt=0, le=10_000_000, description="vocabulary size [50257]")
    tied_embeddings: bool | None = Field(
        default=None, description="output head shares the input embedding [inferred from params, layers and hidden]"
    )
    seq_len: int | None = Field(default=None, gt=0, le=10_000_000)
    active_params: Params | None = Field(
        default=None, description="parameters one token passes through, for a mixture of experts, e.g. 37B [params]"
    )

    _active_within = field_validator("active_params")(
        not_above(
            "params",
            lambda v, params: (
                f"{v / 1e9:.4g}B active parameters exceed the model's {params / 1e9:.4g}B: a token "
                "passes through at most every parameter"
            ),
        )
    )


def iso_date(v: Any) -> Any:
    """A run's date, YYYY-MM-DD (a plan says when one is after its day or before the GPU launched); a number
    is refused, not read as a Unix time (`date: 0` was 1970-01-01, review29 L8)."""
    if isinstance(v, (int, float)):
        raise ValueError(f"{v!r} is not a date: write YYYY-MM-DD, e.g. 2026-11-20")
    if isinstance(v, str):
        try:
            return dt.date.fromisoformat(v.strip())
        except ValueError:
            raise ValueError(f"{v!r} is not a date: write YYYY-MM-DD, e.g. 2026-11-20") from None
    return v


class Measurement(Written):
    """The user's own measured training speed of this job: `tokens_per_s` over all `count` GPUs of
    type `gpu`, in steady state (docs/model.md §1.8). It replaces the estimate on that GPU and count
    and moves the estimates of related GPUs."""

    gpu: GpuId = Field(max_length=100, description="a catalog GPU id, e.g. h100-sxm")
    count: int = Field(gt=0, le=MAX_GPUS, description="GPUs the run used")
    tokens_per_s: Count = Field(description="tokens per second over all `count` GPUs, e.g. 120K")
    date: dt.date = Field(description="when it was measured, YYYY-MM-DD")
    note: str | None = Field(default=None, max_length=500, description="software, settings, who measured it")
    spread: float | None = Field(
        default=None,
        lt=1,
        json_schema_extra=floor_schema(MIN_SHARE),
        description=f"P10-P90 half-width as a share, e.g. 0.05 for +-5% [{DEFAULT_SPREAD:g}]",
    )
    _spread = field_validator("spread")(at_least(MIN_SHARE, SPREAD_WHY))

    _date = field_validator("date", mode="before")(iso_date)


class Job(Written):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    kind: Literal["pretrain", "finetune", "lora", "qlora"] = "pretrain"
    model: str | ModelShape = Field(description="a preset id (advisor models) or {params: 124M, layers: 12, ...}")
    tokens: Count = Field(description="token budget: 10B")
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    deadline: Hours | None = Field(default=None, description="wall-clock limit: 90min, 36h, 7d, 2w")
    micro_batch: int | None = Field(default=None, gt=0, le=4096)
    checkpointing: bool | None = Field(
        default=None, description="activation checkpointing; chosen automatically when absent"
    )
    global_batch_tokens: Count | None = None
    seq_len: int | None = Field(default=None, gt=0, le=10_000_000, description="overrides the preset's sequence length")
    lora_rank: int = Field(default=16, gt=0, le=4096)
    optimizer: Literal["adamw", "adamw-8bit"] = "adamw"
    software: Software | None = Field(default=None, description=SOFTWARE_HELP + " [the workload's `software`: public]")
    goodput: float | None = Field(
        default=None,
        le=1,
        json_schema_extra=floor_schema(MIN_SHARE),
        description="share of wall time spent training (failures, "
        "restarts, checkpoints, evaluation); by default from GPU count and job length",
    )
    repeat: int = Field(default=1, gt=0, le=MAX_JOBS, description="this many identical copies of the job")
    measured: list[Measurement] | None = Field(
        default=None, min_length=1, max_length=100, description="your own measured speeds of this job on some GPUs"
    )

    _goodput = field_validator("goodput")(at_least(MIN_SHARE, GOODPUT_WHY))

    @field_validator("measured")
    @classmethod
    def _one_per_configuration(cls, v: list[Measurement] | None) -> list[Measurement] | None:
        seen: set[tuple[str, int]] = set()
        for m in v or []:
            if (m.gpu, m.count) in seen:
                raise ValueError(
                    f"two measurements of {m.count} x {m.gpu}: give one speed per GPU type and count "
                    "(their mean, with the range as `spread`)"
                )
            seen.add((m.gpu, m.count))
        return v

    @field_validator("model")
    @classmethod
    def _known_preset(cls, v: str | ModelShape, info: ValidationInfo) -> str | ModelShape:
        return check_preset(v, info) if isinstance(v, str) else v

    _batch_within_tokens = field_validator("global_batch_tokens")(
        not_above(
            "tokens",
            lambda v, tokens: (
                f"a global batch of {v:,.4g} tokens is more than the job's {tokens:,.4g} tokens: the "
                "job would not finish one optimizer step; give at most its tokens"
            ),
        )
    )

    @field_validator("tokens")
    @classmethod
    def _tokens_bound(cls, v: float) -> float:
        if v < 1e3:
            raise ValueError(f"a token budget of {v:.0f} is too small to plan hardware for; write e.g. 10B")
        return v


class RequestClass(Written):
    """One kind of request in a serving mix: prompt and answer lengths, share of requests."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    input_tokens: int = Field(gt=0, le=10_000_000, description="mean prompt length in tokens")
    output_tokens: int = Field(gt=0, le=10_000_000, description="mean generated tokens per request")
    share: float = Field(gt=0, le=1, description="share of all requests (the shares sum to 1)")


class Traffic(Written):
    """Requests a serving job must sustain: one request size, or a `mix` of request classes."""

    requests_per_s: float = Field(
        le=1e7,
        json_schema_extra=floor_schema(MIN_REQUESTS_PER_S),
        description="average requests per second over the day",
    )
    input_tokens: int | None = Field(default=None, gt=0, le=10_000_000, description="mean prompt length (without mix)")
    output_tokens: int | None = Field(default=None, gt=0, le=10_000_000, description="mean output length (without mix)")
    mix: list[RequestClass] | None = Field(default=None, min_length=1, max_length=50)
    peak_factor: float = Field(
        default=1.0, ge=1, le=100, description="daily profile: peak rate / average rate; capacity is sized for the peak"
    )

    @model_validator(mode="after")
    def _one_shape(self) -> "Traffic":
        sizes = self.input_tokens is not None or self.output_tokens is not None
        if self.mix is not None and sizes:
            raise ValueError("give either input_tokens and output_tokens, or a mix of request classes, not both")
        if self.mix is None and (self.input_tokens is None or self.output_tokens is None):
            raise ValueError(
                "give input_tokens and output_tokens (mean request size), or a mix: "
                "[{input_tokens, output_tokens, share}, ...]"
            )
        named = [c.name for c in self.mix or [] if c.name]
        if len(set(named)) < len(named):  # the plan's serving rows (chat/NAME) would read as one class
            dup = sorted({n for n in named if named.count(n) > 1})
            raise ValueError(f"the names of the mix's classes must be unique; repeated: {', '.join(dup)}")
        if self.mix is not None and abs(sum(c.share for c in self.mix) - 1.0) > 1e-3:
            raise ValueError(f"the shares of the mix sum to {sum(c.share for c in self.mix):.4g}; they must sum to 1")
        for i, c in enumerate(self.mix or []):
            if self.requests_per_s * c.share < MIN_REQUESTS_PER_S:
                raise ValueError(
                    f"mix[{i}] (share {c.share:.3g} of {self.requests_per_s:.3g} requests/s) has "
                    f"{self.requests_per_s * c.share:.3g} requests/s: {REQUESTS_WHY}; give it a share of at least "
                    f"{MIN_REQUESTS_PER_S / self.requests_per_s:.3g}, or leave it out"
                )
        return self

    _requests = field_validator("requests_per_s")(at_least(MIN_REQUESTS_PER_S, REQUESTS_WHY))

    def classes(self) -> list[tuple[str, int, int, float]]:
        """(name, input tokens, output tokens, peak requests/s) per request class."""
        peak = self.requests_per_s * self.peak_factor
        if self.mix is None:
            return [("all", int(self.input_tokens or 0), int(self.output_tokens or 0), peak)]
        return [
            (c.name or f"{c.input_tokens}/{c.output_tokens}", c.input_tokens, c.output_tokens, peak * c.share)
            for c in self.mix
        ]


class Slo(Written):
    """Latency limits at a percentile of requests (none: the offline peak rate)."""

    ttft_ms: float | None = Field(
        default=None, le=1e7, json_schema_extra=floor_schema(MIN_TTFT_MS), description="time to first token limit, ms"
    )
    tpot_ms: float | None = Field(
        default=None, le=1e7, json_schema_extra=floor_schema(MIN_TPOT_MS), description="time per output token limit, ms"
    )
    percentile: float = Field(default=99, ge=50, lt=100)

    _ttft = field_validator("ttft_ms")(at_least(MIN_TTFT_MS, TTFT_WHY))
    _tpot = field_validator("tpot_ms")(at_least(MIN_TPOT_MS, TPOT_WHY))


class MeasuredServing(Written):
    """The user's own serving benchmark: `count` GPUs of one type, `tensor_parallel` GPUs a replica,
    at full load (a throughput run such as trtllm-bench or vllm bench throughput) on requests of
    `input_len` prompt and `output_len` output tokens, at the job's precision."""

    gpu: str = Field(min_length=1, max_length=100, description="a catalog GPU id, e.g. h100-sxm")
    count: int = Field(gt=0, le=100_000, description="GPUs the run used")
    tensor_parallel: int = Field(default=1, gt=0, le=64, description="GPUs per replica")
    output_tokens_per_s: float = Field(gt=0, le=1e9, description="output tokens/s of all `count` GPUs together")
    input_len: int = Field(gt=0, le=10_000_000, description="prompt tokens per request")
    output_len: int = Field(gt=0, le=10_000_000, description="output tokens per request")
    date: dt.date | None = Field(default=None, description="when it was measured, YYYY-MM-DD")
    note: str | None = Field(default=None, max_length=500, description="engine, version, settings")
    spread: float | None = Field(
        default=None,
        lt=1,
        json_schema_extra=floor_schema(MIN_SHARE),
        description=f"P10-P90 half-width as a share, e.g. 0.05 for +-5% [{DEFAULT_SPREAD:g}]",
    )
    _spread = field_validator("spread")(at_least(MIN_SHARE, SPREAD_WHY))

    _date = field_validator("date", mode="before")(iso_date)

    @model_validator(mode="after")
    def _whole_replicas(self) -> "MeasuredServing":
        if self.count % self.tensor_parallel:
            raise ValueError(f"count {self.count} is not a multiple of tensor_parallel {self.tensor_parallel}")
        return self


class ServeJob(Written):
    """A model served to traffic under a latency SLO, for the horizon (or `months`). `kind: serve`
    may be left out: a job with `traffic` is a serving job."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    kind: Literal["serve"] = "serve"
    model: str = Field(description="a model preset id or alias (`advisor models` lists them)")
    precision: Literal["bf16", "fp16", "fp8", "fp4", "int8", "int4"] = "bf16"
    traffic: Traffic
    slo: Slo = Slo.model_construct()  # (the defaults: no validator built at import)
    months: float | None = Field(
        default=None, gt=0, le=240, json_schema_extra=MONTHS_SCHEMA, description="months of serving [the horizon]"
    )
    off_peak_training_hours: float = Field(
        default=0,
        ge=0,
        le=24,
        description="hours a day (low traffic) in which training jobs may use this job's owned GPUs [0: never]",
    )
    availability: Literal["n+1", "none"] = Field(
        default="n+1",
        description=(
            "spare capacity: n+1 holds the SLO at peak with any one replica down (one GPU failure takes out "
            "its replica), none sizes the replicas to the peak alone [n+1]"
        ),
    )
    until_arrival: Literal["rent", "wait"] = Field(
        default="rent",
        description=(
            "what serves the traffic before bought GPUs arrive (lead time, then burn-in): rent replicas that "
            "hold it until then, priced in the plan, or wait and launch on the day they arrive [rent]"
        ),
    )
    measured: list[MeasuredServing] | None = Field(
        default=None,
        min_length=1,
        max_length=50,
        description=(
            "your own throughput runs: used exactly on their GPU and shape, and moving the other GPUs' estimates"
        ),
    )

    @field_validator("months")
    @classmethod
    def _a_day(cls, v: float | None) -> float | None:
        return v if v is None else at_least_a_day(v)

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: str, info: ValidationInfo) -> str:
        return check_serving_model(v, info)

    @property
    def repeat(self) -> int:
        return 1


def _job_kind(value: Any) -> str:
    """Which model reads a job: a serving job's when `kind` says serve, or when no kind is given and
    the job has `traffic` (which only a serving job has)."""
    if isinstance(value, dict):
        kind = value.get("kind")
        if kind is None and "traffic" in value:
            return "serve"
    else:
        kind = getattr(value, "kind", None)
    return "serve" if isinstance(kind, str) and spoken(kind, ("serve",)) == "serve" else "train"


AnyJob = Annotated[Union[Annotated[Job, Tag("train")], Annotated[ServeJob, Tag("serve")]], Discriminator(_job_kind)]
