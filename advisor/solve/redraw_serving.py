"""The serving columns of a redrawn model (solve/redraw.py) at one draw: each replica's rate at the
drawn speed and the replicas a fresh build would allow (with the rows that hold that bound), its cost
at its own offer's drawn rate (data/uncertainty.rate_dist), and each idle billed GPU at its type's
drawn rent; in the budget row too, on the budget's basis."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from advisor.data.uncertainty import rate_dist

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem


@dataclass(frozen=True)
class Draw:
    """One draw's factors by GPU type: relative speed, rent, the rent's standard normal, and a serving
    replica's throughput (None: the speed's)."""

    speed: Mapping[str, float]
    rent: Mapping[str, float]
    rent_z: Mapping[str, float] | None = None
    serve: Mapping[str, float] | None = None

    @property
    def served(self) -> Mapping[str, float]:
        """Real / estimated requests/s of a replica per GPU type (explain/draws.serve_speed)."""
        return self.speed if self.serve is None else self.serve


def set_serving(
    h: Any,
    m: Model,
    p: Problem,
    rows: list,
    idle_cols: Mapping[Any, int],
    d: Draw,
    budget: int | None,
    basis: str,
) -> None:
    """Set the serving rows' coefficients, bounds and costs of HiGHS model `h` at draw `d`."""
    for row, col, k, c, spare, servers in rows:  # a replica serves speed x its rate, at the drawn rent
        served = min(c.requests_per_s * d.served.get(c.gpu, 1.0), m.peak(k))  # Model.counted_rate at this speed
        h.changeCoeff(row, col, served)
        up = math.ceil(m.peak(k) / served) + int(p.serve_classes[k].spare)  # the replicas a fresh build allows
        h.changeColBounds(col, 0.0, float(up))
        if spare is not None:  # down >= served x uses: the row holds -served on the use binary; r <= up x uses
            h.changeCoeff(spare[0], spare[1], -served)
            if spare[2] is not None:
                h.changeCoeff(spare[2], spare[1], -float(up))
        if servers is not None:  # servers >= needed x r / up
            h.changeCoeff(servers[0], col, -servers[1] / up)
        factor = d.rent.get(c.gpu, 1.0) if c.ownership == "rent" else 1.0
        if c.ownership == "rent" and d.rent_z is not None and c.offer is not None:  # its own offer's band
            factor = rate_dist(c.offer.offer, c.order_gpus).factor_at(d.rent_z.get(c.gpu, 0.0))
        h.changeColCost(col, m.run_cost(c) * factor)
        if budget is not None:  # the budget counts the drawn rent too, on its basis
            h.changeCoeff(budget, col, m.run_cost(c, basis) * factor)
    for key, col in idle_cols.items():  # an idle billed GPU at the drawn rent of its GPU type
        h.changeColCost(col, m.idle_cost(key) * d.rent.get(key[0], 1.0))
        if budget is not None:
            h.changeCoeff(budget, col, m.idle_cost(key, basis) * d.rent.get(key[0], 1.0))
