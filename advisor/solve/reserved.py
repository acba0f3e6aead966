"""Reserved nodes shared by jobs. A commitment (a reservation's term, a capacity block's or cluster
contract's minimum term: Candidate.commits) is sold in whole nodes for a term, and the nodes held
for it can carry any jobs that fit in them at once, or, for copies of a job with no deadline, in
turn within the term. So the MILP rents integer nodes per pool (R[o]: one offer, one term) and the
jobs on it fill them, instead of each job paying its own whole nodes for its own term:

  reserved_o   sum_{(k,c) in o} share(c) x copies(k,c)  <=  node GPUs(o) x R[o]

share(c) is the GPUs a job takes of the nodes (its count rounded up to a divisor of a node, so jobs
of such sizes pack into the nodes exactly; whole nodes from a node up), divided by the copies that
run in turn on them within the term (`turns`: none with a deadline or a bounded fleet, as
gpu_count.copies_at_once counts them, nor for a job of more than a node). R[o] costs a node's term,
each member's own cost per billed GPU (they share offer and term). A job joins a pool when it fits
in one term and is billed that term (`poolable`); a longer one pays its own use as before. A plan's
cost reads the pools off its assignment (`paid_training`): R[o] is the least integer the row allows,
as the MILP's cost makes it. The rows count GPUs, and the copies in turn time within the term, so
jobs of mixed sizes or lengths are packed as a volume (docs/model.md).

Pools are built when the workload has more than one job (a single job's pool is its own whole
nodes, what it is billed already). An offer whose smallest block is more than a node is billed per
job as before (the block would need a binary per pool)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from advisor.solve.rows import affine

if TYPE_CHECKING:
    import pulp

    from advisor.solve.problem import Candidate, Problem

PoolKey = tuple[str, str, str, float, float]  # (GPU, kind, provider, $/GPU-hour, the term's hours)


class PoolModel(Protocol):
    """What of the MILP (solve/model.Model) the pools read and add to: named here, so that the model can
    build on this module without this one importing it back."""

    problem: Problem
    cands: list[list[Candidate]]
    prob: pulp.LpProblem
    integral: bool
    y: dict[tuple[int, int], pulp.LpVariable]
    u: dict[tuple[int, int], pulp.LpVariable]
    R: dict[PoolKey, pulp.LpVariable]
    pool_rep: dict[PoolKey, Candidate]
    pool_of: dict[tuple[int, int], PoolKey]
    pool_live: dict[tuple[int, int], tuple[Candidate, bool]]

    def pairs(self) -> Iterator[tuple[int, int, Candidate]]: ...


def copies_held(n: float) -> int:
    """Copies of a job a rented column holds at once when the solution puts `n` on it (copies, or a
    job's share of its tokens with allow_mixed): a share holds all the job's GPUs."""
    return math.ceil(n - 1e-6)


def at_once(problem: Problem, c: Candidate) -> bool:
    """Must every copy of c's job hold its GPUs from its start: it has a deadline (each copy runs from
    its start, as the plan's times and the RFQ's dates assume), or the workload bounds the fleet (the
    gpu_count row counts every rented copy at once)."""
    sel = problem.workload.gpus
    bounded = sel.count is not None or sel.min is not None or sel.max is not None
    return problem.classes[c.cls].deadline is not None or bounded


def in_turn(problem: Problem, c: Candidate, span: float | None = None) -> int:
    """Copies of a rented job that can run one after another on the same GPUs within `span` hours (the
    horizon left after its start, at most): one when they run at once (at_once), else as many planned
    runs as fit (at least one)."""
    if at_once(problem, c) or c.planned_hours <= 0:
        return 1
    left = problem.costs.horizon_hours - c.start_hours
    return max(1, math.floor(min(left, span if span is not None else left) / c.planned_hours))


def pooling(problem: Problem) -> bool:
    """Do jobs share reserved nodes here: more than one job (one job's pool is its own billing). Counted
    only up to two: a fleet's candidates ask this once each (job_count summed 109 classes 40,000 times)."""
    jobs = 0
    for cls in problem.classes:
        jobs += cls.multiplicity
        if jobs > 1:
            return True
    return False


def unit_gpus(c: Candidate) -> int:
    """GPUs a reservation's node holds (one for a pod rentable by the GPU)."""
    assert c.offer is not None
    return c.offer.node_gpus if c.offer.offer.whole_nodes else 1


def poolable(c: Candidate) -> bool:
    """Could c's job rent in a pool of reserved nodes: a commitment whose job fits in one term and is
    billed that term (not: a job as long as the term, which pays its own use, and an offer whose smallest
    block is more than a node, which would need a binary per pool)."""
    if not c.commits or c.offer is None or not c.billed_hours or not c.billed_gpus:
        return False
    offer = c.offer.offer
    term = offer.term_hours or 0.0
    return offer.min_gpus <= unit_gpus(c) and c.hours < term and abs(c.billed_hours - term) <= 1e-6 * term


def pool_key(problem: Problem, c: Candidate) -> PoolKey | None:
    """The pool of reserved nodes candidate c rents in (None: billed on its own): a poolable job that
    leaves part of its billed nodes or term to others (smaller than its nodes, or copies in turn)."""
    if not pooling(problem) or not poolable(c):
        return None
    assert c.offer is not None and c.billed_hours is not None and c.billed_gpus is not None
    if footprint(c) >= c.billed_gpus and turns(problem, c) == 1:
        return None  # it fills the whole nodes it is billed for, all its term: a pool would bill the same
    offer = c.offer.offer
    return (c.gpu, c.kind or offer.pricing, offer.provider, offer.usd_per_gpu_hour, c.billed_hours)


def footprint(c: Candidate) -> int:
    """GPUs of the nodes a job takes: whole nodes from a node up; below, its count rounded up to a
    divisor of the node (jobs of 1, 2, 4 GPUs pack into 8-GPU nodes with nothing left over)."""
    unit = unit_gpus(c)
    if c.count >= unit:
        return math.ceil(c.count / unit) * unit
    return min(d for d in range(c.count, unit + 1) if unit % d == 0)


def turns(problem: Problem, c: Candidate) -> int:
    """Copies of c's job that run one after another on the same GPUs within its billed term: none for a
    job of more than a node (the pool's row counts GPUs, and a share of such a job below its own nodes
    would let its copies run on fewer GPUs than one of them needs)."""
    assert c.billed_hours is not None
    return 1 if alone_at_once(problem, c) else in_turn(problem, c, c.billed_hours)


def alone_at_once(problem: Problem, c: Candidate) -> bool:
    """Does each copy of c take its whole footprint of the pool for the term (turns 1)?"""
    return at_once(problem, c) or footprint(c) > unit_gpus(c)


def share(problem: Problem, c: Candidate) -> float:
    """GPUs of the pool one copy of c takes (its footprint over the copies run in turn on it)."""
    return footprint(c) / turns(problem, c)


def node_weight(c: Candidate) -> float:
    """One reserved node as a share of c's own billing: c's run cost x this is a node's for the term."""
    assert c.billed_gpus
    return unit_gpus(c) / c.billed_gpus


def add_pools(m: PoolModel) -> None:
    """R[o] for each pool a candidate rents in (integer nodes, at most what its jobs fill each on its
    own nodes), the pool of each such column and the member a node is costed as (any: they share offer
    and term; the longest)."""
    p = m.problem
    most: dict[PoolKey, float] = {}
    for k, i, c in m.pairs():
        key = pool_key(p, c)
        if key is None:
            continue
        m.pool_of[k, i] = key
        most[key] = most.get(key, 0.0) + footprint(c) * p.classes[k].multiplicity
        if key not in m.pool_rep or c.hours > m.pool_rep[key].hours:
            m.pool_rep[key] = c
    for n, key in enumerate(sorted(most)):
        top = math.ceil(most[key] / unit_gpus(m.pool_rep[key]) - 1e-9)
        m.R[key] = m.prob.add_variable(f"R_{n}", lowBound=0, upBound=top, cat="Integer")


def in_pool(m: PoolModel, k: int, i: int) -> bool:
    """Is column (k, i) in its pool at the model's current speeds (a speed model re-costs its candidates
    in place: a job slowed past its term leaves the pool and pays its own use)? Remembered per candidate
    object (the fast path re-prices every column many times)."""
    key = m.pool_of.get((k, i))
    if key is None:
        return False
    c = m.cands[k][i]
    seen = m.pool_live.get((k, i))
    if seen is None or seen[0] is not c:
        seen = m.pool_live[k, i] = (c, pool_key(m.problem, c) == key)
    return seen[1]


def pool_coefs(m: PoolModel) -> list[tuple[str, int, int, float]]:
    """(row, k, i, coefficient) of each pooled column in its pool's row at the current speeds."""
    rows = {key: f"reserved_{v.name[2:]}" for key, v in m.R.items()}
    return [
        (rows[key], k, i, share(m.problem, m.cands[k][i]) if in_pool(m, k, i) else 0.0)
        for (k, i), key in m.pool_of.items()
    ]


def pool_rows(m: PoolModel) -> None:
    """The rows reserved_o: the pooled jobs' shares within the nodes R[o]."""
    terms: dict[str, list[tuple[Any, float]]] = {}
    for row, k, i, coef in pool_coefs(m):
        held = m.u if not m.integral and alone_at_once(m.problem, m.cands[k][i]) else m.y
        terms.setdefault(row, []).append((held[k, i], coef))
    for key, var in m.R.items():
        row = f"reserved_{var.name[2:]}"
        m.prob += affine(terms[row] + [(var, -float(unit_gpus(m.pool_rep[key])))]) <= 0, row


def training_terms(m: PoolModel) -> list[tuple[Any, Candidate, float]]:
    """(column, candidate, weight): training's run cost is the candidate's run cost x weight x the
    column: a job billed on its own (y, weight 1), a pooled one (y, 0: its pool pays) and a pool's
    reserved nodes (R, a node's share of its representative's billing)."""
    own = [(m.y[k, i], c, 0.0 if in_pool(m, k, i) else 1.0) for k, i, c in m.pairs()]
    return own + [(v, m.pool_rep[key], node_weight(m.pool_rep[key])) for key, v in m.R.items()]


def pool_nodes(problem: Problem, assignment: Iterable[tuple[Candidate, float]]) -> dict[PoolKey, tuple[int, Candidate]]:
    """Pool -> (reserved nodes a plan's assignment needs, its longest member): the least R[o] its row allows."""
    need: dict[PoolKey, float] = {}
    rep: dict[PoolKey, Candidate] = {}
    for c, n in assignment:
        key = pool_key(problem, c)
        if key is None:
            continue
        held = copies_held(n) if alone_at_once(problem, c) else n
        need[key] = need.get(key, 0.0) + share(problem, c) * held
        if key not in rep or c.hours > rep[key].hours:
            rep[key] = c
    return {key: (math.ceil(need[key] / unit_gpus(rep[key]) - 1e-6), rep[key]) for key in sorted(need)}


def paid_training(problem: Problem, assignment: list) -> list[tuple[Candidate, float]]:
    """(candidate, count) pairs whose run costs add up to training's: the jobs billed on their own, then
    each pool's reserved nodes as node_weight x nodes of its representative."""
    own = [(c, n) for c, n in assignment if pool_key(problem, c) is None]
    return own + [(c, nodes * node_weight(c)) for nodes, c in pool_nodes(problem, assignment).values()]


def pool_bills(problem: Problem, assignment: list) -> list[tuple[tuple[str, str, str], int, float]]:
    """Per pool of a plan: its (GPU, kind, provider), the GPUs its reserved nodes bill and their GPU-hours."""
    out = []
    for key, (nodes, c) in pool_nodes(problem, assignment).items():
        gpus = nodes * unit_gpus(c)
        out.append(((key[0], key[1], key[2]), gpus, gpus * key[4]))
    return out
