"""Joint draws of every GPU type's real speed and prices: what the robustness verdict, the cost
range and the decision (explain/decision.py) all read, so they judge a plan on the same world.

* Speed: GPUs of one vendor and generation move together. A GPU's standard-normal speed draw is
  z = sqrt(SHARED_SPEED) x (its group's draw) + sqrt(1 - SHARED_SPEED) x (its own draw), so its
  marginal is unchanged (each GPU keeps its distribution, catalog/uncertainty.yaml) and two GPUs
  of one group correlate SHARED_SPEED. The split is derived from the calibration residuals
  (bench/joint_draws.py; docs/model.md "Joint draws"): the estimates of one generation share its
  fitted parameters, so their errors on one job move together.
* Speed evidence: the distribution of a GPU type comes from a lookup that is told the evidence
  behind its estimate (`speed_evidence` of the job's estimate, when the estimator states one):
  a datasheet speed reads the wider distribution of a generation with no measured run.
* Serving: a replica's requests/s is drawn from the serving model's held-out error by generation
  (data/uncertainty.serving_dist) at its GPU type's speed normal `z`: one hardware's shortfall slows
  its training and its serving alike, and a generation's GPUs move together in both (`serve`).
* Prices: each GPU's purchase price is drawn on its own, by its record's confidence grade
  (data/uncertainty.price_dist: a low-confidence price is wider than a high one). Its rental rates
  share one normal per GPU type (`rent_z`), each offer read through its own grade
  (data/uncertainty.rate_dist; Draws.factors): one market, each offer its own spread. `rent` is the
  type-wide factor (rent_confidence) what re-solves at a GPU type's price read.

Draws are seeded and made by Python's own generator and inverse normal, so the same input gives
the same numbers on every platform.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat, starmap
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.data.uncertainty import (
    NONE,
    LogDist,
    family,
    measurement_dist,
    price_dist,
    serving_dist,
    speed_dist,
)
from advisor.explain.normal import inverse_normal
from advisor.inputs.jobs import DEFAULT_SPREAD
from advisor.perf.estimate import params_from
from advisor.perf.speed_error import SpeedLookup, speed_error

if TYPE_CHECKING:
    from advisor.solve.problem import Candidate, Problem, ServeCandidate
    from advisor.solve.scenario import Scenario

# Share of a GPU's log speed error common to its vendor and generation: the intraclass correlation of
# the out-of-sample residuals of one job measured on two GPU types of one generation (bench/joint_draws.py:
# 7 pairs, A100 40 GB / 80 GB on one job each; 95% interval -0.29 to 0.93; docs/model.md "Joint draws")
SHARED_SPEED = 0.59
SAME_FACTOR = 1e-9  # an offer's mean factor this close to its type's is its type's (Prices.offer)
# weakest first: a GPU type's draws take the weakest evidence behind any of its estimates
EVIDENCE_ORDER = ("datasheet", "same_generation", "transferred", "measured")
_STANDARD = NormalDist()


def estimate_speed(
    problem: Problem, c: Candidate, lookup: SpeedLookup = speed_dist, params: Params | None = None
) -> LogDist:
    """The real speed / candidate c's estimate (perf/speed_error.speed_error: the user's measurement's
    spread, else its evidence's error; capped at physics and the record): the same distribution its
    deadline and horizon rows hold it to (Candidate.time_factor)."""
    gpu, precision = problem.catalog.gpus[c.gpu], problem.classes[c.cls].spec.precision
    return speed_error(gpu, precision, c.estimate, params or params_from(problem.catalog), c.count, lookup)


def group_of(gpu: GPU) -> str:
    """The group whose speeds move together: vendor and generation ('NVIDIA/hopper')."""
    return f"{gpu.vendor.split(' (')[0]}/{family(gpu)}"


def speed_evidence(problem: Problem, gid: str) -> str | None:
    """The weakest evidence behind GPU type `gid`'s training estimates in this problem (the
    Estimate's `speed_evidence`, when the estimator states one; None otherwise)."""
    found = {getattr(c.estimate, "speed_evidence", None) for cs in problem.candidates for c in cs if c.gpu == gid}
    ranked = [e for e in EVIDENCE_ORDER if e in found]
    return ranked[0] if ranked else None


