"""The decision's caveats in words, shared by the one-screen plan and the memo's recommendation:
a choice that holds in under HONEST_SHARE of the draws leads with that and with the alternative
that holds most often; a chosen GPU whose speed has no measured training run says so; the input
worth confirming first is named. Reads the typed Plan only."""

from __future__ import annotations

from advisor.contract import Plan
from advisor.contract.decision import Z_SWITCH, Decision
from advisor.contract.numbers import share_of_draws
from advisor.present.words import join, more_or_less, usd

HONEST_SHARE = 0.8  # below this share of draws, the plan leads with how often it holds


def headline(p: Plan) -> str | None:
    """'Holds in 32% of 200 draws of speed and price; 8× NVIDIA H100 SXM5 80GB (rent) is cheapest more
    often (52%)...' for a choice that holds in under HONEST_SHARE of the draws; None otherwise."""
    r = p.robustness
    if r is None or not r.draws or r.holds_share >= HONEST_SHARE:
        return None
    share = share_of_draws(r.holds, r.draws)
    text = f"this choice is the cheapest in {'' if share == 'none' else 'only '}{share} of {r.draws:,} draws of speed and price"
    if r.alternatives:
        best = r.alternatives[0]
        verb = "more" if best.share > r.holds_share else "most"
        text += f"; the alternative that holds {verb} often is {best.purchase} ({share_of_draws(round(best.share * r.draws), r.draws)})"
    d = p.decision
    if (
        d is not None
        and d.basis in ("expected", "p80", "p90")
        and r.alternatives
        and r.alternatives[0].share > r.holds_share
    ):
        what = {"expected": "expected cost", "p80": "80th-percentile cost", "p90": "90th-percentile cost"}[d.basis]
        text += f"; it is chosen on {what}, which weighs how much dearer the other plans' bad draws are"
    return text[:1].upper() + text[1:]


def unmeasured(p: Plan) -> str | None:
    """'No measured training run on NVIDIA ...: its speed is datasheet arithmetic (derated x0.8, ...)'
    when a chosen GPU's training speed rests on no run (jobs[].speed_evidence == datasheet)."""
    seen: dict[str, str] = {}
    for j in p.jobs:
        if j.speed_evidence == "datasheet" and j.gpu not in seen:
            d = j.derating
            stack = {"public": " for public software", "vendor_tuned": " for the vendor's tuned software"}
            seen[j.gpu] = (
                f"derated x{d.factor:g}{stack.get(d.software or '', '')}"
                + (f", {', '.join(d.source)}" if d.source else "")
                if d is not None
                else ""
            )
    if not seen:
        return None
    parts = [f"{g}" + (f" ({note})" if note else "") for g, note in seen.items()]
    return (
        f"No measured training run on {join(parts)}: the speed is datasheet arithmetic, so the plan's time "
        "and cost rest on the vendor's figures"
    )


def doubted(p: Plan) -> str | None:
    """'Check your measurement before committing: ... is implausibly slow ...' when a run the plan's
    speeds rest on looks wrong (a per-GPU figure entered as the whole run's): the plan follows it,
    so its first lines say so, not only its warnings."""
    doubts = list(dict.fromkeys(w.message for w in p.warnings if w.code == "measurement-doubt"))
    return f"Check your measurement before committing: {'; '.join(doubts)}" if doubts else None


def unquoted(p: Plan) -> str | None:
    """'No offer is evidenced at the size rented: ...' when a rented order is above the largest its
    offer publishes or its sources show on sale (code quote-needed): its rate is then an assumption,
    said on the first lines, not only among the warnings."""
    found = list(dict.fromkeys(w.message for w in p.warnings if w.code == "quote-needed"))
    return f"No offer is evidenced at the size rented: {'; '.join(found)}" if found else None


def cautions(p: Plan) -> list[str]:
    """What a plan says before its choice: a choice that rarely holds, a speed no run measured, a
    run of the user's that looks wrong, a rate not evidenced at the size bought."""
    return [text for text in (headline(p), unmeasured(p), doubted(p), unquoted(p)) if text]


