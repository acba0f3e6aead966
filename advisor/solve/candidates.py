"""Candidate configurations: for each job, every (GPU type, GPU count, buy or rent) the rules
allow and the estimate says can run, with its speed, time and cost coefficients.

This is where the rules and the estimate meet the catalog; the optimizer only chooses among
what is built here, and every option left out is recorded with its reason.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from advisor.data.catalog import GPU, Catalog
from advisor.data.estimator import Params
from advisor.data.rules import RuleSet
from advisor.economics.costs import deployment_costs
from advisor.economics.ownership import (
    purchase_age_years,
    residual,
)
from advisor.economics.rental import (
    usable_offers,
)
from advisor.errors import InputError, suggest
from advisor.inputs.workload import Workload
from advisor.perf.estimate import evaluate
from advisor.perf.jobspec import job_spec, resolve_model
from advisor.perf.layout import min_gpus
from advisor.perf.layout_cache import absorb, mark, new_answers
from advisor.solve import parallel
from advisor.solve.class_candidates import MAX_GPUS_PER_JOB, ClassRuns, GpuOffer, Setting
from advisor.solve.constraints.deadline import meets
from advisor.solve.constraints.power import power_limit
from advisor.solve.options import (
    add_findings,
    add_reason,
    forbids,
    gpu_hardware,
    gpu_holdings,
    offers,
    purchase_arrival,
    rule_context,
    server_options,
    training_storage,
)
from advisor.solve.problem import (
    JobClass,
    Problem,
    Rejection,
)
from advisor.solve.rental_offers import grouped

# From this many (job class, GPU type) pairs the GPU types are offered on both cores (solve/parallel.py):
# the 200-job fleet (109 x 28) spends ~3 s in layout searches from an empty store; team-fleet (12 x 28)
# ~0.1 s. A smaller problem is offered serially.
PARALLEL_PAIRS = 1000
MAX_CANDIDATES = 200_000  # MILP columns: beyond this a solve's time and memory are unbounded (docs/limits.md)


def considered_gpus(workload: Workload, catalog: Catalog) -> list[str]:
    sel = workload.gpus
    for where, ids in (("gpus.allow", sel.allow or []), ("gpus.deny", sel.deny), ("gpus.stock", sel.stock or {})):
        for gid in ids:
            if gid not in catalog.gpus:
                raise InputError(
                    f"{where}: unknown GPU id {gid!r}{suggest(gid, catalog.gpus)}; see `advisor catalog list`",
                    field=where,
                )
    ids = sel.allow if sel.allow is not None else sorted(catalog.gpus)
    return [g for g in dict.fromkeys(ids) if g not in set(sel.deny)]


def job_classes(workload: Workload, catalog: Catalog) -> list[JobClass]:
    """Group identical jobs; order follows the first job of each class."""
    classes: dict[tuple, JobClass] = {}
    for i, job in enumerate(workload.jobs):
        if job.kind == "serve":
            continue  # serving jobs: advisor/solve/serving_candidates.py
        spec = job_spec(job, resolve_model(job, catalog, f"jobs[{i}]"), workload.software)
        key = (spec, job.tokens, job.deadline, job.goodput)
        if key in classes:
            classes[key].jobs.append(i)
            classes[key].multiplicity += job.repeat
        else:
            classes[key] = JobClass([i], job.repeat, spec, job.tokens, job.deadline, job.goodput)
    return list(classes.values())


def _check_measured(s: Setting) -> None:
    """A job's own speed on GPUs and a count the estimator cannot lay it out on has no model speed to
    be the ratio of, so it can neither be used nor move the other GPUs: refused, never dropped; so is
    one above what the GPUs' peak allows (perf/measured.beyond_peak) or below any reading of it that
    would be a run (perf/measured.no_reading)."""
    for cls in s.classes:
        bare = replace(cls.spec, measured=())
        for j, m in enumerate(cls.spec.measured):
            from advisor.perf.measured import beyond_peak, no_reading  # (a job with its own speeds only: start-up)
            from advisor.perf.training import mfu_flops_per_token

            where = f"jobs[{cls.jobs[0]}].measured[{j}]"
            per_token = mfu_flops_per_token(bare.model, bare.kind)
            if impossible := beyond_peak(bare, m.figures, m.count, m.tokens_per_s) or no_reading(
                bare, m.figures, m.count, m.tokens_per_s, per_token, s.params.measured_mfu_floor
            ):
                raise InputError(f"{where}.tokens_per_s: {impossible}", field=f"{where}.tokens_per_s")
            e = evaluate(bare, m.figures, m.count, s.params)
            if not e.fits:
                raise InputError(
                    f"{where}: the job does not fit on {m.count} x {m.gpu} as the estimator lays it out "
                    f"({e.reason or 'memory'}), so this speed can calibrate nothing; check the GPU and count, "
                    "or give the job's micro_batch, checkpointing and optimizer as the run had them",
                    field=where,
                )


def build_problem(workload: Workload, catalog: Catalog, rules: RuleSet, params: Params, as_of: dt.date) -> Problem:
    catalog = catalog.at(as_of)  # prices and parts dated after as_of are left out (catalog.ignored_after_as_of)
    setting = Setting(
        workload, catalog, rules, params, as_of, deployment_costs(workload, catalog), job_classes(workload, catalog)
    )
    _check_measured(setting)
    gpu_ids = considered_gpus(workload, catalog)
    by_gpu = _offer_all(setting, gpu_ids)
    classes = setting.classes
    candidates = [[c for g in gpu_ids for c in by_gpu[g].by_class[k]] for k in range(len(classes))]
    total = sum(map(len, candidates))
    if total > MAX_CANDIDATES:
        raise InputError(
            f"the workload gives {total:,} candidate configurations ({len(classes):,} distinct jobs x "
            f"{len(gpu_ids):,} GPU types x GPU counts); the limit is {MAX_CANDIDATES:,}. Narrow it with "
            "gpus.allow, or give identical jobs as one job with repeat:",
            field="jobs",
        )
    usable = {c.gpu for cls, cands in zip(classes, candidates) for c in cands if meets(c, cls.deadline)}
    rejected = {
        gid: Rejection(
            gid, by_gpu[gid].reasons or [{"rule": None, "code": "none", "message": "no usable configuration"}]
        )
        for gid in gpu_ids
        if gid not in usable
    }
    power = power_limit(workload, rules, as_of)
    offered = [(g, by_gpu[g]) for g in gpu_ids]
    problem = Problem(
        workload=workload,
        catalog=catalog,
        rules=rules,
        classes=classes,
        candidates=candidates,
        rejected=rejected,
        considered=gpu_ids,
        costs=setting.costs,
        gpu_kw={g: o.kw for g, o in offered},
        unit_price={g: o.unit_price for g, o in offered},
        rent_rate={g: o.rent_rate for g, o in offered},
        servers={g: o.servers for g, o in offered if o.servers is not None},
        power_limit_kw=power.kw if power else None,
        power_limit=power,
        as_of=as_of,
        holdings={g: o.holdings for g, o in offered if o.holdings is not None},
        arrival={g: o.arrival for g, o in offered if o.arrival is not None},
        residual={g: o.residual for g, o in offered if o.residual is not None},
        hardware={g: o.hardware for g, o in offered if o.hardware is not None},
        storage=training_storage(workload, catalog, setting.classes),
    )
    if all(job.kind != "serve" for job in workload.jobs):
        return problem  # training only: no serving class, and the serving estimator is not even imported
    from advisor.solve.serving_candidates import add_serving

    return add_serving(problem)


def _offer_all(setting: Setting, gpu_ids: list[str]) -> dict[str, GpuOffer]:
    """Every GPU type's offer. The layout searches (most of a first run's time) run over both cores
    on a large problem: each process offers the next GPU type from a queue; a child sends back only
    its layout searches (perf/layout_cache.py: what is new since the fork), and the types it offered are
    offered again here from them, so the offers are the serial ones, in the GPU types' order."""
    done: dict[str, GpuOffer] = {}  # the offers made in this process (a child's copy is discarded)

    def offer(i: int) -> None:
        done[gpu_ids[i]] = offer_gpu(setting, gpu_ids[i])

    if parallel.mode() == "on" or len(setting.classes) * len(gpu_ids) >= PARALLEL_PAIRS:
        known = mark()
        parallel.run(offer, len(gpu_ids), state=lambda: new_answers(known), merge=absorb)
    return {gid: done[gid] if gid in done else offer_gpu(setting, gid) for gid in gpu_ids}


