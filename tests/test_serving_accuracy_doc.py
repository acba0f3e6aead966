"""catalog/serving_accuracy.yaml (the serving error every plan quotes) is written by hand from the
table bench/serving_accuracy.py generates in docs/accuracy.md: the two must not drift apart."""
from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- serving-accuracy:begin -->", "<!-- serving-accuracy:end -->"


def _generated_rows() -> dict[str, list[str]]:
    doc = (ROOT / "docs" / "accuracy.md").read_text()
    block = doc[doc.index(BEGIN) + len(BEGIN):doc.index(END)]
    rows = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in ("offline", "server"):
            rows[cells[0]] = cells   # kind, rows, in-sample, leave-one-source-out, LOSO median, worst
    return rows


def test_quoted_serving_error_is_the_generated_table():
    quoted = yaml.safe_load((ROOT / "catalog" / "serving_accuracy.yaml").read_text())
    rows = _generated_rows()
    assert set(rows) == {"offline", "server"}
    for kind in ("offline", "server"):
        assert quoted[f"{kind}_mape"] == rows[kind][3], kind
        assert quoted[f"{kind}_median"] == rows[kind][4], kind


def test_targets_table_quotes_the_same_means():
    """The hand-written targets table of the Serving section states the same held-out means."""
    doc = (ROOT / "docs" / "accuracy.md").read_text()
    serving = doc[doc.index("## Serving"):doc.index(BEGIN)]
    quoted = yaml.safe_load((ROOT / "catalog" / "serving_accuracy.yaml").read_text())
    offline = next(line for line in serving.splitlines() if line.startswith("| offline throughput"))
    server = next(line for line in serving.splitlines() if line.startswith("| throughput under the SLO"))
    assert f"{quoted['offline_mape']} mean, {quoted['offline_median']} median" in offline
    assert f"{quoted['server_mape']} mean, {quoted['server_median']} median" in server
