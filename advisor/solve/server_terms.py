"""What a bought server costs beyond the least share per slot its GPUs are charged (review22a #5).

Every bought GPU pays support, hosting and burn-in on the least server share per slot among its
type's platforms (options.gpu_hardware, gpu_holdings): the holding period is chosen per type, so
that much is linear in the GPUs held. A platform dearer per slot (an 8-GPU PCIe server at $5,625
and 45 W a slot beside a workstation at $1,750 and 31 W) pays the rest for its whole slots here, on
the servers bought, held as long as the type's GPUs (they are sold together):

  SH[g,s,p]          servers of platform s for type g held until period p (continuous: S is integral)
  hold_server_g_s    sum_p SH[g,s,p] = S[g,s]
  hold_server_g_s_p  SH[g,s,p] <= U_s K[g,p]        (K[g,p]: the type is held until p, solve/model.py)

so a full server is charged its own price and power over the months held, whichever platform is
the least. Without it, 32 RTX 6000 Ada serving 70B in four 8-GPU servers were charged the
workstation's share: $529,669.91 PV against $578,047.36 with no workstation offered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulp

from advisor.economics import bom, purchase_bill
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.options import per_slot_kw
from advisor.solve.rows import safe

if TYPE_CHECKING:
    from advisor.solve.problem import Problem, ServerOption

Columns = dict[tuple[str, str], pulp.LpVariable]  # S[g,s] (solve/model.py)
Periods = dict[tuple[str, int], pulp.LpVariable]  # K[g,p]

SHARE_TOLERANCE = 1e-9  # a platform whose share per slot is the least (to rounding) pays nothing here


@dataclass(frozen=True)
class ServerExtra:
    """One server's cost beyond its slots' least share: support per month held and overhead kW
    (hosted while held, and run at a given utilization), both with an unreclaimed services tax on
    use, and that kW through the burn-in soak."""

    support_usd_month: float
    kw: float
    burn_in_usd: float


def server_extra(problem: Problem, g: str, s: ServerOption) -> ServerExtra | None:
    """What one server s of type g costs beyond the least share per slot its GPUs pay; None when
    it is the least (or the type has no sourced economics)."""
    hw = problem.hardware.get(g)
    if hw is None:
        return None
    usd = s.price_usd - s.slots * hw.server_share_usd
    kw = s.overhead_kw - s.slots * per_slot_kw(problem.servers.get(g, []))
    if usd <= SHARE_TOLERANCE and kw <= SHARE_TOLERANCE:
        return None
    return ServerExtra(hw.support_rate_month * max(usd, 0.0), max(kw, 0.0), hw.burn_in_usd_per_kw * max(kw, 0.0))


def kw_month_usd(problem: Problem) -> tuple[float, float]:
    """(hosting, energy) of one kW held a month, with an unreclaimed services tax: the energy only
    when a utilization charges owned power while held (solve/holding.py)."""
    c = problem.costs
    energy = 0.0 if c.utilization is None else c.utilization * c.pue * c.electricity_usd_per_kwh * HOURS_PER_MONTH
    return c.hosting_usd_per_kw_month * c.services_taxed, energy * c.services_taxed


def server_hold_cost(problem: Problem, g: str, s: ServerOption, level: int, basis: str = "present_value") -> float:
    """Holding one server s of type g until period `level`, beyond its slots' least share."""
    extra = server_extra(problem, g, s)
    if extra is None:
        return 0.0
    h = problem.holdings[g][level]
    months = h.months_held_pv if basis == "present_value" else h.months_held
    return (extra.support_usd_month + extra.kw * sum(kw_month_usd(problem))) * months


def server_holding(
    prob: pulp.LpProblem, problem: Problem, servers: Columns, held: Periods, cap: dict[str, float]
) -> dict[tuple[str, str, int], pulp.LpVariable]:
    """SH[g,s,p] for each platform dearer per slot than its type's least, and its rows, on the model's
    S[g,s] (`servers`), K[g,p] (`held`) and the bounds on N[g] (`cap`)."""
    out = {}
    for g, sid in servers:
        s = next(o for o in problem.servers[g] if o.id == sid)
        if server_extra(problem, g, s) is None:
            continue
        bound = servers[g, sid].upBound
        most = bound if bound is not None else cap[g]
        for lv in range(len(problem.holdings[g])):
            v = out[g, sid, lv] = prob.add_variable(f"SH_{safe(g)}_{safe(sid)}_{lv}", lowBound=0, upBound=most)
            prob += v - most * held[g, lv] <= 0, f"hold_server_{safe(g)}_{safe(sid)}_{lv}"
        prob += (
            pulp.lpSum(out[g, sid, lv] for lv in range(len(problem.holdings[g]))) - servers[g, sid] == 0,
            f"hold_server_{safe(g)}_{safe(sid)}",
        )
    return out


