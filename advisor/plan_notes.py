"""A plan's warnings and sources: what a reader must check beside the figures, and where every
figure comes from (the chosen GPUs' datasheets and prices, the bill of materials, the cost
assumptions and the rules cited)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from advisor.data.catalog_figures import STALE_MONTHS, age_months
from advisor.durations import deadline_phrase, in_days
from advisor.economics.rental import order_fit
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve import ledger, price_warnings
from advisor.solve.constraints.deadline import Deadline
from advisor.solve.problem import Problem
from advisor.solve.rental_offers import quote_needed
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

JSONObject = dict[str, Any]


def dated_prices(problem: Problem, sol: Solution, gid: str) -> list[tuple[str, list[str], str | None]]:
    """(what, its sources, as of) of every price the plan pays for GPU `gid`: its purchase price
    when bought, each rental offer chosen for training, each on-demand offer its serving layouts are rented on.
    The warnings date them; the sources cite them."""
    gpu = problem.catalog.gpus[gid]
    out: list[tuple[str, list[str], str | None]] = []
    if gid in sol.bought and gpu.prices.purchase is not None:
        out.append(("purchase price", gpu.prices.purchase.source, gpu.prices.purchase.as_of))
    for offer in {id(c.offer): c.offer.offer for c in sol.chosen if c.gpu == gid and c.offer}.values():
        out.append((f"{offer.pricing.replace('_', '-')} rental rate", offer.source, offer.as_of))
    served = {c.offer.offer.provider: c.offer.offer for c, _ in sol.serving if c.gpu == gid and c.offer}
    out += [("rental rate", offer.source, offer.as_of) for _, offer in sorted(served.items())]
    return out


def plan_warnings(problem: Problem, sol: Solution, explaining: SolveSettings | None = None) -> list[JSONObject]:
    """What a reader must check beside the figures: the chosen candidates' warnings and estimate notes,
    rent- or buy-only GPUs, stale prices, the price warnings (solve/price_warnings.py), and an unproven solve."""
    out: list[JSONObject] = []
    for entry in [
        *_candidate_notes(problem, sol),
        *_measurement_doubts(problem),
        *_price_warnings(problem, sol),
        *_network_warnings(problem, sol),
        *(_provider_limits(problem, sol) if sol.feasible else []),
        *(_late_jobs(problem, sol) if sol.feasible else []),
        *(_copies_not_spread(problem, sol) if sol.feasible else []),
        *(price_warnings.price_warnings(problem, sol) if sol.feasible else []),
        *_solver_warnings(sol, explaining),
    ]:
        if entry not in out:
            out.append(entry)
    return out


def _candidate_notes(problem: Problem, sol: Solution) -> Iterator[JSONObject]:
    """The chosen training candidates' own warnings (rules) and their estimate's notes, each named by
    its job when the plan has several; their quote-needed warnings once per offer (_order_quotes)."""
    several = len(sol.chosen) > 1
    for c in sol.chosen:
        yield from (w for w in c.warnings if w["code"] != "quote-needed")
        job = f"{problem.classes[c.cls].name(problem.workload)}: " if several else ""
        for note in c.estimate.notes:
            yield {"rule": None, "code": "estimate", "message": job + note}
    yield from _order_quotes(sol)


def _order_quotes(sol: Solution) -> Iterator[JSONObject]:
    """One 'quote-needed' per offer whose rate the plan's training orders exceed the evidenced size
    of, at the largest such order, with every size above it: a fleet's candidates each say it of their
    own order, and 22 jobs on one offer said it four times over on the plan's first line."""
    sizes: dict[tuple[str, str, str], set[int]] = {}
    opts = {}
    for c in sol.chosen:
        if c.offer is not None and order_fit(c.offer.offer, c.order_gpus).quote_needed:
            key = (c.gpu, c.offer.kind, c.offer.offer.provider)
            sizes.setdefault(key, set()).add(c.order_gpus)
            opts[key] = c.offer
    for key, seen in sizes.items():
        ordered = sorted(seen)
        for finding in quote_needed(opts[key], key[0], ordered[-1]):  # the largest order's own warning
            if len(ordered) > 1:
                sizes_said = f" (orders of {', '.join(f'{n:,}' for n in ordered[:-1])} and {ordered[-1]:,} GPUs)"
                finding = {**finding, "message": finding["message"] + sizes_said}
            yield finding


