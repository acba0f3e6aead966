"""The parts of `advisor plan`'s text, section by section, for a terminal (fitted to its width) or a
document (Markdown): what present/plan_text.py puts together and the one-screen view
(present/plan_summary.py) picks from. present/grid.py draws the tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advisor.contract import Plan
from advisor.contract.costs import Triple
from advisor.contract.explanations import Reason, Rejected
from advisor.durations import duration
from advisor.present import words
from advisor.present.decision_words import chosen_on, cost_only, expected
from advisor.present.escape import md
from advisor.present.grid import grid, para
from advisor.present.memo_costs import billed_gpus, billed_hours, cash_months, cost_rows
from advisor.present.sections import NAMES
from advisor.present.words import amount, months_phrase, nights_words, quoted_rate, tokens, unproven, usd, usd_cents


def as_plan(p: Plan | dict[str, Any]) -> Plan:
    """A Plan from a Plan or its JSON value (`plan --format json`, decoded)."""
    return p if isinstance(p, Plan) else Plan.build(p)


def heading(title: str, fmt: str) -> str:
    return f"\n### {md(title)}\n" if fmt == "markdown" else "\n" + para(title)


def line(text: str, fmt: str) -> str:
    """One sentence of the plan: a Markdown list item (escaped) or a wrapped, indented paragraph."""
    return f"- {md(text)}" if fmt == "markdown" else para(text, "  ", "    ")


def span(r: Triple | None, fmt: Callable[[float], str]) -> str:
    """' (P10–P90)' beside a point value, e.g. '18.9 (15.7–23.4)'."""
    if r is None or r.p10 is None or r.p90 is None or fmt(r.p10) == fmt(r.p90):  # a range of one value says nothing
        return ""
    return f" ({fmt(r.p10)}–{fmt(r.p90)})"


def bill_rows(p: Plan) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for item in p.purchase:
        if item.ownership == "buy":
            rows.append([item.gpu, item.count, "buy", usd(item.unit_price_usd) + " each", ""])
        else:
            rows.append(
                [
                    item.gpu,
                    item.count,
                    "rent",
                    f"{quoted_rate(item.unit_price_usd or 0)}/GPU-hour",
                    f"{billed_hours(item)} ({item.provider or ''})"
                    + billed_gpus(item)
                    + (
                        f", {item.hours or 0:,.0f} h until the bought {item.bridges} arrive"
                        if item.use == "bridge"
                        else ""
                    ),
                ]
            )
    for srv in p.servers:
        rows.append(
            [
                srv.server,
                srv.count,
                "buy",
                usd(srv.unit_price_usd) + " each",
                f"holds {srv.gpu}" + (f", {srv.networked} networked" if srv.networked else ""),
            ]
        )
    return rows


def why(reason: Reason) -> str:
    code = reason.rule or reason.code or ""
    return code + (" (warn)" if reason.severity == "warn" else "")


def not_chosen_rows(rejected: list[Rejected], verbose: bool = False) -> list[list[Any]]:
    """One row per primary reason, GPUs with the same reason grouped into one row (the GPU's own
    name in a message becomes "each"); with verbose, every reason of every GPU."""
    if verbose:
        return [[r.gpu if i == 0 else "", why(x), x.message] for r in rejected for i, x in enumerate(r.reasons)]
    groups: dict[tuple[str, str], list[str]] = {}
    for r in rejected:
        first = r.reasons[0]
        text = first.message.replace(r.name, "each") if r.name and r.name in first.message else first.message
        groups.setdefault((why(first), text), []).append(r.gpu)
    rows: list[list[Any]] = []
    for (code, text), gids in groups.items():
        if len(gids) == 1:
            text = next(x for x in rejected if x.gpu == gids[0]).reasons[0].message
        rows.append([", ".join(gids), code, text])
    return rows


def title_lines(p: Plan, fmt: str, summary: bool = False) -> list[str]:
    """The plan's name and deployment, the solver's status, and (not in the summary, which says
    more) the total cost and the confidence deadlines hold at."""
    a = p.assumptions
    caveat = unproven(p)
    head = f"{p.name or 'GPU plan'}  ({a.deployment}, region {a.region}, prices as of {p.as_of})" + (
        f"  [{caveat}]" if caveat else ""
    )
    out = [f"## {md(head)}\n" if fmt == "markdown" else para(head)]
    if not p.feasible:
        out.append("Status: NO FEASIBLE PLAN")
        return out
    solver = p.solver
    limit = solver.gap_limit or 0.0
    proof = (
        (f"proven within {100 * limit:g}% of optimal" if limit > 1e-4 else "proven optimal")
        if solver.proven_optimal
        else f"best found, gap {solver.gap}"
    )
    if summary:
        out.append(para(f"Status: {p.status} ({solver.name}, {proof})"))
        return out
    out.append(
        para(
            f"Status: {p.status} ({solver.name}, {proof})   "
            f"Total cost over {months_phrase(cash_months(p))}, present value: {usd(p.total_cost_usd)}"
            + span(p.total_cost_usd_range, usd)
            + f"; cash {usd(p.nominal_cost_usd)}"
        )
    )
    if p.jobs:
        out.append(para(f"Deadlines held at {p.confidence.quantile} of each job's time; ranges are P10–P90"))
    return out


def buy_section(p: Plan, fmt: str) -> list[str]:
    if not p.purchase:
        return []
    return [
        heading("Buy / rent", fmt),
        grid(["item", "count", "buy/rent", "price", "usage"], bill_rows(p), fmt, wrap=(4,)),
    ]


def cost_section(p: Plan, fmt: str) -> list[str]:
    """The cost lines as the memo adds them up, to the cent: the cash by line, the resale at disposal
    and the discounting, to the present value the plan minimises."""
    if not p.purchase:
        return []
    rows = [[r["category"], r["when"], r["amount"]] for r in cost_rows(p, p.assumptions.horizon_months)]
    rows.append([f"Total, present value ({words.minimised(p)})", "", usd_cents(p.total_cost_usd or 0.0)])
    return [heading("Cost breakdown", fmt), grid(["cost", "when", "amount"], rows, fmt)]


def _speed_basis(j: Any) -> str:
    """What a job's speed rests on, in a table cell: a measured run, one on its generation, or the
    datasheet times its derating."""
    if j.speed_evidence == "datasheet" and j.derating is not None:
        stack = {"public": ", public software", "vendor_tuned": ", vendor-tuned software"}.get(j.derating.software, "")
        return f"datasheet x {j.derating.factor:.2f}{stack}"
    return (j.speed_evidence or "").replace("same_generation", "same generation")


def jobs_section(p: Plan, fmt: str) -> list[str]:
    if not p.jobs:
        return []
    rows = [
        [
            j.name,
            j.gpu,
            j.gpu_count,
            tokens(j.tokens_per_s),
            duration(j.wall_days * 24, short=True)
            + span(j.wall_days_range, lambda v: duration(v * 24, short=True))
            + (f", {nights_words(j)}" if j.hours_a_day else ""),
            f"{j.memory_per_gpu_gb:.1f}",
            f"{100 * j.mfu:.0f}%",
            j.binding_factor,
            _speed_basis(j),
        ]
        for j in p.jobs
    ]
    out = [
        heading("Jobs", fmt),
        grid(
            ["job", "GPU", "GPUs", "tokens/s", "time (P10–P90)", "GB/GPU", "MFU", "limited by", "speed from"],
            rows,
            fmt,
            wrap=(4, 8),
        ),
    ]
    for j in p.jobs:
        lay, g = j.layout, j.goodput
        split = (
            " x ".join(
                f"{k[0].upper()}P{getattr(lay, k + '_parallel')}"
                for k in ("data", "tensor", "pipeline", "context")
                if getattr(lay, k + "_parallel", 1) > 1
            )
            or "one GPU"
        )
        text = f"{j.name}: layout {split}, global batch {lay.global_batch_tokens:,.0f} tokens"
        if g is not None:
            text += (
                f"; goodput {100 * g.fraction:.1f}%: {24 * g.lost_days:,.1f} h of the "
                f"{24 * j.wall_days:,.1f} h lost to failures, restarts and checkpoints"
            )
        out.append(line(text, fmt))
    return out + [line(text, fmt) for text in words.own_speeds(p, serving=False)]


def serving_section(p: Plan, fmt: str) -> list[str]:
    """The plan's serving replicas: rate per replica, latency at peak, what limits it; the mix's saving."""
    if not p.serving:
        return []
    rows = [
        [
            r.name,
            r.gpu,
            f"TP{r.tensor_parallel}" + (f"xPP{r.pipeline_parallel}" if r.pipeline_parallel > 1 else ""),
            r.replicas,
            r.ownership,
            f"{r.requests_per_s_per_replica:.3g}",
            _ms(r.ttft_ms, ".0f"),
            _ms(r.tpot_ms, ".1f"),
            r.limited_by,
        ]
        for r in p.serving
    ]
    out = [
        heading("Serving (latency at peak traffic, p%g)" % p.serving[0].slo.percentile, fmt),
        grid(
            ["class", "GPU", "layout", "replicas", "buy/rent", "req/s each", "TTFT ms", "TPOT ms", "limited by"],
            rows,
            fmt,
            wrap=(8,),
        ),
    ]
    out += [line(f"{r.name} on {r.gpu}: {r.shared_with_training}", fmt) for r in p.serving if r.shared_with_training]
    out += [line(text, fmt) for text in words.own_speeds(p, jobs=False)]
    if p.serving_mix is not None and p.serving_mix.message:
        out.append(line(p.serving_mix.message, fmt))
    return out


def _ms(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def constraints_section(p: Plan, fmt: str) -> list[str]:
    if not p.binding:
        return []
    rows = [
        [b.constraint, "BINDING" if b.binding else f"slack {amount(b.slack, b.unit)}", b.message] for b in p.binding
    ]
    return [heading("Constraints", fmt), grid(["constraint", "status", "detail"], rows, fmt, wrap=(1, 2))]


def sensitivity_messages(p: Plan) -> list[str]:
    s = p.sensitivity
    items: list[Any] = [*s.break_even, *(s.speed or []), *s.marginal, *(s.traffic or []), *p.break_even_months]
    return [item.message for item in items]


def sensitivity_section(p: Plan, fmt: str) -> list[str]:
    lines = sensitivity_messages(p)
    return [heading("Sensitivity", fmt), *[line(m, fmt) for m in lines]] if lines else []


def robustness_message(p: Plan) -> str | None:
    """The robustness verdict: how often the choice (GPUs bought, and rented for training and
    serving) stays the cheapest plan over draws of speed and price (explain/robustness.py)."""
    return p.robustness.message if p.robustness is not None else cost_only(p)


def robustness_section(p: Plan, fmt: str) -> list[str]:
    message = robustness_message(p)
    return [heading("Robustness", fmt), line(message, fmt)] if message else []


def not_chosen_section(p: Plan, fmt: str, verbose: bool = False) -> list[str]:
    if not p.rejected:
        return []
    return [
        heading("Not chosen" + ("" if verbose else " (primary reason; --verbose for all)"), fmt),
        grid(["GPU", "why", "detail"], not_chosen_rows(p.rejected, verbose), fmt, wrap=(0, 2)),
    ]


def diagnosis_section(p: Plan, fmt: str) -> list[str]:
    if not p.diagnosis:
        return []
    out = [heading("Why no plan exists", fmt)]
    need = [d for d in p.diagnosis if d.kind == "shortfall"]
    fixes = [d for d in p.diagnosis if d.kind != "shortfall"]
    if need:
        out.append(
            grid(
                ["shortfall", "detail"],
                [[d.constraint.partition(":")[2] or d.constraint, d.message] for d in need],
                fmt,
                wrap=(1,),
            )
        )
    out.append(grid(["change", "detail"], [[d.constraint, d.message] for d in fixes], fmt, wrap=(1,)))
    return out


def warnings_section(p: Plan, fmt: str) -> list[str]:
    if not p.warnings:
        return []
    return [heading("Warnings", fmt), *[line(f"[{w.rule or w.code or 'note'}] {w.message}", fmt) for w in p.warnings]]


def decision_section(p: Plan, fmt: str) -> list[str]:
    """How the plan was chosen among draws, every input worth verifying, what happens to bought
    GPUs at the end and the other way of acquiring them (the plan's `decision`, `disposal` and
    `other_ownership`: advisor/contract/decision.py)."""
    out: list[str] = []
    d = p.decision
    if d is not None:
        figures = [
            ("expected cost", None if d.expected_cost_usd is None else expected(d)),
            ("P80 cost", d.p80_cost_usd),
            ("P90 cost", d.p90_cost_usd if d.basis == "p90" else None),
            ("price of robustness", d.price_of_robustness_usd),
        ]
        out.append(
            line(
                chosen_on(d)
                + "".join(f"; {name} {v if isinstance(v, str) else usd(v)}" for name, v in figures if v is not None),
                fmt,
            )
        )
        if d.verify:
            rows = [
                [
                    v.input,
                    _shown(v.current),
                    _shown(v.range),
                    usd(v.evpi_usd) if v.evpi_usd is not None else "",
                    v.message,
                ]
                for v in d.verify
            ]
            out.append(grid(["verify", "now", "range", "worth knowing", "why"], rows, fmt, wrap=(4,)))
    out += [line(x, fmt) for x in [cost_only(p)] if x and d is None] + [line(x.message, fmt) for x in p.disposal or []]
    if p.other_ownership is not None:
        out.append(line(p.other_ownership.message, fmt))
    return [heading("Decision", fmt), *out] if out else []


def _shown(value: Any) -> str:
    """A verify item's current value or range as text (a pair as 'a–b')."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return f"{_shown(value[0])}–{_shown(value[1])}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_shown(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return str(value)


