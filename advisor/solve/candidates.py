"""Candidate configurations: for each job, every (GPU type, GPU count, buy or rent) the rules
allow and the estimate says can run, with its speed, time and cost coefficients.

This is where the rules and the estimate meet the catalog; the optimizer only chooses among
what is built here, and every option left out is recorded with its reason.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TypeVar

from advisor.data.catalog import GPU, Catalog
from advisor.data.estimator import Params
from advisor.data.rules import RuleSet, deployment_context, gpu_context
from advisor.data.uncertainty import speed_dist
from advisor.economics.bom import fabric
from advisor.economics.costs import deployment_costs
from advisor.economics.ownership import (
    HOURS_PER_YEAR,
    net_unit_cost,
    purchase_age_years,
    residual,
    stream_factor,
)
from advisor.economics.rental import (
    RentOption,
    capacity_warning,
    rent_options,
    rental_cost,
)
from advisor.errors import InputError
from advisor.inputs.workload import Workload
from advisor.perf.estimate import Estimate, evaluate
from advisor.perf.goodput import wall_hours
from advisor.perf.jobspec import JobSpec, job_spec, resolve_model
from advisor.perf.layout import min_gpus
from advisor.perf.layout_cache import absorb, mark, new_answers
from advisor.solve import parallel
from advisor.solve.problem import (  # re-exported: the types' historical home
    Candidate,
    Finding,
    JobClass,
    PowerLimit,
    Problem,
    Rejection,
    ServerOption,
)

MAX_GPUS_PER_JOB = 65_536
# From this many (job class, GPU type) pairs the GPU types are offered on both cores (solve/parallel.py):
# the 200-job fleet (109 x 28) spends ~3 s in layout searches from an empty store; team-fleet (12 x 28)
# ~0.1 s. A smaller problem is offered serially.
PARALLEL_PAIRS = 1000
T = TypeVar("T")
MAX_CANDIDATES = 200_000   # MILP columns: beyond this a solve's time and memory are unbounded (docs/limits.md)


def candidate_counts(n_min: int, upper: int) -> list[int]:
    """GPU counts worth offering: every count to 8, then multiples of 8 to 64, then powers of two."""
    counts = {c for c in range(n_min, 9)} | set(range(16, 65, 8)) | {2 ** k for k in range(7, 18)} | {n_min, upper}
    return sorted(c for c in counts if n_min <= c <= upper)


def considered_gpus(workload: Workload, catalog: Catalog) -> list[str]:
    sel = workload.gpus
    for where, ids in (("gpus.allow", sel.allow or []), ("gpus.deny", sel.deny), ("gpus.stock", sel.stock or {})):
        for gid in ids:
            if gid not in catalog.gpus:
                from advisor.errors import suggest
                raise InputError(f"{where}: unknown GPU id {gid!r}{suggest(gid, catalog.gpus)}; "
                                 f"see `advisor catalog list`", field=where)
    ids = sel.allow if sel.allow is not None else sorted(catalog.gpus)
    return [g for g in dict.fromkeys(ids) if g not in set(sel.deny)]


def job_classes(workload: Workload, catalog: Catalog) -> list[JobClass]:
    """Group identical jobs; order follows the first job of each class."""
    classes: dict[tuple, JobClass] = {}
    for i, job in enumerate(workload.jobs):
        if job.kind == "serve":
            continue  # serving jobs: advisor/solve/serving_candidates.py
        spec = job_spec(job, resolve_model(job, catalog, f"jobs[{i}]"))
        key = (spec, job.tokens, job.deadline, job.goodput)
        if key in classes:
            classes[key].jobs.append(i)
            classes[key].multiplicity += job.repeat
        else:
            classes[key] = JobClass([i], job.repeat, spec, job.tokens, job.deadline, job.goodput)
    return list(classes.values())


def server_options(catalog: Catalog, gpu: GPU, context: str) -> tuple[list[ServerOption], list[str]]:
    """Owned GPUs need a host: the catalog's compatible platforms for this deployment context that
    have a known price and power draw (a platform with either unknown cannot be costed, so it is
    left out and named in the second list). A server that can be networked is charged the sourced
    fabric per GPU (economics/bom.py) for its slots; one with no sourced network cannot be."""
    out, unknown = [], []
    fab = fabric(catalog.economics)
    for s in catalog.servers_for(gpu.id, context):
        price = s.purchase.usd if s.purchase else None
        if price is None or s.power_overhead_w.value is None:
            unknown.append(s.id)
            continue
        out.append(ServerOption(id=s.id, slots=s.gpu_slots, filled=s.kind in ("hgx", "oam-platform"),
                                price_usd=price, overhead_kw=s.power_overhead_w.value / 1000.0,
                                network_usd=_network_usd(s, fab)))
    return out, unknown


def _network_usd(server, fab) -> float | None:
    if server.network_usd_per_server.value is None:
        return None
    return fab.per_gpu * server.gpu_slots if fab is not None else server.network_usd_per_server.value


def build_problem(workload: Workload, catalog: Catalog, rules: RuleSet, params: Params, as_of: dt.date) -> Problem:
    catalog = catalog.at(as_of)   # prices and parts dated after as_of are left out (catalog.ignored_after_as_of)
    d = workload.deployment
    costs = deployment_costs(workload, catalog)
    classes = job_classes(workload, catalog)
    gpu_ids = considered_gpus(workload, catalog)
    ownerships = d.ownerships
    # counts beyond gpus.min/max are generated too: the optimizer filters them, and the
    # infeasibility diagnosis needs them to say how many GPUs would do
    upper = MAX_GPUS_PER_JOB
    reasons: dict[str, list] = {g: [] for g in gpu_ids}
    gpu_kw, unit_price, rent_rate, servers, unit_cost, resid = {}, {}, {}, {}, {}, {}
    econ, r = catalog.economics, costs.discount_rate
    by_gpu: dict[str, list[list[Candidate]]] = {}   # GPU id -> its candidates per class

    def offer(gid: str) -> None:
        """One GPU type's candidates (by_gpu[gid]) and why options were removed (reasons[gid])."""
        gpu = catalog.gpus[gid]
        mine_by_class: list[list[Candidate]] = [[] for _ in classes]
        gpu_kw[gid] = (gpu.tdp_w.value or 0.0) / 1000.0
        unit_price[gid] = gpu.purchase_usd
        if gpu.purchase_usd is not None:
            resid[gid] = residual(catalog, gid, costs.horizon_years, purchase_age_years(gpu, as_of))
            unit_cost[gid] = net_unit_cost(gpu.purchase_usd, resid[gid].fraction, costs.horizon_years, r)
        options = rent_options(gpu, d.rent_kinds, econ)
        rent_rate[gid] = min((o.rate for o in options), default=None)
        offers = _offers(gpu, ownerships, reasons[gid], options, d.rent_kinds)
        # rules first: a rule that removes an option is the reason a plan shows for it, before
        # the catalog's 'no server' or the estimate's 'does not fit'
        contexts = {(k, o): _rule_context(gpu, workload, cls, o) for k, cls in enumerate(classes) for o, _ in offers}
        findings = {key: rules.evaluate(ctx, as_of, per_count=False) for key, ctx in contexts.items()}
        allowed = {key for key, found in findings.items() if not _forbids(found)}
        for key in sorted(set(findings) - allowed):
            _add_findings(reasons[gid], findings[key])
        if any(k_o[1] == "buy" for k_o in allowed):
            servers[gid], unpriced = server_options(catalog, gpu, d.context)
            if not servers[gid]:
                why = (f"its platforms ({', '.join(unpriced)}) have no sourced price or power draw; give a quote "
                       "with --catalog" if unpriced else f"the catalog has no platform for it in {d.context} use")
                _add(reasons[gid], None, "no-server",
                     f"{gpu.name} cannot be bought as a working unit: it needs a host server and {why}")
                allowed = {key for key in allowed if key[1] != "buy"}
        per_slot_kw = min((s.overhead_kw / s.slots for s in servers.get(gid, [])), default=0.0)
        cache: dict[tuple, Estimate] = {}     # (spec, count) -> estimate: identical shapes share it
        count_rules: dict[tuple, list] = {}   # the per-count findings by everything their context holds
        smallest: dict[JobSpec, int | None] = {}
        for k, cls in enumerate(classes):
            mine_offers = [(o, opt) for o, opt in offers if (k, o) in allowed]
            if not mine_offers:
                continue
            name = cls.name(workload)
            if cls.spec not in smallest:
                smallest[cls.spec] = min_gpus(cls.spec, gpu, params, limit=upper)
            n_min = smallest[cls.spec]
            # real speed at the (1 - confidence) quantile of the estimator's error: time at `confidence`
            time_factor = 1.0 / speed_dist(gpu, cls.spec.precision).factor(1.0 - workload.confidence)
            if n_min is None:
                _add(reasons[gid], None, "memory", _memory_reason(cls.spec, gpu, params, upper, name))
                continue
            start = len(mine_by_class[k])   # this GPU's candidates of class k are appended from here on
            for ownership, opt in mine_offers:
                static = findings[k, ownership]
                best, batch, last = 0.0, None, n_min
                for n in candidate_counts(n_min, upper):
                    if n > 2 * last:
                        break  # no speed-up since half this count: larger counts will not help either
                    shape = (cls.spec, n)
                    if shape not in cache:
                        cache[shape] = evaluate(cls.spec, gpu, n, params)
                    est = cache[shape]
                    step_tokens = est.layout.get("global_batch_tokens") if est.fits else None
                    batch = batch or step_tokens
                    if step_tokens and batch and step_tokens > batch * 1.0001:
                        break  # the step's batch would have to grow to feed more GPUs: not the same training run
                    if not est.fits or est.tokens_per_s <= best * 1.02:
                        continue  # no faster than a smaller count (e.g. a count tensor parallelism cannot use)
                    # rules that depend on the count: the layout this count needs (INT001)
                    ctx = _count_context(contexts[k, ownership], n, est)
                    seen = (ownership, *ctx["job"].values())
                    per_count = count_rules.get(seen)
                    if per_count is None:
                        per_count = count_rules[seen] = rules.evaluate(ctx, as_of, per_count=True)
                    if _forbids(per_count):
                        _add_findings(reasons[gid], per_count, once=True)
                        continue
                    best, last = est.tokens_per_s, n
                    # wall clock: failure-free training time over goodput (failures, restarts, checkpoints)
                    hours, good = wall_hours(n, cls.tokens / est.tokens_per_s / 3600.0, params, cls.goodput)
                    warnings: list[Finding] = [{"rule": f.rule, "code": f.rule, "message": f.message}
                                               for f in static + per_count]
                    billed = None
                    if ownership == "rent":
                        assert opt is not None, "a rent offer comes with its option (_offers)"
                        rc = rental_cost(opt, n, hours, r, econ)
                        if rc is None:
                            continue   # spot interruptions would destroy more than half the work
                        run_cost, nominal, hours, billed = rc.pv_usd, rc.nominal_usd, rc.wall_hours, rc.billed_gpus
                        cap = capacity_warning(opt, n, econ)
                        warnings += [{"rule": None, "code": "capacity", "message": cap}] if cap else []
                        warnings += [{"rule": None, "code": "rent-terms", "message": m} for m in rc.notes]
                    else:
                        nominal = costs.job_energy_usd(n * hours, gpu_kw[gid] + per_slot_kw)
                        run_cost = nominal * stream_factor(hours / HOURS_PER_YEAR, r)
                    mine_by_class[k].append(Candidate(k, gid, n, ownership, est.tokens_per_s, hours, run_cost,
                                                   est, warnings, good, time_factor, opt.kind if opt else None, nominal,
                                                   opt, billed))
                    if hours < 1 / 60 and (cls.deadline is None or hours * time_factor <= cls.deadline):
                        break  # under a minute already: faster options only add cost
                mine = [c for c in mine_by_class[k][start:] if c.ownership == ownership
                        and (opt is None or c.kind == opt.kind)]
                if cls.deadline is not None and mine and not any(c.planned_hours <= cls.deadline for c in mine):
                    fastest = min(mine, key=lambda c: c.hours)
                    _add(reasons[gid], None, "deadline",
                         f"{name}: even {fastest.count} GPUs ({ownership}) take {fastest.planned_hours / 24:.1f} days "
                         f"at confidence {workload.confidence:g} ({fastest.hours / 24:.1f} estimated), "
                         f"past the {cls.deadline / 24:g}-day deadline")
        by_gpu[gid] = mine_by_class

    # the layout searches (most of a first run's time) over both cores: each process offers the next GPU
    # type from a queue; those a child offered are offered again here, from its searches (perf/layout_cache.py)
    if parallel.mode() == "on" or len(classes) * len(gpu_ids) >= PARALLEL_PAIRS:
        known = mark()
        parallel.run(lambda i: offer(gpu_ids[i]), len(gpu_ids), state=lambda: new_answers(known), merge=absorb)
    for gid in gpu_ids:
        if gid not in by_gpu:
            offer(gid)
    # in the GPU types' order, whichever process offered them first
    gpu_kw, unit_price, rent_rate = _ordered(gpu_kw, gpu_ids), _ordered(unit_price, gpu_ids), _ordered(rent_rate, gpu_ids)
    servers, unit_cost, resid = _ordered(servers, gpu_ids), _ordered(unit_cost, gpu_ids), _ordered(resid, gpu_ids)
    candidates: list[list[Candidate]] = [[c for g in gpu_ids for c in by_gpu[g][k]] for k in range(len(classes))]
    total = sum(map(len, candidates))
    if total > MAX_CANDIDATES:
        raise InputError(f"the workload gives {total:,} candidate configurations ({len(classes):,} distinct jobs x "
                         f"{len(gpu_ids):,} GPU types x GPU counts); the limit is {MAX_CANDIDATES:,}. Narrow it with "
                         "gpus.allow, or give identical jobs as one job with repeat:", field="jobs")
    rejected = {}
    usable = {c.gpu for cls, cands in zip(classes, candidates) for c in cands
              if cls.deadline is None or c.planned_hours <= cls.deadline}
    for gid in gpu_ids:
        if gid not in usable:
            rejected[gid] = Rejection(gid, reasons[gid] or [{"rule": None, "code": "none",
                                                              "message": "no usable configuration"}])
    power = power_limit(workload, rules, as_of)
    problem = Problem(workload=workload, catalog=catalog, rules=rules, classes=classes, candidates=candidates,
                      rejected=rejected, considered=gpu_ids, costs=costs, gpu_kw=gpu_kw, unit_price=unit_price,
                      rent_rate=rent_rate, servers=servers, power_limit_kw=power.kw if power else None,
                      power_limit=power, as_of=as_of, unit_cost=unit_cost, residual=resid)
    if all(job.kind != "serve" for job in workload.jobs):
        return problem   # training only: no serving class, and the serving estimator is not even imported
    from advisor.solve.serving_candidates import add_serving
    return add_serving(problem)


