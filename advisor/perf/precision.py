"""Which precision a serving replica can run on a GPU (issue 29 item 7: precision needs hardware).

A job's precision is served only on a GPU whose catalog entry has a tensor rate for it
(`tensor_tflops`: null means no hardware support, or none published; the catalog's note says which).
Otherwise the replica is planned at the next wider precision the GPU has, never a narrower one, and
the estimate says so: fp4 -> fp8 -> bf16 -> fp16, fp8 -> bf16 -> fp16, bf16 <-> fp16 (2-byte formats
both). The exception is weight-only int8/int4 (W8A16/W4A16): the weights are stored in 8 or 4 bits and
dequantized to fp16/bf16 inside the GEMM, so they need only a bf16 or fp16 rate (Marlin, "an extremely
optimized FP16xINT4 matmul kernel", github.com/IST-DASLab/marlin; TensorRT-LLM's "W8A16 Weight-Only"
and "W4A16 AWQ/GPTQ" recipes, nvidia.github.io/TensorRT-LLM/reference/precision.html; torchao's int8
weight-only on an A100 in bf16, github.com/pytorch/ao torchao/quantization/README.md). FP8 weight-only
kernels exist too (vLLM's FP8 Marlin on Ampere) but are not planned: a job written at fp8 is planned
at fp8 only where the GPU has FP8 tensor cores.
"""

from __future__ import annotations

from dataclasses import dataclass

WEIGHT_ONLY = ("int8", "int4")
BITS = {"fp4": 4, "int4": 4, "fp8": 8, "int8": 8, "bf16": 16, "fp16": 16}
# what a precision may be served as, in order of preference: itself, then wider formats only
SERVED_AS = {
    "fp4": ("fp4", "fp8", "bf16", "fp16"),
    "fp8": ("fp8", "bf16", "fp16"),
    "bf16": ("bf16", "fp16"),
    "fp16": ("fp16", "bf16"),
    "int8": ("int8",),
    "int4": ("int4",),
}
# the tensor rate a served precision computes at (weight-only formats: the 16-bit rate they dequantize to)
COMPUTES_AT = {
    "fp4": ("fp4",),
    "fp8": ("fp8",),
    "bf16": ("bf16",),
    "fp16": ("fp16",),
    "int8": ("bf16", "fp16"),
    "int4": ("bf16", "fp16"),
}


@dataclass(frozen=True)
class PrecisionPlan:
    """How a requested precision runs on one GPU: `served` is the format of the weights and KV cache
    (None: the GPU has no usable rate at all), `compute` the tensor rate the GEMMs run at, `warning`
    the sentence a plan shows when `served` is not what the job asked for."""

    requested: str
    served: str | None
    compute: str | None
    warning: str | None = None

    @property
    def refused(self) -> str | None:
        """Why the GPU cannot serve the job at all (None: it can)."""
        if self.served is not None:
            return None
        return f"no tensor rate for {self.requested} or a wider format"


def _compute(tflops: dict, served: str) -> str | None:
    return next((p for p in COMPUTES_AT[served] if tflops.get(p)), None)


def plan_precision(gpu_name: str, tflops: dict, notes: dict, precision: str) -> PrecisionPlan:
    """The precision `precision` is served at on a GPU with dense rates `tflops` ({precision: TFLOPS},
    missing or None: no rate) and the catalog's notes on its missing rates (`notes`)."""
    for served in SERVED_AS[precision]:
        compute = _compute(tflops, served)
        if compute is None:
            continue
        if served == precision:
            return PrecisionPlan(precision, served, compute)
        note = notes.get(precision)
        why = f" ({note})" if note else ""
        cost = (
            f"weights and KV cache in {served}: more memory and a slower step than {precision} would take"
            if BITS[served] > BITS[precision]
            else f"the same {BITS[served] // 8} bytes a weight"
        )
        return PrecisionPlan(
            precision,
            served,
            compute,
            f"{gpu_name} has no {precision} tensor rate in the catalog{why}: planned at {served}, "
            f"not {precision} ({cost})",
        )
    return PrecisionPlan(precision, None, None)
