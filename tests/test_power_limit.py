"""A card run at a lower board power limit than the measured part of its die sustains a lower GEMM
rate (advisor/perf/power_limit.py): the cap, worked by hand, and its exponent recomputed from the
measured power-capped run it is derived from (bench/power_limit.py)."""

from __future__ import annotations

import math

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf.power_limit import capped_share
from advisor.perf.serving import hardware, load_params


def test_h100_nvl_fp8_share_by_hand():
    """H100 NVL (400 W, fp8 1,670.5 TFLOPS dense) against the H100 SXM (700 W, fp8 1,978.9, measured
    MAMF share 0.709): 1978.9 x 0.709 x (400/700)^0.786 = 1403.0 x 0.6441 = 903.7 TFLOPS, 0.5410 of
    its own peak, below the 0.71 it would otherwise take."""
    assert load_params().power_limit_exponent == 0.786
    by_hand = 1978.9 * 0.709 * math.exp(0.786 * math.log(400 / 700)) / 1670.5
    assert by_hand == pytest.approx(0.5410, abs=1e-4)
    catalog = load_catalog()
    nvl = hardware(catalog.gpu("h100-nvl"), catalog)
    assert nvl.matmul_fraction["fp8"] == pytest.approx(by_hand, rel=1e-6)
    assert capped_share(0.71, 1670.5, 1978.9, 0.709, 400, 700, 0.786) == pytest.approx(by_hand, rel=1e-9)


def test_cap_leaves_measured_and_unreferenced_parts_alone():
    """The reference part keeps its measured shares; a part with its own measurement (A100 PCIe, 252.9
    of 312 TFLOPS) keeps it; a part without a same-die reference (L40S) keeps the default; a part at
    or above the reference's power is never capped."""
    catalog = load_catalog()
    assert hardware(catalog.gpu("h100-sxm"), catalog).matmul_fraction["fp8"] == pytest.approx(0.709)
    assert hardware(catalog.gpu("a100-80gb-pcie"), catalog).matmul_fraction["bf16"] == pytest.approx(0.811)
    assert hardware(catalog.gpu("l40s"), catalog).matmul_fraction["fp8"] == pytest.approx(0.71)
    assert capped_share(0.71, 1978.9, 1978.9, 0.709, 700, 700, 0.786) == 0.71
    pcie = hardware(catalog.gpu("h100-pcie"), catalog).matmul_fraction["fp8"]
    assert pcie == pytest.approx(1978.9 * 0.709 * 0.5**0.786 / 1513, rel=1e-3)


@pytest.mark.slow
def test_exponent_reproduces_the_measured_power_capped_run():
    """NVIDIA's DGX H200 at power_limit 500 W ran Llama 2 70B Offline at 25,262.1 tokens/s against
    31,302.7 at 700 W (0.807): the shipped exponent, recomputed from that pair, is within 0.01."""
    from bench.power_limit import derived_exponent

    target, _, exponent = derived_exponent()
    assert target == pytest.approx(0.807, abs=0.001)
    assert exponent == pytest.approx(load_params().power_limit_exponent, abs=0.01)
