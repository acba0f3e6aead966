"""The MILP: how many jobs of each class run on each candidate configuration, and how many GPUs
and servers of each type to buy. Names follow docs/model.md §2:

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

HiGHS through PuLP (one thread: deterministic, and it honours its time limit); CBC when highspy
is missing. A solution found but not proven optimal is reported with its gap, never as optimal.
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
from dataclasses import dataclass, field

import pulp

from advisor.errors import SolverError
from advisor.solve.candidates import Candidate, Problem

TIE_BREAK_USD_PER_HOUR = 1e-6
IDLE_GPU_TOLERANCE = 0.001    # idle bought GPUs are put to work when that costs < 0.1% of the plan (or $1)


@dataclass
class Solution:
    status: str                          # optimal | feasible | infeasible
    objective_usd: float | None
    assignment: list = field(default_factory=list)    # (Candidate, jobs) with jobs > 0, class order
    bought: dict = field(default_factory=dict)        # gpu -> GPUs bought
    servers: dict = field(default_factory=dict)       # gpu -> {server id: count}
    networked: dict = field(default_factory=dict)     # gpu -> networked servers
    cost_breakdown: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)
    mip_objective_usd: float | None = None            # the MILP's optimum, before idle GPUs are put to work

    @property
    def feasible(self) -> bool:
        return self.objective_usd is not None

    @property
    def chosen(self) -> list[Candidate]:
        return [c for c, _ in self.assignment]

    @property
    def makespan_hours(self) -> float:
        return max((c.hours for c in self.chosen), default=0.0)

    def gpu_types(self) -> set[str]:
        return {c.gpu for c in self.chosen}


def _solver(time_limit: float | None):
    try:
        import highspy  # noqa: F401
        return "highs", pulp.HiGHS(msg=False, timeLimit=time_limit, threads=1, random_seed=0)
    except ImportError:
        return "cbc", cbc_solver(time_limit)


def cbc_solver(time_limit: float | None):
    """The CBC binary bundled with PuLP 3 (PuLP 4 will want `pulp[cbc]` and COIN_CMD)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=1)


def usable_candidates(problem: Problem, *, only_gpu=None, makespan_hours=None, deadline_scale=1.0,
                      deadline_extra_hours=0.0, lower=None, upper=None) -> list[list[Candidate]]:
    """Per class: candidates meeting the (scaled) deadline, the makespan cap and the GPU-type
    restriction, without those another candidate of the same type and ownership dominates."""
    out = []
    stock = problem.workload.gpus.stock or {}
    for cls, cands in zip(problem.classes, problem.candidates):
        limit = math.inf if cls.deadline is None else cls.deadline * deadline_scale + deadline_extra_hours
        if makespan_hours is not None:
            limit = min(limit, makespan_hours)
        keep = [c for c in cands if c.hours <= limit * (1 + 1e-9)
                and (only_gpu is None or c.gpu == only_gpu)
                and (upper is None or c.count <= upper) and (lower is None or c.count >= lower)
                and c.count <= stock.get(c.gpu, math.inf)]
        out.append(_undominated(keep))
    return out


def _undominated(cands: list[Candidate]) -> list[Candidate]:
    """Drop c' when a candidate of the same GPU and ownership needs no more GPUs, GPU-hours or
    run cost (the cost objective can never prefer c')."""
    keep = []
    for c in cands:
        dominated = any(o is not c and o.gpu == c.gpu and o.ownership == c.ownership and o.count <= c.count
                        and o.gpu_hours <= c.gpu_hours and o.run_cost_usd <= c.run_cost_usd
                        and (o.count, o.gpu_hours, o.run_cost_usd) != (c.count, c.gpu_hours, c.run_cost_usd)
                        for o in cands)
        if not dominated:
            keep.append(c)
    return keep


