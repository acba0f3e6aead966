"""The fast re-solve path (one HiGHS model per problem, scenarios as cost/bound changes) means
the same as a fresh PuLP build: for each scenario, both agree on feasibility and on the least
cost within the gap, whatever order the scenarios come in (real speeds included). And each
break-even a plan reports, of price or of speed, holds when re-solved from scratch at the claimed
point."""

from __future__ import annotations

import json

import pytest
from conftest import AS_OF, EXAMPLES

from advisor.explain.sensitivity import uses
from advisor.flow import plan, prepare
from advisor.inputs.workload import load_workload
from advisor.solve.milp import solve, solve_pulp
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings

GAP = 1e-4


def _scenarios(problem):
    base = baseline(problem)
    first = solve(problem)
    chosen = min(first.gpu_types())
    others = [g for g in problem.considered if g not in problem.rejected and g != chosen][:3]
    out = [
        base,
        base.but(price_factor={chosen: 1.5}),
        base.but(price_factor={chosen: 4.0}),
        base.but(price_factor={chosen: 0.5}),
        base.but(budget_usd=None),
        base.but(deadline_scale=1.5),
        base.but(deadline_scale=0.5),
        base.but(makespan_hours=max(c.hours for c in first.chosen) * 0.8),
        base.but(price_factor={chosen: 1.5}),  # the same scenario again, after others
        base.but(rent_factor={chosen: 2.0}, buy_factor={chosen: 0.7}),
        base.but(speed_factor={chosen: 0.6}),
        base.but(speed_factor={chosen: 0.3}),  # one shared speed model
        base.but(speed_factor={chosen: 0.6}, price_factor={chosen: 1.5}),
        base.but(speed_factor={chosen: 0.95}, only_gpu=chosen),
        base.but(speed_factor={chosen: 2.5}),
    ]
    out += [base.but(only_gpu=g) for g in others]
    out += [base.but(speed_factor={g: f}) for g in others for f in (3.0, 1.3, 0.5)]  # the runner-up's bisection
    out += [base.but(only_gpu=chosen, price_factor={chosen: 3.0})]
    offers = first.rented_offers(chosen)  # a rented plan's offer priced alone (the break-even's), then the base again
    if offers:
        out += [base.but(offer_factor={(chosen, offers[0].provider): f}) for f in (1.3, 2.0, 0.6)] + [base]
    if problem.workload.budget_usd is not None:
        out.append(base.but(budget_usd=problem.workload.budget_usd * 0.5))
    return out


@pytest.mark.parametrize(
    "example", ["article-office", "article-datacenter", "lora-7b-workstation", "rent-vs-buy-3y", "llama-70b-budget"]
)
def test_fast_path_agrees_with_a_fresh_build(example, catalog, rules):
    problem = prepare(load_workload(EXAMPLES / f"{example}.yaml"), catalog, rules, AS_OF)
    for sc in _scenarios(problem):
        fast = solve(problem, sc, SolveSettings(gap=GAP))
        fresh = solve_pulp(problem, sc, 30.0, GAP)
        assert fast.feasible == fresh.feasible, sc
        if fresh.feasible:
            assert fast.objective_usd == pytest.approx(fresh.objective_usd, rel=2 * GAP + 1e-9), sc
            assert fast.status == fresh.status


