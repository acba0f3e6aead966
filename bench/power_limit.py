"""The exponent of catalog/serving_estimator.yaml `power_limit_exponent`, recomputed from its source.

    python bench/power_limit.py

NVIDIA ran the same DGX H200 (8x H200 SXM, TensorRT-LLM, MLPerf Inference v4.1, Llama 2 70B) at the
board's 700 W and at `power_limit = 500` (configs/llama2-70b/Offline/__init__.py, class
H200_SXM_141GBx8_MaxQ: every other setting inherited from H200_SXM_141GBx1). A power cap lowers the SM
clock, not the memory's: the GEMM-rate scale c with which the serving model reproduces the measured
throughput ratio gives the exponent x of c = (500 / 700)^x.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench.serving_accuracy as accuracy  # noqa: E402
from advisor.data.catalog import GPU, Catalog, load_catalog  # noqa: E402
from advisor.perf.serve import Hardware  # noqa: E402
from advisor.perf.serving import load_params  # noqa: E402

MAXP_ROW = "mlperf41-nvidia-h200sxm-x8-llama2-70b-offline"  # 31,302.7 tokens/s at 700 W (the calibration row)
# closed/NVIDIA/results/H200-SXM-141GBx8_TRT_MaxQ/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt
# (github.com/mlcommons/inference_results_v4.1 at a2f5d66d): "Tokens per second: 25262.1"
MAXQ_TOKENS_PER_S = 25262.1
MAXQ_WATTS, MAXP_WATTS = 500.0, 700.0
# mean prompt of the OpenOrca subset: the value bench/serving_accuracy.py fits with the shipped parameters
# (docs/accuracy.md, "Mean prompt fitted where no source states it")
OPENORCA_PROMPT = 325.0


def _predict(row: dict, scale: float) -> float:
    """The row's predicted throughput with the H200's tensor rates scaled by `scale`."""
    catalog, params = load_catalog(), load_params()
    base = accuracy.hardware

    def scaled(gpu: GPU, cat: Catalog | None = None) -> Hardware:
        hw = base(gpu, cat)
        return dataclasses.replace(hw, tflops={k: v * scale for k, v in hw.tflops.items()})

    accuracy.hardware = scaled
    try:
        return accuracy.predict(row, params, catalog, {"mlperf-llama2-openorca": OPENORCA_PROMPT})
    finally:
        accuracy.hardware = base


def derived_exponent() -> tuple[float, float, float]:
    """(measured throughput ratio, the GEMM-rate scale reproducing it, the exponent)."""
    row = next(r for r in accuracy.rows() if r["id"] == MAXP_ROW)
    target = MAXQ_TOKENS_PER_S / float(row["measured"])
    full = _predict(row, 1.0)
    lo, hi = 0.2, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _predict(row, mid) / full < target else (lo, mid)
    scale = (lo + hi) / 2
    return target, scale, math.log(scale) / math.log(MAXQ_WATTS / MAXP_WATTS)


def main() -> None:
    target, scale, exponent = derived_exponent()
    print(
        f"measured 500 W / 700 W throughput: {target:.3f}; GEMM-rate scale reproducing it: {scale:.4f}; "
        f"power_limit_exponent: {exponent:.3f} (shipped: {load_params().power_limit_exponent})"
    )


if __name__ == "__main__":
    main()