def solve(problem: Problem, *, only_gpu: str | None = None, deadline_scale: float = 1.0,
          deadline_extra_hours: float = 0.0, makespan_hours: float | None = None, budget_usd: float | None | bool = False,
          power_limit_kw: float | None | bool = False, gpu_upper: int | None | bool = False,
          price_factor: dict | None = None, time_limit: float | None = 30.0) -> Solution:
    """Least-cost plan. Keyword arguments re-solve counterfactuals for explanations: one GPU type
    only, scaled deadlines, a makespan cap, another budget / power limit / GPU-count cap, or
    GPU prices (purchase and rent) multiplied by a factor per type. False means 'as the workload says'."""
    wl = problem.workload
    budget = wl.budget_usd if budget_usd is False else budget_usd
    power = problem.power_limit_kw if power_limit_kw is False else power_limit_kw
    upper = wl.gpus.upper if gpu_upper is False else gpu_upper
    lower = wl.gpus.lower
    factor = price_factor or {}
    costs = problem.costs
    months = costs.horizon_hours / 730.0
    single_job = problem.job_count == 1
    cands = usable_candidates(problem, only_gpu=only_gpu, makespan_hours=makespan_hours,
                              deadline_scale=deadline_scale, deadline_extra_hours=deadline_extra_hours,
                              lower=lower if single_job else None, upper=upper if single_job else None)
    if any(not cs for cs in cands):
        return Solution("infeasible", None, solver={"name": None, "reason": "a job has no usable candidate"})

    prob = pulp.LpProblem("gpu_plan", pulp.LpMinimize)
    integral = not wl.allow_mixed
    y = {}
    for k, cs in enumerate(cands):
        m = problem.classes[k].multiplicity
        for i in range(len(cs)):
            cat = "Binary" if integral and m == 1 else ("Integer" if integral else "Continuous")
            y[k, i] = prob.add_variable(f"y_{k}_{i}", lowBound=0, upBound=m, cat=cat)

    def run_cost(c: Candidate) -> float:
        return c.run_cost_usd * (factor.get(c.gpu, 1.0) if c.ownership == "rent" else 1.0)

    owned = sorted({c.gpu for cs in cands for c in cs if c.ownership == "buy"})
    total_jobs = problem.job_count
    N, S, W, z = {}, {}, {}, {}
    owned_cost_terms, kw_terms = [], []
    for g in owned:
        sizes = sorted({c.count for cs in cands for c in cs if c.gpu == g and c.ownership == "buy"})
        board = max((s.slots for s in problem.servers.get(g, [])), default=1)
        cap = min(upper or math.inf, (wl.gpus.stock or {}).get(g, math.inf),
                  math.ceil(max(sizes) * total_jobs / board) * board)
        N[g] = prob.add_variable(f"N_{_safe(g)}", lowBound=0, upBound=cap, cat="Integer")
        for n in sizes:
            z[g, n] = prob.add_variable(f"z_{_safe(g)}_{n}", cat="Binary")
            prob += N[g] >= n * z[g, n], f"fleet_{_safe(g)}_{n}"
        price = problem.unit_price[g] * factor.get(g, 1.0)
        owned_cost_terms.append(price * N[g])
        kw_terms.append(problem.gpu_kw[g] * N[g])
        options = problem.servers.get(g, [])
        if options:
            for s in options:
                S[g, s.id] = prob.add_variable(f"S_{_safe(g)}_{_safe(s.id)}", lowBound=0,
                                               upBound=math.ceil(cap / s.slots) if cap < math.inf else None,
                                               cat="Integer")
                owned_cost_terms.append(s.price_usd * S[g, s.id])
                kw_terms.append(s.overhead_kw * S[g, s.id])
            slots = pulp.lpSum(s.slots * S[g, s.id] for s in options)
            if all(s.filled for s in options):
                prob += N[g] == slots, f"slots_{_safe(g)}"
            else:
                prob += N[g] <= slots, f"slots_{_safe(g)}"
            per_server = max(s.slots for s in options)
            multi = [n for n in sizes if n > per_server]
            network_usd = max((s.network_usd for s in options if s.network_usd is not None), default=None)
            if multi and network_usd is None:  # the network joining these servers cannot be costed
                for n in multi:
                    prob += z[g, n] == 0, f"network_unknown_{_safe(g)}_{n}"
            elif multi:
                W[g] = prob.add_variable(f"W_{_safe(g)}", lowBound=0, cat="Integer")
                prob += W[g] <= pulp.lpSum(S[g, s.id] for s in options), f"network_servers_{_safe(g)}"
                for n in multi:
                    prob += W[g] >= math.ceil(n / per_server) * z[g, n], f"network_{_safe(g)}_{n}"
                owned_cost_terms.append(network_usd * W[g])
    kw = pulp.lpSum(kw_terms)
    hosting = costs.hosting_usd_per_kw_month * months * kw
    run = pulp.lpSum(run_cost(c) * y[k, i] for k, cs in enumerate(cands) for i, c in enumerate(cs))
    total = pulp.lpSum(owned_cost_terms) + hosting + run
    tie = pulp.lpSum(TIE_BREAK_USD_PER_HOUR * c.hours * y[k, i] for k, cs in enumerate(cands) for i, c in enumerate(cs))
    prob += total + tie

    for k, cs in enumerate(cands):
        m = problem.classes[k].multiplicity
        prob += pulp.lpSum(y[k, i] for i in range(len(cs))) == m, f"assign_{k}"
        for i, c in enumerate(cs):
            if c.ownership == "buy":
                prob += y[k, i] <= m * z[c.gpu, c.count], f"use_{k}_{i}"
    due = [problem.classes[k].deadline * deadline_scale + deadline_extra_hours if problem.classes[k].deadline
           else costs.horizon_hours for k in range(len(cands))]
    if makespan_hours is not None:
        due = [min(d, makespan_hours) for d in due]
    for g in owned:
        for level, limit in enumerate(sorted(set(due))):
            terms = [c.gpu_hours * y[k, i] for k, cs in enumerate(cands) for i, c in enumerate(cs)
                     if c.gpu == g and c.ownership == "buy" and due[k] <= limit]
            if terms:
                prob += pulp.lpSum(terms) <= limit * N[g], f"capacity_{_safe(g)}_{level}"
    fleet = pulp.lpSum(N.values()) + pulp.lpSum(
        c.count * y[k, i] for k, cs in enumerate(cands) for i, c in enumerate(cs) if c.ownership == "rent")
    if lower is not None:
        prob += fleet >= lower, "gpu_count_min"
    if upper is not None:
        prob += fleet <= upper, "gpu_count_max"
    if power is not None and owned:
        prob += kw <= power, "power"
    if budget is not None:
        prob += total <= budget, "budget"

    name, solver = _solver(time_limit)
    try:
        with _quiet_stdout():
            prob.solve(solver)
    except pulp.PulpSolverError as exc:
        raise SolverError(f"the {name} solver failed: {exc}") from None
    status = pulp.LpStatus[prob.status]
    if prob.sol_status == pulp.LpSolutionInfeasible or status == "Infeasible":
        return Solution("infeasible", None, solver={"name": name, "status": status})
    if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        limit = f" within the {time_limit:g} s time limit" if time_limit is not None else ""
        raise SolverError(f"the {name} solver found no plan{limit} (status {status}); raise --time-limit "
                          "or simplify the workload")
    proven = prob.sol_status == 1
    assignment = []
    for k, cs in enumerate(cands):
        for i, c in enumerate(cs):
            jobs = y[k, i].value() or 0.0
            if jobs > 1e-6:
                assignment.append((c, round(jobs) if integral else jobs))
    bought = {g: int(round(N[g].value() or 0)) for g in owned if round(N[g].value() or 0) > 0}
    servers = {g: {sid: int(round(v.value() or 0)) for (gg, sid), v in S.items() if gg == g and round(v.value() or 0) > 0}
               for g in bought}
    servers = {g: d for g, d in servers.items() if d}
    networked = {g: int(round(W[g].value() or 0)) for g in W if round(W[g].value() or 0) > 0}
    mip_objective = pulp.value(total)
    assignment = _use_idle_gpus(problem, assignment, bought, networked, run_cost,
                                max(1.0, IDLE_GPU_TOLERANCE * mip_objective))
    opts = {g: {s.id: s for s in problem.servers.get(g, [])} for g in bought}
    server_kw = sum(opts[g][sid].overhead_kw * n for g, d in servers.items() for sid, n in d.items())
    gpu_kw = sum(problem.gpu_kw[g] * n for g, n in bought.items())
    breakdown = {
        "purchase_usd": float(sum(problem.unit_price[g] * factor.get(g, 1.0) * n for g, n in bought.items())),
        "servers_usd": float(sum(opts[g][sid].price_usd * n for g, d in servers.items() for sid, n in d.items())
                             + sum(max(s.network_usd or 0.0 for s in problem.servers[g]) * n
                                   for g, n in networked.items())),
        "energy_usd": float(sum(run_cost(c) * n for c, n in assignment if c.ownership == "buy")),
        "hosting_usd": float(costs.hosting_usd_per_kw_month * months * (gpu_kw + server_kw)),
        "rental_usd": float(sum(run_cost(c) * n for c, n in assignment if c.ownership == "rent")),
    }
    gap = _gap(prob, name) if proven else _gap(prob, name, proven=False)
    return Solution("optimal" if proven else "feasible", sum(breakdown.values()), assignment, bought, servers,
                    networked, breakdown,
                    {"name": name, "status": status, "proven_optimal": proven, "gap": gap}, mip_objective)


