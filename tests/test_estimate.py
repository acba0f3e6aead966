"""The performance model's first cut: the article's anchor, the 4090's real tensor rate, memory."""
from __future__ import annotations

import pytest

import advisor


def test_gpt2_small_on_one_a100_is_within_30_percent_of_195k():
    e = advisor.estimate(model="gpt2-124m", gpu="a100-80gb-sxm")
    assert e["fits"] and e["gpu_count"] == 1
    assert abs(e["tokens_per_s"] / 195_000 - 1) <= 0.30


def test_rtx_4090_uses_fp32_accumulate_rate_not_330(catalog):
    g = catalog.gpus["rtx-4090"]
    assert g.dense_tflops("bf16") == pytest.approx(165.2)
    assert g.tensor_tflops["fp16_fp16acc"].value == pytest.approx(330.3)
    e = advisor.estimate(model="gpt2-124m", gpu="rtx-4090")
    assert e["dense_tflops"] == pytest.approx(165.2)


def test_a_7b_model_needs_several_24gb_cards():
    e = advisor.estimate(params="7B", layers=32, hidden=4096, seq_len=2048, gpu="rtx-4090")
    assert not e["fits"] and e["min_gpus"] > 1
    more = advisor.estimate(params="7B", layers=32, hidden=4096, seq_len=2048, gpu="rtx-4090", count=e["min_gpus"])
    assert more["fits"] and more["layout"]["strategy"] == "zero3"


def test_multi_gpu_4090_pays_for_missing_peer_to_peer():
    one = advisor.estimate(model="gpt2-350m", gpu="rtx-4090")
    four = advisor.estimate(model="gpt2-350m", gpu="rtx-4090", count=4)
    assert four["layout"]["interconnect"] == "pcie-via-host"
    assert four["tokens_per_s_per_gpu"] < one["tokens_per_s_per_gpu"]


def test_estimate_cli_json(run):
    import json
    code, out, _ = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm", "--format", "json")
    e = json.loads(out)
    assert code == 0
    assert {"gpu", "gpu_count", "fits", "memory_per_gpu_gb", "tokens_per_s", "tokens_per_s_per_gpu", "mfu",
            "step_breakdown"} <= set(e)
    assert set(e["step_breakdown"]) == {"compute_s", "memory_s", "comm_s"}


def test_estimate_cli_unknown_gpu_suggests(run):
    code, _, err = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sx")
    assert code == 2 and "did you mean h100-sxm" in err