def offer_gpu(setting: Setting, gid: str) -> GpuOffer:
    """One GPU type's candidates for every job class, and why options were removed."""
    s, gpu = setting, setting.catalog.gpus[gid]
    d = s.workload.deployment
    out = GpuOffer(
        kw=(gpu.tdp_w.value or 0.0) / 1000.0,
        unit_price=gpu.purchase_usd,
        rent_rate=None,
        by_class=[[] for _ in s.classes],
    )
    if gpu.purchase_usd is not None:
        age = purchase_age_years(gpu, s.as_of)
        out.residual = residual(s.catalog, gid, s.costs.horizon_years, age)
    options = usable_offers(gpu, d.rent_kinds, s.catalog.economics)
    out.rent_rate = min((o.rate for o in options), default=None)
    ways = grouped(offers(gpu, d.ownerships, out.reasons, options, d.rent_kinds))
    # rules first: a rule that removes an option is the reason a plan shows for it, before
    # the catalog's 'no server' or the estimate's 'does not fit'
    contexts = {(k, o): rule_context(gpu, s.workload, cls, o) for k, cls in enumerate(s.classes) for o, _ in ways}
    findings = {key: s.rules.evaluate(ctx, s.as_of, per_count=False) for key, ctx in contexts.items()}
    allowed = {key for key, found in findings.items() if not forbids(found)}
    for key in sorted(set(findings) - allowed):
        add_findings(out.reasons, findings[key])
    unjoined: list[str] = []  # every platform, none joinable and each too small: buying is left out after the rules
    if any(own == "buy" for _, own in allowed):
        allowed = _hosted(s, gpu, out, allowed)
        unjoined = _unjoined(s, gpu, out, allowed)
        if out.servers:  # held with its share of its server's power, resold at its generation's value
            quoted = d.lead_time_days
            out.arrival = purchase_arrival(s.catalog, gpu, out.servers, networked=False, quoted_days=quoted)
            out.networked_arrival = purchase_arrival(s.catalog, gpu, out.servers, networked=True, quoted_days=quoted)
            out.hardware = gpu_hardware(s.costs, s.catalog, gpu, out.servers, d.region)
    runs = ClassRuns(s, gpu, out, contexts, findings)
    for k, cls in enumerate(s.classes):
        mine = [(o, opt) for o, opt in ways if (k, o) in allowed]
        if mine:
            runs.offer_class(k, cls, mine)
    if unjoined:
        _not_bought(gpu, out, unjoined)
    if out.servers and out.arrival is not None:  # each bought job's work end is a holding period, and each serving's
        ends = [c.done_hours() for cands in out.by_class for c in cands if c.ownership == "buy"]
        ends += s.workload.serving_ends()
        out.holdings = gpu_holdings(s.costs, s.catalog, gpu, out.servers, s.as_of, out.arrival.hours, ends)
    return out