def server_hold_terms(
    problem: Problem, sh: dict[tuple[str, str, int], pulp.LpVariable], servers: Columns, basis: str
) -> list[tuple[pulp.LpVariable, float]]:
    """(SH[g,s,p], its holding cost) and (S[g,s], its burn-in beyond the least share): the model's terms."""
    out = []
    for (g, sid, lv), v in sh.items():
        s = next(o for o in problem.servers[g] if o.id == sid)
        out.append((v, server_hold_cost(problem, g, s, lv, basis)))
    for (g, sid), v in servers.items():
        extra = server_extra(problem, g, next(o for o in problem.servers[g] if o.id == sid))
        if extra is not None and extra.burn_in_usd:
            out.append((v, extra.burn_in_usd))
    return out


def server_lines(
    problem: Problem, servers: dict[str, dict[str, int]], held: dict[str, dict[int, int]], basis: str
) -> dict[str, float]:
    """A solved plan's servers' cost beyond their slots' least share, by cost line (support,
    hosting, energy, burn-in): each server held as long as its type's GPUs."""
    out = dict.fromkeys(("support_usd", "hosting_usd", "energy_usd", "burn_in_usd"), 0.0)
    host, energy = kw_month_usd(problem)
    for g, boxes in servers.items():
        levels = [lv for lv, k in held.get(g, {}).items() if k > 0]
        for s in problem.servers.get(g, []):
            extra, n = server_extra(problem, g, s), boxes.get(s.id, 0)
            if extra is None or not n:
                continue
            out["burn_in_usd"] += extra.burn_in_usd * n
            for lv in levels[:1]:  # a type's GPUs are held until one period (hold_one_g)
                h = problem.holdings[g][lv]
                months = (h.months_held_pv if basis == "present_value" else h.months_held) * n
                out["support_usd"] += extra.support_usd_month * months
                out["hosting_usd"] += extra.kw * host * months
                out["energy_usd"] += extra.kw * energy * months
    return out


def server_bill_lines(problem: Problem, g: str, servers: dict[str, int], held: dict[int, int]) -> list[dict]:
    """The bill's burn-in and support lines of type g's `servers` (id -> count; `held`: its holding
    period -> GPUs) dearer per slot than the least, for what they cost beyond the share their slots
    pay on the GPUs' own lines (at their price: an unreclaimed VAT has its own line)."""
    cat, taxed, hw = problem.catalog, problem.costs.services_taxed, problem.hardware.get(g)
    out: list[dict] = []
    econ = cat.economics
    if econ is None or hw is None:
        return out
    k = purchase_bill.bought_gpu_coefficients(cat, g, problem.workload.deployment.region, problem.costs)
    until = [problem.holdings[g][lv] for lv, n in held.items() if n > 0][:1]
    for s in problem.servers.get(g, []):
        extra, n = server_extra(problem, g, s), servers.get(s.id, 0)
        if extra is None or not n:
            continue
        name = cat.servers[s.id].name
        if extra.burn_in_usd:
            note = f"its {extra.kw * 1000:.0f} W over {s.slots} x the least share a slot, {k.burn_in_days * 24:g} h"
            out.append(
                bom.line(
                    f"burn-in of {name}",
                    n,
                    extra.burn_in_usd / taxed,
                    k.burn_in_energy.source,
                    k.burn_in_energy.confidence,
                    note,
                    kind="burn_in",
                )
            )
        if until and extra.support_usd_month:
            base = extra.support_usd_month / hw.support_rate_month
            rate = hw.support_rate_month / taxed
            out.append(
                bom.line(
                    f"support contract for {name}, {until[0].months_held:.3g} months in service",
                    n * until[0].months_held,
                    rate * base,
                    k.support.source,
                    k.support.confidence,
                    f"server-months x {rate:.4f} x ${base:,.0f} (its price over {s.slots} x the least share a slot, "
                    f"${hw.server_share_usd:,.0f}, on its GPUs' line); {k.support.note}",
                    kind="support",
                )
            )
    return out
