"""Justification memo: the plan as a document a finance committee can read and anyone can
reproduce (Markdown, HTML or PDF, with charts and every source).

    import advisor
    wl = "examples/article-office.yaml"
    p = advisor.plan(advisor.load_workload(wl))
    advisor.memo(p, wl, fmt="html").write("memo.html")

The memo is built from the plan dict plus what the plan was made from (workload, catalog,
rules): `memo_context` gathers every figure as display text, Jinja2 templates in
advisor/templates/ lay it out, matplotlib draws the charts (imported only here), WeasyPrint
turns the HTML into PDF (optional extra `pdf`). Same input, catalog and rules -> identical
bytes: no clock is read, SVG ids come from a fixed hash salt, file metadata carry no dates.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from advisor import __version__
from advisor.errors import AdvisorError, InputError
from advisor.present.charts import rc_context as _rc
from advisor.present.charts import svg_text as _svg
from advisor.present.tables import usd

FORMATS = ("md", "html", "pdf")
SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".pdf": "pdf"}
PDF_HINT = ("PDF output needs WeasyPrint and its Pango libraries: pip install 'gpu-advisor[pdf]' "
            "(Debian/Ubuntu: apt-get install libpango-1.0-0 libpangoft2-1.0-0); "
            "or write HTML (-o memo.html) and print it from a browser")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
PRICE_KIND = {"msrp": "launch list price (MSRP)", "list": "list price", "street": "street price",
              "estimate": "analyst estimate", "quote": "quote"}
LIMITED_BY = {"compute": "matrix math (the GPU's compute rate)",
              "memory_bandwidth": "memory bandwidth (moving data in and out of GPU memory)",
              "interconnect": "GPU-to-GPU bandwidth (exchanging results between GPUs)",
              "none": "nothing measured"}
GLOSSARY = [
    ("Token", "a word piece of training text; the amount of training is counted in tokens"),
    ("Tokens/s", "training throughput: tokens processed per second by all the job's GPUs together"),
    ("MFU", "model FLOPs utilisation: the share of the GPUs' peak matrix-math rate that training "
            "actually uses"),
    ("GPU-hour", "one GPU used (or rented) for one hour"),
    ("PUE", "power usage effectiveness: a building's total power per unit of power the computers draw "
            "(1.58 means 58% extra for cooling and power conversion)"),
    ("Memory bandwidth", "how fast a GPU moves data between its memory and its compute units"),
    ("GPU-to-GPU bandwidth", "how fast GPUs exchange data when one job runs on several of them "
                             "(NVLink, PCIe or the network)"),
    ("Pareto front", "the plans for which no other plan is both cheaper and faster"),
    ("Break-even price", "the price at which the recommendation would change"),
    ("MILP", "mixed-integer linear program: the optimisation method that proves the plan is the "
             "cheapest of all the options considered"),
]


# ----------------------------------------------------------------------------- public API

@dataclass
class Memo:
    """A rendered memo: `content` (the .md, .html or .pdf bytes) and, for Markdown, the chart
    files its links point to (`attachments`: path relative to the memo's folder -> bytes)."""

    format: str
    content: bytes
    attachments: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        if self.format == "pdf":
            raise ValueError("a PDF memo is bytes; use .content")
        return self.content.decode("utf-8")

    def write(self, path: str | Path) -> list[Path]:
        """Write the memo to `path` and its attachments beside it; returns the files written."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.content)
        written = [path]
        for rel, data in sorted(self.attachments.items()):
            target = path.parent / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(target)
        return written


def format_for(path: str | Path, fmt: str | None = None) -> str:
    """The memo format: `fmt` if given, else from the file's suffix."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise InputError(f"memo format {fmt!r} is not one of {', '.join(FORMATS)}", field="format")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(f"cannot tell the memo format from {str(path)!r}: name the file .md, .html or .pdf, "
                         "or give --format md|html|pdf", field="output")
    return SUFFIXES[suffix]


def memo(plan: dict, workload=None, *, fmt: str = "md", catalog=None, rules=None, date: dt.date | None = None,
         charts: bool = True, name: str = "memo", time_limit: float | None = 30.0) -> Memo:
    """The justification memo for `plan`, made from `workload` (a workload file's path, whose bytes
    the memo quotes and hashes, or a Workload). `workload`, `catalog` and `rules` default to what a
    plan made by advisor.plan() was made from; otherwise they must be those the plan used (built-in
    catalog and rules by default). `date` is printed on the memo (none by default, so reruns give
    identical bytes). Markdown links its charts as `<name>_files/*.svg`, which Memo.write puts
    beside the memo."""
    workload = workload if workload is not None else getattr(plan, "workload", None)
    if workload is None:
        raise InputError("advisor.memo needs the workload the plan was made from: memo(plan, 'workload.yaml')",
                         field="workload")
    catalog = catalog if catalog is not None else getattr(plan, "catalog", None)
    rules = rules if rules is not None else getattr(plan, "rules", None)
    fmt = format_for("", fmt)
    ctx = memo_context(plan, workload, catalog=catalog, rules=rules, date=date, charts=charts,
                       time_limit=time_limit)
    if fmt == "md":
        attachments = {}
        for chart in ctx["charts"]:
            chart["file"] = f"{name}_files/{chart['slug']}.svg"
            attachments[chart["file"]] = chart["svg_file"].encode("utf-8")
        return Memo("md", _render("memo.md.j2", ctx, autoescape=False).encode("utf-8"), attachments)
    html = _render("memo.html.j2", ctx, autoescape=True)
    return Memo("html", html.encode("utf-8")) if fmt == "html" else Memo("pdf", html_to_pdf(html))


def html_to_pdf(html: str) -> bytes:
    try:
        import weasyprint
    except (ImportError, OSError) as exc:  # OSError: WeasyPrint installed but Pango missing
        raise AdvisorError(f"{PDF_HINT} ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
    return weasyprint.HTML(string=html).write_pdf()


# ----------------------------------------------------------------------------- formatting

def count_words(x: float) -> str:
    """10e9 -> '10 billion'."""
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if x >= scale:
            return f"{x / scale:,.3g} {word}"
    return f"{x:,.0f}"


def rate(x: float) -> str:
    """Three significant figures with separators: 72948 -> '72,900'."""
    if x <= 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(x))))
    return f"{round(x, -int(math.floor(math.log10(x))) + 2):,.{digits}f}"


