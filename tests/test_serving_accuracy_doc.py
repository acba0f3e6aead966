"""catalog/serving_accuracy.yaml (the serving error every plan quotes, written by
bench/serving_accuracy.py --out) holds the held-out predictions and GPU pairs its summary comes from:
the summary must be what those give, and the pairs what the calibration data pairs."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _quoted() -> dict:
    return yaml.safe_load((ROOT / "catalog" / "serving_accuracy.yaml").read_text(encoding="utf-8"))


def _calibration() -> dict[str, dict]:
    with open(ROOT / "catalog" / "serving_calibration.csv", newline="", encoding="utf-8") as f:
        return {r["id"]: r for r in csv.DictReader(f)}


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def test_quoted_means_are_the_held_out_rows():
    q, cal = _quoted(), _calibration()
    scored = {
        i: r
        for i, r in cal.items()
        if r["fit"] == "yes" and r["kind"] in ("offline", "server") and not r["excluded_because"]
    }
    assert set(q["rows"]) == set(scored)
    for kind in ("offline", "server"):
        ape = [abs(v["held_out"] / v["measured"] - 1) for i, v in q["rows"].items() if scored[i]["kind"] == kind]
        assert q[f"{kind}_mape"] == _pct(statistics.mean(ape)), kind
        assert q[f"{kind}_median"] == _pct(statistics.median(ape)), kind
        base = [abs(v["baseline"] / v["measured"] - 1) for i, v in q["rows"].items() if scored[i]["kind"] == kind]
        assert q[f"{kind}_baseline_mape"] == _pct(statistics.mean(base)), kind
    assert all(v["measured"] == float(scored[i]["measured"]) for i, v in q["rows"].items())


def test_ratio_summary_is_the_pairs():
    """Each pair is two GPU types on one model, scenario and limits; its model ratio is the held-out
    predictions' per-GPU ratio; the within-25% count and mean error follow from the measured data."""
    q, cal = _quoted(), _calibration()
    errors = []
    for p in q["pairs"]:
        a, b = cal[p["a"]], cal[p["b"]]
        assert a["gpu"] < b["gpu"]
        assert (a["model"], a["kind"], a["slo_ttft_ms"], a["slo_tpot_ms"]) == (
            b["model"],
            b["kind"],
            b["slo_ttft_ms"],
            b["slo_tpot_ms"],
        )
        model = (q["rows"][p["a"]]["held_out"] / int(a["gpu_count"])) / (
            q["rows"][p["b"]]["held_out"] / int(b["gpu_count"])
        )
        assert abs(model / p["model"] - 1) < 1e-4
        measured = (float(a["measured"]) / int(a["gpu_count"])) / (float(b["measured"]) / int(b["gpu_count"]))
        errors.append(abs(model / measured - 1))
    assert q["ratio_pairs"] == len(errors) and q["ratio_within_25"] == sum(e <= 0.25 for e in errors)
    assert q["ratio_mean_error"] == _pct(statistics.mean(errors))


def test_plans_quote_the_offline_and_server_errors():
    """explain/serving.py quotes offline_mape and server_mape beside every extrapolated serving rate."""
    q = _quoted()
    for key in ("offline_mape", "server_mape"):
        assert q[key].endswith("%") and 0 < float(q[key][:-1]) < 100


def test_the_targets_table_of_docs_accuracy_quotes_the_data_file():
    """docs/accuracy.md's serving targets (written by hand above the generated section) state the
    figures catalog/serving_accuracy.yaml holds, not an earlier run's."""
    q = _quoted()
    doc = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    table = doc[doc.index("| target | now (`catalog/serving_accuracy.yaml`)") :]
    table = table[: table.index("\n\n")]
    assert f"{q['offline_mape']} mean, {q['offline_median']} median" in table
    assert f"{q['server_mape']} mean, {q['server_median']} median" in table
    assert f"{q['ratio_within_25']} of {q['ratio_pairs']} pairs, mean error {q['ratio_mean_error']}" in table
    assert f"| {q['offline_baseline_mape']} |" in table and f"| {q['server_baseline_mape']} |" in table


