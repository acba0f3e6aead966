"""The calibration library the accuracy and uncertainty benches share: the rows of
catalog/calibration.csv as estimator jobs, their predictions, the fit of the free parameters, the
MFU medians and the datasheet derating computed from the rows, and leave-one-source-out
cross-validation. No report and no command line here (bench/accuracy.py runs it,
bench/accuracy_report.py writes what it finds).

Rows are estimated in their published layout. The free parameters (FREE) are fitted to the
`fit=yes` rows (measured tokens/s, full layout published). `basis=measured` rows are where the
targets are measured; `basis=derived` rows (tokens/s converted from published TFLOPs/GPU) are
never fitted, except for the compute factor of an older software stack (`software_era`).
Leave-one-source-out cross-validation refits without one `group` (one published table) and
predicts it.
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_rows import CALIBRATION, ROOT, gpu_of, job_of, load_rows, measured  # noqa: E402,F401
from calibration_values import (  # noqa: E402,F401  (re-exported: bench/accuracy.py, bench/accuracy_report.py)
    MEDIAN_BASES,
    derating_from_pairs,
    deratings,
    direct_deratings,
    evidence_table,
    fold_rows,
    mfu_floor,
    mfu_medians,
    pair_deratings,
    publisher,
    row_mfu,
    software_share,
    today_kernel_runs,
    with_deratings,
)

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.data.evidence import runs_key, use_table  # noqa: E402
from advisor.perf import evaluate, params_from  # noqa: E402,F401
from advisor.perf.goodput import goodput  # noqa: E402
from advisor.perf.stated_layout import LAYOUT_FIELDS, MEMORY_CHECK_LIFTED, run_estimate  # noqa: E402,F401
from advisor.perf.stated_layout import stated_layout as stated_layout_of  # noqa: E402
from advisor.perf.training import generation  # noqa: E402


# free parameters and their bounds (each has a physical meaning: docs/model.md §1)
def _nvl_over_sxm() -> float:
    """The H100 NVL's dense bf16 rate over the H100 SXM's, both from the catalog."""
    gpus = load_catalog().gpus
    return float(gpus["h100-nvl"].dense_tflops("bf16") or 0) / float(gpus["h100-sxm"].dense_tflops("bf16") or 1)


FREE = {
    "framework_efficiency.ampere.bf16": (0.2, 1.0),  # at most the best measured GEMM rate
    "framework_efficiency.hopper.bf16": (0.2, 1.0),
    "framework_efficiency.hopper.fp8": (0.2, 1.0),
    # bounded by the datasheet peak: 1 / the B200's MAMF share (fp8 3432.5 of 4500 TFLOPS, stas00 MAMF table)
    "framework_efficiency.blackwell.fp8": (0.2, 1.0 / 0.763),
    "tp_comm_overlap": (0.0, 1.0),  # a share of the exposed TP all-reduce time
    "fused_memory_share": (0.05, 1.0),  # fused kernels move at most the eager traffic
    "fp8_cast_bytes_per_layer_element": (0.0, 200.0),  # fp8 quantization traffic (bytes per element and layer)
    # FlashAttention-2 (Dao 2023, arXiv:2307.08691): "reaching up to 225 TFLOPs/s" forward + backward on A100 (0.72 of
    # 312); FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608): "FlashAttention-2 achieving only 35% utilization on
    # the H100": no attention kernel of the rows' era ran faster than that
    "attention_efficiency.ampere": (0.05, 0.72),
    "attention_efficiency.hopper": (0.05, 0.35),
    "memory_bytes_per_layer_element": (0.0, 1000.0),
    "matmul_efficiency_half_hidden": (0.0, 2000.0),
    "step_jitter": (0.0, 0.2),
    # torchtitan's H100s: "the actual peak TFLOPs number is between SXM and NVL" (its benchmark pages):
    # at least the H100 NVL's dense rate (catalog: 835.5 of the SXM's 989.4 TFLOPS), at most the SXM's
    "calibration_variants.h100-96gb-hbm2e-500w.compute_scale": (_nvl_over_sxm(), 1.0),
}
CAP_ROWS = {
    "ampere.bf16": "R027",
    "gaudi.bf16": "R116",
    "gaudi.fp8": "G001",
    "gaudi.fp8_multiserver": "G003",
    "ada.bf16": "R008",
}  # caps read from rows
GENERATIONS_FITTED = ("ampere", "hopper")  # their mean is the shared default for the others
ARTICLE = {"rtx-4090": 153_000, "a100-80gb-sxm": 195_000, "h100-sxm": 481_000}
PENDING_PRICES = {"a100-80gb-sxm": 15_000}  # being added to the catalog by issue 3 (low confidence)


_CACHE: dict = {}


def assumed_fields(row: dict) -> tuple[str, ...]:
    """The layout fields the row's source does not state (`layout_assumed`, space-separated)."""
    return tuple((row.get("layout_assumed") or "").split())


