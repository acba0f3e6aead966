"""Error distributions for plan ranges (issue 16): regenerate catalog/uncertainty.yaml in one command.

    pip install -e '.[bench]'                      # scipy and numpy (the leave-one-source-out refits)
    python bench/uncertainty.py --out catalog/uncertainty.yaml --report docs/accuracy.md
    python bench/uncertainty.py --timing           # the robustness check's cost on the article examples
    python bench/uncertainty.py --serving-only     # only the serving block, after bench/serving_accuracy.py --out

Deterministic: the same estimator and calibration rows give the same bytes. About 30 minutes on one
core (one refit per source and per pair of sources, bench/uncertainty_residuals.py: the pair refits
start at the full fit and stop at a 0.1% relative change).

Speed: e = log(measured / predicted tokens/s) of every calibration row predicted out of sample
(its own source left out of the fit), by GPU generation (the architecture's first word) and
precision. The rule (RULE below) follows from stated principles, not from the rows: no parameter
was adjusted to move the coverage (the alternatives measured are reported in docs/accuracy.md):
  - rank rule (split conformal): with residual weights summing to W, P90 is the smallest residual
    whose cumulative weight reaches 0.9 (W + 1), P10 the mirror from the top; with unit weights
    that is the ceil(0.9 (n + 1))-th order statistic. Under exchangeable rows each tail then
    misses at most 10%, so P10-P90 covers at least 80% of new rows, at most 80% + 2/(n + 1).
    P50 is the weighted median.
  - shrinkage: a group's own residuals weigh 1 each; every other row of the pool together weighs
    PRIOR_ROWS (spread evenly), so a group of 2 rows is mostly the pooled distribution and a group
    of 35 mostly its own. PRIOR_ROWS = 9, the fewest rows for which the rank rule gives a finite
    P10 and P90: the pooled prior counts as one minimal sample.
  - a generation with no measured row: the pooled distribution (every row, unit weights, rank
    rule) with its spread about the median multiplied by UNMEASURED_WIDEN (an assumption, checked
    against the rows the estimator predicts with its shared default efficiency: Ada, Gaudi), and on
    each side no narrower than any measured group (an unmeasured generation is not better known).
Coverage (issue 16 target 70-90%): strict leave-one-source-out: each source's rows are scored
against a distribution derived as above without that source (its rows, its residuals and its
influence on the other rows' refits all removed); and the shipped distribution on every row.

Prices: the spread of the catalog's own quote bands (`usd_range` of purchase records, each a
low-high band a source printed), by confidence grade: medium and low take the median band width of
their grade, high the narrowest band any quote shows; a lower grade is never narrower than a
higher one. A band is read as P10-P90 in log price (advisor/data/uncertainty.py price_dist).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import accuracy  # noqa: E402  (bench/accuracy.py: calibration rows, predictions, leave-one-source-out)
import yaml  # noqa: E402
from uncertainty_residuals import family, strict_residuals  # noqa: E402
from uncertainty_serving import serving_section  # noqa: E402

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.perf import params_from  # noqa: E402

PRIOR_ROWS = 9.0  # weight of the pooled residuals in a group's distribution (the rank rule's minimum n)
UNMEASURED_WIDEN = 2.0  # assumption: a generation with no measured run gets the pooled spread x 2
HEADER = (
    "# Error distributions behind plan ranges, deadlines at a confidence and the robustness verdict.\n"
    "# GENERATED: do not edit by hand; derivation in bench/uncertainty.py and docs/model.md (uncertainty).\n"
)
LEVELS = (0.1, 0.5, 0.9)
MARK_BEGIN, MARK_END = "<!-- uncertainty:begin -->", "<!-- uncertainty:end -->"
RULE = [
    "e = log(measured / predicted tokens/s), each row predicted with its own source left out of the estimator's fit",
    "groups: GPU generation (architecture's first word) x precision; a precision with no group takes its generation",
    "rank rule: P90 = smallest e whose cumulative weight reaches 0.9 (W + 1), P10 the mirror, P50 the weighted "
    "median (unit weights: the ceil(0.9 (n + 1))-th order statistic; split-conformal, >= 80% coverage if exchangeable)",
    f"shrinkage: the group's rows weigh 1 each, all other rows together weigh {PRIOR_ROWS:g} (the rank rule's "
    "minimum n), spread evenly",
    f"no measured run of the generation: every row pooled (unit weights, rank rule), spread about the median "
    f"x {UNMEASURED_WIDEN:g} (assumption), and on each side no narrower than any measured group",
]


def rank_quantiles(pairs: list[tuple[float, float]]) -> dict:
    """P10/P50/P90 of weighted residuals by the conformal rank rule (module docstring)."""

    def upper(ps, q, plus_one=True):
        total = sum(w for _, w in ps) + (1.0 if plus_one else 0.0)
        acc = 0.0
        for v, w in sorted(ps):
            acc += w
            if acc >= q * total - 1e-9:
                return v
        return math.inf  # fewer rows than the rule needs: callers never pass so few

    q90 = upper(pairs, 0.9)
    q10 = -upper([(-v, w) for v, w in pairs], 0.9)
    q50 = upper(pairs, 0.5, plus_one=False)
    # stored to 4 decimals, rounded outwards so the interval still holds the order statistics it is made of
    return {"q10": math.floor(q10 * 1e4) / 1e4, "q50": round(q50, 4), "q90": math.ceil(q90 * 1e4) / 1e4}


def shrunk(res: list[dict], mine, prior: float = PRIOR_ROWS) -> dict:
    """A group's distribution: its own rows (weight 1) plus every other row (PRIOR_ROWS in all)."""
    own = [x["e"] for x in res if mine(x)]
    other = [x["e"] for x in res if not mine(x)]
    pairs = [(v, 1.0) for v in own] + [(v, prior / len(other)) for v in other]
    return rank_quantiles(pairs) | {"n": len(own)}


