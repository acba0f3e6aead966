"""`advisor plan`'s default view: the decision on one screen. What to buy or rent, its cost in cash
and in present value, when the work is done, what binds, the three sensitivities that matter most,
robustness, what to verify first, the other way of acquiring the GPUs, and the top reason for each
GPU family not chosen. Every other part is one `--section` away (present/plan_sections.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.contract.explanations import Rejected
from advisor.durations import duration
from advisor.present.decision_words import cautions, chosen_on, doubted, expected, noise
from advisor.present.escape import md
from advisor.present.grid import grid, para
from advisor.present.memo_costs import billed_gpus, billed_hours, start_days
from advisor.present.plan_sections import (
    diagnosis_section,
    robustness_message,
    title_lines,
)
from advisor.present.sections import NAMES
from advisor.present.words import (
    amount,
    elapsed_days,
    minimised,
    months_phrase,
    more_or_less,
    off_peak_words,
    plural,
    quoted_rate,
    usd,
    usd_cents,
)

LABEL = 10  # width of the labels ("Decision", "Cost", ...)
# reasons whose plan message is long and says little more than its code
SHORT = {
    "no-price": "no sourced purchase price or rental rate (a quote goes in with --catalog)",
    "no-rental-price": "no sourced rental rate of the kinds allowed (deployment.rent_kinds), and it cannot be bought here",
    "no-purchase-price": "no sourced purchase price, and it cannot be rented here",
    "no-server": "no priced server or workstation holds it here",
    "slots": "no allowed machine holds it",
}


def _labelled(label: str, text: str, fmt: str) -> str:
    if fmt == "markdown":
        return f"- **{label}:** {md(text)}" if label else f"- {md(text)}"
    return para(text, f"{label:<{LABEL}}", " " * LABEL)


def _span(lo: float | None, hi: float | None, fmt: Any) -> str:
    return f" (P10–P90 {fmt(lo)}–{fmt(hi)})" if lo is not None and hi is not None and fmt(lo) != fmt(hi) else ""


def decision_text(p: Plan) -> str:
    """'buy 8× a100-80gb-sxm at $9,000 each; buy 1× hgx-a100-8gpu at $28,390 to hold the a100-80gb-sxm; rent
    ...' ('each' only for more than one)."""
    parts = []
    for i in p.purchase:
        if i.ownership == "buy":
            parts.append(f"buy {i.count:,}× {i.gpu} at {usd(i.unit_price_usd)}{' each' if i.count > 1 else ''}")
        else:
            until = f" until the bought {i.bridges} arrive ({i.hours or 0:,.0f} h)" if i.use == "bridge" else ""
            parts.append(
                f"rent up to {i.count:,}× {i.gpu} at {quoted_rate(i.unit_price_usd or 0)}/GPU-hour{until} "
                f"({billed_hours(i)}, {i.provider or 'provider unknown'}{billed_gpus(i)})"
            )
    parts += [
        f"buy {s.count:,}× {s.server} at {usd(s.unit_price_usd)}{' each' if s.count > 1 else ''} to hold the {s.gpu}"
        for s in p.servers
    ]
    return "; ".join(parts) or "nothing to buy or rent"


def cost_text(p: Plan) -> str:
    a = p.assumptions
    pv = p.present_value_usd if p.present_value_usd is not None else p.total_cost_usd
    r = p.total_cost_usd_range
    # the figures a budget may cap (budget_basis: cash or present_value) to the cent, as the budget is
    # checked: a budget copied from a whole-dollar "$31,853 in cash" was refused for the 41 cents not shown
    text = (
        f"{usd_cents(pv)} present value at {100 * a.discount_rate:.1f}%/year over {months_phrase(a.horizon_months)}, "
        f"{minimised(p)}" + (_span(r.p10, r.p90, usd) if r is not None else "")
    )
    if p.nominal_cost_usd is not None:
        text += f"; {usd_cents(p.nominal_cost_usd)} in cash, undiscounted"
    if p.disposal:
        text += "; " + "; ".join(d.message for d in p.disposal[:2])
    elif p.residual_value_usd:
        text += f" (bought GPUs resold for {usd(p.residual_value_usd)} after {months_phrase(a.horizon_months)})"
    return text


