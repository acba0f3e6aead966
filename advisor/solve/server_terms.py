"""What a bought server costs while held: support on its price, hosting (and held energy) on its
own power, and its burn-in (review22a #5, review23b #1).

A bought GPU pays support, hosting and burn-in on itself alone (options.gpu_hardware, gpu_holdings).
Every server bought pays them whole here, on the servers bought, held as long as the type's GPUs
(a server is sold off with them; no resale is credited for it):

  a_s  what one server s costs a month held (support on its price, its kW hosted: server_rate)
  r_g  min_s a_s / slots_s, the least share per slot;  u_g  max_s a_s / f_s (f_s: slots_s where
       every platform of g comes filled, else 1: no optimal plan buys a server empty, each costs)
  m_p  the months held until period p (present value or cash);  m_g = min_p m_p
  A_g  sum_s a_s S[g,s], what type g's servers cost a month;  M_g = min(u_g cap_g, sum_s a_s ub(S[g,s])) >= A_g
  SX[g,p] in [0, M_g]   type g's servers' cost a month, held until p
  held_servers_g_p   SX[g,p] >= A_g - M_g (1 - K[g,p])
  cost               m_g A_g (on S[g,s])  +  sum_p (m_p - m_g) SX[g,p]  +  burn-in on S[g,s]

At a plan (K one-hot at p*) SX[g,p*] >= A_g and the others >= 0 (A_g <= M_g), and the costs are
>= 0, so the optimum has SX[g,p*] = A_g and the servers' cost is m_p* A_g, however many slots are
empty and whichever platform is bought. The rows are inequalities on S, K and SX, so HiGHS's
presolve still fixes the holding columns of a type no draw's column uses, as without servers charged
whole (fix25's equality sum_p SX = A_g - r_g sum_p H held N and H of every PCIe type:
serve-70b-datacenter's draws took 7x the CPU, in HiGHS's root reduced-cost fixing over those
columns' wide domains). None for a type of filled boards of one rate (u_g = r_g): r_g m_p a GPU on
H[g,p] is then the whole cost. Charging a server's share per slot on each GPU left its empty slots
unpaid: 4 L40S in a $45,000 8-GPU server were billed $104,810.59 PV against $114,392.49 in the
$45,000 4-GPU server of the same power, and a 4-GPU server quoted $40,000 lost to it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulp

from advisor.economics import bom, purchase_bill
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.rows import affine, safe

if TYPE_CHECKING:
    from advisor.solve.problem import Problem, ServerOption

Columns = dict[tuple[str, str], pulp.LpVariable]  # S[g,s] (solve/model.py)
Periods = dict[tuple[str, int], pulp.LpVariable]  # K[g,p]


@dataclass(frozen=True)
class ServerExtra:
    """One server's cost, whole: support per month held and overhead kW
    (hosted while held, and run at a given utilization), both with an unreclaimed services tax on
    use, and that kW through the burn-in soak."""

    support_usd_month: float
    kw: float
    burn_in_usd: float


def server_extra(problem: Problem, g: str, s: ServerOption) -> ServerExtra | None:
    """What one server s of type g costs while held, whole (its price's support, its own power),
    whatever its slots hold; None when the type has no sourced economics or the server costs nothing."""
    hw = problem.hardware.get(g)
    if hw is None or (s.price_usd <= 0.0 and s.overhead_kw <= 0.0):
        return None
    usd, kw = max(s.price_usd, 0.0), max(s.overhead_kw, 0.0)
    return ServerExtra(hw.support_rate_month * usd, kw, hw.burn_in_usd_per_kw * kw)


def kw_month_usd(problem: Problem) -> tuple[float, float]:
    """(hosting, energy) of one kW held a month, with an unreclaimed services tax: the energy only
    when a utilization charges owned power while held (solve/holding.py)."""
    c = problem.costs
    energy = 0.0 if c.utilization is None else c.utilization * c.pue * c.electricity_usd_per_kwh * HOURS_PER_MONTH
    return c.hosting_usd_per_kw_month * c.services_taxed, energy * c.services_taxed


def server_rate(problem: Problem, g: str, s: ServerOption) -> float:
    """What one server s of type g costs a month held, whole (support and its kW hosted)."""
    extra = server_extra(problem, g, s)
    return 0.0 if extra is None else extra.support_usd_month + extra.kw * sum(kw_month_usd(problem))


def _months(problem: Problem, g: str, level: int, basis: str) -> float:
    h = problem.holdings[g][level]
    return h.months_held_pv if basis == "present_value" else h.months_held


def slot_rates(problem: Problem, g: str) -> tuple[float, float]:
    """(least, most) a month of type g's servers per GPU they hold: the least per slot, and the most per
    GPU of a server as empty as a plan buys it (one card in a PCIe server, a board filled)."""
    opts = problem.servers.get(g, [])
    filled = all(s.filled for s in opts)  # (slots_g: then N = sum_s slots_s S[g,s], every slot a GPU)
    rates = [(server_rate(problem, g, s), s.slots) for s in opts]
    least = min((a / n for a, n in rates), default=0.0)
    most = max((a / (n if filled else 1) for a, n in rates), default=0.0)
    return least, most


def _whole(problem: Problem, g: str) -> bool:
    """Does type g need SX (its servers charged whole beyond r_g a GPU held)? Not for filled boards
    of one rate (u_g = r_g): there r_g a GPU held is every server's whole cost."""
    least, most = slot_rates(problem, g)
    return most > least * (1 + 1e-9)


def _least_months(problem: Problem, g: str, basis: str) -> float:
    return min((_months(problem, g, lv, basis) for lv in range(len(problem.holdings[g]))), default=0.0)


def server_holding(
    prob: pulp.LpProblem, problem: Problem, servers: Columns, periods: Periods, cap: dict[str, float]
) -> dict[tuple[str, int], pulp.LpVariable]:
    """SX[g,p] and its rows (above) for each type whose servers can cost more a month than their GPUs'
    least share per slot, on the model's S[g,s] (`servers`), K[g,p] (`periods`) and N[g]'s bounds (`cap`)."""
    out = {}
    for g in sorted({g for g, _ in servers}):
        if not _whole(problem, g):
            continue
        most = slot_rates(problem, g)[1]
        rates = [(servers[g, s.id], -server_rate(problem, g, s)) for s in problem.servers[g]]
        # M >= A_g = sum_s a_s S[g,s] at every plan that can be optimal: at its servers' bounds, and at
        # u_g N[g] <= u_g cap (no optimal plan buys an empty server). Bounded, as the exact P80 MILP's
        # big-M reads every cost column at its bound (explain/saa.py).
        top = min(most * cap[g], sum(-a * (v.upBound if v.upBound is not None else math.inf) for v, a in rates))
        for lv in range(len(problem.holdings[g])):
            x = out[g, lv] = prob.add_variable(f"SX_{safe(g)}_{lv}", lowBound=0, upBound=top)
            k = periods[g, lv]
            prob += affine([(x, 1.0), *rates, (k, -top)]) >= -top, f"held_servers_{safe(g)}_{lv}"
    return out


def slot_share_cost(problem: Problem, g: str, level: int, basis: str) -> float:
    """The servers' least share per slot r_g of one GPU of type g held until `level`, part of H[g,p]'s
    coefficient beside the GPU's own holding for a type without SX (Model.hold_cost; the fast path
    reprices H with both); 0 for a type whose servers SX charges whole."""
    if _whole(problem, g):
        return 0.0
    return slot_rates(problem, g)[0] * _months(problem, g, level, basis)


def server_hold_terms(
    problem: Problem, x: dict[tuple[str, int], pulp.LpVariable], servers: Columns, gpus_held: Periods, basis: str
) -> list[tuple[pulp.LpVariable, float]]:
    """The model's terms: (H[g,p], the least share per slot x months) where no SX, else (S[g,s], a_s x
    the least months held) and (SX[g,p], the months beyond those); and (S[g,s], its burn-in)."""
    out = []
    for g in sorted({g for g, _ in servers}):
        least = _least_months(problem, g, basis)
        for lv in range(len(problem.holdings[g])):
            if (g, lv) in x:
                out.append((x[g, lv], _months(problem, g, lv, basis) - least))
            elif share := slot_share_cost(problem, g, lv, basis):
                out.append((gpus_held[g, lv], share))
        if any((g, lv) in x for lv in range(len(problem.holdings[g]))):
            out += [(servers[g, s.id], server_rate(problem, g, s) * least) for s in problem.servers[g]]
    for (g, sid), v in servers.items():
        extra = server_extra(problem, g, next(o for o in problem.servers[g] if o.id == sid))
        if extra is not None and extra.burn_in_usd:
            out.append((v, extra.burn_in_usd))
    return out


def servers_held_value(
    problem: Problem,
    x: dict[tuple[str, int], pulp.LpVariable],
    servers: Columns,
    held: tuple[Periods, Periods],
    basis: str,
) -> float:
    """What server_hold_terms charge at a solved model's values, with each SX[g,p] at what it stands
    for (A_g at the period held, 0 at the others), not at its value: SX is only bounded below."""
    gpus_held, periods = held
    key_of = {id(col): k for k, col in x.items()}  # (a scan of every SX per term was terms x SX: review27b)
    total = 0.0
    for v, c in server_hold_terms(problem, x, servers, gpus_held, basis):
        key = key_of.get(id(v))
        if key is None:
            total += c * (v.value() or 0.0)
        elif (periods[key].value() or 0.0) > 0.5:
            g = key[0]
            total += c * sum(server_rate(problem, g, s) * (servers[g, s.id].value() or 0.0) for s in problem.servers[g])
    return total


def server_lines(
    problem: Problem, servers: dict[str, dict[str, int]], held: dict[str, dict[int, int]], basis: str
) -> dict[str, float]:
    """A solved plan's servers' cost, whole, by cost line (support,
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
    period -> GPUs), each server whole, its slots filled or not (at their price: an unreclaimed VAT
    has its own line)."""
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
            note = f"its own {extra.kw * 1000:.0f} W beside its GPUs', {k.burn_in_days * 24:g} h"
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
                    f"server-months x {rate:.4f} x ${base:,.0f} (its price, {s.slots} slots filled or not); "
                    f"{k.support.note}",
                    kind="support",
                )
            )
    return out
