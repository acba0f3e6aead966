"""An organisation's own estimator, fitted to its measured runs (`advisor calibrate RUNS.csv -o
my-estimator.yaml`, docs/model.md §1.8): the shipped model's structure with the framework
efficiency of each GPU generation and precision in the runs rescaled so that the median run is
predicted exactly, and the MFU ceilings raised to what the runs reached. The result is a catalog
override (`--catalog my-estimator.yaml`); its leave-one-out error says how well it predicts a run
it was not fitted to.

RUNS.csv (one run a line; `#` lines are ignored, and so are a run's `date` and `note` and catalog/calibration.csv's
record columns, so that it can be read; any other column is refused, run_columns.READ_COLUMNS): gpu, count, tokens_per_s (over all `count` GPUs) or tokens_per_s_per_gpu; the
model as `model` (a preset) or `params` with layers, hidden, heads, kv_heads, ffn, vocab, seq_len,
tied_embeddings; optional precision (bf16), global_batch_tokens, micro_batch, checkpointing,
strategy, tensor_parallel, pipeline_parallel, context_parallel, virtual_stages, kind, tp_overlap,
fp8_param_gather and fp8_tp_gather (ZeRO's parameter and TP's activation all-gathers in fp8),
fused_elementwise (true unless eager PyTorch), selective_ac (op: torchtitan's per-op selective
checkpointing) or recompute_fraction (the share of forward matmuls recomputed without full
checkpointing), grad_reduce_bytes (4 where gradients are reduced in fp32, FSDP2's default; 2),
layout_assumed (the layout columns filled by an assumption, as catalog/calibration.csv marks them).

A run whose layout is stated in full (strategy, tensor_parallel, pipeline_parallel, micro_batch,
checkpointing; perf/stated_layout.py) is timed in that layout, with the memory check lifted where the
memory model cannot hold it (the run held it): the bench's rule for its own rows. A run without one
is placed by the estimator's layout search and refused if nothing fits.
"""

from __future__ import annotations

import csv
import math
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from advisor.data.catalog import Catalog
from advisor.data.estimator import Params
from advisor.data.evidence import family_of
from advisor.errors import InputError
from advisor.perf.estimate import params_from
from advisor.perf.jobspec import JobSpec, ModelSpec, below_one_sequence, preset_spec
from advisor.perf.layout import STRATEGIES, STRATEGY_ALIASES
from advisor.perf.measured import beyond_peak, no_reading
from advisor.perf.published_mfu import mfu_cap, run_scale
from advisor.perf.run_columns import (
    ATTENTION_KERNELS,
    TRAINING_KINDS,
    TRAINING_PRECISIONS,
    check_cells,
    check_copied,
    check_header,
    flag,
    number,
    run_lines,
    word,
)
from advisor.perf.stated_layout import LAYOUT_FIELDS, run_estimate, stated_layout
from advisor.perf.training import generation, mfu_flops_per_token, op_sac_recompute_fraction

ITERATIONS = 6  # rescaling rounds: the median run is exact to ~1e-4 after 4


@dataclass(frozen=True)
class Run:
    line: int
    gpu: str
    count: int
    tokens_per_s: float  # over all GPUs
    job: JobSpec
    stated: bool = False  # its layout is stated in full (perf/stated_layout.py): timed there
    column: str = "tokens_per_s"  # the column its speed was read from (tokens_per_s_per_gpu: times the count)


def _model(row: dict[str, str], catalog: Catalog, line: int, name: str) -> ModelSpec:
    preset = (row.get("model") or "").strip()
    seq = number(row, "seq_len", line, name, int)
    if preset in catalog.models and not (row.get("params") or "").strip():
        return preset_spec(catalog, preset, seq)
    need = {
        k: number(row, k, line, name, int if k != "params" else float) for k in ("params", "layers", "hidden", "heads")
    }
    missing = [k for k, v in need.items() if v is None]
    if missing:
        raise InputError(
            f"{name}, line {line}: give `model` (a preset: {', '.join(sorted(catalog.models))}) or "
            f"params, layers, hidden and heads (missing {', '.join(missing)})",
            file=name,
            field=missing[0],
        )
    return ModelSpec(
        params=need["params"],
        layers=need["layers"],
        hidden=need["hidden"],
        heads=need["heads"],
        kv_heads=number(row, "kv_heads", line, name, int),
        ffn=number(row, "ffn", line, name, int),
        vocab=number(row, "vocab", line, name, int) or 50257,
        seq_len=seq or 2048,
        tied_embeddings=bool(flag(row, "tied_embeddings", line, name)),
        name=preset or None,
    )


