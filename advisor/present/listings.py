"""Text, Markdown and CSV views of the catalog and the rules (`advisor catalog ...`, `advisor rules ...`)."""

from __future__ import annotations

from typing import Any

from advisor.present.grid import csv_text, grid, para, table
from advisor.present.words import usd

TEXT_WIDTH = 98  # `rules show` wraps its paragraphs to this width off a terminal

# ----------------------------------------------------------------------------- catalog commands


def _num(v: Any, unit: str = "") -> str:
    if v is None:
        return "unknown"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    if unit == "USD":
        return usd(v)
    text = f"{v:,.0f}" if float(v).is_integer() and abs(v) >= 1000 else f"{v:g}"
    return f"{text} {unit}".rstrip() if unit not in ("date", "yes/no") else text


def _age(d: dict | None, dated: bool = True) -> str:
    """'2023-08, 40 mo STALE' for a dated price ('40 mo STALE' without the date); 'undated' otherwise."""
    if d is None:
        return ""
    if d.get("age_months") is None:
        return "undated"
    return (f"{d['as_of']}, " if dated else "") + f"{d['age_months']} mo" + (" STALE" if d["stale"] else "")


def catalog_list_csv(data: dict) -> str:
    """One row per GPU, plain numbers: what a spreadsheet needs to sort and filter."""
    keys = ["id", "vendor", "product_class", "form_factor", "memory_gb", "bf16_tflops", "tdp_w", "availability"]
    rows = []
    for g in data["gpus"]:
        p, r = g["purchase"] or {}, g["rent"] or {}
        rows.append(
            [g.get(k) for k in keys] + [p.get("usd"), p.get("as_of"), r.get("usd_per_gpu_hour"), r.get("as_of")]
        )
    return csv_text(keys + ["buy_usd", "buy_as_of", "rent_usd_per_gpu_hour", "rent_as_of"], rows)


def catalog_list_text(data: dict, fmt: str = "table") -> str:
    """The GPUs and servers. A terminal gets each price's age (the dates are in --format markdown,
    json and csv, and `catalog show ID`), so that the table fits 80 columns."""
    if fmt == "csv":
        return catalog_list_csv(data)
    dated = fmt == "markdown"
    out = [
        para(
            f"GPUs ({len(data['gpus'])}); prices as of {data['as_of']}, "
            + ("" if dated else "ages in months, ")
            + f"STALE = older than {data['stale_after_months']} months"
        )
    ]
    rows = []
    for g in data["gpus"]:
        p, r = g["purchase"], g["rent"]
        rows.append(
            [
                g["id"],
                g["product_class"],
                g["form_factor"],
                _num(g["memory_gb"]),
                _num(g["bf16_tflops"]),
                _num(g["tdp_w"]),
                f"{usd(p['usd'])} ({_age(p, dated)})" if p else "-",
                f"${r['usd_per_gpu_hour']:.2f}/h ({_age(r, dated)})" if r else "-",
                g["availability"],
            ]
        )
    age = "as of, age" if dated else "age"
    out.append(
        grid(
            [
                "id",
                "class",
                "form",
                "GB",
                "bf16 TFLOPS",
                "TDP W",
                f"buy ({age})",
                f"rent on demand ({age})",
                "availability",
            ],
            rows,
            fmt,
            wrap=(6, 7, 8),
        )
    )
    out.append("\n" + para(f"Servers ({len(data['servers'])}): what bought GPUs go into; prices without GPUs"))
    rows = []
    for s in data["servers"]:
        p = s["purchase"]
        rows.append(
            [
                s["id"],
                s["kind"],
                f"{s['gpu_slots']} x {s['gpu_form_factor']}",
                ", ".join(s["contexts"]),
                f"{usd(p['usd'])} ({_age(p, dated)})" if p else "unknown",
                _num(s["power_overhead_w"]),
                usd(s["network_usd_per_server"]) if s["network_usd_per_server"] is not None else "unknown",
            ]
        )
    if data["servers"]:
        out.append(
            grid(
                ["id", "kind", "GPUs", "contexts", f"price ({age})", "overhead W", "network $"],
                rows,
                fmt,
                wrap=(1, 3, 4),
            )
        )
    out.append("\n" + para("`advisor catalog show ID` prints every figure of one entry with its sources and dates."))
    return "\n".join(out) + "\n"


def _line(text: str, indent: str = "  ", rest: str = "    ") -> str:
    return para(text, indent, rest)


def _cite(sources: list[dict], cited: dict[str, dict]) -> str:
    """The source ids of one figure, `[a, b]`, each remembered in `cited` for the Sources table."""
    for s in sources:
        cited.setdefault(s["id"], s)
    return "[" + ", ".join(s["id"] for s in sources) + "]" if sources else "[no source]"


