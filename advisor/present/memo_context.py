"""Everything a memo prints, as display text: the recommendation, key figures, sections, the
sensitivity and the footer. `memo_context` is the one place where the memo's figures are chosen
and worded; it reads the typed plan and its PlanContext and never solves or estimates."""

from __future__ import annotations

import datetime as dt
import re

from advisor._version import __version__
from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.explanations import BreakEven, Marginal
from advisor.durations import duration
from advisor.present.decision_words import cautions, robustness_cost, verify_first
from advisor.present.memo_charts import charts as draw_charts
from advisor.present.memo_costs import (
    COST_LINES,
    cash_months,
    cost_rows,
    rent_by_payment,
    start_days,
)
from advisor.present.memo_ranges import assumption_row, range_sentence, ranges_chart
from advisor.present.memo_recommendation import recommendation
from advisor.present.memo_refs import Refs, rules_digest
from advisor.present.memo_requirement import assumption_rows, requirement
from advisor.present.memo_sections import alternative_rows, bill_of_materials, job_rows, rule_card
from advisor.present.memo_serving import serving_context
from advisor.present.words import (
    elapsed_days,
    minimised,
    months_phrase,
    more_or_less,
    pct,
    sentence,
    unproven,
    usd,
    usd_cents,
)

GLOSSARY = [
    ("Token", "a word piece of training text; the amount of training is counted in tokens"),
    ("Tokens/s", "training throughput: tokens processed per second by all the job's GPUs together"),
    ("MFU", "model FLOPs utilisation: the share of the GPUs' peak matrix-math rate that training actually uses"),
    ("GPU-hour", "one GPU used (or rented) for one hour"),
    (
        "PUE",
        "power usage effectiveness: a building's total power per unit of power the computers draw "
        "(1.58 means 58% extra for cooling and power conversion)",
    ),
    ("Memory bandwidth", "how fast a GPU moves data between its memory and its compute units"),
    (
        "GPU-to-GPU bandwidth",
        "how fast GPUs exchange data when one job runs on several of them (NVLink, PCIe or the network)",
    ),
    ("Pareto front", "the plans for which no other plan is both cheaper and faster"),
    ("Break-even price", "the price at which the recommendation would change"),
    (
        "Present value",
        "a cost paid later, or a resale received later, discounted to what it is worth today at "
        "the cost of capital; the plan minimises the present value of everything it pays",
    ),
    (
        "MILP",
        "mixed-integer linear program: the optimisation method that proves the plan is the "
        "cheapest of all the options considered",
    ),
]


def memo_context(
    plan: Plan,
    ctx: PlanContext,
    source: tuple[str, str, bytes | None],
    *,
    date: dt.date | None = None,
    chart_data: dict | None = None,
    band: dict | None = None,
    min_gpus: dict | None = None,
    paper: str = "a4",
) -> dict:
    """Everything the templates print, as display text (no markup): the one place where the
    memo's figures are chosen and worded."""
    catalog, rules, wl = ctx.catalog, ctx.rules, ctx.workload
    label, digest, raw = source
    refs = Refs(catalog, rules, [s.to_dict() for s in plan.sources])
    feasible = plan.feasible
    months = plan.assumptions.horizon_months
    cb = plan.cost_breakdown
    rent = rent_by_payment(plan)
    hardware = sum(getattr(cb, key) or 0.0 for key, _, when in COST_LINES if when in ("upfront", "before the work"))
    upfront = hardware + rent.get("upfront", 0.0)  # a cluster term or capacity block is paid on day 0 too
    bom, bom_notes = bill_of_materials(plan, ctx, refs)
    alternatives, best_alt, cited_rules = alternative_rows(plan, ctx, refs)
    best_alt = _next_best(plan, ctx, best_alt)
    finish_h = max((j.wall_days * 24 for j in plan.jobs), default=None)
    owned = any(i.ownership == "buy" for i in plan.purchase)
    cost_title = f"Cost over {months_phrase(cash_months(plan))}" if owned else "Cost"
    name = plan.name or wl.name or "training workload"
    return {
        "title": f"{_title(plan)}: {name}" + (f" ({unproven(plan)})" if unproven(plan) else ""),
        "paper": PAPER[paper],
        "date": date.isoformat() if date else None,
        "as_of": plan.as_of,
        "feasible": feasible,
        "recommendation": " ".join(
            x
            for x in (
                *[sentence(c) for c in cautions(plan)],
                recommendation(plan, ctx, best_alt, finish_h, cited_rules, upfront),
                range_sentence(plan),
                robustness_cost(plan),
                verify_first(plan),
            )
            if x
        ),
        "key_figures": _key_figures(plan, cost_title, upfront, finish_h, best_alt) if feasible else [],
        "requirement": _requirement(ctx, plan, label, raw),
        "bom": bom,
        "bom_notes": bom_notes,
        "bom_total": usd_cents(plan.nominal_cost_usd or 0.0) if feasible else None,
        "costs": cost_rows(plan, months, catalog) if feasible else [],
        "total": usd_cents(plan.total_cost_usd or 0.0),
        "minimised": minimised(plan),
        "cost_title": cost_title,
        "jobs": job_rows(plan, ctx, min_gpus or {}, refs),
        "serving": serving_context(plan),
        "alternatives": alternatives,
        "rules": [rule_card(rules.get(rid), refs) for rid in cited_rules],
        "sensitivity": [_sensitivity_line(x, ctx) for x in plan.sensitivity.break_even]
        + [_marginal_line(x) for x in plan.sensitivity.marginal],
        "diagnosis": [sentence(d.message) for d in plan.diagnosis],
        "assumptions": assumption_rows(wl, catalog, plan, refs) + [r for r in [assumption_row(plan)] if r],
        "warnings": [sentence(w.message) for w in plan.warnings],
        "accuracy": _accuracy_line(band or {}),
        "charts": _charts(plan, ctx, chart_data),
        "glossary": GLOSSARY,
        "sources": refs.listing(),
        "footer": {
            "version": plan.tool_version or __version__,
            "catalog": catalog.digest,
            "rules": rules_digest(rules),
            "input": label,
            "input_sha256": digest,
            "solver": _solver_line(plan),
        },
    }


