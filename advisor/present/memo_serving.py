"""The memo's serving section (issue 17): display text only, from what plan() computed
(plan["serving"], plan["serving_mix"], plan["sensitivity"]["traffic"]); nothing is solved here."""

from __future__ import annotations

from advisor.contract import Plan
from advisor.present.words import usd

LIMITS = {
    "kv-memory": "KV-cache memory (the batch the cache holds)",
    "memory-bandwidth": "memory bandwidth",
    "compute": "compute",
    "ttft-queue": "the first-token latency limit (prompt queue)",
}


def serving_context(plan: Plan) -> dict | None:
    """Rows and sentences for the serving section, or None when the plan serves nothing."""
    rows = plan.serving
    if not rows:
        return None
    table = [
        {
            "name": r.name,
            "gpus": f"{r.replicas} × {r.gpu} (TP {r.tensor_parallel}"
            + (f" × PP {r.pipeline_parallel}" if r.pipeline_parallel > 1 else "")
            + f", {r.ownership})",
            "requests": f"{r.requests_per_s_per_replica:.3g}/s each; peak {r.peak_requests_per_s:.3g}/s",
            "latency": f"TTFT {_ms(r.ttft_ms, '.0f')}, TPOT {_ms(r.tpot_ms, '.1f')} (p{r.slo.percentile:g})",
            "limited_by": LIMITS.get(r.limited_by, r.limited_by),
        }
        for r in rows
    ]
    notes = [f"{r.name} on {r.gpu}: {r.shared_with_training}." for r in rows if r.shared_with_training]
    mix = plan.serving_mix
    if mix is not None and mix.message:
        notes.append(mix.message[0].upper() + mix.message[1:] + " (re-solved with one GPU type at a time).")
    for t in plan.sensitivity.traffic or []:
        notes.append(t.message[0].upper() + t.message[1:] + " (re-solved).")
    if mix is not None and mix.best_single_cost_usd and (mix.saving_usd or 0) > 0.5:
        notes.append(f"Saving of the mix: {usd(mix.saving_usd)}.")
    return {"rows": table, "notes": notes}


def _ms(value: float | None, spec: str) -> str:
    """A latency in ms ('n/a' when the plan has none)."""
    return "n/a" if value is None else f"{format(value, spec)} ms"
