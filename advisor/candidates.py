"""Candidate configurations: for each job, every (GPU type, GPU count, buy or rent) the rules
allow and the estimate says can run, with its speed, time and cost coefficients.

This is where the rules and the estimate meet the catalog; the optimizer only chooses among
what is built here, and every option left out is recorded with its reason.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

from .catalog import GPU, Catalog
from .errors import InputError
from .estimate import Estimate, JobSpec, ModelSpec, Params, evaluate, min_gpus
from .rules import RuleSet, gpu_context
from .workload import Job, Workload

HOURS_PER_MONTH = 730.0   # 8,760 h / 12


@dataclass(frozen=True)
class Costs:
    """Per-deployment rates, from the catalog's assumptions or the workload's overrides."""

    electricity_usd_per_kwh: float
    pue: float
    hosting_usd_per_kw_month: float
    horizon_hours: float
    sources: tuple


@dataclass
class Candidate:
    job: int
    gpu: str
    count: int
    ownership: str                  # buy | rent
    tokens_per_s: float
    hours: float                    # wall-clock hours for the job's tokens
    run_cost_usd: float             # energy (buy) or rental (rent) for this job
    estimate: Estimate
    warnings: list = field(default_factory=list)

    @property
    def gpu_hours(self) -> float:
        return self.count * self.hours


@dataclass
class Rejection:
    gpu: str
    reasons: list                   # [{rule, code, message}]


@dataclass
class Problem:
    """Everything the optimizer needs, built once per workload."""

    workload: Workload
    catalog: Catalog
    rules: RuleSet
    specs: list                     # JobSpec per job
    candidates: list                # list[list[Candidate]] per job
    rejected: dict                  # gpu id -> Rejection (GPU unusable for every job)
    considered: list                # GPU ids considered (after allow/deny)
    costs: Costs
    gpu_kw: dict                    # gpu id -> kW drawn per owned GPU
    unit_price: dict                # gpu id -> purchase USD per GPU (None if unknown)
    as_of: dt.date
    notes: list = field(default_factory=list)


def resolve_model(job: Job, catalog: Catalog, where: str) -> ModelSpec:
    """A preset name or an explicit shape -> ModelSpec; a missing shape is inferred and said so."""
    if isinstance(job.model, str):
        preset = catalog.models.get(job.model)
        if preset is None:
            from .catalog import suggest
            raise InputError(f"{where}.model: unknown model preset {job.model!r}{suggest(job.model, catalog.models)}; "
                             f"presets: {', '.join(sorted(catalog.models))}; or give {{params: 7B, layers: 32, hidden: 4096}}",
                             field=f"{where}.model")
        return ModelSpec(params=preset.params, layers=preset.layers, hidden=preset.hidden, heads=preset.heads,
                         vocab=preset.vocab, seq_len=job.seq_len or preset.seq_len, ffn=preset.ffn,
                         kv_heads=preset.kv_heads, tied_embeddings=preset.tied_embeddings, name=job.model)
    shape = job.model
    inferred = shape.layers is None or shape.hidden is None
    hidden = shape.hidden
    layers = shape.layers
    if hidden is None and layers is not None:
        hidden = max(64, int(round(math.sqrt(shape.params / (12 * layers)) / 64)) * 64)
    elif hidden is None:
        # GPT-3 family aspect ratio hidden/layers = 128 with params = 12 * layers * hidden^2
        hidden = max(64, int(round((128 * shape.params / 12) ** (1 / 3) / 64)) * 64)
    if layers is None:
        layers = max(1, int(round(shape.params / (12 * hidden * hidden))))
    heads = shape.heads or max(1, hidden // 128)
    return ModelSpec(params=shape.params, layers=layers, hidden=hidden, heads=heads, vocab=shape.vocab or 50257,
                     seq_len=job.seq_len or shape.seq_len or 2048, ffn=shape.ffn, kv_heads=shape.kv_heads,
                     shape_inferred=inferred, name=None)


def job_spec(job: Job, model: ModelSpec) -> JobSpec:
    return JobSpec(model=model, kind=job.kind, precision=job.precision, micro_batch=job.micro_batch,
                   checkpointing=job.checkpointing, global_batch_tokens=job.global_batch_tokens,
                   lora_rank=job.lora_rank, optimizer=job.optimizer)


def deployment_costs(workload: Workload, catalog: Catalog) -> Costs:
    d = workload.deployment
    site = "datacenter" if d.context == "cloud" else d.context
    sources = []

    def pick(override, key):
        if override is not None:
            return override
        a = catalog.assumption(f"{key}_{site}")
        sources.extend(a.source)
        return a.value

    return Costs(
        electricity_usd_per_kwh=pick(d.electricity_usd_per_kwh, "electricity_usd_per_kwh"),
        pue=pick(d.pue, "pue"),
        hosting_usd_per_kw_month=pick(d.hosting_usd_per_kw_month, "hosting_usd_per_kw_month"),
        horizon_hours=d.horizon_months * HOURS_PER_MONTH,
        sources=tuple(sorted(set(sources))),
    )


def candidate_counts(n_min: int, upper: int) -> list[int]:
    """GPU counts worth offering: every count to 8, then multiples of 8 to 64, then powers of two."""
    counts = set(range(n_min, min(8, upper) + 1))
    counts |= {c for c in range(8, 65, 8) if n_min <= c <= upper}
    c = 128
    while c <= upper:
        if c >= n_min:
            counts.add(c)
        c *= 2
    if n_min <= upper:
        counts |= {n_min, upper}
    return sorted(counts)


def considered_gpus(workload: Workload, catalog: Catalog) -> list[str]:
    sel = workload.gpus
    for where, ids in (("gpus.allow", sel.allow or []), ("gpus.deny", sel.deny)):
        for gid in ids:
            if gid not in catalog.gpus:
                from .catalog import suggest
                raise InputError(f"{where}: unknown GPU id {gid!r}{suggest(gid, catalog.gpus)}; "
                                 f"see `advisor catalog list`", field=where)
    ids = sel.allow if sel.allow is not None else sorted(catalog.gpus)
    return [g for g in dict.fromkeys(ids) if g not in set(sel.deny)]


def build_problem(workload: Workload, catalog: Catalog, rules: RuleSet, params: Params, as_of: dt.date) -> Problem:
    d = workload.deployment
    if d.context == "cloud" and d.ownership == "buy":
        raise InputError("deployment: context cloud means renting GPUs; to buy GPUs and host them, use "
                         "context: datacenter", field="deployment.ownership")
    costs = deployment_costs(workload, catalog)
    specs = [job_spec(job, resolve_model(job, catalog, f"jobs[{i}]")) for i, job in enumerate(workload.jobs)]
    gpu_ids = considered_gpus(workload, catalog)
    ownerships = ["buy", "rent"] if d.ownership == "any" else [d.ownership]
    if d.context == "cloud":
        ownerships = ["rent"]
    upper_fleet = workload.gpus.upper or 100_000
    candidates: list[list[Candidate]] = [[] for _ in workload.jobs]
    reasons: dict[str, list] = {g: [] for g in gpu_ids}
    gpu_kw, unit_price = {}, {}
    for gid in gpu_ids:
        gpu = catalog.gpus[gid]
        gpu_kw[gid] = (gpu.tdp_w.value or 0.0) / 1000.0
        unit_price[gid] = gpu.purchase_usd
        offers = _offers(gpu, ownerships, reasons[gid], d.context)
        for j, (job, spec) in enumerate(zip(workload.jobs, specs)):
            n_min = min_gpus(spec, gpu, params, limit=upper_fleet)
            if n_min is None:
                _add(reasons[gid], None, "memory", _memory_reason(spec, gpu, params, upper_fleet, workload, j))
                continue
            for ownership, rate in offers:
                context = _rule_context(gpu, workload, job, spec, ownership)
                findings = rules.evaluate(context, as_of)
                forbids = [f for f in findings if f.severity == "forbid"]
                if forbids:
                    for f in forbids:
                        _add(reasons[gid], f.rule, f.rule, f.message)
                    continue
                warnings = [{"rule": f.rule, "message": f.message} for f in findings if f.severity == "warn"]
                for n in candidate_counts(n_min, upper_fleet):
                    if workload.gpus.lower and len(workload.jobs) == 1 and n < workload.gpus.lower:
                        continue
                    est = evaluate(spec, gpu, n, params)
                    if not est.fits or est.tokens_per_s <= 0:
                        continue
                    hours = job.tokens / est.tokens_per_s / 3600.0
                    if ownership == "rent":
                        run_cost = n * hours * rate
                    else:
                        run_cost = n * hours * gpu_kw[gid] * costs.pue * costs.electricity_usd_per_kwh
                    candidates[j].append(Candidate(j, gid, n, ownership, est.tokens_per_s, hours, run_cost,
                                                   est, warnings))
                    if (job.deadline is None or hours <= job.deadline) and n >= (workload.gpus.lower or 0):
                        break  # more GPUs only cost more once the deadline and the GPU floor are met
                if job.deadline is not None and not any(
                        c.gpu == gid and c.ownership == ownership and c.hours <= job.deadline for c in candidates[j]):
                    fastest = max((c for c in candidates[j] if c.gpu == gid and c.ownership == ownership),
                                  key=lambda c: c.tokens_per_s, default=None)
                    if fastest is not None:
                        _add(reasons[gid], None, "deadline",
                             f"{workload.job_name(j)}: even {fastest.count} GPUs take {fastest.hours / 24:.1f} days, "
                             f"past the {job.deadline / 24:g}-day deadline")
                    candidates[j] = [c for c in candidates[j]
                                     if not (c.gpu == gid and c.ownership == ownership and c.hours > job.deadline)]
    rejected = {}
    for gid in gpu_ids:
        usable = any(any(c.gpu == gid for c in cands) for cands in candidates)
        if not usable:
            rejected[gid] = Rejection(gid, reasons[gid] or [{"rule": None, "code": "none",
                                                              "message": "no usable configuration"}])
    return Problem(workload=workload, catalog=catalog, rules=rules, specs=specs, candidates=candidates, rejected=rejected,
                   considered=gpu_ids, costs=costs, gpu_kw=gpu_kw, unit_price=unit_price, as_of=as_of)


def _offers(gpu: GPU, ownerships: list[str], reasons: list, context: str) -> list[tuple[str, float | None]]:
    offers = []
    for ownership in ownerships:
        if ownership == "buy":
            if gpu.purchase_usd is None:
                _add(reasons, None, "no-purchase-price",
                     f"{gpu.name} has no sourced purchase price in the catalog, so it cannot be bought "
                     "here (give a quote with --catalog)")
            else:
                offers.append(("buy", None))
        else:
            offer = gpu.rental
            if offer is None:
                _add(reasons, None, "no-rental-price", f"{gpu.name} has no sourced on-demand rental price in the catalog")
            else:
                offers.append(("rent", offer.usd_per_gpu_hour))
    return offers


def _rule_context(gpu: GPU, workload: Workload, job: Job, spec: JobSpec, ownership: str) -> dict:
    d = workload.deployment
    return {
        "gpu": gpu_context(gpu),
        "deployment": {"context": d.context, "region": d.region, "ownership": d.ownership},
        "offer": {"ownership": ownership, "site": "cloud" if ownership == "rent" else d.context},
        "job": {"kind": job.kind, "precision": job.precision, "params": spec.model.params},
    }


def _memory_reason(spec: JobSpec, gpu: GPU, params: Params, upper: int, workload: Workload, j: int) -> str:
    est = evaluate(spec, gpu, 1, params)
    name = workload.job_name(j)
    if est.reason and "tensor rate" in est.reason:
        return f"{name}: {est.reason}"
    return (f"{name}: does not fit in {gpu.memory_gb.value:g} GB per GPU even sharded over the "
            f"{upper:,} GPUs allowed")


def _add(reasons: list, rule: str | None, code: str, message: str) -> None:
    entry = {"rule": rule, "code": code, "message": message}
    if entry not in reasons:
        reasons.append(entry)
