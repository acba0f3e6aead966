"""Three parts of one die in one table: how much of a memory upgrade the serving model turns into
throughput, against what the TensorRT-LLM 0.17 perf-overview table measured (docs/accuracy.md, "Serving").

    python bench/serving_same_die.py

The table (perf-overview.md at TensorRT-LLM commit 258c7540, the source of the trtllm017 rows) ran
Llama 3.1 8B FP8 on one H100 80GB HBM3, one H200 and one GH200 at nine prompt/output lengths. The three
carry the same GH100 die (132 SMs, the same datasheet FP8 rate); they differ in memory. So the ratio of
two of them at one length measures what the memory alone is worth there. The model predicts the H100 and
the H200 as the bench does (bench/serving_accuracy.py `predict`, the rows' own engine settings). The
GH200 is not in the catalog; it is predicted as the catalog's H100 SXM with the GH200's memory in place,
for both GH200 memory variants, because the table's header ("GH200 480GB", its LPDDR5X) does not say
which HBM it carried: 96 GB HBM3 at 4.0 TB/s, or 144 GB HBM3e at 4.9 TB/s (NVIDIA's GH200 announcement of
August 2023 and its GH200 page; not a catalog figure, used only here). The same page for release 0.15.0
heads its GH200 column "GH200 96GB HBM3 CG1", so the HBM3 part is the likelier. Everything else is the H100's:
its matmul rate, its measured streaming-read share, its 700 W (the GH200 module's power budget is shared
with the Grace CPU, and no GH200 clock is published). The GH200 column was measured with
gptManagerBenchmark instead of trtllm-bench ("For release v0.17, on GH200 systems, we recommend using the
legacy flow based on gptManagerBenchmark"), with the same scheduler policy and KV share.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.perf.serving import load_params  # noqa: E402
from bench import serving_accuracy  # noqa: E402
from bench.serving_accuracy import predict, rows  # noqa: E402

SOURCE = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/258c7540c03517def55d9a5aadfa9288af474e1b/"
    "docs/source/performance/perf-overview.md"
)
# The table's 'GH200 480GB' column, LLaMA v3.1 8B, tensor parallel 1, FP8, tokens/s (SOURCE)
GH200_8B = {
    (128, 128): 29852.96,
    (128, 2048): 21769.55,
    (128, 4096): 14189.89,
    (500, 2000): 17137.29,
    (1000, 1000): 16482.77,
    (2048, 128): 3843.95,
    (2048, 2048): 10265.9,
    (5000, 500): 3932.58,
    (20000, 2000): 1560.2,
}
# GH200 memory variants (GB, GB/s): the HBM3 part and the HBM3e part NVIDIA announced in August 2023
VARIANTS = {"96 GB HBM3": (96.0, 4000.0), "144 GB HBM3e": (144.0, 4900.0)}


def ratios(lengths: tuple[int, int], params, catalog) -> dict[str, tuple[float, float]]:
    """{label: (measured ratio to the H100, the model's)} for the H200 and each GH200 variant at one length."""
    by_gpu = {
        r["gpu"]: r for r in rows() if r["id"].startswith(f"trtllm017-llama3.1-8b-tp1-{lengths[0]}-{lengths[1]}-")
    }
    h100 = by_gpu["h100-sxm"]
    base = predict(h100, params, catalog)
    out = {}
    if "h200-sxm" in by_gpu:
        h200 = by_gpu["h200-sxm"]
        out["H200"] = (float(h200["measured"]) / float(h100["measured"]), predict(h200, params, catalog) / base)
    hardware = serving_accuracy.hardware
    for label, (memory_gb, bandwidth) in VARIANTS.items():

        def gh200(gpu, cat=None, memory_gb=memory_gb, bandwidth=bandwidth):
            return dataclasses.replace(hardware(gpu, cat), memory_gb=memory_gb, bandwidth_gbps=bandwidth)

        serving_accuracy.hardware = gh200
        try:
            model = predict(h100, params, catalog) / base
        finally:
            serving_accuracy.hardware = hardware
        out[f"GH200 {label}"] = (GH200_8B[lengths] / float(h100["measured"]), model)
    return out


def main() -> None:
    params, catalog = load_params(), load_catalog()
    print(f"Llama 3.1 8B FP8, one GPU, per-GPU throughput over the H100's (measured / model); {SOURCE}")
    labels = ["H200", *(f"GH200 {v}" for v in VARIANTS)]
    print("| input, output | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    for lengths in GH200_8B:
        r = ratios(lengths, params, catalog)
        cells = [f"{r[k][0]:.3f} / {r[k][1]:.3f}" if k in r else "-" for k in labels]
        print(f"| {lengths[0]}, {lengths[1]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
