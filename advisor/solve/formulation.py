"""The MILP put together: the model's variables and objective (solve/model.py), then every
constraint family's rows (solve/constraints/) in the registry's order; and the idle-GPU polish,
the same model with a cost cap and another objective."""

from __future__ import annotations

from collections.abc import Mapping

import pulp

from advisor.solve.constraints import FAMILIES
from advisor.solve.model import IDLE_GPU_TOLERANCE, Model
from advisor.solve.problem import Candidate, Problem
from advisor.solve.scenario import Scenario
from advisor.solve.serving_bridge import add_bridge_columns
from advisor.solve.usable import usable_serving


def build_model(
    problem: Problem,
    sc: Scenario,
    cands: list[list[Candidate]],
    redrawn: bool = False,
    slowest: Mapping[str, float] | None = None,
    cuts: bool = False,
) -> Model:
    """The model of `sc` over the training candidates `cands` and the serving candidates `sc` allows:
    variables, the objective, then every family's rows (`redrawn`: to be re-priced by draws, so no column
    is dropped on `sc`'s prices alone; `slowest`: each GPU type's slowest drawn speed, which the serving GPU
    caps hold; `cuts`: with the valid server cuts of constraints/slots.py)."""
    model = Model(problem, sc, cands, usable_serving(problem, sc), redrawn, slowest)
    model.cuts = cuts
    model.variables()
    add_bridge_columns(model)
    model.cost_terms()
    model.prob += model.total + model.tie_break()
    for family in FAMILIES:
        family.rows(model)
    return model


def polish_model(problem: Problem, sc: Scenario, cands: list[list[Candidate]], least_cost: float) -> Model:
    """GPUs often come in boards of eight: a lone job that needs one of them would leave seven
    idle. Among plans that cost at most 0.1% (or $1) more than the least cost -- and keep every
    constraint, the budget included -- take the one whose jobs finish soonest on the GPU types
    (and ownerships) the least-cost plan uses: a second MILP over their candidates that are faster
    as well as those that are cheaper. When it finds nothing, the least-cost plan stands. On the HiGHS
    fast path it is capped by branch-and-bound nodes (fast.POLISH_NODES), not time, so the plan does
    not depend on load; the PuLP path (CBC, serving workloads) gives it the time limit."""
    model = build_model(problem, sc, cands)
    allowance = max(1.0, IDLE_GPU_TOLERANCE * least_cost) if least_cost < 1e20 else 0.0
    model.prob += model.total <= least_cost + allowance, "idle_gpus_cost"
    model.prob.setObjective(pulp.lpSum(c.hours * model.y[k, i] for k, i, c in model.pairs()) + 1e-6 * model.total)
    return model
