"""The MILP of docs/model.md §2.2: its variables and objective, in the document's order (its rows
come from the constraint families, solve/constraints/; solve/formulation.py puts them together).

  y[k,c]   jobs of class k run on candidate c (integer 0..m_k; continuous when allow_mixed)
  z[g,n]   binary: some owned job uses n GPUs of type g
  N[g]     integer GPUs of type g bought;  S[g,s] servers of platform s holding them
  H[g,p]   integer GPUs of type g held until period p, then resold (solve/holding.py);
  K[g,p]   binary: type g is held until period p (all its GPUs together: a job needs its GPUs at once)
  SX[g,p]   g's servers' cost, whole, for the months held until p beyond the least (server_terms.py)
  F[g]     the network joining type g's servers, USD (sized to its widest job: >= cost(n) z[g,n])
  r[k,i]   integer replicas of serving candidate i for request class k
  I[g,o]   integer GPUs of type g rented for serving from provider o and billed beyond the replicas' own: an
           offer sold by whole nodes (or a minimum block) bills its serving GPUs in nodes B[g,o] (solve/serving_nodes.py)
  X[k,A,j] integer replicas of rented layout j serving class k until its bought GPUs arriving at A do (with their
           whole-node idle GPUs and nodes; solve/serving_bridge.py)
  R[o]     integer nodes rented for the term of reservation pool o, shared by the jobs on it (solve/reserved.py)
  u[k,c]   allow_mixed only: integer copies a rented candidate holds at once, ceil(y[k,c]) (a share of
           a job's tokens still holds all its GPUs): y <= u <= y + 1 - epsilon; what the GPU count counts

  objective  purchase, servers and network with their tax and burn-in (owned), hosting and support
             while held less the discounted resale (each holding period), + energy (owned) or rent
             of every chosen candidate and replica, + the training storage (every plan: a constant),
             + a tie-break that prefers sooner finishes among equal-cost plans.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

import pulp

from advisor.solve.problem import Candidate, Problem, ServeCandidate, ServerOption
from advisor.solve.reserved import PoolKey, add_pools, training_terms
from advisor.solve.rows import affine, safe
from advisor.solve.scenario import Scenario
from advisor.solve.server_terms import server_hold_terms, server_holding
from advisor.solve.serving_nodes import BillKey, bill_key, bill_name, block_gpus, serving_node_offers

TIE_BREAK_USD_PER_HOUR = 1e-6
COPY_EPSILON = 1e-4  # allow_mixed: the least share of a job a rented column with copies held runs
IDLE_GPU_TOLERANCE = 0.001  # idle bought GPUs are put to work when that costs < 0.1% of the plan (or $1)


class Model:
    """The PuLP model of one scenario over the candidates `cands` (per training class) and `scands`
    (per serving request class)."""

    def __init__(
        self,
        problem: Problem,
        sc: Scenario,
        cands: list[list[Candidate]],
        scands: list[list[ServeCandidate]],
        redrawn: bool = False,
        slowest: Mapping[str, float] | None = None,
    ):
        self.problem, self.sc, self.cands, self.scands = problem, sc, cands, scands
        self.redrawn = redrawn  # re-priced in place by robustness draws (solve/redraw.py): columns for every price
        self.cuts = False  # with the valid server cuts (constraints/slots.py server_cuts): the few-jobs draws' model
        self.slowest = dict(slowest or {})  # the slowest speed a draw gives a GPU type: its serving GPU cap holds it
        self.prob = pulp.LpProblem("gpu_plan", pulp.LpMinimize)
        self.integral = not problem.workload.allow_mixed
        self.owned = sorted(
            {c.gpu for cs in cands for c in cs if c.ownership == "buy"}
            | {c.gpu for _, _, c in self.serve_pairs() if c.ownership == "buy"}
        )
        self.y: dict[tuple[int, int], pulp.LpVariable] = {}
        self.z: dict[tuple[str, int], pulp.LpVariable] = {}
        self.N: dict[str, pulp.LpVariable] = {}
        self.S: dict[tuple[str, str], pulp.LpVariable] = {}
        self.F: dict[str, pulp.LpVariable] = {}
        self.H: dict[tuple[str, int], pulp.LpVariable] = {}
        self.K: dict[tuple[str, int], pulp.LpVariable] = {}
        self.SX: dict[tuple[str, int], pulp.LpVariable] = {}  # SX[g,p] (solve/server_terms.py)
        self.cap: dict[str, float] = {}  # the most GPUs of a type the model may buy
        self.r: dict[tuple[int, int], pulp.LpVariable] = {}
        self.u: dict[tuple[int, int], pulp.LpVariable] = {}  # allow_mixed: copies a rented column holds at once
        self.R: dict[PoolKey, pulp.LpVariable] = {}  # reserved nodes per pool (solve/reserved.py)
        self.pool_rep: dict[PoolKey, Candidate] = {}  # ... and the member a node is costed as
        self.pool_of: dict[tuple[int, int], PoolKey] = {}  # the columns whose jobs rent in a pool, and its key
        self.pool_live: dict[tuple[int, int], tuple[Candidate, bool]] = {}  # reserved.in_pool's memo
        self.idle: dict[BillKey, pulp.LpVariable] = {}  # I[g,o]: serving GPUs billed beyond the replicas' (whole nodes)
        self.nodes: dict[BillKey, pulp.LpVariable] = {}  # B[g,o]: the nodes (or GPUs, by the GPU) they are billed in
        self.idle_layout: dict[BillKey, ServeCandidate] = {}  # what one idle GPU of (g, o) costs: a GPU of this layout
        self.down: dict[int, pulp.LpVariable] = {}  # D_k: the rate of class k's largest replica (n+1)
        self.uses: dict[tuple[int, int], pulp.LpVariable] = {}  # n+1: does class k use serving layout i?
        self.bridge: dict[tuple[int, float, int], pulp.LpVariable] = {}  # X[k,A,j] (solve/serving_bridge.py)
        self.bridge_layouts: dict[tuple[int, float], list[ServeCandidate]] = {}  # (k, A) -> its bridge layouts j
        self.bridge_idle: dict[
            tuple[int, float, BillKey], pulp.LpVariable
        ] = {}  # (k, A, (type, provider)) -> idle GPUs
        self.bridge_nodes: dict[tuple[int, float, BillKey], pulp.LpVariable] = {}  # ... and the nodes they fill
        self.bridge_rates: list[tuple[str, str, float, int, ServeCandidate]] = []  # (row, column, sign, k, layout):
        # the row coefficients that are a replica's counted rate (a draw's speed changes them)
        self.sizes: dict[str, list[int]] = {}
        self.capacity_gpu: dict[
            str, str
        ] = {}  # capacity row name -> its GPU type (speed changes scale one coefficient)
        self.serve_capacity_gpu: dict[str, str] = {}  # serve_capacity rows: a draw scales held and serving hours
        self.total = pulp.LpAffineExpression()  # present value over the horizon: what the objective minimises
        self.cash = pulp.LpAffineExpression()  # nominal cash paid over the horizon: what a budget caps
        self.kw = pulp.LpAffineExpression()

    def pairs(self) -> Iterator[tuple[int, int, Candidate]]:
        return ((k, i, c) for k, cs in enumerate(self.cands) for i, c in enumerate(cs))

    def serve_pairs(self) -> Iterator[tuple[int, int, ServeCandidate]]:
        return ((k, i, c) for k, cs in enumerate(self.scands) for i, c in enumerate(cs))

    def run_cost(self, c: Candidate | ServeCandidate, basis: str = "present_value") -> float:
        """One job's (or replica's) energy or rent at the scenario's prices: present value, or cash."""
        base = c.run_cost_usd if basis == "present_value" or c.run_cost_nominal is None else c.run_cost_nominal
        return base * self.sc.run_price(c)

    def price(self, g: str) -> float:
        """One bought GPU of type g at the scenario's price (paid today: cash and present value alike)."""
        price = self.problem.unit_price[g]
        assert price is not None, f"{g} is owned without a purchase price"  # candidates.py offers none
        return price * self.sc.buy_price(g)

    def buy_cost(self, g: str) -> float:
        """One bought GPU of type g paid today: its price with the tax on it, and its burn-in's energy."""
        hw = self.problem.hardware.get(g)
        return self.price(g) * (1.0 + hw.tax_rate) + hw.burn_in_usd if hw else self.price(g)

    def server_cost(self, g: str, server: ServerOption) -> float:
        """One server for type g, with the tax on it."""
        hw = self.problem.hardware.get(g)
        return server.price_usd * (1.0 + (hw.tax_rate if hw else 0.0))

    def hold_cost(self, g: str, level: int, basis: str = "present_value") -> float:
        """Holding one bought GPU of type g until period `level`: hosting and support while held,
        less the discounted resale of a GPU bought at the scenario's price (present value), or the
        hosting and support paid (cash: resale is not cash in hand at decision time)."""
        h = self.problem.holdings[g][level]
        return (
            h.pv_usd(self.price(g)) + self.support(g) * h.months_held_pv
            if basis == "present_value"
            else h.cash_usd + self.support(g) * h.months_held
        )

    def per_price_usd(self, g: str, basis: str = "present_value") -> tuple[float, list[float]]:
        """Per dollar of g's purchase price, what one bought GPU pays in present value: at purchase
        (1 + the tax), and at each holding level the support on it less its discounted resale (what a
        purchase-price factor scales: explain/plan_cost.py, explain/saa.py, solve/redraw.py); in cash,
        the support paid (resale is not cash in hand at decision time, as in hold_cost)."""
        hw = self.problem.hardware.get(g)
        tax, rate = (hw.tax_rate, hw.support_rate_month) if hw else (0.0, 0.0)
        held = self.problem.holdings.get(g, [])
        if basis == "cash":
            return 1.0 + tax, [rate * h.months_held for h in held]
        return 1.0 + tax, [rate * h.months_held_pv - h.resale_pv_per_usd for h in held]

    def support(self, g: str) -> float:
        """Support per month of one bought GPU of type g: the contract's rate on its price (its server's
        whole price is supported with its servers, solve/server_terms.py)."""
        hw = self.problem.hardware.get(g)
        return hw.support_rate_month * self.price(g) if hw else 0.0

    def peak(self, k: int) -> float:
        """Serving class k's peak requests/s under the scenario's traffic factor."""
        return self.problem.serve_classes[k].peak_rps * self.sc.traffic_factor

    def counted_rate(self, k: int, c: ServeCandidate) -> float:
        """A replica's rate as the rows count it: at the scenario's speed of its GPU (a speed break-even;
        a robustness draw sets the same, solve/redraw.py), at most the class's peak. Exact for 'the
        replicas hold the peak' (a replica faster than the peak holds it alone either way), and it keeps a
        replica measured at a million requests/s from out-weighing the solver's integrality tolerance
        (u = 1 - 1e-6 would take down all but a request/s of it, passing n+1 with one replica)."""
        return min(c.requests_per_s * self.sc.speed_factor.get(c.gpu, 1.0), self.peak(k))

    def value(self, var: pulp.LpVariable) -> int:
        return int(round(var.value() or 0))

    # ------------------------------------------------------------------ variables
    def variables(self) -> None:
        p, prob = self.problem, self.prob
        for k, i, _ in self.pairs():
            m = p.classes[k].multiplicity
            cat = "Binary" if self.integral and m == 1 else ("Integer" if self.integral else "Continuous")
            self.y[k, i] = prob.add_variable(f"y_{k}_{i}", lowBound=0, upBound=m, cat=cat)
        if not self.integral:
            self.started_copies()
        bought: dict[str, set[int]] = {}  # GPU -> the counts its bought candidates use (one pass, not one per GPU)
        for _, _, c in self.pairs():
            if c.ownership == "buy":
                bought.setdefault(c.gpu, set()).add(c.count)
        for g in self.owned:
            sizes = self.sizes[g] = sorted(bought.get(g, ()))
            board = max((s.slots for s in p.servers.get(g, [])), default=1)
            want = max(sizes, default=0) * p.job_count + self.serving_gpu_cap(g)
            cap = min(self.sc.gpu_upper or math.inf, math.ceil(want / board) * board)
            self.N[g] = prob.add_variable(f"N_{safe(g)}", lowBound=0, upBound=cap, cat="Integer")
            self.cap[g] = cap
            for n in sizes:
                self.z[g, n] = prob.add_variable(f"z_{safe(g)}_{n}", cat="Binary")
            for s in p.servers.get(g, []):
                self.S[g, s.id] = prob.add_variable(
                    f"S_{safe(g)}_{safe(s.id)}",
                    lowBound=0,
                    upBound=math.ceil(cap / s.slots) if cap < math.inf else None,
                    cat="Integer",
                )
            if self.multi_server_sizes(g) and all(
                self.network_usd(g, n) is not None for n in self.multi_server_sizes(g)
            ):
                self.F[g] = prob.add_variable(f"F_{safe(g)}", lowBound=0)
            for level in range(len(p.holdings[g])):
                self.H[g, level] = prob.add_variable(f"H_{safe(g)}_{level}", lowBound=0, upBound=cap, cat="Integer")
                self.K[g, level] = prob.add_variable(f"K_{safe(g)}_{level}", cat="Binary")
        self.SX = server_holding(prob, p, self.S, self.K, self.cap)
        for k, i, sc in self.serve_pairs():  # one replica more when the class keeps a spare (n+1)
            spare = int(p.serve_classes[k].spare)
            self.r[k, i] = prob.add_variable(
                f"r_{k}_{i}",
                lowBound=0,
                upBound=math.ceil(self.peak(k) / self.least_rate(k, sc)) + spare,
                cat="Integer",
            )
        add_pools(self)
        self.billed_nodes()  # (the bridge's columns: serving_bridge.add_bridge_columns, by build_model)

    def billed_nodes(self) -> None:
        """I[g,o] and B[g,o] for each GPU type g rented for serving from an offer o sold in blocks of more
        than one GPU; an idle GPU is paid as a GPU of that offer's rented layout with the longest serving hours."""
        bills = serving_node_offers(c for _, _, c in self.serve_pairs())
        for key, offer in bills.items():
            mine = self.billed_layouts(key)
            self.idle_layout[key] = max((c for _, _, c in mine), key=lambda c: (c.hours, -c.gpus))
            most = sum(c.gpus * (self.r[k, i].upBound or 0) for k, i, c in mine)
            block = block_gpus(offer)
            name = bill_name(key, bills)
            self.idle[key] = self.prob.add_variable(
                f"I_{name}", lowBound=0, upBound=max(block, offer.min_gpus), cat="Integer"
            )
            self.nodes[key] = self.prob.add_variable(
                f"B_{name}",
                lowBound=0,
                upBound=math.ceil((most + max(block, offer.min_gpus)) / block),
                cat="Integer",
            )

    def billed_layouts(self, key: BillKey) -> list[tuple[int, int, ServeCandidate]]:
        """The rented serving layouts on one bill (GPU type, provider)."""
        return [(k, i, c) for k, i, c in self.serve_pairs() if bill_key(c) == key]

    def idle_cost(self, key: BillKey, basis: str = "present_value") -> float:
        """One serving GPU billed beyond the replicas' on bill `key`: a GPU of its idle layout's rent."""
        c = self.idle_layout[key]
        return self.run_cost(c, basis) / c.gpus

    def least_rate(self, k: int, c: ServeCandidate) -> float:
        """A replica's counted rate at the scenario's speed or the slowest a draw gives its GPU (`slowest`),
        whichever is less: what the bounds on replicas and GPUs are sized with, so a slow draw fits them."""
        return min(self.counted_rate(k, c), c.requests_per_s * self.slowest.get(c.gpu, 1.0))

    def serving_gpu_cap(self, g: str) -> int:
        """Most owned GPUs of type g serving could want: each class on its hungriest layout alone."""
        return sum(
            max(
                (
                    (math.ceil(self.peak(k) / self.least_rate(k, c)) + self.problem.serve_classes[k].spare) * c.gpus
                    for c in cs
                    if c.gpu == g and c.ownership == "buy"
                ),
                default=0,
            )
            for k, cs in enumerate(self.scands)
        )

    def multi_server_sizes(self, g: str) -> list[int]:
        """The job sizes (GPUs) of type g that span more than one server."""
        options = self.problem.servers.get(g, [])
        if not options:
            return []
        per_server = max(s.slots for s in options)
        return [n for n in self.sizes[g] if n > per_server]

    def per_server(self, g: str) -> int:
        """GPU slots of type g's largest server (what a networked job is counted in)."""
        return max((s.slots for s in self.problem.servers.get(g, [])), default=1)

    def network_usd(self, g: str, n: int) -> float | None:
        """The network a job of n GPUs of type g needs (its servers joined: NICs and the fabric of
        their band, taxed; economics/purchase_bill.py); None: it cannot be costed."""
        hw = self.problem.hardware.get(g)
        ps = self.per_server(g)
        return hw.network_usd(math.ceil(n / ps) * ps) if hw is not None else None

    # ------------------------------------------------------------------ objective
    def cost_terms(self) -> None:
        """The total cost over the horizon in present value (`total`) and in cash (`cash`), and the
        owned kW (`kw`)."""
        self.total = self._costs("present_value")
        self.cash = self._costs("cash")

    def _costs(self, basis: str) -> pulp.LpAffineExpression:
        p = self.problem
        owned: list[tuple[pulp.LpVariable, float]] = []
        kw: list[tuple[pulp.LpVariable, float]] = []
        for g in self.owned:
            owned.append((self.N[g], self.buy_cost(g)))
            kw.append((self.N[g], p.gpu_kw[g]))
            for s in p.servers.get(g, []):
                owned.append((self.S[g, s.id], self.server_cost(g, s)))
                kw.append((self.S[g, s.id], s.overhead_kw))
            if g in self.F:
                owned.append((self.F[g], 1.0))
            owned += [(self.H[g, level], self.hold_cost(g, level, basis)) for level in range(len(p.holdings[g]))]
        owned += server_hold_terms(p, self.SX, self.S, self.H, basis)  # each server bought, whole
        self.kw = affine(kw)
        run = affine((v, self.run_cost(c, basis) * w) for v, c, w in training_terms(self)) + self.serving_cost(basis)
        return affine(owned) + run + self.storage_usd

    @property
    def storage_usd(self) -> float:
        """The training storage every plan pays, bought or rented (a constant: it moves no choice)."""
        return self.problem.storage.usd if self.problem.storage is not None else 0.0

    def serving_cost(self, basis: str = "present_value") -> pulp.LpAffineExpression:
        """Energy (owned) or rent per replica over the serving hours, and the rent of the GPUs an offer
        sold by whole nodes bills beyond them."""
        return (
            pulp.lpSum(self.run_cost(c, basis) * self.r[k, i] for k, i, c in self.serve_pairs())
            + pulp.lpSum(self.idle_cost(g, basis) * v for g, v in self.idle.items())
            + pulp.lpSum(self.run_cost(b, basis) * w * v for v, b, w in self.bridge_terms())
        )

    def bridge_terms(self) -> list[tuple[pulp.LpVariable, ServeCandidate, float]]:
        """(column, layout, weight): the bridge's cost is the layout's run cost x weight x the column
        (a replica, or an idle billed GPU as 1 / the layout's GPUs of one)."""
        out = [(v, self.bridge_layouts[k, a][j], 1.0) for (k, a, j), v in self.bridge.items()]
        for (k, a, key), v in self.bridge_idle.items():
            paid_as = next(b for b in self.bridge_layouts[k, a] if bill_key(b) == key)
            out.append((v, paid_as, 1.0 / paid_as.gpus))
        return out

    def tie_break(self) -> pulp.LpAffineExpression:
        """Sooner finishes among equal-cost plans: 1e-6 $ per hour of each job's wall time."""
        return affine((self.y[k, i], TIE_BREAK_USD_PER_HOUR * c.hours) for k, i, c in self.pairs())

    def started_copies(self) -> None:
        """With allow_mixed, y is a share of a class's tokens, but a job with any share on a rented
        column holds all its GPUs while it runs: u = ceil(y), the copies it rents at once."""
        for k, i, c in self.pairs():
            if c.ownership == "rent":
                y = self.y[k, i]
                u = self.u[k, i] = self.prob.add_variable(f"u_{k}_{i}", lowBound=0, upBound=y.upBound, cat="Integer")
                self.prob += y <= u, f"copies_{k}_{i}_lo"
                self.prob += u <= y + 1 - COPY_EPSILON, f"copies_{k}_{i}_hi"

    def rented_gpus(self, gpu: str | None = None) -> pulp.LpAffineExpression:
        """GPUs rented at once by the training jobs and the serving replicas (of type `gpu` only, if given)."""
        held = self.u if not self.integral else self.y
        return (
            pulp.lpSum(
                c.count * held[k, i] for k, i, c in self.pairs() if c.ownership == "rent" and gpu in (None, c.gpu)
            )
            + pulp.lpSum(
                c.gpus * self.r[k, i]
                for k, i, c in self.serve_pairs()
                if c.ownership == "rent" and gpu in (None, c.gpu)
            )
            + pulp.lpSum(v for key, v in self.idle.items() if gpu in (None, key[0]))
        )

    def serving_solution(self) -> list[tuple[ServeCandidate, int]]:
        return [
            (c, int(round(self.r[k, i].value() or 0)))
            for k, i, c in self.serve_pairs()
            if (self.r[k, i].value() or 0) > 0.5
        ]

    def idle_solution(self) -> dict[BillKey, tuple[int, ServeCandidate]]:
        """(GPU, provider) -> (serving GPUs billed beyond the replicas', the layout one of them is paid as)."""
        return {g: (self.value(v), self.idle_layout[g]) for g, v in self.idle.items() if self.value(v) > 0}

    def bridge_solution(self) -> tuple[list[tuple[ServeCandidate, int]], dict]:
        """The bridge replicas (layout, replicas), and (class, hours to arrival, (rented type, provider)) -> (GPUs billed
        beyond them, the layout one is paid as)."""
        used = [(self.bridge_layouts[k, a][j], self.value(v)) for (k, a, j), v in self.bridge.items()]
        idle = {
            key: (self.value(v), next(b for b in self.bridge_layouts[key[:2]] if bill_key(b) == key[2]))
            for key, v in self.bridge_idle.items()
        }
        return [(b, n) for b, n in used if n > 0], {key: x for key, x in idle.items() if x[0] > 0}


def idle_owned_gpus(model: Model) -> bool:
    """Does some bought GPU type have GPUs no job of it uses at once (e.g. 1 job on an 8-GPU board)?"""
    used: dict[str, int] = {}  # GPU -> the most GPUs a job of it uses at once (one pass over the columns)
    for k, i, c in model.pairs():
        if c.ownership == "buy" and c.gpu in model.N and (model.y[k, i].value() or 0) > 1e-6:
            used[c.gpu] = max(used.get(c.gpu, 0), c.count)
    for g, var in model.N.items():
        bought = model.value(var)
        if bought and g in used and used[g] < bought:
            return True
    return False
