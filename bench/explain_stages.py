"""Serial CPU of each explanation stage of a fleet plan (issue 19): `python bench/explain_stages.py
200 --out x.json`, or `--root DIR` to time another checkout of the code (before/after).

bench/explain_cost.py times assemble() as shipped, on two cores, where the price and speed
bisections and the robustness draws share one queue and their CPU lands in either process. This
runs the same stages one after another in one process, with the settings assemble gives them
(1% gap, 10 s limit per re-solve), so each stage's CPU and re-solve count stand alone: the
alternatives, the price break-evens, both speed bisections, the marginal values and the
robustness verdict (its model built, then every draw). --out keeps the claims, to compare two
versions of the code."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("jobs", type=int)
    ap.add_argument("--out")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose advisor package is timed")
    args = ap.parse_args()
    sys.path[:0] = [args.root, str(Path(args.root) / "bench")]
    from solve import fleet

    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.explain.alternatives import alternatives
    from advisor.explain.ranges import speed_tasks
    from advisor.explain.robustness import Verdict
    from advisor.explain.sensitivity import break_even, marginal_values
    from advisor.flow import prepare
    from advisor.inputs.workload import load_workload
    from advisor.solve import milp
    from advisor.solve.settings import SolveSettings

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(fleet(args.jobs), f)
    pr = prepare(load_workload(f.name), load_catalog(), load_rules(), dt.date(2026, 12, 1))
    os.unlink(f.name)
    t = time.process_time()
    plan_settings = SolveSettings(time_limit=30.0)
    sol = milp.solve(pr, settings=plan_settings)
    row: dict = {"jobs": args.jobs, "solve_cpu": round(time.process_time() - t, 2)}
    explaining = plan_settings.explaining(pr)  # the settings assemble gives the explanations' re-solves
    tally = explaining.tally
    assert tally is not None
    cpu: dict[str, float] = {}
    solves: dict[str, int] = {}

    def timed(name, fn):
        n, t = tally.solves, time.process_time()
        try:
            return fn()
        finally:
            cpu[name] = cpu.get(name, 0.0) + time.process_time() - t
            solves[name] = solves.get(name, 0) + tally.solves - n

    alts = timed("alternatives", lambda: alternatives(pr, sol, explaining))
    price = timed("price break-evens", lambda: break_even(pr, sol, alts, explaining))
    speed = [timed("speed break-evens", task) for task in speed_tasks(pr, sol, alts, explaining)]
    marginal = timed("marginal values", lambda: marginal_values(pr, sol, explaining))
    verdict = timed("robustness", lambda: Verdict(pr, plan_settings))
    robustness = timed("robustness", lambda: verdict.verdict(sol))
    row.update(
        stages_cpu={k: round(v, 2) for k, v in cpu.items()},
        explain_cpu=round(sum(cpu.values()), 2),
        solves=solves,
        draws=robustness["draws"],
        load=round(os.getloadavg()[0], 2),
    )
    print(json.dumps(row, indent=1))
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {"row": row, "price": price, "speed": speed, "marginal": marginal, "robustness": robustness},
                indent=1,
                sort_keys=True,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
