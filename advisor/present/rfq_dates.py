"""The RFQ's dates: when each item must be working, and for hardware bought the latest day to order it.

A bought GPU works only after its order's lead time (the last of its parts: GPU, server, network) and
then the burn-in (`purchase[].ready_days` = lead time + burn-in, as the plan counted it against every
deadline), so its order-by date is the day it must be running less `ready_days`, not less the lead
time alone; a job that waits its turn on the item's GPUs behind jobs due first (its deadline row's
finish) counts that wait too. Bought serving GPUs are ordered on the plan's date: the stand-in (bridge) rental the plan
pays is sized for that order. A server arrives with the GPUs it holds: the same running-by day, and
its own order-by day from the server's lead time in the catalog. Renders a typed Plan only.
"""

from __future__ import annotations

import datetime as dt

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.costs import PurchaseItem, ServerItem
from advisor.durations import DAYS_FROM_HOURS, in_days
from advisor.errors import InputError
from advisor.present.words import usd


def on_day(plan: Plan, days: float) -> dt.date:
    """The date `days` after the plan's date, rounded down to a whole day (the latest safe date); past the
    calendar's last day (a plan as of 9999-12-31) an InputError naming --as-of."""
    try:
        return dt.date.fromisoformat(plan.as_of) + dt.timedelta(days=days)
    except OverflowError:
        raise InputError(
            f"--as-of {plan.as_of}: the RFQ's dates ({days:,.1f} days after it) are past the calendar's last day "
            f"({dt.date.max.isoformat()}); give an earlier date",
            field="as_of",
        ) from None


def burn_in_days(item: PurchaseItem) -> float:
    """The days between delivery and work: ready_days less the lead time (0 for a workload's own
    quote, which covers both)."""
    return max(0.0, (item.ready_days or 0.0) - (item.lead_time_days or 0.0))


def _training_start(plan: Plan, ctx: PlanContext, item: PurchaseItem) -> tuple[float, str] | None:
    """(the latest day the item's jobs can start and keep every deadline, why), None with no deadline."""
    starts = []
    for j in plan.jobs:
        info = ctx.job(j.name)
        if j.gpu != item.gpu or j.ownership != item.ownership or info is None or not info.deadline_hours:
            continue
        run = j.wall_days_planned if j.wall_days_planned is not None else j.wall_days
        run *= 24 / j.hours_a_day if j.hours_a_day else 1.0  # in lent off-peak hours: its nights
        after = max(run, _after_ready(plan, item, j.name, info.deadline_hours / 24) or 0.0)  # its turn, if any
        starts.append((info.deadline_hours / 24 - after, j.name, run, info.deadline_hours / 24, after))
    if not starts:
        return None
    slack, name, run, due, after = min(starts)
    verb = "running" if item.ownership == "buy" else "available"  # bought: delivered burn-in days before
    turn = f", after {in_days(after - run)} for the jobs due before it" if after > run + 0.05 else ""
    if 24 * due < DAYS_FROM_HOURS:  # due within two days: its times in hours or minutes, not 'day 0.0291667'
        when = f"at most {in_days(max(0.0, slack))} after day 0 begins"
        due_on, runs = f"{in_days(due)} after it", in_days(run)
    else:
        when, due_on, runs = f"by day {max(0.0, slack):.1f}", f"on day {due:g}", f"{run:.1f} days"
    return max(0.0, slack), (
        f"{verb} {when}: {name} is due {due_on} and runs {runs} at the workload's confidence{turn} "
        f"(day 0 = {plan.as_of})"
    )


def _after_ready(plan: Plan, item: PurchaseItem, job: str, due: float) -> float | None:
    """Days from a bought item's ready day to the job's end, as its deadline row counts it (waiting
    its turn on the item's GPUs behind jobs due first: solve/constraints/at_once.py), None if unknown."""
    row = next((b for b in plan.binding if b.constraint == f"deadline:{job}"), None)
    if item.ownership != "buy" or item.ready_days is None or row is None or row.slack is None:
        return None
    return due - row.slack - item.ready_days


def _serves(plan: Plan, item: PurchaseItem) -> bool:
    return item.ownership == "buy" and any(s.gpu == item.gpu and s.ownership == "buy" for s in plan.serving)


