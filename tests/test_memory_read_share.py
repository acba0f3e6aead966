"""A decode step reads memory at a share of what a pure streaming read of the same part was measured to
reach (catalog/serving_estimator.yaml `memory_read_share`), not at one share of every datasheet: parts
whose memory streams at a lower share of their datasheet (A100 HBM2e, B200, MI300X) decode slower in
proportion, worked here by hand from the measured GB/s the catalog quotes."""

from __future__ import annotations

import dataclasses

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf.kv import load_model
from advisor.perf.serve import Setup, decode_step
from advisor.perf.serving import hardware, load_params

# OpenCL-Benchmark 'Memory Bandwidth ( coalesced read )' / the datasheet the catalog holds
H100 = 3025.53 / 3350
# BabelStream CUDA 'Dot' (TB/s) on ND H100 v5, ND H200 v5 and ND A100 v4 (Azure AI-benchmarking-guide): one
# program on the H100 and the part, so the part reads at the H100's share x (its Dot / datasheet) / the H100's
DOT_H100 = 3.18 / 3.350
MEASURED = {
    "h100-sxm": H100,
    "h200-sxm": H100 * (4.48 / 4.800) / DOT_H100,  # HBM3e on the GH100 die
    "a100-80gb-sxm": H100 * (1.75 / 2.039) / DOT_H100,  # HBM2e on an A100-SXM4-80GB
    "a100-40gb-sxm": 1350.39 / 1555,  # HBM2: measured on an A100-PCIE-40GB
    "b200": 6668.71 / 7700,
    "mi300x": 3756.64 / 5300,
    "mi325x": 3756.64 / 5300,  # the MI300X's die
    "l40s": H100,  # no measurement of its die: the H100's
}


@pytest.mark.parametrize("gpu", sorted(MEASURED))
def test_each_part_reads_at_its_measured_share(gpu):
    catalog = load_catalog()
    p = load_params()
    hw = hardware(catalog.gpu(gpu), catalog)
    # the catalog's four decimals are the measured share rounded (review28 L6 read 0.8166 against 0.8165: that
    # took the H100's share rounded to 0.9031 first; unrounded, 0.903143 x 0.858264 / 0.949254 = 0.81658)
    assert hw.memory_read_share == round(MEASURED[gpu], 4)
    s = Setup(load_model("llama-3.1-8b"), hw, "fp8", 1, 1, "tensorrt-llm", p)
    by_hand = hw.bandwidth_gbps * 1e9 * MEASURED[gpu] * p.decode_bandwidth_efficiency
    assert s.bandwidth == pytest.approx(by_hand, rel=1e-4)


def test_a_lower_read_share_slows_a_memory_bound_step_in_proportion():
    """The same H100 with the A100's measured share: the memory part of a decode step (Llama 3.1 8B,
    fp8, 64 sequences at 2,000 tokens: bandwidth-bound) takes 0.9031 / 0.8166 as long; the GEMM part
    does not move."""
    catalog = load_catalog()
    p = load_params()
    h100 = hardware(catalog.gpu("h100-sxm"), catalog)
    a100_share = hardware(catalog.gpu("a100-80gb-sxm"), catalog).memory_read_share
    slower = dataclasses.replace(h100, memory_read_share=a100_share)
    m = load_model("llama-3.1-8b")
    a = decode_step(Setup(m, h100, "fp8", 1, 1, "tensorrt-llm", p), 64, 2000)
    b = decode_step(Setup(m, slower, "fp8", 1, 1, "tensorrt-llm", p), 64, 2000)
    assert a["memory_s"] > a["compute_s"]
    assert b["memory_s"] / a["memory_s"] == pytest.approx(h100.memory_read_share / a100_share, rel=1e-9)
    assert b["compute_s"] == a["compute_s"]


def test_shares_are_below_the_datasheet_and_name_catalog_parts():
    """Every listed share is a measurement below its datasheet (0 < share < 1), of a part the catalog
    holds, and a fitted decode share above 1 would read faster than a streaming read: the fit's
    ceiling is 1."""
    import yaml

    from advisor.data.resources import data_dir

    catalog = load_catalog()
    shares = load_params().memory_read_share
    assert "default" in shares
    for gpu, share in shares.items():
        assert 0 < share < 1, gpu
        assert gpu == "default" or gpu in catalog.gpus, gpu
    doc = yaml.safe_load((data_dir("catalog") / "serving_estimator.yaml").read_text(encoding="utf-8"))
    assert doc["fit_bounds"]["decode_bandwidth_efficiency"][1] == 1.0
    assert load_params().decode_bandwidth_efficiency <= 1.0


def test_the_same_program_on_both_parts_sets_the_a100_and_h200_against_the_h100():
    """One program (BabelStream on Azure's ND A100 v4, H100 v5 and H200 v5) reads an A100-SXM4-80GB at
    1.75 / 3.18 = 0.550 of an H100 and an H200 at 4.48 / 3.18 = 1.409, where the datasheets say 2,039 /
    3,350 = 0.609 and 4,800 / 3,350 = 1.433: a memory-bound decode step (the same bytes on each part)
    takes 1 / 0.550 and 1 / 1.409 of the H100's time (bf16, which all three run), not the datasheets' ratios nor the 0.868 / 0.903 an
    A100-PCIE-40GB's HBM2 gave the A100's HBM2e."""
    catalog = load_catalog()
    p = load_params()
    m = load_model("llama-3.1-8b")

    def memory_s(gpu: str) -> float:
        hw = hardware(catalog.gpu(gpu), catalog)
        return decode_step(Setup(m, hw, "bf16", 1, 1, "tensorrt-llm", p), 64, 2000)["memory_s"]

    h100 = memory_s("h100-sxm")
    assert h100 / memory_s("a100-80gb-sxm") == pytest.approx(1.75 / 3.18, rel=1e-3)
    assert h100 / memory_s("h200-sxm") == pytest.approx(4.48 / 3.18, rel=1e-3)