def read_runs(path: str | Path, catalog: Catalog) -> list[Run]:
    """The runs of a RUNS.csv (module docstring), each checked: an error names file, line and field."""
    name = str(path)
    body = run_lines(path)
    reader = csv.DictReader(t for _, t in body)
    reader.fieldnames = check_header(reader.fieldnames, body[0][0], name)
    runs, p, seen = [], params_from(catalog), dict[str, int]()  # seen: each run's first line (check_copied)
    for (line, _), row in zip(body[1:], reader):
        check_cells(row, line, name, len(reader.fieldnames or ()))
        if (row.get("basis") or "measured") not in ("measured", "derived"):
            continue  # calibration.csv: end-to-end, pair and excluded rows are not steady-state speeds
        runs.append(_run(row, catalog, line, name))
        check_copied(seen, repr(replace(runs[-1], line=0)), line, name)
        _check_fits(runs[-1], catalog, p, name)
    return runs


def _run(row: dict[str, str], catalog: Catalog, line: int, name: str) -> Run:
    """One measured run: its GPU, count and speed (over all GPUs, or per GPU times the count)."""
    gpu = (row.get("gpu") or "").strip()
    if gpu not in catalog.gpus:
        raise InputError(f"{name}, line {line}, field gpu: unknown GPU id {gpu!r}", file=name, field="gpu")
    count = number(row, "count", line, name, int) or number(row, "gpu_count", line, name, int)
    if count is None:
        raise InputError(f"{name}, line {line}, field count: the run's GPU count is missing", file=name, field="count")
    total, per_gpu = number(row, "tokens_per_s", line, name), number(row, "tokens_per_s_per_gpu", line, name)
    if total is None and per_gpu is None:
        raise InputError(
            f"{name}, line {line}, field tokens_per_s: the measured speed is missing", file=name, field="tokens_per_s"
        )
    job = _job(row, _model(row, catalog, line, name), line, name)
    assumed = (row.get("layout_assumed") or "").split()
    if unknown := sorted(set(assumed) - set(LAYOUT_FIELDS)):
        raise InputError(
            f"{name}, line {line}, field layout_assumed: {unknown[0]!r} is not a layout column; "
            f"allowed: {', '.join(LAYOUT_FIELDS)} (space-separated)",
            file=name,
            field="layout_assumed",
        )
    speed, column = (total, "tokens_per_s") if total is not None else (per_gpu * count, "tokens_per_s_per_gpu")
    return Run(line, gpu, count, speed, job, stated_layout(job, assumed), column)


def _check_fits(run: Run, catalog: Catalog, p: Params, name: str) -> None:
    """A run the estimator cannot place cannot be predicted, so neither fitted nor scored: refuse it,
    saying what the memory model needs against the GPU's usable memory, and which layout columns would
    have it timed as it ran (a run that ran did fit, in a layout the row does not state in full)."""
    gpu, per_token = catalog.gpus[run.gpu], mfu_flops_per_token(run.job.model, run.job.kind)
    if impossible := beyond_peak(run.job, gpu, run.count, run.tokens_per_s) or no_reading(
        run.job, gpu, run.count, run.tokens_per_s, per_token, p.measured_mfu_floor
    ):
        as_written = (
            f" ({run.tokens_per_s / run.count:g} per GPU x {run.count})" if run.column != "tokens_per_s" else ""
        )
        raise InputError(
            f"{name}, line {run.line}, field {run.column}{as_written}: {impossible}", file=name, field=run.column
        )
    e, _ = run_estimate(run.job, catalog.gpus[run.gpu], run.count, p, run.stated)
    if e.fits:
        return
    missing = [k for k in LAYOUT_FIELDS if getattr(run.job, k) is None]
    hint = (
        f"give the layout it ran in ({', '.join(missing)} missing; a layout given in full is timed as stated, "
        "with the memory check lifted) or leave the row out"
        if missing and not run.stated
        else "leave the row out"
    )
    raise InputError(
        f"{name}, line {run.line}, field count: the estimator finds no layout of this run on {run.count} {run.gpu} "
        f"({e.reason or 'it does not fit in memory'}); {hint}",
        file=name,
        field="count",
    )


