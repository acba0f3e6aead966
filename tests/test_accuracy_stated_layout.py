"""Calibration rows whose source states the whole layout, recompute included, are timed in that layout
(bench/calibration.py `predict`), even where the memory model cannot hold it: the run held it. The
layouts the sources state without activation recompute (MLPerf v5.0 NVIDIA Llama 2 70B LoRA on one
DGX B200, B001; Llama 3 405B on 16,384 H100, R132) are timed without it, so the speed no longer
pays for a recompute pass the run did not make."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf import evaluate, params_from

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import calibration  # noqa: E402  (bench/ is not a package)


@pytest.fixture(scope="module")
def setup():
    catalog = load_catalog()
    rows = {r["id"]: r for r in calibration.load_rows()}
    return catalog, params_from(catalog), rows


@pytest.mark.parametrize("rid", ["B001", "R132"])
def test_a_stated_layout_without_recompute_is_timed_without_it(setup, rid):
    catalog, p, rows = setup
    row = rows[rid]
    assert calibration.stated_layout(row) and row["checkpointing"] == "false"
    job, gpu, n = calibration.job_of(row), calibration.gpu_of(row, catalog, p), int(row["gpu_count"])
    assert not evaluate(job, gpu, n, p).fits  # the memory model cannot hold it: the row is listed as such
    assert rid in calibration.memory_model_misses(list(rows.values()), catalog, p)
    got = calibration.predict(row, catalog, p)
    assert math.isfinite(got)
    # by hand: the same job with the memory check lifted, in the stated layout
    lifted = evaluate(job, gpu, n, replace(p, usable_memory_fraction=calibration.MEMORY_CHECK_LIFTED))
    assert lifted.layout["checkpointing"] is False and lifted.layout["tensor_parallel"] == int(row["tensor_parallel"])
    steady = lifted.tokens_per_s_per_gpu
    if row["basis"] == "goodput":
        steady *= calibration.goodput(n, float(row["run_tokens"]) / (steady * n) / 3600.0, p)
    assert got == pytest.approx(steady, rel=1e-12)
    # the model's own choice when recompute is not stated: full recompute, which fits and is slower
    chosen = evaluate(replace(job, checkpointing=None), gpu, n, p)
    assert chosen.fits and chosen.layout["checkpointing"] is True
    assert lifted.tokens_per_s_per_gpu > 1.2 * chosen.tokens_per_s_per_gpu


def test_a_stated_layout_that_fits_is_predicted_as_before(setup):
    catalog, p, rows = setup
    row = rows["R010"]  # MPT-70b on 512 H100: layout stated, held by the memory model
    assert calibration.stated_layout(row) and row["id"] not in calibration.memory_model_misses([row], catalog, p)
    e = evaluate(calibration.job_of(row), calibration.gpu_of(row, catalog, p), int(row["gpu_count"]), p)
    assert calibration.predict(row, catalog, p) == e.tokens_per_s_per_gpu


def test_an_unstated_layout_that_does_not_fit_is_not_lifted(setup):
    catalog, p, rows = setup
    row = dict(rows["B001"], id="B001-unstated", checkpointing="", gpu="rtx-4090")  # 70B on 8 x 24 GB: nothing fits
    assert not calibration.stated_layout(row)
    assert math.isnan(calibration.predict(row, catalog, p))
