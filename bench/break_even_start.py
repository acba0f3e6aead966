"""Price break-evens (explain/sensitivity.py break_even) re-solved cold and from the plan (solve/run.py
start_from), run by hand: CPU seconds of each way, median of `--runs`, and whether both give the same
entries (they must: the start changes where HiGHS's search begins, not the gap it proves).

    python bench/break_even_start.py examples/train-and-serve.yaml examples/serve-70b-datacenter.yaml
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.data.catalog import load_catalog
from advisor.data.rules import load_rules
from advisor.explain.sensitivity import break_even
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.milp import solve
from advisor.solve.settings import SolveSettings


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("examples", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    catalog, rules, settings = load_catalog(), load_rules(), SolveSettings()
    print(f"load average {os.getloadavg()[0]:.1f}; CPU s of break_even, median of {args.runs} (cold / from the plan)")
    for path in args.examples:
        problem = prepare(load_workload(path), catalog, rules, dt.date(2026, 12, 6))
        plan = solve(problem, None, settings)
        cold_plan = solve(problem, None, settings)
        cold_plan.columns = {}  # no start: every re-solve searches from nothing
        times: dict[str, list[float]] = {"cold": [], "warm": []}
        entries = {}
        for _ in range(args.runs):
            for way, sol in (("cold", cold_plan), ("warm", plan)):
                t = time.process_time()
                entries[way] = break_even(problem, sol, {}, settings)
                times[way].append(time.process_time() - t)
        cold, warm = (statistics.median(times[w]) for w in ("cold", "warm"))
        same = entries["cold"] == entries["warm"]
        print(
            f"{Path(path).stem}: {cold:.2f} -> {warm:.2f} s ({100 * (1 - warm / cold):.0f}% less), same entries: {same}"
        )


if __name__ == "__main__":
    main()