def gpu_speed(problem: Problem, gid: str, lookup: SpeedLookup = speed_dist) -> LogDist:
    """The speed error of a GPU type for this workload (its first training job's precision, by the
    weakest evidence behind its estimates: the user's measurement only when every estimate is one),
    capped at the tightest of its estimates' physics. A serving-only workload's is its replicas'
    throughput error (serve_speed)."""
    gpu = problem.catalog.gpus[gid]
    if not problem.classes:
        return serve_speed(problem, gid)
    mine = [c for cs in problem.candidates for c in cs if c.gpu == gid]
    spreads = [getattr(c.estimate, "speed_spread", None) for c in mine]
    if mine and all(s is not None for s in spreads):
        dist = measurement_dist(max(s for s in spreads if s is not None))
    else:
        dist = lookup(gpu, problem.classes[0].spec.precision, speed_evidence(problem, gid))
    params = params_from(problem.catalog)
    # per estimate (alive in `mine`), count and precision: the candidates renting and buying one share it
    caps: dict[tuple[int, int, str], float] = {}
    for c in mine:
        key = (id(c.estimate), c.count, problem.classes[c.cls].spec.precision)
        if key not in caps:
            caps[key] = estimate_speed(problem, c, lookup, params).cap
    return replace(dist, cap=min(caps.values(), default=math.inf))


def serve_speed(problem: Problem, gid: str) -> LogDist:
    """The real / estimated requests/s of a serving replica on GPU type `gid` (data/uncertainty.serving_dist;
    NONE for a workload that serves nothing)."""
    return serving_dist(problem.catalog.gpus[gid]) if problem.serve_classes else NONE


def replica_speed(problem: Problem, c: ServeCandidate) -> LogDist:
    """The real / estimated requests/s of serving layout `c`: within its measurement's spread where the
    user's own run measured it (its `speed_evidence` measured: that GPU, tensor parallelism and request
    shape; the run's stated `spread`, else the default a training measurement takes), capped at its
    top as a measured job's is; else the serving model's error (serve_speed)."""
    if c.result.speed_evidence != "measured":
        return serve_speed(problem, c.gpu)
    spread = c.result.speed_spread or DEFAULT_SPREAD
    return measurement_dist(spread)


def gpu_prices(problem: Problem, gid: str) -> tuple[LogDist, LogDist]:
    """(purchase, rent) price errors of a GPU type, by each price record's confidence (the rent's:
    rent_confidence)."""
    gpu = problem.catalog.gpus[gid]
    p = gpu.prices.purchase
    buy = price_dist(p.confidence, p.usd, p.usd_range) if p and p.usd else price_dist("low")
    return buy, price_dist(rent_confidence(problem, gid))


def rent_confidence(problem: Problem, gid: str) -> str:
    """The weakest confidence of its cheapest on-demand offer's and its serving layouts' offers: the
    grade of the type-wide rent factor (Draws.rent) that re-solves at a GPU type's price read (the
    expected plan, a robustness draw's idle serving GPUs); a plan's own cost reads each offer's band
    (explain/plan_cost.py). Low without a rate."""
    grades = [gpu.rental.confidence] if (gpu := problem.catalog.gpus[gid]).rental else []
    grades += [c.offer.offer.confidence for cs in problem.serve_candidates for c in cs if c.gpu == gid and c.offer]
    return min(grades, key=("low", "medium", "high").index) if grades else "low"


def usable_gpus(problem: Problem) -> list[str]:
    """The GPU types a plan may use (considered, not rejected), sorted."""
    return sorted(g for g in problem.considered if g not in problem.rejected)


