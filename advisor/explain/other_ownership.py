"""The other way to own (issue 29 item 5): beside every plan, the best plan that rents everything
when the plan buys, or buys everything when it rents, under the same limits. Where the workload
allows both, one re-solve with the ownership fixed (Scenario.ownership); where it allows one, the
problem is rebuilt with the other (renting from a cloud; buying for a cloud workload hosts the GPUs
in a datacenter)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from advisor.solve.constraints import FAMILIES
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.rent_basis import RentedInstead
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

if TYPE_CHECKING:
    from advisor.inputs.deployment import Deployment

WORDS = {"buy": ("buying", "bought"), "rent": ("renting", "rented")}


@dataclass(frozen=True)
class OtherWay(RentedInstead):
    """The re-solve owning the other way: the problem solved and what it found (RentedInstead), its
    ownership and the site."""

    ownership: str = "rent"
    site: str = ""

    def rented(self) -> RentedInstead | None:
        """The re-solve as the break-even against renting reads it (solve/rent_basis.py); None when it buys."""
        return self if self.ownership == "rent" else None


def other_way(
    problem: Problem, sol: Solution, settings: SolveSettings, rebuild: Callable[..., Problem] | None
) -> OtherWay | None:
    """The best plan owning the other way, under the same limits: None for a plan that is not feasible
    (its diagnosis tries the other ownership) or when the other way cannot be planned (a buy-only
    workload explained without re-planning)."""
    if not sol.feasible or sol.objective_usd is None:
        return None
    other = "buy" if not sol.bought else "rent"
    d = problem.workload.deployment
    if other in d.ownerships:
        found = solve(problem, baseline(problem).but(ownership=other), settings)
        return OtherWay(problem, found, ownership=other, site=d.context)
    if rebuild is None:
        return None
    site = "datacenter" if d.context == "cloud" else d.context
    there = rebuild(context=site, ownership=other)
    return OtherWay(there, solve(there, baseline(there).but(ownership=other), settings), ownership=other, site=site)


def other_ownership(
    problem: Problem,
    sol: Solution,
    way: OtherWay | None,
    settings: SolveSettings,
    rows: Callable[[Problem, Solution], list[dict[str, Any]]],
    off_point: bool = False,
) -> dict[str, Any] | None:
    """{ownership, status, total_cost_usd (present value), nominal_cost_usd (cash), difference_usd,
    purchase, site, message} of `way` (other_way), the best plan owning the other way; None without
    one. `rows` turns a solution into purchase rows. `off_point`: the plan was chosen on its cost over
    the draws over the optimum at the catalog's figures (explain/decision.py), so a cheaper other way at
    those figures is not the solver's gap."""
    if way is None or sol.objective_usd is None:
        return None
    other, site, there, found = way.ownership, way.site, way.problem, way.found
    d = problem.workload.deployment
    verb, done = WORDS[other]
    where = f"hosted in a {site}: a cloud workload cannot own GPUs" if site != d.context else ""
    out: dict[str, Any] = {
        "ownership": other,
        "status": found.status,
        "site": site,
        "total_cost_usd": None,
        "nominal_cost_usd": None,
        "difference_usd": None,
        "purchase": [],
    }
    if not found.feasible or found.objective_usd is None:
        out["message"] = (
            f"{verb.capitalize()} instead{f' ({where})' if where else ''}: no plan meets the same "
            f"limits with every GPU {done}; {_blocking(there, other, settings)}"
        )
        return out
    diff = found.objective_usd - sol.objective_usd
    out.update(
        total_cost_usd=found.objective_usd,
        nominal_cost_usd=found.cash_usd,
        difference_usd=diff,
        purchase=rows(there, found),
    )
    what = "; ".join(_item(r) for r in out["purchase"][:3]) + ("; ..." if len(out["purchase"]) > 3 else "")
    than = f"${abs(diff):,.0f} more" if diff > 0.5 else f"${abs(diff):,.0f} less" if diff < -0.5 else "the same"
    why = _why_dearer(d, other, off_point) if diff < -0.5 else ""
    unlike = _serves_late(there, found)
    out["message"] = (
        f"{verb.capitalize()} instead ({'; '.join(x for x in (what, where) if x)}): the best plan with every GPU {done} costs "
        f"${found.objective_usd:,.0f} present value (${found.cash_usd:,.0f} in cash), {than} than "
        f"this plan{unlike}{why}"
    )
    return out


def _why_dearer(d: Deployment, other: str, off_point: bool) -> str:
    """Why this plan costs more than the other way to own at the catalog's figures: it was chosen on the
    draws (`off_point`), the solver's gap, or the deployment keeps the other way out."""
    if other in d.ownerships:
        if off_point:
            return (
                "; this plan was chosen on its cost over joint draws of speed and price, not at the catalog's figures"
            )
        return "; this plan is dearer only within the solver's gap"
    if d.ownership not in ("any", other):
        return f"; the workload's deployment.ownership: {d.ownership} keeps it out of this plan"
    return f"; the workload's deployment.context: {d.context} keeps it out of this plan"


def _serves_late(problem: Problem, found: Solution) -> str:
    """'; it serves nothing until its GPUs arrive on day 216, ...': owned serving GPUs with no rented
    bridge (a plan that may not rent) leave the traffic unserved until they arrive. The serving
    explanations are imported only for a plan that serves (~0.007 s of a cold training plan)."""
    if not problem.serve_classes:
        return ""
    from advisor.explain.serving import unserved_until

    late = unserved_until(problem, found)
    return f"; it serves nothing until its GPUs arrive on day {late}, where this plan serves from today" if late else ""


def _item(row: dict[str, Any]) -> str:
    """One purchase row in a few words: 8x h100-sxm (SF Compute, cluster term)."""
    if row["ownership"] == "buy":
        return f"{row['count']}× {row['gpu']} bought"
    kind = str(row.get("rent_kind") or "on_demand").replace("_", " ")
    return f"{row['count']}× {row['gpu']} at {row.get('provider') or 'a provider'}, {kind}"


def _blocking(problem: Problem, ownership: str, settings: SolveSettings) -> str:
    """Which single limit, lifted, lets the other ownership plan (its cost then), in words."""
    base = baseline(problem).but(ownership=ownership)
    found = []
    for family in FAMILIES:
        lift = family.lifted()
        if not lift:
            continue
        s = solve(problem, base.but(**lift), settings)
        if s.feasible and s.objective_usd is not None:
            found.append(f"without the {family.name.replace('_', ' ')} limit it would cost ${s.objective_usd:,.0f}")
    return (
        "; ".join(found)
        if found
        else "no single limit lifted makes it possible (the GPUs allowed, the rules or their offers rule it out)"
    )
