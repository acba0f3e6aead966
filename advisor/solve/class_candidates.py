"""What offering one GPU type needs (`Setting`) and what it yields (`GpuOffer`), and its candidates
for each training job class (`ClassRuns`): the GPU counts worth offering, bought or rented, each
estimated, checked against the rules per count and costed; every option left out recorded with its
reason. solve/candidates.py builds the Problem from these.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from advisor.data.catalog import GPU, Catalog
from advisor.data.estimator import Params
from advisor.data.rules import Finding as RuleFinding
from advisor.data.rules import RuleSet
from advisor.data.uncertainty import LogDist
from advisor.economics.costs import Costs
from advisor.economics.lead_time import provisioning_time
from advisor.economics.ownership import (
    Residual,
    stream_factor,
)
from advisor.economics.purchase_bill import HardwareTerms
from advisor.economics.rental import (
    RentOption,
    capacity_warning,
    fabric_fit,
    rental_cost,
)
from advisor.inputs.units import HOURS_PER_YEAR
from advisor.inputs.workload import Workload
from advisor.perf.estimate import Estimate, evaluate
from advisor.perf.goodput import wall_hours
from advisor.perf.jobspec import JobSpec
from advisor.perf.layout import min_gpus
from advisor.perf.speed_error import speed_error
from advisor.perf.training import default_network_gbps
from advisor.solve.constraints.deadline import meets, too_slow
from advisor.solve.holding import Holding
from advisor.solve.options import (
    add_findings,
    add_reason,
    count_context,
    forbids,
    held_slot_kw,
)
from advisor.solve.problem import (
    Arrival,
    Candidate,
    Finding,
    JobClass,
    ServerOption,
)
from advisor.solve.rental_offers import Way, network_gbps, offer_warnings

MAX_GPUS_PER_JOB = 65_536
MINUTE_HOURS = 1 / 60


def candidate_counts(n_min: int, upper: int, asked: Iterable[int] = ()) -> list[int]:
    """GPU counts worth offering: every count to 8, then multiples of 8 to 64, then powers of two, and
    the counts the user `asked` for (a cluster size they measured or want), which the grid may miss
    (384 GPUs: 48 HGX servers)."""
    counts = {c for c in range(n_min, 9)} | set(range(16, 65, 8)) | {2**k for k in range(7, 18)} | {n_min, upper}
    return sorted(c for c in counts | set(asked) if n_min <= c <= upper)


def asked_counts(workload: Workload, spec: JobSpec, gpu_id: str) -> set[int]:
    """The job counts a user named for this job on GPU type `gpu_id`: each of the job's measurements on
    it (its count is where the measurement is used as measured), and the fleet's `gpus.count`, `gpus.min`
    or `gpus.max` (one job on all of it is how a single job meets the first two, and the most it may use
    under the last: at most 100 GPUs is 100, not the grid's 64)."""
    sel = workload.gpus
    return {m.count for m in spec.measured if m.gpu == gpu_id} | {n for n in (sel.lower, sel.upper) if n is not None}


@dataclass(frozen=True)
class Setting:
    """What offering any GPU type needs: the workload, its catalog (as of the plan's date), rules,
    the estimator's parameters, the deployment's cost rates and the job classes."""

    workload: Workload
    catalog: Catalog
    rules: RuleSet
    params: Params
    as_of: dt.date
    costs: Costs
    classes: list[JobClass]


@dataclass
class GpuOffer:
    """One GPU type's part of the Problem: its figures, prices, host servers, its candidates per
    class, and why options were left out."""

    kw: float
    unit_price: float | None
    rent_rate: float | None
    servers: list[ServerOption] | None = None  # None: not bought
    holdings: list[Holding] | None = None  # its holding periods, when buyable (solve/holding.py)
    arrival: Arrival | None = None  # when bought GPUs can start, on one server (no network)
    networked_arrival: Arrival | None = None  # ... and when a job spans servers (the network too)
    residual: Residual | None = None
    hardware: HardwareTerms | None = None  # tax, burn-in, support and network terms, when buyable
    by_class: list[list[Candidate]] = field(default_factory=list)
    reasons: list[Finding] = field(default_factory=list)


class ClassRuns:
    """The candidates of one GPU type: for each job class and way of paying, the GPU counts worth
    offering, each estimated, checked against the per-count rules, timed and costed."""

    def __init__(
        self,
        s: Setting,
        gpu: GPU,
        out: GpuOffer,
        contexts: dict[tuple[int, str], dict[str, Any]],
        findings: dict[tuple[int, str], list[RuleFinding]],
    ):
        self.s, self.gpu, self.out, self.contexts, self.findings = s, gpu, out, contexts, findings
        self.cache: dict[tuple[JobSpec, int, float | None], Estimate] = {}  # identical shapes share an estimate
        self.count_rules: dict[tuple, list[RuleFinding]] = {}  # per-count findings by their context
        self.smallest: dict[JobSpec, int | None] = {}
        self.slots = max((o.slots for o in out.servers or []), default=1)
        # the parameters over each fabric a rented job spans nodes on: one object per network speed,
        # so the layout store (perf/layout_cache.py) describes each once, not once per count
        self.params_over: dict[float, Params] = {}
        # worked out once where many candidates share them (a 200-job fleet's 62,000 candidates): per estimate
        # (by id: each lives in self.cache as long as this), its speed error and time factor; per offer
        # (by id: `ways` holds them) and count, the offer carrying it and what renting it must say
        self.errors: dict[tuple[str, int, int], tuple[LogDist, float]] = {}
        self.carrying: dict[tuple[int, int], RentOption | None] = {}
        self.said: dict[tuple[int, int], list[Finding]] = {}

    def offer_class(self, k: int, cls: JobClass, ways: list[Way]) -> None:
        s, gpu = self.s, self.gpu
        name = cls.name(s.workload)
        if cls.spec not in self.smallest:
            self.smallest[cls.spec] = min_gpus(cls.spec, gpu, s.params, limit=MAX_GPUS_PER_JOB)
        n_min = self.smallest[cls.spec]
        if n_min is None:
            add_reason(self.out.reasons, None, "memory", _memory_reason(cls.spec, gpu, s.params, name))
            return
        for ownership, group in ways:
            mine = list(self._counts(k, cls, ownership, group, n_min))
            self.out.by_class[k] += mine
            if cls.deadline is not None and mine and not any(meets(c, cls.deadline) for c in mine):
                fastest = min(mine, key=lambda c: c.hours)
                add_reason(
                    self.out.reasons, None, "deadline", too_slow(name, fastest, cls, ownership, s.workload.confidence)
                )

    def _counts(
        self, k: int, cls: JobClass, ownership: str, group: tuple[RentOption, ...], n_min: int
    ) -> Iterator[Candidate]:
        """The candidates of one (class, way of paying), smallest count first: a count is offered only
        if it is faster than the smaller ones, within the same global batch, and allowed; a rented one
        on its group's cheapest offer whose fabric carries it."""
        best, batch, last = 0.0, None, n_min
        for n in candidate_counts(n_min, MAX_GPUS_PER_JOB, asked_counts(self.s.workload, cls.spec, self.gpu.id)):
            if n > 2 * last:
                break  # no speed-up since half this count: larger counts will not help either
            opt = None
            if ownership == "rent":
                opt = self._offer(group, n)
                if opt is None:
                    break  # no offer of the group joins this many GPUs: more will not be joined either
            est = self._estimate(cls.spec, n, network_gbps(opt, n))
            step_tokens = est.layout.get("global_batch_tokens") if est.fits else None
            batch = batch or step_tokens
            if step_tokens and batch and step_tokens > batch * 1.0001:
                break  # the step's batch would have to grow to feed more GPUs: not the same training run
            if not est.fits or est.tokens_per_s <= best * 1.02:
                continue  # no faster than a smaller count (e.g. a count tensor parallelism cannot use)
            per_count = self._count_rules(k, ownership, n, est)
            if forbids(per_count):
                add_findings(self.out.reasons, per_count, once=True)
                continue
            best, last = est.tokens_per_s, n
            c = self._candidate(k, cls, ownership, opt, n, est, per_count)
            if c is None:
                continue
            yield c
            if c.hours < MINUTE_HOURS and meets(c, cls.deadline):
                break  # under a minute already: faster options only add cost

    def _offer(self, group: tuple[RentOption, ...], n: int) -> RentOption | None:
        """The group's cheapest offer whose fabric carries n GPUs, by cost alone: one whose rate is not
        evidenced at n (the plan then says a quote is needed) is not passed over for a dearer one that
        is (review22a #4: $3.30 taken over $2.95 by rule); None when none carries them (the reason is
        recorded)."""
        key = (id(group), n)  # (`ways` holds the group)
        if key not in self.carrying:
            self.carrying[key] = next((o for o in group if fabric_fit(o.offer, n).carries), None)
        if self.carrying[key] is None:
            cheapest = group[0]
            # said at the count a one-job workload asks, where it asks more ('2 GPUs need 2 nodes' read oddly
            # for 8: the first count no offer joins, and every larger one)
            shown = max(n, self.s.workload.gpus.lower or 0) if len(self.s.classes) == 1 else n
            add_reason(
                self.out.reasons,
                None,
                "fabric",
                f"{self.gpu.name} ({cheapest.kind.replace('_', '-')}, "
                f"{cheapest.tier}): {fabric_fit(cheapest.offer, shown).reason}",
            )
            return None
        return self.carrying[key]

    def _estimate(self, spec: JobSpec, n: int, network_gbps: float | None = None) -> Estimate:
        """The estimate of n GPUs; `network_gbps` (GB/s per GPU each way): the fabric a rented job
        spans nodes over, when its offer publishes it (else the estimator's assumed network)."""
        shape = (spec, n, network_gbps)
        if shape not in self.cache:
            params = self.s.params if network_gbps is None else self._params_over(network_gbps)
            self.cache[shape] = evaluate(spec, self.gpu, n, params)
        return self.cache[shape]

    def _params_over(self, network_gbps: float) -> Params:
        """The estimator's parameters with this GPU's network at `network_gbps` (GB/s per GPU each way)."""
        params = self.params_over.get(network_gbps)
        if params is None:
            table = self.s.params.network_gbps_per_gpu
            table = (
                {**table, self.gpu.id: network_gbps}
                if isinstance(table, dict)
                else {"default": table, self.gpu.id: network_gbps}
            )
            params = self.params_over[network_gbps] = dataclasses.replace(self.s.params, network_gbps_per_gpu=table)
        return params

    def _count_rules(self, k: int, ownership: str, n: int, est: Estimate) -> list[RuleFinding]:
        """The rules that depend on the count: the layout this count needs (INT001)."""
        ctx = count_context(self.contexts[k, ownership], n, est)
        seen = (ownership, *ctx["job"].values())
        if seen not in self.count_rules:
            self.count_rules[seen] = self.s.rules.evaluate(ctx, self.s.as_of, per_count=True)
        return self.count_rules[seen]

    def _candidate(
        self,
        k: int,
        cls: JobClass,
        ownership: str,
        opt: RentOption | None,
        n: int,
        est: Estimate,
        per_count: list[RuleFinding],
    ) -> Candidate | None:
        """One candidate with its wall time (failure-free training time over goodput) and cost; None
        when spot interruptions would destroy more than half the work. Its time at the workload's
        confidence: its real speed at the (1 - confidence) quantile of its own estimate's error
        (perf/speed_error.py: the user's measurement's spread when the speed is theirs), the band its
        printed P10-P90 time reads."""
        s = self.s
        known = self.errors.get(key := (cls.spec.precision, id(est), n))
        if known is None:
            error = speed_error(self.gpu, cls.spec.precision, est, s.params, n)
            known = self.errors[key] = (error, 1.0 / error.factor(1.0 - s.workload.confidence))
        time_factor = known[1]
        hours, good = wall_hours(n, cls.tokens / est.tokens_per_s / 3600.0, s.params, cls.goodput)
        warnings: list[Finding] = [
            {"rule": f.rule, "code": f.rule, "message": f.message} for f in self.findings[k, ownership] + per_count
        ]
        billed, billed_hours = None, None
        if ownership == "rent":
            assert opt is not None, "a rent offer comes with its option (options.offers)"
            rc = rental_cost(opt, n, hours, s.costs.discount_rate, s.catalog.economics)
            if rc is None:
                return None
            run_cost, nominal, hours, billed = rc.pv_usd, rc.nominal_usd, rc.wall_hours, rc.billed_gpus
            billed_hours = rc.billed_hours
            said = self._offer_said(opt, n)
            warnings += [dict(w) for w in said if w["code"] == "capacity"]
            warnings += [{"rule": None, "code": "rent-terms", "message": m} for m in rc.notes]
            warnings += [dict(w) for w in said if w["code"] != "capacity"]
        else:
            nominal = s.costs.job_energy_usd(n * hours, self.out.kw + held_slot_kw(self.out.servers or [], n))
            run_cost = nominal * stream_factor(hours / HOURS_PER_YEAR, s.costs.discount_rate)
        taxed = s.costs.services_taxed  # rent and electricity with a VAT the buyer cannot reclaim
        run_cost, nominal = run_cost * taxed, nominal * taxed
        start = (provisioning_time(opt.offer).days or 0.0) * 24.0 if opt is not None else self._arrival(n).hours
        return Candidate(
            k,
            self.gpu.id,
            n,
            ownership,
            est.tokens_per_s,
            hours,
            run_cost,
            est,
            warnings,
            good,
            time_factor,
            opt.kind if opt else None,
            nominal,
            opt,
            billed,
            start,
            billed_hours,
        )

    def _offer_said(self, opt: RentOption, n: int) -> list[Finding]:
        """What renting n GPUs on `opt` must say (its capacity warning first, then offer_warnings'), once
        per offer and count; each candidate takes copies."""
        said = self.said.get(key := (id(opt), n))
        if said is None:
            s = self.s
            cap = capacity_warning(opt, n, s.catalog.economics)
            said = [{"rule": None, "code": "capacity", "message": cap}] if cap else []
            said += offer_warnings(opt, self.gpu.id, n, default_network_gbps(self.gpu, s.params))
            self.said[key] = said
        return said

    def _arrival(self, n: int) -> Arrival:
        """When `n` bought GPUs can start: on one server, or networked across servers."""
        arrival = self.out.networked_arrival if n > self.slots else self.out.arrival
        assert arrival is not None, "a bought candidate has a host server, so an arrival"
        return arrival


def _memory_reason(spec: JobSpec, gpu: GPU, params: Params, name: str) -> str:
    est = evaluate(spec, gpu, 1, params)
    if est.reason and "tensor rate" in est.reason:
        return f"{name}: {est.reason}"
    return f"{name}: does not fit in {gpu.memory_gb.value:g} GB per GPU even sharded over {MAX_GPUS_PER_JOB:,} GPUs"