def _hosted(s: Setting, gpu: GPU, out: GpuOffer, allowed: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """The allowed options, less buying when no priced server can host the GPU (said why)."""
    out.servers, unpriced = server_options(s.catalog, gpu, s.workload.deployment.context)
    if out.servers:
        return allowed
    context = s.workload.deployment.context
    why = (
        f"its platforms ({', '.join(unpriced)}) have no sourced price or power draw; give a quote with --catalog"
        if unpriced
        else f"the catalog has no platform for it in {context} use"
    )
    add_reason(
        out.reasons,
        None,
        "no-server",
        f"{gpu.name} cannot be bought as a working unit: it needs a host server and {why}",
    )
    return {key for key in allowed if key[1] != "buy"}


def _unjoined(s: Setting, gpu: GPU, out: GpuOffer, allowed: set[tuple[int, str]]) -> list[str]:
    """Drops from out.servers the servers with no sourced network that no job could use: every job
    allowed to buy this GPU needs more of it than one holds (min_gpus), so spans servers, and such a
    server is not joined to others (constraints/network.py's alone_ rows would keep it empty; left
    in, its smaller share of price and power per slot would be charged to GPUs held in the servers
    bought instead). Kept when the workload serves: a replica may fit in one. When no platform would
    be left, none is dropped and their ids are returned: buying is left out after the candidates
    are built (_not_bought), so the per-count rules still say what else stands in the way."""
    if not out.servers or any(j.kind == "serve" for j in s.workload.jobs):
        return []
    least = [min_gpus(s.classes[k].spec, gpu, s.params, limit=MAX_GPUS_PER_JOB) for k, own in allowed if own == "buy"]
    fits = [n for n in least if n is not None]
    if not fits:
        return []
    dropped = [o.id for o in out.servers if not o.holds(min(fits))]
    if len(dropped) == len(out.servers):
        return dropped
    out.servers = [o for o in out.servers if o.id not in dropped]
    return []


def _not_bought(gpu: GPU, out: GpuOffer, platforms: list[str]) -> None:
    """No job fits one of the GPU's platforms and none can be joined: its bought candidates are
    removed, and why is said."""
    out.by_class = [[c for c in cs if c.ownership != "buy"] for cs in out.by_class]
    out.servers = out.holdings = out.arrival = out.networked_arrival = out.hardware = None
    add_reason(
        out.reasons,
        None,
        "slots",  # no machine holds the job and none may be joined: what `slots` says (crossover factor)
        f"{gpu.name} cannot be bought as a working unit: every job here needs more GPUs than its platforms "
        f"({', '.join(platforms)}) hold, and the catalog sources no network joining them (a job that spans "
        "servers is not built on an invented network)",
    )
