"""The memo's recommendation in words: what to buy or rent and the servers that hold it, its cost
as the cost table adds it up, when the work finishes, the next-best option and the rules that
excluded GPUs; or, without a plan, what would make one possible."""

from __future__ import annotations

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.costs import PurchaseItem
from advisor.data.catalog import Catalog
from advisor.durations import deadline_phrase, duration
from advisor.present.decision_words import schedule_misses, why_dearer
from advisor.present.memo_costs import (
    billed_hours,
    cash_months,
    rent_by_payment,
    start_days,
)
from advisor.present.memo_sections import server_name
from advisor.present.words import (
    elapsed_days,
    footed,
    join,
    months_phrase,
    more_or_less,
    off_peak_words,
    quoted_rate,
    rent_phrase,
    sentence,
    usd,
    usd_cents,
)


def server_phrase(catalog: Catalog, sid: str, n: int) -> str:
    """'one HGX A100 8-GPU server (SXM4, NVSwitch)', '2 x Workstation ...' (display names only)."""
    name = server_name(catalog, sid)
    return f"one {name}" if n == 1 else f"{n:,} x {name}"


def _rental_phrase(item: PurchaseItem, name: str, both: bool = False) -> str:
    """'rent X GPUs on demand from P: H GPU-hours at $r per GPU-hour, up to n at once' (or 'on a
    cluster term', 'as spot capacity': the offer's kind), with what an offer sold by whole nodes bills
    when that is more than the GPUs used; `both`: the plan rents for training and for serving, so each
    rental says which (two rentals of one offer read alike)."""
    n, billed = item.count, item.billed_gpus or item.count
    use = (" to serve" if item.use in ("serving", "bridge") else " to train") if both else ""
    return (
        f"rent {name} GPUs {rent_phrase(item.rent_kind)} from {item.provider}{use}: {billed_hours(item)} "
        f"at {quoted_rate(item.unit_price_usd or 0)} per GPU-hour, up to {n:,} at once"
        + (f", billed as {billed:,} GPUs (the provider rents whole nodes)" if billed > n else "")
        + (bridge_phrase(item) if item.use == "bridge" else "")
    )


def bridge_phrase(item: PurchaseItem) -> str:
    """', for the 1,752 hours until the bought rtx-6000-ada arrive (serving from today)'."""
    return f", for the {item.hours or 0:,.0f} hours until the bought {item.bridges} arrive (serving from today)"


def recommendation(
    plan: Plan,
    ctx: PlanContext,
    best_alt: tuple[str, float] | None,
    finish_h: float | None,
    cited_rules: list[str],
    upfront: float,
) -> str:
    """What to buy or rent and why, in sentences: the purchase, its cost, the finish, the next-best
    option and the GPUs the rules excluded."""
    if not plan.feasible:
        return _no_plan(plan, ctx)
    gpus, rules = ctx.catalog.gpus, ctx.rules
    parts = []
    rented = [i.use in ("serving", "bridge") for i in plan.purchase if i.ownership == "rent"]
    both = any(rented) and not all(rented)
    for item in plan.purchase:
        g, n = gpus[item.gpu], item.count
        if item.ownership == "buy":
            parts.append(
                f"buy {n:,} {g.name} GPU"
                + (f"s at {usd(item.unit_price_usd)} each" if n != 1 else f" for {usd(item.unit_price_usd)}")
            )
        else:
            parts.append(_rental_phrase(item, g.name, both))
    held = _it_or_them(sum(i.count for i in plan.purchase if i.ownership == "buy"))
    for srv in plan.servers:
        parts.append(f"{server_phrase(ctx.catalog, srv.server, srv.count)} to hold {held}")
    text = join(parts)
    text = f"{text[:1].upper()}{text[1:]}. " + _cost_sentence(plan, upfront)
    hostless = [
        gpus[g].name for g in sorted({i.gpu for i in plan.purchase if i.ownership == "buy"}) if not ctx.hosts.get(g)
    ]
    if hostless:
        text += f"This excludes the machine that hosts the {join(hostless)}, which the catalog does not price. "
    text += _finish_sentence(plan, ctx, finish_h)
    if best_alt:
        text += _next_best(plan, best_alt)
    for rid in cited_rules:
        if rules.get(rid).severity != "forbid":
            continue  # a warning does not exclude anything
        excluded = [
            gpus[r.gpu].name
            for r in plan.rejected
            if r.forced_cost_usd is None and any(x.rule == rid for x in r.reasons)
        ]
        if excluded:
            text += (
                f"The {join(excluded)} {'is' if len(excluded) == 1 else 'are'} excluded by rule {rid} "
                f"({rules.get(rid).title}). "
            )
    return text.strip()


def _next_best(plan: Plan, best_alt: tuple[str, float]) -> str:
    """The next-best option and what it costs against this plan; cheaper at the catalog's figures only
    where this plan was chosen on its cost over the draws, which is said."""
    diff = best_alt[1] - (plan.total_cost_usd or 0)
    why = f" at the catalog's figures; {why_dearer(plan)}" if diff < 0 else ""
    return f"The next-best option, the {best_alt[0]} alone, would cost {usd(best_alt[1])} ({more_or_less(diff)}{why}). "


