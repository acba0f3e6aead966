"""The data a solve reads: a Problem (the workload's job classes and serving request classes,
their candidate configurations, the GPUs rejected and why, costs, servers, the power limit) and
its parts. Built by candidates.py (training) and serving_candidates.py (serving); read by the
MILP and the explainers."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from advisor.data.catalog import Catalog
from advisor.data.catalog_prices import RentalOffer
from advisor.data.rules import RuleSet
from advisor.economics.costs import Costs
from advisor.economics.lead_time import LeadTime
from advisor.economics.ownership import Residual
from advisor.economics.purchase_bill import HardwareTerms, StorageNeed
from advisor.economics.rental import RentOption, billed_hours
from advisor.inputs.workload import Workload
from advisor.perf.estimate import Estimate
from advisor.perf.jobspec import JobSpec
from advisor.solve.holding import Holding

if TYPE_CHECKING:  # types only: a training-only plan does not import the serving estimator (start-up time)
    from advisor.perf.kv import ServeModel
    from advisor.perf.serve_capacity import ReplicaResult

Finding = dict[str, Any]  # {rule, code, message} (+ severity, needed, limit...): a reason or a warning


@dataclass
class Candidate:
    """One way to run a job class: `count` GPUs of type `gpu`, bought or rented."""

    cls: int  # index into Problem.classes
    gpu: str
    count: int
    ownership: str  # buy | rent
    tokens_per_s: float
    hours: float  # wall-clock hours for one job's tokens, after goodput losses
    run_cost_usd: float  # one job's energy (buy) or rental (rent) cost, present value (run_cost_nominal: undiscounted)
    estimate: Estimate
    warnings: list[Finding] = field(default_factory=list)
    goodput: float = 1.0  # share of wall time spent training (advisor/perf/goodput.py)
    time_factor: float = 1.0  # the workload's confidence quantile of wall time / the estimate's
    kind: str | None = None  # rental kind (on_demand, reserved_1y, reserved_3y, spot, capacity_block); None when bought
    run_cost_nominal: float | None = None  # the same cost undiscounted (None: equal to run_cost_usd)
    offer: RentOption | None = None  # the rental offer priced (rent)
    billed_gpus: int | None = None  # GPUs billed (whole nodes, the minimum block), rent
    start_hours: float = 0.0  # hours from today until its GPUs can work: a purchase's lead
    # time and burn-in (buy), an offer's provisioning (rent)
    billed_hours: float | None = None  # hours paid per billed GPU (billing steps, minimum term), rent

    @property
    def gpu_hours(self) -> float:
        return self.count * self.hours

    @property
    def order_gpus(self) -> int:
        """The GPUs of one order of it (rent: those billed), what an offer's rate is evidenced at."""
        return self.billed_gpus or self.count

    @property
    def planned_hours(self) -> float:
        """Wall time at the workload's confidence: what deadlines and owned capacity must hold."""
        return self.hours * self.time_factor

    @property
    def planned_gpu_hours(self) -> float:
        return self.count * self.planned_hours

    @property
    def commits(self) -> bool:
        """Rented on a commitment (a reservation's term, a minimum term): its cost does not scale with
        its hours, so its cost dominance over a candidate billed by use may not hold at another speed."""
        return self.ownership == "rent" and self.offer is not None and self.offer.offer.term_hours is not None

    def run_cost_scale(self, speed: Any) -> Any:
        """Run cost at `speed` x the estimated speed / run cost as planned (a float, or a numpy array
        of speeds elementwise): energy and rent by use take 1 / speed, a commitment what it bills for
        the longer or shorter use (economics/rental.billed_hours: a term billed in full costs the same
        at any speed that still fits in it)."""
        if not self.commits or self.offer is None or self.kind is None or not self.billed_hours:
            return 1.0 / speed
        return billed_hours(self.offer.offer, self.kind, self.hours / speed) / self.billed_hours

    def done_hours(self, start_scale: float = 1.0) -> float:
        """When it finishes, in hours from today, at the workload's confidence: its start (scaled by
        a diagnosis that lifts lead times) and its planned time."""
        return self.start_hours * start_scale + self.planned_hours


@dataclass
class JobClass:
    """Identical jobs (same model, kind, tokens, deadline...) are planned together: the MILP
    chooses how many of them run on each candidate instead of one binary per job."""

    jobs: list[int]  # workload job indices (a job with repeat: n appears once, counted n times)
    multiplicity: int
    spec: JobSpec
    tokens: float
    deadline: float | None  # hours
    goodput: float | None = None  # the workload's override (job field `goodput`)

    def name(self, workload: Workload) -> str:
        names = [workload.job_name(j) for j in self.jobs]
        return names[0] if len(names) == 1 else f"{names[0]} (+{len(names) - 1} identical)"


@dataclass
class ServeClass:
    """One request class of one serving job: what the capacity constraint serve_k covers."""

    job: int  # index in workload.jobs
    job_name: str
    name: str  # job name, or job/class for a mix
    model: ServeModel
    precision: str
    input_len: int
    output_len: int
    peak_rps: float  # requests/s the replicas must sustain (peak of the daily profile)
    ttft_ms: float | None
    tpot_ms: float | None
    percentile: float
    hours: float  # serving hours over the horizon
    off_peak_hours: float  # hours a day training may borrow this job's owned GPUs
    spare: bool = True  # n+1: the peak is held with any one replica down (availability)