def _order_basis(plan: Plan, ctx: PlanContext, item: PurchaseItem, running: float) -> str:
    """'; with a 70-day lead time and a 3-day burn-in (ready 73 days after the order), order by
    2027-03-20' for a bought item that must be running by day `running`."""
    lead, ready = item.lead_time_days, item.ready_days
    if ready is None:
        return ""
    if lead is None:
        delivered = on_day(plan, running - ready)
        return f"; the catalog has no lead time for it: the quote must deliver by {delivered.isoformat()}"
    if ctx.workload.deployment.lead_time_days is not None:
        if not ready:
            return ""  # in hand (deployment.lead_time_days: 0)
        how = f"with the workload's {lead:g}-day lead time (delivery and burn-in, deployment.lead_time_days)"
    else:
        how = (
            f"with a {lead:g}-day lead time and a {burn_in_days(item):g}-day burn-in (working {ready:g} days "
            "after the order)"
        )
    order = running - ready
    when = on_day(plan, max(0.0, order)).isoformat()
    burn = burn_in_days(item) if ctx.workload.deployment.lead_time_days is None else 0.0
    deliver = f", delivered by {on_day(plan, max(0.0, running - burn)).isoformat()}" if burn else ""
    return f"; {how}{deliver}, order by {when}" + (" (at once: the plan counts on it)" if order <= 0 else "")


def _delay_cost(plan: Plan, gpu: str) -> str:
    """What each day the bought serving GPUs arrive later costs: the bridge the plan rents until they
    arrive, a day longer (its billed GPU-hours x rate per hour of its term); '' without a bridge."""
    per_hour, names = 0.0, []
    for b in plan.purchase:
        if b.use != "bridge" or gpu not in (b.bridges or "").split(", ") or not b.hours:
            continue
        per_hour += (b.billed_gpu_hours or b.gpu_hours or 0.0) * (b.unit_price_usd or 0.0) / b.hours
        names.append(f"{b.billed_gpus or b.count:,} {b.gpu} at {b.provider}")
    if not per_hour:
        return ""
    return (
        f"; each day of delay keeps the stand-in rental ({', '.join(names)}) a day longer: about "
        f"{usd(per_hour * 24)} a day"
    )


def running_by(plan: Plan, ctx: PlanContext, item: PurchaseItem) -> tuple[float, str] | None:
    """(the latest day the item must be working, counted from the plan's date, why); None without a
    deadline. Bought serving GPUs: day ready_days of an order on the plan's date (the bridge the plan
    rents is sized for that order); training: the earliest over the item's jobs of deadline - run time
    at the workload's confidence."""
    if _serves(plan, item) and item.ready_days is not None:
        ready = item.ready_days
        return ready, (
            f"serving by day {ready:g} ({on_day(plan, ready).isoformat()}) when ordered on the plan's date, as "
            f"the plan assumes (day 0 = {plan.as_of})"
        )
    return _training_start(plan, ctx, item)


def latest_date(plan: Plan, ctx: PlanContext, item: PurchaseItem) -> tuple[str | None, str]:
    """(the latest date the item must be working or available, how it follows); a purchase adds its
    order-by date (the running-by day less ready_days: lead time and burn-in) and, serving, what a
    day's delay costs in the stand-in rental."""
    if item.use in ("serving", "bridge"):
        return plan.as_of, "serving starts at once (the plan's date)"
    found = running_by(plan, ctx, item)
    if found is None:
        return None, "no deadline given"
    day, basis = found
    if item.ownership == "buy":
        basis += _order_basis(plan, ctx, item, day) + (_delay_cost(plan, item.gpu) if _serves(plan, item) else "")
    return on_day(plan, day).isoformat(), basis


def server_date(plan: Plan, ctx: PlanContext, s: ServerItem) -> tuple[str | None, str | None]:
    """(the latest date the servers must be working, how it follows): the day of the GPUs they hold,
    and the order-by date from the server's own lead time (catalog servers[].lead_time) and the
    burn-in; None where the GPUs have no date."""
    gpu = next((i for i in plan.purchase if i.gpu == s.gpu and i.ownership == "buy"), None)
    found = running_by(plan, ctx, gpu) if gpu is not None else None
    if gpu is None or found is None:
        return None, None
    running, date = found[0], on_day(plan, found[0]).isoformat()
    holds = "it holds" if s.count == 1 else "they hold"
    basis = f"arrive with the {s.gpu} {holds}: working by day {running:.1f}, as those are"
    if ctx.workload.deployment.lead_time_days is not None:
        return date, basis + " (the workload's deployment.lead_time_days covers the servers)"
    server = ctx.catalog.servers.get(s.server)
    lead = server.lead_time if server is not None else None
    burn = burn_in_days(gpu)
    if lead is None or lead.days is None:
        why = f" ({lead.note})" if lead is not None and lead.note else ""
        delivered = on_day(plan, running - burn).isoformat()
        return (
            date,
            basis + f"; the catalog has no lead time for {s.server}{why}: the quote must deliver by {delivered}",
        )
    order = running - burn - lead.days
    return date, basis + (
        f"; with the server's {lead.days:g}-day lead time (catalog servers[{s.server}].lead_time, "
        f"{lead.confidence} confidence, as of {lead.as_of}) and the {burn:g}-day burn-in, order by "
        f"{on_day(plan, max(0.0, order)).isoformat()}" + (" (at once: the plan counts on it)" if order <= 0 else "")
    )
