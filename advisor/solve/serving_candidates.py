"""Serving candidates (issue 17): for each serving job's request class, every (GPU type, tensor
parallel size, buy or rent) the rules allow and the serving model says fits, with the requests/s
one replica sustains under the SLO (advisor/perf/serving.py) and its cost over the serving months.

The MILP (solve/constraints/serving.py) chooses how many replicas of each to run, as Mélange does; this
module only builds the options and records why a GPU type was left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from advisor.data.catalog import GPU
from advisor.data.rules import deployment_context, gpu_context
from advisor.economics.ownership import discount, stream_factor
from advisor.errors import InputError
from advisor.inputs.quantities import MAX_GPUS
from advisor.inputs.units import HOURS_PER_MONTH, HOURS_PER_YEAR
from advisor.perf.serve import Hardware, ServeParams
from advisor.perf.serve_capacity import ReplicaResult
from advisor.perf.serving import hardware, load_params, replica_rate
from advisor.perf.serving_estimate import serving_model
from advisor.solve.constraints.deadline import meets
from advisor.solve.options import (
    add_findings,
    add_reason,
    forbids,
    gpu_hardware,
    gpu_holdings,
    held_slot_kw,
    offers,
    purchase_arrival,
    server_options,
)
from advisor.solve.problem import (
    Finding,
    Problem,
    Rejection,
    ServeCandidate,
    ServeClass,
    ServerOption,
)
from advisor.solve.serving_offers import no_offer_reason, serving_offer, serving_offer_warnings

SERVE_TP = (1, 2, 4, 8)  # inside one server; deeper models add pipeline stages of 8
SERVE_PP = (2, 4)
# a request class's replica layouts on a GPU, by the value of what they are computed from (_layouts);
# beyond MAX_LAYOUTS entries (a 56-type catalog and some 100 request classes), start again
_LAYOUTS: dict[tuple, tuple[ReplicaResult, ...]] = {}  # (frozen results: one problem cannot change another's)
MAX_LAYOUTS = 10_000


def serve_classes(problem: Problem) -> list[ServeClass]:
    wl = problem.workload
    horizon_months = wl.deployment.horizon_months
    out = []
    for i, job in enumerate(wl.jobs):
        if job.kind != "serve":
            continue
        model = serving_model(job, problem.catalog, f"jobs[{i}]")  # the preset, and the user's measured runs
        if job.months is not None and job.months > horizon_months:
            raise InputError(
                f"jobs[{i}].months: {job.months:g} months of serving is longer than the "
                f"{horizon_months:g}-month horizon (deployment.horizon_months)",
                field=f"jobs[{i}].months",
            )
        hours = wl.serving_hours(i)
        name = wl.job_name(i)
        mix = job.traffic.classes()
        for cname, inp, outp, peak in mix:
            if model.max_context and inp + outp > model.max_context:
                raise InputError(
                    f"jobs[{i}].traffic: {inp} + {outp} tokens exceed {model.name}'s context window "
                    f"of {model.max_context} tokens",
                    field=f"jobs[{i}].traffic",
                )
            out.append(
                ServeClass(
                    i,
                    name,
                    name if len(mix) == 1 else f"{name}/{cname}",
                    model,
                    job.precision,
                    inp,
                    outp,
                    peak,
                    job.slo.ttft_ms,
                    job.slo.tpot_ms,
                    job.slo.percentile,
                    hours,
                    job.off_peak_training_hours,
                    job.availability == "n+1",
                )
            )
    return out


def _layouts(cls: ServeClass, hw: Hardware, params: ServeParams) -> list[ReplicaResult]:
    """Replica layouts worth offering: tensor parallel sizes inside a server (pipeline stages of 8
    only when none fits), without those a smaller layout beats on requests/s per GPU (same GPUs, at
    least the rate, and a rate per GPU no higher: every offer that holds the larger layout holds the
    smaller, so the larger one can never be cheaper). Remembered by value for the process: a plan's
    break-evens rebuild its problem at other prices (explain/offer_quote.py), and the layouts, which
    read no price, were most of a serving plan's CPU."""
    key: tuple = (repr(cls.model), repr(hw), repr(params), cls.precision, cls.input_len, cls.output_len)
    key += (cls.ttft_ms, cls.tpot_ms, cls.percentile)
    if (known := _LAYOUTS.get(key)) is None:
        if len(_LAYOUTS) >= MAX_LAYOUTS:
            _LAYOUTS.clear()
        known = _LAYOUTS[key] = tuple(_searched_layouts(cls, hw, params))
    return list(known)