def _key_figures(
    plan: Plan, cost_title: str, upfront: float, finish_h: float | None, best_alt: tuple[str, float] | None
) -> list[tuple[str, str]]:
    """The figures a reader looks for first: the total (present value, what the plan minimises), what
    is paid upfront (or as used) and the cash over the months it is paid in, when it differs from that,
    when the work finishes and the saving against the next-best GPU; those with no value left out."""
    total = plan.total_cost_usd or 0.0
    paid = ("Paid upfront", usd(upfront)) if upfront else ("Paid as used (rental)", usd(plan.cost_breakdown.rental_usd))
    cash = usd(plan.nominal_cost_usd)
    key_figures = [
        (f"Total {cost_title.lower()}, present value", usd(plan.total_cost_usd)),
        paid,
        (f"Cash paid over {months_phrase(cash_months(plan))}", cash if cash != paid[1] else ""),
        _finish_figure(plan, finish_h),
    ]
    key_figures = [kf for kf in key_figures if kf[1]]
    if best_alt and best_alt[1] >= total:
        key_figures.append(("Saving against the next-best GPU", usd(best_alt[1] - total)))
    elif best_alt:  # a plan chosen on its cost over the draws: the next-best is cheaper at the point estimates
        key_figures.append(("Next-best GPU at the catalog's figures", more_or_less(best_alt[1] - total)))
    return key_figures


def _finish_figure(plan: Plan, finish_h: float | None) -> tuple[str, str]:
    """When the work is done, counted from today as its deadline is: one job's wait for its GPUs (a
    purchase's lead time and burn-in) plus its run; with several jobs, the longest run, said as such."""
    if finish_h is None:
        return ("Work finishes after", "")
    if plan.training_jobs != 1:
        return ("Longest job runs for", duration(finish_h, short=True))
    job = plan.jobs[0]
    start_h, elapsed_h = 24 * start_days(plan, job), 24 * elapsed_days(job)
    # a key figure is short (the recommendation's sentence says whose nights)
    nights = f" in {job.hours_a_day:g}-hour nights" if job.hours_a_day else ""
    running = f" ({duration(finish_h, short=True)} of running{nights})" if start_h or nights else ""
    return ("Work finishes after", duration(start_h + elapsed_h, short=True) + running)


def _requirement(ctx: PlanContext, plan: Plan, label: str, raw: bytes | None) -> dict:
    """The workload as given (verbatim, fenced), its summary and its constraints."""
    summary, constraints = requirement(ctx, plan)
    text = raw.decode("utf-8", "replace") if raw is not None else None
    return {
        "file": label,
        "text": text,
        "fence": _fence(text or ""),
        "summary": summary,
        "constraints": constraints,
        "intro": (
            "The workload, as read from standard input, verbatim:"
            if label == STDIN
            else f"The workload file {label}, verbatim:"
        ),
    }


def _charts(plan: Plan, ctx: PlanContext, chart_data: dict | None) -> list:
    """The memo's charts, the range chart last; none without the chart data plan() computed."""
    if not chart_data:
        return []
    return draw_charts(plan, ctx, chart_data) + [c for c in [ranges_chart(plan, ctx, chart_data.get("ranges"))] if c]


PAPER = {"a4": "A4", "letter": "letter"}
STDIN = "<stdin>"  # the label of a workload read from standard input


