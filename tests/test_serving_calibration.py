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
        assert bool(r["run_ttft_ms"]) == bool(r["run_tpot_ms"]) == quoted, r["id"]   # every quoted run has both
        if not quoted:
            continue
        pc = float(r["slo_percentile"])
        assert abs(float(r["run_ttft_ms"]) - _quoted_ms(r["quote"], "first token latency", pc)) < 0.051, r["id"]
        assert abs(float(r["run_tpot_ms"]) - _quoted_ms(r["quote"], "time to output token", pc)) < 0.051, r["id"]
        checked += 1
    assert checked == 30


def test_every_fitted_server_row_has_its_run_latencies_within_its_limits():
    servers = [r for r in _rows() if r["kind"] == "server" and r["fit"] == "yes" and not r["excluded_because"]]
    assert len(servers) == 14
    for r in servers:
        assert 0 < float(r["run_ttft_ms"]) <= float(r["slo_ttft_ms"]), r["id"]
        assert 0 < float(r["run_tpot_ms"]) <= float(r["slo_tpot_ms"]), r["id"]
        assert "Result is : VALID" in r["quote"], r["id"]
