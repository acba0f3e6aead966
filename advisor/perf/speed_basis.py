"""The speed a training estimate states as its base case, its upper end, and what backs it
(docs/model.md §1.7).

* Ceilings. The structural estimate (perf/training.py) never exceeds the best published MFU of the
  GPU's generation at the precision (`mfu_cap`): that is the upper end. The base case is held to
  the group's median published MFU (`mfu_median`, computed from catalog/calibration.csv) wherever
  the estimate rests on what no run of the group measured:
    - a gain the measured runs do not show (today's attention kernels on Hopper, where every
      calibration run used FlashAttention-2-era kernels) lifts the base case at most to the
      median: base = min(estimate, max(estimate at the runs' kernels, median));
    - a part with no measured run in its generation (`datasheet`) is the model at the shared
      default efficiencies (already centred on each fitted group's median run), then its sourced
      derating; it is not also held to a median MFU of other jobs (MFU depends on the job's shape:
      docs/model.md §1.7).
* Evidence. `measured`, `same_generation` or `datasheet` (advisor/data/evidence.py); a
  `datasheet` speed is multiplied by `datasheet_derating` (factor < 1, with its source) unless that
  derating is a first-software-year gap its generation is past (`mature_after_months`), and every
  estimate not backed by a run on its own GPU says so in `evidence_note`.
* Software. A derating measured per stack (AMD Instinct: `public`, what a buyer installs, and
  `vendor_tuned`, the vendor's own tuned code) is picked by the job's `software` and named in the
  derating and the note, so a vendor-tuned speed is never shown as the public stack's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from advisor.data.catalog import GPU
from advisor.data.catalog_figures import age_months, parse_as_of
from advisor.data.estimator import Params
from advisor.data.evidence import (
    DATASHEET,
    MEASURED,
    SAME_GENERATION,
    TRANSFERRED,
    Evidence,
    evidence,
    family_of,
    generation_name,
)
from advisor.perf.jobspec import JobSpec
from advisor.perf.memory import Layout
from advisor.perf.published_mfu import mfu_cap, mfu_median
from advisor.perf.training import generation, gpu_value, step_time

VENDOR_WORDS = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel"}
PUBLIC, VENDOR_TUNED = "public", "vendor_tuned"  # the training software a speed assumes (JobSpec.software)


def derating_entry(gpu: GPU, p: Params) -> dict[str, Any] | None:
    """The `datasheet_derating` entry of catalog/estimator.yaml for a part: by GPU id, generation, its
    family word, its vendor, then `default` (None: none)."""
    table = p.datasheet_derating or {}
    gen = generation(gpu)
    vendor = gpu.vendor.lower().split()[0] if gpu.vendor else ""
    entry = next((table[k] for k in (gpu.id, gen, family_of(gen), vendor, "default") if k in table), None)
    return entry if isinstance(entry, dict) else None


def derating(gpu: GPU, p: Params, software: str = PUBLIC) -> dict[str, Any] | None:
    """{factor, upper, source, note[, software]} for a part with no measured run (derating_entry), None
    when it has none. A generation past the first-software months the entry covers takes the entry's
    `mature` part (None without one). An entry with a `vendor_tuned` part (AMD Instinct:
    catalog/estimator.yaml) measures two stacks: `software` picks one and the result names it; an
    entry without one is the same for every stack."""
    entry = derating_entry(gpu, p)
    if entry is not None and software_matured(gpu, entry):
        entry = entry.get("mature") if isinstance(entry.get("mature"), dict) else None
    if entry is None:
        return None
    tuned = entry.get(VENDOR_TUNED)
    chosen = tuned if isinstance(tuned, dict) and software == VENDOR_TUNED else entry
    out: dict[str, Any] = {
        "factor": float(chosen["factor"]),
        "upper": float(chosen.get("upper") or chosen["factor"]),
        "source": list(chosen["source"]),
        "note": str(chosen.get("note", "")),
    }
    if isinstance(tuned, dict):
        out["software"] = VENDOR_TUNED if chosen is tuned else PUBLIC
    return out


def software_matured(gpu: GPU, entry: dict[str, Any]) -> bool:
    """Is the derating a first-software-year gap (`mature_after_months` set) that the GPU's generation
    is past: launched at least that many months before the entry's `as_of`? An undated launch is not."""
    months, as_of = entry.get("mature_after_months"), parse_as_of(entry.get("as_of"))
    if months is None or as_of is None:
        return False
    age = age_months(gpu.launch.value if gpu.launch else None, as_of)
    return age is not None and age >= int(months)