def time_text(p: Plan, ctx: PlanContext | None) -> str | None:
    if not p.jobs:
        return None
    last = max(p.jobs, key=elapsed_days)
    r = last.wall_days_range
    span = _span(r.p10, r.p90, lambda d: duration(24 * d, short=True)) if r is not None else ""
    info = ctx.job(last.name) if ctx is not None else None
    deadline = f", deadline {duration(info.deadline_hours, short=True)}" if info and info.deadline_hours else ""
    count = p.training_jobs
    start = start_days(p, last)
    # a run starts when its GPUs are ready (lead time, burn-in); copies of a job without a deadline run in
    # turn over the horizon, so a run's time is not when the last of them finishes
    who = "the training run takes" if count == 1 else f"{plural(count, 'job')}; the longest, {last.name}, takes"
    ready = f" once its GPUs are ready on day {start:.1f}" if start else ""
    running = " of running" if last.hours_a_day else ""
    text = f"{who} {duration(24 * last.wall_days, short=True)}{running}{span}{off_peak_words(last)}{ready}{deadline}"
    evidence = Counter(j.speed_evidence for j in p.jobs if j.speed_evidence)
    if evidence:
        text += "; speeds " + ", ".join(f"{k.replace('_', ' ')} ({n})" for k, n in sorted(evidence.items()))
    if own := sum(1 for j in p.jobs if j.speed_source):
        text += f", {own} from your own runs"
    return text[:1].upper() + text[1:]


def serving_texts(p: Plan) -> list[str]:
    """One line per request class: its replicas (of every layout it uses, a mix on one line: each row
    holds its share, not the class's peak), the peak they hold and the latency at it."""
    classes: dict[str, list] = {}
    for r in p.serving:
        classes.setdefault(r.name, []).append(r)
    out = []
    for name, rows in list(classes.items())[:3]:
        first = rows[0]
        layouts = " and ".join(
            f"{r.replicas:,} replica{'s' if r.replicas != 1 else ''} of {r.gpu_count // max(1, r.replicas)}× "
            f"{r.gpu} ({r.ownership})"
            for r in rows
        )
        ttft = " / ".join("n/a" if r.ttft_ms is None else f"{r.ttft_ms:.0f} ms" for r in rows)
        tpot = " / ".join("n/a" if r.tpot_ms is None else f"{r.tpot_ms:.1f} ms" for r in rows)
        out.append(
            f"{name}: {layouts} for {first.peak_requests_per_s:.3g} requests/s at peak"
            + (
                f" (n+1: {first.requests_per_s_one_down:.3g} with any one replica down)"
                if first.availability == "n+1" and first.requests_per_s_one_down is not None
                else ""
            )
            + f"; p{first.slo.percentile:g} TTFT {ttft}, TPOT {tpot}"
        )
    if len(classes) > 3:
        out.append(f"and {len(classes) - 3} more classes (--section serving)")
    return out


def binds_text(p: Plan) -> str:
    binding = [b for b in p.binding if b.binding]
    if binding:
        text = "; ".join(f"{b.constraint}: {b.message}" for b in binding[:3])
        return text + (f"; and {len(binding) - 3} more (--section constraints)" if len(binding) > 3 else "")
    slack = [b for b in p.binding if b.slack is not None]
    if not slack:
        return "nothing"
    unit = Counter(b.unit for b in slack).most_common(1)[0][0]
    closest = min((b for b in slack if b.unit == unit), key=lambda b: b.slack or 0.0)
    return f"nothing; the closest is {closest.constraint} ({amount(closest.slack, closest.unit)} of slack)"


