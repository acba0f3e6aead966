"""The serving constraint family of the MILP (docs/model.md "Serving in the MILP"), kept apart from
the training sections of solve/milp.py so each can change alone.

  r[k,i]         integer replicas of serving candidate i (GPU type, TP x PP, buy/rent) for class k
  serve_k        sum_i rate_i r[k,i] >= peak requests/s of class k (x the scenario's traffic factor)
  serve_fleet_g  N[g] >= owned serving GPUs of type g
  serve_fleet_g_n N[g] >= n z[g,n] + owned serving GPUs not lent to training (off_peak_training_hours 0)
  serve_capacity_g_l  training GPU-hours <= L (N[g] - owned serving GPUs) + L h/24 (GPUs lent h hours a day)
Owned serving GPUs count in N[g], so they pay purchase, servers, hosting and power like any other;
energy (owned) or rent (rented) per replica over the serving hours goes into the objective.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pulp

from advisor.solve.candidates import Problem
from advisor.solve.scenario import Scenario

if TYPE_CHECKING:   # a type only: a training-only plan does not import the serving estimator (start-up time)
    from advisor.solve.serving_candidates import ServeCandidate


def usable_serving(problem: Problem, sc: Scenario) -> list[list[ServeCandidate]]:
    """Per serving class: candidates on the scenario's GPU type (only_gpu) within the stock."""
    stock = problem.workload.gpus.stock or {}
    return [[c for c in cs if (sc.only_gpu is None or c.gpu == sc.only_gpu) and c.gpus <= stock.get(c.gpu, math.inf)]
            for cs in problem.serve_candidates]


class ServingSection:
    """Mixed into milp._Model: variables, cost and constraints of the serving classes."""

    problem: Problem
    sc: Scenario
    prob: pulp.LpProblem
    N: dict
    z: dict
    y: dict
    pairs: Callable[[], Iterator]

    def serving_init(self) -> None:
        self.scands = usable_serving(self.problem, self.sc)
        self.r: dict[tuple[int, int], pulp.LpVariable] = {}

    def serve_pairs(self):
        return ((k, i, c) for k, cs in enumerate(self.scands) for i, c in enumerate(cs))

    def peak(self, k: int) -> float:
        return self.problem.serve_classes[k].peak_rps * self.sc.traffic_factor

    def serving_owned(self) -> set[str]:
        return {c.gpu for _, _, c in self.serve_pairs() if c.ownership == "buy"}

    def serving_gpu_cap(self, g: str) -> int:
        """Most owned GPUs of type g serving could want: each class on its hungriest layout alone."""
        return sum(max((math.ceil(self.peak(k) / c.requests_per_s) * c.gpus for c in cs
                        if c.gpu == g and c.ownership == "buy"), default=0) for k, cs in enumerate(self.scands))

    def serving_variables(self) -> None:
        for k, i, c in self.serve_pairs():
            self.r[k, i] = self.prob.add_variable(f"r_{k}_{i}", lowBound=0,
                                                  upBound=math.ceil(self.peak(k) / c.requests_per_s), cat="Integer")

    def serving_cost(self) -> pulp.LpAffineExpression:
        """Energy (owned) or rent per replica over the serving hours."""
        return pulp.lpSum(c.run_cost_usd * (self.sc.rent_price(c.gpu) if c.ownership == "rent" else 1.0)
                          * self.r[k, i] for k, i, c in self.serve_pairs())

    def serving_rented_gpus(self) -> pulp.LpAffineExpression:
        return pulp.lpSum(c.gpus * self.r[k, i] for k, i, c in self.serve_pairs() if c.ownership == "rent")

    def _owned_serving(self, g: str, lent: bool | None = None) -> pulp.LpAffineExpression:
        """Owned serving GPUs of type g (lent: only those lent to training off-peak, or only those not)."""
        cls = self.problem.serve_classes
        return pulp.lpSum(c.gpus * self.r[k, i] for k, i, c in self.serve_pairs()
                          if c.gpu == g and c.ownership == "buy"
                          and (lent is None or (cls[k].off_peak_hours > 0) == lent))

    def serving(self) -> None:
        for k, cs in enumerate(self.scands):
            self.prob += pulp.lpSum(c.requests_per_s * self.r[k, i] for i, c in enumerate(cs)) >= self.peak(k), \
                f"serve_{k}"
        p = self.problem
        due = [self.sc.deadline(cls.deadline) or p.costs.horizon_hours for cls in p.classes]
        for g in sorted(self.serving_owned()):
            safe = g.replace("-", "_").replace(".", "_")
            sv = self._owned_serving(g)
            self.prob += self.N[g] >= sv, f"serve_fleet_{safe}"
            kept = self._owned_serving(g, lent=False)
            for (gg, n), z in self.z.items():
                if gg == g:
                    self.prob += self.N[g] >= n * z + kept, f"serve_fleet_{safe}_{n}"
            lent = pulp.lpSum(c.gpus * self.r[k, i] * p.serve_classes[k].off_peak_hours / 24.0
                              for k, i, c in self.serve_pairs() if c.gpu == g and c.ownership == "buy")
            for level, limit in enumerate(sorted(set(due))):
                terms = [c.gpu_hours * self.y[k, i] for k, i, c in self.pairs()
                         if c.gpu == g and c.ownership == "buy" and due[k] <= limit]
                if terms:
                    self.prob += pulp.lpSum(terms) <= limit * (self.N[g] - sv + lent), f"serve_capacity_{safe}_{level}"

    def serving_solution(self) -> list[tuple[ServeCandidate, int]]:
        return [(c, int(round(self.r[k, i].value() or 0))) for k, i, c in self.serve_pairs()
                if (self.r[k, i].value() or 0) > 0.5]
