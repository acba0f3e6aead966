"""Text, Markdown and CSV views of estimates, frontiers, comparisons and crossovers. Library output
is data (dicts); this only lays it out (present/grid.py draws the tables; present/plan_text.py the plan)."""

from __future__ import annotations

from advisor.durations import duration
from advisor.present.grid import csv_text, grid, para, prose, table
from advisor.present.words import tokens, usd


def model_shape(m: dict) -> str:
    """'0.124B params, 12 layers, hidden 768, sequence 2048': what an estimate was made for."""
    return f"{m['params'] / 1e9:.3g}B params, {m['layers']} layers, hidden {m['hidden']}, sequence {m['seq_len']}"


# a step's parts beyond the model's own, by cause: a column where the estimate has one
STEP_CAUSES = {
    "held_to_mfu_ceiling_s": "held to MFU s",
    "datasheet_derating_s": "derating s",
    "measured_adjustment_s": "measured s",
}


def estimate_text(e: dict) -> str:
    m = e["model"]
    out = [para(f"{e['gpu']} x{e['gpu_count']}: model {model_shape(m)}")]
    if not e["fits"]:
        out.append(para(f"does not run: {e['reason']}"))
        if e.get("min_gpus"):
            out.append(para(f"minimum GPUs that fit: {e['min_gpus']}"))
        return "\n".join(out) + "\n"
    sb = e["step_breakdown"]
    lay = e["layout"]
    out.append(
        table(
            ["tokens/s", "per GPU", "MFU", "GB/GPU", "limited by"],
            [
                [
                    tokens(e["tokens_per_s"]),
                    tokens(e["tokens_per_s_per_gpu"]),
                    f"{100 * e['mfu']:.1f}%",
                    f"{e['memory_per_gpu_gb']:.1f}",
                    e["binding"],
                ]
            ],
        )
    )
    split = "".join(
        f" x {k[0].upper()}P{lay[k + '_parallel']}"
        for k in ("data", "tensor", "pipeline", "context")
        if lay.get(k + "_parallel", 1) > 1
    )
    causes = [k for k in STEP_CAUSES if sb.get(k)]  # what the speed adds to the model's parts (perf/step_parts.py)
    out.append(
        table(
            ["step: compute s", "memory s", "comm s", *(STEP_CAUSES[k] for k in causes)]
            + ["layout", "micro-batch", "checkpointing", "link"],
            [
                [
                    f"{sb['compute_s']:.4f}",
                    f"{sb['memory_s']:.4f}",
                    f"{sb['comm_s']:.4f}",
                    *(f"{sb[k]:+.4f}" for k in causes),
                    lay["strategy"] + split,
                    lay["micro_batch"],
                    lay["checkpointing"],
                    lay["interconnect"],
                ]
            ],
        )
    )
    out.append(
        para(
            f"global batch: {lay['global_batch_tokens']:,.0f} tokens of sequence {m['seq_len']:,}"
            + (" (raised to feed every GPU)" if lay.get("batch_changed") else ""),
            "  ",
            "    ",
        )
    )
    band = e.get("accuracy_band")
    if band:
        out.append(
            para(
                f"measured error for {band['generation']} GPUs (leave-one-source-out): MAPE "
                f"{100 * band['mape']:.1f}%, worst {100 * band['worst']:.1f}% over {band['n']} runs",
                "  ",
                "    ",
            )
        )
    out.append(f"  minimum GPUs that fit: {e['min_gpus']}")
    out += [para(f"note: {note}", "  ", "        ") for note in e["notes"]]
    return "\n".join(out) + "\n"


def _frontier_rows(f: dict) -> list[list]:
    return [
        [
            duration(pt["makespan_days"] * 24, short=True),
            usd(pt["total_cost_usd"]),
            ", ".join(f"{i['count']}× {i['gpu']} ({i['ownership']})" for i in pt["purchase"]),
        ]
        for pt in f["points"]
    ]


def frontier_text(f: dict, fmt: str = "table") -> str:
    if fmt == "csv":
        return csv_text(
            ["makespan_days", "total_cost_usd", "plan"],
            [[pt["makespan_days"], pt["total_cost_usd"], row[2]] for pt, row in zip(f["points"], _frontier_rows(f))],
        )
    out = [
        prose(f"Cost versus time{': ' + f['name'] if f.get('name') else ''}  (prices as of {f['as_of']})", fmt)
        + ("\n" if fmt == "markdown" else "")
    ]
    if not f["points"]:
        out.append("no feasible plan at any makespan")
        return "\n".join(out) + "\n"
    out.append(grid(["time", "present value", "plan"], _frontier_rows(f), fmt, wrap=(2,)))
    return "\n".join(out) + "\n"


