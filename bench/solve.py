"""Solver benchmark (run by hand): plan time for fleets of 10, 200 and 1,000 jobs over every
catalog GPU, our formulation against a naive one, plus the article example's whole-CLI time.

    python bench/solve.py [--sizes 10 200 1000] [--naive-limit 120] [--out docs/performance.md]

Our formulation: identical jobs aggregated into classes, dominated candidates removed, fleet
binaries per (GPU type, count). The naive one: one binary per (job, candidate) and N[g] >= the
GPUs of each job, same candidates, same costs. Results are written to docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pulp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.data.rules import load_rules  # noqa: E402
from advisor.flow import prepare  # noqa: E402
from advisor.inputs.units import HOURS_PER_MONTH  # noqa: E402
from advisor.inputs.workload import parse_workload  # noqa: E402
from advisor.solve.milp import solve  # noqa: E402
from advisor.solve.rows import safe  # noqa: E402
from advisor.solve.run import quiet_stdout as _quiet_stdout  # noqa: E402
from advisor.solve.settings import SolveSettings  # noqa: E402

AS_OF = dt.date(2026, 12, 1)
MODELS = ["gpt2-124m", "gpt2-350m", "gpt2-774m", "gpt2-1558m", "llama-3-8b"]
TOKENS = ["1B", "5B", "20B", "50B"]
DEADLINES = ["2d", "7d", "14d", "30d"]
KINDS = ["pretrain", "finetune", "lora"]


def fleet(n: int, seed: int = 7) -> dict:
    """A deterministic fleet of n jobs drawn from a realistic mix, bought for a datacenter whose
    hardware is in hand (lead_time_days: 0: the deadlines, 2 to 30 days, count from its arrival; with
    the catalog's 10-30 week lead times nothing bought would meet them)."""
    rng = random.Random(seed)
    jobs = []
    for i in range(n):
        model = rng.choice(MODELS)
        kind = rng.choice(KINDS) if model == "llama-3-8b" else rng.choice(KINDS[:2])
        jobs.append(
            {
                "name": f"job-{i:04d}",
                "model": model,
                "kind": kind,
                "tokens": rng.choice(TOKENS[:2] if model == "llama-3-8b" else TOKENS),
                "deadline": rng.choice(DEADLINES),
            }
        )
    return {
        "name": f"fleet of {n}",
        "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
        "jobs": jobs,
    }


def naive(problem, time_limit: float) -> tuple[float, float | None, float | None, str]:
    """Per-job binaries over the same candidates (no classes, no dominance pruning)."""
    prob = pulp.LpProblem("naive", pulp.LpMinimize)
    months = problem.costs.horizon_hours / HOURS_PER_MONTH
    jobs = []
    per_server = {g: max(s.slots for s in opts) for g, opts in problem.servers.items() if opts}
    network = {
        g: max((s.network_usd for s in opts if s.network_usd is not None), default=None)
        for g, opts in problem.servers.items()
        if opts
    }
    for k, cls in enumerate(problem.classes):
        usable = [
            c
            for c in problem.candidates[k]
            if (cls.deadline is None or c.hours <= cls.deadline)
            and not (c.ownership == "buy" and c.count > per_server.get(c.gpu, 10**9) and network.get(c.gpu) is None)
        ]
        jobs += [(cls, usable)] * cls.multiplicity
    x = {
        (j, i): prob.add_variable(f"x_{j}_{i}", cat="Binary") for j, (_, cs) in enumerate(jobs) for i in range(len(cs))
    }
    owned = sorted({c.gpu for _, cs in jobs for c in cs if c.ownership == "buy"})
    N = {g: prob.add_variable(f"N_{safe(g)}", lowBound=0, cat="Integer") for g in owned}
    terms, kw = [], []
    for g in owned:
        terms.append(problem.unit_price[g] * N[g])
        kw.append(problem.gpu_kw[g] * N[g])
        opts = problem.servers.get(g, [])
        if opts:
            S = {s.id: prob.add_variable(f"S_{safe(g)}_{safe(s.id)}", lowBound=0, cat="Integer") for s in opts}
            terms += [s.price_usd * S[s.id] for s in opts]
            kw += [s.overhead_kw * S[s.id] for s in opts]
            slots = pulp.lpSum(s.slots * S[s.id] for s in opts)
            prob += (N[g] == slots) if all(s.filled for s in opts) else (N[g] <= slots)
            if network.get(g) is not None:
                W = prob.add_variable(f"W_{safe(g)}", lowBound=0, cat="Integer")
                prob += W <= pulp.lpSum(S.values())
                terms.append(network[g] * W)
                for j, (_, cs) in enumerate(jobs):
                    for i, c in enumerate(cs):
                        if c.gpu == g and c.ownership == "buy" and c.count > per_server[g]:
                            prob += W >= math.ceil(c.count / per_server[g]) * x[j, i]
    run = pulp.lpSum(c.run_cost_usd * x[j, i] for j, (_, cs) in enumerate(jobs) for i, c in enumerate(cs))
    prob += pulp.lpSum(terms) + problem.costs.hosting_usd_per_kw_month * months * pulp.lpSum(kw) + run
    for j, (_, cs) in enumerate(jobs):
        prob += pulp.lpSum(x[j, i] for i in range(len(cs))) == 1
        for g in owned:
            need = [c.count * x[j, i] for i, c in enumerate(cs) if c.gpu == g and c.ownership == "buy"]
            if need:
                prob += N[g] >= pulp.lpSum(need)
    levels = sorted({cls.deadline or problem.costs.horizon_hours for cls, _ in jobs})
    for g in owned:
        for level in levels:
            use = [
                c.gpu_hours * x[j, i]
                for j, (cls, cs) in enumerate(jobs)
                for i, c in enumerate(cs)
                if c.gpu == g and c.ownership == "buy" and (cls.deadline or problem.costs.horizon_hours) <= level
            ]
            if use:
                prob += pulp.lpSum(use) <= level * N[g]
    start = time.perf_counter()
    with _quiet_stdout():
        prob.solve(pulp.HiGHS(msg=False, timeLimit=time_limit, threads=1, random_seed=0))
    seconds = time.perf_counter() - start
    status = {1: "optimal", 2: "feasible (time limit)", 0: "no solution (time limit)", -1: "infeasible"}.get(
        prob.sol_status, str(prob.sol_status)
    )
    value = pulp.value(prob.objective) if prob.sol_status in (1, 2) else None
    try:
        gap = float(prob.solverModel.getInfo().mip_gap) if prob.sol_status in (1, 2) else None
    except Exception:
        gap = None
    return seconds, value, gap, status


def cli_seconds(runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "advisor", "plan", str(ROOT / "examples/article-office.yaml")],
            check=True,
            capture_output=True,
            cwd="/",
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 200, 1000])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--naive-limit", type=float, default=120.0)
    ap.add_argument("--out", default=str(ROOT / "docs/performance-naive.md"))  # bench/perf.py writes performance.md
    args = ap.parse_args()
    catalog, rules = load_catalog(), load_rules()
    rows = []
    for n in args.sizes:
        wl = parse_workload(fleet(n))
        t0 = time.perf_counter()
        problem = prepare(wl, catalog, rules, AS_OF)
        t_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        sol = solve(problem, settings=SolveSettings(time_limit=args.time_limit))
        t_solve = time.perf_counter() - t0
        cands = sum(len(c) for c in problem.candidates)
        nv = naive(problem, args.naive_limit)
        rows.append(
            {
                "jobs": n,
                "classes": len(problem.classes),
                "gpus": len(problem.considered),
                "candidates": cands,
                "build_s": t_build,
                "solve_s": t_solve,
                "cost": sol.objective_usd,
                "status": sol.status,
                "gap": sol.solver.get("gap"),
                "naive_s": nv[0],
                "naive_cost": nv[1],
                "naive_gap": nv[2],
                "naive_status": nv[3],
            }
        )
        print(rows[-1], flush=True)
    cli = cli_seconds()
    print(f"article example, whole CLI: {cli:.3f} s (median of 5)")
    write(args.out, rows, cli, args)