@pytest.mark.parametrize("example", ["article-datacenter", "lora-7b-workstation", "rent-vs-buy-3y"])
def test_each_break_even_flips_the_choice_when_re_solved_from_scratch(example, example_plan, catalog, rules):
    _, p = example_plan(example)  # `advisor plan examples/EXAMPLE.yaml --as-of AS_OF --format json`
    problem = prepare(load_workload(EXAMPLES / f"{example}.yaml"), catalog, rules, AS_OF)
    base = baseline(problem)
    for b in p["sensitivity"]["break_even"]:
        if b["factor"] is None:
            continue
        gpu, f, offer = b["gpu"], b["factor"], b.get("provider")

        def at(x):  # a rented pair's break-even moves its offer's rate alone, a bought one the GPU's price
            sc = base.but(offer_factor={(gpu, offer): x}) if offer else base.but(price_factor={gpu: x})
            s = solve_pulp(problem, sc, 30.0, GAP)
            return uses(s, gpu, "rent", offer) if offer else gpu in s.gpu_types()

        # the bisection's precision is 1% of the price (0.01 in the factor): step beyond it
        # rise: chosen below the factor, not above; fall: the runner-up chosen at or below it
        assert at(f * 0.97 - 0.01) and not at(f * 1.03 + 0.01), b


@pytest.mark.parametrize("example", ["rent-vs-buy-3y", "team-fleet", "lora-7b-workstation", "llama-70b-budget"])
def test_each_speed_break_even_flips_the_choice_when_re_solved_from_scratch(example, example_plan, catalog, rules):
    """The speed claims ("stays the choice unless its real speed is >= P% below the estimate",
    "becomes the choice if >= P% above"), computed on the shared speed model (solve/speed_model.py),
    hold when re-solved by a fresh PuLP build 1 point short of P, and the choice has changed at P
    (and stays changed 1 point beyond)."""
    _, p = example_plan(example)
    problem = prepare(load_workload(EXAMPLES / f"{example}.yaml"), catalog, rules, AS_OF)
    base = baseline(problem)
    checked = 0
    for b in p["sensitivity"]["speed"]:
        if b["percent"] is None:
            continue
        gpu, pct = b["gpu"], b["percent"]

        def fresh(f):
            return solve_pulp(problem, base.but(speed_factor={gpu: f}), 30.0, GAP)

        if b["direction"] == "slower":
            pair = (gpu, b["ownership"])
            short = fresh((100 - (pct - 1)) / 100)
            assert pair in {(c.gpu, c.ownership) for c in short.chosen}, b
            for at in (pct, pct + 1):
                beyond = fresh((100 - at) / 100)
                assert not beyond.feasible or pair not in {(c.gpu, c.ownership) for c in beyond.chosen}, b
        else:
            assert gpu not in fresh((100 + pct - 1) / 100).gpu_types(), b
            assert gpu in fresh((100 + pct) / 100).gpu_types() and gpu in fresh((100 + pct + 1) / 100).gpu_types(), b
        checked += 1
    assert checked, p["sensitivity"]["speed"]


@pytest.mark.parametrize("example", ["lora-7b-workstation", pytest.param("team-fleet", marks=pytest.mark.slow)])
def test_speed_break_evens_are_those_of_a_fresh_build_at_every_step(example, catalog, rules, monkeypatch):
    """The speed sensitivity found on the shared speed model equals the one found by building the
    model afresh at every bisection step (what the code did before): same factors, same words."""
    from advisor.explain import ranges
    from advisor.explain.alternatives import alternatives

    problem = prepare(load_workload(EXAMPLES / f"{example}.yaml"), catalog, rules, AS_OF)
    sol = solve(problem)
    alts = alternatives(problem, sol, SolveSettings())
    shared = ranges.speed_sensitivity(problem, sol, alts, SolveSettings())
    monkeypatch.setattr(ranges, "solve", lambda pr, sc, settings: solve_pulp(pr, sc, settings.time_limit, GAP))
    assert ranges.speed_sensitivity(problem, sol, alts, SolveSettings()) == shared
    assert any(b["percent"] is not None for b in shared), shared


def test_explanation_solves_are_reported(example_plan, catalog, rules):
    _, p = example_plan("article-office")  # the JSON of the plan with every explanation
    ex = p["solver"]["explanations"]
    assert ex["solves"] > 0 and ex["gap_limit"] == 0.01 and ex["approximate"] is False
    none = json.loads(
        plan(
            load_workload(EXAMPLES / "article-office.yaml"),
            catalog=catalog,
            rules=rules,
            as_of=AS_OF,
            explain="alternatives",
        ).to_json()
    )  # compared as JSON, like p
    assert none["sensitivity"] == {"break_even": [], "marginal": []}
    assert none["total_cost_usd"] == p["total_cost_usd"]