def _searched_layouts(cls: ServeClass, hw: Hardware, params: ServeParams) -> list[ReplicaResult]:
    """_layouts, searched."""
    out: list[ReplicaResult] = []
    for pp in (1,) + SERVE_PP:
        for tp in SERVE_TP if pp == 1 else (8,):
            r = replica_rate(
                cls.model,
                hw,
                tp,
                cls.precision,
                cls.input_len,
                cls.output_len,
                cls.ttft_ms,
                cls.tpot_ms,
                cls.percentile,
                pp,
                None,
                params,
            )
            if r is None or r.requests_per_s <= 0:
                continue
            if all(r.requests_per_s / r.gpus > o.requests_per_s / o.gpus * 1.0001 for o in out):
                out.append(r)
        if out:
            break
    return out


def add_serving(problem: Problem) -> Problem:
    """Fill problem.serve_classes and problem.serve_candidates, and fold serving into `rejected`
    (a GPU type is rejected when neither a training job nor a serving class can use it)."""
    wl, catalog, rules = problem.workload, problem.catalog, problem.rules
    classes = serve_classes(problem)
    problem.serve_classes = classes
    problem.serve_candidates = [[] for _ in classes]
    if not classes:
        return problem
    params = load_params()
    d = wl.deployment
    reasons: dict[str, list] = {}
    for gid in problem.considered:
        gpu = catalog.gpus[gid]
        why = reasons[gid] = []
        problem.gpu_kw.setdefault(gid, (gpu.tdp_w.value or 0.0) / 1000.0)
        problem.unit_price.setdefault(gid, gpu.purchase_usd)
        problem.rent_rate.setdefault(gid, gpu.rental.usd_per_gpu_hour if gpu.rental else None)
        ways = _serving_ownerships(gpu, d.ownerships, why, d.rent_kinds)
        hw = hardware(gpu, catalog)
        base = {"gpu": gpu_context(gpu), "deployment": deployment_context(d)}
        for k, cls in enumerate(classes):
            layouts: list[ReplicaResult] | None = None
            for ownership in ways:
                ctx = {
                    **base,
                    "offer": {"ownership": ownership, "site": "cloud" if ownership == "rent" else d.context},
                    "job": {"kind": "serve", "precision": cls.precision, "params": cls.model.params},
                }
                static = rules.evaluate(ctx, problem.as_of, per_count=False)
                if forbids(static):
                    add_findings(why, static)
                    continue
                if ownership == "buy" and not _buyable(problem, gpu, why):
                    continue
                if layouts is None:
                    layouts = _class_layouts(cls, hw, params, gpu, why)
                for r in layouts:
                    candidate = _candidate(problem, k, cls, gpu, ownership, r, ctx, static, why)
                    if candidate is not None:
                        problem.serve_candidates[k].append(candidate)
    _merge_rejections(problem, reasons)
    problem.serve_reasons = {g: r for g, r in reasons.items() if r}
    return problem


def _buyable(problem: Problem, gpu: GPU, why: list) -> bool:
    """Whether `gpu` can be bought as a working unit: a priced host server for the deployment. The
    first time, its servers, arrival, holding and hardware terms are recorded (as for training)."""
    catalog, d, gid = problem.catalog, problem.workload.deployment, gpu.id
    if gid not in problem.servers:
        problem.servers[gid], _ = server_options(catalog, gpu, d.context)
    if problem.servers.get(gid) and gid not in problem.holdings:
        problem.arrival[gid] = purchase_arrival(
            catalog, gpu, problem.servers[gid], networked=False, quoted_days=d.lead_time_days
        )
        problem.holdings[gid] = gpu_holdings(  # sold when its serving is done, or at a period of the grid
            problem.costs,
            catalog,
            gpu,
            problem.servers[gid],
            problem.as_of,
            problem.arrival[gid].hours,
            problem.workload.serving_ends(),
        )
        problem.hardware[gid] = gpu_hardware(problem.costs, catalog, gpu, problem.servers[gid], d.region)
    if not problem.servers.get(gid):
        add_reason(
            why,
            None,
            "no-server",
            f"{gpu.name} cannot be bought as a working unit: no priced host server for {d.context} use in the catalog",
        )
        return False
    return True


