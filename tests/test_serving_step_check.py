"""The step-time check at a Server run's own operating point (bench/serving_step_check.py): Little's
law worked by hand on a loadgen summary, and the figures docs/accuracy.md quotes from it."""

from __future__ import annotations

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf.serving import load_params
from bench.serving_accuracy import rows
from bench.serving_step_check import operating_point, step_ratio

PCIE = "mlperf41-asus-h100pcie-x8-llama2-70b-server"
SXM = "mlperf41-nvidia-h100sxm-x8-llama2-70b-server"
PROMPT = {"mlperf-llama2-openorca": 322.0}  # the fitted mean prompt docs/accuracy.md quotes


def _row(rid: str) -> dict:
    return next(r for r in rows() if r["id"] == rid)


def test_operating_point_by_hand():
    """ASUS's 8 H100 PCIe at tensor parallel 2 (4 replicas): 8,094.27 output tokens/s and 27.82
    requests/s at a median TPOT of 139.925199 ms hold 8094.27 / 4 x 0.139925199 = 283.15 sequences in
    decode a replica and admit 27.82 / 4 x 322 x 0.139925199 = 313.36 prompt tokens a step."""
    row = {
        "quote": "Completed tokens per second: 8094.27 | Completed samples per second    : 27.82 | "
        "50.00 percentile time to output token (ns)   : 139925199 | "
        "99.00 percentile time to output token (ns)   : 157173770",
        "gpu_count": "8",
        "tensor_parallel": "2",
        "measured": "8094.27",
    }
    tpot, batch, tokens = operating_point(row, 50, 322.0)
    assert tpot == pytest.approx(0.139925199)
    assert batch == pytest.approx(283.15, abs=0.01)
    assert tokens == pytest.approx(313.36, abs=0.01)
    assert operating_point(row, 99, 322.0)[0] == pytest.approx(0.15717377)
    # a quote without the median (ASUS's H100 NVL Server summary gives only the p99) has no point
    assert operating_point({**row, "quote": row["quote"].split(" | 50.00")[0]}, 50, 322.0) is None


def test_the_h100_pcie_step_is_slower_than_modelled_where_the_sxm_step_is_not():
    """docs/accuracy.md (H100 PCIe): at each run's own operating point the H100 SXM's median TPOT is
    1.04 of the model's step and the H100 PCIe's 1.21, so the PCIe rows' error is the card's GPU time,
    not their batch, KV capacity or SLO scoring."""
    catalog, params = load_catalog(), load_params()
    sxm = step_ratio(_row(SXM), params, catalog, 50, PROMPT)
    pcie = step_ratio(_row(PCIE), params, catalog, 50, PROMPT)
    assert sxm["ratio"] == pytest.approx(1.04, abs=0.005)
    assert pcie["ratio"] == pytest.approx(1.21, abs=0.005)
