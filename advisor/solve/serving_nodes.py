"""Serving rentals sold by whole nodes: a provider that rents a GPU type only by the node (Nebius's
8x H200 VM, Lambda's 8x B200, AWS's 8x A100 p4de) or in a minimum block bills the GPUs serving on it
in those units, whatever the replicas use. Each rented layout is priced at its own offer (the
cheapest that holds it: solve/serving_offers.py), so two layouts of one GPU type may take different
offers; the billing is per offer. The MILP holds, per such (GPU type g, provider o) (docs/model.md,
serving):

  serve_nodes_g_o   block x B[g,o] = sum of the serving GPUs of type g rented from o + I[g,o]
  serve_block_g_o   (a minimum block larger than one unit) B[g,o] x block >= min GPUs x w[g,o],
                    serving GPUs of g rented from o <= their most x w[g,o], w binary

with I[g,o], the GPUs billed beyond the replicas', paid like a GPU of a layout rented from o."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pulp

from advisor.solve.rows import safe

if TYPE_CHECKING:
    from advisor.data.catalog_prices import RentalOffer
    from advisor.solve.problem import Candidate, ServeCandidate

BillKey = tuple[str, str]  # (GPU type, provider): one offer's serving bill


def block_gpus(offer: RentalOffer) -> int:
    """The unit an offer bills in: its node's GPUs when sold by whole nodes, else one GPU."""
    return offer.node_gpus if offer.whole_nodes else 1


def bill_key(c: ServeCandidate | Candidate) -> BillKey | None:
    """The bill a rented serving layout (or job column) is on: its GPU type and its offer's provider
    (None: bought, or rented without an offer)."""
    return (c.gpu, c.offer.offer.provider) if c.ownership == "rent" and c.offer is not None else None


def bill_name(key: BillKey, keys: Iterable[BillKey]) -> str:
    """A bill's suffix in row and column names: the GPU's, then the provider's place among that
    GPU's bills when it has more than one (names stay short, unique and deterministic)."""
    same = sorted(k for k in keys if k[0] == key[0])
    return safe(key[0]) if same == [key] else f"{safe(key[0])}_{same.index(key)}"


def serving_node_offers(layouts: Iterable[ServeCandidate]) -> dict[BillKey, RentalOffer]:
    """(GPU, provider) -> its offer, for the offers serving rents from that bill in more than one GPU."""
    out = {}
    for c in layouts:
        key = bill_key(c)
        if key is not None and c.offer is not None:
            offer = c.offer.offer
            if max(block_gpus(offer), offer.min_gpus) > 1:
                out[key] = offer
    return dict(sorted(out.items()))


def billed_gpus(offer: RentalOffer, used: int) -> int:
    """What `used` serving GPUs are billed as: whole units, at least the minimum block (none: none)."""
    if used <= 0:
        return 0
    block = block_gpus(offer)
    return max(offer.min_gpus, -(-used // block) * block)


def node_rows(
    prob: pulp.LpProblem,
    offer: RentalOffer,
    used: list[tuple[pulp.LpVariable, int]],
    idle: pulp.LpVariable,
    nodes: pulp.LpVariable,
    tag: str,
) -> None:
    """serve_nodes_<tag> (and serve_block_<tag>): the GPUs of the replica columns `used` ((column, GPUs
    per replica)) and the idle ones billed with them fill whole units of the offer, at least its
    minimum block."""
    gpus = pulp.lpSum(n * v for v, n in used)
    block = block_gpus(offer)
    prob += block * nodes - gpus - idle == 0, f"serve_nodes_{tag}"
    if offer.min_gpus > block:
        on = prob.add_variable(f"w_{tag}", cat="Binary")
        prob += gpus <= sum(n * (v.upBound or 0) for v, n in used) * on, f"serve_block_{tag}_on"
        prob += block * nodes >= offer.min_gpus * on, f"serve_block_{tag}"
