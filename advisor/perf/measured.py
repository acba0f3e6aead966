"""The user's own measured speeds of a job (a job's `measured:`), carried in the JobSpec so that
`evaluate` itself uses them (docs/model.md §1.8):

* on the measured GPU and count the estimate IS the measurement (`speed_evidence: measured`), with a
  P10-P90 band of measured x (1 -+ spread);
* elsewhere the measurements move the estimate by the rule of perf/measured_rule.py, the one serving
  uses: with e = ln(measured / model's estimate of the measured run), a GPU takes the mean e of its
  own type's runs (at other counts), else of its generation's runs, else s x the mean e of every run
  (`speed_evidence: transferred`, naming the runs used).

s is catalog/estimator.yaml `measured_software_share`, measured on the calibration set
(bench/calibration.py `software_share`, printed by bench/accuracy.py --fit): of the variance of the
estimator's residuals over publishers that ran several GPU generations, the share between publishers
(their software) against the share between generations within a publisher.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from advisor.data.catalog_figures import parse_as_of
from advisor.data.evidence import generation
from advisor.perf.measured_rule import Run, reach, speed_text

_STATED = "docs/model.md §1.8"


@dataclass(frozen=True)
class MeasuredSpeed:
    """One measurement of the job: `tokens_per_s` over `count` GPUs `gpu` (the catalog entry in
    `figures`, left out of equality and hashing: the id names it within one catalog)."""

    gpu: str
    count: int
    tokens_per_s: float
    date: str
    spread: float
    note: str | None = None
    figures: Any = field(default=None, compare=False, hash=False, repr=False)

    def label(self) -> str:
        return f"your measurement of {self.count} x {self.gpu} on {self.date}: {speed_text(self.tokens_per_s)} tokens/s"


def beyond_peak(job: Any, gpu: Any, count: int, tokens_per_s: float) -> str | None:
    """Why a measured training speed cannot be, or None: it would run `count` GPUs above their dense
    peak at the job's precision on the fewest FLOPs a token can take (the matmuls alone, 6 per
    parameter, 4 for LoRA's frozen weights; attention left out), which no run does."""
    return above_peak(gpu, count, job.precision, job.model.matmul_flops_per_token(job.kind), tokens_per_s, "tokens/s")


def above_peak(gpu: Any, count: int, precision: str, per_token: float, tokens_per_s: float, unit: str) -> str | None:
    """Why `tokens_per_s` (`unit`, over all `count` GPUs) cannot be, or None: at `per_token` FLOPs a
    token (the matmuls alone: a lower bound) it would need more than the GPUs' whole dense peak at
    `precision`. Training's and serving's measurements are both held to it."""
    peak = gpu.dense_tflops(precision)
    if not peak or per_token <= 0:  # no peak, or a shape with no matmul parameters left: nothing to bound by
        return None
    most = count * peak * 1e12 / per_token
    if tokens_per_s <= most:
        return None
    return (
        f"{tokens_per_s:,.0f} {unit} on {count} x {gpu.id} is {_times(tokens_per_s / most)} what "
        + ("it could do at its " if count == 1 else "they could do at their ")
        + f"whole dense {precision} peak ({peak:g} TFLOPS each: at most {most:,.0f} {unit} on the matmuls alone); "
        f"check the figure's unit ({unit} over all the GPUs), the count and the precision"
    )


def _times(ratio: float) -> str:
    """'1.2x', '7,024x': a ratio in plain digits (',.3g' printed 7.02e+03x)."""
    return f"{ratio:,.2g}x" if ratio < 10 else f"{ratio:,.0f}x"


def run_mfu(m: MeasuredSpeed, precision: str, per_token: float) -> float | None:
    """Measurement `m`'s MFU at `per_token` FLOPs a token (the PaLM convention the calibration set's runs
    are counted in, training.mfu_flops_per_token) on its GPUs' dense peak; None without a peak."""
    peak = m.figures.dense_tflops(precision) if m.figures is not None else None
    return m.tokens_per_s / m.count * per_token / (peak * 1e12) if peak else None


