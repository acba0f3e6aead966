"""Why each allowed GPU type was not chosen: one primary reason per GPU, by a fixed precedence,
then the others (shown with `advisor plan --verbose`).

Precedence (PRECEDENCE below): a rule that forbids it; then availability (no price for any
ownership the workload allows); then what makes it unable to run the job (memory, an unknown
figure, the deadline even on the most GPUs); then the limit that makes a plan using only it
infeasible, named with its number ("needs >= 12 GPUs to meet the deadline; gpus.max is 8"),
found by re-solving; then cost (the best plan using only it, re-solved). The primary reason is
first in `reasons` and carries `primary: true`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from advisor.data.catalog import GPU
from advisor.data.catalog_prices import RENT_KINDS
from advisor.inputs.deployment import DEFAULT_RENT_KINDS
from advisor.inputs.quantities import MAX_GPUS
from advisor.perf import evaluate, min_gpus, params_from
from advisor.solve.constraints import FAMILIES
from advisor.solve.constraints.gpu_count import fleet_size
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

AVAILABILITY = ("no-price", "no-purchase-price", "no-rental-price", "no-server")
CAPABILITY = ("memory", "estimate", "deadline", "fabric")
PRECEDENCE = ("rule", "availability", "capability", "constraint", "cost", "other", "warning")


def _rank(reason: dict, unavailable: bool) -> int:
    """Position of a reason in PRECEDENCE (smaller first)."""
    if reason.get("rule"):
        return PRECEDENCE.index("warning" if reason.get("severity") == "warn" else "rule")
    code = reason.get("code")
    if code in AVAILABILITY:
        return PRECEDENCE.index("availability" if unavailable else "other")
    if code in CAPABILITY:
        return PRECEDENCE.index("capability")
    if code in ("limit", "combined", "slots", "arrives-too-late"):
        return PRECEDENCE.index("constraint")
    return PRECEDENCE.index("cost" if code == "cost" else "other")


def rent_kinds_lacking(gpu: GPU, kinds: Sequence[str]) -> tuple[str, str]:
    """('reserved-1y rental rate', 'it has on-demand and spot offers: add them to deployment.rent_kinds
    to rent it'): the rental rate a GPU with no offer of the workload's `kinds` lacks, named by those
    kinds (any rate under the default kinds), and the change that would rent it where it has offers of
    other kinds ('' where it has none)."""
    listed = list(dict.fromkeys(kinds))
    words = [k.replace("_", "-") for k in listed]
    what = "rental rate" if set(listed) >= set(DEFAULT_RENT_KINDS) else f"{' or '.join(words)} rental rate"
    others = [k.replace("_", "-") for k in RENT_KINDS if k not in listed and gpu.rentals(k)]
    if not others:
        return what, ""
    named = " and ".join([", ".join(others[:-1]), others[-1]] if len(others) > 1 else others)
    return what, (
        f"it has {named} offers: add {'it' if len(others) == 1 else 'them'} to deployment.rent_kinds to rent it"
    )


def _price_reasons(gpu: GPU, out: list[dict], codes: set, only_way: set, kinds: Sequence[str]) -> list[dict]:
    """No price at all is one reason, not two contradictory ones; and when the one ownership the
    workload allows (`only_way`) has no price, the reason says so, with the rental kinds it lacks and
    the change to `rent_kinds` that would rent it."""
    what_rent, widen = rent_kinds_lacking(gpu, kinds)
    if {"no-purchase-price", "no-rental-price"} <= codes:
        out = [r for r in out if r.get("code") not in ("no-purchase-price", "no-rental-price")]
        out.append(
            {
                "rule": None,
                "code": "no-price",
                "message": f"{gpu.name} has neither a sourced purchase price nor a sourced {what_rent} in "
                f"the catalog, so it can be neither bought nor rented ({widen or 'give a quote with --catalog'})",
            }
        )
    if len(only_way) == 1:
        only = next(iter(only_way))
        missing_code = "no-purchase-price" if only == "buy" else "no-rental-price"
        for r in out:
            if r.get("code") == missing_code:
                what = "purchase price" if only == "buy" else what_rent
                r["message"] = (
                    f"{gpu.name} has no sourced {what} in the catalog, and this workload only "
                    f"{'buys' if only == 'buy' else 'rents'} (deployment.ownership: {only}); "
                    + ((only == "rent" and widen) or "give a quote with --catalog")
                )
    return out


def ordered(problem: Problem, gid: str, reasons: list[dict]) -> list[dict]:
    """The reasons of one GPU, merged (no price at all is one reason, not two contradictory ones),
    explained (`none` becomes what the estimate says) and sorted by PRECEDENCE; the first gets
    primary: true."""
    gpu = problem.catalog.gpus[gid]
    codes = {r.get("code") for r in reasons}
    wl = problem.workload
    allowed = (
        {"rent"}
        if wl.deployment.context == "cloud"
        else ({"buy", "rent"} if wl.deployment.ownership == "any" else {wl.deployment.ownership})
    )
    missing = ({"buy"} if "no-purchase-price" in codes or "no-server" in codes else set()) | (
        {"rent"} if "no-rental-price" in codes else set()
    )
    unavailable = allowed <= missing
    out = [dict(r) for r in reasons if r.get("code") != "none"]
    out = _price_reasons(gpu, out, codes, set(allowed) if unavailable else set(), wl.deployment.rent_kinds)
    if not out:
        out.append(_unexplained(problem, gid))
    out.sort(key=lambda r: _rank(r, unavailable))
    for i, r in enumerate(out):
        r["primary"] = i == 0
    return out


def _unexplained(problem: Problem, gid: str) -> dict:
    """A GPU with no candidate and no recorded reason: ask the estimate why (an unknown figure)."""
    gpu, params = problem.catalog.gpus[gid], params_from(problem.catalog)
    for cls in problem.classes:
        n = min_gpus(cls.spec, gpu, params)
        est = evaluate(cls.spec, gpu, n or 1, params)
        if est.reason:
            return {
                "rule": None,
                "code": "estimate",
                "message": f"{cls.name(problem.workload)}: {est.reason}, so its speed cannot be estimated",
            }
    return {
        "rule": None,
        "code": "estimate",
        "message": f"{gpu.name}: no GPU count gives a training speed the estimate can state",
    }


def alternatives(problem: Problem, sol: Solution, settings: SolveSettings) -> dict:
    """gpu id -> {forced_cost_usd, forced_ownership, reasons} for every considered GPU type the plan
    did not use (rejected ones included), primary reason first."""
    used = sol.gpu_types()
    out: dict[str, dict[str, Any]] = {}
    for gid in problem.considered:
        if gid in used:
            continue
        if gid in problem.rejected:
            out[gid] = {"forced_cost_usd": None, "reasons": ordered(problem, gid, problem.rejected[gid].reasons)}
            continue
        base = baseline(problem).but(only_gpu=gid)
        forced = solve(problem, base, settings)
        name = problem.catalog.gpus[gid].name
        if not forced.feasible:
            out[gid] = {
                "forced_cost_usd": None,
                "reasons": ordered(problem, gid, infeasible_reasons(problem, base, name, settings)),
            }
            continue
        cost, chosen = forced.objective_usd or 0.0, sol.objective_usd or 0.0
        delta = cost - chosen
        pct = 100 * delta / chosen if chosen else 0.0
        what = ", ".join(
            sorted(
                {f"{c.count}× {c.ownership}" for c in forced.chosen}
                | {
                    f"{sum(c.gpus * n for c, n in forced.serving if c.ownership == o)}× {o} serving"
                    for o in {c.ownership for c, _ in forced.serving}
                }
            )
        )
        reason = {
            "rule": None,
            "code": "cost",
            "message": f"the best plan using only {name} ({what}) costs ${forced.objective_usd:,.0f}, "
            f"${delta:,.0f} ({pct:+.1f}%) more than the chosen plan",
        }
        if (
            size := fleet_size(forced, problem=problem)
        ) > MAX_GPUS:  # no offer exists at that size: not a price to quote
            out[gid] = {
                "forced_cost_usd": None,
                "reasons": ordered(problem, gid, [_beyond_any_plan(name, size, what)]),
            }
            continue
        owns = sorted({c.ownership for c in forced.chosen} | {c.ownership for c, _ in forced.serving})
        offers = forced.rented_offers(gid)
        out[gid] = {
            "forced_cost_usd": forced.objective_usd,
            "forced_ownership": owns[0] if len(owns) == 1 else "mixed",
            "reasons": ordered(problem, gid, [reason]),
        }
        if offers:  # the rate it was costed at: a serving replica's offer is the one that holds it
            o = offers[0]
            out[gid]["forced_rental"] = {
                "provider": o.provider,
                "usd_per_gpu_hour": o.usd_per_gpu_hour,
                "as_of": o.as_of,
                "source": list(o.source),
            }
    return out


def _beyond_any_plan(name: str, size: int, what: str) -> dict[str, Any]:
    """The reason a GPU type is not chosen when its only plan needs more GPUs at once than the tool lets any
    plan hold (inputs.quantities.MAX_GPUS, the most a workload's gpus.max may be)."""
    return {
        "rule": None,
        "code": "size",
        "message": f"the only plan using {name} alone needs {size:,} GPUs at once ({what}), more than any plan may "
        f"hold (gpus.max at most {MAX_GPUS:,}): it is not priced",
    }


def infeasible_reasons(problem: Problem, sc: Scenario, name: str, settings: SolveSettings) -> list[dict]:
    """Why no plan under `sc` exists (used for one GPU type: sc.only_gpu): each constraint family
    whose limit, lifted alone, gives a plan, with the number the cheapest such plan needs (found by
    re-solving; a `fact` present/constraint_words.limit_reason words); else that the limits conflict
    together; else that nothing hosts it."""

    def run(p: Problem, s: Scenario) -> Solution:
        return solve(p, s, settings)

    out: list[dict[str, Any]] = [
        {"rule": None, "code": "limit", "fact": lv}
        for family in FAMILIES
        if (lv := family.lever(problem, sc, run, exact=False)) is not None
    ]
    if out:
        return out
    lifted: dict[str, Any] = {}
    for family in FAMILIES:
        lifted.update(family.lifted())
    limits = f"{'deadline, ' if problem.classes else ''}budget, power and GPU-count limits"
    if run(problem, sc.but(**lifted)).feasible:
        return [
            {
                "rule": None,
                "code": "combined",
                "message": f"no plan using only {name} meets the {limits} together, though no single one of "
                "them alone rules it out",
            }
        ]
    held = [r for r in problem.serve_reasons.get(sc.only_gpu or "", []) if r.get("code") == "no-offer-holds"]
    return [
        {
            "rule": None,
            "code": "slots",
            "message": f"even without the {limits} no plan uses only {name}: no allowed machine (or costed "
            "network between machines) holds the GPUs it needs"
            + ("" if not held else ", and no rental offer holds a replica some request class needs"),
        },
        *held,
    ]