def fmt(x, digits=2):
    return "n/a" if x is None else (f"{x:,.{digits}f}" if isinstance(x, float) else str(x))


def write(path, rows, cli, args):
    lines = [
        "# Solver performance",
        "",
        f"Measured by `python bench/solve.py` on {dt.date.today().isoformat()}: {platform.processor() or platform.machine()}, "
        f"{__import__('os').cpu_count()} cores, Python {platform.python_version()}, PuLP {pulp.__version__}, "
        "HiGHS (highspy) with one thread. Fleets are drawn deterministically (seed 7) from GPT-2 124M-1.5B and "
        "Llama 3 8B pretrain/fine-tune/LoRA jobs with 1B-50B tokens and 2-30 day deadlines, deployed in a "
        "datacenter, buy or rent, over every GPU in the catalog.",
        "",
        f"Whole CLI on the article example (`advisor plan examples/article-office.yaml`, median of 5 runs, "
        f"including Python start-up and every explanation re-solve): **{cli:.3f} s** (target 0.5 s).",
        "",
        "| jobs | job classes | GPU types | candidates | build s | solve s | status | gap | total cost | naive solve s | naive status | naive gap |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['jobs']} | {r['classes']} | {r['gpus']} | {r['candidates']} | {fmt(r['build_s'])} | "
            f"{fmt(r['solve_s'])} | {r['status']} | {fmt(r['gap'], 4)} | ${fmt(r['cost'], 0)} | "
            f"{fmt(r['naive_s'])} | {r['naive_status']} | {fmt(r['naive_gap'], 4)} |"
        )
    lines += [
        "",
        f"Our solve has a {args.time_limit:g} s limit; the naive formulation {args.naive_limit:g} s. `build` is the "
        "candidate generation (rules and the performance model for every job class, GPU type and count); "
        "`solve` is the MILP. Targets: 200 jobs within 10 s, 1,000 jobs within a 1% proven gap in 60 s.",
        "",
        "What makes the difference: identical jobs become one class with an integer count instead of one "
        "binary per job; candidates another candidate of the same GPU and ownership dominates are removed "
        "before the model is built; fleet size is linked to job counts through one binary per (GPU type, "
        "count) rather than per job, which removes the symmetry between interchangeable jobs.",
        "",
    ]
    Path(path).write_text("\n".join(lines))


if __name__ == "__main__":
    main()
