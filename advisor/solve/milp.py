"""The MILP of docs/model.md §2.2, in the document's order: variables, objective, then each
constraint family under the name the document (and the explanations) use.

  y[k,c]   jobs of class k run on candidate c (integer 0..m_k; continuous when allow_mixed)
  z[g,n]   binary: some owned job uses n GPUs of type g
  N[g]     integer GPUs of type g bought;  S[g,s] servers of platform s holding them
  W[g]     servers of type g that need networking (a job spans several servers)

  assign_k          sum_c y[k,c] = m_k
  use_k_c           y[k,c] <= m_k z[g,n]                      (owned candidates)
  fleet_g_n         N[g] >= n z[g,n]
  capacity_g_l      owned GPU-hours of jobs due by L_l <= L_l N[g]
  slots_g           N[g] = (or <=) sum_s slots_s S[g,s]        (= for HGX/OAM boards)
  network_g_n       W[g] >= ceil(n / slots) z[g,n]            (n larger than one server)
  stock_g           N[g] <= stock[g]
  gpu_count_min/max sum_g N[g] + GPUs of rented jobs within gpus.min/max (= gpus.count)
  power             kW of owned GPUs and their servers <= power limit
  budget            total cost <= budget_usd
  objective         purchase + servers + networking + hosting over the horizon (owned),
                    + energy (owned) or rent of every chosen candidate, + a tie-break
                    that prefers sooner finishes among equal-cost plans.

What one solve enforces is a Scenario (solve/scenario.py): the workload's limits, or a
counterfactual an explanation asks about. HiGHS through PuLP (one thread: deterministic, and it
honours its time limit); CBC when highspy is missing. A solution found but not proven optimal is
reported with its gap, never as optimal.
"""
from __future__ import annotations

import math

import pulp

from advisor.errors import NoPlanInTime, SolverError
from advisor.solve.candidates import Candidate, Problem
from advisor.solve.milp_serving import ServingSection, usable_serving
from advisor.solve.run import count_solve, quiet_stdout, read_gap, solver_for
from advisor.solve.scenario import Scenario, baseline
from advisor.solve.solution import Solution, _solution
from advisor.solve.usable import usable_candidates

TIE_BREAK_USD_PER_HOUR = 1e-6
IDLE_GPU_TOLERANCE = 0.001    # idle bought GPUs are put to work when that costs < 0.1% of the plan (or $1)


