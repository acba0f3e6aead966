"""A user's own serving benchmark (issue 31 item 4): the estimate uses it exactly where it was
measured and moves the other GPUs by a stated rule (docs/model.md, "Serving: your own measurements").

A measurement is `count` GPUs of one type, `tensor_parallel` a replica, at full load on requests of
`input_len`/`output_len` tokens. Its factor f = measured / modelled output tokens/s at that shape (the
job's precision, the GPU's default engine). Every step time of a replica is divided by the factor it
gets, so the modelled offline peak at the measured shape is the measurement, and the SLO-limited rate
follows the same scaled rate-latency curve. Which factor a GPU gets (perf/measured_rule.py, the rule
training's measurements follow too):

* the measured GPU type: on a measured shape (tensor parallel, input and output lengths) the
  geometric mean of that shape's runs' factors, `speed_evidence: measured`; elsewhere the geometric
  mean of all its runs', `transferred`;
* another GPU of a measured generation (the catalog's architecture, e.g. Hopper): the geometric mean
  of that generation's factors, `transferred` (the share of f that belongs to the GPU moves its
  generation, the share that belongs to the user's software moves every GPU: together all of f);
* any other GPU: f ** s with f the geometric mean of every run's factor, `transferred`, where s =
  `measured_software_share` in catalog/serving_estimator.yaml is the share of the deviation
  attributed to the user's software.

Without a measurement a GPU's evidence is `same_generation` when published runs of its generation are
in catalog/serving_calibration.csv (the model is fitted on them), else `datasheet`.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from advisor.data.resources import data_dir
from advisor.errors import InputError
from advisor.perf.measured_rule import GENERATION, OWN, Run, reach, speed_text


@dataclass(frozen=True)
class Speed:
    """What multiplies one GPU type's modelled speed, and why."""

    factor: float
    evidence: str  # measured | transferred
    source: str  # the measurement(s) it comes from, in words
    # (tensor parallel, input, output) measured on this GPU, each with its own runs' factor, words and
    # stated spread (the widest of them; None: none stated)
    by_shape: tuple[tuple[tuple[int, int, int], float, str, float | None], ...] = ()

    @property
    def shapes(self) -> tuple[tuple[int, int, int], ...]:
        return tuple(shape for shape, _, _, _ in self.by_shape)

    def at(self, tp: int, pp: int, input_len: float, output_len: float) -> tuple[float, str, float | None]:
        """(factor, source, spread) of a replica of this shape: its own runs' where the user measured it
        (a run at one shape says nothing more certain about another than the type's mean does), else
        the type's, with no spread of its own."""
        shape = (tp, int(input_len), int(output_len))
        own = (row[1:] for row in self.by_shape if row[0] == shape and pp == 1)
        return next(own, (self.factor, self.source, None))


def label(m: Any) -> str:
    """A measurement in words, as plans quote it."""
    when = f", {m.date}" if m.date else ""
    note = f" ({m.note})" if m.note else ""
    return (
        f"your run of {m.count} x {m.gpu}, TP{m.tensor_parallel}, {m.input_len} in / {m.output_len} out: "
        f"{speed_text(m.output_tokens_per_s)} output tokens/s{when}{note}"
    )


def not_a_run(at: str, run: Any, one: float, floor: float) -> InputError:
    """A run too slow to be a throughput run at full load: below `floor` (the slowest published run
    against the model) x `one`, what its GPUs give serving one request at a time. Left in, 1e-12
    tokens/s sized replicas by the 1e15 and crashed HiGHS; a unit slip (tokens/ms) is the likely cause."""
    n = run.count
    return InputError(
        f"{at}.output_tokens_per_s: {run.output_tokens_per_s:.4g} output tokens/s on {n} x {run.gpu} is slower "
        f"than the serving model gives one request at a time on each replica ({one:,.4g} at this shape); a "
        f"throughput run at full load gives at least {floor * one:,.4g} ({floor:g}x of it, as the slowest "
        f"published run against the model); check its unit: output tokens/s over all {n} GPU{'s' if n > 1 else ''}",
        field=f"{at}.output_tokens_per_s",
    )


def too_slow(run: str, factor: float, count: int, floor: float) -> str | None:
    """Why a serving run is doubted, or None: it is `factor` x the model at its own shape, below `floor`,
    the slowest of the published runs against the model (ServeParams.measured_factor_floor), as a
    per-GPU figure entered as the whole run's is (1/count of it)."""
    if factor >= floor:
        return None
    return (
        f"{run} is implausibly slow: {factor:.2g}x the serving model at its own shape, below the slowest "
        f"of the published runs against it ({floor:g}x); check its unit: output tokens/s over all {count} GPUs"
    )


def transfer(
    factors: list[tuple[str, str, float, Any]], gpus: dict[str, str], software_share: float
) -> dict[str, Speed]:
    """{GPU id: Speed} for every GPU of `gpus` ({id: generation}) from the measured factors
    [(GPU id, generation, f, measurement)], by the rule of perf/measured_rule.py (in this module's
    docstring's words)."""
    runs = [Run(g, gen, math.log(f), m) for g, gen, f, m in factors]
    out: dict[str, Speed] = {}
    for gid, gen in gpus.items():
        got = reach(runs, gid, gen, software_share)
        if got is None:
            continue
        used = "; ".join(label(m) for m in got.runs)
        factor = math.exp(got.offset)
        if got.tier == OWN:
            out[gid] = Speed(factor, "measured", used, _by_shape([(f, m) for g, _, f, m in factors if g == gid]))
        elif got.tier == GENERATION:
            out[gid] = Speed(factor, "transferred", "moved with its generation by " + used)
        else:
            out[gid] = Speed(factor, "transferred", f"moved by the software share ({software_share:g}) of " + used)
    return out


def _by_shape(runs: list[tuple[float, Any]]) -> tuple[tuple[tuple[int, int, int], float, str, float | None], ...]:
    """Each measured shape (tensor parallel, input, output) with the geometric mean of its own runs'
    factors, their words and the widest spread they state."""
    shapes: dict[tuple[int, int, int], list[tuple[float, Any]]] = {}
    for f, m in runs:
        shapes.setdefault((m.tensor_parallel, m.input_len, m.output_len), []).append((f, m))
    return tuple(
        (
            shape,
            math.exp(sum(math.log(f) for f, _ in fm) / len(fm)),
            "; ".join(label(m) for _, m in fm),
            max((m.spread for _, m in fm if m.spread is not None), default=None),
        )
        for shape, fm in sorted(shapes.items())
    )


@lru_cache(maxsize=1)
def calibrated_gpus() -> frozenset[str]:
    """GPU ids with a published serving run the model is fitted to (catalog/serving_calibration.csv)."""
    with open(data_dir("catalog") / "serving_calibration.csv", newline="", encoding="utf-8") as f:
        return frozenset(r["gpu"] for r in csv.DictReader(f) if r.get("fit") == "yes" and r.get("gpu"))
