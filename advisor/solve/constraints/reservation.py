"""reservation: the jobs that share a reservation's nodes fit in the nodes rented for its term.

  reserved_o   sum of the pooled jobs' shares of the nodes  <=  node GPUs(o) x R[o]

(solve/reserved.py: the pools, what a job takes of them, and R[o]'s cost in the objective.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.solve.constraints.base import Family
from advisor.solve.reserved import pool_rows

if TYPE_CHECKING:
    from advisor.solve.model import Model


class Reservation(Family):
    name = "reservation"

    def rows(self, m: Model) -> None:
        pool_rows(m)