def _recompute(row: dict[str, str], model: ModelSpec, precision: str, line: int, name: str) -> float:
    """The share of the forward matmuls the run recomputes without full checkpointing: torchtitan's
    per-op selective checkpointing (`selective_ac` op, training.op_sac_recompute_fraction), or the
    `recompute_fraction` the run states; 0 when it states neither."""
    sac, raw = (row.get("selective_ac") or "").strip(), (row.get("recompute_fraction") or "").strip()
    if sac == "op":
        return op_sac_recompute_fraction(model, precision)
    try:
        share = float(raw) if raw else 0.0  # 0 is a share: nothing recomputed, said
    except ValueError:
        share = math.nan
    if sac or not 0.0 <= share <= 1.0:
        field = "selective_ac" if sac else "recompute_fraction"
        why = f"{sac!r}; allowed: op or empty" if sac else f"{raw!r} is not a share (0 to 1)"
        raise InputError(f"{name}, line {line}, field {field}: {why}", file=name, field=field)
    return share


def _job(row: dict[str, str], model: ModelSpec, line: int, name: str) -> JobSpec:
    """The run's job as the estimator takes it: kind, precision, batch, and the layout when given."""
    precision = word(row, "precision", line, name, TRAINING_PRECISIONS) or "bf16"
    batch = number(row, "global_batch_tokens", line, name)
    if short := below_one_sequence(batch, model.seq_len):
        raise InputError(
            f"{name}, line {line}, field global_batch_tokens: {short}", file=name, field="global_batch_tokens"
        )
    return JobSpec(
        model=model,
        kind=word(row, "kind", line, name, TRAINING_KINDS) or "pretrain",
        precision=precision,
        grad_reduce_bytes=number(row, "grad_reduce_bytes", line, name) or JobSpec.grad_reduce_bytes,
        recompute_fraction=_recompute(row, model, precision, line, name),
        micro_batch=number(row, "micro_batch", line, name, int),
        checkpointing=flag(row, "checkpointing", line, name),
        global_batch_tokens=batch,
        strategy=word(row, "strategy", line, name, STRATEGIES + tuple(STRATEGY_ALIASES)),
        tensor_parallel=number(row, "tensor_parallel", line, name, int),
        pipeline_parallel=number(row, "pipeline_parallel", line, name, int),
        context_parallel=number(row, "context_parallel", line, name, int),
        virtual_stages=number(row, "virtual_stages", line, name, int),
        attention_kernel=word(row, "attention_kernel", line, name, ATTENTION_KERNELS),
        tp_overlap=bool(flag(row, "tp_overlap", line, name)),
        fp8_param_gather=bool(flag(row, "fp8_param_gather", line, name)),
        fp8_tp_gather=bool(flag(row, "fp8_tp_gather", line, name)),
        fused_elementwise=flag(row, "fused_elementwise", line, name) is not False,
    )


def _key(run: Run, catalog: Catalog) -> tuple[str, str]:
    return generation(catalog.gpus[run.gpu]), run.job.precision


def _predict(run: Run, catalog: Catalog, p: Params) -> float:
    e, _ = run_estimate(run.job, catalog.gpus[run.gpu], run.count, p, run.stated)
    return e.tokens_per_s if e.fits else float("nan")


def memory_check_lifted(run: Run, catalog: Catalog, p: Params) -> bool:
    """Is the run timed in its stated layout with the memory check lifted (the memory model cannot hold it)?"""
    return run_estimate(run.job, catalog.gpus[run.gpu], run.count, p, run.stated)[1]


def _mfu(run: Run, catalog: Catalog) -> float:
    g = catalog.gpus[run.gpu]
    return (
        run.tokens_per_s
        / run.count
        * mfu_flops_per_token(run.job.model, run.job.kind)
        / ((g.dense_tflops(run.job.precision) or 1.0) * 1e12)
    )


