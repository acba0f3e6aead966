"""Error distributions for plan ranges (issue 16): regenerate catalog/uncertainty.yaml in one command.

    pip install -e '.[bench]'                      # scipy and numpy (the leave-one-source-out refits)
    python bench/uncertainty.py --out catalog/uncertainty.yaml [--report docs/accuracy.md]

Speed: the log-ratio log(measured / predicted) tokens/s of every calibration row predicted out of
sample (fit=yes rows by leave-one-source-out refits, bench/accuracy.py; fit=no rows were never
fitted), grouped by GPU generation (the architecture's first word, as the estimator's per-family
parameters) and precision. A group keeps its own P10/P50/P90 when it has MIN_ROWS rows; otherwise
it falls back to its generation, then to every row. A generation with no measured row gets the
pooled quantiles widened by UNMEASURED_WIDEN (an assumption, stated in the file).

Prices: the spread of the catalog's own quote bands (`usd_range` of purchase records, each a
low-high band a source printed), by confidence grade: medium and low take the median band width of
their grade, high the narrowest band any quote shows. A band is read as P10-P90 in log price.

Coverage (issue 16 target 70-90%): how many out-of-sample rows fall inside their P10-P90 interval,
in-sample (the distribution built from every row) and nested (each source's rows checked against a
distribution built without that source).
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import accuracy  # bench/accuracy.py: calibration rows, predictions, leave-one-source-out
import yaml

from advisor.data.catalog import load_catalog
from advisor.perf import params_from

MIN_ROWS = 8               # rows a (generation, precision) group needs to keep its own quantiles
UNMEASURED_WIDEN = 2.0     # assumption: a generation with no measured run gets the pooled spread x 2
LEVELS = (0.1, 0.5, 0.9)
MARK_BEGIN, MARK_END = "<!-- uncertainty:begin -->", "<!-- uncertainty:end -->"


def quantile(xs: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default, 'type 7')."""
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def family(catalog, gpu_id: str) -> str:
    arch = catalog.gpus[gpu_id].architecture or ""
    return arch.split()[0].lower() if arch else "unknown"


def residuals(rows, catalog, held) -> list[dict]:
    out = []
    for r in rows:
        pred = held[r["id"]]
        if pred and not math.isnan(pred):
            out.append({"id": r["id"], "group": r["group"], "family": family(catalog, r["gpu"]),
                        "precision": r["precision"], "basis": r["basis"],
                        "log_ratio": math.log(accuracy.measured(r) / pred)})
    return out


def quantiles(res: list[dict]) -> dict:
    xs = [x["log_ratio"] for x in res]
    return {f"q{round(100 * q)}": round(quantile(xs, q), 4) for q in LEVELS} | {"n": len(xs)}


def distributions(res: list[dict], families: list[str]) -> dict:
    """{'pooled', 'groups': {family/precision: ...}, 'families': {family: ...}, 'unmeasured': ...}."""
    pooled = quantiles(res)
    fams, groups = {}, {}
    for f in sorted({x["family"] for x in res}):
        mine = [x for x in res if x["family"] == f]
        fams[f] = quantiles(mine) | {"basis": "generation" if len(mine) >= MIN_ROWS else "pooled (too few rows)"}
        if len(mine) < MIN_ROWS:
            fams[f] = pooled | {"n": len(mine), "basis": f"pooled: {len(mine)} rows < {MIN_ROWS}"}
        for p in sorted({x["precision"] for x in mine}):
            rows = [x for x in mine if x["precision"] == p]
            if len(rows) >= MIN_ROWS:
                groups[f"{f}/{p}"] = quantiles(rows) | {"basis": "generation and precision"}
            else:
                groups[f"{f}/{p}"] = {k: v for k, v in fams[f].items() if k != "basis"} | {
                    "n": len(rows), "basis": f"{f}: {len(rows)} rows < {MIN_ROWS} at {p}"}
    med = pooled["q50"]
    unmeasured = {"q10": round(med - UNMEASURED_WIDEN * (med - pooled["q10"]), 4), "q50": med,
                  "q90": round(med + UNMEASURED_WIDEN * (pooled["q90"] - med), 4), "n": 0,
                  "basis": f"assumption: every row pooled, spread x {UNMEASURED_WIDEN:g} (no measured run of "
                           f"this generation: {', '.join(f for f in families if f not in fams)})"}
    return {"pooled": pooled, "families": fams, "groups": groups, "unmeasured": unmeasured}


