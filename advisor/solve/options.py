"""What every option of a job (a GPU type, bought or rented) shares, for training and serving
candidates alike: the context the rules see, the ways to pay for a GPU, the host servers an owned
GPU can go into and how long it may be held, and how the reasons an option was left out are
recorded."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from advisor.data.catalog import GPU, Catalog
from advisor.data.rules import deployment_context, gpu_context
from advisor.economics.costs import Costs
from advisor.economics.lead_time import NETWORK, LeadTime, purchase_lead_time
from advisor.economics.ownership import purchase_age_years, residual
from advisor.economics.purchase_bill import HardwareTerms, hardware_terms, storage_need, tax_coefficients
from advisor.economics.rental import RentOption
from advisor.inputs.workload import Workload
from advisor.solve.holding import Holding, holdings
from advisor.solve.problem import Arrival, Finding, JobClass, ServerOption, Storage

if TYPE_CHECKING:
    from advisor.data.rules import Finding as RuleFinding
    from advisor.perf.estimate import Estimate


def offers(
    gpu: GPU, ownerships: list[str], reasons: list[Finding], options: list[RentOption], kinds: Sequence[str]
) -> list[tuple[str, RentOption | None]]:
    """(ownership, rental option) pairs: one for buying, one per allowed rental kind with an offer."""
    out: list[tuple[str, RentOption | None]] = []
    for ownership in ownerships:
        if ownership == "buy":
            if gpu.purchase_usd is None:
                add_reason(
                    reasons,
                    None,
                    "no-purchase-price",
                    f"{gpu.name} has no sourced purchase price in the catalog, so it can only be rented "
                    "(give a quote with --catalog)",
                )
            else:
                out.append(("buy", None))
        else:
            if not options:
                what = "on-demand" if kinds == ["on_demand"] else " or ".join(k.replace("_", "-") for k in kinds)
                add_reason(
                    reasons,
                    None,
                    "no-rental-price",
                    f"{gpu.name} has no sourced {what} rental price in the catalog, so it can only be bought",
                )
            out += [("rent", o) for o in options]
    return out


def rule_context(gpu: GPU, workload: Workload, cls: JobClass, ownership: str) -> dict[str, Any]:
    """What the rules see for one (job class, GPU, buy or rent) option; a rented GPU runs in the
    provider's building (offer.site cloud). The per-count facts are added by count_context."""
    d = workload.deployment
    job = workload.jobs[cls.jobs[0]]
    return {
        "gpu": gpu_context(gpu),
        "deployment": deployment_context(d),
        "offer": {"ownership": ownership, "site": "cloud" if ownership == "rent" else d.context},
        "job": {"kind": job.kind, "precision": job.precision, "params": cls.spec.model.params},
    }


def count_context(context: dict[str, Any], count: int, est: Estimate) -> dict[str, Any]:
    """The option's context for `count` GPUs: whether that count's layout needs tensor parallelism
    (the estimate says so in its layout; absent means no)."""
    job = {
        **context["job"],
        "gpu_count": count,
        "needs_tensor_parallel": bool(est.layout.get("needs_tensor_parallel", False)),
    }
    return {**context, "job": job}


def forbids(findings: list[RuleFinding]) -> bool:
    return any(f.severity == "forbid" for f in findings)


def add_findings(reasons: list[Finding], findings: list[RuleFinding], once: bool = False) -> None:
    """A forbidden option's reasons: the forbidding rules, then the warnings that came with them
    (e.g. EXP006: a licence may be obtainable). once: skip a rule already cited (per-count rules
    fire once per GPU count; the first, smallest count is the one worth reading)."""
    cited = {r["rule"] for r in reasons}
    for f in sorted(findings, key=lambda f: f.severity != "forbid"):
        if not (once and f.rule in cited):
            add_reason(reasons, f.rule, f.rule, f.message, f.severity)


def add_reason(reasons: list[Finding], rule: str | None, code: str, message: str, severity: str | None = None) -> None:
    entry: Finding = {"rule": rule, "code": code, "message": message}
    if severity is not None:
        entry["severity"] = severity
    if entry not in reasons:
        reasons.append(entry)


def server_options(catalog: Catalog, gpu: GPU, context: str) -> tuple[list[ServerOption], list[str]]:
    """Owned GPUs need a host: the catalog's compatible platforms for this deployment context that
    have a known price and power draw (a platform with either unknown cannot be costed, so it is
    left out and named in the second list). A server's own network price (catalog) is carried as a
    fallback: the MILP prices the network by cluster-size band and NIC (economics/purchase_bill.py);
    one with no sourced network holds only jobs within one of it (constraints/network.py)."""
    out, unknown = [], []
    for s in catalog.servers_for(gpu.id, context):
        price = s.purchase.usd if s.purchase else None
        if price is None or s.power_overhead_w.value is None:
            unknown.append(s.id)
            continue
        network = s.network_usd_per_server.value  # a fallback: the MILP prices the network by cluster band
        out.append(
            ServerOption(
                id=s.id,
                slots=s.gpu_slots,
                filled=s.kind in ("hgx", "oam-platform"),
                price_usd=price,
                overhead_kw=s.power_overhead_w.value / 1000.0,
                network_usd=network,
                networked=s.sources_network,
            )
        )
    return out, unknown