def _measurement_doubts(problem: Problem) -> Iterator[JSONObject]:
    """Each run of the user's that looks wrong (perf/measured.doubts, serving_measured.too_slow), plan
    or no plan: its speed moves every estimate it reaches, and may be why none fits. The plan's first
    lines say it too (present/decision_words.doubted)."""
    from advisor.perf.estimate import params_from
    from advisor.perf.measured import dated_wrong, doubts, misdated
    from advisor.perf.serving_measured import label
    from advisor.perf.training import mfu_flops_per_token

    floor = params_from(problem.catalog).measured_mfu_floor
    for cls in problem.classes:
        said = doubts(cls.spec, mfu_flops_per_token(cls.spec.model, cls.spec.kind), floor)
        for doubt in said + misdated(cls.spec, problem.as_of):
            yield {"rule": None, "code": "measurement-doubt", "message": doubt}
    jobs = problem.workload.jobs
    for i in sorted({serve.job for serve in problem.serve_classes}):
        for run in getattr(jobs[i], "measured", None) or []:
            gpu = problem.catalog.gpus.get(run.gpu)
            if run.date is not None and (wrong := dated_wrong(label(run), run.date, gpu, problem.as_of)):
                yield {"rule": None, "code": "measurement-doubt", "message": wrong}
    for serve in problem.serve_classes:
        for doubt in serve.model.doubts:
            yield {"rule": None, "code": "measurement-doubt", "message": doubt}


def _price_warnings(problem: Problem, sol: Solution) -> Iterator[JSONObject]:
    """Per GPU type: a rent- or buy-only GPU when both were allowed, and each price older than
    STALE_MONTHS; then each server's stale price."""
    d = problem.workload.deployment
    for gid in sorted(sol.gpu_types()):
        gpu = problem.catalog.gpus[gid]
        if len(d.ownerships) == 2 and gpu.availability in ("rent only", "buy only"):
            missing = "purchase price" if gpu.availability == "rent only" else "on-demand rental rate"
            yield {
                "rule": None,
                "code": gpu.availability.replace(" ", "-"),
                "message": f"{gpu.name} is {gpu.availability}: the catalog holds no sourced {missing} "
                "for it (give a quote with --catalog)",
            }
        for what, _, as_of in dated_prices(problem, sol, gid):
            yield from _stale(problem, gpu.name, what, as_of)
    for servers in sol.servers.values():
        for sid in sorted(servers):
            server = problem.catalog.servers[sid]
            yield from _stale(problem, server.name, "purchase price", server.purchase.as_of)


def _network_warnings(problem: Problem, sol: Solution) -> Iterator[JSONObject]:
    """Networked GPU types: the servers left out for want of any sourced network (the workstation:
    constraints/network.py), and the bought servers a job spans whose bandwidth no source gives (a PCIe
    server: it depends on the NICs fitted): the speed assumes the estimator's bandwidth per GPU
    between servers and the bill that network's share of the priced NIC and fabric per GPU, which the
    buyer must confirm the servers take."""
    from advisor.perf.estimate import params_from
    from advisor.perf.training import default_network_gbps

    for gid in sorted(sol.networked):
        for server in problem.catalog.servers_for(gid, problem.workload.deployment.context):
            if not server.sources_network:
                yield {
                    "rule": None,
                    "code": "no-network",
                    "message": f"{gid} not in {server.id}: a job spans servers, and the catalog sources no network "
                    f"joining these ({server.network_gbps_per_server.note or 'no configuration'}), so none is "
                    "invented for them; a job within one would still be offered on it (give a network quote with --catalog)",
                }
        gbps = default_network_gbps(problem.catalog.gpus[gid], params_from(problem.catalog))
        for sid in sorted(sol.servers.get(gid, {})):
            figure = problem.catalog.servers[sid].network_gbps_per_server
            if figure.value is None:
                yield {
                    "rule": None,
                    "code": "fabric",
                    "message": f"{gid} in {sid}: a job spans several of these servers, but the catalog sources no "
                    f"network for them ({figure.note or 'no configuration'}); the speed estimate assumes "
                    f"{gbps * 8:g} Gb/s per GPU between servers and the bill prices that network: confirm the "
                    "servers take the NICs, or get a quote",
                }


