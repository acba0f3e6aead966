"""Out-of-sample speed residuals for bench/uncertainty.py, strictly nested (issue 16).

Every row gets `outer`: log(measured / predicted) tokens/s with its own source left out of the
estimator's fit (bench/accuracy.py cross_validate; never-fitted sources take the full fit). For the
coverage check each source S also needs the residuals the distribution would have been built from
had S never been published: `inner[S]` is the row's log-ratio when the fit leaves out both S and
the row's own source T (one refit per pair {S, T}; a never-fitted T takes the fit without S). So
a held-out source never touches the distribution it is scored against: not its rows, not its
residuals, not the parameters the other residuals come from, not its MFU caps, not the CDNA derating
its runs and the pairs reporting it set (calibration_values.with_deratings).
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from itertools import combinations

import accuracy  # bench/accuracy.py
from calibration_values import source_of, with_deratings

from advisor.data.evidence import generation, use_table
from advisor.perf.speed_basis import VENDOR_TUNED, derating_entry

PREDICTED = ("measured", "goodput", "derived")
NESTED_TOL = 1e-3  # the nested refits start at the full fit and stop at a 0.1% relative change   # basis=excluded rows are not predicted


def family(catalog, gpu_id: str) -> str:
    """The GPU's generation as advisor/data/uncertainty.py names it (architecture's first word)."""
    arch = catalog.gpus[gpu_id].architecture or ""
    return arch.split()[0].lower() if arch else "unknown"


def _fit_without(rows, catalog, p, drop: frozenset):
    """The estimator refitted without the sources in `drop` (their MFU-cap rows dropped too; their
    runs gone from the evidence and the MFU medians)."""
    rest = [r for r in rows if r["group"] not in drop]
    q = accuracy.without_caps_of(p, {r["id"] for r in rows if r["group"] in drop})
    q = replace(
        q,
        mfu_median=accuracy.mfu_medians(rest, catalog, p),
        today_kernel_runs=accuracy.today_kernel_runs(rest, catalog),
    )
    with use_table(accuracy.evidence_table(rest, catalog)["gpus"]):
        fit_rows = [r for r in rest if r["fit"] == "yes"]
        fitted = accuracy.fit(fit_rows, catalog, q, starts=1, tol=NESTED_TOL)
        return accuracy.without_unidentified(fitted, fit_rows, catalog)


def _log_ratio(row, catalog, q, rows, drop, derated=None) -> float:
    """log(measured / predicted) with the evidence of the rows outside `drop` (the fit's own);
    `derated(q, drop)`: the parameters with the derating computed without `drop`, for a row it prices."""
    with use_table(accuracy.evidence_table([r for r in rows if r["group"] not in drop], catalog)["gpus"]):
        if derated is not None and VENDOR_TUNED in (derating_entry(catalog.gpus[row["gpu"]], q) or {}):
            q = derated(q, drop)
        pred = accuracy.predict(row, catalog, q)
    return math.log(accuracy.measured(row) / pred) if pred and not math.isnan(pred) else float("nan")


def strict_residuals(rows, catalog, p, progress: bool = True) -> list[dict]:
    """[{id, group, family, precision, basis, outer, inner: {S: log-ratio}}] for predicted rows."""
    derated = _deratings_without(rows, catalog)
    rows = [r for r in rows if r["basis"] in PREDICTED]
    fitted = sorted({r["group"] for r in rows if r["fit"] == "yes"})
    sources = sorted({r["group"] for r in rows})
    fits: dict[frozenset, object] = {frozenset(): p}
    for g in fitted:
        fits[frozenset([g])] = _fit_without(rows, catalog, p, frozenset([g]))
    pairs = list(combinations(fitted, 2))
    for i, (a, b) in enumerate(pairs):
        if progress:
            print(f"\rnested refits {i + 1}/{len(pairs)}", end="", file=sys.stderr, flush=True)
        fits[frozenset([a, b])] = _fit_without(rows, catalog, p, frozenset([a, b]))
    if progress:
        print(file=sys.stderr)

    def params(drop: set):
        return fits[frozenset(g for g in drop if g in fitted)]

    out = []
    for r in rows:
        out.append(
            {
                "id": r["id"],
                "group": r["group"],
                "family": family(catalog, r["gpu"]),
                "precision": r["precision"],
                "basis": r["basis"],
                "outer": _log_ratio(r, catalog, params({r["group"]}), rows, {r["group"]}, derated),
                "inner": {
                    s: _log_ratio(r, catalog, params({s, r["group"]}), rows, {s, r["group"]}, derated)
                    for s in sources
                    if s != r["group"]
                },
            }
        )
    return [x for x in out if not math.isnan(x["outer"])]


def _deratings_without(rows, catalog):
    """derated(q, drop): `q` with its CDNA derating computed from the rows (pairs included) of the
    sources outside `drop`, the pairs reporting a dropped source dropped with it; remembered by the
    parameters and the dropped sources that hold such rows (the pairs and the AMD runs)."""
    relevant = {  # the sources the CDNA derating reads: the pairs, and the runs on AMD parts
        source_of(r["group"])
        for r in rows
        if r["basis"] == "pair" or generation(catalog.gpus[r["gpu"]]).startswith("cdna")
    }
    memo: dict = {}

    def derated(q, drop):
        key = (id(q), frozenset(drop) & relevant)
        if key not in memo:
            rest = [r for r in rows if source_of(r["group"]) not in drop]
            with use_table(accuracy.evidence_table(rest, catalog)["gpus"]):
                memo[key] = (q, with_deratings(rest, catalog, q))  # q kept: its id stays its own
        return memo[key][1]

    return derated
