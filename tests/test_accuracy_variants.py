"""Calibration rows that ran a GPU other than their catalog entry (catalog/estimator.yaml
`calibration_variants`, bench/accuracy.py): they are predicted with the variant's figures, so the
stated bandwidth and the fitted compute_scale reach the prediction and the fit can move it."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf import evaluate, params_from

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import accuracy  # noqa: E402  (bench/ is not a package)

VARIANT = "h100-96gb-hbm2e-500w"


@pytest.fixture(scope="module")
def setup():
    catalog = load_catalog()
    rows = [r for r in accuracy.load_rows() if r.get("gpu_variant") == VARIANT]
    return catalog, params_from(catalog), rows


def _by_hand(catalog, scale: float, bandwidth: float):
    """The variant built here from its stated figures: the catalog H100 SXM with every dense tensor
    rate times `scale` and the memory bandwidth the torchtitan pages state."""
    sxm = catalog.gpus["h100-sxm"]
    tensor = {
        k: f.model_copy(update={"value": f.value * scale}) if f.value is not None else f  # (fp4: lacked)
        for k, f in sxm.tensor_tflops.items()
    }
    return sxm.model_copy(
        update={
            "tensor_tflops": tensor,
            "memory_bandwidth_gbps": sxm.memory_bandwidth_gbps.model_copy(update={"value": bandwidth}),
        }
    )


def test_torchtitan_rows_name_the_variant_and_its_figures_are_the_pages(setup):
    catalog, p, rows = setup
    assert len(rows) == 15 and {r["gpu"] for r in rows} == {"h100-sxm"}  # R045-R057, R056a, R057a (async TP)
    v = p.calibration_variants[VARIANT]
    assert v["memory_bandwidth_gbps"] == 2400  # "2.4 TB/sec peak memory bandwidth"
    nvl, sxm = (catalog.gpus[g].dense_tflops("bf16") for g in ("h100-nvl", "h100-sxm"))
    assert nvl / sxm <= v["compute_scale"] <= 1.0  # "between SXM and NVL"


@pytest.mark.parametrize("rid", ["R045", "R047", "R052", "R054", "R057"])
def test_a_variant_row_is_predicted_with_the_variants_figures(setup, rid):
    catalog, p, rows = setup
    row = next(r for r in rows if r["id"] == rid)
    n = int(row["gpu_count"])
    scale = p.calibration_variants[VARIANT]["compute_scale"]
    expected = evaluate(accuracy.job_of(row), _by_hand(catalog, scale, 2400.0), n, p).tokens_per_s_per_gpu
    catalog_gpu = evaluate(accuracy.job_of(row), catalog.gpus["h100-sxm"], n, p).tokens_per_s_per_gpu
    got = accuracy.predict(row, catalog, p)
    assert math.isclose(got, expected, rel_tol=1e-12)
    assert not math.isclose(got, catalog_gpu, rel_tol=1e-3)  # the defect: the catalog H100 SXM


def test_the_fit_can_move_compute_scale(setup):
    catalog, p, rows = setup
    row = next(r for r in rows if r["id"] == "R047")  # compute-bound fp8, 8 GPUs
    key = f"calibration_variants.{VARIANT}.compute_scale"
    values = [accuracy.get(p, k) for k in accuracy.FREE]
    lo, hi = accuracy.FREE[key]
    preds = []
    for scale in (lo, hi):
        q = accuracy.with_values(p, [scale if k == key else v for k, v in zip(accuracy.FREE, values)])
        expected = evaluate(accuracy.job_of(row), _by_hand(catalog, scale, 2400.0), 8, q).tokens_per_s_per_gpu
        preds.append(accuracy.predict(row, catalog, q))
        assert math.isclose(preds[-1], expected, rel_tol=1e-12)
    assert preds[1] > preds[0] * 1.05  # the SXM's rate runs the row faster


def test_a_row_without_a_variant_is_its_catalog_gpu(setup):
    catalog, p, _ = setup
    row = next(r for r in accuracy.load_rows() if r["id"] == "R027")  # MosaicML MPT-7B, 8 A100 80GB
    expected = evaluate(accuracy.job_of(row), catalog.gpus[row["gpu"]], int(row["gpu_count"]), p)
    assert accuracy.predict(row, catalog, p) == expected.tokens_per_s_per_gpu


def test_a_variant_keeps_its_entrys_generation(setup):
    # group_of, the band (catalog/accuracy.yaml) and the uncertainty families read the row's catalog
    # entry: right only because a variant changes figures, not the architecture
    from advisor.perf.training import generation

    catalog, p, rows = setup
    for row in rows:
        g = accuracy.gpu_of(row, catalog, p)
        assert g.id == row["gpu"] and generation(g) == generation(catalog.gpus[row["gpu"]]) == "hopper"
        assert accuracy.group_of(row, catalog) == f"hopper {row['precision']}"