def _provider_limits(problem: Problem, sol: Solution) -> Iterator[JSONObject]:
    """A provider's most GPUs held at once its rate is evidenced at (published per provider, else the
    largest order its sources show on sale: RentalOffer.provider_evidenced), against all the GPUs the plan rents from it at once
    (purchase[].billed_gpus): each job's order was checked alone (solve/rental_offers.quote_needed), and
    five 512-GPU copies at once are 2,560 GPUs from one provider. Begins 'GPU at PROVIDER:' so the RFQ
    attaches it to that item."""
    for item in ledger.purchase_items(problem, sol):
        if item["ownership"] != "rent":
            continue
        offers = problem.catalog.gpus[item["gpu"]].rentals(item["rent_kind"])
        offer = next((o for o in offers if o.provider == item["provider"]), None)
        fit = order_fit(offer, item["billed_gpus"], one_order=False) if offer is not None else None
        said = offer is not None and offer.provider_evidenced == offer.order_evidenced  # one limit for both
        if fit is not None and not fit.within and not (said and _order_flagged(sol, item["gpu"], item["provider"])):
            message = f"{item['gpu']} at {item['provider']}: {fit.message}"
            yield {"rule": None, "code": "quote-needed", "message": message}


def _order_flagged(sol: Solution, gpu: str, provider: str) -> bool:
    """Whether one of the plan's orders on `provider`'s offer of `gpu` is above what its rate is
    evidenced at already: its own quote-needed warning says so (solve/rental_offers.quote_needed)."""
    cands = [c for c in sol.chosen if c.gpu == gpu] + [c for c, _ in sol.serving + sol.bridges if c.gpu == gpu]
    return any(
        c.offer is not None
        and c.offer.offer.provider == provider
        and order_fit(c.offer.offer, c.order_gpus).quote_needed
        for c in cands
    )


def _late_jobs(problem: Problem, sol: Solution) -> Iterator[JSONObject]:
    """A job that misses its deadline on an earliest-deadline-first schedule of the plan's own GPU
    counts: the MILP holds jobs on a bought GPU type at once or in turn in pairs (constraints/at_once.py)
    and, for three or more jobs of one copy each, by the lazy rows of solve/late_cuts.py; a job with
    copies beside others can pass every row and still not fit: the plan says so rather than print it met."""
    for s in Deadline().slack(problem, sol):
        if s.slack < -1e-6 * s.limit:
            yield {
                "rule": None,
                "code": "deadline-schedule",
                "message": f"{s.facts['job']}: on an earliest-deadline-first schedule of the plan's GPU counts it "
                f"finishes on day {s.used:.1f}, {in_days(-s.slack)} past its {deadline_phrase(24 * s.limit)} "
                "(the plan checks jobs' turns in pairs, not beside their copies or the GPUs that serve); give them "
                "more GPUs (gpus.min) or stagger the deadlines",
            }


def _copies_not_spread(problem: Problem, sol: Solution) -> Iterator[JSONObject]:
    """A job with `repeat: n` and no deadline is n copies planned as soon as their GPUs allow, not one
    per period (docs/model.md §2.4): "monthly fine-tunes for 3 years" bought are all done by month 4.8,
    so a later run's rent is not discounted to when it is paid and bought GPUs are not held to the last
    run. Said with the day the last copy is done (at_once.class_done_hours: in turn) and which way each
    figure would move."""
    from advisor.solve.constraints.at_once import class_done_hours

    done = class_done_hours(problem, sol)
    jobs, months = problem.workload.jobs, problem.costs.horizon_hours / HOURS_PER_MONTH
    for k, cls in enumerate(problem.classes):
        copies = max((jobs[j].repeat for j in cls.jobs), default=1)
        if copies > 1 and k in done and not cls.deadline:  # (with a deadline, as soon as possible is what is asked)
            yield {
                "rule": None,
                "code": "copies-not-spread",
                "message": f"{cls.name(problem.workload)}: its {copies} copies (repeat: {copies}) are planned as soon "
                f"as their GPUs allow (the last done on day {done[k] / 24:.1f} of the {months:g}-month horizon), not "
                "one per period: a plan does not date a repeated job's runs. If they are spread over it, renting costs "
                "less in present value than shown (each run's rent paid when it runs) and owning more (the GPUs "
                "held, hosted and resold after the last run)",
            }