def _num(x: float) -> str:
    """One decimal, none when it is zero: 7.0 -> '7', 1.58 -> '1.6'."""
    text = f"{x:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def duration(hours: float, short: bool = False) -> str:
    """'45 minutes', '38.1 hours (1.6 days)' ('38.1 hours' when short), '7 days'."""
    if hours < 1:
        return f"{max(1, round(hours * 60))} minutes"
    if hours < 48:
        return f"{_num(hours)} hours" + ("" if short else f" ({_num(hours / 24)} days)")
    return f"{_num(hours / 24)} days"


def deadline_phrase(hours: float) -> str:
    """168 -> '7-day deadline', 36 -> '36-hour deadline'."""
    return f"{_num(hours)}-hour deadline" if hours < 48 else f"{_num(hours / 24)}-day deadline"


def unit_rate(x: float) -> str:
    """A rate in dollars with the digits that matter: $0.1241, $184.06, $2.99."""
    if x >= 1:
        return f"${x:,.2f}"
    digits = f"{x:.4f}".rstrip("0")
    return "$" + digits + "0" * max(0, 4 - len(digits))  # at least two decimals: $0.50, $0.0806


def pct(x: float, signed: bool = False) -> str:
    return f"{x:+,.0f}%" if signed else f"{x:,.0f}%"


def day(text: str | None) -> str:
    """'2022-10-12' -> '12 Oct 2022', '2023-08' -> 'Aug 2023', '2022' -> '2022'."""
    if not text:
        return "undated"
    parts = str(text).split("-")
    if len(parts) == 3:
        return f"{int(parts[2])} {MONTHS[int(parts[1]) - 1]} {parts[0]}"
    if len(parts) == 2:
        return f"{MONTHS[int(parts[1]) - 1]} {parts[0]}"
    return parts[0]


