"""A solved plan's costs, nominal and present value, from the same coefficients the MILP charged
(kept apart from the model so that it stays the document's algebra).

Nominal (`cost_breakdown`, the keys of the JSON contract): the cash paid over the horizon,
undiscounted; resale is reported apart as `residual_value_usd` (it is not cash in hand when the
decision is made). Present value (`cost_breakdown_pv`): purchases at t = 0, streams (energy,
hosting, rent) discounted as paid evenly over their duration, and each resale at its disposal
month as a negative `residual_usd`; its sum is what the MILP minimises."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.solve.model import Model


@dataclass
class Costs:
    """A plan's cost lines: nominal (cash) and present value, and the nominal resale."""

    nominal: dict[str, float] = field(default_factory=dict)
    pv: dict[str, float] = field(default_factory=dict)
    resale_usd: float = 0.0


def plan_costs(m: Model, assignment: list, bought: dict[str, int], servers: dict[str, dict[str, int]],
               networked: dict[str, int], held: dict[str, dict[int, int]], serving: list) -> Costs:
    """The cost lines of a solved model's plan, at its scenario's prices."""
    p = m.problem
    purchase = sum(m.price(g) * n for g, n in bought.items())
    server_usd = (sum(s.price_usd * servers.get(g, {}).get(s.id, 0) for g in bought for s in p.servers.get(g, []))
                  + sum((m.network_usd(g) or 0.0) * n for g, n in networked.items()))
    holds = [(m.price(g), p.holdings[g][lv], k) for g, d in held.items() for lv, k in d.items()]
    jobs = list(assignment) + list(serving)
    out = Costs()
    out.nominal = {
        "purchase_usd": float(purchase),
        "servers_usd": float(server_usd),
        "energy_usd": float(sum(m.run_cost(c, "cash") * n for c, n in jobs if c.ownership == "buy")
                            + sum(h.energy_cash_usd * k for _, h, k in holds)),
        "hosting_usd": float(sum(h.hosting_cash_usd * k for _, h, k in holds)),
        "rental_usd": float(sum(m.run_cost(c, "cash") * n for c, n in jobs if c.ownership == "rent")),
    }
    out.pv = {
        "purchase_usd": float(purchase),
        "residual_usd": float(-sum(price * h.resale_pv_per_usd * k for price, h, k in holds)),
        "servers_usd": float(server_usd),
        "energy_usd": float(sum(m.run_cost(c) * n for c, n in jobs if c.ownership == "buy")
                            + sum(h.energy_pv_usd * k for _, h, k in holds)),
        "hosting_usd": float(sum(h.hosting_pv_usd * k for _, h, k in holds)),
        "rental_usd": float(sum(m.run_cost(c) * n for c, n in jobs if c.ownership == "rent")),
    }
    out.resale_usd = float(sum(h.resale_usd(price) * k for price, h, k in holds))
    return out
