"""assign: every training job is placed once, on an option the workload and the rules allow.

  assign_k   sum_c y[k,c] = m_k          (the m_k identical jobs of class k)

The options themselves (GPU types in gpus.allow and not in gpus.deny, the ownership the
deployment allows, no rule forbidding them) are the candidates' (solve/candidates.py): the check
of a finished plan re-asks the rules of every placed job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulp

from advisor.solve.constraints.base import Family
from advisor.solve.options import count_context, forbids, rule_context
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:
    from advisor.solve.model import Model
    from advisor.solve.problem import Candidate, Problem
    from advisor.solve.solution import Solution


class Assignment(Family):
    name = "assign"

    def rows(self, m: Model) -> None:
        for k, cs in enumerate(m.cands):
            mult = m.problem.classes[k].multiplicity
            m.prob += pulp.lpSum(m.y[k, i] for i in range(len(cs))) == mult, f"assign_{k}"

    def violations(self, problem: Problem, sol: Solution, sc: Scenario) -> list[str]:
        out: list[str] = []
        placed = [0.0] * len(problem.classes)
        for c, n in sol.assignment:
            placed[c.cls] += n
            out += _not_allowed(problem, c, sc)
        for k, cls in enumerate(problem.classes):
            if abs(placed[k] - cls.multiplicity) > 1e-6:
                out.append(f"{cls.name(problem.workload)}: {placed[k]:g} of {cls.multiplicity} jobs placed")
        return out


def _not_allowed(problem: Problem, c: Candidate, sc: Scenario) -> list[str]:
    """Why a placed job's option is not one the workload, the scenario and the rules allow."""
    wl, out = problem.workload, []
    sel, d = wl.gpus, wl.deployment
    if sel.allow is not None and c.gpu not in sel.allow:
        out.append(f"{c.gpu} is not in gpus.allow")
    if c.gpu in sel.deny:
        out.append(f"{c.gpu} is in gpus.deny")
    if sc.only_gpu is not None and c.gpu != sc.only_gpu:
        out.append(f"{c.gpu} is used where only {sc.only_gpu} may be")
    if sc.ownership not in (None, c.ownership):
        out.append(
            f"{c.gpu} is {'bought' if c.ownership == 'buy' else 'rented'} where every GPU is "
            f"{'bought' if sc.ownership == 'buy' else 'rented'}"
        )
    if d.ownership not in ("any", c.ownership) or (d.context == "cloud" and c.ownership == "buy"):
        out.append(
            f"{c.gpu} is {'bought' if c.ownership == 'buy' else 'rented'} against deployment.ownership {d.ownership}"
        )
    ctx = rule_context(problem.catalog.gpus[c.gpu], wl, problem.classes[c.cls], c.ownership)
    found = problem.rules.evaluate(ctx, problem.as_of, per_count=False)
    found += problem.rules.evaluate(count_context(ctx, c.count, c.estimate), problem.as_of, per_count=True)
    if forbids(found):
        out.append(
            f"{c.gpu} ({c.ownership}) is forbidden by rule "
            f"{', '.join(sorted(f.rule for f in found if f.severity == 'forbid'))}"
        )
    return out
