"""The offer a rented serving replica is priced at: an offer must exist at the size one rents it.

A replica of tp x pp GPUs keeps each tensor-parallel group inside one node (solve/serving_candidates.py
layouts: tensor parallel within a server, pipeline stages of a server each). An on-demand offer holds
it when its node holds the replica (tp x pp <= GPUs per node), or, for a layout of pipeline stages,
when each stage fits a node and the offer's nodes are joined by a published fabric (economics/rental.py
fabric_fit). An offer whose node size is not published is taken as one GPU per node, so it holds
only a one-GPU replica. Of the dated on-demand offers (what GPU.rental picks from) the replica takes
the cheapest per GPU-hour that holds it (ties by provider): docs/model.md, "Serving".
"""

from __future__ import annotations

from advisor.data.catalog import GPU
from advisor.economics.rental import RentOption, fabric_fit
from advisor.solve.problem import Finding
from advisor.solve.rental_offers import at_offer, quote_needed


def holds(opt: RentOption, tp: int, pp: int) -> bool:
    """Whether a replica of tp x pp GPUs runs on the offer: in one node, or its pipeline stages on
    nodes joined by a fabric that carries them (a tensor-parallel group never spans nodes)."""
    n = tp * pp
    if n <= opt.node_gpus:
        return True
    return pp > 1 and tp <= opt.node_gpus and fabric_fit(opt.offer, n).carries


def serving_offer(gpu: GPU, tp: int, pp: int) -> RentOption | None:
    """The cheapest dated on-demand offer of `gpu` that holds a tp x pp replica; None when none does."""
    for offer in gpu.rentals("on_demand"):  # cheapest first, ties by provider
        opt = RentOption("on_demand", offer)
        if holds(opt, tp, pp):
            return opt
    return None


def no_offer_reason(gpu: GPU, tp: int, pp: int) -> str:
    """Why no rented layout of tp x pp GPUs exists: no on-demand offer of the GPU holds it."""
    n = tp * pp
    where = "in one node" if pp == 1 else f"as {pp} pipeline stages of {tp} on nodes joined by a published fabric"
    return (
        f"no on-demand offer of {gpu.id} holds a {n}-GPU replica {where} "
        "(an offer that publishes no node size is taken as one GPU per node)"
    )


def serving_offer_warnings(opt: RentOption, gpu: str, tp: int, pp: int) -> list[Finding]:
    """What a plan renting a tp x pp replica of `gpu` on `opt` must say: a quote is needed above the
    size the offer's rate is evidenced at, and the fabric its stages cross when the replica spans nodes."""
    n = tp * pp
    out = quote_needed(opt, gpu, n)
    fit = fabric_fit(opt.offer, n)
    if fit.nodes > 1:
        out.append({"rule": None, "code": "fabric", "message": f"{at_offer(gpu, opt)} a {n}-GPU replica, {fit.reason}"})
    return out
