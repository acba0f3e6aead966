"""catalog/serving_calibration.csv: a Server row is scored at its run's own p99 latencies (columns
run_ttft_ms, run_tpot_ms; bench/serving_accuracy.py), so those must be the figures its quoted loadgen
summary gives, and a run that passed cannot exceed its scenario's limits."""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _rows() -> list[dict]:
    with open(ROOT / "catalog" / "serving_calibration.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _quoted_ms(quote: str, what: str, percentile: float) -> float:
    found = re.findall(rf"{percentile:.2f} percentile {what} \(ns\)\s*:\s*(\d+)", quote)
    assert len(found) == 1, (what, percentile, quote[:200])
    return int(found[0]) / 1e6


def test_run_latencies_are_the_quoted_loadgen_percentiles():
    checked = 0
    for r in _rows():
        quoted = r["kind"] == "server" and "99.00 percentile time to output token" in r["quote"]
        assert bool(r["run_ttft_ms"]) == bool(r["run_tpot_ms"]) == quoted, r["id"]  # every quoted run has both
        if not quoted:
            continue
        pc = float(r["slo_percentile"])
        assert abs(float(r["run_ttft_ms"]) - _quoted_ms(r["quote"], "first token latency", pc)) < 0.051, r["id"]
        assert abs(float(r["run_tpot_ms"]) - _quoted_ms(r["quote"], "time to output token", pc)) < 0.051, r["id"]
        checked += 1
    assert checked == 39


def test_every_fitted_server_row_has_its_run_latencies_within_its_limits():
    servers = [r for r in _rows() if r["kind"] == "server" and r["fit"] == "yes" and not r["excluded_because"]]
    assert len(servers) == 22
    for r in servers:
        assert 0 < float(r["run_ttft_ms"]) <= float(r["slo_ttft_ms"]), r["id"]
        assert 0 < float(r["run_tpot_ms"]) <= float(r["slo_tpot_ms"]), r["id"]
        assert "Result is : VALID" in r["quote"], r["id"]


def _setting(cell: str) -> float:
    """A published engine setting cell: 'VALUE: where it was read (file or quote)'."""
    value, _, where = cell.partition(":")
    assert where.strip(), cell
    return float(value)


def test_engine_settings_carry_their_sources():
    """The vLLM settings a run published (multi-step scheduling, memory utilization) are numbers with
    the harness file they were read from; every fitted row with its own sequence cap says where it came from."""
    rows = _rows()
    steps = [r for r in rows if r["scheduler_steps"]]
    utils = [r for r in rows if r["gpu_memory_utilization"]]
    assert {r["source_group"] for r in steps} == {"mlperf51-amd"} and len(steps) == 8
    assert all(1 <= _setting(r["scheduler_steps"]) <= 32 and r["engine"] == "vllm" for r in steps)
    assert all("harness" in r["scheduler_steps"] or "inference_results" in r["scheduler_steps"] for r in steps)
    assert all(0.5 < _setting(r["gpu_memory_utilization"]) <= 1.0 and r["engine"] == "vllm" for r in utils)
    cited = (
        "mlperf41-amd",
        "mlperf51-amd",
        "mlperf51-hpe",
        "mlperf41-hpe",
        "mlperf41-asus",
        "mlperf41-fujitsu",
        "mlperf51-nvidia",
    )
    for r in rows:
        if r["fit"] == "yes" and r["max_batch"] and r["source_group"] in cited:
            assert f"{int(float(r['max_batch']))}" in r["note"], r["id"]


def test_kv_fractions_are_the_submitters_own():
    """A TensorRT-LLM MLPerf row's KV share is the kvcache_free_gpu_mem_frac of the class its submitter ran,
    quoted with that file; a partner's class overrides NVIDIA's base class (HPE's H100 NVL: 0.95 and, on
    Server, gpu_batch_size 1024 where NVIDIA's H100_NVL_94GB_TP2x1 says 640)."""
    rows = {r["id"]: r for r in _rows()}
    for r in rows.values():
        cell = r["kv_memory_fraction"]
        if cell and r["engine"] == "tensorrt-llm" and r["source_group"].startswith("mlperf"):
            value = _setting(cell)
            assert 0.5 < value <= 1.0 and f"{value:g}" in cell.partition(":")[2], r["id"]
            assert "configs/" in cell, r["id"]
    nvl = {k: rows[f"mlperf41-hpe-h100nvl-x4-llama2-70b-{k}"] for k in ("offline", "server")}
    assert {k: (int(r["max_batch"]), _setting(r["kv_memory_fraction"])) for k, r in nvl.items()} == {
        "offline": (1300, 0.95),
        "server": (1024, 0.95),
    }
    assert all(
        _setting(rows[f"mlperf51-nvidia-b200-x8-llama2-70b-{k}"]["kv_memory_fraction"]) == 0.95
        for k in ("offline", "server", "interactive")
    )


def test_amd_v41_caps_are_the_harness_defaults():
    """AMD's MLPerf v4.1 harness (mainVllmFp8_Offline.py: max_num_seqs 2048; mainVllmFp8_SyncServer.py:
    --max-num-seqs default 1024), not vLLM's own default of 256."""
    caps = {r["kind"]: int(r["max_batch"]) for r in _rows() if r["source_group"] == "mlperf41-amd"}
    assert caps == {"offline": 2048, "server": 1024}