class _Model(ServingSection):
    """The PuLP model of one scenario, built section by section as docs/model.md §2.2 reads
    (the serving sections: solve/milp_serving.py)."""

    def __init__(self, problem: Problem, sc: Scenario, cands: list[list[Candidate]]):
        self.problem, self.sc, self.cands = problem, sc, cands
        self.prob = pulp.LpProblem("gpu_plan", pulp.LpMinimize)
        self.integral = not problem.workload.allow_mixed
        self.serving_init()
        self.owned = sorted({c.gpu for cs in cands for c in cs if c.ownership == "buy"} | self.serving_owned())
        self.y: dict[tuple[int, int], pulp.LpVariable] = {}
        self.z: dict[tuple[str, int], pulp.LpVariable] = {}
        self.N: dict[str, pulp.LpVariable] = {}
        self.S: dict[tuple[str, str], pulp.LpVariable] = {}
        self.W: dict[str, pulp.LpVariable] = {}
        self.sizes: dict[str, list[int]] = {}
        self.capacity_gpu: dict[str, str] = {}   # capacity row name -> its GPU type (speed changes scale one coefficient)

    def pairs(self):
        return ((k, i, c) for k, cs in enumerate(self.cands) for i, c in enumerate(cs))

    def run_cost(self, c: Candidate) -> float:
        return c.run_cost_usd * (self.sc.rent_price(c.gpu) if c.ownership == "rent" else 1.0)

    # ------------------------------------------------------------------ variables
    def variables(self) -> None:
        p, prob = self.problem, self.prob
        for k, i, _ in self.pairs():
            m = p.classes[k].multiplicity
            cat = "Binary" if self.integral and m == 1 else ("Integer" if self.integral else "Continuous")
            self.y[k, i] = prob.add_variable(f"y_{k}_{i}", lowBound=0, upBound=m, cat=cat)
        bought: dict[str, set[int]] = {}   # GPU -> the counts its bought candidates use (one pass, not one per GPU)
        for _, _, c in self.pairs():
            if c.ownership == "buy":
                bought.setdefault(c.gpu, set()).add(c.count)
        for g in self.owned:
            sizes = self.sizes[g] = sorted(bought.get(g, ()))
            board = max((s.slots for s in p.servers.get(g, [])), default=1)
            want = max(sizes, default=0) * p.job_count + self.serving_gpu_cap(g)
            cap = min(self.sc.gpu_upper or math.inf, math.ceil(want / board) * board)
            self.N[g] = prob.add_variable(f"N_{_safe(g)}", lowBound=0, upBound=cap, cat="Integer")
            for n in sizes:
                self.z[g, n] = prob.add_variable(f"z_{_safe(g)}_{n}", cat="Binary")
            for s in p.servers.get(g, []):
                self.S[g, s.id] = prob.add_variable(f"S_{_safe(g)}_{_safe(s.id)}", lowBound=0,
                                                    upBound=math.ceil(cap / s.slots) if cap < math.inf else None,
                                                    cat="Integer")
            if self._multi_server_sizes(g) and self._network_usd(g) is not None:
                self.W[g] = prob.add_variable(f"W_{_safe(g)}", lowBound=0, cat="Integer")

    def _multi_server_sizes(self, g: str) -> list[int]:
        options = self.problem.servers.get(g, [])
        if not options:
            return []
        per_server = max(s.slots for s in options)
        return [n for n in self.sizes[g] if n > per_server]

    def _network_usd(self, g: str) -> float | None:
        return max((s.network_usd for s in self.problem.servers.get(g, []) if s.network_usd is not None), default=None)

    # ------------------------------------------------------------------ objective
    def cost_terms(self) -> tuple[pulp.LpAffineExpression, pulp.LpAffineExpression]:
        """(total cost over the horizon, owned kW)."""
        p = self.problem
        owned_cost, kw = [], []
        for g in self.owned:
            price = p.unit_cost.get(g, p.unit_price[g])
            assert price is not None, f"{g} is owned without a purchase price"   # candidates.py offers none
            owned_cost.append(price * self.sc.buy_price(g) * self.N[g])
            kw.append(p.gpu_kw[g] * self.N[g])
            for s in p.servers.get(g, []):
                owned_cost.append(s.price_usd * self.S[g, s.id])
                kw.append(s.overhead_kw * self.S[g, s.id])
            if g in self.W:
                owned_cost.append(self._network_usd(g) * self.W[g])
        self.kw = pulp.lpSum(kw)
        hosting = p.costs.owned_pv_per_kw * self.kw     # hosting (and energy at a given utilization), PV
        run = _affine((self.y[k, i], self.run_cost(c)) for k, i, c in self.pairs()) + self.serving_cost()
        self.total = pulp.lpSum(owned_cost) + hosting + run
        return self.total, self.kw

    def tie_break(self) -> pulp.LpAffineExpression:
        """Sooner finishes among equal-cost plans: 1e-6 $ per hour of each job's wall time."""
        return _affine((self.y[k, i], TIE_BREAK_USD_PER_HOUR * c.hours) for k, i, c in self.pairs())

    # ------------------------------------------------------------------ constraints
    def assign(self) -> None:
        for k, cs in enumerate(self.cands):
            m = self.problem.classes[k].multiplicity
            self.prob += pulp.lpSum(self.y[k, i] for i in range(len(cs))) == m, f"assign_{k}"

    def use_and_fleet(self) -> None:
        for k, i, c in self.pairs():
            if c.ownership == "buy":
                m = self.problem.classes[k].multiplicity
                self.prob += _row([(self.y[k, i], 1), (self.z[c.gpu, c.count], -m)], LE), f"use_{k}_{i}"
        for (g, n), z in self.z.items():
            self.prob += _row([(self.N[g], 1), (z, -n)], GE), f"fleet_{_safe(g)}_{n}"

    def capacity(self) -> None:
        p = self.problem
        due = [self.sc.deadline(cls.deadline) or p.costs.horizon_hours for cls in p.classes]
        # GPU-hours at the confidence quantile against a job's own deadline; the estimate's against a makespan cap
        own = [self.sc.job_deadline(cls.deadline) or p.costs.horizon_hours for cls in p.classes]
        owned: dict[str, list] = {g: [] for g in self.owned}
        for k, i, c in self.pairs():
            if c.ownership == "buy":
                owned[c.gpu].append((k, i, c))
        for g in self.owned:
            for level, limit in enumerate(sorted(set(due))):
                terms = [(self.y[k, i], c.planned_gpu_hours if own[k] <= due[k] else c.gpu_hours)
                         for k, i, c in owned[g] if due[k] <= limit]
                if terms:
                    name = f"capacity_{_safe(g)}_{level}"
                    row = _affine(terms + [(self.N[g], -limit)])   # sum of GPU-hours - L N <= 0
                    self.prob += pulp.LpConstraint(row, LE), name
                    self.capacity_gpu[name] = g

    def slots(self) -> None:
        for g in self.owned:
            options = self.problem.servers.get(g, [])
            if not options:
                continue
            slots = pulp.lpSum(s.slots * self.S[g, s.id] for s in options)
            if all(s.filled for s in options):
                self.prob += self.N[g] == slots, f"slots_{_safe(g)}"
            else:
                self.prob += self.N[g] <= slots, f"slots_{_safe(g)}"

    def network(self) -> None:
        for g in self.owned:
            multi = self._multi_server_sizes(g)
            if not multi:
                continue
            if g not in self.W:  # the network joining these servers cannot be costed
                for n in multi:
                    self.prob += self.z[g, n] == 0, f"network_unknown_{_safe(g)}_{n}"
                continue
            options = self.problem.servers[g]
            per_server = max(s.slots for s in options)
            self.prob += self.W[g] <= pulp.lpSum(self.S[g, s.id] for s in options), f"network_servers_{_safe(g)}"
            for n in multi:
                self.prob += self.W[g] >= math.ceil(n / per_server) * self.z[g, n], f"network_{_safe(g)}_{n}"

    def stock(self) -> None:
        for g, limit in sorted((self.problem.workload.gpus.stock or {}).items()):
            if g in self.N:
                self.prob += self.N[g] <= limit, f"stock_{_safe(g)}"

    def gpu_count(self) -> None:
        fleet = pulp.lpSum(self.N.values()) + pulp.lpSum(
            c.count * self.y[k, i] for k, i, c in self.pairs() if c.ownership == "rent") + self.serving_rented_gpus()
        if self.sc.gpu_lower is not None:
            self.prob += fleet >= self.sc.gpu_lower, "gpu_count_min"
        if self.sc.gpu_upper is not None:
            self.prob += fleet <= self.sc.gpu_upper, "gpu_count_max"

    def power(self) -> None:
        if self.sc.power_limit_kw is not None and self.owned:
            self.prob += self.kw <= self.sc.power_limit_kw, "power"

    def budget(self) -> None:
        if self.sc.budget_usd is not None:
            self.prob += self.total <= self.sc.budget_usd, "budget"

    # ------------------------------------------------------------------ build and solve
    def build(self) -> None:
        self.variables()
        self.serving_variables()
        total, _ = self.cost_terms()
        self.prob += total + self.tie_break()
        self.assign()
        self.use_and_fleet()
        self.capacity()
        self.serving()
        self.slots()
        self.network()
        self.stock()
        self.gpu_count()
        self.power()
        self.budget()

    def value(self, var) -> int:
        return int(round(var.value() or 0))