@dataclass(frozen=True)
class Draws:
    """n joint draws over `gpus` (columns, sorted): real speed / estimate, real purchase price /
    catalog, real rental rate / catalog, and each speed's standard-normal value `z` (what
    conditioning on one GPU's speed reads, explain/value_of_information.py)."""

    gpus: tuple[str, ...]
    speed: np.ndarray
    buy: np.ndarray
    rent: np.ndarray
    z: np.ndarray
    groups: tuple[str, ...]  # each column's group (group_of)
    shared: float  # SHARED_SPEED used
    seed: int
    rent_z: np.ndarray | None = None  # each rent's standard-normal value: every offer of a GPU type reads it
    serve: np.ndarray | None = None  # real / estimated requests/s of a serving replica, at `z` (serve_speed)
    memo: dict = field(default_factory=dict, init=False, compare=False, repr=False)  # factors() already computed

    def factors(self, dist: LogDist, gid: str, which: str = "speed") -> np.ndarray:
        """`dist`'s factor in every draw at GPU type `gid`'s speed normal (which='speed': a candidate's
        own speed distribution) or rent normal ('rent': an offer's rate band): one normal per GPU type,
        each candidate or offer its own spread, so a type's offers and counts move together."""
        key = (dist, gid, which)
        if key not in self.memo:
            j = self.column(gid)
            normals = self.z if which == "speed" else self.rent_z
            assert normals is not None, "draws made without their rent normals carry no offer's rate"
            z = normals[:, j]
            self.memo[key] = dist.factors_at(z)
        return self.memo[key]

    @property
    def n(self) -> int:
        return int(self.speed.shape[0])

    def column(self, gid: str) -> int:
        return self.gpus.index(gid)

    def rent_normals(self, i: int) -> dict[str, float]:
        """Draw i's rent normal per GPU type (GPU id -> z): every offer of the type is priced at it,
        each by its own band (solve/redraw.Redraw.choice)."""
        normals = self.rent_z if self.rent_z is not None else np.zeros_like(self.rent)
        return dict(zip(self.gpus, normals[i].tolist()))

    def serve_map(self, i: int) -> dict[str, float] | None:
        """Draw i's serving throughput factor per GPU type (None: draws made without them)."""
        return None if self.serve is None else dict(zip(self.gpus, self.serve[i].tolist()))

    def maps(self, i: int) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
        """Draw i as (speed, buy, rent) factor maps (GPU id -> factor), as solve/redraw.py reads them."""
        return (
            dict(zip(self.gpus, self.speed[i].tolist())),
            dict(zip(self.gpus, self.buy[i].tolist())),
            dict(zip(self.gpus, self.rent[i].tolist())),
        )


def joint_draws(
    problem: Problem,
    n: int,
    seed: int,
    gpus: Sequence[str] | None = None,
    lookup: SpeedLookup = speed_dist,
    shared: float = SHARED_SPEED,
) -> Draws:
    """n seeded joint draws of `gpus` (default: every usable GPU type). Each group of GPUs (group_of)
    and each GPU type has its own seeded stream: a group's n shared normals, a GPU's n rows of its own
    speed, purchase and rent normals. A type's column is so the same whichever other types are drawn
    beside it (common random numbers): one plan costs the same on the draws of every context it is
    priced in, and two plans differ by their own terms, not by a reshuffled sample. Every GPU's speed
    normal is z = sqrt(shared) x its group's + sqrt(1 - shared) x its own (standard normal either way).
    The uniforms are turned into normals and factors a whole array at a time, to the bit what
    NormalDist().inv_cdf (its input kept within 1e-12 of 0 and 1) and LogDist.factor_at give one at a
    time."""
    gids = tuple(sorted(gpus if gpus is not None else usable_gpus(problem)))
    dists = [(gpu_speed(problem, g, lookup), *gpu_prices(problem, g)) for g in gids]
    groups = tuple(group_of(problem.catalog.gpus[g]) for g in gids)
    a, b = math.sqrt(shared), math.sqrt(1.0 - shared)
    shared_z = {grp: _normals(f"{seed}/group/{grp}", n, 1)[:, 0] for grp in sorted(set(groups))}
    own = [_normals(f"{seed}/gpu/{g}", n, 3) for g in gids]
    zs = np.column_stack([a * shared_z[grp] + b * o[:, 0] for grp, o in zip(groups, own)]) if gids else np.zeros((n, 0))
    buy_z, rent_z = (np.column_stack([o[:, k] for o in own]) if gids else np.zeros((n, 0)) for k in (1, 2))
    speeds, buys, rents = (
        np.column_stack([d[which].factors_at(col) for d, col in zip(dists, z.T)]) if gids else np.zeros((n, 0))
        for which, z in ((0, zs), (1, buy_z), (2, rent_z))
    )
    serve = np.column_stack([serve_speed(problem, g).factors_at(z) for g, z in zip(gids, zs.T)]) if gids else None
    return Draws(gids, speeds, buys, rents, zs, groups, shared, seed, rent_z, serve)