def _class_layouts(cls: ServeClass, hw: Hardware, params: ServeParams, gpu: GPU, why: list) -> list[ReplicaResult]:
    """The replica layouts of `gpu` for one request class; none (and why) when the catalog lacks
    the GPU's memory figures or no layout fits the model and meets the latency limits."""
    if hw.bandwidth_gbps <= 0 or hw.memory_gb <= 0:
        add_reason(
            why,
            None,
            "unknown-figure",
            f"{gpu.name} has no sourced memory size or bandwidth in the catalog, which the serving model needs",
        )
        return []
    layouts = _layouts(cls, hw, params)
    if not layouts:
        add_reason(
            why,
            None,
            "memory",
            f"{cls.name}: {cls.model.name} at {cls.precision} does not fit, "
            f"or cannot meet the latency limits, on up to 32 x {gpu.name}",
        )
    return layouts


def _candidate(
    problem: Problem,
    k: int,
    cls: ServeClass,
    gpu: GPU,
    ownership: str,
    r: ReplicaResult,
    ctx: dict,
    static: list,
    why: list,
) -> ServeCandidate | None:
    """One replica layout bought or rented for class `k`, with its cost over the serving months;
    None (and why) when a rule forbids it at its GPU count, or no on-demand offer holds it (rent)."""
    costs, gid = problem.costs, gpu.id
    job_ctx = {**ctx["job"], "gpu_count": r.gpus, "needs_tensor_parallel": r.tp > 1}
    per_count = problem.rules.evaluate({**ctx, "job": job_ctx}, problem.as_of, per_count=True)
    if forbids(per_count):
        add_findings(why, per_count, once=True)
        return None
    if wide := _beyond_clusters(cls, r):
        add_reason(why, None, "too-many-gpus", f"{cls.name} on {gpu.name}: {wide}")
        return None
    arrives = problem.arrival[gid].hours if ownership == "buy" and gid in problem.arrival else 0.0
    if arrives >= cls.hours:  # bought GPUs that arrive after the serving months never serve
        add_reason(
            why,
            None,
            "arrives-too-late",
            f"{gpu.name} bought arrives on day {math.ceil(arrives / 24 - 1e-9)} (lead time, then burn-in), after "
            f"the {cls.hours / HOURS_PER_MONTH:g} months {cls.name} is served: it would never serve",
        )
        return None
    if ownership == "buy" and (wide := _spans_unjoined(problem.servers.get(gid, []), r.gpus)):
        add_reason(why, None, "slots", f"{gpu.name}: a replica of {r.gpus} GPUs {wide}")
        return None
    offer = serving_offer(gpu, r.tp, r.pp) if ownership == "rent" else None
    if ownership == "rent" and offer is None:
        add_reason(why, None, "no-offer-holds", no_offer_reason(gpu, r.tp, r.pp))
        return None
    if offer is not None:
        cost = r.gpus * cls.hours * offer.rate
    else:  # an owned replica's energy from its arrival, as a training job's (none when a utilization charges it per kW)
        kw = problem.gpu_kw[gid] + held_slot_kw(problem.servers.get(gid, []), r.gpus)
        cost = costs.job_energy_usd(r.gpus * (cls.hours - arrives), kw)
    cost *= costs.services_taxed  # rent or electricity, with a VAT the buyer cannot reclaim
    # paid evenly over the serving months from the start (bought: from its arrival, as hosting is), discounted
    # like training's streams
    running = (cls.hours - arrives) / HOURS_PER_YEAR
    pv = cost * stream_factor(running, costs.discount_rate) * discount(arrives / HOURS_PER_YEAR, costs.discount_rate)
    warnings: list[Finding] = [{"rule": f.rule, "code": f.rule, "message": f.message} for f in static + per_count]
    warnings += [
        {"rule": None, "code": w["code"], "message": w["message"]}  # precision-not-on-gpu
        for w in r.warnings
    ]
    warnings += serving_offer_warnings(offer, gid, r.tp, r.pp) if offer is not None else []
    return ServeCandidate(
        k, gid, r.tp, r.pp, ownership, r.requests_per_s, cls.hours, pv, r, warnings, cost, offer=offer
    )