DEFAULT_GAP = 1e-4        # HiGHS's own default relative MIP gap: a plan is proven optimal within 0.01%
FLEET_GAP = 0.01          # fleets (FLEET_JOBS jobs or more) default to 1%: proven in seconds, not minutes
FLEET_JOBS = 50
EXPLAIN_GAP = 0.01        # explanation re-solves (alternatives, break-evens, marginal values)
EXPLAIN_TIME_LIMIT = 10.0


def default_gap(problem: Problem) -> float:
    return FLEET_GAP if problem.job_count >= FLEET_JOBS else DEFAULT_GAP


def solve(problem: Problem, scenario: Scenario | None = None, *, time_limit: float | None = 30.0,
          gap: float | None = None) -> Solution:
    """The least-cost plan under `scenario` (the workload as written by default), proven optimal
    within the relative `gap` (default_gap when None). While a plan's explanations run
    (`explaining`), every solve uses their gap and time limit and is counted."""
    sc = scenario or baseline(problem)
    explaining = problem.solver_cache.get("explaining")
    if explaining is not None:
        gap = max(gap or 0.0, explaining["gap"])
        time_limit = explaining["time_limit"] if time_limit is None else min(time_limit, explaining["time_limit"])
    gap = default_gap(problem) if gap is None else gap
    if solver_for(time_limit, gap)[0] == "highs" and not problem.serve_classes:
        # the fast path changes training coefficients in place; serving sections are rebuilt each time
        from advisor.solve.fast import solve_fast
        sol = solve_fast(problem, sc, time_limit, gap)
    else:   # highspy missing: CBC through PuLP
        sol = _solve_pulp(problem, sc, time_limit, gap)
    count_solve(sol.objective_usd if sol.feasible else None, sol.solver.get("gap"), explaining is not None)  # progress
    if explaining is not None:
        explaining["solves"] += 1
        if sol.feasible and not sol.solver.get("proven_optimal"):
            explaining["unproven"] += 1
    return sol


def _check(status: str, name: str, time_limit: float | None) -> None:
    if status == "none":
        limit = f" within the {time_limit:g} s time limit" if time_limit is not None else ""
        raise NoPlanInTime(f"the {name} solver found no plan{limit}; raise `time_limit` or simplify the workload")