def _normals(key: str, n: int, width: int) -> np.ndarray:
    """n rows of `width` standard normals from the stream seeded by `key` (a string seed: hashed by
    SHA-512, the same on every platform and run)."""
    rng = random.Random(key)
    # the generator's own calls, read by numpy in C (2.5x a list of them: the decision scores on 20,000 draws)
    uniform = np.fromiter(starmap(rng.random, repeat((), n * width)), dtype=float, count=n * width)
    return inverse_normal(np.clip(uniform, 1e-12, 1 - 1e-12)).reshape(n, width)


def shared_draws(problem: Problem, n: int, seed: int) -> Draws:
    """The joint draws of every usable GPU type that the robustness verdict and the decision share,
    made once per problem (kept in its solver cache)."""
    memo = problem.solver_cache.setdefault("joint_draws", {})
    key = (n, seed)
    if key not in memo:
        memo[key] = joint_draws(problem, n, seed)
    return memo[key]


@dataclass(frozen=True)
class Prices:
    """The prices a plan chosen on expected cost is optimal at, which its explanations re-solve
    under (explain/decision.py): per GPU, purchase-price factor mean(b) and rent factor mean(r / s)
    (the expected rent of a GPU-hour of work), and mean(r), the expected rental rate / catalog
    rate (the rate the words quote). Empty maps: the catalog's figures."""

    buy: dict[str, float]
    rent: dict[str, float]
    rate: dict[str, float]
    # (GPU, provider) -> the offer's mean(r / s) over its type's `rent`, and its own mean(r): each offer
    # at its own band's mean (a low-confidence band's is higher), where it differs from the type's
    offer: dict[tuple[str, str], float] = field(default_factory=dict)
    offer_rate: dict[tuple[str, str], float] = field(default_factory=dict)

    @classmethod
    def of(cls, draws: Draws, bands: Mapping[tuple[str, str], LogDist] | None = None) -> Prices:
        """The draws' mean factors; `bands`: the rate band of each rented offer (GPU, provider)."""
        rent = {g: float((draws.rent[:, j] / draws.speed[:, j]).mean()) for j, g in enumerate(draws.gpus)}
        offer, offer_rate = {}, {}
        for (g, provider), band in sorted((bands or {}).items()):
            if g in rent and draws.rent_z is not None:
                r = draws.factors(band, g, "rent")
                mean = float((r / draws.speed[:, draws.column(g)]).mean())
                if abs(mean / rent[g] - 1.0) > SAME_FACTOR:
                    offer[(g, provider)], offer_rate[(g, provider)] = mean / rent[g], float(r.mean())
        buy = {g: float(draws.buy[:, j].mean()) for j, g in enumerate(draws.gpus)}
        return cls(buy, rent, {g: float(draws.rent[:, j].mean()) for j, g in enumerate(draws.gpus)}, offer, offer_rate)

    def on(self, sc: Scenario) -> Scenario:
        """`sc` with these prices under its own price factors (factors multiply)."""
        buy = {g: f * sc.buy_factor.get(g, 1.0) for g, f in self.buy.items()}
        rent = {g: f * sc.rent_factor.get(g, 1.0) for g, f in self.rent.items()}
        offer = {k: f * sc.offer_factor.get(k, 1.0) for k, f in self.offer.items()}
        return sc.but(
            buy_factor={**sc.buy_factor, **buy},
            rent_factor={**sc.rent_factor, **rent},
            offer_factor={**sc.offer_factor, **offer},
        )

    def expected(self, gpu: str, ownership: str, provider: str | None = None) -> float:
        """The expected price / catalog price of `gpu` bought or rented (on `provider`'s offer, when
        given): the words' 'expected $X'."""
        if ownership == "rent" and provider is not None and (gpu, provider) in self.offer_rate:
            return self.offer_rate[gpu, provider]
        return (self.rate if ownership == "rent" else self.buy).get(gpu, 1.0)
