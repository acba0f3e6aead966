"""The estimator's out-of-sample error band for a GPU's generation (catalog/accuracy.yaml, written
by bench/accuracy.py --band), so estimates, plans and memos quote the band for the family in
question, or say that no measured run backs it."""

from __future__ import annotations

from functools import lru_cache

from advisor.data.catalog import GPU

NO_MEASURED_RUN = "no measured training run for this GPU family: estimate from datasheet figures"


@lru_cache(maxsize=1)
def _bands() -> dict:
    from advisor.data.resources import data_dir
    from advisor.inputs.loader import load_yaml_file

    path = data_dir("catalog") / "accuracy.yaml"
    doc = (
        (load_yaml_file(path, "catalog file", shipped=True) or {}) if path.is_file() else {}
    )  # libyaml: a shipped file
    return doc.get("by_generation") or {}


def band(gpu: GPU, precision: str | None = None) -> dict | None:
    """Leave-one-source-out error (mape, median, worst, n, basis) over the measured runs of the
    GPU's generation (at `precision` when it has rows there), or None when no run was measured."""
    from advisor.perf.training import generation

    entry = _bands().get(generation(gpu))
    if not entry:
        return None
    out = {k: entry.get(k) for k in ("mape", "median", "worst", "n", "basis")}
    sub = (entry.get("precisions") or {}).get(precision) if precision else None
    if sub:
        out.update({k: sub.get(k) for k in ("mape", "median", "worst", "n")}, precision=precision)
    return dict(out, generation=generation(gpu))