def implausibly_slow(job: Any, m: MeasuredSpeed, per_token: float, floor: float) -> str | None:
    """Why measurement `m` of `job` is doubted, or None: its MFU (run_mfu) is below `floor`, the lowest
    of any published run the estimator is calibrated on (Params.measured_mfu_floor), as a per-GPU
    figure entered as the whole run's is (1/count of it)."""
    mfu = run_mfu(m, job.precision, per_token)
    if mfu is None or floor <= 0 or mfu >= floor:
        return None
    return (
        f"{m.label()} is implausibly slow: {100 * mfu:.2g}% MFU on {job.precision}, below the lowest of the published "
        f"runs the estimator is calibrated on ({100 * floor:.1f}%); check its unit: tokens/s over all {m.count} GPUs "
        f"(if {speed_text(m.tokens_per_s)} is per GPU, the run's is {speed_text(m.tokens_per_s * m.count)})"
    )


def no_reading(job: Any, gpu: Any, count: int, tokens_per_s: float, per_token: float, floor: float) -> str | None:
    """Why a measured training speed is no run of `job` at all, or None: its MFU (at `per_token` FLOPs a
    token) stays below `floor`, the lowest of the published runs (Params.measured_mfu_floor), however the
    figure is read -- over all `count` GPUs, for one GPU, or as one GPU's sequences/s of the job's seq_len
    tokens (Hugging Face's train_samples_per_second) -- as serving's runs are held to the slowest published
    one (serving_measured.not_a_run). Above it a slow run is only doubted (implausibly_slow); left in,
    1e-12 tokens/s had a plan rent a 4090 for 120 days. None without a peak."""
    peak = gpu.dense_tflops(job.precision)
    if not peak or per_token <= 0 or floor <= 0:
        return None
    seq = job.model.seq_len
    least = floor * peak * 1e12 / per_token / seq  # one GPU's sequences/s at the floor's MFU, in tokens/s
    if tokens_per_s >= least:
        return None
    return (
        f"{speed_text(tokens_per_s)} tokens/s on {count} x {gpu.id} is no run of this job: even read as one GPU's "
        f"sequences/s ({seq:,} tokens each) it is {100 * tokens_per_s / least * floor:.2g}% MFU on {job.precision}, "
        f"below the lowest of the published runs the estimator is calibrated on ({100 * floor:.1f}%); check its "
        f"unit (tokens per second over all the run's GPUs): under {speed_text(least)} tokens/s on {count} "
        f"GPU{'s' if count > 1 else ''} no reading of it is a run"
    )


def doubts(job: Any, per_token: float, floor: float) -> list[str]:
    """Why each of `job`'s measurements is doubted (implausibly_slow), at `per_token` FLOPs a token
    (training.mfu_flops_per_token): said once a job, plan or no plan (a doubted run may be why none fits)."""
    return [d for m in job.measured if (d := implausibly_slow(job, m, per_token, floor))]


def misdated(job: Any, day: dt.date) -> list[str]:
    """Each of `job`'s measurements dated after the plan's day, or before its GPU's launch: a typo the
    user should hear about (the speed is used all the same; the date is read by no fit)."""
    said = (dated_wrong(m.label(), dt.date.fromisoformat(m.date), m.figures, day) for m in job.measured)
    return [s for s in said if s]


def dated_wrong(label: str, when: dt.date, gpu: Any, day: dt.date) -> str | None:
    """Why a run `label`, of GPU `gpu` (catalog figures, or None), dated `when`, has a doubtful date, or None:
    after the plan's `day` or before the GPU launched (training's and serving's runs alike)."""
    launch = parse_as_of(gpu.launch.value if gpu else None)
    if when > day:
        return f"{label} is dated after the plan's day ({day.isoformat()}): check its date"
    if launch is not None and when < launch:
        return f"{label} is dated before the {gpu.name} launched ({gpu.launch.value}): check its date"
    return None


