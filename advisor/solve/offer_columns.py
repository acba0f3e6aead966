"""The rented columns of a redrawn model (solve/redraw.py) as a draw prices them: each at its own
offer's rate band, graded at its order and the GPUs the plan judged holds at once on its provider as
the plan's rows grade it (solve/constraints/gpu_count.held_rate), every offer of a GPU type at that type's one rent
normal, and each commitment at what it bills at the drawn speed (economics/rental.billed_hours: a
term billed in full costs the same at any speed that still fits in it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.data.uncertainty import LogDist
from advisor.economics.rental import billed_hours
from advisor.solve.constraints.gpu_count import Held, held_grade, held_rate
from advisor.solve.reserved import alone_at_once, footprint, node_weight, pool_coefs

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Candidate


class OfferColumns:
    """Per column (in the model's pairs() order): its offer's rate band (an index into `keys`, -1 when
    bought), and per (offer, kind) the columns it bills (`billing`: positions, hours at the model's
    speeds, hours billed there). `held`: the GPUs held at once per (GPU, provider), gpu_count.held_counts."""

    def __init__(self, cands: Sequence[Candidate], held: Held | None = None):
        self.cands = cands
        keys: dict[tuple[str, LogDist], int] = {}
        groups: dict[tuple[int, str], tuple[Any, list[int]]] = {}
        rate_of = []
        for j, c in enumerate(cands):
            if c.ownership != "rent" or c.offer is None:
                rate_of.append(-1)
                continue
            rate_of.append(keys.setdefault((c.gpu, held_rate(c.offer.offer, c, held)), len(keys)))
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


class PoolColumns:
    """The pools of a redrawn model (solve/reserved.py) as a draw prices them. A pooled column whose job,
    at the drawn speed, still fits in the term takes its share of the pool's nodes (its copies run in
    turn as fit at that speed) and pays nothing of its own; one slowed past the term leaves the pool and
    pays its own use (reserved.pool_key, as a fresh build at that speed has it). A node R[o] costs its
    term at the draw's rate for its offer, at any speed."""

    def __init__(self, m: Model, col: Mapping[str, int], row: Mapping[str, int], held: Held | None = None):
        p, reps = m.problem, [m.pool_rep[key] for key in m.R]
        self.cols = np.array([col[v.name] for v in m.R.values()], dtype=np.int32)
        self.gpus = [c.gpu for c in reps]
        self.price = np.array([m.sc.rent_price(c.gpu) for c in reps], dtype=float)
        self.pv = np.array([c.run_cost_usd * node_weight(c) for c in reps], dtype=float)
        self.cash = np.array(
            [(c.run_cost_nominal if c.run_cost_nominal is not None else c.run_cost_usd) * node_weight(c) for c in reps],
            dtype=float,
        )
        self.offers = OfferColumns(reps, held)
        where = {(k, i): j for j, (k, i, _) in enumerate(m.pairs())}
        members = [(row[name], where[k, i], col[m.y[k, i].name], m.cands[k][i]) for name, k, i, _ in pool_coefs(m)]
        self.n = len(where)
        self.rows = [(r, y) for r, _, y, _ in members]
        self.pos = np.array([j for _, j, _, _ in members], dtype=np.int64)
        cands = [c for *_, c in members]
        left = [p.costs.horizon_hours - c.start_hours for c in cands]
        self.hours = np.array([c.hours for c in cands], dtype=float)
        self.planned = np.array([c.planned_hours for c in cands], dtype=float)
        self.term = np.array([c.billed_hours for c in cands], dtype=float)  # a pooled job is billed its term
        self.span = np.array([min(lf, t) for lf, t in zip(left, self.term.tolist())], dtype=float)
        self.once = np.array([alone_at_once(p, c) for c in cands], dtype=bool)
        self.foot = np.array([footprint(c) for c in cands], dtype=float)
        self.billed = np.array([c.billed_gpus for c in cands], dtype=float)

    def live(self, h: Any, r: np.ndarray) -> np.ndarray:
        """Set each pooled column's share of its pool at relative speeds `r` (per column); per column,
        whether it is in its pool (its own cost then 0)."""
        out = np.zeros(self.n, dtype=bool)
        if not len(self.pos):
            return out
        rr = r[self.pos]
        turns = np.where(self.once, 1.0, np.maximum(1.0, np.floor(self.span / (self.planned / rr))))
        inside = (self.hours / rr < self.term) & ((self.foot < self.billed) | (turns > 1))  # reserved.pool_key
        for (row, y), x in zip(self.rows, np.where(inside, self.foot / turns, 0.0).tolist()):
            h.changeCoeff(row, y, x)
        out[self.pos] = inside
        return out

    def apply(self, h: Any, draw: tuple[Mapping[str, float], Any], budget: Any) -> None:
        """Set the nodes' costs (and, with `budget` = (row, basis), their budget coefficients) at a draw:
        `draw` is (rent factor, rent normals) per GPU id."""
        if not len(self.cols):
            return
        rent, rent_z = draw
        factor = self.price * self.offers.rates(np.array([rent.get(g, 1.0) for g in self.gpus]), rent_z)
        h.changeColsCost(len(self.cols), self.cols, self.pv * factor)
        if budget is not None:
            row, basis = budget
            spent = (self.pv if basis == "present_value" else self.cash) * factor
            for j, x in zip(self.cols.tolist(), spent.tolist()):
                h.changeCoeff(row, j, x)


def regraded(cands: Iterable[Any], old: Held | None, new: Held | None) -> bool:
    """Does a rented one of `cands` (candidates or layouts) draw its rate in another band with the GPUs
    held at once `new` than with `old`? Its band is its offer's and its grade's (gpu_count.held_rate)."""
    return any(
        held_grade(c.offer.offer, c, old) != held_grade(c.offer.offer, c, new)
        for c in cands
        if c.ownership == "rent" and c.offer is not None
    )
