"""Serving rentals sold by whole nodes: a provider that rents a GPU type only by the node (Nebius's
8x H200 VM, Lambda's 8x B200) or in a minimum block bills the GPUs serving on it in those units,
whatever the replicas use. The MILP holds, per such GPU type g (docs/model.md, serving):

  serve_nodes_g     block x B[g] = sum of the rented serving GPUs of type g + I[g]
  serve_block_g     (a minimum block larger than one unit) B[g] x block >= min GPUs x w[g],
                    rented serving GPUs of g <= their most x w[g], w binary

with I[g], the GPUs billed beyond the replicas', paid like a GPU of the type's rented layout."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pulp

if TYPE_CHECKING:
    from advisor.data.catalog_prices import RentalOffer
    from advisor.solve.problem import Problem, ServeCandidate


def block_gpus(offer: RentalOffer) -> int:
    """The unit an offer bills in: its node's GPUs when sold by whole nodes, else one GPU."""
    return offer.node_gpus if offer.whole_nodes else 1


def serving_node_offers(problem: Problem, layouts: Iterable[ServeCandidate]) -> dict[str, RentalOffer]:
    """GPU -> its serving rental offer, for the types rented for serving whose offer bills in more than one GPU."""
    out = {}
    for c in layouts:
        offer = problem.catalog.gpus[c.gpu].rental
        if c.ownership == "rent" and offer is not None and max(block_gpus(offer), offer.min_gpus) > 1:
            out[c.gpu] = offer
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