def plural(n, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


# ----------------------------------------------------------------------------- context

class _Refs:
    """Numbered references: every source the memo cites, in order of first appearance in the
    plan's own source list, then in the memo."""

    def __init__(self, catalog, rules, plan_sources):
        self.catalog, self.rules = catalog, rules
        self.entries: dict[str, dict] = {}
        for s in plan_sources:
            self._add(s["id"], s.get("as_of"), s.get("url"))

    def _add(self, sid: str, as_of=None, url=None) -> int | None:
        if sid not in self.entries:
            src = self.catalog.sources.get(sid)
            if src is not None:
                if src.kind in ("derived", "assumption"):
                    return None
                title, url = src.title, src.url
                if title:  # the catalog's bookkeeping note, not part of the source's title
                    title = re.sub(r"\s+-\s+added for gpu-advisor\s*$", "", title)
            else:
                try:
                    rule = self.rules.get(sid)
                except InputError:
                    if url is None:
                        return None
                    title = None
                else:
                    title, url = f"{rule.id}: {rule.source.title}", rule.source.url
            self.entries[sid] = {"n": len(self.entries) + 1, "id": sid, "title": title, "url": url,
                                 "as_of": as_of}
        entry = self.entries[sid]
        if as_of and (entry["as_of"] is None or str(as_of) > str(entry["as_of"])):
            entry["as_of"] = as_of
        return entry["n"]

    def cite(self, ids, as_of=None) -> list[int]:
        return sorted({n for n in (self._add(sid, as_of) for sid in ids) if n is not None})

    def listing(self) -> list[dict]:
        return [dict(e, as_of=day(e["as_of"]) if e["as_of"] else None)
                for e in sorted(self.entries.values(), key=lambda e: e["n"])]


def input_digest(workload) -> tuple[str, str, bytes | None]:
    """(label, sha256, file bytes): of the workload file's bytes, or of a Workload's JSON."""
    if isinstance(workload, (str, Path)):
        data = Path(workload).read_bytes()
        return Path(workload).name, hashlib.sha256(data).hexdigest(), data
    data = json.dumps(workload.model_dump(mode="json"), sort_keys=True).encode()
    return "workload given in Python (canonical JSON)", hashlib.sha256(data).hexdigest(), None


def rules_digest(rules) -> str:
    data = json.dumps([r.model_dump(mode="json", by_alias=True) for r in rules.rules], sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def estimator_accuracy(root: Path | None = None) -> dict:
    """The estimator's measured error band, quoted from where the estimator's maintainers
    publish it, never invented: `catalog/accuracy.yaml` (keys mape, median, worst, n, basis) if
    the catalog ships one, else the summary table of `docs/accuracy.md` in a source checkout."""
    from advisor.data.resources import data_dir

    data_file = data_dir("catalog") / "accuracy.yaml"
    if root is None and data_file.is_file():
        from advisor.inputs.loader import load_yaml_file

        doc = load_yaml_file(data_file, "catalog file") or {}
        band = {k: doc.get(k) for k in ("mape", "median", "worst", "n", "basis")}
        if band["mape"] is not None:
            return dict(band, source="catalog/accuracy.yaml")
    root = root or Path(__file__).resolve().parents[2]
    report = root / "docs" / "accuracy.md"
    if report.is_file():
        band = _accuracy_table(report.read_text(encoding="utf-8"))
        if band:
            return dict(band, source="docs/accuracy.md")
    return {}


def _accuracy_table(text: str) -> dict:
    """The row of the first Markdown table with a MAPE column; the leave-one-source-out row
    when there is one (it predicts data the fit never saw), else the first."""
    lines = [ln.strip() for ln in text.splitlines()]
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not line.startswith("|") or "MAPE" not in cells:
            continue
        header = [c.lower() for c in cells]
        rows = []
        for row in lines[i + 2:]:
            if not row.startswith("|"):
                break
            rows.append([c.strip() for c in row.strip("|").split("|")])
        if not rows:
            continue
        best = next((r for r in rows if "leave-one" in r[0].lower()), rows[0])
        got = dict(zip(header, best))
        return {"mape": got.get("mape"), "median": got.get("median"), "worst": got.get("worst"),
                "n": got.get("n"), "basis": best[0]}
    return {}


def memo_context(plan: dict, workload, *, catalog=None, rules=None, date: dt.date | None = None,
                 charts: bool = True, time_limit: float | None = 30.0) -> dict:
    """Everything the templates print, as display text (no markup): the one place where the
    memo's figures are chosen and worded."""
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.inputs.workload import Workload, load_workload
    from advisor.perf import params_from
    from advisor.plan import prepare

    catalog = catalog or load_catalog()
    rules = rules or load_rules()
    if plan.get("catalog_digest") not in (None, catalog.digest):
        raise InputError(f"the plan was made with catalog {plan['catalog_digest']}, not {catalog.digest}: "
                         "give the memo the same --catalog as the plan", field="catalog")
    label, digest, raw = input_digest(workload)
    wl = workload if isinstance(workload, Workload) else load_workload(workload)
    problem = prepare(wl, catalog, rules, dt.date.fromisoformat(plan["as_of"]))
    params = params_from(catalog)
    refs = _Refs(catalog, rules, plan.get("sources", []))
    feasible = plan["status"] != "infeasible"
    months = plan["assumptions"]["horizon_months"]
    cb = plan["cost_breakdown"]
    upfront = (cb["purchase_usd"] or 0) + (cb["servers_usd"] or 0)
    bom, bom_notes = _bill_of_materials(plan, problem, refs)
    alternatives, best_alt, cited_rules = _alternatives(plan, problem, refs)
    sensitivity = plan.get("sensitivity") or {}
    summary, constraints = _requirement(wl, catalog, plan)
    finish_h = max((j["wall_days"] * 24 for j in plan["jobs"]), default=None)
    key_figures = []
    owned = any(i["ownership"] == "buy" for i in plan["purchase"])
    cost_title = f"Cost over {months:g} months" if owned else "Cost"
    if feasible:
        key_figures = [(f"Total {cost_title.lower()}", usd(plan["total_cost_usd"])),
                       ("Paid upfront", usd(upfront)) if upfront else ("Paid as used (rental)", usd(cb["rental_usd"])),
                       ("Work finishes after", duration(finish_h, short=True))]
        if best_alt:
            key_figures.append(("Saving against the next-best GPU", usd(best_alt[1] - plan["total_cost_usd"])))
    text = raw.decode("utf-8", "replace") if raw is not None else None
    name = plan.get("name") or wl.name or "training workload"
    return {
        "title": f"GPU purchase justification: {name}",
        "date": date.isoformat() if date else None,
        "as_of": plan["as_of"],
        "feasible": feasible,
        "recommendation": _recommendation(plan, wl, problem, best_alt, finish_h, cited_rules, upfront),
        "key_figures": key_figures,
        "requirement": {"file": label, "text": text, "fence": _fence(text or ""), "summary": summary,
                        "constraints": constraints},
        "bom": bom, "bom_notes": bom_notes,
        "bom_total": usd(upfront + (cb["rental_usd"] or 0)) if feasible else None,
        "costs": _cost_rows(plan, months) if feasible else [],
        "total": usd(plan["total_cost_usd"]), "cost_title": cost_title,
        "jobs": _jobs(plan, problem, params, refs),
        "alternatives": alternatives,
        "rules": [_rule_card(rules.get(rid), refs) for rid in cited_rules],
        "sensitivity": [_sensitivity_line(x, catalog.gpus) for x in sensitivity.get("break_even", [])]
                       + [_marginal_line(x) for x in sensitivity.get("marginal", [])],
        "diagnosis": [_sentence(d["message"]) for d in plan.get("diagnosis", [])],
        "assumptions": _assumptions(wl, catalog, plan["assumptions"], refs),
        "warnings": [_sentence(w["message"]) for w in plan.get("warnings", [])],
        "accuracy": _accuracy_line(estimator_accuracy()),
        "charts": _charts(plan, problem, params, time_limit) if charts else [],
        "glossary": GLOSSARY,
        "sources": refs.listing(),
        "footer": {"version": plan.get("tool_version", __version__), "catalog": catalog.digest,
                   "rules": rules_digest(rules), "input": label, "input_sha256": digest,
                   "solver": _solver_line(plan)},
    }


def _bill_of_materials(plan: dict, problem, refs: _Refs) -> tuple[list, list]:
    """Rows (GPUs bought or rented, servers, networking) with unit prices, dates and sources;
    notes on the prices and on what the catalog does not price."""
    gpus = problem.catalog.gpus
    bom, bom_notes = [], []
    for item in plan["purchase"]:
        g = gpus[item["gpu"]]
        if item["ownership"] == "buy":
            p = g.prices.purchase
            bom.append({"item": f"{g.name} GPU", "qty": f"{item['count']:,}", "unit": usd(item["unit_price_usd"]),
                        "extended": usd(item["count"] * item["unit_price_usd"]),
                        "basis": PRICE_KIND.get(p.kind, p.kind or "price"), "dated": day(p.as_of),
                        "refs": refs.cite(p.source, p.as_of)})
            if p.note:
                bom_notes.append(f"{g.name}: {p.note}.")
            if not problem.servers.get(g.id):
                bom_notes.append(f"The catalog lists no server or workstation to hold the {g.name}, so none is "
                                 "costed: budget the host machine separately.")
        else:
            r = g.rental
            bom.append({"item": f"{g.name} rental, {item.get('provider') or r.provider}",
                        "qty": f"{item['gpu_hours']:,.0f} GPU-hours (up to {item['count']:,} GPUs at once)",
                        "unit": f"{unit_rate(item['unit_price_usd'])} per GPU-hour",
                        "extended": usd(item["gpu_hours"] * item["unit_price_usd"]),
                        "basis": "on-demand rate", "dated": day(item.get("as_of") or r.as_of),
                        "refs": refs.cite(r.source, r.as_of)})
    server_defs = getattr(problem.catalog, "servers", None) or {}
    for srv in plan.get("servers", []):
        s = server_defs.get(srv["server"])
        p = getattr(s, "purchase", None)
        bom.append({"item": f"{getattr(s, 'name', None) or srv['server']} server for {gpus[srv['gpu']].name}",
                    "qty": f"{srv['count']:,}", "unit": usd(srv["unit_price_usd"]),
                    "extended": usd(srv["count"] * srv["unit_price_usd"]),
                    "basis": PRICE_KIND.get(getattr(p, "kind", None), "price"), "dated": day(getattr(p, "as_of", None)),
                    "refs": refs.cite(p.source, p.as_of) if p is not None else []})
        if srv.get("networked"):
            per = max((o.network_usd for o in problem.servers.get(srv["gpu"], [])), default=0.0)
            net = getattr(s, "network_usd_per_server", None)
            bom.append({"item": "Networking (NICs and switch ports) per server", "qty": f"{srv['networked']:,}",
                        "unit": usd(per), "extended": usd(per * srv["networked"]), "basis": "per server",
                        "dated": "", "refs": refs.cite(net.source) if net is not None else []})
    return bom, bom_notes


def _jobs(plan: dict, problem, params, refs: _Refs) -> list[dict]:
    """Each job's time and its basis: tokens/s, MFU, the step's parts and what binds."""
    from advisor.perf import min_gpus

    wl, gpus = problem.workload, problem.catalog.gpus
    jobs = []
    for j in plan["jobs"]:
        g = gpus[j["gpu"]]
        cls = next((c for c in problem.classes if c.name(wl) == j["name"]), problem.classes[0])
        n_min = min_gpus(cls.spec, g, params)
        sb, lay = j["step_breakdown"], j["layout"]
        step = sb["compute_s"] + sb["memory_s"] + sb["comm_s"]
        tf = g.tensor_tflops.get(cls.spec.precision)
        spec_refs = refs.cite((tf.source if tf else []) + g.memory_bandwidth_gbps.source + g.memory_gb.source)
        memory = (f"{j['memory_per_gpu_gb']:.1f} GB of the {g.memory_gb.value:g} GB on each GPU"
                  + (f", the model's training state sharded over {lay.get('shards')} GPUs"
                     if (lay.get("shards") or 1) > 1 else ""))
        if n_min and n_min > 1:
            memory_binds = (f"Memory size sets the minimum: the job needs at least {plural(n_min, 'GPU')} "
                            "to hold its model, gradients and optimizer state.")
        else:
            memory_binds = "Memory size does not constrain the choice: one GPU holds the whole job."
        limited_by = LIMITED_BY.get(j["binding_factor"], j["binding_factor"])
        jobs.append({
            "name": _job_label(j["name"], wl) + (f" (×{j['copies']:g} copies)" if j.get("copies", 1) != 1 else ""),
            "gpus": f"{j['gpu_count']:,} × {g.name} ({'bought' if j['ownership'] == 'buy' else 'rented'})",
            "tokens": f"{count_words(cls.tokens)} tokens", "speed": f"{rate(j['tokens_per_s'])} tokens/s",
            "time": duration(j["wall_days"] * 24),
            "deadline": duration(cls.deadline) if cls.deadline else "none",
            "mfu": pct(100 * j["mfu"]), "memory": memory, "limited_by": limited_by,
            "basis": (f"Each training step processes {lay.get('global_batch_tokens', 0):,.0f} tokens and takes "
                      f"{step:.3g} s: {sb['compute_s']:.3g} s of matrix math at the GPU's "
                      f"{tf.value if tf else 'unknown'} TFLOPS {cls.spec.precision} rate, {sb['memory_s']:.3g} s of "
                      f"memory traffic at {g.memory_bandwidth_gbps.value:,.0f} GB/s and {sb['comm_s']:.3g} s of "
                      "GPU-to-GPU communication that computation does not hide. The largest part, "
                      f"{limited_by}, limits the speed. "
                      f"{memory_binds}"),
            "refs": spec_refs,
        })
    return jobs


def _alternatives(plan: dict, problem, refs: _Refs) -> tuple[list, tuple | None, list]:
    """Every GPU type of the workload: the recommendation first, then the costed alternatives
    from the cheapest, then those excluded. Also the cheapest alternative (name, cost) and the
    rule ids cited, by exclusions and by warnings."""
    gpus = problem.catalog.gpus
    rejected = {r["gpu"]: r for r in plan["rejected"]}
    chosen = {j["gpu"] for j in plan["jobs"]}
    a = plan["assumptions"]
    best_alt = None
    alternatives, cited_rules = [], []
    for gid in problem.considered:
        g = gpus[gid]
        r = rejected.get(gid)
        if gid in chosen:
            alternatives.append(((0, 0.0, g.name), {"gpu": g.name, "status": "Recommended",
                                                    "cost": usd(plan["total_cost_usd"]), "detail": "The plan above.",
                                                    "refs": []}))
            continue
        if r is None:  # allowed, but the plan is infeasible and no forced cost was computed
            alternatives.append(((2, 0.0, g.name), {"gpu": g.name, "status": "No plan", "cost": "n/a",
                                                    "detail": "Allowed, but no plan meets every requirement "
                                                              "(see why no plan exists).", "refs": []}))
            continue
        rule_ids = [x["rule"] for x in r["reasons"] if x.get("rule")]
        cited_rules += [x for x in rule_ids if x not in cited_rules]
        forced = r.get("forced_cost_usd")
        if forced is None:
            blocking = [x["rule"] for x in r["reasons"] if x.get("rule") and x.get("severity") != "warn"]
            status = f"Excluded by rule {', '.join(blocking)}" if blocking else _STATUS.get(
                r["reasons"][0].get("code"), "Excluded")
            alternatives.append(((2, 0.0, g.name), {
                "gpu": g.name, "status": status, "cost": "n/a",
                "detail": " ".join(_sentence(x["message"]) for x in r["reasons"]), "refs": refs.cite(rule_ids)}))
            continue
        if best_alt is None or forced < best_alt[1]:
            best_alt = (g.name, forced)
        extra = forced - plan["total_cost_usd"]
        p = g.prices.purchase
        if a["ownership"] != "rent" and p is not None and p.usd:
            price, price_refs = (f"{usd(p.usd)} per GPU ({PRICE_KIND.get(p.kind, 'price')}, {day(p.as_of)})",
                                 refs.cite(p.source, p.as_of))
        elif g.rental is not None:
            price, price_refs = (f"{unit_rate(g.rental.usd_per_gpu_hour)} per GPU-hour ({g.rental.provider}, "
                                 f"{day(g.rental.as_of)})", refs.cite(g.rental.source, g.rental.as_of))
        else:
            price, price_refs = "", []
        alternatives.append(((1, forced, g.name), {
            "gpu": g.name, "status": "Costs more", "cost": usd(forced),
            "detail": f"The cheapest plan using only this GPU costs {usd(extra)} "
                      f"({pct(100 * extra / plan['total_cost_usd'], True)}) more than the recommendation"
                      + (f"; priced at {price}." if price else "."),
            "refs": price_refs}))
    alternatives = [row for _, row in sorted(alternatives, key=lambda x: x[0])]
    for w in plan.get("warnings", []):
        if w.get("rule") and w["rule"] not in cited_rules:
            cited_rules.append(w["rule"])
    return alternatives, best_alt, cited_rules


def _rule_card(rule, refs: _Refs) -> dict:
    return {"id": rule.id, "title": rule.title, "why": " ".join(rule.why.split()), "source": rule.source.title,
            "clause": rule.source.clause, "url": rule.source.url, "refs": refs.cite([rule.id])}


_CONSTRAINT = {"deadline": "Deadline", "budget": "Budget", "power": "Power limit", "gpu_count": "GPU count",
               "gpu_count_min": "Minimum GPU count", "gpu_count_max": "Maximum GPU count", "stock": "Stock"}
_STATUS = {"no-purchase-price": "No purchase price", "no-rental-price": "No rental price",
           "memory": "Does not fit", "deadline": "Too slow for the deadline", "no-server": "No server platform",
           "no-feasible-plan": "No plan meets the limits", "none": "Excluded"}


def _job_label(name: str, wl) -> str:
    """A workload's single unnamed job is called 'job' in the plan; the memo says 'training run'."""
    return "Training run" if len(wl.jobs) == 1 and not wl.jobs[0].name and name == "job" else name


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    return "`" * max(3, longest + 1)


def _solver_line(plan: dict) -> str:
    s = plan.get("solver") or {}
    if plan["status"] == "infeasible":
        return f"{s.get('name') or 'solver'}: no feasible plan"
    proof = "proven optimal" if s.get("proven_optimal") else f"best found, not proven optimal (gap {s.get('gap')})"
    return f"{s.get('name')}, {proof}"


def _cost_rows(plan: dict, months: float) -> list[dict]:
    cb, a = plan["cost_breakdown"], plan["assumptions"]
    bought = [i for i in plan["purchase"] if i["ownership"] == "buy"]
    rented = [i for i in plan["purchase"] if i["ownership"] == "rent"]
    rate_kwh, pue, host = a["electricity_usd_per_kwh"], a["pue"], a["hosting_usd_per_kw_month"]
    energy = cb["energy_usd"] or 0.0
    hosting = cb["hosting_usd"] or 0.0
    rows = [
        {"category": "GPUs", "when": "upfront", "amount": usd(cb["purchase_usd"]),
         "basis": "; ".join(f"{i['count']:,} × {usd(i['unit_price_usd'])}" for i in bought) or "none bought"},
        {"category": "Servers and networking", "when": "upfront", "amount": usd(cb["servers_usd"]),
         "basis": ("; ".join(f"{s['count']:,} × {s['server']} at {usd(s['unit_price_usd'])}"
                             for s in plan.get("servers", []))
                   or ("none priced (see the bill of materials)" if bought else "none: no owned GPUs"))},
        {"category": "Electricity", "when": "while the jobs run", "amount": usd(energy),
         "basis": (f"{energy / rate_kwh:,.0f} kWh at {unit_rate(rate_kwh)} per kWh, including the building "
                   f"overhead (PUE {pue:.2f})" if bought and rate_kwh else "none: no owned GPUs")},
        {"category": "Hosting (space and power capacity)", "when": f"over {months:g} months", "amount": usd(hosting),
         "basis": (f"{hosting / (host * months):,.2f} kW × {unit_rate(host)} per kW-month × {months:g} months "
                   f"= {usd(hosting / months)} per month" if host and bought
                   else "none: no hosting charge for this deployment" if bought else "none: no owned GPUs")},
        {"category": "GPU rental", "when": "while the jobs run", "amount": usd(cb["rental_usd"]),
         "basis": "; ".join(f"{i['gpu_hours']:,.0f} GPU-hours × {unit_rate(i['unit_price_usd'])}"
                            for i in rented) or "none rented"},
    ]
    return rows


def _requirement(wl, catalog, plan) -> tuple[list, list]:
    d = wl.deployment
    rows = []
    for i, job in enumerate(wl.jobs):
        if isinstance(job.model, str):
            m = catalog.models.get(job.model)
            model = f"{job.model} ({count_words(m.params)} parameters)" if m else job.model
        else:
            model = f"a {count_words(job.model.params)}-parameter model"
        what = (f"{job.kind} {model} on {count_words(job.tokens)} tokens in {job.precision}, "
                f"deadline {duration(job.deadline) if job.deadline else 'none'}"
                + (f", {job.repeat} copies" if job.repeat > 1 else ""))
        rows.append(("Training run" if len(wl.jobs) == 1 and not job.name else f"Job '{wl.job_name(i)}'", what))
    if d.context == "cloud":
        rows.append(("Deployment", f"cloud, region {d.region}: GPUs rented by the hour"))
    else:
        owner = {"buy": "buy the GPUs", "rent": "rent the GPUs",
                 "any": "buy or rent, whichever is cheaper"}[d.ownership]
        rows.append(("Deployment", f"{d.context}, region {d.region}; {owner}; owned hardware costed over "
                                   f"{d.horizon_months:g} months"))
    sel = wl.gpus
    gpus = ", ".join(catalog.gpus[g].name for g in sel.allow) if sel.allow else "any GPU in the catalog"
    rows.append(("GPUs considered", gpus + (f"; never {', '.join(sel.deny)}" if sel.deny else "")))
    if sel.count is not None:
        rows.append(("GPU count", f"exactly {sel.count:,}"))
    elif sel.min is not None or sel.max is not None:
        rows.append(("GPU count", " and ".join(x for x in (f"at least {sel.min:,}" if sel.min else "",
                                                             f"at most {sel.max:,}" if sel.max else "") if x)))
    if wl.budget_usd is not None:
        rows.append(("Budget", usd(wl.budget_usd)))
    if d.power_limit_kw is not None:
        rows.append(("Power limit", f"{d.power_limit_kw:g} kW"))
    constraints = []
    for b in plan.get("binding", []):
        margin = "none: binding" if b["binding"] else f"{b['slack']:,.2f} {b['unit']} to spare"
        kind, _, what = b["constraint"].partition(":")
        label = _CONSTRAINT.get(kind, kind.replace("_", " ").capitalize())
        constraints.append({"constraint": f"{label} ({_job_label(what, wl)})" if what else label,
                            "plan": _sentence(b["message"]),
                            "margin": margin})
    return rows, constraints


def _assumptions(wl, catalog, a, refs) -> list[dict]:
    d = wl.deployment
    site = "datacenter" if d.context == "cloud" else d.context
    out = []
    for key, given, text in (
            ("electricity_usd_per_kwh", d.electricity_usd_per_kwh,
             f"Electricity costs {unit_rate(a['electricity_usd_per_kwh'])} per kWh"),
            ("pue", d.pue, f"The building's PUE is {a['pue']:.2f}"),
            ("hosting_usd_per_kw_month", d.hosting_usd_per_kw_month,
             f"Hosting costs {unit_rate(a['hosting_usd_per_kw_month'])} per kW of capacity per month"
             if a["hosting_usd_per_kw_month"] else "No hosting is charged")):
        if given is not None:
            out.append({"text": f"{text} (given in the workload).", "refs": []})
            continue
        assumption = catalog.assumptions.get(f"{key}_{site}")
        note = f": {assumption.note}" if assumption is not None and assumption.note else ""
        out.append({"text": f"{text}{note}.", "refs": refs.cite(assumption.source, assumption.as_of)
                    if assumption is not None else []})
    out.append({"text": f"Owned hardware is costed over {a['horizon_months']:g} months with no resale value; "
                        "energy is costed only for the hours the jobs run, not for idle time.", "refs": []})
    out.append({"text": "Rented GPUs run in the provider's datacenter; their energy and hosting are in the "
                        "hourly rate.", "refs": []})
    out.append({"text": "Training times are estimates from the tool's performance model (docs/model.md), not "
                        "measurements of this job.", "refs": []})
    return out


def _accuracy_line(band: dict) -> str:
    if not band:
        return ("No measured error band for the time estimates ships with this installation "
                "(the estimator's accuracy report, docs/accuracy.md, is absent), so none is stated: "
                "confirm the times on a short trial run before committing.")
    parts = [f"mean absolute percentage error (MAPE) {band['mape']}"]
    if band.get("median"):
        parts.append(f"median {band['median']}")
    if band.get("worst"):
        parts.append(f"worst {band['worst']}")
    where = f" over {band['n']} measured training runs" if band.get("n") else ""
    basis = f" ({band['basis']})" if band.get("basis") else ""
    return (f"Measured accuracy of the time estimates{where}{basis}: {', '.join(parts)} "
            f"(from {band['source']}). Times and costs that depend on them carry that uncertainty.")


def _sensitivity_line(s: dict, gpus) -> str:
    name = gpus[s["gpu"]].name if s["gpu"] in gpus else s["gpu"]
    if s["direction"] == "rise":
        if s.get("factor") is None:
            return (f"The {name} stays the choice even at 64 times its {s['what']}: no allowed alternative meets "
                    "the requirements.")
        if s["factor"] >= 2:
            rise = f"to about {s['factor']:.1f} times its current level" + (
                f" ({usd(s['price'])})" if s.get("price") else "")
        else:
            rise = f"by about {pct(100 * (s['factor'] - 1))}" + (
                f" (to about {usd(s['price'])})" if s.get("price") else "")
        return f"The {name} stays the cheapest choice until its {s['what']} rises {rise}."
    if s.get("factor") is None:
        return (f"The runner-up, {name}, would not be chosen even if its GPUs were free: the other costs of "
                "its plan (servers, energy, hosting) stay higher.")
    price = f" (to about {usd(s['price'])})" if s.get("price") else ""
    return (f"The runner-up, {name}, becomes the cheaper choice only if its {s['what']} falls by about "
            f"{pct(100 * (1 - s['factor']))}{price}.")


def _marginal_line(m: dict) -> str:
    if m["change"].startswith("deadline"):
        if m["saving_usd"] > 0.5:
            return f"One more day on every deadline would save {usd(m['saving_usd'])}."
        return "One more day on the deadline would save nothing: the deadline does not limit the choice."
    if m["saving_usd"] > 0.5:
        return f"A budget 10% higher would allow a plan {usd(m['saving_usd'])} cheaper overall."
    return "A higher budget would change nothing: the budget does not limit the choice."


def _recommendation(plan, wl, problem, best_alt, finish_h, cited_rules, upfront) -> str:
    gpus, rules = problem.catalog.gpus, problem.rules
    name = plan.get("name") or wl.name or "the workload"
    if plan["status"] == "infeasible":
        fixes = [d["message"] for d in plan.get("diagnosis", []) if d.get("relaxation")]
        text = (f"No combination of the allowed GPUs meets every requirement of the workload '{name}', so "
                "nothing should be bought or rented as specified.")
        if fixes:
            text += (f" Any one of the {len(fixes)} changes listed under 'Why no plan exists' would make a plan "
                     f"possible; the first: {fixes[0].rstrip('.')}." if len(fixes) > 1
                     else f" This change would make a plan possible: {fixes[0].rstrip('.')}.")
        return text
    parts = []
    for item in plan["purchase"]:
        g, n = gpus[item["gpu"]], item["count"]
        if item["ownership"] == "buy":
            parts.append(f"buy {n:,} {g.name} GPU" + (f"s at {usd(item['unit_price_usd'])} each" if n != 1
                                                       else f" for {usd(item['unit_price_usd'])}"))
        else:
            parts.append(f"rent {g.name} GPUs on demand from {item.get('provider')}: {item['gpu_hours']:,.0f} "
                         f"GPU-hours at {unit_rate(item['unit_price_usd'])} per GPU-hour, up to {n:,} at once")
    for srv in plan.get("servers", []):
        parts.append(f"{srv['count']:,} {srv['server']} server{'s' if srv['count'] != 1 else ''} to hold them")
    text = _join(parts)
    a, cb = plan["assumptions"], plan["cost_breakdown"]
    running = [f"{usd(cb[key])} for {what}" for key, what in (("energy_usd", "electricity"), ("hosting_usd", "hosting"),
                                                              ("rental_usd", "rental")) if cb[key]]
    text = f"{text[:1].upper()}{text[1:]}. "
    if upfront:
        text += (f"Over the {a['horizon_months']:g} months the hardware is costed for, the total is "
                 f"{usd(plan['total_cost_usd'])}" + (f": {usd(upfront)} upfront and {_join(running)}. " if running
                                                     else ". "))
    else:
        text += f"The total cost is {usd(plan['total_cost_usd'])}, all of it rental. "
    hostless = [gpus[g].name for g in sorted({i["gpu"] for i in plan["purchase"] if i["ownership"] == "buy"})
                if not problem.servers.get(g)]
    if hostless:
        text += (f"This excludes the machine that hosts the {_join(hostless)}, which the catalog does not price. ")
    jobs = plan["jobs"]
    deadlines = [c.deadline for c in problem.classes]
    if len(jobs) == 1 and jobs[0].get("copies", 1) == 1:
        spare = (f", {duration(deadlines[0] - finish_h)} before its {deadline_phrase(deadlines[0])}"
                 if deadlines and deadlines[0] else "")
        text += f"The training run finishes after about {duration(finish_h)} of running time{spare}. "
    else:
        count = sum(j.get("copies", 1) for j in jobs)
        text += (f"{'Both jobs' if count == 2 else f'All {count:,} jobs'} finish within {duration(finish_h)} "
                 "of running time, each within its deadline. ")
    if best_alt:
        text += (f"The next-best option, the {best_alt[0]} alone, would cost {usd(best_alt[1])} "
                 f"({usd(best_alt[1] - plan['total_cost_usd'])} more). ")
    for rid in cited_rules:
        if rules.get(rid).severity != "forbid":
            continue  # a warning does not exclude anything
        excluded = [gpus[r["gpu"]].name for r in plan["rejected"]
                    if r.get("forced_cost_usd") is None and any(x.get("rule") == rid for x in r["reasons"])]
        if excluded:
            text += (f"The {_join(excluded)} {'is' if len(excluded) == 1 else 'are'} excluded by rule {rid} "
                     f"({rules.get(rid).title}). ")
    return text.strip()


def _join(items: list[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# ----------------------------------------------------------------------------- charts

def _sample(values: list, n: int) -> list:
    if len(values) <= n:
        return values
    step = (len(values) - 1) / (n - 1)
    return sorted({values[round(i * step)] for i in range(n)})


def cost_time_points(problem, time_limit: float | None = 30.0, per_gpu: int = 10) -> dict:
    """For the cost-time chart: per allowed GPU type, the cheapest plan using only it under a
    sweep of completion-time caps (hours, USD, GPU count), and the Pareto front of all of them."""
    from advisor.solve.milp import frontier, solve

    series = {}
    for gid in problem.considered:
        if gid in problem.rejected:
            continue
        hours = sorted({round(c.hours, 9) for cs in problem.candidates for c in cs if c.gpu == gid})
        points = []
        for h in _sample(hours, per_gpu):
            s = solve(problem, only_gpu=gid, makespan_hours=h, time_limit=time_limit)
            if s.feasible:
                n = sum(s.bought.values()) or max((c.count for c in s.chosen), default=0)
                point = (s.makespan_hours, s.objective_usd, n)
                if all(abs(point[0] - p[0]) > 1e-9 or abs(point[1] - p[1]) > 1e-6 for p in points):
                    points.append(point)
        if points:
            series[gid] = sorted(points)
    front = [(s.makespan_hours, s.objective_usd) for s in frontier(problem, points=16, time_limit=time_limit)]
    return {"series": series, "front": front}


def value_points(problem, params) -> dict:
    """For the value chart: tokens/s per $1,000 of purchase price (or, when the workload rents,
    million tokens per $1 of rent) of each considered GPU on the first job, on the fewest GPUs
    that hold it."""
    from advisor.perf import evaluate, min_gpus

    renting = problem.workload.deployment.ownership == "rent" or problem.workload.deployment.context == "cloud"
    cls = problem.classes[0]
    rows = []
    for gid in problem.considered:
        g = problem.catalog.gpus[gid]
        rule_ids = sorted({r["rule"] for r in problem.rejected[gid].reasons if r.get("rule")}) \
            if gid in problem.rejected else []
        n = min_gpus(cls.spec, g, params)
        est = evaluate(cls.spec, g, n, params) if n else None
        price = (g.rental.usd_per_gpu_hour if g.rental else None) if renting else g.purchase_usd
        value, note = None, None
        if est is None or not est.fits:
            note = "does not fit in memory"
        elif price is None:
            note = f"no {'rental' if renting else 'purchase'} price in the catalog"
        else:
            value = (est.tokens_per_s * 3600 / (n * price) / 1e6 if renting
                     else est.tokens_per_s / (n * price) * 1000)
        rows.append({"gpu": gid, "name": g.name, "count": n, "value": value, "note": note, "rules": rule_ids})
    unit = "million tokens per $1 of rent" if renting else "tokens/s per $1,000 of purchase price"
    return {"rows": rows, "unit": unit, "job": cls.name(problem.workload), "renting": renting}


COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")


def _charts(plan, problem, params, time_limit) -> list[dict]:
    """The memo's charts (those with something to show), each as SVG for a file and for inlining."""
    colour = {gid: COLOURS[i % len(COLOURS)] for i, gid in enumerate(problem.considered)}
    with _rc():
        charts = [_cost_time_chart(plan, problem, colour, time_limit), _value_chart(problem, params, colour)]
    return [c for c in charts if c is not None]


def _figure(height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.2, height), layout="constrained")
    FigureCanvasAgg(fig)  # Agg, without touching pyplot's global backend
    return fig, fig.add_subplot()


def _cost_time_chart(plan, problem, colour, time_limit) -> dict | None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    data = cost_time_points(problem, time_limit)
    if not data["series"]:
        return None
    names = {gid: problem.catalog.gpus[gid].name for gid in problem.considered}
    money = FuncFormatter(lambda v, _: f"${v / 1e6:g}M" if v >= 1e6 else (f"${v / 1e3:g}k" if v >= 1e3 else f"${v:g}"))
    all_h = [p[0] for pts in data["series"].values() for p in pts]
    deadlines = [c.deadline for c in problem.classes if c.deadline]
    days = max(all_h + deadlines) >= 72
    scale = 24.0 if days else 1.0
    fig, ax = _figure(4.4)
    for gid, pts in data["series"].items():
        xs, ys = [p[0] / scale for p in pts], [p[1] for p in pts]
        ax.plot(xs, ys, "-o", color=colour[gid], ms=5, lw=1, alpha=0.85, label=f"{names[gid]} only")
        for x, y, n in zip(xs, ys, [p[2] for p in pts]):
            ax.annotate(f"{n}", (x, y), xytext=(4, 3), textcoords="offset points", fontsize=7,
                        color=colour[gid])
    if data["front"]:
        fx, fy = [p[0] / scale for p in data["front"]], [p[1] for p in data["front"]]
        ax.step(fx, fy, where="post", color="black", lw=1.6, alpha=0.6,
                label="Pareto front: cheapest plan for each finishing time")
        ax.plot(fx, fy, "o", mfc="none", mec="black", ms=9, mew=1)
    if plan["status"] != "infeasible":
        finish = max(j["wall_days"] for j in plan["jobs"]) * 24 / scale
        ax.plot([finish], [plan["total_cost_usd"]], "*", color="#d62728", ms=16, zorder=5,
                label="Recommended plan")
    for dl in sorted(set(deadlines)):
        ax.axvline(dl / scale, color="#d62728", ls="--", lw=1)
        ax.annotate(deadline_phrase(dl), (dl / scale, 1), xycoords=("data", "axes fraction"),
                    xytext=(-4, -12), textcoords="offset points", ha="right", fontsize=8, color="#d62728")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(money)
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"Time until all work is done ({'days' if days else 'hours'}, log scale)")
    ax.set_ylabel(f"Total cost over {plan['assumptions']['horizon_months']:g} months (log scale)")
    ax.grid(True, which="major", color="#dddddd", lw=0.6)
    fig.legend(loc="outside lower center", ncol=2, fontsize=8)
    shown = set(data["series"])
    left_out = [names[g] for g in problem.considered if g not in shown]
    caption = ("Each dot is the cheapest plan that uses only one GPU type and finishes within a given time; "
               "the small number beside it is how many GPUs that plan uses. The black line joins the "
               "plans for which no other plan is both cheaper and faster; the star is the recommendation.")
    if left_out:
        caption += f" Not shown (see Alternatives considered for why): {_join(left_out)}."
    file_svg, inline = _svg(fig, "c1")
    return {"slug": "cost-vs-time", "title": "Cost against completion time", "caption": caption,
            "svg_file": file_svg, "svg": inline,
            "alt": "Chart of total cost against completion time for each GPU type"}


def _value_chart(problem, params, colour) -> dict | None:
    from matplotlib.ticker import FuncFormatter

    value = value_points(problem, params)
    rows = value["rows"]
    if not any(r["value"] for r in rows):
        return None
    order = sorted(rows, key=lambda r: (-(r["value"] or 0), r["name"]))
    fig, ax = _figure(0.5 * len(order) + 1.0)
    top = max(r["value"] or 0 for r in order)
    for i, r in enumerate(order):
        y = len(order) - 1 - i
        if r["value"] is not None:
            allowed = not r["rules"]
            ax.barh(y, r["value"], color=colour[r["gpu"]] if allowed else "#d9d9d9",
                    hatch=None if allowed else "//", edgecolor=None if allowed else "#999999", height=0.6)
            ax.text(r["value"] + top * 0.01, y, f"{r['value']:,.0f}" if r["value"] >= 10
                    else f"{r['value']:,.2f}", va="center", fontsize=8)
            if r["rules"]:
                ax.text(top * 0.02, y, f"not allowed here: rule {', '.join(r['rules'])}", va="center",
                        fontsize=8, color="#333333", bbox={"facecolor": "white", "edgecolor": "none",
                                                           "pad": 1.5})
        else:
            ax.text(top * 0.02, y, r["note"], va="center", fontsize=8, color="#666666", style="italic")
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"{r['name']}" + (f" ×{r['count']}" if r["count"] and r["count"] > 1 else "")
                        for r in reversed(order)])
    ax.set_xlim(0, top * 1.15)
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel(value["unit"].capitalize() + " (higher is better)")
    ax.grid(True, axis="x", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    job = _job_label(value["job"], problem.workload)
    caption = (f"Estimated training speed of {'the training run' if job == 'Training run' else repr(job)} "
               "on each GPU type divided by "
               + ("its cheapest on-demand rental rate" if value["renting"] else "its purchase price")
               + ", on the fewest GPUs that hold the job. It compares value for money; it ignores "
                 "servers, power and the deadline, which the plan accounts for.")
    file_svg, inline = _svg(fig, "c2")
    return {"slug": "value-by-gpu", "title": "Training speed per dollar, by GPU", "caption": caption,
            "svg_file": file_svg, "svg": inline, "alt": f"Bar chart of {value['unit']} by GPU"}


# ----------------------------------------------------------------------------- templates

def _render(template: str, ctx: dict, autoescape: bool) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                             autoescape=autoescape, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["cell"] = lambda v: str(v).replace("|", "\\|").replace("\n", " ")
    env.filters["refs"] = lambda ns: "".join(f"[{n}]" for n in ns)
    return env.get_template(template).render(**ctx)
