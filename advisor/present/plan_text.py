"""`advisor plan` for a terminal (fitted to its width) or a document (Markdown), and its bill of
materials as CSV: the sections (present/plan_sections.py) put together, or the decision on one
screen (present/plan_summary.py)."""

from __future__ import annotations

from typing import Any

from advisor.contract import Plan
from advisor.contract.context import PlanContext
from advisor.errors import InputError, suggest
from advisor.present.grid import csv_text
from advisor.present.plan_sections import (
    SECTIONS,
    as_plan,
    buy_section,
    constraints_section,
    cost_section,
    decision_section,
    diagnosis_section,
    jobs_section,
    line,
    not_chosen_section,
    robustness_section,
    sensitivity_section,
    serving_section,
    sources_line,
    title_lines,
    warnings_section,
)
from advisor.present.plan_summary import summary_text


def plan_text(
    plan: Plan | dict[str, Any],
    fmt: str = "table",
    *,
    verbose: bool = False,
    full: bool = True,
    section: str | None = None,
    context: PlanContext | None = None,
) -> str:
    """The plan for a terminal (fmt='table', fitted to its width) or a document (fmt='markdown'):
    every part (full), the decision on one screen (full=False), or one `section` (SECTIONS).
    GPUs not chosen for the same primary reason share a row; verbose lists every reason. The
    context (the catalog behind the plan) lets the one-screen view group GPUs by family."""
    p = as_plan(plan)
    if section == "summary" or (section is None and not full):
        return summary_text(p, context, fmt)
    if section is not None:
        if section not in SECTIONS:
            raise InputError(
                f"unknown section {section!r}{suggest(section, SECTIONS)}; sections: {', '.join(SECTIONS)}",
                field="section",
            )
        out = SECTIONS[section](p, fmt) or [line(f"this plan has no {section.replace('-', ' ')}", fmt)]
        return "\n".join(out).lstrip("\n") + "\n"
    out = title_lines(p, fmt)
    for part in (
        buy_section,
        cost_section,
        jobs_section,
        serving_section,
        constraints_section,
        sensitivity_section,
        robustness_section,
        decision_section,
    ):
        out += part(p, fmt)
    out += not_chosen_section(p, fmt, verbose)
    out += diagnosis_section(p, fmt) + warnings_section(p, fmt)
    out.append(sources_line(p))
    return "\n".join(out) + "\n"


def plan_csv(plan: Plan | dict[str, Any]) -> str:
    """The bill of materials, one row per item bought or rented (GPUs and servers), plain numbers."""
    p = as_plan(plan)
    rows: list[list[Any]] = [
        [
            "gpu",
            i.gpu,
            i.count,
            i.ownership,
            i.unit_price_usd,
            "usd" if i.ownership == "buy" else "usd_per_gpu_hour",
            i.gpu_hours,
        ]
        for i in p.purchase
    ]
    rows += [["server", s.server, s.count, "buy", s.unit_price_usd, "usd", None] for s in p.servers]
    return csv_text(["type", "item", "count", "ownership", "unit_price", "unit", "gpu_hours"], rows)