def _beyond_clusters(cls: ServeClass, r: ReplicaResult) -> str:
    """Why a replica layout cannot hold its class's peak ('' when it can): the replicas it takes (one
    more for n+1) hold more GPUs than the largest clusters reported (inputs.quantities.MAX_GPUS).
    Such a count is no plan, and a replica count near 1e15 (a run measured at 1e-12 tokens/s) broke
    the solver (its coefficients far below HiGHS's tolerance)."""
    replicas = math.ceil(cls.peak_rps / r.requests_per_s) + int(cls.spare)
    if replicas * r.gpus <= MAX_GPUS:
        return ""
    return (
        f"holding its peak of {cls.peak_rps:,.4g} requests/s at {r.requests_per_s:.3g} a replica takes "
        f"{replicas:,} replicas of {r.gpus} GPU{'s' if r.gpus > 1 else ''}, more than the {MAX_GPUS:,} GPUs the largest clusters "
        "reported hold"
    )


def _spans_unjoined(servers: list[ServerOption], gpus: int) -> str:
    """Why a bought replica of `gpus` GPUs cannot be built ('' when it can): wider than every platform of
    its GPU, none of which the catalog sources a network for (the workstation), it would span machines
    on a network no source describes (review17 #1; training's alone_ rows, constraints/network.py)."""
    if not servers or any(o.holds(gpus) for o in servers):
        return ""
    names = ", ".join(sorted({o.id for o in servers}))
    return f"spans more than one of its platforms ({names}), and the catalog sources no network joining them"


def _merge_rejections(problem: Problem, reasons: dict) -> None:
    used = {c.gpu for cs in problem.serve_candidates for c in cs}
    train_usable = {c.gpu for cls, cs in zip(problem.classes, problem.candidates) for c in cs if meets(c, cls.deadline)}
    for gid in problem.considered:
        if gid in used:
            problem.rejected.pop(gid, None)
        elif gid not in train_usable:
            old = problem.rejected.get(gid)
            merged = [r for r in (old.reasons if old else []) if r.get("code") != "none"]
            for r in reasons.get(gid, []):
                if r not in merged:
                    merged.append(r)
            problem.rejected[gid] = Rejection(
                gid, merged or [{"rule": None, "code": "none", "message": "no usable configuration"}]
            )


def _serving_ownerships(gpu: GPU, ownerships: list[str], why: list, kinds: Sequence[str]) -> list[str]:
    """How a serving replica can be had: bought at the catalog price, or rented on demand for the
    serving months from an offer that holds it (serving_offers.py; reserved and spot serving are not
    modelled), when `deployment.rent_kinds` (kinds) allows on-demand rental."""
    out: list[str] = []
    for opt, _ in offers(gpu, [o for o in ownerships if o == "buy"], why, [], []):
        if opt == "buy":
            out.append("buy")
    if "rent" in ownerships:
        if "on_demand" not in kinds:
            add_reason(
                why,
                None,
                "no-rental-price",
                f"{gpu.name} is rented to serve only on demand (reserved and spot serving are not modelled), "
                "and deployment.rent_kinds does not list on_demand",
            )
        elif gpu.rental is None:
            add_reason(
                why,
                None,
                "no-rental-price",
                f"{gpu.name} has no sourced on-demand rental price in the catalog, so it can only be bought",
            )
        else:
            out.append("rent")
    return out