@dataclass
class ServeCandidate:
    """One replica layout: `gpus` GPUs of type `gpu` (tp x pp), bought or rented, sustaining
    `requests_per_s` of its class under the SLO."""

    cls: int  # index into Problem.serve_classes
    gpu: str
    tp: int
    pp: int
    ownership: str
    requests_per_s: float
    hours: float
    run_cost_usd: float  # one replica's energy (buy) or rent (rent) over the serving hours, present value
    result: ReplicaResult
    warnings: list[Finding] = field(default_factory=list)
    run_cost_nominal: float | None = None  # the same cost undiscounted (None: equal to run_cost_usd)
    bridges: tuple[str, ...] | None = None  # a bridge (solve/serving_bridge.py): the late bought GPU types it
    # serves for until they arrive (those arriving together); `hours` and the costs are those until then
    offer: RentOption | None = None  # the on-demand offer priced (rent): one that holds the replica (serving_offers.py)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def order_gpus(self) -> int:
        """One replica is one order: what an offer's rate is evidenced at."""
        return self.gpus

    @property
    def gpu_hours(self) -> float:
        return self.gpus * self.hours


@dataclass(frozen=True)
class Arrival:
    """When bought GPUs of one type can start work: `hours` from today (the purchase's lead time,
    then its burn-in), and what the lead time rests on."""

    hours: float
    lead: LeadTime
    burn_in_hours: float = 0.0


@dataclass(frozen=True)
class Storage:
    """Flash storage every training plan pays for, bought or rented: the largest training job's dataset and checkpoints
    (economics/purchase_bill.py storage_need), and its cost with the region's tax on hardware."""

    need: StorageNeed
    usd: float


@dataclass(frozen=True)
class ServerOption:
    """A platform an owned GPU type can be installed in (catalog/servers.yaml)."""

    id: str
    slots: int
    filled: bool  # GPUs come with the board (HGX, OAM): N = slots x servers
    price_usd: float
    overhead_kw: float
    network_usd: float | None  # the catalog's network price per server: a fallback when no band is sourced
    networked: bool = True  # the catalog sources a network for it; False: it holds no job that spans servers

    def holds(self, gpus: int) -> bool:
        """Whether it may hold (part of) a job or replica of `gpus` GPUs: within one server, or joined to
        others by a network the catalog sources (constraints/network.py)."""
        return self.networked or gpus <= self.slots


@dataclass
class Rejection:
    """A GPU type offered to no job, and why."""

    gpu: str
    reasons: list[Finding]  # [{rule, code, message}], + severity for a rule's finding


@dataclass(frozen=True)
class PowerLimit:
    """The power limit a plan's `power` constraint enforces, and where it comes from: the workload
    (rule None) or a `limit` rule's default for the deployment (PWR001-PWR014 for an office, by region)."""

    kw: float
    rule: str | None
    message: str


@dataclass
class Problem:
    """Everything the optimizer needs, built once per workload."""

    workload: Workload
    catalog: Catalog
    rules: RuleSet
    classes: list[JobClass]
    candidates: list[list[Candidate]]  # per class
    rejected: dict[str, Rejection]  # gpu id -> why it is unusable for every job
    considered: list[str]  # GPU ids considered (after allow/deny)
    costs: Costs
    gpu_kw: dict[str, float]  # gpu id -> kW drawn per GPU
    unit_price: dict[str, float | None]  # gpu id -> purchase USD per GPU (None if unknown)
    rent_rate: dict[str, float | None]  # gpu id -> USD per GPU-hour (None if unknown)
    servers: dict[str, list[ServerOption]]  # gpu id -> platforms for owned GPUs
    power_limit_kw: float | None  # what the `power` constraint enforces (None: no limit)
    power_limit: PowerLimit | None  # ... and where it comes from (the workload, or a rule such as PWR001)
    as_of: dt.date
    notes: list[str] = field(default_factory=list)
    serve_classes: list[ServeClass] = field(default_factory=list)  # per serving request class
    serve_candidates: list[list[ServeCandidate]] = field(default_factory=list)  # per serve class
    # gpu -> why some serving layouts of it have no candidate (kept when others do: a forced plan cites them)
    serve_reasons: dict[str, list[Finding]] = field(default_factory=dict)
    solver_cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # built solver models and filtered candidates, reused by every re-solve (solve/fast.py)
    holdings: dict[str, list[Holding]] = field(default_factory=dict)  # gpu id -> its holding periods (buyable GPUs)
    arrival: dict[str, Arrival] = field(default_factory=dict)  # gpu id -> when bought GPUs of it can start work
    residual: dict[str, Residual] = field(default_factory=dict)  # gpu id -> Residual at the horizon's end (its curve)
    hardware: dict[str, HardwareTerms] = field(
        default_factory=dict
    )  # gpu id -> what a bought one costs beyond its price
    storage: Storage | None = None  # the storage every training plan pays (the training data and checkpoints)

    @property
    def job_count(self) -> int:
        return sum(c.multiplicity for c in self.classes)

    @property
    def power_rule(self) -> str | None:
        """The rule that set the power limit (PWR001-PWR014 for an office default), None if the workload did."""
        return self.power_limit.rule if self.power_limit else None

    def offer_of(self, c: Candidate | ServeCandidate) -> RentalOffer | None:
        """The offer a rented candidate (training or serving) is priced on: its own, else its GPU's
        cheapest on-demand one."""
        opt = getattr(c, "offer", None)
        return opt.offer if opt else self.catalog.gpus[c.gpu].rental