def _fleet(n: int, seed: int = 7) -> dict:
    """bench/solve.py's deterministic fleet (its default seed, 7): enough jobs that the idle-GPU polish
    cannot prove its own optimum in a node or two."""
    from conftest import bench_module

    return bench_module("solve").fleet(n, seed)


@pytest.mark.parametrize(("jobs", "seed"), [(20, 4), pytest.param(50, 7, marks=pytest.mark.slow)])
def test_the_idle_gpu_polish_stops_on_work_so_the_plan_does_not_depend_on_time(monkeypatch, jobs, seed):
    """The polish (finish soonest within 0.1% of the least cost) is capped by nodes, not by wall
    time: the same plan under a 120 s and a 600 s limit (each solve takes seconds; the polish has 20%
    of the limit, and 24 s leaves a busy 2-core machine room: at load 13 it ran out of 12 s). Stopped early, its plan is taken only when
    its cost stays proven within the gap; "optimal" and the reported gap are checked against a
    separate solve at a 0.01% gap (the 20-job fleet has a 0.01% gap, and its polish proves at one node
    a plan above the least cost, reported with that plan's gap: seed 4, $2.00 above, gap 7.5e-5, found
    by a search over 15 and 20 jobs, seeds 1-6, where 15/4 and 20/4 qualify; each solve takes about a
    second, where the 30-job fleet of seed 1 it replaced took 27 s; the 50-job fleet a 1% gap and takes
    the polished one)."""
    import datetime as dt

    import advisor.solve.fast as fast
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.inputs.workload import parse_workload

    monkeypatch.setattr(fast, "POLISH_NODES", 1)
    cat, rules = load_catalog(), load_rules()

    problem = prepare(parse_workload(_fleet(jobs, seed), "fleet"), cat, rules, dt.date(2026, 12, 1))

    def fresh():  # the same candidates, no HiGHS model kept from an earlier solve
        problem.solver_cache.clear()
        return problem

    short, long = (  # polish=True: a fleet of 50 jobs or more is not polished unless asked
        solve(fresh(), settings=SolveSettings(time_limit=120, polish=True)),
        solve(fresh(), settings=SolveSettings(time_limit=600, polish=True)),
    )

    def plan_of(sol):
        return [(c.gpu, c.count, c.ownership, round(c.hours, 9), n) for c, n in sol.assignment], sol.bought

    assert plan_of(short) == plan_of(long) and short.solver == long.solver
    assert short.status == "optimal" and short.solver["proven_optimal"]
    gap = short.solver["gap"]
    assert gap <= (1e-4 if jobs < 50 else 0.01)
    # the claim: the plan's cost x (1 - gap) is a lower bound on the optimum, which a separate
    # solve at a 0.01% gap reaches or beats
    tight = (
        long if jobs < 50 else solve(fresh(), settings=SolveSettings(time_limit=300, gap=1e-4))
    )  # below 50 jobs the gap is 0.01%
    assert short.objective_usd * (1 - gap) <= tight.mip_objective_usd * (1 + 1e-9)
    assert short.objective_usd <= tight.mip_objective_usd / (1 - 1e-4) / (1 - gap) * (1 + 1e-9)
    if jobs < 50:  # the polish proved a plan dearer than the least: the gap reported is that plan's
        assert short.objective_usd > short.mip_objective_usd
        assert gap >= (short.objective_usd - short.mip_objective_usd) / short.objective_usd - 5e-7


