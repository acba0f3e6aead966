"""What backs a training speed: the measured runs of catalog/calibration.csv, listed per GPU and
precision in catalog/accuracy.yaml (`evidence`, written by bench/accuracy.py), and the GPU
generation every table of the estimator is keyed by.

A speed is `measured` when the calibration set holds a run the estimator is fitted to on this GPU
at this precision (a run scored but not fitted, its layout unpublished, does not count),
`same_generation` when it holds runs on a part of the same generation (another part at this
precision, or this generation at another precision), `datasheet` when it holds neither: the
estimate then rests on the part's datasheet figures and the shared default efficiencies, and
carries a sourced derating (catalog/estimator.yaml `datasheet_derating`). A user's own
measurement (a job's `measured:`) makes a speed `measured` on its GPU and count and
`transferred` on related GPUs (advisor/perf/measured.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from advisor.data.catalog_entries import GPU

MEASURED, SAME_GENERATION, DATASHEET, TRANSFERRED = "measured", "same_generation", "datasheet", "transferred"
LEVELS = (MEASURED, TRANSFERRED, SAME_GENERATION, DATASHEET)  # best evidence first
_GENERATIONS: dict[str | None, str] = {}


def generation_of(architecture: str | None) -> str:
    """The generation an architecture string names, as the estimator's tables key it: volta,
    turing, ampere, ada, hopper, blackwell, cdna2, cdna3, rdna3, gaudi (the first word; AMD's
    CDNA and RDNA with their number), 'default' when the catalog gives none."""
    gen = _GENERATIONS.get(architecture)
    if gen is None:
        words = (architecture or "").lower().replace("(", " ").split()
        if not words:
            gen = "default"
        elif words[0] in ("cdna", "rdna") and len(words) > 1 and words[1][:1].isdigit():
            gen = words[0] + words[1][0]
        else:
            gen = words[0]
        _GENERATIONS[architecture] = gen
    return gen


def generation(gpu: GPU) -> str:
    return generation_of(gpu.architecture)


def family_of(gen: str) -> str:
    """A generation's family word, the key a table gives all its numbered generations: 'cdna3' -> 'cdna'."""
    return gen.rstrip("0123456789")


def generation_name(gen: str) -> str:
    """A generation key as people write it: 'cdna3' -> 'CDNA 3', 'hopper' -> 'Hopper'."""
    for family in ("cdna", "rdna"):
        if gen.startswith(family) and gen[len(family) :].isdigit():
            return f"{family.upper()} {gen[len(family) :]}"
    return gen.title()


def correlation_group(gpu: GPU) -> str:
    """The key GPUs share when their speed errors move together in joint draws: vendor and
    generation. Their estimates share the fitted parameters of that generation (framework and
    attention efficiency, the MFU ceilings) and the vendor's software, so an error in those is
    one error for all of them (docs/model.md §2.6)."""
    return f"{gpu.vendor.lower()}/{generation(gpu)}"


@dataclass(frozen=True)
class Evidence:
    """What the calibration set holds for one GPU and precision."""

    level: str  # measured | same_generation | datasheet
    runs: int  # runs on this GPU at this precision
    sources: tuple[str, ...]  # their sources (calibration.csv `group`)
    siblings: tuple[str, ...]  # GPU ids of the generation with runs (same_generation), this one at other precisions
    generation: str
    own_precisions: tuple[str, ...] = ()  # same_generation: the precisions this GPU's own runs are at


_OVERRIDE: list[dict[str, Any]] = []  # a table in force instead of the shipped one (bench/calibration.py folds)


def _table() -> dict[str, Any]:
    return _OVERRIDE[-1] if _OVERRIDE else _shipped()


def runs_key() -> tuple:
    """The (GPU id, precision) pairs with runs in the table in force: what evidence depends on."""
    return tuple(sorted((gid, prec) for gid, e in _table().items() for prec in (e.get("precisions") or {})))


@lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    from advisor.data.compiled import compiled_document
    from advisor.data.resources import data_dir

    doc = compiled_document("accuracy", data_dir("catalog") / "accuracy.yaml")
    return (doc.get("evidence") or {}).get("gpus") or {}


def evidence(gpu: GPU, precision: str) -> Evidence:
    """The evidence behind a speed estimate of `gpu` at `precision` (module docstring)."""
    table = _table()
    gen = generation(gpu)
    mine = (table.get(gpu.id) or {}).get("precisions", {})
    runs = mine.get(precision) or {}
    if runs.get("runs") and (table.get(gpu.id) or {}).get("generation") == gen:
        return Evidence(MEASURED, int(runs["runs"]), tuple(runs.get("sources") or ()), (), gen)
    kin = sorted(
        gid for gid, e in table.items() if e.get("generation") == gen and (gid != gpu.id or e.get("precisions"))
    )
    same_precision = [gid for gid in kin if precision in (table[gid].get("precisions") or {})]
    if same_precision or kin:
        sibs = tuple(same_precision or kin)
        own = tuple(sorted(p for p, r in mine.items() if (r or {}).get("runs"))) if gpu.id in sibs else ()
        return Evidence(SAME_GENERATION, 0, (), sibs, gen, own)
    return Evidence(DATASHEET, 0, (), (), gen)


class use_table:
    """`with use_table({gpu id: {generation, precisions}}):` evidence as if the calibration set held
    only those runs (the benchmark's leave-one-source-out folds: a held-out source's GPU is as
    unmeasured as it would be without the source)."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table

    def __enter__(self) -> None:
        _OVERRIDE.append(self.table)

    def __exit__(self, *exc: object) -> None:
        _OVERRIDE.pop()
