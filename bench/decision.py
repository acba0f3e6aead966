"""The decision basis against the exact sample-average MILP, and the price of robustness of every
example (docs/model.md, "Decision"). Run by hand (minutes; the quantile MILPs are the slow part):

    python bench/decision.py [--out docs/model.md] [--quantile-limit 60]

1. Per example, the expected-basis plan (explain/decision.py: one re-solve at the draws' mean
   factors, kept when its mean over the scoring draws beats the point plan's by more than the gap
   and 2 standard errors) against the exact sample-average MILP on the decision's draws
   (explain/saa.py "mean": every draw's cost, owned energy / speed included): same first stage?
   mean cost over the SCORING_DRAWS draws the choice is made on.
2. Per small case, the p80 plan (candidates: point, expected, CVaR, draw optima, each GPU type
   alone) against the exact quantile MILP on the decision's draws (one binary per draw,
   time-limited): P80 over the scoring draws, and the same without the CVaR candidate.
3. Per example, the price of robustness (fresh draws) and whether the expected plan's mean on
   fresh draws is within the gap of the point plan's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.explain.decision import FRESH_DRAWS, SCORING_DRAWS, Option, PlanCost, decide, score  # noqa: E402
from advisor.explain.draws import joint_draws  # noqa: E402
from advisor.explain.ranges import SEED  # noqa: E402
from advisor.explain.saa import saa_plan  # noqa: E402
from advisor.flow import plan, prepare  # noqa: E402
from advisor.inputs.workload import parse_workload  # noqa: E402
from advisor.solve.constraints.gpu_count import held_counts  # noqa: E402
from advisor.solve.milp import solve  # noqa: E402
from advisor.solve.settings import SolveSettings  # noqa: E402

AS_OF = dt.date(2026, 12, 1)
MARK_BEGIN, MARK_END = "<!-- decision:begin -->", "<!-- decision:end -->"
# the constructed cases tests/test_decision.py checks (KNIFE, BAND), re-found there after issue 29's costs
KNIFE = {
    "name": "8x H100 for four years (constructed)",
    "deployment": {
        "context": "datacenter",
        "ownership": "any",
        "horizon_months": 48,
        "lead_time_days": 0,
        "rent_kinds": ["on_demand"],
    },
    "model": "mpt-7b",
    "tokens": "8.0T",
    "deadline": "1460d",
    "gpus": {"allow": ["h100-sxm"], "count": 8},
}
BAND_JOB = {
    "name": "4 workstation GPUs, one price at the bottom of its band (constructed)",
    "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
    "model": "llama-3-8b",
    "kind": "finetune",
    "tokens": "2B",
    "deadline": "14d",
    "gpus": {"allow": ["rtx-a6000", "rtx-6000-ada"]},
}
# the RTX A6000's purchase price quoted at the bottom of a $5,173-15,000 band
BAND = {
    "gpus": [
        {
            "id": "rtx-a6000",
            "prices": {
                "purchase": {
                    "usd": 5173,
                    "usd_range": [5173, 15000],
                    "confidence": "medium",
                    "as_of": "2026-11-20",
                    "kind": "quote",
                }
            },
        }
    ]
}
# the knife at 7.85T: buying saves ~$0.9K of $507K on the scoring draws, within their noise (2 standard
# errors ~$2.4K), so the point plan stands and the plan names the cheaper candidate
KNIFE_EDGE = {**KNIFE, "name": "8x H100 for four years, the knife's edge (constructed)", "tokens": "7.85T"}
SMALL = ["article-datacenter", "rent-vs-buy-3y", "continued-pretraining-8x", "team-fleet", "knife", "band"]


def docs() -> dict[str, dict]:
    out = {f.stem: yaml.safe_load(f.read_text()) for f in sorted((ROOT / "examples").glob("*.yaml"))}
    out["knife"] = KNIFE
    out["knife-edge"] = KNIFE_EDGE
    out["band"] = BAND_JOB
    return out


def catalog_for(name: str):
    """The built-in catalog, or for the constructed `band` case the built-in with BAND over it."""
    from advisor.data.catalog import load_catalog

    if name != "band":
        return load_catalog()
    path = Path(tempfile.mkdtemp()) / "band.yaml"
    path.write_text(yaml.safe_dump(BAND))
    return load_catalog(path)


def on_scored(problem, plans: list) -> list:
    """Each plan's cost over SCORING_DRAWS draws (seed SEED) of the GPU types any of them uses: the exact
    MILP's plan, found on the decision's draws, judged on the draws the choice is made on."""
    costs = [PlanCost.of(problem, p) for p in plans]
    gpus = sorted(set().union(*(c.gpus() for c in costs)))
    draws = joint_draws(problem, SCORING_DRAWS, SEED, gpus=gpus)
    return [c.at(draws) for c in costs]


def usd(x: float) -> str:
    return f"${x:,.0f}"


def expected_rows(cases: dict[str, dict]) -> list[str]:
    rows = [
        "| example | point plan | chosen (expected) | expected cost | point plan's expected cost | "
        "price of robustness (fresh draws) | best candidate vs exact SAA MILP (same plan? mean) | chosen vs exact |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, doc in cases.items():
        catalog = catalog_for(name)
        p = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain="none")
        d = p.get("decision")
        if d is None:
            rows.append(f"| {name} | no plan | | | | | |")
            continue
        problem = prepare(parse_workload(doc), catalog, as_of=AS_OF)
        s = SolveSettings()
        dec = decide(problem, solve(problem, settings=s), s)
        held = held_counts(problem, dec.options[0].sol)  # as the decision's CVaR grades each rent
        exact = saa_plan(problem, dec.draws, "mean", time_limit=60, held=held)
        costs = on_scored(problem, [o.sol for o in dec.options] + [dec.chosen] + ([exact] if exact else []))
        mine = costs[len(dec.options)].mean()
        i = min(range(len(dec.options)), key=lambda k: costs[k].mean())
        top, best = dec.options[i], costs[i].mean()
        ref = costs[-1].mean() if exact is not None else float("nan")
        same = exact is not None and Option.of(problem, "", exact).first_stage == top.first_stage
        point = ", ".join(f"{x['count']}× {x['gpu']} ({x['ownership']})" for x in d["point_optimal"]["purchase"])
        chosen = ", ".join(f"{i['count']}× {i['gpu']} ({i['ownership']})" for i in p["purchase"])
        rows.append(
            f"| {name} | {point} | {'same' if chosen == point else chosen} | {usd(d['expected_cost_usd'])} | "
            f"{usd(d['point_optimal']['expected_cost_usd'])} | {usd(d['price_of_robustness_usd'])} | "
            f"{'yes' if same else 'no'}, {100 * (best - ref) / ref:+.3f}% | {100 * (mine - ref) / ref:+.3f}% |"
        )
    return rows


def quantile_rows(cases: dict[str, dict], limit: float) -> list[str]:
    rows = [
        "| case | p80 plan (candidates) | its P80 | best candidate's P80 | without the CVaR candidate | "
        "exact quantile MILP (P80, proven?, s) | candidates' s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in SMALL:
        doc = {**cases[name], "decision": "p80"}
        problem = prepare(parse_workload(doc), catalog_for(name), as_of=AS_OF)
        s = SolveSettings()
        t = time.process_time()
        dec = decide(problem, solve(problem, settings=s), s)
        took = time.process_time() - t
        held = held_counts(problem, dec.options[0].sol)  # as the decision's CVaR grades each rent
        exact = saa_plan(problem, dec.draws, "quantile", 0.8, time_limit=limit, gap=0.01, held=held)
        exact_s = time.process_time() - t - took
        costs = on_scored(problem, [o.sol for o in dec.options] + [dec.chosen] + ([exact] if exact else []))
        scores = {o.label: score(c, "p80") for o, c in zip(dec.options, costs)}
        mine = score(costs[len(dec.options)], "p80")
        without = min(v for k, v in scores.items() if "CVaR" not in k)
        best = min(scores.values())
        ref = score(costs[-1], "p80") if exact is not None else float("nan")
        proven = exact.solver.get("proven_optimal") if exact is not None else None
        rows.append(
            f"| {name} | {dec.chosen_option.label} | {usd(mine)} ({100 * (mine - ref) / ref:+.1f}% vs exact) | "
            f"{usd(best)} ({100 * (best - ref) / ref:+.1f}%) | "
            f"{usd(without)} ({100 * (without - ref) / ref:+.1f}%) | {usd(ref)}, {proven}, {exact_s:.1f} | "
            f"{took:.2f} |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="rewrite the decision block of this Markdown file (docs/model.md)")
    ap.add_argument("--quantile-limit", type=float, default=60.0, help="seconds for each exact quantile MILP")
    args = ap.parse_args(argv)
    cases = docs()
    lines = [
        f"Measured by `python bench/decision.py` ({dt.date.today().isoformat()}; candidates found on 200 draws "
        f"(seed {SEED}), chosen among and costed on {SCORING_DRAWS:,} (seed {SEED}); fresh draws {FRESH_DRAWS:,}, "
        "seed 61; prices as of 2026-12-01; the exact MILPs solved on the 200 draws, judged on the "
        f"{SCORING_DRAWS:,}).",
        "",
        "Expected basis, every example:",
        "",
        *expected_rows(cases),
        "",
        f"P80 basis on small cases against the exact quantile MILP (1% gap, {args.quantile_limit:g} s limit):",
        "",
        *quantile_rows(cases, args.quantile_limit),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        path = Path(args.out)
        doc = path.read_text(encoding="utf-8")
        a, b = doc.index(MARK_BEGIN) + len(MARK_BEGIN), doc.index(MARK_END)
        path.write_text(doc[:a] + "\n" + text + doc[b:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
