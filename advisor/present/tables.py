"""Text, Markdown and CSV views of plans, estimates, frontiers and comparisons. Library output is
data (dicts); this only lays it out (present/grid.py draws the tables)."""
from __future__ import annotations

from advisor.present.escape import md
from advisor.present.grid import csv_text, grid, para, table
from advisor.present.words import duration, tokens, unit_rate, unproven, usd


def _heading(title: str, fmt: str) -> str:
    return f"\n### {title}\n" if fmt == "markdown" else f"\n{title}"


def _line(text: str, fmt: str) -> str:
    return f"- {text}" if fmt == "markdown" else para(text, "  ", "    ")


def _bill(p: dict) -> list[list]:
    rows = []
    for item in p["purchase"]:
        if item["ownership"] == "buy":
            rows.append([item["gpu"], item["count"], "buy", usd(item["unit_price_usd"]) + " each", ""])
        else:
            rows.append([item["gpu"], item["count"], "rent", f"{unit_rate(item['unit_price_usd'])}/GPU-hour",
                         f"{item['gpu_hours']:,.0f} GPU-hours ({item.get('provider', '')})"])
    for srv in p.get("servers", []):
        rows.append([srv["server"], srv["count"], "buy", usd(srv["unit_price_usd"]) + " each",
                     f"holds {srv['gpu']}" + (f", {srv['networked']} networked" if srv["networked"] else "")])
    return rows


def _why(reason: dict) -> str:
    code = reason["rule"] or reason.get("code", "")
    return code + (" (warn)" if reason.get("severity") == "warn" else "")


def not_chosen_rows(rejected: list[dict], verbose: bool = False) -> list[list]:
    """One row per primary reason, GPUs with the same reason grouped into one row (the GPU's own
    name in a message becomes "each"); with verbose, every reason of every GPU."""
    if verbose:
        return [[r["gpu"] if i == 0 else "", _why(x), x["message"]] for r in rejected for i, x in enumerate(r["reasons"])]
    groups: dict[tuple[str, str], list[str]] = {}
    for r in rejected:
        first = r["reasons"][0]
        name = r.get("name")
        text = first["message"].replace(name, "each") if name and name in first["message"] else first["message"]
        groups.setdefault((_why(first), text), []).append(r["gpu"])
    rows = []
    for (why, text), gids in groups.items():
        if len(gids) == 1:
            r = next(x for x in rejected if x["gpu"] == gids[0])
            text = r["reasons"][0]["message"]
        rows.append([", ".join(gids), why, text])
    return rows


