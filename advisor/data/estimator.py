"""The training estimator's parameters (catalog/estimator.yaml) as a typed record: the data layer
checks a catalog override against it, and perf/ reads it."""

from __future__ import annotations

from dataclasses import dataclass

# what catalog/estimator.yaml `goodput` holds, each figure with its source there (perf/goodput.py reads
# every one; data/estimator_check.py requires them, so the code keeps no copy of the figures)
GOODPUT_FIGURES = ("interruptions_per_gpu_hour", "restart_hours", "checkpoint_hours", "evaluation_fraction")


@dataclass(frozen=True)
class Params:
    """Parameters of the model; values, fit and meaning in catalog/estimator.yaml and docs/model.md §1."""

    matmul_efficiency_max: float  # (kept for old catalogs; framework_efficiency replaces it)
    # fitted: share of the GPU's best GEMM rate a step's matmuls reach
    matmul_efficiency_half_hidden: float  # fixed at 0: h0 of an extra size factor h / (h + h0)
    architecture_efficiency: dict  # measured: best GEMM rate / dense peak, by GPU id or family, precision
    attention_efficiency: float | dict  # fitted: causal flash attention's share of the bf16 peak, by family
    memory_bytes_per_layer_element: float  # fitted: bytes moved per activation element (h + f), layer and token
    memory_bytes_per_vocab_element: float  # assumption: bytes moved per logit per token (softmax, loss)
    comm_overlap: float  # assumption: share of data-parallel traffic compute can hide
    link_efficiency: float | dict  # achieved / nominal per-direction link bandwidth, by GPU or family
    no_p2p_factor: float  # assumption: PCIe bandwidth multiplier when peer-to-peer is off
    network_gbps_per_gpu: float | dict  # assumption: GB/s per GPU per direction between servers, by family
    pipeline_virtual_stages: int  # assumption: model chunks per GPU (interleaved 1F1B)
    server_gpus: int  # GPUs per server when the link domain does not say
    overhead_gb: float  # CUDA context, allocator fragmentation, buffers
    usable_memory_fraction: float  # share of memory the allocator can actually hand out
    batch_tokens_by_params: list  # [[max_params, global_batch_tokens], ...]
    measured_software_share: float  # measured: share of a user's measured offset that moves other generations
    framework_efficiency: dict | None = None  # fitted: share of MAMF a step's matmuls reach, by generation, precision
    fp8_framework_ratio: float = 1.0  # fitted: fp8's framework share / bf16's (generations without fp8 rows)
    software_factor: dict | None = None  # vendor software factor on compute (AMD, Intel), by generation
    mfu_cap: dict | None = None  # measured: best published MFU by generation and precision
    mfu_measured_on: dict | None = None  # the GPU id each generation's published MFUs were measured on
    attention_kernel_speedup: dict | None = None  # measured: today's attention kernels over the FA2 era, by generation
    step_jitter: float = 0.0  # fitted: per-GPU step-time jitter (share of a step) behind the sync loss
    context_parallel_max: int = 8  # largest context-parallel group searched (long sequences)
    software_era_factor: dict | None = None  # fitted: compute rate of an older software stack (calibration rows only)
    calibration_variants: dict | None = (
        None  # GPUs calibration rows ran that differ from their catalog entry (bench only)
    )
    goodput: dict | None = None  # failure, restart, checkpoint and evaluation figures (perf/goodput.py)
    tp_comm_overlap: float = 0.0  # fitted: share of tensor-parallel traffic hidden when a run overlaps it
    fused_memory_share: float = 1.0  # fitted: share of the eager memory-bound traffic a fused-kernel step moves
    fp8_cast_bytes_per_layer_element: float = 0.0  # fitted: fp8 quantization traffic per activation element and layer
    today_kernel_runs: dict | None = None  # measured: runs with today's attention kernels, by generation and precision
    mfu_median: dict | None = None  # measured: median published MFU by generation and precision (base-case ceiling)
    datasheet_derating: dict | None = (
        None  # measured ratios: {generation: {factor, source, note}} for parts without a run
    )
    measured_mfu_floor: float = (
        0.0  # measured: lowest published run's MFU; a user's run below it is questioned (0: never)
    )
    calibrated_from: dict | None = None  # an `advisor calibrate` override's runs: {runs_file, runs, groups, mape_*}
