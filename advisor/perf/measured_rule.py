"""How a user's own runs reach a GPU they were not measured on (docs/model.md §1.8), one rule for
training (perf/measured.py) and serving (perf/serving_measured.py). A run's offset from the model,
e = ln(measured / modelled), is split: a share s belongs to the user's software and moves every GPU,
the rest belongs to the GPU and moves its generation. So a GPU takes the mean e of its own type's runs;
without one, the mean e of its generation's runs (the GPU's share and the software's: all of e); with
neither, s x the mean e of every run. A run of another generation never dilutes a GPU's own or its
generation's runs (review19 #3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Sequence, TypeVar

T = TypeVar("T")

OWN, GENERATION, SOFTWARE = "own", "generation", "software"


@dataclass(frozen=True)
class Run(Generic[T]):
    """One measured run as the rule sees it: its GPU id and generation, its offset e, and the run."""

    gpu: str
    generation: str
    offset: float
    run: T


@dataclass(frozen=True)
class Reach(Generic[T]):
    """What the runs do to one GPU: the offset it takes (a log-factor), by which tier, from which runs."""

    offset: float
    tier: str  # OWN | GENERATION | SOFTWARE
    runs: tuple[T, ...]


def reach(runs: Sequence[Run[T]], gpu: str, generation: str, software_share: float) -> Reach[T] | None:
    """The offset `gpu` (of `generation`) takes from `runs` by the rule of this module's docstring;
    None without runs."""
    if not runs:
        return None
    for tier, chosen in (
        (OWN, [r for r in runs if r.gpu == gpu]),
        (GENERATION, [r for r in runs if r.generation == generation]),
    ):
        if chosen:
            return Reach(sum(r.offset for r in chosen) / len(chosen), tier, tuple(r.run for r in chosen))
    mean = sum(r.offset for r in runs) / len(runs)
    return Reach(software_share * mean, SOFTWARE, tuple(r.run for r in runs))


def speed_text(x: float) -> str:
    """A measured speed as a plan quotes it: '120,000', or three significant digits below 1 ('0.001',
    '1e-12': a run entered as 1e-12 tokens/s was printed as "0 tokens/s")."""
    return f"{x:,.0f}" if x >= 1 else f"{x:.3g}"