def plan_text(p: dict, fmt: str = "table", *, verbose: bool = False) -> str:
    """The plan for a terminal (fmt='table', fitted to its width) or a document (fmt='markdown').
    GPUs not chosen for the same primary reason share a row; verbose lists every reason."""
    out = []
    a = p["assumptions"]
    title = p.get("name") or "GPU plan"
    caveat = unproven(p)
    head = (f"{title}  ({a['deployment']}, region {a['region']}, prices as of {p['as_of']})"
            + (f"  [{caveat}]" if caveat else ""))
    out.append(f"## {md(head)}\n" if fmt == "markdown" else para(head))
    solver = p["solver"]
    if p["status"] == "infeasible":
        out.append("Status: NO FEASIBLE PLAN")
    else:
        limit = solver.get("gap_limit") or 0.0
        proof = ((f"proven within {100 * limit:g}% of optimal" if limit > 1e-4 else "proven optimal")
                 if solver.get("proven_optimal") else f"best found, gap {solver.get('gap')}")
        out.append(para(f"Status: {p['status']} ({solver.get('name')}, {proof})   "
                        f"Total cost over {a['horizon_months']:g} months: {usd(p['total_cost_usd'])}"
                        + _span(p.get("total_cost_usd_range"), usd)))
        if p.get("confidence"):
            out.append(para(f"Deadlines held at {p['confidence']['quantile']} of each job's time; ranges are P10–P90"))
    if p["purchase"]:
        out.append(_heading("Buy / rent", fmt))
        out.append(grid(["item", "count", "", "price", "usage"], _bill(p), fmt, wrap=(4,)))
        cb = p["cost_breakdown"]
        out.append(_heading("Cost breakdown", fmt))
        out.append(grid(["purchase", "servers", "energy", "hosting", "rental", "total"],
                        [[usd(cb["purchase_usd"]), usd(cb["servers_usd"]), usd(cb["energy_usd"]),
                          usd(cb["hosting_usd"]), usd(cb["rental_usd"]), usd(p["total_cost_usd"])]], fmt))
        if p.get("cost_breakdown_pv"):
            out.append(_line(f"total = present value at {100 * (a.get('discount_rate') or 0):.1f}%/year, what the plan "
                             f"minimises; the columns are undiscounted. Resale of bought GPUs after "
                             f"{a['horizon_months']:g} months: {usd(p.get('residual_value_usd') or 0)}; cash paid over "
                             f"the horizon (no resale deducted): {usd(p.get('nominal_cost_usd'))}", fmt))
    if p["jobs"]:
        out.append(_heading("Jobs", fmt))
        rows = [[j["name"], j["gpu"], j["gpu_count"], tokens(j["tokens_per_s"]),
                 duration(j["wall_days"] * 24, short=True)
                 + _span(j.get("wall_days_range"), lambda v: duration(v * 24, short=True)),
                 f"{j['memory_per_gpu_gb']:.1f}", f"{100 * j['mfu']:.0f}%", j["binding_factor"]] for j in p["jobs"]]
        out.append(grid(["job", "GPU", "GPUs", "tokens/s", "time (P10–P90)", "GB/GPU", "MFU", "limited by"], rows, fmt,
                        wrap=(4, 7)))
        for j in p["jobs"]:
            lay, g = j.get("layout") or {}, j.get("goodput") or {}
            split = " x ".join(f"{k[0].upper()}P{lay[k + '_parallel']}" for k in ("data", "tensor", "pipeline", "context")
                               if lay.get(k + "_parallel", 1) > 1) or "one GPU"
            line = f"{j['name']}: layout {split}, global batch {lay.get('global_batch_tokens', 0):,.0f} tokens"
            if g:
                line += (f"; goodput {100 * g['fraction']:.1f}%: {24 * g['lost_days']:,.1f} h of the "
                         f"{24 * j['wall_days']:,.1f} h lost to failures, restarts and checkpoints")
            out.append(_line(line, fmt))
    out += serving_lines(p, fmt)
    if p["binding"]:
        out.append(_heading("Constraints", fmt))
        rows = [[b["constraint"], "BINDING" if b["binding"] else f"slack {b['slack']:,.2f} {b['unit']}", b["message"]]
                for b in p["binding"]]
        out.append(grid(["constraint", "status", "detail"], rows, fmt, wrap=(1, 2)))
    sens = p.get("sensitivity") or {}
    lines = (sens.get("break_even", []) + sens.get("speed", []) + sens.get("marginal", [])
             + sens.get("traffic", []) + (p.get("break_even_months") or []))
    if lines:
        out.append(_heading("Sensitivity", fmt))
        out += [_line(item["message"], fmt) for item in lines]
    if p.get("robustness"):
        out.append(_heading("Robustness", fmt))
        out.append(_line(p["robustness"]["message"], fmt))
    if p["rejected"]:
        out.append(_heading("Not chosen" + ("" if verbose else " (primary reason; --verbose for all)"), fmt))
        out.append(grid(["GPU", "why", "detail"], not_chosen_rows(p["rejected"], verbose), fmt, wrap=(0, 2)))
    if p["diagnosis"]:
        out.append(_heading("Why no plan exists", fmt))
        need = [d for d in p["diagnosis"] if d.get("kind") == "shortfall"]
        fixes = [d for d in p["diagnosis"] if d.get("kind") != "shortfall"]
        if need:
            out.append(grid(["shortfall", "detail"], [[d["constraint"].partition(":")[2] or d["constraint"],
                                                       d["message"]] for d in need], fmt, wrap=(1,)))
        out.append(grid(["change", "detail"], [[d["constraint"], d["message"]] for d in fixes], fmt, wrap=(1,)))
    if p["warnings"]:
        out.append(_heading("Warnings", fmt))
        out += [_line(f"[{w.get('rule') or w.get('code') or 'note'}] {w['message']}", fmt) for w in p["warnings"]]
    out.append("\n" + para(f"Sources: {len(p['sources'])} cited (see --format json); catalog {p['catalog_digest']}, "
                           f"gpu-advisor {p['tool_version']}"))
    return "\n".join(out) + "\n"