def _copied(table: dict[str, Any] | None) -> dict[str, Any]:
    """A table of Params (per generation, a mapping or a number) copied a level deep, to update."""
    return {k: dict(v) if isinstance(v, dict) else v for k, v in (table or {}).items()}


def _raise_ceilings(
    groups: dict[tuple[str, str], list[Run]], caps: dict[str, Any], meds: dict[str, Any], catalog: Catalog, p: Params
) -> None:
    """The MFU ceilings (`caps`) and medians (`meds`) of each group, within a server and across
    servers, raised to the best and the median MFU its runs reached, never lowered: below what the
    generation had, its own entry or the one it falls back to (its family's, then `default`), and a
    multi-server value below the one-server value it fell back to. A cap the table holds only at
    another precision is in force too (published_mfu.mfu_cap: Hopper's fp8 cap is its bf16 cap x the
    MAMF fp8/bf16 ratio), so fp8 runs below it leave it as it was instead of lowering it to their best."""
    for (gen, prec), rs in sorted(groups.items()):
        gpu = catalog.gpus[rs[0].gpu]
        for key, count, subset in (
            (prec, 1, [r for r in rs if r.count <= p.server_gpus]),
            (f"{prec}_multiserver", p.server_gpus + 1, [r for r in rs if r.count > p.server_gpus]),
        ):
            mfus = [_mfu(r, catalog) for r in subset]
            derived = (mfu_cap(gpu, prec, p, count) or 0.0) / run_scale(gpu, prec, p)  # in the table's units
            for table, value, held in (
                (caps, max(mfus, default=0.0), derived),
                (meds, statistics.median(mfus) if mfus else 0.0, 0.0),
            ):
                entry = _in_force(table, gen)
                if value > max(held, float(entry.get(key, entry.get(prec, 0.0)))):
                    table[gen] = dict(entry, **{key: value})


def _in_force(table: dict[str, Any], gen: str) -> dict[str, Any]:
    """The {precision: MFU} entry a generation takes from `table`: its own, its family's (cdna3 ->
    cdna), or `default` (perf/training.gpu_value's order, the GPU id aside); a copy."""
    for key in (gen, family_of(gen), "default"):
        if isinstance(table.get(key), dict):
            return dict(table[key])
    return {}


def _rescaled(groups: dict[tuple[str, str], list[Run]], fe: dict[str, Any], q: Params, catalog: Catalog) -> Params:
    """`q` with each group's framework efficiency in `fe` (updated in place) rescaled, ITERATIONS
    times, by the median log-ratio of measured to predicted speed (capped at 1.5)."""
    for _ in range(ITERATIONS):
        for (gen, prec), rs in sorted(groups.items()):
            logs = [math.log(r.tokens_per_s / x) for r in rs if (x := _predict(r, catalog, q)) == x and x > 0]
            if logs:
                fe[gen][prec] = min(1.5, fe[gen][prec] * math.exp(statistics.median(logs)))
        q = replace(q, framework_efficiency=_copied(fe))
    return q


def fit(runs: list[Run], catalog: Catalog, p: Params) -> tuple[Params, dict[str, Any]]:
    """Params whose framework efficiency, per (generation, precision) of the runs, puts the median
    run's log-ratio at zero; the MFU ceilings of those groups raised to the runs' best and median."""
    fe, caps, meds = _copied(p.framework_efficiency), _copied(p.mfu_cap), _copied(p.mfu_median)
    groups: dict[tuple[str, str], list[Run]] = {}
    for r in runs:
        groups.setdefault(_key(r, catalog), []).append(r)
    _raise_ceilings(groups, caps, meds, catalog, p)
    for gen, prec in sorted(groups):
        base = fe.get(gen) or {}
        fe[gen] = dict(base, **{prec: float(base.get(prec) or _default(p, prec))})
    # fitted with the runs' own provenance in force, as a plan with the override will be (no datasheet derating)
    own = {"groups": _run_groups(runs, catalog)}
    q = replace(p, framework_efficiency=fe, mfu_cap=caps, mfu_median=meds, calibrated_from=own)
    q = _rescaled(groups, fe, q, catalog)
    scale: dict[str, float] = {}
    for gen, prec in groups:
        base = ((p.framework_efficiency or {}).get(gen) or {}).get(prec) or _default(p, prec)
        scale[f"{gen}/{prec}"] = round(fe[gen][prec] / float(base), 4)
    return q, {"groups": {f"{g}/{pr}": len(rs) for (g, pr), rs in sorted(groups.items())}, "scale": scale}