def _ordered(d: dict[str, T], ids: list[str]) -> dict[str, T]:
    return {g: d[g] for g in ids if g in d}


def _offers(gpu: GPU, ownerships: list[str], reasons: list[Finding], options: list[RentOption],
            kinds: Sequence[str]) -> list[tuple[str, RentOption | None]]:
    """(ownership, rental option) pairs: one for buying, one per allowed rental kind with an offer."""
    offers: list[tuple[str, RentOption | None]] = []
    for ownership in ownerships:
        if ownership == "buy":
            if gpu.purchase_usd is None:
                _add(reasons, None, "no-purchase-price",
                     f"{gpu.name} has no sourced purchase price in the catalog, so it can only be rented "
                     "(give a quote with --catalog)")
            else:
                offers.append(("buy", None))
        else:
            if not options:
                what = "on-demand" if kinds == ["on_demand"] else " or ".join(k.replace("_", "-") for k in kinds)
                _add(reasons, None, "no-rental-price",
                     f"{gpu.name} has no sourced {what} rental price in the catalog, so it can only be bought")
            offers += [("rent", o) for o in options]
    return offers


def _rule_context(gpu: GPU, workload: Workload, cls: JobClass, ownership: str) -> dict:
    """What the rules see for one (job class, GPU, buy or rent) option; a rented GPU runs in the
    provider's building (offer.site cloud). The per-count facts are added by _count_context."""
    d = workload.deployment
    job = workload.jobs[cls.jobs[0]]
    return {
        "gpu": gpu_context(gpu),
        "deployment": deployment_context(d),
        "offer": {"ownership": ownership, "site": "cloud" if ownership == "rent" else d.context},
        "job": {"kind": job.kind, "precision": job.precision, "params": cls.spec.model.params},
    }


