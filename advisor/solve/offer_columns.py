"""The rented columns of a redrawn model (solve/redraw.py) as a draw prices them: each at its own
offer's rate band (data/uncertainty.rate_dist), every offer of a GPU type at that type's one rent
normal, and each commitment at what it bills at the drawn speed (economics/rental.billed_hours: a
term billed in full costs the same at any speed that still fits in it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.data.uncertainty import LogDist, rate_dist
from advisor.economics.rental import billed_hours

if TYPE_CHECKING:
    from advisor.solve.problem import Candidate


class OfferColumns:
    """Per column (in the model's pairs() order): its offer's rate band (an index into `keys`, -1 when
    bought), and per (offer, kind) the columns it bills (`billing`: positions, hours at the model's
    speeds, hours billed there)."""

    def __init__(self, cands: Sequence[Candidate]):
        keys: dict[tuple[str, LogDist], int] = {}
        groups: dict[tuple[int, str], tuple[Any, list[int]]] = {}
        rate_of = []
        for j, c in enumerate(cands):
            if c.ownership != "rent" or c.offer is None:
                rate_of.append(-1)
                continue
            rate_of.append(keys.setdefault((c.gpu, rate_dist(c.offer.offer)), len(keys)))
            if c.commits and c.kind is not None and c.billed_hours:
                groups.setdefault((id(c.offer.offer), c.kind), (c.offer.offer, []))[1].append(j)
        self.keys, self.rate_of = list(keys), np.array(rate_of, dtype=np.int64)
        self.billing = [
            (
                np.array(pos, dtype=np.int64),
                offer,
                kind,
                np.array([cands[j].hours for j in pos], dtype=float),
                np.array([cands[j].billed_hours for j in pos], dtype=float),
            )
            for (_, kind), (offer, pos) in groups.items()
        ]

    def rates(self, by_type: np.ndarray, rent_z: Mapping[str, float] | None) -> np.ndarray:
        """Per column, the draw's rental-rate factor: its GPU type's (`by_type`, per column), or with
        the draw's rent normals `rent_z` (GPU id -> z) its own offer's band at its type's normal."""
        if rent_z is None or not self.keys:
            return by_type
        own = np.array([d.factor_at(rent_z.get(g, 0.0)) for g, d in self.keys])
        return np.where(self.rate_of >= 0, own[np.maximum(self.rate_of, 0)], by_type)

    def scale(self, r: np.ndarray) -> np.ndarray:
        """Per column, its run cost at relative speed `r` (per column) / at the model's: 1 / r, and for a
        commitment what its offer bills for hours / r over what it bills for its hours."""
        out = 1.0 / r
        for pos, offer, kind, hours, billed in self.billing:
            out[pos] = billed_hours(offer, kind, hours / r[pos]) / billed
        return out