def test_a_fleet_is_not_polished_unless_asked(monkeypatch):
    """A fleet (FLEET_JOBS jobs or more: here bench/solve.py's fleet of 6, seed 4, whose plan leaves bought GPUs
    idle, with the threshold lowered to 5 for speed; seed 1 until the Gaudi 2 and B200 MAMF refit of
    2026-12-06, after which seeds 2, 4 and 6 of 1-8 qualified; since a workstation holds no job that spans
    servers, 1 and 4, seed 2's polish running again with late rows) is proven within
    1%, inside which the polish's 0.1% allowance lies: its plan is the least-cost solve's, with no
    polish run, unless the settings ask for one (then it runs, as below FLEET_JOBS)."""
    import datetime as dt

    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.inputs.workload import parse_workload
    from advisor.solve import settings as solve_settings
    from advisor.solve.highs_model import HighsModel

    monkeypatch.setattr(solve_settings, "FLEET_JOBS", 5)
    problem = prepare(parse_workload(_fleet(6, seed=4), "fleet"), load_catalog(), load_rules(), dt.date(2026, 12, 1))
    polish_runs: list[int] = []
    run = HighsModel.run

    def recorded(self, time_limit, gap, nodes=None):
        polish_runs.extend([nodes] if nodes is not None else [])  # the polish's run has a node cap
        return run(self, time_limit, gap, nodes)

    monkeypatch.setattr(HighsModel, "run", recorded)
    plain = solve(problem, settings=SolveSettings(time_limit=120))
    assert polish_runs == [] and plain.objective_usd == pytest.approx(plain.mip_objective_usd, rel=1e-12)
    assert plain.solver["gap"] <= 0.01
    problem.solver_cache.clear()
    solve(problem, settings=SolveSettings(time_limit=120, polish=True))
    assert len(polish_runs) == 1  # asked: the idle GPUs of this fleet's plan get the polish


@pytest.mark.slow
def test_a_polish_stopped_by_its_time_limit_is_not_taken(monkeypatch):
    """Where the time limit, not the node limit, stops the polish (a large fleet on a loaded machine;
    since the estimator's refit, bench/solve.py's 1,000-job fleet stops at its 100-node limit, whole
    solve 4.8 s of CPU), what it found depends on the load: the least-cost plan stands. The same
    polish stopped by its node limit is taken (its plan's cost stays proven within the gap).

    The premise, found by a search over bench/solve.py's fleets (not at test time; searched again
    whenever the model moves the fleets' plans or its search, last when jobs with deadlines on bought
    GPUs came to hold them at once or in turn (constraints/at_once.py): at 1 node, seeds 1 and 26 of
    1-9, 14, 22 and 26 qualified, 7, the seed before, no longer; since a workstation holds no job that
    spans servers, 12 of 1-30, 26 no longer; since a server dearer per slot than the least pays the rest
    of its own cost (solve/server_terms.py), 41 of 1-42, 12 no longer: its polish proves its optimum at 1
    node): fleet(30, seed 41) at a 1% gap has a polish that, stopped at 1 node, holds a plan with fewer
    job hours, unproven."""
    import datetime as dt

    import advisor.solve.fast as fast
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.inputs.workload import parse_workload
    from advisor.solve import model
    from advisor.solve.highs_model import HighsModel

    monkeypatch.setattr(fast, "POLISH_NODES", 1)
    problem = prepare(parse_workload(_fleet(30, seed=41), "fleet"), load_catalog(), load_rules(), dt.date(2026, 12, 1))

    def fresh():  # the same candidates, no HiGHS model kept from an earlier solve
        problem.solver_cache.clear()
        return problem

    def job_hours(sol):
        return sum(c.hours * n for c, n in sol.assignment)

    def plan_of(sol):
        return [(c.gpu, c.count, c.ownership, round(c.hours, 9), n) for c, n in sol.assignment], sol.bought

    polish_runs: list[tuple[str, bool, bool]] = []
    run = HighsModel.run

    def recorded(self, time_limit, gap, nodes=None):
        out = run(self, time_limit, gap, nodes)
        if nodes is not None:  # the polish's run (the least-cost solve has no node cap)
            polish_runs.append((out[0], out[1], self.stopped_on_time))
        return out

    monkeypatch.setattr(HighsModel, "run", recorded)
    on_nodes = solve(fresh(), settings=SolveSettings(time_limit=120, gap=0.01))
    # the premise: the polish ran, stopped at its node limit with a plan, unproven, not on time (run again
    # with the late rows while its plan had a job late on its own schedule: solve/late_cuts.py)
    assert polish_runs and all(run == ("feasible", False, False) for run in polish_runs)
    polished = len(polish_runs)
    least = solve(fresh(), settings=SolveSettings(time_limit=120, gap=0.01, polish=False))  # the least-cost plan
    assert len(polish_runs) == polished
    assert job_hours(on_nodes) < job_hours(least)  # taken: it finishes sooner ...
    assert on_nodes.objective_usd <= least.objective_usd * (1 + model.IDLE_GPU_TOLERANCE)  # ... at <= 0.1% more
    assert on_nodes.status == "optimal" and on_nodes.solver["gap"] <= 0.01

    def as_if_timed_out(self, time_limit, gap, nodes=None):
        out = recorded(self, time_limit, gap, nodes)
        self.stopped_on_time = nodes is not None  # the polish's run: as if its time limit had stopped it
        return out

    monkeypatch.setattr(HighsModel, "run", as_if_timed_out)
    on_time = solve(fresh(), settings=SolveSettings(time_limit=120, gap=0.01))
    assert polish_runs[polished][:2] == ("feasible", False)  # the same unproven polish ran ...
    assert job_hours(on_nodes) < job_hours(on_time)  # ... its plan finishing sooner was not taken:
    assert plan_of(on_time) == plan_of(least)  # the least-cost plan stands
    assert on_time.status == "optimal" and on_time.solver["proven_optimal"]
    assert on_time.objective_usd == pytest.approx(on_time.mip_objective_usd, rel=1e-9)


