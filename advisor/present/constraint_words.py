"""The sentences a plan prints about its constraints, from the typed facts the constraint families
compute (contract/facts.py): the binding table, the diagnosis of an infeasible workload, the limit
that rules out a GPU type, and the marginal values. Each function returns the JSON object of the
plan contract (advisor/contract/explanations.py), keys in the contract's order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.contract.facts import BINDING_TOLERANCE, Lever, Marginal, Shortfall, Slack
from advisor.contract.numbers import whole_cents
from advisor.durations import DAYS_FROM_HOURS, deadline_phrase, duration, in_days
from advisor.present.words import whole_or_two_digits

if TYPE_CHECKING:
    from advisor.contract.diagnosis_facts import Combination, Diagnosis, WorkloadLever

ARTICLE = {"office": "an office", "datacenter": "a datacenter", "cloud": "the cloud"}
BASIS = {"cash": "cash paid over the horizon", "present_value": "present value"}
KEPT = {
    "deadline": "deadline",
    "budget": "budget",
    "power": "power limit",
    "gpu_count": "GPU count",
    "horizon": "horizon",
    "lead_time": "lead times",
}
JSON = dict[str, Any]


def origin(rule: str | None, message: str | None) -> str:
    """' (PWR001: the office default, ...)' when a rule, not the workload, set a limit."""
    return f" ({rule}: {message})" if rule and message else ""


def _share(part: float, whole: float) -> str:
    pct = 100 * part / whole if whole else 0.0
    return "under 0.01%" if 0 < pct < 0.01 else f"{pct:.2g}%" if pct < 1 else f"{pct:.0f}%"  # never 2.5e-12%


def _si(x: float) -> str:
    for div, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if x >= div:
            return f"{x / div:,.3g}{unit}"
    return whole_or_two_digits(x)  # (a minute's work read '0 GPU-hours')


# ---------------------------------------------------------------------- the binding table
def _slack_words(s: Slack) -> str:
    f = s.facts
    if s.family == "deadline":
        start = f", after {in_days(f['start_days'])} for the hardware to arrive" if f.get("start_days") else ""
        if f.get("wait_days"):
            start += f" and {in_days(f['wait_days'])} for the jobs due before it to free its GPUs"
        if 24 * s.limit < DAYS_FROM_HOURS:  # a deadline said in hours or minutes: not '0.03 of 0.0291667 days'
            return (
                f"{f['job']} finishes in {in_days(s.used, 2)} of its {deadline_phrase(24 * s.limit)} at the "
                f"P{round(100 * f['confidence'])} job time ({in_days(f['estimate_days'], 2)} estimated{start})"
            )
        return (
            f"{f['job']} finishes in {s.used:.2f} of {s.limit:g} days at the P{round(100 * f['confidence'])} "
            f"job time ({f['estimate_days']:.2f} estimated{start})"
        )
    if s.family == "budget":
        return f"uses {budget_usd(s.used, s.limit)} of the {budget_usd(s.limit)} budget ({BASIS[f['basis']]})"
    if s.family == "power":
        return f"owned GPUs and servers draw {s.used:.3f} of {s.limit:g} kW{origin(s.rule, f.get('origin'))}"  # (watts)
    if s.family == "gpu_count":
        if f.get("exact"):
            return f"exactly {s.limit:.0f} GPU{'' if round(s.limit) == 1 else 's'}, as the workload asks"
        bound = "at least {:.0f} asked" if f["bound"] == "min" else "at most {:.0f} allowed"
        return f"{s.used:.0f} GPU{'' if round(s.used) == 1 else 's'}, " + bound.format(s.limit)
    if s.family == "stock":
        return f"{s.used:.0f} of the {s.limit:.0f} {f['gpu']} in stock bought or rented at once"
    if s.family == "serving":
        return f"{f['name']}: replicas sustain {s.used:,.2f} requests/s under the SLO at a peak of {s.limit:,.2f}"
    if s.family == "horizon":
        return (
            f"{f['job']} finishes in {s.used:.2f} days at the P{round(100 * f['confidence'])} job time, within "
            f"the {f['months']:g}-month horizon ({s.limit:,.0f} days)"
        )
    return f"{s.constraint}: {s.used:g} of {s.limit:g} {s.unit}"


ROUNDING = {"USD": 2, "GPUs": 0}


def binding_row(s: Slack) -> JSON:
    """One row of the plan's `binding` table."""
    digits = ROUNDING.get(s.unit, 4)
    slack = int(s.slack) if digits == 0 else round(s.slack, digits)
    row: JSON = {
        "constraint": s.constraint,
        "binding": s.binding,
        "message": _slack_words(s),
        "slack": slack,
        "unit": s.unit,
    }
    if s.family == "power":
        row["rule"] = s.rule
    return row