def _kernel_gain(job: JobSpec, gpu: GPU, p: Params) -> bool:
    """Does the estimate credit attention kernels newer than every calibration run of the generation
    at this precision (`today_kernel_runs` counts the runs that used today's)?"""
    if job.attention_kernel == "fa2" or float(gpu_value(p.attention_kernel_speedup or {}, gpu, 1.0) or 1.0) == 1.0:
        return False
    runs = gpu_value(p.today_kernel_runs or {}, gpu)
    return not (isinstance(runs, dict) and runs.get(job.precision))


def _capped(tps: float, mfu: float, t: dict, best: float | None) -> float:
    """tokens/s with the step's compute and memory-bound parts held to the best published MFU: the
    communication the step exposes stays on top (a run that pays for its links pays above the cap)."""
    work = t["compute_s"] + t["memory_s"]
    total = work + t["comm_s"]
    mfu_work = mfu * total / work if work > 0 else mfu
    if best is None or mfu_work <= best:
        return tps
    return tps * total / (work * mfu_work / best + t["comm_s"])


def ceilings(
    job: JobSpec, gpu: GPU, lay: Layout, batch: float, tps: float, mfu: float, t: dict, ev: Evidence, p: Params
) -> tuple[float, float, str | None]:
    """(base tokens/s, upper tokens/s, note) for an estimate of `tps` tokens/s at `mfu`, step `t`."""
    upper = _capped(tps, mfu, t, mfu_cap(gpu, job.precision, p, lay.count))
    upper_mfu = mfu * upper / tps
    if ev.level == DATASHEET:
        return upper, upper, None
    med = mfu_median(gpu, job.precision, p, lay.count)
    if med is None or upper_mfu <= med or not _kernel_gain(job, gpu, p):
        return upper, upper, None
    t = step_time(replace(job, attention_kernel="fa2"), gpu, lay, batch, p)
    tps_runs = batch / (t["compute_s"] + t["memory_s"] + t["comm_s"])  # the same layout at the runs' kernels
    mfu_runs = mfu * tps_runs / tps
    base_mfu = min(upper_mfu, max(mfu_runs, med))
    if base_mfu >= upper_mfu * 0.9999:
        return upper, upper, None
    return (
        tps * base_mfu / mfu,
        upper,
        (
            f"today's attention kernels count up to {100 * max(mfu_runs, med):.1f}% MFU in the base case: every "
            f"{job.precision} run measured on {generation_name(generation(gpu))} GPUs used FlashAttention-2-era kernels (median run "
            f"{100 * med:.1f}%; with them {100 * upper_mfu:.1f}%, the upper end)"
        ),
    )


def evidence_note(
    gpu: GPU, precision: str, ev: Evidence, d: dict[str, Any] | None, matured: bool = False, p: Params | None = None
) -> str | None:
    """What the estimate of a GPU with no run of its own rests on, in one sentence (`matured`: no
    derating because its generation is past the first-software months its entry covers). A derating
    measured per stack names the software it assumes (`p`: the table, for the other stack's factor)."""
    if ev.level == MEASURED:
        return None
    if ev.level == SAME_GENERATION:
        others = [g for g in ev.siblings if g != gpu.id]
        own = f"measured {'/'.join(ev.own_precisions)} runs on this GPU" if gpu.id in ev.siblings else ""
        kin = f"measured runs on {', '.join(others)}" if others else ""
        return (
            f"no measured {precision} training run on {gpu.name}: efficiency from "
            f"{' and '.join(x for x in (own, kin) if x)} ({generation_name(ev.generation)})"
        )
    factor = (
        f"x {d['factor']:.2f} derating{_stack_words(gpu, d, p)} (source: {', '.join(d['source'])})"
        if d
        else "with no derating (no measured shortfall applies: a vendor stack past its first software year)"
        if matured
        else "with no derating (catalog/estimator.yaml `datasheet_derating` has no entry for it)"
    )
    return (
        f"no measured training run on {gpu.name} or any {_vendor(gpu)} {generation_name(ev.generation)} GPU: speed from "
        f"the datasheet {factor}"
    )