def runs_ceiling(job: Any, runs: tuple[MeasuredSpeed, ...], gpu: Any, count: int, per_token: float) -> float:
    """The tokens/s `count` GPUs `gpu` reach at the best MFU among `runs` (at `per_token` FLOPs a token),
    never above their dense peak: how far a speed moved by the user's runs may go where the model's
    own record cap is lower (a run that beat the model at 16,384 GPUs does not make 64 run faster than
    that run or the record did). 0 without a peak."""
    peak = gpu.dense_tflops(job.precision)
    if not peak or per_token <= 0:
        return 0.0
    mfus = [mfu for m in runs if (mfu := run_mfu(m, job.precision, per_token)) is not None]
    return min(1.0, max(mfus, default=0.0)) * count * peak * 1e12 / per_token


def applied(t: Transfer, tokens_per_s: float, upper: float, mfu: float, ceiling: float) -> tuple[float, float, str]:
    """(factor, upper tokens/s, note) of `t` on an estimate of `tokens_per_s` (its upper end `upper`, at
    `mfu`): a measured speed as measured, within its spread; a moved one no faster than the record (the
    estimate's upper end) or `ceiling` (runs_ceiling: the user's own runs' best MFU) allow."""
    if t.level == "measured":
        return t.factor, tokens_per_s * t.factor * (1.0 + (t.spread or 0.0)), f"{t.source}: used as measured"
    most = max(upper, ceiling)
    factor = max(1.0, min(t.factor, most / tokens_per_s)) if t.factor > 1 else t.factor  # never below the model
    held = (
        f", held to {100 * mfu * factor:.1f}% MFU (the best published or your runs' own)" if factor < t.factor else ""
    )
    note = f"moved x {t.factor:.3f} by {t.source} (docs/model.md §1.8){held}"
    return factor, max(tokens_per_s * factor, min(upper * t.factor, most)), note


@dataclass(frozen=True)
class Transfer:
    """How the measurements reach one (GPU, count): the factor on the model's estimate, the evidence
    level, the measurements used and the band's spread (exact measurement only)."""

    factor: float
    level: str
    source: str
    spread: float | None = None
    runs: tuple[MeasuredSpeed, ...] = ()  # the measurements it comes from


def transfer(
    measured: tuple[MeasuredSpeed, ...], gpu: Any, count: int, model_at: Any, software_share: float
) -> Transfer | None:
    """The measurements' effect on the estimate of `gpu` x `count`; `model_at(m)` is the model's
    tokens/s for measurement m's own GPU and count (the estimate without measurements); `software_share`
    the share of a measurement's offset that moves a GPU of another generation (Params.measured_software_share)."""
    exact = next((m for m in measured if m.gpu == gpu.id and m.count == count), None)
    if exact is not None:
        base = model_at(exact)
        factor = exact.tokens_per_s / base if base > 0 else 1.0
        return Transfer(factor, "measured", exact.label(), exact.spread, (exact,))
    runs = []
    for m in measured:
        base = model_at(m) if m.figures is not None else 0.0
        if base > 0:
            runs.append(Run(m.gpu, generation(m.figures), math.log(m.tokens_per_s / base), m))
    got = reach(runs, gpu.id, generation(gpu), software_share)
    if got is None:
        return None
    return Transfer(math.exp(got.offset), "transferred", "; ".join(m.label() for m in got.runs), runs=got.runs)


def measured_speeds(job: Any, catalog: Any, where: str) -> tuple[MeasuredSpeed, ...]:
    """A workload job's `measured:` as MeasuredSpeed entries, each GPU id checked against the catalog
    (an unknown id is an InputError naming `jobs[i].measured[j].gpu`)."""
    from advisor.errors import InputError, suggest
    from advisor.inputs.jobs import DEFAULT_SPREAD

    out = []
    for j, m in enumerate(job.measured or []):
        if m.gpu not in catalog.gpus:
            raise InputError(
                f"{where}.measured[{j}].gpu: unknown GPU id {m.gpu!r}{suggest(m.gpu, catalog.gpus)}; "
                "see `advisor catalog list`",
                field=f"{where}.measured[{j}].gpu",
            )
        out.append(
            MeasuredSpeed(
                gpu=m.gpu,
                count=m.count,
                tokens_per_s=float(m.tokens_per_s),
                date=m.date.isoformat(),
                spread=float(m.spread or DEFAULT_SPREAD),
                note=m.note,
                figures=catalog.gpus[m.gpu],
            )
        )
    return tuple(out)
