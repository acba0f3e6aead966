"""A plan's training jobs (GPU, count, speed, layout, goodput) and serving rows."""

from typing import Literal

from advisor.contract.base import Num, Out, Ownership
from advisor.contract.costs import Triple


class Goodput(Out):
    fraction: Num
    lost_days: Num
    source: str


class StepBreakdown(Out):
    """Seconds per optimizer step by what bounds them: the performance model's three parts, then what the
    speed the job states adds to (or, measured faster, takes from) their sum, by cause; all add up to
    global_batch_tokens / tokens_per_s (advisor/perf/step_parts.py, docs/model.md §1.3). A plan written
    before the causes were printed has none: read 0."""

    compute_s: Num
    memory_s: Num
    comm_s: Num
    held_to_mfu_ceiling_s: Num = 0.0  # held to the best published MFU (or the measured runs' median)
    datasheet_derating_s: Num = 0.0  # the sourced derating of a speed that rests on a datasheet
    measured_adjustment_s: Num = 0.0  # the job's own measurement (`measured:`), on this GPU or moved to it


class Layout(Out):
    """The parallel layout the estimate found (perf/estimate.py)."""

    strategy: str
    shards: int
    micro_batch: int
    checkpointing: bool
    data_parallel: int
    tensor_parallel: int
    pipeline_parallel: int
    needs_tensor_parallel: bool
    idle_gpus: int
    gradient_accumulation: Num
    pipeline_bubble: Num
    context_parallel: int
    interconnect: str
    global_batch_tokens: Num
    seq_len: int
    batch_changed: bool


class Derating(Out):
    """The sourced ratio a datasheet-only speed is multiplied by (catalog/estimator.yaml)."""

    factor: Num
    upper: Num | None = None
    source: list[str]
    note: str | None = None
    # the training software the factor was measured for (a derating measured per stack: AMD Instinct); absent: one
    # factor for every stack (docs/model.md §1.7)
    software: Literal["public", "vendor_tuned"] | None = None


class Job(Out):
    name: str
    gpu: str
    gpu_count: int
    ownership: Ownership
    copies: int | Num  # identical jobs on this GPU; with allow_mixed, a share of a job's tokens
    tokens_per_s: Num
    wall_days: Num
    goodput: Goodput
    memory_per_gpu_gb: Num
    mfu: Num
    binding_factor: str
    step_breakdown: StepBreakdown
    layout: Layout
    wall_days_range: Triple | None = None
    wall_days_planned: Num | None = None
    # the hours a day it runs where it borrows serving GPUs' off-peak hours (at_once.off_peak_hours): its
    # running time (wall_days) is spread over days of that many hours; absent: around the clock
    hours_a_day: Num | None = None
    # what the speed rests on (advisor/data/evidence.py): a run on this GPU, the user's measurement moved
    # to it, a run on its generation, or its datasheet with a sourced derating
    speed_evidence: Literal["measured", "transferred", "same_generation", "datasheet"] | None = None
    derating: Derating | None = None
    speed_source: str | None = None  # the user's measurement a measured or transferred speed comes from
    evidence_note: str | None = None


class Slo(Out):
    ttft_ms: Num | None
    tpot_ms: Num | None
    percentile: Num


class ServingRow(Out):
    name: str
    job: str
    model: str
    precision: str
    served_precision: str  # the precision served at (a wider one where the GPU lacks the job's)
    input_tokens: int
    output_tokens: int
    gpu: str
    tensor_parallel: int
    pipeline_parallel: int
    replicas: int
    gpu_count: int
    ownership: Ownership
    engine: str
    requests_per_s_per_replica: Num
    peak_requests_per_s: Num
    utilization_at_peak: Num
    ttft_ms: Num | None
    tpot_ms: Num | None
    slo: Slo
    limited_by: str
    max_batch: int
    kv_cache_gb_per_gpu: Num
    months: Num
    measured_gpu: bool
    availability: Literal["n+1", "none"] = "n+1"  # n+1: the class holds its peak with any one replica down
    requests_per_s_one_down: Num | None = None  # what the class's replicas sustain with its largest one down
    speed_evidence: Literal["measured", "transferred", "same_generation", "datasheet"]
    speed_source: str | None  # the user's measurement the speed rests on
    shared_with_training: str | None


class ServingMix(Out):
    gpu_types: list[str]
    cost_usd: Num | None
    best_single_gpu: str | None = None
    best_single_cost_usd: Num | None = None
    saving_usd: Num | None = None
    saving_pct: Num | None = None
    message: str | None = None
