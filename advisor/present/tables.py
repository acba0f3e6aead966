"""Plain-text tables for the terminal. Library output is data (dicts); this only lays it out."""
from __future__ import annotations

from advisor.present.escape import md
from advisor.present.words import tokens, unproven, usd


def table(headers: list[str], rows: list[list], indent: str = "  ") -> str:
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append(indent + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
        if n == 0:
            lines.append(indent + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


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


def plan_text(p: dict, *, verbose: bool = False) -> str:
    """The plan as terminal tables; GPUs not chosen for the same primary reason share a row,
    and verbose lists every reason of every GPU."""
    out = []
    a = p["assumptions"]
    title = p.get("name") or "GPU plan"
    caveat = unproven(p)
    out.append(f"{title}  ({a['deployment']}, region {a['region']}, prices as of {p['as_of']})"
               + (f"  [{caveat}]" if caveat else ""))
    solver = p["solver"]
    if p["status"] == "infeasible":
        out.append("Status: NO FEASIBLE PLAN")
    else:
        limit = solver.get("gap_limit") or 0.0
        proof = ((f"proven within {100 * limit:g}% of optimal" if limit > 1e-4 else "proven optimal")
                 if solver.get("proven_optimal") else f"best found, gap {solver.get('gap')}")
        out.append(f"Status: {p['status']} ({solver.get('name')}, {proof})   "
                   f"Total cost over {a['horizon_months']:g} months: {usd(p['total_cost_usd'])}"
                   + _span(p.get("total_cost_usd_range"), usd))
        if p.get("confidence"):
            out.append(f"Deadlines held at {p['confidence']['quantile']} of each job's time; ranges are P10–P90")
    if p["purchase"]:
        out.append("\nBuy / rent")
        rows = []
        for item in p["purchase"]:
            if item["ownership"] == "buy":
                rows.append([item["gpu"], item["count"], "buy", usd(item["unit_price_usd"]) + " each", ""])
            else:
                rows.append([item["gpu"], item["count"], "rent", f"${item['unit_price_usd']:.2f}/GPU-hour",
                             f"{item['gpu_hours']:,.0f} GPU-hours ({item.get('provider', '')})"])
        for srv in p.get("servers", []):
            rows.append([srv["server"], srv["count"], "buy", usd(srv["unit_price_usd"]) + " each",
                         f"holds {srv['gpu']}" + (f", {srv['networked']} networked" if srv["networked"] else "")])
        out.append(table(["item", "count", "", "price", "usage"], rows))
        cb = p["cost_breakdown"]
        out.append("\nCost breakdown")
        out.append(table(["purchase", "servers", "energy", "hosting", "rental", "total"],
                         [[usd(cb["purchase_usd"]), usd(cb["servers_usd"]), usd(cb["energy_usd"]),
                           usd(cb["hosting_usd"]), usd(cb["rental_usd"]), usd(p["total_cost_usd"])]]))
        if p.get("cost_breakdown_pv"):
            a = p["assumptions"]
            out.append(f"  total = present value at {100 * (a.get('discount_rate') or 0):.1f}%/year, what the plan minimises; "
                       f"the columns are undiscounted. Resale of bought GPUs after {a['horizon_months']:g} months: "
                       f"{usd(p.get('residual_value_usd') or 0)}; paid less resale, undiscounted: {usd(p.get('nominal_cost_usd'))}")
    if p["jobs"]:
        out.append("\nJobs")
        rows = [[j["name"], j["gpu"], j["gpu_count"], tokens(j["tokens_per_s"]),
                 f"{j['wall_days']:.2f}" + _span(j.get("wall_days_range"), lambda v: f"{v:.2f}"),
                 f"{j['memory_per_gpu_gb']:.1f}", f"{100 * j['mfu']:.0f}%", j["binding_factor"]] for j in p["jobs"]]
        out.append(table(["job", "GPU", "GPUs", "tokens/s", "days", "GB/GPU", "MFU", "limited by"], rows))
        for j in p["jobs"]:
            lay, g = j.get("layout") or {}, j.get("goodput") or {}
            split = " x ".join(f"{k[0].upper()}P{lay[k + '_parallel']}" for k in ("data", "tensor", "pipeline", "context")
                               if lay.get(k + "_parallel", 1) > 1) or "one GPU"
            line = f"  {j['name']}: layout {split}, global batch {lay.get('global_batch_tokens', 0):,.0f} tokens"
            if g:
                line += (f"; goodput {100 * g['fraction']:.1f}%: {24 * g['lost_days']:,.1f} h of the "
                         f"{24 * j['wall_days']:,.1f} h lost to failures, restarts and checkpoints")
            out.append(line)
    out += serving_lines(p)
    if p["binding"]:
        out.append("\nConstraints")
        rows = [[b["constraint"], "BINDING" if b["binding"] else f"slack {b['slack']:,.2f} {b['unit']}", b["message"]]
                for b in p["binding"]]
        out.append(table(["constraint", "status", "detail"], rows))
    sens = p.get("sensitivity") or {}
    if sens.get("break_even") or sens.get("marginal") or sens.get("traffic") or p.get("break_even_months"):
        out.append("\nSensitivity")
        for item in (sens.get("break_even", []) + sens.get("speed", []) + sens.get("marginal", [])
                     + sens.get("traffic", []) + (p.get("break_even_months") or [])):
            out.append(f"  {item['message']}")
    if p.get("robustness"):
        out.append(f"\nRobustness: {p['robustness']['message']}")
    if p["rejected"]:
        out.append("\nNot chosen" + ("" if verbose else " (primary reason; --verbose for all)"))
        out.append(table(["GPU", "why", "detail"], not_chosen_rows(p["rejected"], verbose)))
    if p["diagnosis"]:
        out.append("\nWhy no plan exists")
        need = [d for d in p["diagnosis"] if d.get("kind") == "shortfall"]
        fixes = [d for d in p["diagnosis"] if d.get("kind") != "shortfall"]
        if need:
            out.append(table(["shortfall", "detail"], [[d["constraint"].partition(":")[2] or d["constraint"],
                                                        d["message"]] for d in need]))
        out.append(table(["change", "detail"], [[d["constraint"], d["message"]] for d in fixes]))
    if p["warnings"]:
        out.append("\nWarnings")
        for w in p["warnings"]:
            tag = w.get("rule") or w.get("code") or "note"
            out.append(f"  [{tag}] {w['message']}")
    out.append(f"\nSources: {len(p['sources'])} cited (see --format json); catalog {p['catalog_digest']}, "
               f"gpu-advisor {p['tool_version']}")
    return "\n".join(out) + "\n"


def _span(r: dict | None, fmt) -> str:
    """' (P10–P90)' beside a point value, e.g. '18.9 (15.7–23.4)'."""
    return f" ({fmt(r['p10'])}–{fmt(r['p90'])})" if r else ""


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
    split = "".join(f" x {k[0].upper()}P{lay[k + '_parallel']}" for k in ("data", "tensor", "pipeline", "context")
                    if lay.get(k + "_parallel", 1) > 1)
    out.append(table(["step: compute s", "memory s", "comm s", "layout", "micro-batch", "checkpointing", "link"],
                     [[f"{sb['compute_s']:.4f}", f"{sb['memory_s']:.4f}", f"{sb['comm_s']:.4f}",
                       lay["strategy"] + split,
                       lay["micro_batch"], lay["checkpointing"], lay["interconnect"]]]))
    out.append(f"  global batch: {lay['global_batch_tokens']:,.0f} tokens of sequence {m['seq_len']:,}"
               + (" (raised to feed every GPU)" if lay.get("batch_changed") else ""))
    band = e.get("accuracy_band")
    if band:
        out.append(f"  measured error for {band['generation']} GPUs (leave-one-source-out): MAPE "
                   f"{100 * band['mape']:.1f}%, worst {100 * band['worst']:.1f}% over {band['n']} runs")
    out.append(f"  minimum GPUs that fit: {e['min_gpus']}")
    for note in e["notes"]:
        out.append(f"  note: {note}")
    return "\n".join(out) + "\n"


def frontier_text(f: dict) -> str:
    out = [f"Cost versus time{': ' + f['name'] if f.get('name') else ''}  (prices as of {f['as_of']})"]
    if not f["points"]:
        out.append("no feasible plan at any makespan")
        return "\n".join(out) + "\n"
    rows = []
    for pt in f["points"]:
        what = ", ".join(f"{i['count']}x {i['gpu']} ({i['ownership']})" for i in pt["purchase"])
        rows.append([f"{pt['makespan_days']:.2f}", usd(pt["total_cost_usd"]), what])
    out.append(table(["days", "total cost", "plan"], rows))
    return "\n".join(out) + "\n"


def _grid(headers, rows, fmt):
    if fmt == "markdown":
        lines = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join("" if v is None else md(v) for v in row) + " |" for row in rows]
        return "\n".join(lines)
    return table(headers, rows)


def _ratio(x):
    return "n/a" if x is None else f"{x:.2f}x"


def compare_text(r: dict, fmt: str = "table") -> str:
    m = r["model"]
    title = m["name"] or f"{m['params'] / 1e9:.3g}B parameters"
    out = [f"{title} ({r['precision']}), estimated on the fewest GPUs that hold it; prices as of {r['as_of']}"]
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
    out.append(_grid(["GPU", "price", "dense TFLOPs", "memory", "bandwidth", "GPU-to-GPU", "GPUs", "tokens/s",
                      "tokens/s per $1k", "price x", "speed x"], rows, fmt))
    claims = [row for row in r["rows"] if row.get("article")]
    if claims:
        out.append("\nThe article's claims beside the estimates (see docs/article.md):" + ("\n" if fmt == "markdown" else ""))
        out.append(_grid(["GPU", "article price", "our price", "article TFLOPs", "article tokens/s", "our estimate"],
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
    out = [f"{x['tokens']} tokens, at most {x['max_gpus']} GPUs, {x['deployment']}, among {', '.join(x['gpus'])}"]
    rows = []
    for p in x["points"]:
        rows.append([p["model"], f"{p['params'] / 1e9:.3g}B", p["cheapest"] or "no plan", usd(p["total_cost_usd"]),
                     usd(p["focus_cost_usd"]), p[f"{x['focus']}_min_gpus"] or "n/a", p["factor_text"] or "-"])
    out.append(_grid(["model", "params", "cheapest", "cost", f"{x['focus']} cost", f"{x['focus']} GPUs needed",
                      f"why not {x['focus']}"], rows, fmt))
    if x["crossover_model"]:
        out.append(f"\n{x['focus']} stops being the cheapest at {x['crossover_model']}.")
    return "\n".join(out) + "\n"

# ----------------------------------------------------------------------------- catalog commands


def _num(v, unit: str = "") -> str:
    if v is None:
        return "unknown"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    text = f"{v:,.0f}" if float(v).is_integer() and abs(v) >= 1000 else f"{v:g}"
    return f"{text} {unit}".rstrip() if unit not in ("date", "yes/no") else text


def _age(d: dict | None) -> str:
    """'2023-08, 40 mo STALE' for a dated price; 'undated' otherwise."""
    if d is None:
        return ""
    if d.get("age_months") is None:
        return "undated"
    return f"{d['as_of']}, {d['age_months']} mo" + (" STALE" if d["stale"] else "")


def catalog_list_text(data: dict) -> str:
    out = [f"GPUs ({len(data['gpus'])}); prices as of {data['as_of']}, STALE = older than "
           f"{data['stale_after_months']} months"]
    rows = []
    for g in data["gpus"]:
        p, r = g["purchase"], g["rent"]
        rows.append([g["id"], g["product_class"], g["form_factor"], _num(g["memory_gb"]), _num(g["bf16_tflops"]),
                     _num(g["tdp_w"]),
                     f"{usd(p['usd'])} ({_age(p)})" if p else "-",
                     f"${r['usd_per_gpu_hour']:.2f}/h ({_age(r)})" if r else "-",
                     g["availability"]])
    out.append(table(["id", "class", "form", "GB", "bf16 TFLOPS", "TDP W", "buy (price as of, age)",
                      "rent on demand (as of, age)", "availability"], rows))
    out.append(f"\nServers ({len(data['servers'])}): what bought GPUs go into; prices without GPUs")
    rows = []
    for s in data["servers"]:
        p = s["purchase"]
        rows.append([s["id"], s["kind"], f"{s['gpu_slots']} x {s['gpu_form_factor']}", ", ".join(s["contexts"]),
                     f"{usd(p['usd'])} ({_age(p)})" if p else "unknown", _num(s["power_overhead_w"]),
                     usd(s["network_usd_per_server"]) if s["network_usd_per_server"] is not None else "unknown"])
    out.append(table(["id", "kind", "GPUs", "contexts", "price (as of, age)", "overhead W", "network $"], rows))
    out.append("\n`advisor catalog show ID` prints every figure of one entry with its sources.")
    return "\n".join(out) + "\n"


def catalog_show_text(rec: dict) -> str:
    if rec["type"] == "gpu":
        out = [f"{rec['id']}  {rec['name']}",
               f"  {rec['vendor']}, {rec['architecture']}; {rec['product_class']}"
               + (f" ({rec['brand']})" if rec["brand"] else "") + f", {rec['form_factor']}",
               f"  Availability: {rec['availability_message']}"]
    else:
        out = [f"{rec['id']}  {rec['name']}",
               f"  {rec['kind']}: {rec['gpu_slots']} x {rec['gpu_form_factor']} GPUs; contexts: "
               f"{', '.join(rec['contexts'])}",
               f"  Takes: {', '.join(rec['takes']) or 'no GPU in the catalog'}"]
    if rec["note"]:
        out.append(f"  Note: {rec['note']}")
    cited: dict[str, dict] = {}

    def ids(sources: list[dict]) -> str:
        for s in sources:
            cited.setdefault(s["id"], s)
        return "[" + ", ".join(s["id"] for s in sources) + "]" if sources else "[no source]"

    out.append("\nFigures")
    width = max(len(f["field"]) for f in rec["figures"])
    for f in rec["figures"]:
        out.append(f"  {f['field'].ljust(width)}  {_num(f['value'], f['unit']).ljust(16)}  {ids(f['sources'])}")
        if f["note"]:
            out.append(f"  {' ' * width}    note: {f['note']}")
    out.append(f"\nPrices (ages as of {rec['as_of']}; STALE = older than {rec['stale_after_months']} months)")
    p = rec["prices"]["purchase"]
    if p is None or p["usd"] is None:
        out.append(f"  buy   unknown  {ids(p['sources']) if p else ''}")
    else:
        kind = f" {p['kind']}" if p["kind"] else ""
        exact = f"${p['usd']:,.2f}" if p["usd"] % 1 else usd(p["usd"])   # the catalog's figure as written
        out.append(f"  buy   {exact}{kind} ({_age(p)})  {ids(p['sources'])}")
    if p and p["note"]:
        out.append(f"        note: {p['note']}")
    if rec["type"] == "gpu":
        if not rec["prices"]["rent"]:
            out.append("  rent  no sourced rental rate")
        for o in rec["prices"]["rent"]:
            used = "  <- used for plans" if o["used_for_plans"] else ""
            out.append(f"  rent  ${o['usd_per_gpu_hour']:.3g}/GPU-hour {o['pricing']}, {o['provider']} "
                       f"({_age(o)})  {ids(o['sources'])}{used}")
            if o["note"]:
                out.append(f"        note: {o['note']}")
        servers = "; ".join(f"{ctx}: {', '.join(v) or 'none'}" for ctx, v in rec["servers"].items())
        out.append(f"\nServers that take it  {servers}")
    out.append("\nSources")
    rows = [[sid, s["url"] or "(not in the sources table)"] for sid, s in sorted(cited.items())]
    out.append(table(["id", "url"], rows))
    return "\n".join(out) + "\n"


def catalog_validate_text(s: dict) -> str:
    a = s["availability"]
    return (f"{s['file']}: valid. {s['gpus']} GPUs, {s['servers']} servers, {s['models']} model presets, "
            f"{s['assumptions']} assumptions; {s['figures']} figures ({s['unknown']} unknown, each with a note; "
            f"{s['derived']} derived), citing {s['sources_cited']} of {s['sources']} sources, every one resolved.\n"
            f"GPUs: {a['buy and rent']} buy and rent, {a['buy only']} buy only, {a['rent only']} rent only, "
            f"{a['neither']} neither. Digest {s['digest']}.\n"
            + _kinds_text(s))


def _kinds_text(s: dict) -> str:
    if "sources_by_kind" not in s:
        return ""
    kinds = ", ".join(f"{n} {k}" for k, n in s["sources_by_kind"].items())
    conf = ", ".join(f"{n} {k}" for k, n in s["prices_by_confidence"].items())
    return (f"Sources by kind: {kinds}; {s['sources_without_kind']} without a kind.\n"
            f"Prices: {s['prices']} ({conf} confidence; {s['prices_tertiary_only']} resting only on tertiary "
            f"sources, each marked low). Economics: {s['economics_figures']} figures.\n")

# ----------------------------------------------------------------------------- rules commands


_VERB = {"forbid": "Forbids an option when", "warn": "Warns (keeps the option) when",
         "limit": "Sets a deployment-wide limit when"}


def rules_list_text(data: dict) -> str:
    rows = [[r["id"], r["severity"], "yes" if r["in_force"] else "no", r["effective"], r["title"]]
            for r in data["rules"]]
    out = [f"Rules ({len(data['rules'])}), in force as of {data['as_of']}",
           table(["id", "severity", "in force", "effective", "title"], rows),
           "\n`advisor rules show ID` prints what a rule does, why, an example and its source."]
    return "\n".join(out) + "\n"


def rules_show_text(r: dict) -> str:
    import textwrap

    def para(text: str) -> list[str]:
        return textwrap.wrap(text, width=98, initial_indent="  ", subsequent_indent="  ",
                             break_on_hyphens=False, break_long_words=False) or ["  -"]

    eff = r["effective"]
    span = (f"from {eff['from']}" if eff["from"] else "") + (f" until {eff['until']}" if eff["until"] else "")
    state = "in force" if r["in_force"] else "NOT in force"
    out = [f"{r['id']} ({r['name']}): {r['severity']}, {state} as of {r['as_of']}"
           + (f" (effective {span.strip()})" if span else ""),
           f"  {r['title']}", f"  Defined in {r['file']}", "", "What it does"]
    verb = _VERB[r["severity"]]
    out += para(f"{verb}: {r['condition']}.")
    if r["effect"]:
        out += para(f"Effect: {r['effect']['limit']} = {r['effect']['value']:g} (a workload's own setting "
                    "overrides it).")
    out += para(f"Message: {r['message']}")
    out += ["", "Why"] + para(r["why"])
    if r["example"]:
        out += ["", "Example"] + para(r["example"])
    src = r["source"]
    out += ["", "Source", f"  {src['title']}", f"  {src['url']}"]
    if src["clause"]:
        out += para(f'"{src["clause"]}"')
    for extra in src["also"]:
        out += textwrap.wrap(extra, width=98, initial_indent="  also: ", subsequent_indent="        ",
                             break_on_hyphens=False, break_long_words=False)
    for name, values in r["lists"].items():
        out += ["", f"List {name} ({len(values)})"] + para(", ".join(str(v) for v in values))
    return "\n".join(out) + "\n"


def serve_estimate_text(e: dict) -> str:
    """`advisor estimate --kind serve` as text (or the preset list with --list-models)."""
    if "models" in e:
        rows = [[m["id"], f"{m['params'] / 1e9:.3g}B", f"{m['active_params'] / 1e9:.3g}B", m["layers"], m["hidden"],
                 f"{m['heads']}/{m['kv_heads']}", m.get("experts") or "-", ", ".join(s["id"] for s in m["sources"])]
                for m in e["models"]]
        return table(["preset", "params", "active", "layers", "hidden", "heads/kv", "experts", "sources"], rows) + "\n"
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


def serving_lines(p: dict) -> list[str]:
    """The plan's serving replicas: rate per replica, latency at peak, what limits it; the mix's saving."""
    if not p.get("serving"):
        return []
    rows = [[r["name"], r["gpu"], f"TP{r['tensor_parallel']}" + (f"xPP{r['pipeline_parallel']}" if r["pipeline_parallel"] > 1
                                                                  else ""),
             r["replicas"], r["ownership"], f"{r['requests_per_s_per_replica']:.3g}", f"{r['ttft_ms']:.0f}",
             f"{r['tpot_ms']:.1f}", r["limited_by"]] for r in p["serving"]]
    out = ["\nServing (latency at peak traffic, p%g)" % p["serving"][0]["slo"]["percentile"],
           table(["class", "GPU", "layout", "replicas", "", "req/s each", "TTFT ms", "TPOT ms", "limited by"], rows)]
    out += [f"  {r['name']} on {r['gpu']}: {r['shared_with_training']}" for r in p["serving"] if r.get("shared_with_training")]
    if (p.get("serving_mix") or {}).get("message"):
        out.append(f"  {p['serving_mix']['message']}")
    return out