def _span(r: dict | None, fmt) -> str:
    """' (P10–P90)' beside a point value, e.g. '18.9 (15.7–23.4)'."""
    return f" ({fmt(r['p10'])}–{fmt(r['p90'])})" if r else ""


def plan_csv(p: dict) -> str:
    """The bill of materials, one row per item bought or rented (GPUs and servers), plain numbers."""
    rows = [["gpu", i["gpu"], i["count"], i["ownership"], i["unit_price_usd"],
             "usd" if i["ownership"] == "buy" else "usd_per_gpu_hour", i.get("gpu_hours")] for i in p["purchase"]]
    rows += [["server", s["server"], s["count"], "buy", s["unit_price_usd"], "usd", None] for s in p.get("servers", [])]
    return csv_text(["type", "item", "count", "ownership", "unit_price", "unit", "gpu_hours"], rows)


def estimate_text(e: dict) -> str:
    m = e["model"]
    out = [para(f"{e['gpu']} x{e['gpu_count']}: model {m['params'] / 1e9:.3g}B params, {m['layers']} layers, "
                f"hidden {m['hidden']}, sequence {m['seq_len']}")]
    if not e["fits"]:
        out.append(para(f"does not run: {e['reason']}"))
        if e.get("min_gpus"):
            out.append(f"minimum GPUs that fit: {e['min_gpus']}")
        return "\n".join(out) + "\n"
    sb = e["step_breakdown"]
    lay = e["layout"]
    out.append(table(["tokens/s", "per GPU", "MFU", "GB/GPU", "limited by"],
                     [[tokens(e["tokens_per_s"]), tokens(e["tokens_per_s_per_gpu"]), f"{100 * e['mfu']:.1f}%",
                       f"{e['memory_per_gpu_gb']:.1f}", e["binding"]]]))
    split = "".join(f" x {k[0].upper()}P{lay[k + '_parallel']}" for k in ("data", "tensor", "pipeline", "context")
                    if lay.get(k + "_parallel", 1) > 1)
    out.append(table(["step: compute s", "memory s", "comm s", "layout", "micro-batch", "checkpointing", "link"],
                     [[f"{sb['compute_s']:.4f}", f"{sb['memory_s']:.4f}", f"{sb['comm_s']:.4f}",
                       lay["strategy"] + split, lay["micro_batch"], lay["checkpointing"], lay["interconnect"]]]))
    out.append(para(f"global batch: {lay['global_batch_tokens']:,.0f} tokens of sequence {m['seq_len']:,}"
                    + (" (raised to feed every GPU)" if lay.get("batch_changed") else ""), "  ", "    "))
    band = e.get("accuracy_band")
    if band:
        out.append(para(f"measured error for {band['generation']} GPUs (leave-one-source-out): MAPE "
                        f"{100 * band['mape']:.1f}%, worst {100 * band['worst']:.1f}% over {band['n']} runs", "  ", "    "))
    out.append(f"  minimum GPUs that fit: {e['min_gpus']}")
    out += [para(f"note: {note}", "  ", "        ") for note in e["notes"]]
    return "\n".join(out) + "\n"


def _frontier_rows(f: dict) -> list[list]:
    return [[duration(pt["makespan_days"] * 24, short=True), usd(pt["total_cost_usd"]),
             ", ".join(f"{i['count']}x {i['gpu']} ({i['ownership']})" for i in pt["purchase"])] for pt in f["points"]]