def distributions(res: list[dict], families: list[str], prior: float = PRIOR_ROWS) -> dict:
    """{'pooled', 'families': {family: ...}, 'groups': {family/precision: ...}, 'unmeasured'} from
    residuals [{'family', 'precision', 'e'}]."""
    pooled = rank_quantiles([(x["e"], 1.0) for x in res]) | {"n": len(res)}
    fams, groups = {}, {}
    for f in sorted({x["family"] for x in res}):
        fams[f] = shrunk(res, lambda x, f=f: x["family"] == f, prior) | {
            "basis": f"{f} rows + every other row as a prior of {prior:g} rows"
        }
        for p in sorted({x["precision"] for x in res if x["family"] == f}):
            groups[f"{f}/{p}"] = shrunk(res, lambda x, f=f, p=p: (x["family"], x["precision"]) == (f, p), prior) | {
                "basis": f"{f} {p} rows + every other row as a prior of {prior:g} rows"
            }
    med = pooled["q50"]
    lo = min([med - UNMEASURED_WIDEN * (med - pooled["q10"])] + [g["q10"] for g in groups.values()])
    hi = max([med + UNMEASURED_WIDEN * (pooled["q90"] - med)] + [g["q90"] for g in groups.values()])
    unmeasured = {
        "q10": math.floor(1e4 * lo) / 1e4,
        "q50": med,
        "q90": math.ceil(1e4 * hi) / 1e4,
        "n": 0,
        "basis": f"assumption: every row pooled, spread x {UNMEASURED_WIDEN:g}, no narrower than any "
        f"measured group (no measured run of this generation: "
        f"{', '.join(f for f in families if f not in fams)})",
    }
    return {"pooled": pooled, "families": fams, "groups": groups, "unmeasured": unmeasured}


def lookup(dist: dict, fam: str, precision: str) -> dict:
    """As advisor/data/uncertainty.py speed_dist reads the file."""
    return dist["groups"].get(f"{fam}/{precision}") or dist["families"].get(fam) or dist["unmeasured"]


def _inside(d: dict, e: float) -> bool:
    return d["q10"] <= e <= d["q90"]


def _share(i: int, n: int) -> str:
    return f"{i}/{n} = {100 * i / n:.0f}%"