def _ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}x"


def _subheading(text: str, fmt: str) -> str:
    """A line of prose above a table or list, set apart in markdown by a blank line."""
    return prose(text, fmt) + ("\n" if fmt == "markdown" else "")


def _price_cell(row: dict) -> str:
    """'$9,000 used': a price not for a new part says so beside new ones (a --price: as quoted)."""
    condition = row.get("price_condition")
    return usd(row["price_usd"]) + (f" {condition}" if condition not in (None, "new") else "")


def _compare_cells(row: dict) -> list:
    """One GPU of `advisor compare` as table cells: price, TFLOPs, memory, links, speed, ratios."""
    tflops = f"{row['dense_tflops']:g}" if row["dense_tflops"] else "n/a"
    if row["fp16_fp16acc_tflops"]:
        tflops += f" ({row['fp16_fp16acc_tflops']:g} FP16-acc)"
    link = "none" if row["link"] == "none" else f"{row['link']} {row['link_gbps']:g} GB/s"
    link += "" if row["p2p"] else (", no P2P" if row["p2p"] is False else ", P2P unknown")
    return [
        row["gpu"],
        _price_cell(row),
        tflops,
        f"{row['memory_gb']:g} GB",
        f"{row['memory_bandwidth_gbps']:g} GB/s",
        link,
        row["gpu_count"] or "n/a",
        tokens(row["tokens_per_s"]),
        tokens(row["tokens_per_s_per_1k_usd"]) if row["tokens_per_s_per_1k_usd"] else "n/a",
        _ratio(row["price_ratio"]),
        _ratio(row["speed_ratio"]),
    ]


def _compare_notes(r: dict, fmt: str) -> list[str]:
    """Below the comparison: the article's claims beside the estimates, what the rules say of each
    GPU in the deployment, and where each price comes from (each part only when there is one)."""
    out = []
    claims = [row for row in r["rows"] if row.get("article")]
    if claims:
        out.append("\n" + _subheading("The article's claims beside the estimates (see docs/article.md):", fmt))
        out.append(
            grid(
                ["GPU", "article price", "our price", "article TFLOPs", "article tokens/s", "our estimate"],
                [
                    [
                        row["gpu"],
                        usd(row["article"]["price_usd"]),
                        _price_cell(row),
                        row["article"]["fp16_tflops"],
                        tokens(row["article"]["tokens_per_s"]),
                        tokens(row["tokens_per_s"]),
                    ]
                    for row in claims
                ],
                fmt,
            )
        )
    ruled = [(row["gpu"], f) for row in r["rows"] for f in row.get("rules", [])]
    if ruled:
        out.append("\n" + _subheading(f"Rules in a {r['deployment']}:", fmt))
        out += [prose(f"{gid}: [{f['rule']}] {f['message']}", fmt, "  ", "    ") for gid, f in ruled]
    sources = [(row["gpu"], row["price_source"], row["price_as_of"]) for row in r["rows"] if row["price_source"]]
    if sources:
        out.append("\n" + _subheading("Price sources:", fmt))
        out += [prose(f"{gid}: {src} ({date})", fmt, "  ", "    ") for gid, src, date in sources]
    return out


def compare_text(r: dict, fmt: str = "table") -> str:
    """`advisor compare` as a table (text or markdown, with its notes) or CSV (the figures only)."""
    if fmt == "csv":
        keys = [
            "gpu",
            "price_usd",
            "price_condition",
            "dense_tflops",
            "memory_gb",
            "memory_bandwidth_gbps",
            "link",
            "link_gbps",
            "p2p",
            "gpu_count",
            "tokens_per_s",
            "tokens_per_s_per_1k_usd",
            "price_ratio",
            "speed_ratio",
        ]
        return csv_text(keys, [[row.get(k) for k in keys] for row in r["rows"]])
    m = r["model"]
    title = m["name"] or f"model {model_shape(m)}"  # a shape's defaults (sequence 2048) said, as estimate says them
    out = [
        _subheading(
            f"{title} ({r['precision']}), estimated on the fewest GPUs that hold it; prices as of {r['as_of']}", fmt
        )
    ]
    out.append(
        grid(
            [
                "GPU",
                "price",
                "dense TFLOPs",
                "memory",
                "bandwidth",
                "GPU-to-GPU",
                "GPUs",
                "tokens/s",
                "tokens/s per $1k",
                "price x",
                "speed x",
            ],
            [_compare_cells(row) for row in r["rows"]],
            fmt,
        )
    )
    return "\n".join(out + _compare_notes(r, fmt)) + "\n"


