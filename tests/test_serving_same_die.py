"""The same-die check (bench/serving_same_die.py): the GH200 column it quotes against the catalog's own
quote of that table, the measured ratios worked by hand, and the figures docs/accuracy.md quotes."""

from __future__ import annotations

import csv

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf.serving import load_params
from bench import serving_accuracy
from bench.serving_same_die import GH200_8B, ratios
from tests.conftest import ROOT


def test_the_gh200_column_is_the_tables():
    """The one GH200 figure catalog/serving_calibration.csv quotes (an excluded row: the GH200 is not in
    the catalog) is the script's: 16,482.77 tokens/s at 1000/1000."""
    with open(ROOT / "catalog" / "serving_calibration.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == "trtllm017-llama3.1-8b-tp1-1000-1000-gh200")
    assert float(row["measured"]) == GH200_8B[(1000, 1000)]
    assert "| 16482.77 " in row["quote"]


def test_ratios_at_128_4096():
    """Measured by hand from the table: H200 17,370.8 / H100 13,593.65 = 1.278, GH200 14,189.89 /
    13,593.65 = 1.044. The model gives the 96 GB HBM3 GH200 1.174 and the H200 1.494 (docs/accuracy.md),
    and leaves the bench's hardware function as it found it."""
    hardware = serving_accuracy.hardware
    r = ratios((128, 4096), load_params(), load_catalog())
    assert serving_accuracy.hardware is hardware
    assert r["H200"][0] == pytest.approx(17370.8 / 13593.65)
    assert r["GH200 96 GB HBM3"][0] == pytest.approx(14189.89 / 13593.65)
    assert r["H200"][1] == pytest.approx(1.494, abs=0.0015)
    assert r["GH200 96 GB HBM3"][1] == pytest.approx(1.174, abs=0.0015)
    assert r["GH200 144 GB HBM3e"][1] == pytest.approx(1.513, abs=0.0015)