def sources_line(p: Plan) -> str:
    return "\n" + para(
        f"Sources: {len(p.sources)} cited (see --format json); catalog {p.catalog_digest}, gpu-advisor {p.tool_version}"
    )


def _not_chosen_all(p: Plan, fmt: str) -> list[str]:
    return not_chosen_section(p, fmt, verbose=True)


def _diagnosis_or_nothing(p: Plan, fmt: str) -> list[str]:
    return diagnosis_section(p, fmt) or [line("the plan is feasible: nothing to diagnose", fmt)]


# `advisor plan --section NAME`: each part of the plan on its own ("summary" is the default view)
SECTIONS: dict[str, Callable[[Plan, str], list[str]]] = {
    "summary": lambda p, fmt: [],
    "buy": buy_section,
    "costs": cost_section,
    "jobs": jobs_section,
    "serving": serving_section,
    "constraints": constraints_section,
    "sensitivity": sensitivity_section,
    "robustness": robustness_section,
    "decision": decision_section,
    "not-chosen": _not_chosen_all,
    "diagnosis": _diagnosis_or_nothing,
    "warnings": warnings_section,
    "sources": lambda p, fmt: [sources_line(p).strip()],
}
assert tuple(SECTIONS) == NAMES, "present/sections.py lists the sections the CLI offers"