def budget_usd(usd: float, budget: float | None = None) -> str:
    """A budget as written (`budget` None), or an amount beside it, at the budget's precision: to the cent,
    or to the fraction of a cent the budget has ($37,930.2065 of the $37,930.209 budget, not $37,930.21:
    printed to the cent, a plan within it would read as above it; solve/constraints/budget.cap)."""
    limit = usd if budget is None else budget
    if whole_cents(limit):
        return f"${usd:,.2f}"
    places = next(p for p in range(3, 13) if abs(limit * 10**p - round(limit * 10**p)) < 1e-6 or p == 12)
    return f"${usd:,.{max(places, 4)}f}" if budget is not None else f"${usd:,.{places}f}"


# ---------------------------------------------------------------------- the diagnosis
def _shortfall_words(s: Shortfall) -> str:
    if s.family == "budget":
        return (
            f"the cheapest plan with no limits costs {budget_usd(s.needed, s.limit)} ({BASIS[s.facts['basis']]}); the "
            f"{budget_usd(s.limit)} budget is {_share(s.limit, s.needed)} of it"
        )
    if s.family == "power":
        return (
            f"the cheapest plan with no limits draws {s.needed:.2f} kW; the power limit is {s.limit:g} kW"
            f"{origin(s.facts.get('rule'), s.facts.get('origin'))}"
        )
    if s.family == "deadline":
        return f"the cheapest plan with no limits takes {in_days(s.needed)}; the deadline is {duration(24 * s.limit)}"
    if s.family == "gpu_count":
        return f"the cheapest plan with no limits uses {s.needed:,.0f} GPUs; the GPU limit is {s.limit:,.0f}"
    if s.family == "horizon":
        return (
            f"the cheapest plan with no limits takes {s.needed:,.1f} days; every job must finish within the "
            f"{s.facts['months']:g}-month horizon ({s.limit:,.0f} days) the plan is costed over"
        )
    if s.family == "lead_time":
        lead = s.facts.get("lead")
        why = f" ({lead.confidence} confidence: {lead.note})" if lead is not None and lead.note else ""
        return (
            f"bought {s.facts['gpu']} GPUs take {in_days(s.needed)} to arrive and burn in{why}; with "
            f"{in_days(s.facts['job_days'])} of work, {s.facts['job']} cannot finish by its "
            f"{deadline_phrase(24 * s.limit)}"
        )
    return f"the cheapest plan with no limits needs {s.needed:g}; the limit is {s.limit:g}"


NEEDED_DIGITS = {"budget": 2, "power": 3, "deadline": 3, "horizon": 3, "lead_time": 3}


def _lever_words(lv: Lever) -> str:
    f = lv.facts
    if lv.family == "deadline":
        return (
            f"extend the deadlines by {100 * (f['scale'] - 1):.0f}% (the {deadline_phrase(24 * lv.limit)} to "
            f"{in_days(lv.needed)})"
        )
    if lv.family == "budget":
        return (
            f"raise the budget from {budget_usd(lv.limit)} to ${lv.needed:,.0f} ({BASIS[f['basis']]}; the budget is "
            f"{_share(lv.limit, f.get('cost', lv.needed))} of the cheapest plan within the other limits)"
        )
    if lv.family == "power":
        return (
            f"raise the power limit from {lv.limit:g} kW to {lv.needed:.2f} kW (deployment.power_limit_kw)"
            f"{origin(lv.rule, f.get('origin'))}"
        )
    if lv.family == "gpu_count":
        return (
            f"allow {lv.needed:.0f} GPUs instead of {'exactly' if f['exact'] else 'at most'} {lv.limit:.0f} "
            f"({f['field']})"
        )
    if lv.family == "horizon":
        return (
            f"plan over a {lv.needed:g}-month horizon instead of {lv.limit:g} months (deployment.horizon_months): "
            "the work does not finish within the horizon (re-solved)"
        )
    if lv.family == "lead_time":
        return (
            f"the bought hardware arrives too late ({lv.limit:,.0f} days or more to arrive and burn in): with it "
            "already in hand a plan exists (re-solved); rent for those weeks (ownership: any) or set a later "
            "deadline"
        )
    return f"relax {lv.constraint} to {lv.needed:g}"