def _next_best(plan: Plan, ctx: PlanContext, best_alt: tuple[str, float] | None) -> tuple[str, float] | None:
    """The cheapest plan on one GPU type: a GPU not chosen (its forced cost), or, for a plan that
    serves on a mix of types, one of the mix's own types alone when that is cheaper (serving_mix)."""
    mix = plan.serving_mix
    if (
        mix is None
        or not mix.best_single_gpu
        or mix.best_single_cost_usd is None
        or mix.cost_usd is None
        or abs(mix.cost_usd - (plan.total_cost_usd or 0.0)) > 0.5
        or len(mix.gpu_types) < 2
    ):
        return best_alt  # (the mix's figures are for the whole plan only when it serves and nothing else)
    if best_alt is None or mix.best_single_cost_usd < best_alt[1]:
        return ctx.gpu_name(mix.best_single_gpu), mix.best_single_cost_usd
    return best_alt


def _title(plan: Plan) -> str:
    """The memo's title follows the decision: buy, rent, both, or nothing."""
    kinds = {i.ownership for i in plan.purchase}
    if not plan.feasible or not kinds:
        return "GPU plan review (no feasible plan)"
    if kinds == {"buy"}:
        return "GPU purchase justification"
    if kinds == {"rent"}:
        return "GPU rental justification"
    return "GPU purchase and rental justification"


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    return "`" * max(3, longest + 1)


def _solver_line(plan: Plan) -> str:
    s = plan.solver
    if not plan.feasible:
        return f"{s.name or 'solver'}: no feasible plan"
    proof = "proven optimal" if s.proven_optimal else f"best found, not proven optimal (gap {s.gap})"
    return f"{s.name}, {proof}"


def _accuracy_line(band: dict) -> str:
    if not band:
        return (
            "No measured error band for the time estimates ships with this installation "
            "(the estimator's accuracy report, docs/accuracy.md, is absent), so none is stated: "
            "confirm the times on a short trial run before committing."
        )
    parts = [f"mean absolute percentage error (MAPE) {band['mape']}"]
    if band.get("median"):
        parts.append(f"median {band['median']}")
    if band.get("worst"):
        parts.append(f"worst {band['worst']}")
    where = f" over {band['n']} measured training runs" if band.get("n") else ""
    basis = f" ({band['basis']})" if band.get("basis") else ""
    shipped = (
        f"Measured accuracy of the time estimates{where}{basis}: {', '.join(parts)} "
        f"(from {band['source']}). Times and costs that depend on them carry that uncertainty."
    )
    own = band.get("own")
    if not own:
        return shipped
    loo = own.get("mape_leave_one_out")
    fit = f"leave-one-out MAPE {100 * loo:.1f}%" if loo is not None else "no leave-one-out error (a single run)"
    return (
        f"Speeds on the GPU generations and precisions of your own runs come from your own estimator (advisor "
        f"calibrate {own['runs_file']}, {own['runs']} runs): {fit}, in-sample {100 * own['mape_in_sample']:.1f}%; each such "
        f"speed names your calibration as its source. For every other speed: {shipped[:1].lower()}{shipped[1:]}"
    )


_VERB = {"buy": "buying", "rent": "renting"}


def _sensitivity_line(s: BreakEven, ctx: PlanContext) -> str:
    """A break-even in words, with display names; only what the plan verified is stated."""

    def called(gid: str, own: str | None) -> str:
        name = ctx.gpu_name(gid)
        return f"{_VERB[own]} the {name}" if own in _VERB else f"the {name}"

    who = called(s.gpu, s.ownership) + (f" from {s.provider}" if s.provider else "")
    verified = s.verified is not False
    if s.direction == "rise":
        if s.factor is None:
            if not verified:
                return sentence(s.message)
            return (
                f"{who[:1].upper()}{who[1:]} stays the choice even at 64 times its {s.what} (re-solved): no "
                "allowed alternative, including the other way of acquiring the same GPU, meets the requirements "
                "for less."
            )
        if s.factor >= 2:
            rise = f"to about {s.factor:.1f} times its current level" + (f" ({usd(s.price)})" if s.price else "")
        else:
            rise = f"by about {pct(100 * (s.factor - 1))}" + (f" (to about {usd(s.price)})" if s.price else "")
        then = s.then
        rented = f" from {then.provider} at {usd(then.usd_per_gpu_hour)}" if then and then.provider else ""
        after = (
            f"; beyond that, {called(then.gpu, then.ownership)}{rented} is cheaper"
            if then
            else "; beyond that, no plan fits the budget"
        )
        return f"{who[:1].upper()}{who[1:]} stays the cheapest choice until its {s.what} rises {rise}{after}."
    if s.factor is None:
        if not verified:
            return sentence(s.message)
        return (
            f"The runner-up, {who}, would not be chosen even if its {s.what} were zero: the other costs of "
            "its plan (servers, energy, hosting) stay higher."
        )
    price = f" (to about {usd(s.price)})" if s.price else ""
    return (
        f"The runner-up, {who}, becomes the cheaper choice only if its {s.what} falls by about "
        f"{pct(100 * (1 - s.factor))}{price}."
    )


def _marginal_line(m: Marginal) -> str:
    """The plan's own wording (it uses the one binding test, contract/facts.binds)."""
    return sentence(m.message)