def _stale(problem: Problem, what: str, price: str, as_of: str | None) -> Iterator[JSONObject]:
    """A warning when `what`'s `price` is older than STALE_MONTHS on the plan's day."""
    months = age_months(as_of, problem.as_of)
    if months is not None and months > STALE_MONTHS:
        yield {
            "rule": None,
            "code": "stale-price",
            "message": f"{what}'s {price} is from {as_of}, {months} months before "
            f"{problem.as_of.isoformat()}; get a current quote",
        }


def _solver_warnings(sol: Solution, explaining: SolveSettings | None) -> Iterator[JSONObject]:
    """The plan not proven optimal, and explanations whose re-solves stopped before their gap."""
    if sol.solver.get("proven_optimal") is False:
        yield {
            "rule": None,
            "code": "not-proven-optimal",
            "message": f"the solver stopped at its time limit with a plan not proven optimal "
            f"(gap {sol.solver.get('gap')}); raise --time-limit for a proof",
        }
    tally = explaining.tally if explaining else None
    if explaining and tally and tally.unproven:
        yield {
            "rule": None,
            "code": "explanations-approximate",
            "message": f"{tally.unproven} of the {tally.solves} re-solves behind the explanations "
            f"stopped at their {explaining.time_limit:g} s limit before proving a "
            f"{100 * (explaining.gap or 0.0):g}% gap; their numbers are approximate",
        }


def plan_sources(problem: Problem, sol: Solution) -> list[JSONObject]:
    """Every source behind the chosen GPUs' figures and prices, the cost assumptions and the
    rules cited, with the date of each dated figure."""
    catalog = problem.catalog
    dated = _source_dates(problem, sol)
    out = []
    for sid in sorted(dated):
        src = catalog.sources.get(sid)
        if src is not None and src.kind not in ("derived", "assumption"):
            out.append({"id": sid, "url": src.url, "as_of": dated[sid]})
    return out + _rule_sources(problem, sol)


def _source_dates(problem: Problem, sol: Solution) -> dict[str, str | None]:
    """Source id -> the latest date a cited figure of it carries (None: undated): the chosen GPUs'
    datasheet figures and prices, the bill of materials, the servers and the cost assumptions."""
    catalog = problem.catalog
    dated: dict[str, str | None] = {}

    def add(ids: list[str], as_of: str | None = None) -> None:
        for sid in ids:
            known = dated.get(sid)
            if as_of and (known is None or as_of > known):
                dated[sid] = as_of
            else:
                dated.setdefault(sid, None)

    for gid in sorted(sol.gpu_types()):
        gpu = catalog.gpus[gid]
        for fig in (
            gpu.memory_gb,
            gpu.memory_bandwidth_gbps,
            gpu.tdp_w,
            gpu.interconnect.link_gbps,
            gpu.interconnect.p2p,
            gpu.interconnect.pcie_gbps,
            *gpu.tensor_tflops.values(),
        ):
            add(fig.source)
        for _, source, as_of in dated_prices(problem, sol, gid):
            add(source, as_of)
    if sol.feasible:
        for item in ledger.bill_of_materials(problem, sol):
            add([s for s in item["source"] if s in catalog.sources])
    for servers in sol.servers.values():
        for sid in servers:
            s = catalog.servers.get(sid)
            if s is not None and s.purchase is not None:
                add(s.purchase.source, s.purchase.as_of)
                add(s.power_overhead_w.source)
    if sol.bought:
        for a in catalog.assumptions.values():
            if set(a.source) & set(problem.costs.sources):
                add(a.source, a.as_of)
    return dated


def _rule_sources(problem: Problem, sol: Solution) -> list[JSONObject]:
    """The rules the plan cites (why a GPU was rejected, a chosen candidate's warnings, the power
    rule), each with its source's URL (or its citation) and the date it took effect."""
    cited: set[str] = {r["rule"] for rej in problem.rejected.values() for r in rej.reasons if r["rule"]} | {
        w["rule"] for c in sol.chosen + [c for c, _ in sol.serving] for w in c.warnings if w["rule"]
    }
    if problem.power_rule:
        cited.add(problem.power_rule)
    out = []
    for rule_id in sorted(cited):
        rule = problem.rules.get(rule_id)
        out.append(
            {
                "id": rule_id,
                "url": rule.source.url,
                "as_of": rule.effective.from_.isoformat() if rule.effective.from_ else None,
            }
            | ({} if rule.source.url else {"reference": rule.source.cite})
        )
    return out