def test_rows_built_from_coefficient_lists_equal_pulps_own():
    """rows.affine/row build rows without PuLP's per-term expressions: the same terms in the same
    order as lpSum, a repeated variable summed, zeros dropped, non-finite coefficients refused."""
    import math as m

    import pulp

    from advisor.solve.rows import LE, affine, row

    prob = pulp.LpProblem("rows", pulp.LpMinimize)
    x, y, z = (prob.add_variable(n) for n in "xyz")
    mine, theirs = affine([(x, 2), (y, 0), (z, 1.5), (x, 3)], 1.5), pulp.lpSum([2 * x, 0 * y, 1.5 * z, 3 * x]) + 1.5
    assert list(mine.items()) == list(theirs.items()) and mine.constant == theirs.constant
    row = row([(y, 1), (z, 0)], LE)
    assert dict(row) == dict(y <= 0 * z) and row.sense == LE
    with pytest.raises(pulp.PulpError):
        affine([(x, m.inf)])


def test_a_printed_gap_is_never_below_the_gap_it_stands_for():
    """Gaps print to 6 decimals rounded up (solve/run.printed_gap): a polished plan $3.74 above the least
    cost of $196,641.61 has a gap of 1.902e-5, which to the nearest printed 1.9e-5 and claimed a lower
    bound a cent above the optimum."""
    from advisor.solve.run import printed_gap

    least, polished = 196641.61448809796, 196645.35296092287
    true = (polished - least) / polished
    assert printed_gap(true) == 2e-5 and polished * (1 - printed_gap(true)) <= least
    for g in (0.0, 1e-4, 0.01, 6.4e-5, 0.008852):  # printed exactly: not pushed up a step
        assert printed_gap(g) == g
    for g in (1.0000001e-4, 0.0088521, 3.3e-7):
        assert g <= printed_gap(g) <= g + 1e-6
