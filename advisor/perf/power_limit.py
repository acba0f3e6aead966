"""GEMM rate of a power-limited part: a card that shares its die with a part whose best GEMM rate was
measured (MAMF), but runs at a lower board power limit, cannot sustain its datasheet clock under
continuous matrix multiplies. Its rate is capped at the measured part's, scaled by the power ratio to
`power_limit_exponent` (derived from a measured power-capped run of that die: catalog/serving_estimator.yaml,
bench/power_limit.py). Memory bandwidth is not scaled: a power cap lowers the SM clock."""

from __future__ import annotations

from advisor.data.catalog import GPU, Catalog
from advisor.data.estimator import Params
from advisor.perf.serve import ServeParams
from advisor.perf.training import achievable_fraction


def capped_share(
    share: float,
    own_tflops: float,
    ref_tflops: float,
    ref_share: float,
    tdp_w: float,
    ref_tdp_w: float,
    exponent: float,
) -> float:
    """The GEMM share of a part's dense peak it sustains: its own `share`, or the reference part's
    measured rate (ref_tflops x ref_share) scaled by (tdp_w / ref_tdp_w)^exponent, whichever is lower."""
    if tdp_w >= ref_tdp_w or own_tflops <= 0:
        return share
    return min(share, ref_tflops * ref_share * (tdp_w / ref_tdp_w) ** exponent / own_tflops)


def power_limited_shares(
    gpu: GPU, shares: dict[str, float], catalog: Catalog, estimator: Params, params: ServeParams
) -> dict[str, float]:
    """`shares` ({precision: MAMF share}) of `gpu`, capped where `params.power_reference` names a measured
    part of the same die and `gpu` has no measurement of its own."""
    ref_id = params.power_reference.get(gpu.id)
    ref = catalog.gpus.get(ref_id) if ref_id else None
    if ref is None or gpu.id in (estimator.architecture_efficiency or {}):
        return shares
    tdp, ref_tdp = gpu.tdp_w.value, ref.tdp_w.value
    if not tdp or not ref_tdp:
        return shares
    out = dict(shares)
    for q, share in shares.items():
        own, theirs = gpu.tensor_tflops.get(q), ref.tensor_tflops.get(q)
        if own is None or theirs is None or not own.value or not theirs.value:
            continue
        ref_share = achievable_fraction(ref, "fp8" if q == "fp4" else q, estimator)
        out[q] = capped_share(
            share,
            float(own.value),
            float(theirs.value),
            ref_share,
            float(tdp),
            float(ref_tdp),
            params.power_limit_exponent,
        )
    return out