def top_sensitivities(p: Plan, n: int = 3) -> list[str]:
    """The chosen option's price break-even, its speed break-even, then the rest in order."""
    s = p.sensitivity
    ranked: list[Any] = [
        *s.break_even[:1],
        *(s.speed or [])[:1],
        *(s.traffic or [])[:1],
        *s.break_even[1:],
        *(s.speed or [])[1:],
        *s.marginal,
        *(s.traffic or [])[1:],
        *p.break_even_months,
    ]
    return [x.message for x in ranked[:n]]


def family(gid: str, ctx: PlanContext | None) -> tuple[str, str]:
    """A GPU's family: its architecture and product class ('Hopper', 'datacenter'); its id
    without a catalog entry."""
    g = ctx.catalog.gpus.get(gid) if ctx is not None else None
    if g is None:
        return gid, ""
    words = (g.architecture or g.vendor).split(" (")[0].split(",")[0].split()
    arch = words[0] if len(words) > 1 and words[1].isalpha() else " ".join(words)  # 'Ada Lovelace' -> 'Ada'
    return arch, g.product_class.replace("_", " ")


def _families(fams: list[tuple[str, str]]) -> str:
    """'Hopper, Ampere datacenter; Ada consumer'."""
    by_class: dict[str, list[str]] = {}
    for arch, cls in fams:
        by_class.setdefault(cls, []).append(arch)
    return "; ".join(f"{', '.join(archs)} {cls}".strip() for cls, archs in by_class.items())


def _reason(r: Rejected, ctx: PlanContext | None) -> str:
    """The primary reason in a few words: a rule's title, a short phrase for a missing price or
    platform, else the plan's message up to its first parenthesis; a message that opens with the
    GPU's name and what it was offered as ('AMD Instinct MI300X (on-demand, neocloud): 8 GPUs need
    ...') keeps what follows the name, not the name alone."""
    x = r.reasons[0]
    text = x.message
    if r.name and text.startswith(r.name) and ": " in text:
        text = text.split(": ", 1)[1]
    return f"[{x.rule or x.code}] " + (_rule_title(x.rule, ctx) or SHORT.get(x.code) or text.split(" (")[0])


def family_rows(p: Plan, ctx: PlanContext | None) -> list[list[str]]:
    """One row per GPU family none of whose GPUs was chosen, the cheapest first: the best plan on
    one of its GPUs; then the families none of whose GPUs can be used, one row per reason (a
    family's most common one)."""
    chosen = {family(i.gpu, ctx) for i in p.purchase}
    groups: dict[tuple[str, str], list[Rejected]] = {}
    for r in p.rejected:
        fam = family(r.gpu, ctx)
        if fam not in chosen:
            groups.setdefault(fam, []).append(r)
    total = p.total_cost_usd or 0.0
    costed_rows: list[tuple[float, list[str]]] = []
    excluded: dict[str, list[tuple[tuple[str, str], list[str]]]] = {}  # reason -> (family, its GPUs)
    for fam, members in groups.items():
        costed = sorted((r for r in members if r.forced_cost_usd is not None), key=lambda r: r.forced_cost_usd or 0.0)
        if costed and p.feasible:
            best = costed[0]
            extra = (best.forced_cost_usd or 0.0) - total
            diff = more_or_less(extra, 100 * extra / total if total else None)
            if extra < 0:  # a decision basis other than the point chose the dearer plan at the catalog's figures
                diff += " at the catalog's figures"
            more = f" (+{len(members) - 1} more)" if len(members) > 1 else ""
            costed_rows.append((extra, [_families([fam]), f"{best.gpu}{more}: {usd(best.forced_cost_usd)}, {diff}"]))
            continue
        reasons = Counter(_reason(r, ctx) for r in members)
        top = max(reasons, key=lambda k: (reasons[k], k.startswith("[") and k[1:2].isupper()))
        excluded.setdefault(top, []).append((fam, [r.gpu for r in members if _reason(r, ctx) == top]))
    rows = [row for _, row in sorted(costed_rows, key=lambda x: x[0])]
    for reason, fams in excluded.items():
        gids = [g for _, members in fams for g in members]
        rows.append(
            [
                _families([f for f, _ in fams]),
                f"{', '.join(gids) if len(gids) <= 3 else plural(len(gids), 'GPU')}: {reason}",
            ]
        )
    return rows


