"""How long bought GPUs are held: each owned GPU type is sold when its planned work ends or held to
the horizon, whichever costs less (issue 29, "ownership over time"). The MILP chooses among
holding periods: the work ends of the type's own jobs (each bought candidate's P80 finish from its
arrival, the end the deadline and horizon checks use; ends within WORK_END_STEP_MONTHS after
another period share it), a grid (the months of HOLD_MONTHS within the horizon) for the rest, and
the horizon itself. Without the work ends a job done at month 13.2 was held to month 18 (review16
#4: 4.8 months of hosting and support for nothing, $67,000 net on 64 A100). A GPU
held until T pays hosting and support (and energy, when a utilization is given) from its arrival
to T and is resold at its generation's used-market value at T (its age since the purchase),
discounted from T. So a 40-day job bought on 128
B200s is resold at month 2, not charged 36 months of hosting for a $0 resale.

Hosting here is per GPU: the GPU's own power and its share of its server's (the platform's
overhead over its slots), times the deployment's $/kW-month; servers are bought with their GPUs
and held as long."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from advisor.economics.costs import Costs
from advisor.economics.ownership import discount, stream_factor
from advisor.inputs.units import HOURS_PER_MONTH, HOURS_PER_YEAR

# holding periods offered, in months from today (the horizon is always one more)
HOLD_MONTHS = (1, 2, 3, 4, 6, 9, 12, 18, 24, 30, 36, 48, 60, 72, 84, 96, 108, 120)
# a work end is its own period unless another period ends within this many months after it: bounds
# the periods a type gets
WORK_END_STEP_MONTHS = 0.5
# a type whose bought candidates (each job at each count) end at more distinct times than this keeps
# the grid alone: the 200-job fleet (395-447 a type) took 2.2x the CPU with them merged (docs/limits.md)
MAX_WORK_ENDS = 64


@dataclass(frozen=True)
class Holding:
    """Holding one bought GPU from today until `hours` from today, then reselling it."""

    hours: float
    resale_fraction: float  # of its price, at that age (the generation's used-market curve)
    resale_pv_per_usd: float  # resale fraction x the discount to today: x price = the resale's present value
    hosting_cash_usd: float  # hosting while held, undiscounted ...
    hosting_pv_usd: float  # ... and in present value
    energy_cash_usd: float = 0.0  # energy while held when a utilization is given (else charged per job) ...
    energy_pv_usd: float = 0.0  # ... and in present value
    months_held: float = 0.0  # months from its arrival to its sale (a support contract's months) ...
    months_held_pv: float = 0.0  # ... each month's dollar discounted to today (an even stream)

    @property
    def cash_usd(self) -> float:
        """Cash paid while it is held (hosting and energy): resale is not cash in hand at decision time."""
        return self.hosting_cash_usd + self.energy_cash_usd

    @property
    def months(self) -> float:
        return self.hours / HOURS_PER_MONTH

    def pv_usd(self, price: float) -> float:
        """Present value of holding it, for a GPU bought at `price` (the purchase itself apart)."""
        return self.hosting_pv_usd + self.energy_pv_usd - price * self.resale_pv_per_usd

    def resale_usd(self, price: float) -> float:
        return price * self.resale_fraction


def hold_hours(costs: Costs, ends: Iterable[float] = ()) -> list[float]:
    """The holding periods a plan may choose, in hours from today: HOLD_MONTHS within the horizon,
    the work `ends` (hours from today) a period ending at most WORK_END_STEP_MONTHS after does not
    already hold, and the horizon."""
    horizon = costs.horizon_hours
    levels = {m * HOURS_PER_MONTH for m in HOLD_MONTHS if m * HOURS_PER_MONTH < horizon * (1 - 1e-9)}
    return sorted(levels | _work_ends(levels, ends, horizon) | {horizon})


def _work_ends(grid: set[float], ends: Iterable[float], horizon: float) -> set[float]:
    """The work ends kept as periods: from the earliest, each end no kept period or grid month holds
    within the step after it keeps the latest end within that step (so every end is held by a
    period at most the step later, with the fewest periods)."""
    step = WORK_END_STEP_MONTHS * HOURS_PER_MONTH
    todo = sorted({e for e in ends if 0 < e < horizon * (1 - 1e-9)})
    if len(todo) > MAX_WORK_ENDS:
        return set()
    kept: set[float] = set()
    for i, end in enumerate(todo):
        if any(end <= p <= end + step for p in grid | kept):
            continue
        kept.add(max(e for e in todo[i:] if e <= end + step))
    return kept


def holdings(
    costs: Costs,
    kw_per_gpu: float,
    resale: Callable[[float], float],
    start_hours: float = 0.0,
    ends: Iterable[float] = (),
) -> list[Holding]:
    """Holding one GPU drawing `kw_per_gpu` (with its share of its server) until each period ending
    after it arrives (`start_hours` from today; `ends`: its jobs' work ends, hold_hours): hosted from then, resold at its age since it was bought
    (the used market prices a part by the calendar, not by its hours of use; waiting for delivery ages
    it too), `resale` giving the fraction of its price it fetches after that many years."""
    hosting = costs.hosting_usd_per_kw_month / HOURS_PER_MONTH * costs.services_taxed  # with an unreclaimed VAT
    energy = 0.0 if costs.utilization is None else costs.utilization * costs.pue * costs.electricity_usd_per_kwh
    energy *= costs.services_taxed
    out = []
    for hours in hold_hours(costs, ends):  # energy at a given utilization is charged on the owned kW, not per job
        used = hours - start_hours
        if used <= 0 and hours < costs.horizon_hours:
            continue  # over before the GPUs arrive
        used = max(used, 0.0)
        years, used_years = hours / HOURS_PER_YEAR, used / HOURS_PER_YEAR
        fraction = max(0.0, resale(years))
        # paid from the arrival to the end: an even stream over [start, end], discounted to today
        flow = stream_factor(used_years, costs.discount_rate) * discount(
            start_hours / HOURS_PER_YEAR, costs.discount_rate
        )
        host, power = kw_per_gpu * hosting * used, kw_per_gpu * energy * used
        months = used / HOURS_PER_MONTH
        out.append(
            Holding(
                hours,
                fraction,
                fraction * discount(years, costs.discount_rate),
                host,
                host * flow,
                power,
                power * flow,
                months,
                months * flow,
            )
        )
    return out
