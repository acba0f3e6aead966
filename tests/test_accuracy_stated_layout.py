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


def test_llama3_405b_rows_state_the_papers_zero2_and_assume_only_the_micro_batch(setup):
    """The Llama 3 paper (arXiv:2407.21783 §3.3.2) shards 'optimizer states and gradients, but for model
    shards we do not reshard after forward computation' (ZeRO-2) and gives no micro-batch: the model-card
    row R132 and the Table 4 rows R124, R125 (one run) carry the same layout, the micro-batch marked assumed."""
    _, _, rows = setup
    layouts = {rid: {k: rows[rid][k] for k in calibration.LAYOUT_FIELDS} for rid in ("R124", "R125", "R132")}
    assert layouts["R132"] == layouts["R124"] == layouts["R125"]
    assert layouts["R132"]["strategy"] == "zero2" and "reshard after forward" in rows["R132"]["layout_source"]
    assert all(calibration.assumed_fields(rows[rid]) == ("micro_batch",) for rid in layouts)


@pytest.mark.parametrize(
    ("assumed", "micro_batch", "lifted"),
    [
        ("micro_batch", "1", True),  # an assumed micro-batch at its minimum: the least activation memory
        ("", "1", True),
        ("micro_batch", "2", False),  # an assumed micro-batch above 1 could be what does not fit
        ("strategy micro_batch", "1", False),  # an assumed sharding is not the source's layout
        ("checkpointing", "1", False),  # nor an assumed recompute
    ],
)
def test_only_a_sourced_layout_lifts_the_memory_check(setup, assumed, micro_batch, lifted):
    """The memory check is lifted for what the source states, not for whatever fields are filled: R132's
    layout with a field marked assumed (`layout_assumed`) is placed by the memory model like any job."""
    catalog, p, rows = setup
    row = dict(rows["R132"], id=f"R132-{assumed}-{micro_batch}", layout_assumed=assumed, micro_batch=micro_batch)
    assert calibration.stated_layout(row) is lifted
    assert (row["id"] in calibration.memory_model_misses([row], catalog, p)) is lifted
    assert math.isfinite(calibration.predict(row, catalog, p)) is lifted
