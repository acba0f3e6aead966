"""The serving model's step time at a Server run's own operating point (docs/accuracy.md, "Serving").

    python bench/serving_step_check.py            # p50 TPOT where the row's quote gives it
    python bench/serving_step_check.py --p99      # p99 TPOT (every MLPerf Server quote gives it)

A throughput error mixes the step time with the scheduling (batch, KV capacity, SLO). An MLPerf Server
run's loadgen summary also gives its TPOT percentiles, which separate the two: by Little's law a
replica holds (its output tokens/s) x TPOT sequences in decode, and admits (its requests/s) x (mean
prompt) x TPOT prompt tokens a step (in-flight batching merges them into the decode step's GEMMs). The
model's time for one such step (advisor/perf/serve.py: decode_step at that batch plus prefill's
busy_s for those tokens) is compared with the TPOT the run measured: a ratio near 1 says the model's
GPU time is right at that point and the throughput error is elsewhere; a ratio above 1 says the
GPU's step is slower than modelled. The mean prompt of a data set without a sourced one is the one
bench/serving_accuracy.py fits on the fitted rows with the shipped parameters.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.perf.kv import load_model  # noqa: E402
from advisor.perf.serve import Setup, decode_step, prefill  # noqa: E402
from advisor.perf.serving import hardware, load_params  # noqa: E402
from bench.serving_accuracy import fit_lengths, row_params, rows  # noqa: E402

TPOT = {
    50: r"50\.00 percentile time to output token \(ns\)\s*:\s*(\d+)",
    99: r"99\.00 percentile time to output token \(ns\)\s*:\s*(\d+)",
}
QPS = r"Completed samples per second\s*:\s*([\d.]+)"


def operating_point(row: dict, percentile: int, prompt: float) -> tuple[float, float, float] | None:
    """(TPOT in s, sequences in decode per replica, prompt tokens admitted per step per replica) from
    the row's quoted loadgen summary, or None where the quote lacks the TPOT or the request rate."""
    tpot, qps = re.search(TPOT[percentile], row["quote"]), re.search(QPS, row["quote"])
    if not tpot or not qps:
        return None
    t = int(tpot.group(1)) / 1e9
    replicas = int(row["gpu_count"]) // int(row["tensor_parallel"] or 1)
    return t, float(row["measured"]) / replicas * t, float(qps.group(1)) / replicas * prompt * t


def step_ratio(row: dict, params, catalog, percentile: int, lengths: dict) -> dict | None:
    """The run's TPOT against the model's step at the run's operating point (operating_point)."""
    prompt = float(row["input_len"]) if row["input_len"] else lengths.get(row["input_len_group"])
    point = operating_point(row, percentile, prompt) if prompt else None
    if point is None:
        return None
    tpot, batch, tokens = point
    hw = hardware(catalog.gpu(row["gpu"]), catalog)
    if (row.get("scale_up_link") or "").startswith("none"):
        hw = dataclasses.replace(hw, link_gbps=0.0, link_domain=1)
    s = Setup(
        load_model(row["model"], catalog),
        hw,
        row["precision"],
        int(row["tensor_parallel"] or 1),
        1,
        row["engine"],
        row_params(row, params),
    )
    d = decode_step(s, batch, prompt + float(row["output_len"]) / 2)
    p = prefill(s, tokens)
    model = d["step_s"] + p["busy_s"]
    return {"tpot_s": tpot, "batch": batch, "prefill_tokens": tokens, "model_s": model, "ratio": tpot / model}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--p99", action="store_true", help="the runs' p99 TPOT instead of the median")
    a = ap.parse_args()
    pct = 99 if a.p99 else 50
    catalog, params = load_catalog(), load_params()
    data = rows()
    lengths = fit_lengths([r for r in data if r["fit"] == "yes"], params, catalog)
    print(
        f"| row | GPU x n (TP) | sequences in decode | prompt tokens a step | p{pct} TPOT | model step | TPOT / model |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in data:
        if r["kind"] != "server" or not r["gpu"]:
            continue
        out = step_ratio(r, params, catalog, pct, lengths)
        if out is None:
            continue
        print(
            f"| {r['id']} | {r['gpu']} x {r['gpu_count']} ({r['tensor_parallel'] or 1}) | {out['batch']:,.0f} | "
            f"{out['prefill_tokens']:,.0f} | {out['tpot_s'] * 1e3:.1f} ms | {out['model_s'] * 1e3:.1f} ms | "
            f"{out['ratio']:.2f} |"
        )


if __name__ == "__main__":
    main()