def per_slot_kw(servers: Sequence[ServerOption]) -> float:
    """The least share of a server's own power one GPU slot carries (overhead kW / slots): what a
    job's run is charged in energy per GPU beside the GPU's own (hosting and held energy charge each
    server whole, solve/server_terms.py)."""
    return min((o.overhead_kw / o.slots for o in servers), default=0.0)


def held_slot_kw(servers: Sequence[ServerOption], gpus: int) -> float:
    """per_slot_kw among the platforms that may hold a job or replica of `gpus` GPUs (ServerOption.holds):
    what its run is charged in energy, so a replica wider than a workstation runs on a server's power."""
    return per_slot_kw([o for o in servers if o.holds(gpus)] or servers)


def gpu_holdings(
    costs: Costs,
    catalog: Catalog,
    gpu: GPU,
    servers: list[ServerOption],
    as_of: dt.date,
    start_hours: float = 0.0,
    ends: Iterable[float] = (),
) -> list[Holding]:
    """The holding periods of one bought GPU type arriving `start_hours` from today (and its jobs'
    work `ends`, solve/holding.py): its own power (its server's is held whole, solve/server_terms.py),
    hosted from its arrival, resold on its generation's curve at its age then."""
    age = purchase_age_years(gpu, as_of)
    return holdings(
        costs,
        (gpu.tdp_w.value or 0.0) / 1000.0,
        lambda years: residual(catalog, gpu.id, years, age).fraction,
        start_hours,
        ends,
    )


def gpu_hardware(costs: Costs, catalog: Catalog, gpu: GPU, servers: list[ServerOption], region: str) -> HardwareTerms:
    """What one bought GPU of this type costs beyond its price (tax, burn-in, support, the network by
    cluster size; economics/purchase_bill.py), on itself alone (its server is charged whole,
    solve/server_terms.py) and the least network bandwidth per slot."""
    fallback = min((o.network_usd / o.slots for o in servers if o.network_usd is not None), default=None)
    gbps = bought_network_gbps(catalog, gpu, servers)
    return hardware_terms(catalog, gpu.id, region, costs, fallback, gbps)


def bought_network_gbps(catalog: Catalog, gpu: GPU, servers: Sequence[ServerOption]) -> float:
    """GB/s per GPU each way between bought servers, as the bill prices it: the least its servers'
    sourced networks give a slot (bidirectional per server / 2 / slots), else, where a server sources
    none (a PCIe server: it depends on the NICs fitted), the network the speed estimate assumes. A
    server with no sourced network at all is never networked (constraints/network.py), so it is left out."""
    from advisor.perf.estimate import params_from
    from advisor.perf.training import default_network_gbps

    assumed = default_network_gbps(gpu, params_from(catalog))
    joined = [o for o in servers if o.networked]
    each = [catalog.servers[o.id].network_gbps_per_server.value for o in joined]
    return min((v / 2.0 / o.slots if v is not None else assumed for v, o in zip(each, joined)), default=assumed)


def training_storage(workload: Workload, catalog: Catalog, classes: Sequence[JobClass]) -> Storage | None:
    """The storage every training plan pays for, bought or rented (bought flash: no cloud storage rate
    is sourced): the workload's `storage_tb`, else the largest training job's dataset and checkpoints
    kept, taxed as hardware; None without either or a sourced $/TB."""
    econ = catalog.economics
    given = workload.deployment.storage_tb
    if econ is None or not (classes or given):
        return None
    need = max(
        (storage_need(econ, c.spec.model.params, c.tokens) for c in classes),
        key=lambda n: n.tb,
        default=storage_need(econ, 0.0, 0.0),
    )
    if given is not None:  # the workload's own figure
        price = econ.storage.get("flash_usd_per_tb")
        usd = given * price.value if price is not None and price.value is not None else None
        need = replace(need, tb=given, usd=usd, note=f"{given:g} TB, deployment.storage_tb in the workload")
    if need.usd is None or need.usd <= 0:
        return None
    tax = tax_coefficients(econ, workload.deployment.region, workload.finance.tax_recoverable).cost_rate or 0.0
    return Storage(need, need.usd * (1.0 + tax))


def purchase_arrival(
    catalog: Catalog, gpu: GPU, servers: list[ServerOption], networked: bool, quoted_days: float | None = None
) -> Arrival:
    """When bought GPUs of one type can start work: the last of their parts to arrive (the GPU, its
    servers, and the network when a job spans servers; economics/lead_time.py), then the burn-in
    soak (catalog/economics.yaml burn_in); or, given, the workload's own `quoted_days` (delivery and
    burn-in, e.g. 0 for hardware in hand). An unknown lead time counts as none, and says so."""
    if quoted_days is not None:
        quote = LeadTime(
            quoted_days, "high", ("workload",), None, "deployment.lead_time_days in the workload", item=gpu.id
        )
        return Arrival(quoted_days * 24.0, quote, 0.0)
    parts = [gpu.id, *(o.id for o in servers), *([NETWORK] if networked else [])]
    lead: LeadTime = purchase_lead_time(catalog, parts)
    burn = catalog.economics.burn_in.get("hours") if catalog.economics else None
    burn_hours = float(burn.value or 0.0) if burn is not None and burn.value is not None else 0.0
    return Arrival((lead.days or 0.0) * 24.0 + burn_hours, lead, burn_hours)