def lookup(dist: dict, fam: str, precision: str) -> dict:
    return dist["groups"].get(f"{fam}/{precision}") or dist["families"].get(fam) or dist["unmeasured"]


def coverage(res: list[dict], dist_of) -> tuple[int, int]:
    inside = 0
    for x in res:
        d = lookup(dist_of(x), x["family"], x["precision"])
        inside += d["q10"] <= x["log_ratio"] <= d["q90"]
    return inside, len(res)


def price_spreads(catalog) -> dict:
    """Per confidence grade: the width log(high / low) of the catalog's quote bands (usd_range)."""
    bands: dict[str, list] = {"high": [], "medium": [], "low": []}
    for gid in sorted(catalog.gpus):
        prices = catalog.gpus[gid].prices
        for rec in ([prices.purchase] if prices.purchase else []) + list(prices.other_purchases):
            if rec.usd_range and rec.confidence and rec.usd_range[1] > rec.usd_range[0]:
                bands[rec.confidence].append((gid, math.log(rec.usd_range[1] / rec.usd_range[0])))
    every = [w for ws in bands.values() for _, w in ws]
    out = {}
    for grade in ("high", "medium", "low"):
        ws = [w for _, w in bands[grade]]
        if grade == "high" or not ws:
            width, basis = min(every), "the narrowest quote band in the catalog (no band of this grade)"
            if grade == "high":
                basis = "the narrowest quote band in the catalog: a high-confidence price is a vendor or catalog figure"
        else:
            width, basis = statistics.median(ws), f"median width of the {len(ws)} {grade}-confidence quote bands"
        out[grade] = {"log_width": round(width, 4), "bands": [f"{g} {w:.3f}" for g, w in bands[grade]],
                      "basis": basis}
    for lower, higher in (("medium", "high"), ("low", "medium")):  # a lower grade is never narrower
        if out[lower]["log_width"] < out[higher]["log_width"]:
            out[lower]["log_width"] = out[higher]["log_width"]
            out[lower]["basis"] += f"; raised to the {higher} width"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "catalog" / "uncertainty.yaml"))
    ap.add_argument("--report", help="also rewrite the uncertainty block of this Markdown file")
    ap.add_argument("--timing", action="store_true", help="time the robustness check on the article examples")
    args = ap.parse_args(argv)
    if args.timing:
        print(timing())
        return 0
    catalog = load_catalog()
    p = params_from(catalog)
    rows = accuracy.load_rows()
    held, _ = accuracy.cross_validate(rows, catalog, p)
    res = residuals(rows, catalog, held)
    fams = sorted({family(catalog, g) for g in catalog.gpus})
    dist = distributions(res, fams)
    cov_in = coverage(res, lambda x: dist)
    nested = {}
    cov_n = [0, 0]
    for group in sorted({x["group"] for x in res}):
        d = distributions([x for x in res if x["group"] != group], fams)
        mine = [x for x in res if x["group"] == group]
        i, n = coverage(mine, lambda x, d=d: d)
        nested[group] = f"{i}/{n}"
        cov_n[0] += i
        cov_n[1] += n
    doc = {
        "schema_version": 1,
        "generated_by": "python bench/uncertainty.py --out catalog/uncertainty.yaml",
        "speed": {
            "quantity": "log(measured / estimated tokens/s); real speed = estimate x exp(q)",
            "source": "catalog/calibration.csv predicted out of sample: leave-one-source-out refits for fit=yes "
                      "rows, the fitted parameters for never-fitted rows (bench/accuracy.py)",
            "min_rows": MIN_ROWS,
            "rows": len(res),
            "coverage_p10_p90": {"in_sample": f"{cov_in[0]}/{cov_in[1]}", "nested_leave_one_source_out":
                                 f"{cov_n[0]}/{cov_n[1]}", "nested_by_source": nested},
            **dist,
        },
        "price": {
            "quantity": "log(real price / catalog price); a grade's log_width is its P10-P90 band",
            "source": "the usd_range bands of catalog/gpus.yaml price records, by confidence",
            "rule": "a record with its own usd_range uses it as P10-P90 (a side where the point sits at the band's "
                    "end takes half the grade's width); others take the grade's width centred on the point. "
                    "Rental rates use the grade of the offer; server prices are not varied",
            "by_confidence": price_spreads(catalog),
        },
    }
    header = ("# Error distributions behind plan ranges, deadlines at a confidence and the robustness verdict.\n"
              "# GENERATED: do not edit by hand; derivation in bench/uncertainty.py and docs/model.md (uncertainty).\n")
    Path(args.out).write_text(header + yaml.safe_dump(doc, sort_keys=False, width=110), encoding="utf-8")
    print(f"wrote {args.out}: coverage in-sample {cov_in[0]}/{cov_in[1]}, nested {cov_n[0]}/{cov_n[1]}")
    if args.report:
        write_report(Path(args.report), doc)
    return 0