def frontier_text(f: dict, fmt: str = "table") -> str:
    if fmt == "csv":
        return csv_text(["makespan_days", "total_cost_usd", "plan"],
                        [[pt["makespan_days"], pt["total_cost_usd"], row[2]]
                         for pt, row in zip(f["points"], _frontier_rows(f))])
    out = [para(f"Cost versus time{': ' + f['name'] if f.get('name') else ''}  (prices as of {f['as_of']})")]
    if not f["points"]:
        out.append("no feasible plan at any makespan")
        return "\n".join(out) + "\n"
    out.append(grid(["time", "total cost", "plan"], _frontier_rows(f), fmt, wrap=(2,)))
    return "\n".join(out) + "\n"


def _ratio(x):
    return "n/a" if x is None else f"{x:.2f}x"


def compare_text(r: dict, fmt: str = "table") -> str:
    if fmt == "csv":
        keys = ["gpu", "price_usd", "dense_tflops", "memory_gb", "memory_bandwidth_gbps", "link", "link_gbps", "p2p",
                "gpu_count", "tokens_per_s", "tokens_per_s_per_1k_usd", "price_ratio", "speed_ratio"]
        return csv_text(keys, [[row.get(k) for k in keys] for row in r["rows"]])
    m = r["model"]
    title = m["name"] or f"{m['params'] / 1e9:.3g}B parameters"
    out = [para(f"{title} ({r['precision']}), estimated on the fewest GPUs that hold it; prices as of {r['as_of']}")]
    rows = []
    for row in r["rows"]:
        tflops = f"{row['dense_tflops']:g}" if row["dense_tflops"] else "n/a"
        if row["fp16_fp16acc_tflops"]:
            tflops += f" ({row['fp16_fp16acc_tflops']:g} FP16-acc)"
        link = "none" if row["link"] == "none" else f"{row['link']} {row['link_gbps']:g} GB/s"
        link += "" if row["p2p"] else (", no P2P" if row["p2p"] is False else ", P2P unknown")
        rows.append([row["gpu"], usd(row["price_usd"]), tflops, f"{row['memory_gb']:g} GB",
                     f"{row['memory_bandwidth_gbps']:g} GB/s", link, row["gpu_count"] or "n/a",
                     tokens(row["tokens_per_s"]),
                     tokens(row["tokens_per_s_per_1k_usd"]) if row["tokens_per_s_per_1k_usd"] else "n/a",
                     _ratio(row["price_ratio"]), _ratio(row["speed_ratio"])])
    out.append(grid(["GPU", "price", "dense TFLOPs", "memory", "bandwidth", "GPU-to-GPU", "GPUs", "tokens/s",
                      "tokens/s per $1k", "price x", "speed x"], rows, fmt))
    claims = [row for row in r["rows"] if row.get("article")]
    if claims:
        out.append("\nThe article's claims beside the estimates (see docs/article.md):" + ("\n" if fmt == "markdown" else ""))
        out.append(grid(["GPU", "article price", "our price", "article TFLOPs", "article tokens/s", "our estimate"],
                         [[row["gpu"], usd(row["article"]["price_usd"]), usd(row["price_usd"]),
                           row["article"]["fp16_tflops"], tokens(row["article"]["tokens_per_s"]),
                           tokens(row["tokens_per_s"])] for row in claims], fmt))
    ruled = [(row["gpu"], f) for row in r["rows"] for f in row.get("rules", [])]
    if ruled:
        out.append(f"\nRules in a {r['deployment']}:")
        out += [f"  {gid}: [{f['rule']}] {f['message']}" for gid, f in ruled]
    sources = [(row["gpu"], row["price_source"], row["price_as_of"]) for row in r["rows"] if row["price_source"]]
    if sources:
        out.append("\nPrice sources:")
        out += [f"  {gid}: {src} ({date})" for gid, src, date in sources]
    return "\n".join(out) + "\n"