def coverage(res: list[dict], families: list[str], prior: float = PRIOR_ROWS) -> dict:
    """Strict leave-one-source-out and in-sample coverage of P10-P90, overall, by group and by source
    (another `prior` weight shows the coverage does not hang on it)."""
    shipped = distributions([x | {"e": x["outer"]} for x in res], families, prior)
    tally: dict = {"strict": {}, "in_sample": {}}
    for src in sorted({x["group"] for x in res}):
        dist = distributions([x | {"e": x["inner"][src]} for x in res if x["group"] != src], families, prior)
        for x in res:
            if x["group"] != src:
                continue
            for kind, d in (("strict", dist), ("in_sample", shipped)):
                hit = _inside(lookup(d, x["family"], x["precision"]), x["outer"])
                for k in ("all", f"group {x['family']}/{x['precision']}", f"source {src}"):
                    i, n = tally[kind].get(k, (0, 0))
                    tally[kind][k] = (i + hit, n + 1)
    out = {}
    for kind, t in tally.items():
        out[kind] = {
            "all": _share(*t["all"]),
            "by_group": {k[6:]: _share(*v) for k, v in t.items() if k.startswith("group ")},
            "by_source": {k[7:]: f"{v[0]}/{v[1]}" for k, v in t.items() if k.startswith("source ")},
        }
    return out


def default_check(res: list[dict], dist: dict) -> str:
    """How the rows predicted with the estimator's shared default efficiency (generations other than
    the fitted ones) sit in the unmeasured-generation interval: the check on UNMEASURED_WIDEN."""
    fitted_generations = getattr(accuracy, "GENERATIONS_FITTED", ("ampere", "hopper"))
    rows = [x for x in res if x["family"] not in fitted_generations]
    u = dist["unmeasured"]
    inside = sum(_inside(u, x["outer"]) for x in rows)
    fitted = [abs(x["outer"]) for x in res if x["family"] in fitted_generations]
    others = [abs(x["outer"]) for x in rows]
    if not rows:
        return "no row is predicted with the shared default efficiency"
    return (
        f"{inside}/{len(rows)} rows predicted with the shared default efficiency "
        f"({', '.join(sorted({x['family'] for x in rows}))}) fall inside it; their median |e| "
        f"{statistics.median(others):.3f} vs {statistics.median(fitted):.3f} on the fitted generations"
    )


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
        out[grade] = {"log_width": round(width, 4), "bands": [f"{g} {w:.3f}" for g, w in bands[grade]], "basis": basis}
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
    ap.add_argument("--residuals", help="JSON file: reuse the nested residuals if it exists, else write them there")
    ap.add_argument("--serving-only", action="store_true", help="rewrite only the serving block (seconds)")
    args = ap.parse_args(argv)
    if args.timing:
        print(timing())
        return 0
    catalog = load_catalog()
    if args.serving_only:  # the serving block reads only catalog/serving_accuracy.yaml; the rest kept as it is
        doc = yaml.safe_load(Path(args.out).read_text(encoding="utf-8"))
        doc["serving"] = serving_section(catalog, distributions)
        Path(args.out).write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, width=110), encoding="utf-8")
        return 0
    cache = Path(args.residuals) if args.residuals else None
    if cache and cache.exists():
        res = json.loads(cache.read_text(encoding="utf-8"))
    else:
        res = strict_residuals(accuracy.load_rows(), catalog, params_from(catalog))
        if cache:
            cache.write_text(json.dumps(res, indent=0, sort_keys=True), encoding="utf-8")
    fams = sorted({family(catalog, g) for g in catalog.gpus})
    dist = distributions([x | {"e": x["outer"]} for x in res], fams)
    cov = coverage(res, fams)
    prior_check = {f"{k:g} rows": coverage(res, fams, k)["strict"]["all"] for k in (2 * PRIOR_ROWS, 4 * PRIOR_ROWS)}
    doc = {
        "schema_version": 1,
        "generated_by": "python bench/uncertainty.py --out catalog/uncertainty.yaml --report docs/accuracy.md",
        "speed": {
            "quantity": "log(measured / estimated tokens/s); real speed = estimate x exp(q)",
            "source": "catalog/calibration.csv predicted out of sample: each row by the estimator refitted without "
            "its own source (bench/accuracy.py, bench/uncertainty_residuals.py)",
            "derived": RULE + [f"check of the default: {default_check(res, dist)}"],
            "prior_rows": PRIOR_ROWS,
            "rows": len(res),
            "coverage_p10_p90": {
                "strict_leave_one_source_out": cov["strict"]["all"],
                "in_sample": cov["in_sample"]["all"],
                "strict_by_group": cov["strict"]["by_group"],
                "strict_by_source": cov["strict"]["by_source"],
                "in_sample_by_group": cov["in_sample"]["by_group"],
                "strict_with_other_prior_weights": prior_check,
            },
            **dist,
        },
        "price": {
            "quantity": "log(real price / catalog price); a grade's log_width is its P10-P90 band",
            "source": "the usd_range bands of catalog/gpus.yaml price records, by confidence",
            "derived": [
                "medium and low: the median width of that grade's quote bands; high: the narrowest band any "
                "quote shows (a high-confidence price is a vendor or catalog figure)",
                "a lower grade is never narrower than a higher one; a price without a grade is read as low",
            ],
            "rule": "a record with its own usd_range uses it as P10-P90 (a side where the point sits at the band's "
            "end takes half the grade's width); others take the grade's width centred on the point. "
            "A plan's own cost draws each rented offer at its own band (its confidence, centred on its rate); "
            "a re-solve at a GPU type's price reads the weakest grade of its cheapest on-demand and serving "
            "offers; server prices are not varied",
            "by_confidence": price_spreads(catalog),
        },
        "serving": serving_section(catalog, distributions),
    }
    Path(args.out).write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, width=110), encoding="utf-8")
    print(
        f"wrote {args.out}: P10-P90 coverage strict leave-one-source-out {cov['strict']['all']}, "
        f"in-sample {cov['in_sample']['all']}"
    )
    if args.report:
        write_report(Path(args.report), doc)
    return 0