def _show_heading(rec: dict) -> list[str]:
    """What the entry is: a GPU's vendor, class and availability; a server's slots, contexts and
    the GPUs it takes; its note."""
    if rec["type"] == "gpu":
        out = [
            _line(f"{rec['id']}  {rec['name']}", ""),
            _line(
                f"{rec['vendor']}, {rec['architecture']}; {rec['product_class']}"
                + (f" ({rec['brand']})" if rec["brand"] else "")
                + f", {rec['form_factor']}"
            ),
            _line(f"Availability: {rec['availability_message']}"),
        ]
    else:
        out = [
            _line(f"{rec['id']}  {rec['name']}", ""),
            _line(
                f"{rec['kind']}: {rec['gpu_slots']} x {rec['gpu_form_factor']} GPUs; contexts: "
                f"{', '.join(rec['contexts'])}"
            ),
            _line(f"Takes: {', '.join(rec['takes']) or 'no GPU in the catalog'}"),
        ]
    if rec["note"]:
        out.append(_line(f"Note: {rec['note']}"))
    return out


def _figure_rows(rec: dict, cited: dict[str, dict]) -> list[list[str]]:
    """One row per figure (field, value with its unit, sources), its note beneath."""
    rows: list[list[str]] = []
    for f in rec["figures"]:
        rows.append([f["field"], _num(f["value"], f["unit"]), _cite(f["sources"], cited)])
        if f["note"]:
            rows.append(["", "", f"note: {f['note']}"])
    return rows


def _price_rows(rec: dict, cited: dict[str, dict]) -> list[list[str]]:
    """The purchase price (as the catalog writes it) and, for a GPU, each rental rate, with their
    ages, sources and notes."""
    rows = []
    p = rec["prices"]["purchase"]
    if p is None or p["usd"] is None:
        rows.append(["buy", "unknown", "", _cite(p["sources"], cited) if p else ""])
    else:
        kind = f" {p['kind']}" if p["kind"] else ""
        exact = f"${p['usd']:,.2f}" if p["usd"] % 1 else usd(p["usd"])  # the catalog's figure as written
        rows.append(["buy", f"{exact}{kind}", _age(p), _cite(p["sources"], cited)])
    if p and p["note"]:
        rows.append(["", "", "", f"note: {p['note']}"])
    if rec["type"] == "gpu":
        if not rec["prices"]["rent"]:
            rows.append(["rent", "no sourced rental rate", "", ""])
        for o in rec["prices"]["rent"]:
            used = " (used for plans)" if o["used_for_plans"] else ""
            rows.append(
                [
                    "rent",
                    f"${o['usd_per_gpu_hour']:.3g}/GPU-hour {o['pricing']}, {o['provider']}{used}",
                    _age(o),
                    _cite(o["sources"], cited),
                ]
            )
            if o["note"]:
                rows.append(["", "", "", f"note: {o['note']}"])
            order = f"order: up to {o['evidenced_gpus']:,} GPUs {o['evidenced_where']} at this rate; more needs a quote"
            rows.append(["", "", "", order])
            rows.append(["", "", "", _at_once(o)])
    return rows


def _at_once(o: dict) -> str:
    """The most GPUs its rate is evidenced at over all the orders held at once (RentalOffer.provider_evidenced)."""
    if o["evidenced_at_once_gpus"] is None:
        return "at once: no limit over several orders published or seen"
    most, where = o["evidenced_at_once_gpus"], o["evidenced_at_once_where"]
    return f"at once: up to {most:,} GPUs over all orders held at once ({where}) at this rate; more needs a quote"


def catalog_show_text(rec: dict) -> str:
    """`advisor catalog show`: the entry, its figures and prices each with its sources, the servers
    that take a GPU, and the table of the sources cited."""
    out = _show_heading(rec)
    cited: dict[str, dict] = {}
    out += ["\nFigures", table(["figure", "value", "sources"], _figure_rows(rec, cited), wrap=(2,))]
    out.append(
        "\n" + para(f"Prices (ages as of {rec['as_of']}; STALE = older than {rec['stale_after_months']} months)")
    )
    out.append(table(["", "price", "as of, age", "sources"], _price_rows(rec, cited), wrap=(3, 1)))
    if rec["type"] == "gpu":
        servers = "; ".join(f"{ctx}: {', '.join(v) or 'none'}" for ctx, v in rec["servers"].items())
        out.append("\n" + _line(f"Servers that take it: {servers}", ""))
    out.append("\nSources")
    out.append(
        table(
            ["id", "url"],
            [[sid, s["url"] or "(not in the sources table)"] for sid, s in sorted(cited.items())],
            wrap=(1,),
        )
    )
    return "\n".join(out) + "\n"


def catalog_validate_text(s: dict) -> str:
    a = s["availability"]
    return (
        f"{s['file']}: valid. {s['gpus']} GPUs, {s['servers']} servers, {s['models']} model presets, "
        f"{s['assumptions']} assumptions; {s['figures']} figures ({s['unknown']} unknown, each with a note; "
        f"{s['derived']} derived), citing {s['sources_cited']} of {s['sources']} sources, every one resolved.\n"
        f"GPUs: {a['buy and rent']} buy and rent, {a['buy only']} buy only, {a['rent only']} rent only, "
        f"{a['neither']} neither. Digest {s['digest']}.\n" + _kinds_text(s)
    )