def _solve_pulp(problem: Problem, sc: Scenario, time_limit: float | None, gap: float) -> Solution:
    """A fresh PuLP build and solve (CBC when highspy is missing; the reference the fast path is tested against)."""
    cands = usable_candidates(problem, sc)
    if any(not cs for cs in cands + usable_serving(problem, sc)):
        return Solution("infeasible", None, solver={"name": None, "reason": "a job has no usable candidate"})
    model = _Model(problem, sc, cands)
    model.build()
    name, status, proven = _run(model.prob, time_limit, gap)
    if status == "Infeasible":
        return Solution("infeasible", None, solver={"name": name, "status": status})
    mip_objective = pulp.value(model.total)
    mip_gap = read_gap(model.prob, name, proven)
    if _idle_owned_gpus(model):
        used = {(c.gpu, c.ownership) for k, i, c in model.pairs() if (model.y[k, i].value() or 0) > 1e-6}
        cands = [[c for c in cs if (c.gpu, c.ownership) in used] for cs in usable_candidates(problem, sc, faster_too=True)]
        polish = _polish_model(problem, sc, cands, mip_objective)
        try:
            name2, status2, proven2 = _run(polish.prob, time_limit, gap)
        except SolverError:
            status2 = "Infeasible"
        if status2 != "Infeasible":
            model, name, status, proven = polish, name2, status2, proven and proven2
    return _solution(model, name, status, proven, mip_gap, mip_objective)


def _run(prob: pulp.LpProblem, time_limit: float | None, gap: float | None = None) -> tuple[str, str, bool]:
    """Solve; (solver name, PuLP status, proven optimal). Raises SolverError when no plan was found
    for a reason other than infeasibility."""
    name, solver = solver_for(time_limit, gap)
    try:
        with quiet_stdout():
            prob.solve(solver)
    except pulp.PulpSolverError as exc:
        raise SolverError(f"the {name} solver failed: {exc}") from None
    status = pulp.LpStatus[prob.status]
    if prob.sol_status == pulp.LpSolutionInfeasible or status == "Infeasible":
        return name, "Infeasible", False
    if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        _check("none", name, time_limit)
    return name, status, prob.sol_status == pulp.LpSolutionOptimal


def _idle_owned_gpus(model: _Model) -> bool:
    """Does some bought GPU type have GPUs no job of it uses at once (e.g. 1 job on an 8-GPU board)?"""
    used: dict[str, int] = {}   # GPU -> the most GPUs a job of it uses at once (one pass over the columns)
    for k, i, c in model.pairs():
        if c.ownership == "buy" and c.gpu in model.N and (model.y[k, i].value() or 0) > 1e-6:
            used[c.gpu] = max(used.get(c.gpu, 0), c.count)
    for g, var in model.N.items():
        bought = model.value(var)
        if bought and g in used and used[g] < bought:
            return True
    return False


def _polish_model(problem: Problem, sc: Scenario, cands: list[list[Candidate]], least_cost: float) -> _Model:
    """GPUs often come in boards of eight: a lone job that needs one of them would leave seven
    idle. Among plans that cost at most 0.1% (or $1) more than the least cost -- and keep every
    constraint, the budget included -- take the one whose jobs finish soonest on the GPU types
    (and ownerships) the least-cost plan uses: a second MILP over their candidates that are faster
    as well as those that are cheaper. When it finds nothing, the least-cost plan stands. On the HiGHS
    fast path it is capped by branch-and-bound nodes (fast.POLISH_NODES), not time, so the plan does
    not depend on load; the PuLP path (CBC, serving workloads) gives it the time limit."""
    model = _Model(problem, sc, cands)
    model.build()
    allowance = max(1.0, IDLE_GPU_TOLERANCE * least_cost) if least_cost < 1e20 else 0.0
    model.prob += model.total <= least_cost + allowance, "idle_gpus_cost"
    model.prob.setObjective(pulp.lpSum(c.hours * model.y[k, i] for k, i, c in model.pairs()) + 1e-6 * model.total)
    return model


LE, GE = pulp.LpConstraintLE, pulp.LpConstraintGE


def _affine(terms, constant: float = 0.0) -> pulp.LpAffineExpression:
    """lpSum(a * x for x, a in terms), built as a dict in one pass: the same terms in the same
    order, a zero coefficient dropped (as a * x drops it), a non-finite one refused (as PuLP
    does); without PuLP's per-term temporary expressions (most of a large model's build time)."""
    kept: dict = {}
    for x, a in terms:
        if not math.isfinite(a):
            raise pulp.PulpError("Cannot multiply variables with NaN/inf values")
        kept[x] = kept.get(x, 0) + a   # a variable named twice adds up, as lpSum does
    return pulp.LpAffineExpression([(x, a) for x, a in kept.items() if a != 0], constant)


def _row(terms, sense: int) -> pulp.LpConstraint:
    """The constraint sum(a * x) <sense> 0, as `x <= m * z` builds it (an integer zero constant)."""
    return pulp.LpConstraint(_affine(terms, 0), sense)


def _safe(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")