def _count_context(context: dict, count: int, est: Estimate) -> dict:
    """The option's context for `count` GPUs: whether that count's layout needs tensor parallelism
    (the estimate says so in its layout; absent means no)."""
    job = {**context["job"], "gpu_count": count,
           "needs_tensor_parallel": bool(est.layout.get("needs_tensor_parallel", False))}
    return {**context, "job": job}


def _forbids(findings: list) -> bool:
    return any(f.severity == "forbid" for f in findings)


def _add_findings(reasons: list, findings: list, once: bool = False) -> None:
    """A forbidden option's reasons: the forbidding rules, then the warnings that came with them
    (e.g. EXP006: a licence may be obtainable). once: skip a rule already cited (per-count rules
    fire once per GPU count; the first, smallest count is the one worth reading)."""
    cited = {r["rule"] for r in reasons}
    for f in sorted(findings, key=lambda f: f.severity != "forbid"):
        if not (once and f.rule in cited):
            _add(reasons, f.rule, f.rule, f.message, f.severity)


def power_limit(workload: Workload, rules: RuleSet, as_of: dt.date) -> PowerLimit | None:
    """The workload's own `deployment.power_limit_kw`; else the smallest power_kw any limit rule
    in force sets for this deployment; else none."""
    d = workload.deployment
    if d.power_limit_kw is not None:
        return PowerLimit(d.power_limit_kw, None, "deployment.power_limit_kw in the workload")
    found = [lim for lim in rules.limits({"deployment": deployment_context(d)}, as_of) if lim.limit == "power_kw"]
    if not found:
        return None
    lim = min(found, key=lambda lim: (lim.value, lim.rule))
    return PowerLimit(lim.value, lim.rule, lim.message)


def _memory_reason(spec: JobSpec, gpu: GPU, params: Params, upper: int, name: str) -> str:
    est = evaluate(spec, gpu, 1, params)
    if est.reason and "tensor rate" in est.reason:
        return f"{name}: {est.reason}"
    return f"{name}: does not fit in {gpu.memory_gb.value:g} GB per GPU even sharded over {upper:,} GPUs"


def _add(reasons: list, rule: str | None, code: str, message: str, severity: str | None = None) -> None:
    entry = {"rule": rule, "code": code, "message": message}
    if severity is not None:
        entry["severity"] = severity
    if entry not in reasons:
        reasons.append(entry)