def _combination_words(c: Combination) -> str:
    words = {
        "deadline": "the deadline to {:,.1f} days",
        "budget": "the budget to ${:,.0f}",
        "power": "the power limit to {:.2f} kW",
        "gpu_count": "the GPU count to {:,.0f}",
        "horizon": "the horizon to {:g} months",
        "lead_time": "lead times to {:g} days",
    }
    lead = f"keep the {KEPT[c.kept]} as written and raise " if c.kept else "raise "
    return (
        "no single change is enough; together: "
        + lead
        + ", ".join(words[family].format(value) for family, value in c.needs)
        + " (re-solved: a plan exists)"
    )


def _workload_lever_words(w: WorkloadLever) -> str:
    ((key, value),) = w.relaxation.items()
    if key == "deployment.context":
        return f"deploying in {ARTICLE[value]} instead of {ARTICLE[w.was]} gives a plan"
    if key == "deployment.ownership":
        return "allowing rented as well as bought GPUs (ownership: any) gives a plan"
    if key == "deployment.rent_kinds":
        return f"allowing these rental kinds (deployment.rent_kinds: {value}) gives a plan"
    return (
        f"a global batch {value:g}x larger (jobs[].global_batch_tokens) lets more GPUs share each step and gives a plan"
    )


def diagnosis_row(d: Diagnosis) -> JSON:
    """One entry of the plan's `diagnosis` (its facts' classes imported here: only a diagnosis makes them)."""
    from advisor.contract.diagnosis_facts import (
        Combination,
        Elsewhere,
        NoCandidate,
        Nothing,
        WorkloadLever,
        WorkShortfall,
    )

    if isinstance(d, NoCandidate):
        return {
            "constraint": f"job:{d.job}",
            "relaxation": None,
            "kind": "shortfall",
            "message": f"no allowed GPU can run {d.job} at all; see `rejected` for each GPU's reasons",
        }
    if isinstance(d, WorkShortfall):
        return {
            "constraint": "shortfall:work",
            "relaxation": None,
            "kind": "shortfall",
            "gpu": d.gpu,
            "gpu_hours": round(d.gpu_hours),
            "message": f"the work needs about {_si(d.gpu_hours)} GPU-hours on {d.gpu_name} "
            "(the fewest of any allowed GPU)",
        }
    if isinstance(d, Shortfall):
        needed = round(d.needed, NEEDED_DIGITS[d.family]) if d.family in NEEDED_DIGITS else int(d.needed)
        return {
            "constraint": d.constraint,
            "relaxation": None,
            "kind": "shortfall",
            "needed": needed,
            "message": _shortfall_words(d),
        }
    if isinstance(d, Lever):
        row: JSON = {"constraint": d.constraint, "relaxation": dict(d.relaxation), "kind": "lever"}
        if d.family == "power":
            row["rule"] = d.rule
        return {**row, "message": _lever_words(d)}
    if isinstance(d, WorkloadLever):
        return {
            "constraint": d.kind,
            "message": _workload_lever_words(d),
            "relaxation": dict(d.relaxation),
            "kind": "lever",
        }
    if isinstance(d, Combination):
        return {
            "constraint": "combined",
            "relaxation": dict(d.relaxation),
            "kind": "lever",
            "message": _combination_words(d),
        }
    if isinstance(d, Elsewhere):
        where = ", ".join(f"deployment.{k}: {v}" for k, v in d.change.items())
        return {
            "constraint": "combined",
            "kind": "lever",
            "relaxation": {**{f"deployment.{k}": v for k, v in d.change.items()}, "limits": "none"},
            "message": f"only with {where} and no deadline, budget, power or GPU-count limit does a plan "
            f"exist (re-solved: ${d.cost_usd:,.0f}, {d.days:,.1f} days)",
        }
    assert isinstance(d, Nothing)
    return {
        "constraint": "combined",
        "relaxation": None,
        "kind": "nothing",
        "message": "nothing within the bounds tried gives a plan: no deadline, no budget, no power limit, "
        f"up to {d.max_gpus:,} GPUs per job, a global batch up to 4x larger, buying or renting, in an "
        "office, a datacenter or the cloud",
    }


# ---------------------------------------------------------------------- a GPU type not chosen
CODES = {"deadline": "deadline_limit", "budget": "budget", "power": "power", "gpu_count": "gpu_count"}


