"""A solved plan (Solution) and how one is read off a solved model (solve/model.py, through PuLP or the fast path)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from advisor.solve.costing import plan_costs
from advisor.solve.problem import Candidate

if TYPE_CHECKING:
    from advisor.data.catalog_prices import RentalOffer
    from advisor.solve.model import Model


@dataclass
class Solution:
    """A solve's answer: its status, cost and what it buys, rents and runs where."""

    status: str  # optimal | feasible | infeasible
    objective_usd: float | None
    assignment: list = field(default_factory=list)  # (Candidate, jobs) with jobs > 0, class order
    bought: dict = field(default_factory=dict)  # gpu -> GPUs bought
    servers: dict = field(default_factory=dict)  # gpu -> {server id: count}
    networked: dict = field(default_factory=dict)  # gpu -> networked servers
    cost_breakdown: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)
    mip_objective_usd: float | None = None  # the least cost, before idle GPUs are put to work
    serving: list = field(default_factory=list)  # (ServeCandidate, replicas) with replicas > 0
    cost_breakdown_pv: dict = field(default_factory=dict)  # present value, resale as residual_usd (solve/costing.py)
    residual_value_usd: float = 0.0  # nominal resale of the bought GPUs, each at its disposal month
    held: dict = field(default_factory=dict)  # gpu -> {holding period index: GPUs held until it}
    serving_idle: dict = field(
        default_factory=dict
    )  # (gpu, provider) -> (GPUs billed beyond the replicas', the layout)
    bridges: list = field(default_factory=list)  # (bridge layout, replicas): rented until bought GPUs arrive
    bridge_idle: dict = field(
        default_factory=dict
    )  # (class, hours to arrival, (type, provider)) -> (idle GPUs, layout)
    columns: dict = field(default_factory=dict, repr=False, compare=False)
    # column name -> value of the solved MILP before the polish (PuLP path only): the start a re-solve of the
    # same problem at other prices is handed (milp.solve's `start`)

    @property
    def paid_serving(self) -> list:
        """What serving pays for: its replicas, each idle billed GPU as a share of its layout, and the
        bridges rented until bought GPUs arrive (solve/serving_bridge.py) with their idle billed GPUs."""
        return paid_serving(self.serving, self.serving_idle) + paid_serving(self.bridges, self.bridge_idle)

    @property
    def feasible(self) -> bool:
        return self.objective_usd is not None

    @property
    def cash_usd(self) -> float:
        """The nominal cash paid over the horizon (purchases, servers, network, energy, hosting,
        rental; resale is not deducted): what a budget caps."""
        return float(sum(self.cost_breakdown.values())) if self.feasible else 0.0

    def cost(self, basis: str) -> float:
        """The plan's cost on a budget's basis: cash, or present value (the objective)."""
        return self.cash_usd if basis == "cash" else float(self.objective_usd or 0.0)

    @property
    def chosen(self) -> list[Candidate]:
        return [c for c, _ in self.assignment]

    def serving_owned(self, gid: str) -> int:
        """The bought GPUs of type `gid` that serve (training may borrow their lent off-peak hours)."""
        return sum(c.gpus * n for c, n in self.serving if c.gpu == gid and c.ownership == "buy")

    def rented_offers(self, gid: str) -> list[RentalOffer]:
        """The offers the plan rents GPU `gid` on (training's, serving's and the bridges'), by GPUs rented, most first."""
        rented = [(c.offer, c.count * n) for c, n in self.assignment if c.gpu == gid]
        rented += [
            (c.offer, c.gpus * n) for c, n in self.serving + self.bridges if c.gpu == gid and c.ownership == "rent"
        ]
        gpus: dict[tuple[str, str], tuple[float, RentalOffer]] = {}
        for opt, used in rented:
            if opt is not None:
                key = (opt.offer.pricing, opt.offer.provider)
                gpus[key] = (gpus.get(key, (0.0, opt.offer))[0] + used, opt.offer)
        return [o for _, (_, o) in sorted(gpus.items(), key=lambda kv: (-kv[1][0], kv[0]))]

    def gpu_types(self) -> set[str]:
        return {c.gpu for c in self.chosen} | {c.gpu for c, _ in self.serving}


def paid_serving(serving: list, idle: dict) -> list:
    """(layout, count) pairs whose run costs add up to serving's: the replicas, then per (GPU type,
    provider) an offer bills by the node its idle GPUs as idle / GPUs-per-layout of the layout they are paid as."""
    return list(serving) + [(c, n / c.gpus) for _, (n, c) in sorted(idle.items(), key=lambda kv: kv[0])]


def read_solution(
    model: Model, name: str, status: str, proven: bool, gap: float | None, mip_objective: float
) -> Solution:
    """The Solution a solved model holds (its variables' values), with its costs."""
    assignment = []
    for k, i, c in model.pairs():
        jobs = model.y[k, i].value() or 0.0
        if jobs > 1e-6:
            assignment.append((c, round(jobs) if model.integral else jobs))
    bought = {g: model.value(v) for g, v in model.N.items() if model.value(v) > 0}
    servers = {
        g: {sid: model.value(v) for (gg, sid), v in model.S.items() if gg == g and model.value(v) > 0} for g in bought
    }
    servers = {g: d for g, d in servers.items() if d}
    networked: dict[str, int] = {}  # servers joined by the network: those the widest bought job of a type spans
    for (g, n), v in model.z.items():
        if g in model.F and n > model.per_server(g) and model.value(v) > 0:
            networked[g] = max(networked.get(g, 0), math.ceil(n / model.per_server(g)))
    held = {
        g: {lv: model.value(v) for (gg, lv), v in model.H.items() if gg == g and model.value(v) > 0} for g in bought
    }
    serving, idle = model.serving_solution(), model.idle_solution()
    bridges, bridge_idle = model.bridge_solution()
    paid = paid_serving(serving, idle) + paid_serving(bridges, bridge_idle)
    costs = plan_costs(model, assignment, bought, servers, networked, held, paid)
    return Solution(
        "optimal" if proven else "feasible",
        sum(costs.pv.values()),
        assignment,
        bought,
        servers,
        networked,
        costs.nominal,
        {"name": name, "status": status, "proven_optimal": proven, "gap": gap},
        mip_objective,
        serving,
        costs.pv,
        costs.resale_usd,
        held,
        idle,
        bridges,
        bridge_idle,
    )