def test_the_fold_table_starts_from_the_shipped_parameters():
    """docs/accuracy.md's table of what each held-out fold refits to sets it beside the shipped fit: that
    row must be catalog/serving_estimator.yaml as it is, or a reader compares folds with a stale fit."""
    from advisor.perf.serving import load_params

    doc = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    head = doc[doc.index("| fold | ") :].split("\n")[0]
    row = doc[doc.index("| shipped (all sources) | ") :].split("\n")[0]
    keys = [c.strip() for c in head.strip("|").split("|")][1:]
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    p = load_params()
    shipped = {k: getattr(p, k) for k in keys if "." not in k} | {"engine_seq_overhead_us.vllm": p.seq_overhead("vllm")}
    assert set(keys) == set(shipped) and len(cells) == len(keys)
    for key, cell in zip(keys, cells):
        assert abs(float(cell) - shipped[key]) <= 5e-4 * max(1.0, abs(shipped[key])), key


def test_no_fold_refits_a_share_past_its_measured_ceiling():
    """A share with a measured ceiling (catalog/serving_estimator.yaml `fit_bounds`: a decode step reads
    memory no faster than a streaming read of the same part, whose share of the datasheet
    `memory_read_share` measures per part, so the decode share of it is at most 1) stays within it in the
    shipped fit and in every leave-one-source-out fold docs/accuracy.md reports, and the benchmark fits
    within that bound."""
    from bench.serving_accuracy import MEASURED_BOUNDS

    doc_yaml = yaml.safe_load((ROOT / "catalog" / "serving_estimator.yaml").read_text(encoding="utf-8"))
    bounds = doc_yaml["fit_bounds"]
    assert bounds["decode_bandwidth_efficiency"][1] <= 1.0
    assert all(share < 1.0 for share in doc_yaml["serving_estimator"]["memory_read_share"].values())
    doc = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    lines = doc[doc.index("| fold | ") :].split("\n\n")[0].split("\n")
    keys = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [dict(zip(keys, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]
    assert len(rows) > 10
    for key, (lo, hi) in bounds.items():
        assert MEASURED_BOUNDS[key] == (lo, hi), key
        for r in rows:
            assert lo - 1e-4 <= float(r[key]) <= hi + 1e-4, (r["fold"], key, r[key])


def test_pair_detail_lists_only_pairs_outside_25_percent_with_their_rows():
    """`--pairs` names each pair outside 25% (worst first) with both rows' held-out errors, so a miss
    reads as one row's error or as two rows wrong in opposite directions; pairs within 25% stay out."""
    from bench.serving_report import pair_detail

    data = [
        {"id": "a1", "precision": "fp16", "gpu_count": "1", "measured": "100"},
        {"id": "b1", "precision": "fp8", "gpu_count": "2", "measured": "400"},
        {"id": "c1", "precision": "fp8", "gpu_count": "1", "measured": "50"},
    ]
    res = {"in": {"a1": 110.0, "b1": 300.0, "c1": 50.0}, "loso": {"a1": 120.0, "b1": 300.0}}
    pairs = [
        {"a": "a1", "b": "b1", "gpus": "x / y", "measured": 0.5, "error": 0.6},
        {"a": "a1", "b": "c1", "gpus": "x / z", "measured": 2.0, "error": 0.2},
        {"a": "b1", "b": "c1", "gpus": "y / z", "measured": 4.0, "error": -0.3},
    ]
    text = pair_detail(pairs, data, res, [{"a": "a1", "b": "b1", "error": 0.47}])
    lines = text.splitlines()
    assert lines[0] == "x / y: measured 0.50, error +60%; in-sample +47%"
    assert lines[1] == "  a1 (fp16, x1: +20%, in-sample +10%)"
    assert lines[2] == "  b1 (fp8, x2: -25%, in-sample -25%)"
    assert lines[3] == "y / z: measured 4.00, error -30%"
    assert lines[5] == "  c1 (fp8, x1: +0%)"  # no held-out prediction: its in-sample one, said once
    assert "x / z" not in text
    assert pair_detail(pairs[1:2], data, res) == "every pair within 25%"