def limit_reason(lv: Lever, name: str) -> JSON:
    """Why no plan using only GPU type `name` exists: the limit `lv` relaxes, with its number."""
    f = lv.facts
    if lv.family == "gpu_count":
        why = "to meet the deadline" if f["deadlines"] else "to hold and run the job"
        cap = f"gpus.count is {lv.limit:.0f}" if f["exact"] else f"gpus.max is {lv.limit:.0f}"
        return {
            "rule": None,
            "code": "gpu_count",
            "needed": lv.needed,
            "limit": lv.limit,
            "message": f"{name} needs >= {lv.needed:.0f} GPUs {why}; {cap}",
        }
    if lv.family == "power":
        out: JSON = {"rule": None, "code": "power", "needed": round(lv.needed, 3), "limit": lv.limit}
        if lv.rule is not None:
            out["limit_rule"] = lv.rule
        return {
            **out,
            "message": f"the cheapest plan using only {name} draws {lv.needed:.2f} kW; the power limit "
            f"is {lv.limit:g} kW{origin(lv.rule, f.get('origin'))}",
        }
    if lv.family == "budget":
        return {
            "rule": None,
            "code": "budget",
            "needed": round(lv.needed, 2),
            "limit": lv.limit,
            "message": f"the cheapest plan using only {name} costs ${lv.needed:,.2f} ({BASIS[f['basis']]}); "
            f"the budget is {budget_usd(lv.limit)}",
        }
    if lv.family == "lead_time":
        return {
            "rule": None,
            "code": "lead_time",
            "needed": lv.needed,
            "limit": lv.limit,
            "message": f"bought {name} GPUs arrive too late ({lv.limit:,.0f} days or more to arrive and burn in) to "
            "finish the work by its deadline",
        }
    if lv.family == "horizon":
        return {
            "rule": None,
            "code": "horizon",
            "needed": lv.needed,
            "limit": lv.limit,
            "message": f"the jobs take longer than the {lv.limit:g}-month horizon on {name}; they would need "
            f"{lv.needed:g} months",
        }
    return {
        "rule": None,
        "code": CODES.get(lv.family, lv.family),
        "needed": round(lv.needed, 3),
        "limit": lv.limit,
        "message": f"{name} needs >= {in_days(lv.needed)} even at its fastest allowed plan; the deadline is "
        f"{duration(24 * lv.limit)}",
    }


# ---------------------------------------------------------------------- marginal values
def _horizon_marginal(m: Marginal, tol: str) -> str:
    """A month more of a horizon that comes before a deadline (bought GPUs are held at most to it)."""
    if m.saving_usd > 0.5:
        return (
            f"one more month of horizon saves ${m.saving_usd:,.0f}: bought GPUs are held at most to the horizon, "
            + ("which binds" if m.binding else f"and a cheaper plan needs more than its {in_days(m.slack, 2)} of slack")
        )
    state = (
        f"binds ({in_days(m.slack, 2)} of slack, under {tol})"
        if m.binding
        else f"does not bind ({in_days(m.slack, 2)} of slack)"
    )
    return f"one more month of horizon saves nothing: the horizon {state}"


def _deadline_marginal(m: Marginal, tol: str) -> str:
    """One more day on every deadline (an hour under two days, a minute under one: the deadline's unit)."""
    unit = m.unit
    one, slack = ("an hour" if unit == "hour" else f"a {unit}"), in_days(m.slack, 2)
    if m.saving_usd > 0.5:
        later = "" if m.binding else f" (the plan has {slack} of slack, but a cheaper plan needs up to {one} more)"
        return f"one more {unit} on every deadline saves ${m.saving_usd:,.0f}{later}"
    if m.binding:
        return (
            f"one more {unit} on the deadline saves nothing: the deadline binds ({slack} of slack, under {tol}), "
            f"but no cheaper plan finishes within {one} more"
        )
    return f"one more {unit} on the deadline saves nothing: the deadline does not bind ({slack} of slack)"


def marginal_row(m: Marginal) -> JSON:
    """What one more day of deadline (its unit), month of horizon or 10% of budget saves, with binding."""
    tol = f"{100 * BINDING_TOLERANCE:g}%"
    if m.family == "deadline":
        msg = _deadline_marginal(m, tol)
    elif m.family == "horizon":
        msg = _horizon_marginal(m, tol)
    elif m.saving_usd > 0.5:
        msg = f"10% more budget saves ${m.saving_usd:,.0f}"
    elif m.binding:
        msg = f"10% more budget changes nothing: the budget binds (under {tol} left), but no cheaper plan needs more"
    else:
        msg = f"10% more budget changes nothing: the budget does not bind (${m.slack:,.0f} left)"
    return {"change": m.change, "saving_usd": m.saving_usd, "binding": m.binding, "message": msg}
