"""How wrong a speed estimate or a catalog price may be: the error distributions of
catalog/uncertainty.yaml (written by bench/uncertainty.py from the estimator's out-of-sample
residuals and the catalog's quote bands), as quantile functions plans and re-solves use.

Each distribution is a log-ratio given by its P10, P50 and P90, read as a two-piece normal: below
the median with the spread (P50 - P10) / z90, above it with (P90 - P50) / z90. So its P10/P50/P90
are exactly the stored ones, any other quantile is defined, and a draw is one standard normal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import TYPE_CHECKING

from advisor.data.catalog import GPU
from advisor.data.compiled import compiled_document
from advisor.data.evidence import DATASHEET, correlation_group, evidence
from advisor.data.resources import data_dir

if TYPE_CHECKING:
    import numpy as np

    from advisor.data.catalog_prices import RentalOffer

Z90 = NormalDist().inv_cdf(0.9)
DEFAULT_CONFIDENCE = 0.8


@dataclass(frozen=True)
class LogDist:
    """A log-ratio with quantiles q10 <= q50 <= q90 (two-piece normal between and beyond them), at
    most `cap` as a factor: a speed cannot beat its physics (the estimate's upper end: the model at
    the best published MFU, or a measurement's own spread), however wide its error band."""

    q10: float
    q50: float
    q90: float
    basis: str = ""
    cap: float = math.inf
    measured: bool = False  # a user's own measurement's band (measurement_dist), not a model's error

    def at_z(self, z: float) -> float:
        return min(
            self.q50 + z * ((self.q50 - self.q10) if z < 0 else (self.q90 - self.q50)) / Z90,
            math.log(self.cap) if self.cap < math.inf else math.inf,
        )

    def quantile(self, p: float) -> float:
        return self.at_z(NormalDist().inv_cdf(p))

    def factor_at(self, z: float) -> float:
        """The multiplier on the point value at standard-normal draw z."""
        return math.exp(self.at_z(z))

    def factors_at(self, z: np.ndarray) -> np.ndarray:
        """factor_at of every z, the same bits (exponentials by math.exp: numpy's may differ in the last bit)."""
        import numpy as np

        at = self.q50 + z * np.where(z < 0, self.q50 - self.q10, self.q90 - self.q50) / Z90
        if self.cap < math.inf:
            at = np.minimum(at, math.log(self.cap))
        return np.fromiter(map(math.exp, at.ravel().tolist()), dtype=float, count=at.size).reshape(z.shape)

    def factor(self, p: float) -> float:
        """exp(quantile p): the multiplier on the point value at probability level p."""
        return math.exp(self.quantile(p))


NONE = LogDist(0.0, 0.0, 0.0, "no spread")


@lru_cache(maxsize=1)
def _doc() -> dict:
    return compiled_document("uncertainty", data_dir("catalog") / "uncertainty.yaml")


def family(gpu: GPU) -> str:
    """The GPU's generation as the estimator's per-family parameters name it ('ampere', 'hopper')."""
    return gpu.architecture.split()[0].lower() if gpu.architecture else "unknown"


def _dist(entry: dict) -> LogDist:
    return LogDist(float(entry["q10"]), float(entry["q50"]), float(entry["q90"]), str(entry.get("basis", "")))


def speed_dist(gpu: GPU, precision: str, evidence_level: str | None = None) -> LogDist:
    """log(real / estimated tokens/s) for this GPU's generation and precision, by the evidence
    behind the estimate (advisor/data/evidence.py; by default read for the GPU): a `datasheet`
    speed takes the wider distribution of generations with no measured run, a `measured`,
    `same_generation` or `transferred` one its generation's; no spread if the installation ships
    no distributions."""
    speed = _doc().get("speed")
    if not speed:
        return NONE
    level = evidence_level or evidence(gpu, precision).level
    if level == DATASHEET:
        return _dist(speed["unmeasured"])
    fam = family(gpu)
    entry = speed["groups"].get(f"{fam}/{precision}") or speed["families"].get(fam)
    return _dist(entry) if entry else _dist(speed["unmeasured"])


def serving_dist(gpu: GPU) -> LogDist:
    """log(real / estimated requests/s of a serving replica) for this GPU's generation: the serving
    model's held-out error on published runs (catalog/uncertainty.yaml `serving`, bench/uncertainty_serving.py);
    a generation with no serving run takes the wide default; no spread if the file has none."""
    serving = _doc().get("serving")
    if not serving:
        return NONE
    entry = serving["families"].get(family(gpu))
    return _dist(entry) if entry else _dist(serving["unmeasured"])


def measurement_dist(spread: float) -> LogDist:
    """A user's own measurement (a job's `measured:`) read as a speed distribution: P10-P90 at
    measured x (1 -+ spread), median at the measurement, and never faster than its top."""
    return LogDist(
        math.log(max(1e-6, 1.0 - spread)),
        0.0,
        math.log(1.0 + spread),
        f"measured, +-{100 * spread:g}%",
        cap=1.0 + spread,
        measured=True,
    )


def shared_speed_draws(gpus: Iterable[GPU], draw: Callable[[], float]) -> dict[str, float]:
    """One standard-normal speed draw per correlation group (vendor and generation, evidence.py
    `correlation_group`), given to each of its GPUs: the estimates of one generation share its
    fitted parameters, so their errors move together (docs/model.md §2.6). `draw()` returns one
    standard normal; groups are drawn in sorted order, so the result is deterministic."""
    by_group: dict[str, list[str]] = {}
    for g in gpus:
        by_group.setdefault(correlation_group(g), []).append(g.id)
    out: dict[str, float] = {}
    for key in sorted(by_group):
        z = draw()
        out.update({gid: z for gid in by_group[key]})
    return out


def price_dist(
    confidence: str | None, usd: float | None = None, usd_range: tuple[float, float] | None = None
) -> LogDist:
    """log(real / catalog price) for a price of this confidence grade: its own usd_range as P10-P90
    when it has one (a side with no room takes half the grade's width), else the grade's band
    centred on the point."""
    grades = (_doc().get("price") or {}).get("by_confidence") or {}
    width = float(grades.get(confidence or "low", {}).get("log_width", 0.0))
    if usd and usd_range:
        lo = math.log(usd_range[0] / usd) if usd_range[0] < usd else -width / 2
        hi = math.log(usd_range[1] / usd) if usd_range[1] > usd else width / 2
        return LogDist(min(lo, 0.0), 0.0, max(hi, 0.0), f"{confidence} confidence, quoted band")
    return LogDist(-width / 2, 0.0, width / 2, f"{confidence} confidence")


def rate_dist(offer: RentalOffer, gpus: int | None = None, at_once: int = 0) -> LogDist:
    """log(real / listed rate) of one rental offer, by its own confidence grade (price_dist): what a
    draw prices a GPU rented on that offer at, the band `decision.verify` prints for it. An order of
    `gpus` (`at_once` held on the offer in all) above the size its rate is evidenced at
    (RentalOffer.confidence_at: the plan says a quote is needed) takes the low grade's spread about the same mean as its own grade's: a quote at that
    size may come in under the listing as well as over it (SF Compute's docs: 'a cheaper price per
    gpu-hour if you buy 128 H100s for a month'), so only the spread is wider, not the expected rate."""
    own = price_dist(offer.confidence)
    if gpus is None or offer.confidence_at(gpus, at_once) == offer.confidence:
        return own
    low = price_dist("low")
    shift = _log_mean(own) - _log_mean(low)
    return LogDist(low.q10 + shift, low.q50 + shift, low.q90 + shift, "low confidence about its grade's mean")


def _log_mean(d: LogDist) -> float:
    """log E[exp(X)] of a grade's band, a normal about q50 (the grades' bands are symmetric)."""
    sigma = (d.q90 - d.q10) / (2 * Z90)
    return d.q50 + sigma * sigma / 2


def basis() -> dict:
    """Where the distributions come from (for a plan's assumptions)."""
    doc = _doc()
    if not doc:
        return {"source": None, "note": "no catalog/uncertainty.yaml: ranges have no spread"}
    speed = doc["speed"]
    return {
        "source": "catalog/uncertainty.yaml",
        "generated_by": doc.get("generated_by"),
        "speed": speed["source"],
        "speed_rows": speed["rows"],
        "speed_coverage_p10_p90": speed["coverage_p10_p90"]["strict_leave_one_source_out"],
        "price": doc["price"]["source"],
    }