def crossover_text(x: dict, fmt: str = "table") -> str:
    out = [
        prose(
            f"{x['tokens']} tokens, at most {x['max_gpus']} GPUs, {x['deployment']}, among {', '.join(x['gpus'])}", fmt
        )
        + ("\n" if fmt == "markdown" else "")
    ]
    rows = []
    for p in x["points"]:
        rows.append(
            [
                p["model"],
                f"{p['params'] / 1e9:.3g}B",
                p["cheapest"] or "no plan",
                usd(p["total_cost_usd"]),
                usd(p["focus_cost_usd"]),
                p[f"{x['focus']}_min_gpus"] or "n/a",
                p["factor_text"] or "-",
            ]
        )
    out.append(
        grid(
            [
                "model",
                "params",
                "cheapest",
                "cost",
                f"{x['focus']} cost",
                f"{x['focus']} GPUs needed",
                f"why not {x['focus']}",
            ],
            rows,
            fmt,
        )
    )
    out.append("\n" + prose(crossover_headline(x), fmt))
    return "\n".join(out) + "\n"


def crossover_headline(x: dict) -> str:
    """Where the focus GPU stops being the cheapest -- only when it was the cheapest before and another
    GPU's plan takes over; otherwise what did happen (never the cheapest, or no plan from some size on)."""
    focus, points = x["focus"], x["points"]
    at = next((i for i, pt in enumerate(points) if pt["model"] == x["crossover_model"]), None)
    won = [pt["model"] for pt in points[:at] if pt["cheapest"] == focus] if at is not None else []
    if at is None:
        return f"{focus} is the cheapest at every size tried." if points else "No model was tried."
    if not won:
        return f"{focus} is not the cheapest at any size tried."
    if points[at]["cheapest"] is None:
        return (
            f"{focus} is the cheapest up to {won[-1]}; from {points[at]['model']} on, no plan of any allowed "
            "GPU meets the limits."
        )
    return f"{focus} stops being the cheapest at {points[at]['model']}, where {points[at]['cheapest']} takes over."


def serve_estimate_text(e: dict) -> str:
    """`advisor estimate --kind serve` as text (or the preset list with --list-models)."""
    if "models" in e:
        rows = [
            [
                m["id"],
                f"{m['params'] / 1e9:.3g}B",
                f"{m['active_params'] / 1e9:.3g}B",
                m["layers"],
                m["hidden"],
                f"{m['heads']}/{m['kv_heads']}",
                m.get("experts") or "-",
                ", ".join(s["id"] for s in m["sources"]),
            ]
            for m in e["models"]
        ]
        return grid(["preset", "params", "active", "layers", "hidden", "heads/kv", "experts", "sources"], rows) + "\n"
    head = (
        f"{e['gpu']} x{e['gpu_count']}: {e['model']} at {e['precision']}, {e['input_len']} in / "
        f"{e['output_len']} out tokens, engine {e['engine']}"
    )
    notes = [para(f"note: {w['message']}", "  ", "        ") for w in e.get("warnings", [])]  # a precision not run
    if not e["fits"]:
        return "\n".join([para(head), para("does not run: " + e["reason"]), *notes]) + "\n"
    slo = e["slo"]
    held = [
        f"{what} <= {slo[key]:g} ms"
        for what, key in (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"))
        if slo and slo.get(key) is not None
    ]
    limits = f"p{slo['percentile']:g} {' and '.join(held)}" if held else "no latency limit (offline peak)"
    out = [
        para(head),
        para(limits, "  ", "    "),
        table(
            [
                "output tok/s",
                "requests/s",
                "replicas",
                "TP",
                "TTFT ms",
                "TPOT ms",
                "batch",
                "max batch",
                "KV GB/GPU",
                "limited by",
            ],
            [
                [
                    tokens(e["output_tokens_per_s"]),
                    f"{e['requests_per_s']:.3g}",
                    e["replicas"],
                    e["tensor_parallel"],
                    f"{e['ttft_ms']:.0f}",
                    f"{e['tpot_ms']:.1f}",
                    f"{e['batch_per_replica']:.0f}",
                    e["max_batch"],
                    f"{e['kv_cache_gb_per_gpu']:.1f}",
                    e["limited_by"],
                ]
            ],
        ),
        *notes,
    ]
    return "\n".join(out) + "\n"