def write_report(path: Path, doc: dict) -> None:
    s = doc["speed"]
    c = s["coverage_p10_p90"]
    lines = [
        MARK_BEGIN,
        "",
        "| speed distribution | n | P10 | P50 | P90 | strict coverage | in-sample coverage |",
        "|---|---|---|---|---|---|---|",
    ]
    for k, v in list(s["groups"].items()) + [("no measured run (default)", s["unmeasured"])]:
        lines.append(
            f"| {k} | {v['n']} | {_pct(v['q10'])} | {_pct(v['q50'])} | {_pct(v['q90'])} | "
            f"{c['strict_by_group'].get(k, '-')} | {c['in_sample_by_group'].get(k, '-')} |"
        )
    lines += [
        "",
        (
            f"Coverage of P10-P90 (measured speed inside the interval): strict leave-one-source-out "
            f"{c['strict_leave_one_source_out']}, in-sample (the shipped distribution) {c['in_sample']} "
            f"(strict, by source: {', '.join(f'{k} {v}' for k, v in c['strict_by_source'].items())})."
        ),
        "",
        "Strict coverage with the pooled prior weighing more: "
        + ", ".join(f"{k} {v}" for k, v in c["strict_with_other_prior_weights"].items())
        + ". Sources none of whose "
        "rows fall inside: "
        + (", ".join(f"{k} ({v})" for k, v in c["strict_by_source"].items() if v.startswith("0/")) or "none")
        + ".",
        "",
        "Derivation (the `derived:` notes of catalog/uncertainty.yaml):",
        "",
    ]
    lines += [f"- {note}" for note in s["derived"]]
    lines += ["", "| price confidence | P10-P90 width | basis |", "|---|---|---|"]
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
    from advisor.flow import plan
    from advisor.inputs.workload import load_workload
    from advisor.solve.milp import solve
    from advisor.solve.settings import SolveSettings

    lines = [
        "| example | solve() s | plan() without the check s | robustness check s | draws | check / plan() |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("article-office", "article-datacenter"):
        wl = load_workload(ROOT / "examples" / f"{name}.yaml")
        best = {"solve": 1e9, "plan": 1e9, "robust": 1e9}
        draws = 0
        for _ in range(repeats):
            t = time.perf_counter()
            p = plan(wl, as_of=dt.date(2026, 12, 1))
            total = time.perf_counter() - t
            assert p.problem is not None, f"{name} did not plan"
            t = time.perf_counter()
            sol = solve(p.problem)
            best["solve"] = min(best["solve"], time.perf_counter() - t)
            t = time.perf_counter()
            r = robustness(p.problem, sol, SolveSettings())
            assert r is not None
            draws = r["draws"]
            rob = time.perf_counter() - t
            best["robust"] = min(best["robust"], rob)
            best["plan"] = min(best["plan"], total - rob)
        lines.append(
            f"| {name} | {best['solve']:.3f} | {best['plan']:.2f} | {best['robust']:.2f} | {draws} | "
            f"{best['robust'] / best['plan']:.2f}x |"
        )
    return "\n".join(lines)


def _pct(q: float) -> str:
    return f"{100 * (math.exp(q) - 1):+.1f}%"


if __name__ == "__main__":
    sys.exit(main())