def crossover_text(x: dict, fmt: str = "table") -> str:
    out = [para(f"{x['tokens']} tokens, at most {x['max_gpus']} GPUs, {x['deployment']}, among {', '.join(x['gpus'])}")]
    rows = []
    for p in x["points"]:
        rows.append([p["model"], f"{p['params'] / 1e9:.3g}B", p["cheapest"] or "no plan", usd(p["total_cost_usd"]),
                     usd(p["focus_cost_usd"]), p[f"{x['focus']}_min_gpus"] or "n/a", p["factor_text"] or "-"])
    out.append(grid(["model", "params", "cheapest", "cost", f"{x['focus']} cost", f"{x['focus']} GPUs needed",
                      f"why not {x['focus']}"], rows, fmt))
    if x["crossover_model"]:
        out.append(f"\n{x['focus']} stops being the cheapest at {x['crossover_model']}.")
    return "\n".join(out) + "\n"


def serve_estimate_text(e: dict) -> str:
    """`advisor estimate --kind serve` as text (or the preset list with --list-models)."""
    if "models" in e:
        rows = [[m["id"], f"{m['params'] / 1e9:.3g}B", f"{m['active_params'] / 1e9:.3g}B", m["layers"], m["hidden"],
                 f"{m['heads']}/{m['kv_heads']}", m.get("experts") or "-", ", ".join(s["id"] for s in m["sources"])]
                for m in e["models"]]
        return grid(["preset", "params", "active", "layers", "hidden", "heads/kv", "experts", "sources"], rows) + "\n"
    head = (f"{e['gpu']} x{e['gpu_count']}: {e['model']} at {e['precision']}, {e['input_len']} in / "
            f"{e['output_len']} out tokens, engine {e['engine']}")
    if not e["fits"]:
        return f"{head}\ndoes not run: {e['reason']}\n"
    slo = e["slo"]
    limits = (f"p{slo['percentile']:g} TTFT <= {slo['ttft_ms']} ms, TPOT <= {slo['tpot_ms']} ms" if slo
              else "no latency limit (offline peak)")
    out = [head, f"  {limits}",
           table(["output tok/s", "requests/s", "replicas", "TP", "TTFT ms", "TPOT ms", "batch", "max batch",
                  "KV GB/GPU", "limited by"],
                 [[tokens(e["output_tokens_per_s"]), f"{e['requests_per_s']:.3g}", e["replicas"],
                   e["tensor_parallel"], f"{e['ttft_ms']:.0f}", f"{e['tpot_ms']:.1f}", f"{e['batch_per_replica']:.0f}",
                   e["max_batch"], f"{e['kv_cache_gb_per_gpu']:.1f}", e["limited_by"]]])]
    return "\n".join(out) + "\n"


def serving_lines(p: dict, fmt: str = "table") -> list[str]:
    """The plan's serving replicas: rate per replica, latency at peak, what limits it; the mix's saving."""
    if not p.get("serving"):
        return []
    rows = [[r["name"], r["gpu"], f"TP{r['tensor_parallel']}" + (f"xPP{r['pipeline_parallel']}" if r["pipeline_parallel"] > 1
                                                                  else ""),
             r["replicas"], r["ownership"], f"{r['requests_per_s_per_replica']:.3g}", f"{r['ttft_ms']:.0f}",
             f"{r['tpot_ms']:.1f}", r["limited_by"]] for r in p["serving"]]
    out = [_heading("Serving (latency at peak traffic, p%g)" % p["serving"][0]["slo"]["percentile"], fmt),
           grid(["class", "GPU", "layout", "replicas", "", "req/s each", "TTFT ms", "TPOT ms", "limited by"], rows, fmt,
                wrap=(8,))]
    out += [_line(f"{r['name']} on {r['gpu']}: {r['shared_with_training']}", fmt)
            for r in p["serving"] if r.get("shared_with_training")]
    if (p.get("serving_mix") or {}).get("message"):
        out.append(_line(p["serving_mix"]["message"], fmt))
    return out