def _use_idle_gpus(problem: Problem, assignment, bought, networked, run_cost, allowance):
    """GPUs often come in boards of eight: a lone job that needs one of them would leave seven idle.
    When a single job owns a GPU type alone, move it to the fastest of its candidates that fits in
    the GPUs (and networked servers) already bought, if that costs at most `allowance` more."""
    owners: dict[str, list] = {}
    for c, n in assignment:
        if c.ownership == "buy":
            owners.setdefault(c.gpu, []).append((c, n))
    moves = {}
    for g, items in owners.items():
        if len(items) != 1 or items[0][1] != 1:
            continue  # GPUs shared over time by several jobs: the capacity constraints decide
        c = items[0][0]
        per_server = max((s.slots for s in problem.servers.get(g, [])), default=bought[g])
        reach = max(per_server, per_server * networked.get(g, 0))
        # faster than c, so within every deadline and makespan cap c meets; no fewer GPUs than c
        faster = [o for o in problem.candidates[c.cls] if o.gpu == g and o.ownership == "buy"
                  and o.hours < c.hours and c.count <= o.count <= min(bought[g], reach)
                  and run_cost(o) - run_cost(c) <= allowance]
        if faster:
            moves[id(c)] = min(faster, key=lambda o: (o.hours, o.count))
    return [(moves.get(id(c), c), n) for c, n in assignment]