def _kinds_text(s: dict) -> str:
    if "sources_by_kind" not in s:
        return ""
    kinds = ", ".join(f"{n} {k}" for k, n in s["sources_by_kind"].items())
    conf = ", ".join(f"{n} {k}" for k, n in s["prices_by_confidence"].items())
    return (
        f"Sources by kind: {kinds}; {s['sources_without_kind']} without a kind.\n"
        f"Prices: {s['prices']} ({conf} confidence; {s['prices_tertiary_only']} resting only on tertiary "
        f"sources, each marked low). Economics: {s['economics_figures']} figures.\n"
    )


# ----------------------------------------------------------------------------- rules commands


_VERB = {
    "forbid": "Forbids an option when",
    "warn": "Warns (keeps the option) when",
    "limit": "Sets a deployment-wide limit when",
}


def rules_list_text(data: dict, fmt: str = "table") -> str:
    rows = [
        [r["id"], r["severity"], "yes" if r["in_force"] else "no", r["effective"], r["title"]] for r in data["rules"]
    ]
    if fmt == "csv":
        return csv_text(
            ["id", "severity", "in_force", "effective", "title", "source"],
            [[r["id"], r["severity"], r["in_force"], r["effective"], r["title"], r["source"]] for r in data["rules"]],
        )
    out = [
        para(f"Rules ({len(data['rules'])}), in force as of {data['as_of']}"),
        grid(["id", "severity", "in force", "effective", "title"], rows, fmt, wrap=(4,)),
        "\n" + para("`advisor rules show ID` prints what a rule does, why, an example and its source."),
    ]
    return "\n".join(out) + "\n"


def rules_show_text(r: dict) -> str:
    def block(text: str, indent: str = "  ", rest: str = "  ") -> list[str]:
        return para(text, indent, rest, default=TEXT_WIDTH).splitlines() or ["  -"]

    eff = r["effective"]
    span = (f"from {eff['from']}" if eff["from"] else "") + (f" until {eff['until']}" if eff["until"] else "")
    state = "in force" if r["in_force"] else "NOT in force"
    out = block(
        f"{r['id']} ({r['name']}): {r['severity']}, {state} as of {r['as_of']}"
        + (f" (effective {span.strip()})" if span else ""),
        "",
    )
    out += block(r["title"]) + block(f"Defined in {r['file']}") + ["", "What it does"]
    verb = _VERB[r["severity"]]
    out += block(f"{verb}: {r['condition']}.")
    if r["effect"]:
        out += block(
            f"Effect: {r['effect']['limit']} = {r['effect']['value']:g} (a workload's own setting overrides it)."
        )
    out += block(f"Message: {r['message']}")
    out += ["", "Why"] + block(r["why"])
    if r["example"]:
        out += ["", "Example"] + block(r["example"])
    src = r["source"]
    cite = src.get("url") or src.get("document") or f"quote from {src.get('by')}, {src.get('date')}"
    out += ["", "Source"] + block(src["title"]) + block(cite)
    if src["clause"]:
        out += block(f'"{src["clause"]}"')
    for extra in src["also"]:
        out += block(extra, "  also: ", "        ")
    for name, values in r["lists"].items():
        out += ["", f"List {name} ({len(values)})"] + block(", ".join(str(v) for v in values))
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- model presets


def models_text(data: dict, fmt: str = "table") -> str:
    """`advisor models`: one row per preset (fmt table, markdown, csv) or one preset in full ('show')."""
    keys = ["id", "params", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len"]
    if fmt == "csv":
        return csv_text(
            keys + ["sources"],
            [[m.get(k) for k in keys] + [" ".join(s["url"] or s["id"] for s in m["sources"])] for m in data["models"]],
        )
    if fmt == "show":
        m = data["models"][0]
        out = [para(f"{m['id']}  {m['params'] / 1e9:.3g}B parameters")]
        out += [f"  {k.ljust(8)}  {m[k]:,}" for k in keys[2:] if m.get(k) is not None]
        out.append("\nSources")
        out.append(table(["id", "url"], [[s["id"], s["url"] or s["title"]] for s in m["sources"]], wrap=(1,)))
        return "\n".join(out) + "\n"
    rows = [
        [
            m["id"],
            f"{m['params'] / 1e9:.3g}B",
            m["layers"],
            m["hidden"],
            m["seq_len"],
            ", ".join(s["id"] for s in m["sources"]),
        ]
        for m in data["models"]
    ]
    out = [
        para(f"Model presets ({len(rows)}): write `model: ID` in a workload or `--model ID`"),
        grid(["id", "params", "layers", "hidden", "seq_len", "sources"], rows, fmt, wrap=(5,)),
        "\n" + para("`advisor models show ID` prints a preset's figures with its source URLs."),
    ]
    return "\n".join(out) + "\n"
