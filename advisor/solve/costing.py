"""A solved plan's costs, nominal and present value, from the same coefficients the MILP charged
(kept apart from the model so that it stays the document's algebra).

Nominal (`cost_breakdown`, the keys of the JSON contract): the cash paid over the horizon,
undiscounted (`bridge_usd`, in plans that pay one: the rent of the replicas that serve until bought
GPUs arrive); resale is reported apart as `residual_value_usd` (it is not cash in hand when the
decision is made). Present value (`cost_breakdown_pv`): purchases at t = 0, streams (energy,
hosting, rent) discounted as paid evenly over their duration, and each resale at its disposal
month as a negative `residual_usd`; its sum is what the MILP minimises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from advisor.contract.costs import SERVICES
from advisor.economics import bom
from advisor.solve.reserved import paid_training
from advisor.solve.server_terms import server_lines

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Problem


@dataclass
class Costs:
    """A plan's cost lines: nominal (cash) and present value, and the nominal resale."""

    nominal: dict[str, float] = field(default_factory=dict)
    pv: dict[str, float] = field(default_factory=dict)
    resale_usd: float = 0.0


def plan_costs(
    m: Model,
    assignment: list,
    bought: dict[str, int],
    servers: dict[str, dict[str, int]],
    networked: dict[str, int],
    held: dict[str, dict[int, int]],
    serving: list,
) -> Costs:
    """The cost lines of a solved model's plan, at its scenario's prices: the MILP's own
    coefficients (Model.buy_cost, server_cost, network_usd, hold_cost), split by what they pay for."""
    p = m.problem
    tax = {g: p.hardware[g].tax_rate if g in p.hardware else 0.0 for g in bought}
    burn = {g: p.hardware[g].burn_in_usd if g in p.hardware else 0.0 for g in bought}
    gpus = {g: m.price(g) * n for g, n in bought.items()}
    boxes = {g: sum(s.price_usd * servers.get(g, {}).get(s.id, 0) for s in p.servers.get(g, [])) for g in bought}
    network = {
        g: (m.network_usd(g, w * m.per_server(g)) or 0.0) / (1.0 + tax.get(g, 0.0))
        for g, w in networked.items()
        if g in bought
    }
    storage = (p.storage.need.usd or 0.0) if p.storage is not None else 0.0  # every plan (Model.storage_usd)
    store_tax = (p.storage.usd - storage) if storage and p.storage is not None else 0.0
    taxed = sum(tax[g] * (gpus[g] + boxes[g] + network.get(g, 0.0)) for g in bought) + store_tax
    holds = [(g, p.holdings[g][lv], k) for g, d in held.items() for lv, k in d.items()]
    bridges = [(c, n) for c, n in serving if getattr(c, "bridges", None) is not None]  # solve/serving_bridge.py
    jobs = paid_training(p, assignment) + [(c, n) for c, n in serving if getattr(c, "bridges", None) is None]
    upfront = {
        "purchase_usd": sum(gpus.values()),
        "servers_usd": sum(boxes.values()),
        "network_usd": sum(network.values()),
        "storage_usd": storage,
        "tax_usd": taxed,
        "burn_in_usd": sum(burn[g] * n for g, n in bought.items()),
    }
    out = Costs()
    out.nominal = {
        **upfront,
        "support_usd": sum(m.support(g) * h.months_held * k for g, h, k in holds),
        "energy_usd": (
            sum(m.run_cost(c, "cash") * n for c, n in jobs if c.ownership == "buy")
            + sum(h.energy_cash_usd * k for _, h, k in holds)
        ),
        "hosting_usd": sum(h.hosting_cash_usd * k for _, h, k in holds),
        "rental_usd": sum(m.run_cost(c, "cash") * n for c, n in jobs if c.ownership == "rent"),
    }
    if bridges:  # rent until bought serving GPUs arrive: a line of its own, in plans that pay one
        out.nominal["bridge_usd"] = sum(m.run_cost(c, "cash") * n for c, n in bridges)
    out.pv = {
        **upfront,
        "residual_usd": -sum(m.price(g) * h.resale_pv_per_usd * k for g, h, k in holds),
        "support_usd": sum(m.support(g) * h.months_held_pv * k for g, h, k in holds),
        "energy_usd": (
            sum(m.run_cost(c) * n for c, n in jobs if c.ownership == "buy")
            + sum(h.energy_pv_usd * k for _, h, k in holds)
        ),
        "hosting_usd": sum(h.hosting_pv_usd * k for _, h, k in holds),
        "rental_usd": sum(m.run_cost(c) * n for c, n in jobs if c.ownership == "rent"),
    }
    if bridges:
        out.pv["bridge_usd"] = sum(m.run_cost(c) * n for c, n in bridges)
    for lines, basis in ((out.nominal, "cash"), (out.pv, "present_value")):  # each server bought, whole
        for key, usd in server_lines(p, servers, held, basis).items():
            lines[key] += usd
    out.nominal = _services_taxed_apart({k: float(v) for k, v in out.nominal.items()}, p.costs.services_taxed)
    out.pv = _services_taxed_apart({k: float(v) for k, v in out.pv.items()}, p.costs.services_taxed)
    out.resale_usd = float(sum(h.resale_usd(m.price(g)) * k for g, h, k in holds))
    return out


def _services_taxed_apart(lines: dict[str, float], taxed: float) -> dict[str, float]:
    """The service lines (electricity, support, hosting, rent; the MILP charges them with a VAT the buyer
    cannot reclaim, `taxed` per dollar) at their price, and that tax on a line of its own
    (`services_tax_usd`): the lines still add up to what the MILP charged. Unchanged when none is counted."""
    if taxed == 1.0:
        return lines
    out = {k: (v / taxed if k in SERVICES else v) for k, v in lines.items()}
    out["services_tax_usd"] = sum(lines[k] - out[k] for k in SERVICES if k in lines)
    return out


def services_tax_lines(problem: Problem, cost_breakdown: dict[str, float]) -> list[dict]:
    """The VAT on rent, support, hosting and electricity a buyer that cannot reclaim it pays (economics/
    costs.services_tax), on a line of its own: the lines above are at their prices."""
    costs, tax = problem.costs, cost_breakdown.get("services_tax_usd") or 0.0
    if not tax:
        return []
    region = problem.workload.deployment.region
    return [
        bom.line(
            f"tax on rent and services ({region}): VAT, not reclaimable",
            tax / costs.services_tax_rate,  # the base (solve/ledger.py prints it as its service lines add up)
            costs.services_tax_rate,
            costs.services_tax_source,
            costs.services_tax_confidence,
            f"{costs.services_tax_rate:.2%} on the rent, support, hosting and electricity above: charged by the "
            "provider, or self-assessed under the reverse charge, and not reclaimed (finance.tax_recoverable: false)",
            kind="tax",
        )
    ]