def layout_given(row: dict) -> bool:
    """Are all the row's layout fields filled (sourced or assumed): nothing left for the search?"""
    return all(row[k] for k in LAYOUT_FIELDS)


def stated_layout(row: dict) -> bool:
    """Does the row's source state its layout (advisor/perf/stated_layout.py: sharding, parallelism and
    recompute sourced; the micro-batch sourced or assumed at 1)? Then it is timed there even where the
    memory model cannot hold it (row_estimate)."""
    return stated_layout_of(job_of(row), assumed_fields(row))


def memory_model_misses(rows: list[dict], catalog, p) -> list[str]:
    """Ids of rows whose stated layout the memory model cannot hold (predicted with the check lifted)."""
    return [
        r["id"]
        for r in rows
        if r["basis"] in ("measured", "goodput", "derived") and row_estimate_lifted(r, catalog, p)[1]
    ]


def row_estimate_lifted(row: dict, catalog, p):
    """(the estimator's answer for the row's job on the GPU it ran, was the memory check lifted): in its
    published layout, with the check lifted where the memory model cannot hold a layout the source states
    (advisor/perf/stated_layout.py run_estimate, the rule `advisor calibrate` applies to a user's runs)."""
    return run_estimate(job_of(row), gpu_of(row, catalog, p), int(row["gpu_count"]), p, stated_layout(row))


def row_estimate(row: dict, catalog, p):
    """The estimator's answer for the row's job on the GPU it ran (row_estimate_lifted)."""
    return row_estimate_lifted(row, catalog, p)[0]


def predict(row: dict, catalog, p) -> float:
    """Steady-state tokens/s per GPU in the row's layout; for basis=goodput rows, times the
    goodput of a run of `run_tokens` on `gpu_count` GPUs (advisor/perf/goodput.py). The GPU is the
    one the row ran (gpu_of: a calibration variant where the row names one)."""
    key = (
        row["id"],
        tuple(get(p, k) for k in FREE),
        repr(p.software_era_factor),
        repr(p.mfu_cap),
        repr(p.mfu_median),
        repr(p.datasheet_derating),
        repr(p.software_factor),
        runs_key(),
        repr(p.today_kernel_runs),
    )
    if key not in _CACHE:
        n = int(row["gpu_count"])
        e = row_estimate(row, catalog, p)
        v = e.tokens_per_s_per_gpu if e.fits else float("nan")
        if row["basis"] == "goodput" and e.fits:
            v *= goodput(n, float(row["run_tokens"]) / (v * n) / 3600.0, p)
        _CACHE[key] = v
    return _CACHE[key]


def group_of(row: dict, catalog) -> str:
    """Generation x precision, the unit the band is reported by."""
    return f"{generation(catalog.gpus[row['gpu']])} {row['precision']}"


def predicted_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["basis"] in ("measured", "goodput")]


def get(p, key: str) -> float:
    """The value of a FREE parameter; NaN when its table has no entry (unidentified in a fold)."""
    name, *path = key.split(".")
    v = getattr(p, name)
    for k in path:
        if not isinstance(v, dict) or k not in v:
            return float("nan")
        v = v[k]
    return float(v)


def without_unidentified(p, fit_rows: list[dict], catalog):
    """Params without the framework efficiency of a (generation, precision) no fitted row ran: a fold
    that holds out a generation's only source predicts it as the estimator would a part with no run
    (the shared default), not with the value fitted on the held-out rows."""
    ran = {(generation(catalog.gpus[r["gpu"]]), r["precision"]) for r in fit_rows}
    fe = _copy(p.framework_efficiency)
    for gen, entry in list(fe.items()):
        if gen == "default" or not isinstance(entry, dict):
            continue
        for prec in [k for k in entry if (gen, k) not in ran]:
            entry.pop(prec)
        if not entry:
            fe.pop(gen)
    return replace(p, framework_efficiency=fe)