def _rule_title(rule: str | None, ctx: PlanContext | None) -> str | None:
    if rule is None or ctx is None:
        return None
    found = [r for r in ctx.rules.rules if r.id == rule]
    return found[0].title if found else None


def summary_text(plan: Plan, ctx: PlanContext | None = None, fmt: str = "table") -> str:
    """The decision on one screen (about 40 lines on a wide terminal)."""
    p = plan
    out = title_lines(p, fmt, summary=True)
    if p.feasible:
        out.append("")
        # a choice that rarely holds, or a speed no run measured, is said before the choice itself
        out += [_labelled("Caution", text, fmt) for text in cautions(p)]
        out.append(_labelled("Decision", decision_text(p), fmt))
        out.append(_labelled("Cost", cost_text(p), fmt))
        time = time_text(p, ctx)
        if time:
            out.append(_labelled("Time", time, fmt))
        out += [_labelled("" if i else "Serving", text, fmt) for i, text in enumerate(serving_texts(p))]
        out.append(_labelled("Binds", binds_text(p), fmt))
        out += _why(p, fmt)
    else:
        # a doubted run of the user's may be why nothing fits: said before the diagnosis
        out += ["", _labelled("Caution", doubt, fmt)] if (doubt := doubted(p)) else []
        out += diagnosis_section(p, fmt)
    rows = family_rows(p, ctx)
    if rows:
        head = "Not chosen, by family (the best of each; --section not-chosen for every GPU)"
        out += [
            "",
            f"### {md(head)}\n" if fmt == "markdown" else para(head),
            grid(["family", "why not"], rows, fmt, wrap=(0, 1)),
        ]
    out.append("")
    ruled = [w for w in p.warnings if w.rule]  # a rule's warning (licence, export, P2P) is read before buying
    out += [_labelled("Warning", f"[{w.rule}] {w.message}", fmt) for w in ruled]
    others = [w for w in p.warnings if not w.rule]
    if others:
        kinds = Counter(w.code for w in others)
        out.append(
            para(
                f"{plural(len(others), 'more warning' if ruled else 'warning')} ("
                + ", ".join(f"{k} {n}" if n > 1 else k for k, n in kinds.items())
                + "): --section warnings"
            )
        )
    out.append(
        para(
            "More: --full for every part, --section NAME for one ("
            + ", ".join(name for name in NAMES if name != "summary")
            + ")"
        )
    )
    return "\n".join(out) + "\n"


def _why(p: Plan, fmt: str) -> list[str]:
    out = []
    for i, text in enumerate(top_sensitivities(p)):  # one label for the three
        out.append(_labelled("Sensitive" if i == 0 else "", text, fmt))
    robust = robustness_message(p)
    if robust:
        out.append(_labelled("Robust", robust, fmt))
    d = p.decision
    if d is not None:
        basis = chosen_on(d)
        loss = d.price_of_robustness_usd
        figures = [
            f"expected {expected(d)}" if d.expected_cost_usd is not None else "",
            f"P80 {usd(d.p80_cost_usd)}" if d.p80_cost_usd is not None else "",
            f"P90 {usd(d.p90_cost_usd)}" if d.basis == "p90" and d.p90_cost_usd is not None else "",
            f"the plan at the point estimates is expected to cost {more_or_less(loss)} (fresh draws{noise(d)})"
            if loss
            else "",
        ]
        out.append(
            _labelled("Basis", basis + ": " + ", ".join(f for f in figures if f) if any(figures) else basis, fmt)
        )
        if d.verify:
            out.append(
                _labelled(
                    "Verify",
                    d.verify[0].message
                    + (f" (and {len(d.verify) - 1} more: --section decision)" if len(d.verify) > 1 else ""),
                    fmt,
                )
            )
    o = p.other_ownership
    if o is not None:
        out.append(_labelled("Otherwise", o.message or f"{o.ownership}: {usd(o.total_cost_usd)}", fmt))
    return out
