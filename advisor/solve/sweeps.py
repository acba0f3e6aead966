"""Solves over a sweep of makespan caps: `--objective time` (the fastest plan within the budget)
and the cost-versus-time Pareto front (`advisor frontier`)."""

from __future__ import annotations

from advisor.solve.constraints.at_once import makespan_hours
from advisor.solve.constraints.deadline import meets
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution


def candidate_hours(problem: Problem) -> list[float]:
    """Distinct completion times (from today: a candidate's start, then its hours) of all candidates
    that meet their deadlines: the makespans worth trying."""
    hours = {
        round(c.start_hours + c.hours, 9)
        for cls, cs in zip(problem.classes, problem.candidates)
        for c in cs
        if meets(c, cls.deadline)
    }
    return sorted(hours)


def solve_fastest(
    problem: Problem, scenario: Scenario | None = None, settings: SolveSettings | None = None
) -> Solution:
    """--objective time: the shortest makespan any plan within the budget reaches, then the
    cheapest plan at that makespan. Binary search over the candidates' distinct wall times
    (the optimal makespan is one of them), one cost MILP per probe."""
    sc = scenario or baseline(problem)
    hours = candidate_hours(problem)
    if not hours:
        return solve(problem, sc, settings)
    best = solve(problem, sc.but(makespan_hours=hours[-1]), settings)
    if not best.feasible:
        # a plan that trains in lent off-peak hours finishes after every candidate's own time: uncapped, the
        # cheapest is then the only one (review30b: with a $60,000 budget, "no feasible plan" beside $54,461)
        return solve(problem, sc, settings)
    lo, hi = 0, len(hours) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        trial = solve(problem, sc.but(makespan_hours=hours[mid]), settings)
        if trial.feasible:
            best, hi = trial, mid
        else:
            lo = mid + 1
    if makespan_hours(problem, best) > hours[lo] * (1 + 1e-9):
        best = solve(problem, sc.but(makespan_hours=hours[lo]), settings)
    return best


def frontier(problem: Problem, settings: SolveSettings | None = None, *, points: int = 24) -> list[Solution]:
    """The cost-versus-time Pareto front: cheapest plan under a sweep of makespan caps, keeping
    plans no other plan beats on both cost and makespan. Sorted by makespan."""
    sc = baseline(problem)
    hours = candidate_hours(problem)
    if len(hours) > points:  # sample evenly in log-time, always keeping both ends
        step = (len(hours) - 1) / (points - 1)
        hours = sorted({hours[round(i * step)] for i in range(points)})
    sols = [solve(problem, sc.but(makespan_hours=h), settings) for h in reversed(hours)]
    # and the cheapest plan uncapped: a job spread over lent off-peak hours finishes after every candidate's
    # own time, so no cap above holds it (review30: train-and-serve's 4x plan, day 75.7, was not on the front)
    sols.append(solve(problem, sc, settings))
    front: list[Solution] = []
    for sol in sorted(
        (s for s in sols if s.feasible), key=lambda s: (makespan_hours(problem, s), s.objective_usd or 0.0)
    ):
        if not front or (sol.objective_usd or 0.0) < (front[-1].objective_usd or 0.0) - 1e-6:
            front.append(sol)
    return front
