"""A solved plan's costs, nominal and present value, from the same coefficients the MILP charged
(kept apart from milp.py so that the model stays the document's algebra).

Nominal (`cost_breakdown`, the keys of the JSON contract): what is paid, undiscounted; resale is
reported apart as `residual_value_usd`. Present value (`cost_breakdown_pv`): purchases at t = 0,
streams (energy, hosting, rent) discounted as paid evenly over their duration, and the resale at
the horizon's end as a negative `residual_usd`; its sum is what the MILP minimises."""
from __future__ import annotations

from collections.abc import Callable


def breakdowns(problem, sc, assignment: list, bought: dict, servers: dict, networked: dict,
               run_cost: Callable) -> tuple[dict, dict, float]:
    """(nominal breakdown, PV breakdown, nominal resale value at the horizon's end)."""
    p = problem
    opts = {g: {s.id: s for s in p.servers.get(g, [])} for g in bought}
    server_kw = sum(opts[g][sid].overhead_kw * n for g, d in servers.items() for sid, n in d.items())
    kw = sum(p.gpu_kw[g] * n for g, n in bought.items()) + server_kw
    purchase = sum(p.unit_price[g] * sc.buy_price(g) * n for g, n in bought.items())
    net = sum(p.unit_cost.get(g, p.unit_price[g]) * sc.buy_price(g) * n for g, n in bought.items())
    server_usd = (sum(opts[g][sid].price_usd * n for g, d in servers.items() for sid, n in d.items())
                  + sum(max(s.network_usd or 0.0 for s in p.servers[g]) * n for g, n in networked.items()))

    def nominal(c) -> float:
        base = c.run_cost_nominal if c.run_cost_nominal is not None else c.run_cost_usd
        return base * (sc.rent_price(c.gpu) if c.ownership == "rent" else 1.0)

    costs = p.costs
    nominal_bd = {
        "purchase_usd": float(purchase),
        "servers_usd": float(server_usd),
        "energy_usd": float(sum(nominal(c) * n for c, n in assignment if c.ownership == "buy")
                            + costs.energy_per_kw * kw),
        "hosting_usd": float(costs.hosting_per_kw * kw),
        "rental_usd": float(sum(nominal(c) * n for c, n in assignment if c.ownership == "rent")),
    }
    factor = costs.horizon_factor
    pv_bd = {
        "purchase_usd": float(purchase),
        "residual_usd": float(net - purchase),
        "servers_usd": float(server_usd),
        "energy_usd": float(sum(run_cost(c) * n for c, n in assignment if c.ownership == "buy")
                            + costs.energy_per_kw * kw * factor),
        "hosting_usd": float(costs.hosting_per_kw * kw * factor),
        "rental_usd": float(sum(run_cost(c) * n for c, n in assignment if c.ownership == "rent")),
    }
    resale = sum(p.unit_price[g] * sc.buy_price(g) * n * p.residual[g].fraction
                 for g, n in bought.items() if g in p.residual)
    return nominal_bd, pv_bd, float(resale)