@contextlib.contextmanager
def _quiet_stdout():
    """highspy prints a banner from C++ whenever a Highs object is built, whatever the options;
    keep it out of our stdout (which may be JSON) by pointing file descriptor 1 at /dev/null."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (embedded use): nothing to protect
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _safe(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")


def _gap(prob, name: str, proven: bool = True) -> float | None:
    if name != "highs":
        return 0.0 if proven else None
    try:
        return round(float(prob.solverModel.getInfo().mip_gap), 6)
    except Exception:  # an LP, or a model presolve solved outright, has no MIP gap
        return 0.0 if proven else None


def candidate_hours(problem: Problem) -> list[float]:
    """Distinct wall times of all candidates that meet their deadlines: the makespans worth trying."""
    hours = {round(c.hours, 9) for cls, cs in zip(problem.classes, problem.candidates) for c in cs
             if cls.deadline is None or c.hours <= cls.deadline}
    return sorted(hours)


def solve_fastest(problem: Problem, *, time_limit: float | None = 30.0, **kwargs) -> Solution:
    """--objective time: the shortest makespan any plan within the budget reaches, then the
    cheapest plan at that makespan. Binary search over the candidates' distinct wall times
    (the optimal makespan is one of them), one cost MILP per probe."""
    hours = candidate_hours(problem)
    if not hours:
        return solve(problem, time_limit=time_limit, **kwargs)
    best = solve(problem, makespan_hours=hours[-1], time_limit=time_limit, **kwargs)
    if not best.feasible:
        return best
    lo, hi = 0, len(hours) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        trial = solve(problem, makespan_hours=hours[mid], time_limit=time_limit, **kwargs)
        if trial.feasible:
            best, hi = trial, mid
        else:
            lo = mid + 1
    if best.makespan_hours > hours[lo] * (1 + 1e-9):
        best = solve(problem, makespan_hours=hours[lo], time_limit=time_limit, **kwargs)
    return best


def frontier(problem: Problem, *, points: int = 24, time_limit: float | None = 30.0) -> list[Solution]:
    """The cost-versus-time Pareto front: cheapest plan under a sweep of makespan caps, keeping
    plans no other plan beats on both cost and makespan. Sorted by makespan."""
    hours = candidate_hours(problem)
    if len(hours) > points:  # sample evenly in log-time, always keeping both ends
        step = (len(hours) - 1) / (points - 1)
        hours = sorted({hours[round(i * step)] for i in range(points)})
    sols = [solve(problem, makespan_hours=h, time_limit=time_limit) for h in reversed(hours)]
    front = []
    for sol in sorted((s for s in sols if s.feasible), key=lambda s: (s.makespan_hours, s.objective_usd)):
        if not front or sol.objective_usd < front[-1].objective_usd - 1e-6:
            front.append(sol)
    return front
