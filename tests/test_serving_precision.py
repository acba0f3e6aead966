"""Precision needs hardware (issue 29 item 7, serving): a job's precision is served only on GPUs with a
tensor rate for it; elsewhere it is planned at a wider precision the GPU has, with a warning, and
weight-only int8/int4 compute at the GPU's 16-bit rate."""

from __future__ import annotations

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf.kv import SERVE_PRECISIONS, WEIGHT_BYTES, load_model
from advisor.perf.serve import Hardware
from advisor.perf.serving import hardware, replica_rate
from advisor.perf.serving_estimate import serve_estimate

WIDTH = {"fp4": 4, "int4": 4, "fp8": 8, "int8": 8, "bf16": 16, "fp16": 16}


def _rate(gpu, precision):
    fig = gpu.tensor_tflops.get(precision)
    return fig.value if fig is not None else None


@pytest.mark.parametrize("gid", sorted(load_catalog().gpus))
def test_every_gpu_and_precision_is_served_only_where_the_catalog_has_a_rate(gid):
    gpu = load_catalog().gpus[gid]
    hw = hardware(gpu)
    for precision in SERVE_PRECISIONS:
        est = serve_estimate("llama-3.1-8b", hw, 1, precision, 500, 100)
        served, compute = est["served_precision"], est["compute_precision"]
        if precision in ("int8", "int4"):
            # weight-only: the weights stay in 8/4 bits and are dequantized to a 16-bit rate the GPU has
            expected_compute = "bf16" if _rate(gpu, "bf16") else "fp16" if _rate(gpu, "fp16") else None
            assert (served, compute) == ((precision, expected_compute) if expected_compute else (None, None))
            assert est["warnings"] == []
            continue
        if _rate(gpu, precision):
            assert (served, compute, est["warnings"]) == (precision, precision, [])
            continue
        # no rate (null in tensor_tflops): never planned at that precision, never at a narrower one
        assert served != precision
        assert served is None or (_rate(gpu, served) and WIDTH[served] >= WIDTH[precision]), (gid, precision, served)
        if served is not None:
            (w,) = est["warnings"]
            assert w["code"] == "precision-not-on-gpu" and f"no {precision} tensor rate" in w["message"]
            note = gpu.tensor_tflops[precision].note if precision in gpu.tensor_tflops else None
            if note:
                assert note in w["message"]


def test_fp8_on_rdna3_is_planned_at_fp16_with_the_catalog_reason():
    catalog = load_catalog()
    assert catalog.gpus["rx-7900-xtx"].tensor_tflops["fp8"].value is None
    est = serve_estimate("llama-3.1-8b", "rx-7900-xtx", 1, "fp8", 800, 250, ttft_ms=2000, tpot_ms=80)
    assert est["served_precision"] == "fp16" and est["compute_precision"] == "fp16"
    assert (
        catalog.gpus["rx-7900-xtx"].tensor_tflops["fp8"].note in est["warnings"][0]["message"]
    )  # the catalog's reason
    # the weights are held at 2 bytes, not 1: 8,030,261,248 parameters x 2 bytes
    assert est["weights_gb_per_gpu"] == pytest.approx(8030261248 * 2 / 1e9, abs=1e-3)
    same = serve_estimate("llama-3.1-8b", "rx-7900-xtx", 1, "fp16", 800, 250, ttft_ms=2000, tpot_ms=80)
    assert est["output_tokens_per_s"] == same["output_tokens_per_s"] and same["warnings"] == []


def test_the_optimizer_unit_carries_the_served_precision_and_warning():
    hw = hardware(load_catalog().gpus["rtx-3090"])
    m = load_model("llama-3.1-8b")
    fp8 = replica_rate(m, hw, 1, "fp8", 800, 250, ttft_ms=2000, tpot_ms=80)
    bf16 = replica_rate(m, hw, 1, "bf16", 800, 250, ttft_ms=2000, tpot_ms=80)
    assert fp8.precision == "bf16" and fp8.requests_per_s == bf16.requests_per_s
    assert fp8.weights_gb_per_gpu == pytest.approx(m.params * WEIGHT_BYTES["bf16"] / 1e9)
    assert [w["code"] for w in fp8.warnings] == ["precision-not-on-gpu"] and bf16.warnings == []
    int4 = replica_rate(m, hw, 1, "int4", 800, 250, ttft_ms=2000, tpot_ms=80)
    assert int4.precision == "int4" and int4.warnings == []
    assert int4.weights_gb_per_gpu == pytest.approx(m.params * WEIGHT_BYTES["int4"] / 1e9)


def test_a_gpu_without_any_16_bit_rate_is_refused_with_the_reason():
    bare = Hardware(name="no-tensor-cores", memory_gb=80, bandwidth_gbps=2000, tflops={})
    assert replica_rate("llama-3.1-8b", bare, 1, "int4", 500, 100) is None
    est = serve_estimate("llama-3.1-8b", bare, 1, "fp8", 500, 100)
    assert est["fits"] is False and "no tensor rate for fp8 or a wider format" in est["reason"]


@pytest.mark.parametrize("gid, precision", [("a100-80gb-sxm", "fp8"), ("t4", "fp4")])
def test_the_estimate_text_says_the_precision_it_was_planned_at(gid, precision):
    """`advisor estimate --kind serve --gpu a100-80gb-sxm --precision fp8` printed "llama-3.1-8b at fp8"
    and the rate at bf16 (the A100 has no fp8); the warning that says so was in the JSON only. On a T4
    at fp4 it read "does not run: llama-3.1-8b at fp16 needs ..." with no word of why fp16."""
    from advisor.present.tables import serve_estimate_text

    est = serve_estimate("llama-3.1-8b", hardware(load_catalog().gpus[gid]), 1, precision, 1000, 300)
    (w,) = est["warnings"]
    assert est["served_precision"] != precision and w["code"] == "precision-not-on-gpu"
    text = " ".join(serve_estimate_text(est).split())
    assert f"note: {w['message']}" in text, text
