"""A user's own serving benchmark (issue 31 item 4): the estimate uses it exactly where it was
measured and moves the other GPUs by a stated rule (docs/model.md, "Serving: your own measurements").

A measurement is `count` GPUs of one type, `tensor_parallel` a replica, at full load on requests of
`input_len`/`output_len` tokens. Its factor f = measured / modelled output tokens/s at that shape (the
job's precision, the GPU's default engine). Every step time of a replica is divided by the factor it
gets, so the modelled offline peak at the measured shape is the measurement, and the SLO-limited rate
follows the same scaled rate-latency curve. Which factor a GPU gets:

* the measured GPU type: f (the geometric mean of its measurements' factors); `speed_evidence:
  measured` on the measured shape (tensor parallel, input and output lengths), `transferred` elsewhere;
* a GPU of a measured GPU's generation (the catalog's architecture, e.g. Hopper): the same f,
  `transferred` (the share of f that belongs to the GPU moves its generation, the share that belongs
  to the user's software moves every GPU: together all of f);
* any other GPU: f ** s, `transferred`, where s = `measured_software_share` in
  catalog/serving_estimator.yaml is the share of the deviation attributed to the user's software.

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


@dataclass(frozen=True)
class Speed:
    """What multiplies one GPU type's modelled speed, and why."""

    factor: float
    evidence: str  # measured | transferred
    source: str  # the measurement(s) it comes from, in words
    shapes: tuple[tuple[int, int, int], ...] = ()  # (tensor parallel, input, output) measured on this GPU


def label(m: Any) -> str:
    """A measurement in words, as plans quote it."""
    when = f", {m.date}" if m.date else ""
    note = f" ({m.note})" if m.note else ""
    return (
        f"your run of {m.count} x {m.gpu}, TP{m.tensor_parallel}, {m.input_len} in / {m.output_len} out: "
        f"{m.output_tokens_per_s:,.0f} output tokens/s{when}{note}"
    )


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def transfer(
    factors: list[tuple[str, str, float, Any]], gpus: dict[str, str], software_share: float
) -> dict[str, Speed]:
    """{GPU id: Speed} for every GPU of `gpus` ({id: generation}) from the measured factors
    [(GPU id, generation, f, measurement)], by the rule of this module's docstring."""
    out: dict[str, Speed] = {}
    every = [f for _, _, f, _ in factors]
    for gid, gen in gpus.items():
        own = [(f, m) for g, _, f, m in factors if g == gid]
        if own:
            shapes = tuple(sorted({(m.tensor_parallel, m.input_len, m.output_len) for _, m in own}))
            out[gid] = Speed(
                geometric_mean([f for f, _ in own]), "measured", "; ".join(label(m) for _, m in own), shapes
            )
            continue
        kin = [(f, m) for _, g, f, m in factors if g == gen]
        if kin:
            out[gid] = Speed(
                geometric_mean([f for f, _ in kin]),
                "transferred",
                "moved with its generation by " + "; ".join(label(m) for _, m in kin),
            )
        else:
            out[gid] = Speed(
                geometric_mean(every) ** software_share,
                "transferred",
                f"moved by the software share ({software_share:g}) of " + "; ".join(label(m) for _, _, _, m in factors),
            )
    return out


@lru_cache(maxsize=1)
def calibrated_gpus() -> frozenset[str]:
    """GPU ids with a published serving run the model is fitted to (catalog/serving_calibration.csv)."""
    with open(data_dir("catalog") / "serving_calibration.csv", newline="", encoding="utf-8") as f:
        return frozenset(r["gpu"] for r in csv.DictReader(f) if r.get("fit") == "yes" and r.get("gpu"))