def cost_only(p: Plan) -> str | None:
    """Why a plan under `--objective time` has no robustness verdict, decision basis or inputs to
    verify: they draw and score the plans' costs, and the plan is the shortest makespan's."""
    if p.objective != "time" or p.robustness is not None:
        return None
    return (
        "not made: --objective time chooses the shortest makespan; the draws of speed and price, the "
        "decision basis and the inputs worth verifying score the cheapest plan (--objective cost)"
    )


def verify_first(p: Plan) -> str | None:
    """'Before committing, get a firm quote for ...: up to $X at stake.' from the top verify item."""
    d = p.decision
    if d is None or not d.verify:
        return None
    top = d.verify[0]
    return f"Before committing: {top.message}."


def robustness_cost(p: Plan) -> str | None:
    """'Choosing on the point estimates instead would be expected to cost $X more (fresh draws).'"""
    d = p.decision
    if d is None or d.price_of_robustness_usd is None or d.point_optimal is None:
        return None
    loss = d.price_of_robustness_usd
    if not loss and not d.fresh_draws:  # the point plan is the chosen one: nothing to lose, and said so
        return "The plan at the point estimates is this one, so the price of robustness is $0."
    what = ", ".join(f"{x['count']}× {x['gpu']} ({x['ownership']})" for x in d.point_optimal.get("purchase", []))
    return (
        f"The plan at the point estimates ({what}) is expected to cost {more_or_less(loss)} "
        "than this one (the price of robustness, on "
        f"{d.fresh_draws or 0:,} fresh draws{noise(d)})."
    )


def chosen_on(d: Decision) -> str:
    """'chosen on the P80 cost over 20,000 draws', or for `decision: point` 'chosen at the point
    estimates; over 20,000 draws' (its figures over the draws follow: it was not chosen on them)."""
    if d.basis == "point":
        return "chosen at the point estimates" + (f";{over_draws(d)}" if over_draws(d) else "")
    return f"chosen on the {d.basis.upper() if d.basis.startswith('p') else d.basis} cost" + over_draws(d)


def over_draws(d: Decision) -> str:
    """' over 20,000 draws': the draws the decision's figures are over (the scoring draws, else the
    workload's), '' without any."""
    n = d.scored_draws or d.draws
    return f" over {n:,} draws" if n else ""


def expected(d: Decision) -> str:
    """'$50,825 (±$1,234 at 2 standard errors)': the mean cost over the draws with its Monte-Carlo
    error, so a reader does not take the dollar for exact (review 13: 2-4% on 200 draws)."""
    se = d.expected_cost_se_usd
    band = f" (±{usd(Z_SWITCH * se)} at {Z_SWITCH:g} standard errors)" if se else ""
    return usd(d.expected_cost_usd) + band


def noise(d: Decision) -> str:
    """', within its noise (2 standard errors: $4,300)' or ', ±$4,300 at 2 standard errors': the
    Monte-Carlo error of the price of robustness, so a difference smaller than its noise is not read
    as a saving."""
    se = d.price_of_robustness_se_usd
    if not se:
        return ""
    band = Z_SWITCH * se
    if abs(d.price_of_robustness_usd or 0.0) < band:
        return f", within its noise ({Z_SWITCH:g} standard errors: {usd(band)})"
    return f", ±{usd(band)} at {Z_SWITCH:g} standard errors"


def why_dearer(plan: Plan) -> str:
    """Why the recommendation can cost more at the catalog's figures than another option: chosen on its
    cost over the draws (expected, P80, P90), or, at the point estimates, only within the solver's gap."""
    d = plan.decision
    if d is not None and d.basis != "point":
        return f"the recommendation was chosen on its {d.basis} cost over the draws"
    return "within the solver's gap, the recommendation stands"


def schedule_misses(plan: Plan) -> int:
    """The jobs the plan warns miss their deadline on its own earliest-deadline-first schedule
    (`deadline-schedule`): a sentence claiming every deadline is met says otherwise."""
    return sum(1 for w in plan.warnings if w.code == "deadline-schedule")
