"""The memo's serving section (issue 17): display text only, from what plan() computed
(plan["serving"], plan["serving_mix"], plan["sensitivity"]["traffic"]); nothing is solved here."""
from __future__ import annotations

from advisor.present.words import usd

LIMITS = {"kv-memory": "KV-cache memory (the batch the cache holds)", "memory-bandwidth": "memory bandwidth",
          "compute": "compute", "ttft-queue": "the first-token latency limit (prompt queue)"}


def serving_context(plan: dict) -> dict | None:
    """Rows and sentences for the serving section, or None when the plan serves nothing."""
    rows = plan.get("serving") or []
    if not rows:
        return None
    table = [{"name": r["name"], "gpus": f"{r['replicas']} × {r['gpu']} (TP {r['tensor_parallel']}"
                                         + (f" × PP {r['pipeline_parallel']}" if r["pipeline_parallel"] > 1 else "")
                                         + f", {r['ownership']})",
              "requests": f"{r['requests_per_s_per_replica']:.3g}/s each; peak {r['peak_requests_per_s']:.3g}/s",
              "latency": f"TTFT {r['ttft_ms']:.0f} ms, TPOT {r['tpot_ms']:.1f} ms (p{r['slo']['percentile']:g})",
              "limited_by": LIMITS.get(r["limited_by"], r["limited_by"])} for r in rows]
    notes = [f"{r['name']} on {r['gpu']}: {r['shared_with_training']}." for r in rows if r.get("shared_with_training")]
    mix = plan.get("serving_mix") or {}
    if mix.get("message"):
        notes.append(mix["message"][0].upper() + mix["message"][1:] + " (re-solved with one GPU type at a time).")
    for t in (plan.get("sensitivity") or {}).get("traffic", []):
        notes.append(t["message"][0].upper() + t["message"][1:] + " (re-solved).")
    if mix.get("best_single_cost_usd") and mix.get("saving_usd", 0) > 0.5:
        notes.append(f"Saving of the mix: {usd(mix['saving_usd'])}.")
    return {"rows": table, "notes": notes}
