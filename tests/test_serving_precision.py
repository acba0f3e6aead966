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


@pytest.mark.parametrize("precision", ["fp8", "fp4"])
def test_the_lm_head_of_an_fp8_or_fp4_checkpoint_stays_16_bit(precision):
    """ModelOpt's FP8 and NVFP4 configs leave the LM head unquantized ('*lm_head*': {'enable': False}):
    it is held at 2 bytes a weight and its GEMM runs at the 16-bit rate. Llama 3.1 8B's head is
    128,256 x 4,096 = 525M of its 8.03B parameters."""
    from advisor.perf.serve import Setup, decode_step
    from advisor.perf.serving import load_params

    catalog = load_catalog()
    m, hw = load_model("llama-3.1-8b"), hardware(catalog.gpus["b200"], catalog)
    head = 128256 * 4096
    est = serve_estimate(m, hw, 1, precision, 500, 100)
    assert est["weights_gb_per_gpu"] == pytest.approx(
        ((m.params - head) * WEIGHT_BYTES[precision] + head * 2) / 1e9, abs=1e-3
    )
    s = Setup(m, hw, precision, 1, 1, "tensorrt-llm", load_params())
    batch, ctx = 256, 600
    body = batch * (2 * (m.matmul_active - head) + 4 * m.layers * ctx * m.heads * m.head_dim)
    peak = {p: hw.tflops[p] * 1e12 * hw.matmul_fraction.get(p, hw.matmul_fraction["bf16"]) for p in hw.tflops}
    expected = (body / peak[precision] + batch * 2 * head / peak["bf16"]) / s.params.decode_compute_efficiency
    assert decode_step(s, batch, ctx)["compute_s"] == pytest.approx(expected, rel=1e-9)
    # a 16-bit job has no quantized GEMMs to set apart: all of it at the 16-bit rate
    s16 = Setup(m, hw, "bf16", 1, 1, "tensorrt-llm", load_params())
    all16 = batch * (2 * m.matmul_active + 4 * m.layers * ctx * m.heads * m.head_dim) / peak["bf16"]
    assert decode_step(s16, batch, ctx)["compute_s"] == pytest.approx(all16 / s.params.decode_compute_efficiency)
