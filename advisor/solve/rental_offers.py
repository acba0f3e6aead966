"""Rental offers as a plan takes them (issue 29): grouped by kind and provider tier, so offers of one
kind and tier compete and the others stay beside them; for a GPU count, the group's cheapest offer
whose fabric carries it; what a plan renting on an offer must say (a quote needed above its largest
order, the fabric its nodes are joined by, an unpublished node size); and the fabric's bandwidth
the estimate uses between nodes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from advisor.data.catalog_prices import RentalOffer
from advisor.economics.rental import RentOption, fabric_fit, order_fit
from advisor.solve.problem import Finding, Problem
from advisor.solve.serving_nodes import bill_key

if TYPE_CHECKING:
    from advisor.solve.solution import Solution

Way = tuple[str, tuple[RentOption, ...]]  # buy (no offers), or rent from one kind and tier's offers


def grouped(pairs: list[tuple[str, RentOption | None]]) -> list[Way]:
    """Buying, and renting grouped by (kind, provider tier), each group's offers cheapest first: for
    each GPU count a rented candidate takes its group's cheapest offer that can run it (solve/candidates.py), so offers of one kind and tier compete, and other kinds and tiers stay
    beside them (compared on one price basis, docs/model.md)."""
    groups: dict[tuple[str, str], list[RentOption]] = {}
    out: list[Way] = []
    for ownership, opt in pairs:
        if opt is None:
            out.append((ownership, ()))
        else:
            key = (opt.kind, opt.tier)
            if key not in groups:
                groups[key] = []
                out.append(("rent", ()))  # a placeholder, filled below in this order
            groups[key].append(opt)
    filled = iter(tuple(sorted(g, key=lambda o: (o.rate, o.offer.provider))) for g in groups.values())
    return [(own, next(filled) if own == "rent" else group) for own, group in out]


def offer_warnings(opt: RentOption, gpu: str, n: int, assumed_gbps: float) -> list[Finding]:
    """What a plan renting n GPUs on `opt` must say: a quote is needed above the offer's published
    largest order, the fabric its nodes are joined by (when the job spans nodes; with the bandwidth
    the speed estimate assumes, `assumed_gbps` GB/s per GPU, when the offer publishes none), and an
    offer whose node size is not published. Each message begins 'GPU at PROVIDER:' (`at_offer`), which
    is how the RFQ finds what to ask each provider."""
    out = quote_needed(opt, gpu, n)
    fit = fabric_fit(opt.offer, n)
    if fit.nodes > 1:
        assumed = (
            ""
            if fit.gbps_per_gpu
            else f": the speed estimate assumes {assumed_gbps * 8:g} Gb/s per GPU between nodes; ask the provider"
        )
        out.append({"rule": None, "code": "fabric", "message": f"{at_offer(gpu, opt)} {n} GPUs, {fit.reason}{assumed}"})
    if opt.offer.gpus_per_node is None:
        message = f"{at_offer(gpu, opt)} no node size is published: one GPU per node is assumed"
        out.append({"rule": None, "code": "node-size", "message": message})
    return out


def at_offer(gpu: str, opt: RentOption) -> str:
    """'h100-sxm at SF Compute (H100 clusters, market average):', the head of an offer's warnings."""
    return f"{gpu} at {opt.offer.provider}:"


def quote_needed(opt: RentOption, gpu: str, n: int) -> list[Finding]:
    """'quote-needed' when n GPUs are more than the size the offer's rate is evidenced at (its rate is then an assumption)."""
    order = order_fit(opt.offer, n)
    message = f"{at_offer(gpu, opt)} {order.message}"
    return [{"rule": None, "code": "quote-needed", "message": message}] if order.quote_needed else []


def network_gbps(opt: RentOption | None, n: int) -> float | None:
    """GB/s per GPU each way between the nodes a rented job of n GPUs spans, from its offer's
    published fabric (Gb/s per GPU); None on one node, bought, or unpublished."""
    if opt is None or n <= opt.node_gpus:
        return None
    gbps = opt.offer.fabric.gbps_per_gpu
    return gbps / 8.0 if gbps else None


def rent_offers(problem: Problem) -> dict[tuple[str, str], RentalOffer]:
    """Every rental offer some candidate (a job's column or a serving layout) rents on, by (GPU, provider)."""
    out: dict[tuple[str, str], RentalOffer] = {}
    for c in [c for cs in problem.candidates for c in cs] + [c for cs in problem.serve_candidates for c in cs]:
        key = bill_key(c)
        if key is not None and c.offer is not None:  # (bill_key: a rented candidate with an offer)
            out[key] = c.offer.offer
    return out


def rented_on(used: Iterable[tuple[Any, Any]]) -> frozenset[tuple[str, str]]:
    """The (GPU, provider) of the rental offers of `used` (candidates or serving layouts, with counts):
    a draw's plan on another offer of a GPU type (a firmer rate, or billed by use rather than a
    term) is another plan (explain/robustness.py)."""
    return frozenset(k for c, _ in used if (k := bill_key(c)) is not None)


def pairs_of(sol: Solution) -> frozenset[tuple[str, str]]:
    """The (GPU, ownership) pairs a plan uses, jobs and replicas: what the robustness verdict compares."""
    return frozenset({(c.gpu, c.ownership) for c in sol.chosen} | {(c.gpu, c.ownership) for c, _ in sol.serving})


def offers_of(sol: Solution) -> frozenset[tuple[str, str]]:
    """The (GPU, provider) of every rental offer a plan rents on, jobs and replicas."""
    return rented_on([(c, 1) for c in sol.chosen] + list(sol.serving))