def _cost_sentence(plan: Plan, upfront: float) -> str:
    """The cost in words, as the cost table adds it up: the cash (upfront and while running), the
    resale, and the present value the plan minimises; then the cost of owning the other way."""
    a, cb = plan.assumptions, plan.cost_breakdown
    cash, total, resale = plan.nominal_cost_usd or 0.0, plan.total_cost_usd or 0.0, plan.residual_value_usd or 0.0
    rent = rent_by_payment(plan)  # a term paid in full on day 0 is in `upfront`
    parts = [
        (v, what)
        for v, what in (
            (upfront, "upfront"),
            (cb.support_usd, "for support"),
            (cb.energy_usd, "for electricity"),
            (cb.hosting_usd, "for hosting"),
            (rent.get("monthly"), "for rental paid monthly over its term"),
            (rent.get("as_used"), "for rental"),
            (cb.bridge_usd, "for rental until the bought serving GPUs arrive"),
            (cb.services_tax_usd, "for VAT on rent and services"),
        )
        if v
    ]
    amounts, paid_total = footed([v for v, _ in parts], cash)  # the printed parts add up to the printed cash
    paid = join([f"{amount} {what}" for amount, (_, what) in zip(amounts, parts)])
    pv = usd_cents(total) if "." in paid_total else usd(total)  # the cash's precision: $4.15 in cash is $4.15 PV
    text = (
        f"Over the {months_phrase(cash_months(plan))} the plan is costed for, it pays {paid_total} in cash ({paid})"
        + (f" and gets about {usd(resale)} back by reselling the GPU{_resold_s(plan)}" if resale else "")
        + f"; at {a.discount_rate:.1%} a year that is {pv} in present value, the figure the plan "
        "minimises. "
    )
    other = plan.other_ownership
    if other is not None and other.message:
        text += sentence(other.message) + " "
    return text


def _finish_sentence(plan: Plan, ctx: PlanContext, finish_h: float | None) -> str:
    """When the training finishes, against its deadline ('' for a plan that only serves)."""
    jobs = plan.jobs
    if not jobs or finish_h is None:
        return ""  # serving only: the serving section says what runs
    count = plan.training_jobs
    if count == 1:
        deadline = ctx.jobs[0].deadline_hours if ctx.jobs else None
        # the deadline counts from today: the run starts when its GPUs can work (a purchase's lead time and
        # burn-in, a rental's provisioning), so the margin is what is left after both
        start_h, elapsed_h = 24 * start_days(plan, jobs[0]), 24 * elapsed_days(jobs[0])
        after = f" once its GPUs are ready after {duration(start_h)}" if start_h else ""
        spare = (
            f"{after}, {duration(deadline - start_h - elapsed_h)} before its {deadline_phrase(deadline)}"
            if deadline
            else after
        )
        return f"The training run finishes after about {duration(finish_h)} of running time{off_peak_words(jobs[0])}{spare}. "
    dated = [j for j in ctx.jobs if j.deadline_hours]
    return (
        f"{'Both jobs run' if count == 2 else f'Each of the {count:,} jobs runs'} for at most {duration(finish_h)}"
        + (
            ", but not every deadline is met on the plan's schedule (see the warnings)"
            if schedule_misses(plan)
            else ", each within its deadline"
            if dated and len(dated) == len(ctx.jobs)
            else ", each with a deadline within it"
            if dated
            else ""
        )
        + ". "
    )


def _no_plan(plan: Plan, ctx: PlanContext) -> str:
    """No plan: nothing should be bought, and the first change that would make a plan possible."""
    name = plan.name or ctx.workload.name or "the workload"
    levers = [d for d in plan.diagnosis if d.relaxation]
    fixes = [d.message for d in levers if d.constraint != "combined"]
    combined = [d.message for d in levers if d.constraint == "combined"]
    text = (
        f"No combination of the allowed GPUs meets every requirement of the workload '{name}', so "
        "nothing should be bought or rented as specified."
    )
    if fixes:
        text += (
            f" Any one of the {len(fixes)} changes listed under 'Why no plan exists' would make a plan "
            f"possible; the first: {fixes[0].rstrip('.')}."
            if len(fixes) > 1
            else f" This change would make a plan possible: {fixes[0].rstrip('.')}."
        )
    elif combined:
        text += f" {sentence(combined[0])}"
    else:
        nothing = [d.message for d in plan.diagnosis if d.kind == "nothing"]
        text += f" {sentence(nothing[0])}" if nothing else ""
    return text


def _it_or_them(count: int) -> str:
    """The GPUs bought, as a pronoun: "to hold it" for one (article-office read "to hold them")."""
    return "it" if count == 1 else "them"


def _resold_s(plan: Plan) -> str:
    """'s' unless one GPU is resold (article-office read "reselling the GPUs" for its one RTX 4090)."""
    return "" if sum(d.count or 0 for d in plan.disposal or []) == 1 else "s"
