"""Plain-text tables for the terminal. Library output is data (dicts); this only lays it out."""
from __future__ import annotations


def table(headers: list[str], rows: list[list], indent: str = "  ") -> str:
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append(indent + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
        if n == 0:
            lines.append(indent + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def usd(x, digits: int = 0) -> str:
    if x is None:
        return "n/a"
    return f"${x:,.{digits}f}"


def tokens(x) -> str:
    if x is None:
        return "n/a"
    return f"{x / 1e3:,.1f}K" if x < 1e6 else f"{x / 1e6:,.2f}M"


def plan_text(p: dict) -> str:
    out = []
    a = p["assumptions"]
    title = p.get("name") or "GPU plan"
    out.append(f"{title}  ({a['deployment']}, region {a['region']}, prices as of {p['as_of']})")
    solver = p["solver"]
    if p["status"] == "infeasible":
        out.append("Status: NO FEASIBLE PLAN")
    else:
        proof = "proven optimal" if solver.get("proven_optimal") else f"best found, gap {solver.get('gap')}"
        out.append(f"Status: {p['status']} ({solver.get('name')}, {proof})   "
                   f"Total cost over {a['horizon_months']:g} months: {usd(p['total_cost_usd'])}")
    if p["purchase"]:
        out.append("\nBuy / rent")
        rows = []
        for item in p["purchase"]:
            if item["ownership"] == "buy":
                rows.append([item["gpu"], item["count"], "buy", usd(item["unit_price_usd"]) + " each", ""])
            else:
                rows.append([item["gpu"], item["count"], "rent", f"${item['unit_price_usd']:.2f}/GPU-hour",
                             f"{item['gpu_hours']:,.0f} GPU-hours ({item.get('provider', '')})"])
        out.append(table(["GPU", "count", "", "price", "usage"], rows))
        cb = p["cost_breakdown"]
        out.append("\nCost breakdown")
        out.append(table(["purchase", "servers", "energy", "hosting", "rental", "total"],
                         [[usd(cb["purchase_usd"]), usd(cb["servers_usd"]), usd(cb["energy_usd"]),
                           usd(cb["hosting_usd"]), usd(cb["rental_usd"]), usd(p["total_cost_usd"])]]))
    if p["jobs"]:
        out.append("\nJobs")
        rows = [[j["name"], j["gpu"], j["gpu_count"], tokens(j["tokens_per_s"]), f"{j['wall_days']:.2f}",
                 f"{j['memory_per_gpu_gb']:.1f}", f"{100 * j['mfu']:.0f}%", j["binding_factor"]] for j in p["jobs"]]
        out.append(table(["job", "GPU", "GPUs", "tokens/s", "days", "GB/GPU", "MFU", "limited by"], rows))
    if p["binding"]:
        out.append("\nConstraints")
        rows = [[b["constraint"], "BINDING" if b["binding"] else f"slack {b['slack']:,.2f} {b['unit']}", b["message"]]
                for b in p["binding"]]
        out.append(table(["constraint", "status", "detail"], rows))
    if p["rejected"]:
        out.append("\nNot chosen")
        rows = []
        for r in p["rejected"]:
            for i, reason in enumerate(r["reasons"]):
                code = reason["rule"] or reason.get("code", "")
                rows.append([r["gpu"] if i == 0 else "", code, reason["message"]])
        out.append(table(["GPU", "why", "detail"], rows))
    if p["diagnosis"]:
        out.append("\nWhy no plan exists")
        out.append(table(["constraint", "detail"], [[d["constraint"], d["message"]] for d in p["diagnosis"]]))
    if p["warnings"]:
        out.append("\nWarnings")
        for w in p["warnings"]:
            tag = w.get("rule") or w.get("code") or "note"
            out.append(f"  [{tag}] {w['message']}")
    out.append(f"\nSources: {len(p['sources'])} cited (see --format json); catalog {p['catalog_digest']}, "
               f"gpu-advisor {p['tool_version']}")
    return "\n".join(out) + "\n"


def estimate_text(e: dict) -> str:
    m = e["model"]
    out = [f"{e['gpu']} x{e['gpu_count']}: model {m['params'] / 1e9:.3g}B params, {m['layers']} layers, "
           f"hidden {m['hidden']}, sequence {m['seq_len']}"]
    if not e["fits"]:
        out.append(f"does not run: {e['reason']}")
        if e.get("min_gpus"):
            out.append(f"minimum GPUs that fit: {e['min_gpus']}")
        return "\n".join(out) + "\n"
    sb = e["step_breakdown"]
    lay = e["layout"]
    out.append(table(["tokens/s", "per GPU", "MFU", "GB/GPU", "limited by"],
                     [[tokens(e["tokens_per_s"]), tokens(e["tokens_per_s_per_gpu"]), f"{100 * e['mfu']:.1f}%",
                       f"{e['memory_per_gpu_gb']:.1f}", e["binding"]]]))
    split = "".join(f" x {k[0].upper()}P{lay[k + '_parallel']}" for k in ("tensor", "pipeline")
                    if lay.get(k + "_parallel", 1) > 1)
    out.append(table(["step: compute s", "memory s", "comm s", "layout", "micro-batch", "checkpointing", "link"],
                     [[f"{sb['compute_s']:.4f}", f"{sb['memory_s']:.4f}", f"{sb['comm_s']:.4f}",
                       lay["strategy"] + split,
                       lay["micro_batch"], lay["checkpointing"], lay["interconnect"]]]))
    out.append(f"  minimum GPUs that fit: {e['min_gpus']}")
    for note in e["notes"]:
        out.append(f"  note: {note}")
    return "\n".join(out) + "\n"