def _default(p: Params, precision: str) -> float:
    entry = (p.framework_efficiency or {}).get("default") or {"bf16": p.matmul_efficiency_max}
    v = entry.get(precision)
    return float(v) if v is not None else float(entry["bf16"]) * (p.fp8_framework_ratio if precision == "fp8" else 1.0)


def leave_one_out(runs: list[Run], catalog: Catalog, p: Params) -> list[float]:
    """Each run's error (predicted / measured - 1) under the fit to every other run."""
    out = []
    for i, r in enumerate(runs):
        q, _ = fit(runs[:i] + runs[i + 1 :], catalog, p)
        out.append(_predict(r, catalog, q) / r.tokens_per_s - 1.0)
    return out


def calibrate(path: str | Path, catalog: Catalog) -> dict[str, Any]:
    """The fit of RUNS.csv: the override (`estimator`), the fitted scale per group, each run's error
    in-sample and leave-one-out, and their mean absolute values."""
    runs = read_runs(path, catalog)
    p = params_from(catalog)
    q, info = fit(runs, catalog, p)
    loo: list[float | None] = list(leave_one_out(runs, catalog, p)) if len(runs) > 1 else [None]  # one run: none
    ins = [_predict(r, catalog, q) / r.tokens_per_s - 1.0 for r in runs]
    scored = [abs(x) for x in loo if x is not None]
    keys = sorted({g for g, _ in (_key(r, catalog) for r in runs)})
    mape_in_sample = round(statistics.mean(abs(e) for e in ins), 4)
    mape_loo = round(statistics.mean(scored), 4) if scored else None
    override = {
        "framework_efficiency": {g: (q.framework_efficiency or {})[g] for g in keys},
        "mfu_cap": {g: (q.mfu_cap or {})[g] for g in keys if g in (q.mfu_cap or {})},
        "mfu_median": {g: (q.mfu_median or {})[g] for g in keys if g in (q.mfu_median or {})},
        "calibrated_from": _provenance(runs, catalog, Path(path).name, mape_in_sample, mape_loo),
    }
    override = {k: v for k, v in override.items() if v}  # a ceiling no run raised is left as it was
    return {
        "runs": len(runs),
        "override": {"estimator": override},
        **info,
        "errors": [
            {
                "line": r.line,
                "gpu": r.gpu,
                "count": r.count,
                "measured": r.tokens_per_s,
                "in_sample": round(e, 4),
                "leave_one_out": round(x, 4) if x is not None else None,
                "memory_check_lifted": memory_check_lifted(r, catalog, q),
            }
            for r, e, x in zip(runs, ins, loo)
        ],
        "mape_in_sample": mape_in_sample,
        "mape_leave_one_out": mape_loo,
    }


def _run_groups(runs: list[Run], catalog: Catalog) -> dict[str, dict[str, int]]:
    """generation/precision -> GPU id -> number of runs."""
    groups: dict[str, dict[str, int]] = {}
    for r in runs:
        gen, prec = _key(r, catalog)
        group = groups.setdefault(f"{gen}/{prec}", {})
        group[r.gpu] = group.get(r.gpu, 0) + 1
    return {k: dict(sorted(v.items())) for k, v in sorted(groups.items())}


def _provenance(
    runs: list[Run], catalog: Catalog, runs_file: str, mape_in_sample: float, mape_loo: float | None
) -> dict[str, Any]:
    """What the override was fitted to (`estimator.calibrated_from`): the runs of each group it refitted
    (generation/precision -> GPU id -> runs), so a plan made with it says which speeds are the user's
    own and how well the fit predicts (perf/speed_basis.calibration_basis)."""
    return {
        "runs_file": runs_file,
        "runs": len(runs),
        "groups": _run_groups(runs, catalog),
        "mape_in_sample": mape_in_sample,
        "mape_leave_one_out": mape_loo,
    }