def _copy(x):
    return {k: _copy(v) for k, v in x.items()} if isinstance(x, dict) else x


def with_values(p, values) -> object:
    """Params with the FREE values replaced (`name.key.sub` addresses one entry of a table), and
    the shared defaults re-derived: the generations without rows take the mean of the fitted
    generations' bf16 framework share, fp8 the Hopper fp8/bf16 ratio, attention the Hopper value."""
    changes: dict = {}
    for key, v in zip(FREE, values):
        name, *path = key.split(".")
        if path:
            node = changes.setdefault(name, _copy(getattr(p, name)))
            for k in path[:-1]:
                node = node.setdefault(k, {})
            node[path[-1]] = float(v)
        else:
            changes[name] = float(v)
    fw = changes.get("framework_efficiency", _copy(p.framework_efficiency))
    bf16 = [fw[g]["bf16"] for g in GENERATIONS_FITTED]
    fw["default"] = {"bf16": sum(bf16) / len(bf16)}
    changes["framework_efficiency"] = fw
    changes["fp8_framework_ratio"] = fw["hopper"]["fp8"] / fw["hopper"]["bf16"]
    att = changes.get("attention_efficiency", _copy(p.attention_efficiency))
    att["default"] = att["hopper"]
    changes["attention_efficiency"] = att
    return replace(p, **changes)


def pinned(row: dict, catalog, p) -> dict:
    """The row with the layout the model chooses under `p` written in, so a fit's many
    evaluations skip the layout search (the final predictions search again)."""
    if layout_given(row):
        return row
    e = evaluate(job_of(row), gpu_of(row, catalog, p), int(row["gpu_count"]), p)
    if not e.fits:
        return row
    lay = e.layout
    return dict(
        row,
        id=row["id"] + "*",
        strategy=lay["strategy"] if lay["strategy"] != "single" else "ddp",
        tensor_parallel=str(lay["tensor_parallel"]),
        pipeline_parallel=str(lay["pipeline_parallel"]),
        micro_batch=str(lay["micro_batch"]),
        checkpointing=str(lay["checkpointing"]).lower(),
        context_parallel=str(lay["context_parallel"]),
    )


def fit(rows: list[dict], catalog, p, starts: int = 3, tol: float = 1e-8):
    """Robust least squares on log(predicted / measured) over `rows`; returns the fitted Params.
    `tol`: scipy's ftol/xtol/gtol (the nested refits of bench/uncertainty_residuals.py, warm-started
    at the full fit, stop at 1e-3)."""
    import numpy as np
    from scipy.optimize import least_squares

    lo = [b[0] for b in FREE.values()]
    hi = [b[1] for b in FREE.values()]
    x0 = [(a + b) / 2 if math.isnan(get(p, k)) else min(max(get(p, k), a), b) for k, (a, b) in FREE.items()]
    rows = [pinned(r, catalog, p) for r in rows]

    def residuals(x):
        q = with_values(p, x)
        r = [math.log(predict(row, catalog, q) / measured(row)) for row in rows]
        return np.nan_to_num(np.array(r), nan=5.0)

    best = None
    options = [x0] + [[a + f * (b - a) for a, b in zip(lo, hi)] for f in (0.25, 0.5)]
    for start in options[:starts]:  # a few starting points: the problem is small and not convex
        res = least_squares(
            residuals,
            start,
            bounds=(lo, hi),
            x_scale="jac",
            diff_step=1e-3,
            loss="soft_l1",
            f_scale=0.1,  # robust: a row >10% off weighs less than its square
            ftol=tol,
            xtol=tol,
            gtol=tol,
        )
        if best is None or res.cost < best.cost:
            best = res
    return centred(rows, catalog, with_values(p, best.x))


def centred(rows: list[dict], catalog, p, rounds: int = 3):
    """Params whose framework efficiency of each fitted (generation, precision) puts the median run
    of that group exactly on the model: the base case uses the median efficiency of the group's
    measured runs (issue 30), the least-squares fit only shapes the rest."""
    values = [get(p, k) for k in FREE]
    for _ in range(rounds):
        for i, key in enumerate(FREE):
            name, *path = key.split(".")
            if name != "framework_efficiency" or math.isnan(values[i]):
                continue
            gen, prec = path
            logs = [
                math.log(measured(r) / x)
                for r in rows
                if (generation(catalog.gpus[r["gpu"]]), r["precision"]) == (gen, prec)
                and (x := predict(r, catalog, p)) == x
                and x > 0
            ]
            if logs:
                lo, hi = FREE[key]
                values[i] = min(hi, max(lo, values[i] * math.exp(statistics.median(logs))))
        p = with_values(p, values)
    return p


