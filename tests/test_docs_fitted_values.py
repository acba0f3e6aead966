"""The fitted values the docs quote are catalog/estimator.yaml's: a refit that moves a value and leaves
the prose behind fails here (docs/model.md quoted a software-era factor of 0.85 against the catalog's
0.8776, a TP overlap of 0.79 against 0.7653, after a refit). Each claim is found by its wording; a claim
reworded must be re-registered here, never dropped silently (a missing pattern fails)."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def _estimator(name: str = "estimator.yaml") -> dict:
    doc = yaml.safe_load((ROOT / "catalog" / name).read_text(encoding="utf-8"))
    return doc.get("estimator") or doc["serving_estimator"]


def _at(tree: dict, dotted: str) -> float:
    """A value of estimator.yaml by its dotted path (bench/calibration.py FREE's names)."""
    node = tree
    for key in dotted.split("."):
        node = node[key]
    return float(node)


def _rows() -> list[dict]:
    with open(ROOT / "catalog" / "calibration.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def _count(what: str) -> int:
    rows = _rows()
    if what == "fit rows":
        return sum(r["fit"] == "yes" for r in rows)
    return sum(r["basis"] in ("measured", "goodput") for r in rows)  # the runs the accuracy report scores


# (file, a pattern whose group is the quoted figure, the estimator.yaml path it quotes)
QUOTED = [
    ("docs/model.md", r"table, fitted ([0-9.]+) on those rows\)", "software_era_factor.megatron-2021"),
    ("docs/model.md", r"exposes 1 - `tp_comm_overlap` of them \(fitted ([0-9.]+);", "tp_comm_overlap"),
    ("docs/model.md", r"\(`matmul_efficiency_half_hidden`, fitted ([0-9.]+)\)", "matmul_efficiency_half_hidden"),
    ("docs/model.md", r"moves `fused_memory_share` of that\s+traffic \(fitted ([0-9.]+);", "fused_memory_share"),
    ("docs/model.md", r"estimator.yaml `measured_software_share` \(([0-9.]+)\)", "measured_software_share"),
    ("docs/model.md", r"below `measured_mfu_floor` \(([0-9.]+)\)", "measured_mfu_floor"),
    ("docs/model.md", r"vendor-tuned measurements, ([0-9.]+), the best", "datasheet_derating.cdna.vendor_tuned.factor"),
    ("docs/model.md", r"the best \(([0-9.]+)\) its upper end", "datasheet_derating.cdna.vendor_tuned.upper"),
    ("docs/model.md", r"stack, ([0-9.]+) \(0\.\d+ and 0\.\d+,", "datasheet_derating.cdna.factor"),
    (
        "docs/model.md",
        r"s = `measured_software_share` \(([0-9.]+)\) is the share",
        "serving_estimator.yaml:measured_software_share",
    ),
    ("docs/model.md", r"residuals spread ([0-9.]+) between sources", "serving_estimator.yaml:measured_software_share"),
]
# (file, a pattern whose group is a count of calibration rows, which rows)
COUNTED = [
    ("docs/model.md", r"Accuracy against (\d+) measured runs", "scored runs"),
    ("docs/model.md", r"over the (\d+) measured rows \(fit=yes\) of\s+`catalog/calibration.csv`", "fit rows"),
    ("catalog/estimator.yaml", r"over the (\d+) measured rows \(fit=yes\)", "fit rows"),
    ("docs/accuracy.md", r"MAPE over all (\d+) measured rows", "scored runs"),
]


def _quoted(path: str, pattern: str) -> str:
    found = re.findall(pattern, (ROOT / path).read_text(encoding="utf-8"))
    assert len(found) == 1, f"{path}: the claim {pattern!r} is not written once (reworded? re-register it)"
    return found[0]


@pytest.mark.parametrize(("path", "pattern", "key"), QUOTED, ids=[q[2] for q in QUOTED])
def test_the_prose_quotes_the_catalogs_fitted_value_as_rounded(path, pattern, key):
    text = _quoted(path, pattern)
    places = len(text.split(".")[1]) if "." in text else 0
    name, _, dotted = key.rpartition(":")
    value = _at(_estimator(name or "estimator.yaml"), dotted)
    assert round(value, places) == pytest.approx(float(text)), f"{path} says {key} is {text}"


@pytest.mark.parametrize(("path", "pattern", "what"), COUNTED, ids=[c[0] + ":" + c[1][:24] for c in COUNTED])
def test_the_prose_counts_the_calibration_rows_it_names(path, pattern, what):
    assert int(_quoted(path, pattern)) == _count(what), f"{path}: {what}"


def test_the_accuracy_reports_fitted_parameters_are_the_catalogs():
    """docs/accuracy.md lists the parameters of the fit its figures come from (4 significant digits):
    they must be the ones catalog/estimator.yaml ships, or its errors describe another estimator."""
    text = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("Parameters fitted on every measured row:"))
    pairs = re.findall(r"`([a-z0-9_.-]+)` ([0-9.]+)", line.split(" Without each source")[0])
    assert len(pairs) >= 10
    est = _estimator()
    for key, value in pairs:
        assert math.isclose(_at(est, key), float(value), rel_tol=1e-3), f"{key}: report {value}, catalog"
