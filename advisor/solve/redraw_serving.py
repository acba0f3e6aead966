"""The serving columns of a redrawn model (solve/redraw.py) at one draw: each replica's rate at the
drawn speed and the replicas a fresh build would allow (with the rows that hold that bound), its cost
at its own offer's drawn rate (Draw.rent_of: graded as the plan's rows grade it), and each idle billed GPU
at its layout's; in the budget row too, on the budget's basis."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from advisor.solve.constraints.gpu_count import Held, held_rate

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem


@dataclass(frozen=True)
class Draw:
    """One draw's factors by GPU type: relative speed, rent, the rent's standard normal, and a serving
    replica's throughput (None: the speed's); `held`: the GPUs the plan judged holds at once per (GPU,
    provider), gpu_count.held_counts, which each rate is graded at."""

    speed: Mapping[str, float]
    rent: Mapping[str, float]
    rent_z: Mapping[str, float] | None = None
    serve: Mapping[str, float] | None = None
    held: Held | None = None

    def rent_of(self, c: Any) -> float:
        """Layout c's rate factor: 1 bought; rented, its own offer's band at its type's rent normal, at c's
        order and the GPUs held at once on its provider (gpu_count.held_rate), else its type's drawn rent."""
        if c.ownership != "rent":
            return 1.0
        if self.rent_z is not None and c.offer is not None:
            return held_rate(c.offer.offer, c, self.held).factor_at(self.rent_z.get(c.gpu, 0.0))
        return self.rent.get(c.gpu, 1.0)

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
        factor = d.rent_of(c)
        h.changeColCost(col, m.run_cost(c) * factor)
        if budget is not None:  # the budget counts the drawn rent too, on its basis
            h.changeCoeff(budget, col, m.run_cost(c, basis) * factor)
    for key, col in idle_cols.items():  # an idle billed GPU at its layout's drawn rate, as a replica's
        factor = d.rent_of(m.idle_layout[key])
        h.changeColCost(col, m.idle_cost(key) * factor)
        if budget is not None:
            h.changeCoeff(budget, col, m.idle_cost(key, basis) * factor)