def era_rows(rows: list[dict]) -> list[dict]:
    """Rows that ran an older software stack (`software_era`), derived ones included: they fit
    that era's factor and nothing else."""
    return [r for r in rows if r.get("software_era") and r["basis"] in ("measured", "goodput", "derived")]


def fit_eras(rows: list[dict], catalog, p):
    """Each software era's compute factor: the geometric mean of measured / predicted over its
    rows in `rows`, predicted with today's software (factor 1); eras without rows keep 1."""
    base = replace(p, software_era_factor={})
    factors = {}
    for era in sorted({r["software_era"] for r in era_rows(rows)}):
        logs = [math.log(measured(r) / predict(r, catalog, base)) for r in era_rows(rows) if r["software_era"] == era]
        logs = [x for x in logs if not math.isnan(x)]
        if logs:
            factors[era] = round(math.exp(sum(logs) / len(logs)), 4)
    return replace(p, software_era_factor=factors)


def without_caps_of(p, ids: set):
    """Params without the MFU caps read from the rows `ids` (a held-out source must not cap its
    own prediction); the shared default stays the Hopper value (its source is never held out)."""
    drop = [key for key, rid in CAP_ROWS.items() if rid in ids]
    if not drop:
        return p
    caps = _copy(p.mfu_cap)
    for key in drop:
        gen, prec = key.split(".")
        caps.get(gen, {}).pop(prec, None)
        if not caps.get(gen):
            caps.pop(gen, None)
    return replace(p, mfu_cap=caps)


def error(pred: float, meas: float) -> float:
    return (pred - meas) / meas


def summary(errs: list[float]) -> dict:
    a = [abs(e) for e in errs if not math.isnan(e)]
    if not a:
        return {"n": 0, "mape": float("nan"), "median": float("nan"), "worst": float("nan")}
    return {"n": len(a), "mape": statistics.mean(a), "median": statistics.median(a), "worst": max(a)}


def size_bin(params: float) -> str:
    for limit, name in ((1e9, "< 1B"), (1e10, "1B-10B"), (1e11, "10B-100B")):
        if params < limit:
            return name
    return ">= 100B"


def cross_validate(rows, catalog, p) -> tuple[dict, dict]:
    """Leave-one-source-out: for each group of fit rows (and each group a value computed from the rows
    reads), refit without it and predict it: its MFU caps, medians and evidence dropped, and the CDNA
    derating recomputed without its rows and the pairs reporting the same source (source_of). Rows
    never fitted nor read elsewhere keep the full fit's prediction. Returns (predictions by row id,
    parameters fitted without each group)."""
    fit_rows = [r for r in rows if r["fit"] == "yes"]
    held, params = {}, {}
    medians = {r["group"] for r in rows if r["basis"] in MEDIAN_BASES and not r.get("software_era")}
    for group in sorted({r["group"] for r in fit_rows + era_rows(rows)} | medians):
        rest = fold_rows(rows, group)
        with use_table(evidence_table(rest, catalog)["gpus"]):  # the source's GPUs as unmeasured as without it
            q = without_caps_of(p, {r["id"] for r in rows if r["group"] == group})
            q = replace(q, mfu_median=mfu_medians(rest, catalog, p), today_kernel_runs=today_kernel_runs(rest, catalog))
            if any(r["group"] == group for r in fit_rows):
                q = fit(
                    [r for r in fit_rows if r["group"] != group], catalog, q, starts=1
                )  # warm start at the full fit
                q = without_unidentified(q, [r for r in fit_rows if r["group"] != group], catalog)
            q = with_deratings(rest, catalog, fit_eras(rest, catalog, q))
            params[group] = {k: get(q, k) for k in FREE}
            params[group].update({f"software_era_factor.{k}": v for k, v in (q.software_era_factor or {}).items()})
            held.update({r["id"]: predict(r, catalog, q) for r in rows if r["group"] == group})
    with use_table(evidence_table(rows, catalog)["gpus"]):
        held.update({r["id"]: predict(r, catalog, p) for r in rows if r["id"] not in held})
    return held, params
