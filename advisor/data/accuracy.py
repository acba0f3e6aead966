"""The estimator's measured error band, as its maintainers publish it in catalog/accuracy.yaml
(written by bench/accuracy.py): quoted by estimates, plans and memos, never invented."""

from __future__ import annotations

from advisor.data.resources import data_dir
from advisor.inputs.loader import load_yaml_file


def estimator_band() -> dict:
    """{mape, median, worst, n, basis, source} of the shipped catalog/accuracy.yaml, or {} when the
    installation ships none (the memo then says so)."""
    data_file = data_dir("catalog") / "accuracy.yaml"
    if not data_file.is_file():
        return {}
    doc = load_yaml_file(data_file, "catalog file") or {}
    band = {k: doc.get(k) for k in ("mape", "median", "worst", "n", "basis")}
    return dict(band, source="catalog/accuracy.yaml") if band["mape"] is not None else {}