def write_report(path: Path, doc: dict) -> None:
    s = doc["speed"]
    lines = [MARK_BEGIN, "", "| speed distribution | n | P10 | P50 | P90 | basis |", "|---|---|---|---|---|---|"]
    entries = [(k, v) for k, v in s["groups"].items()] + [("no measured run (default)", s["unmeasured"])]
    for k, v in entries:
        lines.append(f"| {k} | {v['n']} | {_pct(v['q10'])} | {_pct(v['q50'])} | {_pct(v['q90'])} | {v['basis']} |")
    c = s["coverage_p10_p90"]
    lines += ["", (f"Coverage of P10-P90 (measured speed inside the interval): in-sample {_share(c['in_sample'])}, "
                   f"nested leave-one-source-out {_share(c['nested_leave_one_source_out'])} "
                   f"(by source: {', '.join(f'{k} {v}' for k, v in c['nested_by_source'].items())})."), "",
              "| price confidence | P10-P90 width | basis |", "|---|---|---|"]
    for k, v in doc["price"]["by_confidence"].items():
        lines.append(f"| {k} | x{math.exp(v['log_width']):.2f} | {v['basis']} |")
    lines += ["", MARK_END]
    text = path.read_text(encoding="utf-8")
    block = "\n".join(lines)
    if MARK_BEGIN in text:
        head, rest = text.split(MARK_BEGIN, 1)
        text = head + block + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")


def timing(repeats: int = 3) -> str:
    """Robustness check against the plan's own time (best of `repeats`) on the article examples."""
    import datetime as dt
    import time

    from advisor.explain.robustness import robustness
    from advisor.inputs.workload import load_workload
    from advisor.plan import plan
    from advisor.solve.milp import solve

    lines = ["| example | solve() s | plan() without the check s | robustness check s | draws | check / plan() |",
             "|---|---|---|---|---|---|"]
    for name in ("article-office", "article-datacenter"):
        wl = load_workload(ROOT / "examples" / f"{name}.yaml")
        best = {"solve": 1e9, "plan": 1e9, "robust": 1e9}
        for _ in range(repeats):
            t = time.perf_counter()
            p = plan(wl, as_of=dt.date(2026, 12, 1))
            total = time.perf_counter() - t
            t = time.perf_counter()
            sol = solve(p.problem)
            best["solve"] = min(best["solve"], time.perf_counter() - t)
            t = time.perf_counter()
            r = robustness(p.problem, sol)
            rob = time.perf_counter() - t
            best["robust"] = min(best["robust"], rob)
            best["plan"] = min(best["plan"], total - rob)
        lines.append(f"| {name} | {best['solve']:.3f} | {best['plan']:.2f} | {best['robust']:.2f} | {r['draws']} | "
                     f"{best['robust'] / best['plan']:.2f}x |")
    return "\n".join(lines)


def _pct(q: float) -> str:
    return f"{100 * (math.exp(q) - 1):+.1f}%"


def _share(frac: str) -> str:
    i, n = (int(v) for v in frac.split("/"))
    return f"{i}/{n} = {100 * i / n:.0f}%"


if __name__ == "__main__":
    sys.exit(main())