def _stack_words(gpu: GPU, d: dict[str, Any], p: Params | None) -> str:
    """' for the public <vendor> stack (...)' or ' for vendor-tuned software: <what>, not what the
    public stack gives (x f)': empty for a derating that is the same for every stack."""
    if "software" not in d:
        return ""
    entry = derating_entry(gpu, p) if p is not None else None
    if d["software"] == PUBLIC:
        what = f" ({entry['stack']})" if entry and entry.get("stack") else ""
        return f" for the public {_vendor(gpu)} software stack{what}"
    tuned = (entry or {}).get(VENDOR_TUNED) or {}
    what = f": {tuned['stack']}" if tuned.get("stack") else ""
    public = f" (x {float(entry['factor']):.2f})" if entry else ""
    return f" for vendor-tuned software{what}, not what the public stack gives{public}"


def _vendor(gpu: GPU) -> str:
    return VENDOR_WORDS.get(gpu.vendor.lower().split()[0], gpu.vendor)


def calibration_basis(gpu: GPU, precision: str, p: Params) -> tuple[str, str] | None:
    """(evidence level, source) of a speed the user's own estimator sets (`advisor calibrate`'s
    override, `estimator.calibrated_from`): `measured` on a GPU and precision of its runs,
    `transferred` on the other GPUs of a generation it refitted at that precision (the framework
    efficiency it fitted is the generation's); None where it moved nothing."""
    own = p.calibrated_from
    group = (own or {}).get("groups", {}).get(f"{generation(gpu)}/{precision}")
    if not own or not group:
        return None
    loo = own.get("mape_leave_one_out")
    fit = f"leave-one-out error {100 * loo:.1f}% over its {own.get('runs')} runs" if loo is not None else "a single run"
    where = own.get("runs_file", "your runs")
    mine = group.get(gpu.id)
    if mine:
        runs = f"{mine} run{'s' if mine != 1 else ''} of {gpu.id} at {precision}"
        return MEASURED, f"your calibration ({where}: {runs}; {fit})"
    return TRANSFERRED, f"your calibration ({where}: runs of {', '.join(group)} at {precision}; {fit})"


def speed_basis(job: JobSpec, gpu: GPU, p: Params) -> tuple[Evidence, dict[str, Any] | None, str | None]:
    """(evidence, derating or None, evidence note) for an estimate of `job` on `gpu`. A part the user's
    own estimator was fitted to (calibration_basis) takes no datasheet derating: their runs measured
    what the derating stands in for, and the efficiency fitted to them carries it."""
    ev = evidence(gpu, job.precision)
    own = p.calibrated_from and calibration_basis(gpu, job.precision, p)
    d = derating(gpu, p, job.software) if ev.level == DATASHEET and not own else None
    entry = derating_entry(gpu, p) if ev.level == DATASHEET else None
    return ev, d, evidence_note(gpu, job.precision, ev, d, entry is not None and software_matured(gpu, entry), p)


__all__ = [
    "MEASURED",
    "PUBLIC",
    "SAME_GENERATION",
    "VENDOR_TUNED",
    "DATASHEET",
    "calibration_basis",
    "ceilings",
    "derating",
    "evidence_note",
    "mfu_median",
    "software_matured",
    "speed_basis",
]
