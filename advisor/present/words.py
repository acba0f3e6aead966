"""Numbers in words for people: durations, rates, counts, dates, percentages, dollars. One
formatter per kind of number, shared by tables and memos."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from advisor.contract.numbers import usd
from advisor.durations import in_days

if TYPE_CHECKING:
    from advisor.contract import Plan
    from advisor.contract.jobs import Job
    from advisor.inputs.workload import Workload

# why a GPU cannot be used at all, in a few words, by the code of its primary reason (chart notes,
# the one-screen plan); a rule's own title says it for a rule
EXCLUDED = {
    "no-price": "no price",
    "no-purchase-price": "no purchase price",
    "no-rental-price": "no rental price",
    "no-server": "no priced server",
    "memory": "does not fit",
    "estimate": "speed unknown",
    "deadline": "misses the deadline",
    "deadline_limit": "misses the deadline",
    "gpu_count": "too many GPUs needed",
    "power": "over the power limit",
    "budget": "over budget",
    "slots": "no machine holds it",
    "combined": "limits conflict",
    "no-plan": "no plan meets the limits",
}
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def count_words(x: float) -> str:
    """10e9 -> '10 billion'."""
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if x >= scale:
            return f"{x / scale:,.3g} {word}"
    return f"{x:,.0f}"


def rate(x: float) -> str:
    """Three significant figures with separators: 72948 -> '72,900'."""
    if x <= 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(x))))
    return f"{round(x, -int(math.floor(math.log10(x))) + 2):,.{digits}f}"


def whole_or_two_digits(x: float) -> str:
    """A count of hours in whole units from ten up, two significant digits below ('0.12' for a 7-minute
    run's GPU-hours, where '0' said nothing), without an exponent ('0.0000014', not '1.4e-06')."""
    if round(x) >= 10 or x <= 0:
        return f"{x:,.0f}"
    return f"{float(f'{x:.2g}'):.{max(0, 1 - math.floor(math.log10(x)))}f}".rstrip("0").rstrip(".")


def amount(x: float | None, unit: str) -> str:
    """A binding row's slack in its unit: GPUs whole ('768 GPUs', not '768.00'); power to the watt
    ('0.865 kW', which the row's draw '0.575 of 1.44 kW' foots: at two decimals each rounded down, 0.57 +
    0.86); days as in_days says them (under two days in duration's words, where a deadline within the
    hour read '0.00 days'); dollars as every other amount of money is printed ('$2,366,743.23', not
    '2,366,743.23 USD' beside '$2,500,000.00'); anything else at two decimals."""
    x = x or 0.0
    if unit == "USD":
        return usd_cents(x)
    if unit == "days":
        return in_days(x, 2)
    if unit == "GPUs" and x == round(x):
        return f"{x:,.0f} GPU" + ("" if x == 1 else "s")
    return f"{x:,.3f} {unit}" if unit == "kW" else f"{x:,.2f} {unit}"


def months_phrase(n: float) -> str:
    """'36 months', '1 month', '1.5 months' (a horizon of one month reads 'over 1 month')."""
    return f"{n:g} month" + ("" if n == 1 else "s")


def unit_rate(x: float) -> str:
    """A rate in dollars with the digits that matter: $0.1241, $184.06, $2.99."""
    if x >= 1:
        return f"${x:,.2f}"
    digits = f"{x:.4f}".rstrip("0")
    return "$" + digits + "0" * max(0, 4 - len(digits))  # at least two decimals: $0.50, $0.0806


def quoted_rate(x: float) -> str:
    """An offer's price as it is quoted, with the digits it has (up to four decimals, at least two):
    $4.916 for AWS's H100 capacity block, which '$4.92' would misstate by $0.004 a GPU-hour."""
    whole, _, frac = f"{x:,.4f}".partition(".")
    frac = frac.rstrip("0")
    return f"${whole}.{frac + '0' * max(0, 2 - len(frac))}"


def pct(x: float, signed: bool = False) -> str:
    return f"{x:+,.0f}%" if signed else f"{x:,.0f}%"


def minimised(plan: Plan) -> str:
    """What the plan's present value is to the solve: least (--objective cost), or least among the
    plans that finish soonest (--objective time: the makespan first, then the cost at it)."""
    if plan.objective == "time":
        return "the least of the plans that finish soonest"
    return "what the plan minimises"


def own_speeds(plan: Plan, jobs: bool = True, serving: bool = True) -> list[str]:
    """'pretrain on 64× h100-sxm: speed from your measurement of ...' for each training job and serving
    class whose speed the user's own runs (a job's `measured:`, their calibrated estimator) set or moved."""
    # a training speed moved from a run elsewhere is said with its factor ("moved x 1.150 by your ...")
    rows = [
        (
            f"{j.name} on {j.gpu_count:,}× {j.gpu}",
            j.evidence_note if j.speed_evidence == "transferred" else j.speed_source,
        )
        for j in plan.jobs
        if jobs and j.speed_source
    ]
    rows += [(f"{r.name} on {r.gpu}", r.speed_source) for r in plan.serving if serving]
    return [f"{who}: speed {'' if src.startswith('moved') else 'from '}{src}" for who, src in rows if src]


def unproven(plan: Plan) -> str | None:
    """'best found, within 0.14% of optimal' for a feasible plan the solver did not prove optimal
    (its time limit ran out), None otherwise: every format's first line says it."""
    solver = plan.solver
    if not plan.feasible or solver.proven_optimal is not False:
        return None
    if solver.gap is None:
        return "best found, not proven optimal (the solver reported no gap)"
    gap = solver.gap
    within = f"{100 * gap:.2g}" if 100 * gap < 10 else f"{100 * gap:,.0f}"
    return f"best found, within {within}% of optimal"


def day(text: str | None) -> str:
    """'2022-10-12' -> '12 Oct 2022', '2023-08' -> 'Aug 2023', '2022' -> '2022'."""
    if not text:
        return "undated"
    parts = str(text).split("-")
    if len(parts) == 3:
        return f"{int(parts[2])} {MONTHS[int(parts[1]) - 1]} {parts[0]}"
    if len(parts) == 2:
        return f"{MONTHS[int(parts[1]) - 1]} {parts[0]}"
    return parts[0]


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def job_label(name: str, wl: Workload) -> str:
    """A workload's single unnamed job is called 'job' in the plan; the memo says 'training run'."""
    return "Training run" if len(wl.jobs) == 1 and not wl.jobs[0].name and name == "job" else name


def sentence(text: str) -> str:
    """Text as a sentence: a capital first letter, unless the first word is an id ('rtx-a6000 at RunPod',
    not 'Rtx-a6000'), and a full stop."""
    text = text.strip()
    first = text.split(" ", 1)[0]
    if not any(ch.isdigit() for ch in first):  # (every GPU and server id has a digit)
        text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def join(items: list[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def more_or_less(x: float, share: float | None = None) -> str:
    """A difference as a reader says it: '$3,213 more' or '$3,213 less' (never '$-3,213 more'), with its
    share of the whole when given ('$3,213 (15%) less'); a tie to the cent is 'no more' (not '$0 more')."""
    if round(x, 2) == 0:
        return "no more"
    pct_text = f" ({pct(share, True) if x >= 0 else pct(abs(share))})" if share is not None else ""
    return f"{usd(abs(x))}{pct_text} {'less' if x < 0 else 'more'}"


def footed(parts: list[float], total: float) -> tuple[list[str], str]:
    """`parts` that add up to `total`, printed so that the printed parts add up to the printed total,
    as a finance reader checks a sentence: whole dollars when those foot, else every figure to the
    cent (as the cost table prints them): never $9,689 + $31 + $1.69 beside $9,722. A total `usd` prints
    with its cents (under $10) is to the cent too: never "$4 in cash ($2 upfront and $2 for rental)" for $4.15."""
    whole = [round(x) for x in parts]
    if sum(whole) == round(total) and "." not in usd(total):
        return [f"${w:,}" for w in whole], f"${round(total):,}"
    return [usd_cents(x) for x in parts], usd_cents(total)


def usd_cents(x: float | None) -> str:
    """Dollars to the cent, as a finance table prints them so its rows add up: $9,007.06, -$1,210.57."""
    if x is None:
        return "n/a"
    return f"{'-' if x < 0 else ''}${abs(x):,.2f}"


def short(x: float) -> str:
    """Three significant figures with a K/M/B/T suffix, trailing zeros dropped: 40000 -> '40K',
    1.25e9 -> '1.25B', 612 -> '612' (chart axes, where space is short)."""
    x = float(f"{x:.3g}")  # rounded first, so 999,600 is '1M', never '1e+03K'
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:g}"


def usd_short(x: float) -> str:
    """Dollars on a chart axis: $40K, $1.2M, $500 (the axis never shows 4×10⁴)."""
    return ("-$" if x < 0 else "$") + short(abs(x))


def tokens(x: float | None) -> str:
    """A rate in tokens: 612, 72.9K, 1.23M (three significant figures, never '0.6K')."""
    if x is None:
        return "n/a"
    return rate(x) if x < 1e3 else short(x)


RENT_KIND_PHRASES = {
    "on_demand": "on demand",
    "reserved_1y": "on a 1-year reservation",
    "reserved_3y": "on a 3-year reservation",
    "capacity_block": "as a capacity block",
    "cluster_term": "on a cluster term",
    "spot": "as spot capacity (interruptible)",
    "marketplace": "on a marketplace",
    "serverless": "serverless",
}


def rent_phrase(kind: str | None) -> str:
    """How an offer is rented, in words: 'on demand', 'on a cluster term' (catalog `pricing`)."""
    return RENT_KIND_PHRASES[kind or "on_demand"]


def elapsed_days(job: Job) -> float:
    """The calendar days a job's running (its wall_days) takes: spread over its hours_a_day where it runs
    only in serving GPUs' off-peak hours (solve/constraints/at_once.off_peak_hours)."""
    return job.wall_days * 24 / job.hours_a_day if job.hours_a_day else job.wall_days


def nights_words(job: Job) -> str:
    """'2.7 days in 8-hour nights' for a job that runs only in lent off-peak hours, '' for one that runs
    around the clock (the jobs tables)."""
    return f"{in_days(elapsed_days(job))} in {job.hours_a_day:g}-hour nights" if job.hours_a_day else ""


def off_peak_words(job: Job) -> str:
    """', about 2.7 days in the serving GPUs' 8 off-peak hours a day' for a job that runs only in them,
    '' for one that runs around the clock (the plan's and the memo's sentences)."""
    if not job.hours_a_day:
        return ""
    return f", about {in_days(elapsed_days(job))} in the serving GPUs' {job.hours_a_day:g} off-peak hours a day"
