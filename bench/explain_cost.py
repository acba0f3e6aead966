"""CPU cost of a fleet plan's explanations (issue 19): `python bench/explain_cost.py 200 --out x.json`.

Prepares the fleet drawn by bench/solve.py (seed 7), solves it, then assembles the plan with every
explanation, counting PuLP model builds and HiGHS runs and timing each explanation stage (CPU s).
Writes the break-evens and speed sensitivities to --out, to compare two versions of the code."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("jobs", type=int)
    ap.add_argument("--out")
    ap.add_argument("--time-limit", type=float, default=30.0)
    args = ap.parse_args()
    import highspy
    from solve import fleet

    import advisor.assemble as assemble_mod
    import advisor.explain.alternatives as alt_mod
    import advisor.explain.ranges as ranges_mod
    import advisor.explain.robustness as rob_mod
    import advisor.explain.sensitivity as sens_mod
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.flow import prepare
    from advisor.inputs.workload import load_workload
    from advisor.solve import milp
    from advisor.solve.model import Model
    from advisor.solve.settings import SolveSettings

    counts = {"pulp_builds": 0, "highs_runs": 0}
    build, run = Model.variables, highspy.Highs.run  # every model build declares its variables once

    def counted_build(self):
        counts["pulp_builds"] += 1
        return build(self)

    def counted_run(self, *a, **k):
        counts["highs_runs"] += 1
        return run(self, *a, **k)

    Model.variables, highspy.Highs.run = counted_build, counted_run
    stages: dict[str, float] = {}
    runs: dict[str, int] = {}
    builds: dict[str, int] = {}

    walls: dict[str, float] = {}

    def timed(mod, name, key):
        fn = getattr(mod, name)

        def wrapper(*a, **k):
            t, n, b = time.process_time(), counts["highs_runs"], counts["pulp_builds"]
            w = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                stages[key] = stages.get(key, 0.0) + time.process_time() - t
                walls[key] = walls.get(key, 0.0) + time.perf_counter() - w
                runs[key] = runs.get(key, 0) + counts["highs_runs"] - n
                builds[key] = builds.get(key, 0) + counts["pulp_builds"] - b

        setattr(mod, name, wrapper)

    timed(assemble_mod, "alternatives", "alternatives")
    timed(assemble_mod, "break_even", "break_even")
    timed(assemble_mod, "marginal_values", "marginal")
    if hasattr(assemble_mod, "speed_sensitivity"):
        timed(assemble_mod, "speed_sensitivity", "speed")
    else:  # on two cores (solve/parallel.py): speed bisections run as tasks beside the price ones
        timed(assemble_mod._Explained, "_sensitivity", "sensitivity (price, marginal, speed)")
    timed(assemble_mod, "plan_ranges", "ranges+robustness")
    del alt_mod, ranges_mod, rob_mod, sens_mod
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(fleet(args.jobs), f)
    wl = load_workload(f.name)
    os.unlink(f.name)
    cat, rules = load_catalog(), load_rules()
    t = time.process_time()
    pr = prepare(wl, cat, rules, dt.date(2026, 12, 1))
    cand = time.process_time() - t
    t = time.process_time()
    settings = SolveSettings(time_limit=args.time_limit)
    sol = milp.solve(pr, settings=settings)
    solve_cpu = time.process_time() - t
    before = dict(counts)
    t, w = time.process_time(), time.perf_counter()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = assemble_mod.assemble(pr, sol, settings)
    explain_cpu, explain_wall = time.process_time() - t, time.perf_counter() - w
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    children_cpu = now.ru_utime + now.ru_stime - kids.ru_utime - kids.ru_stime
    row = {
        "jobs": args.jobs,
        "candidates_cpu": round(cand, 2),
        "solve_cpu": round(solve_cpu, 2),
        "status": sol.status,
        "gap": sol.solver.get("gap"),
        "explain_cpu": round(explain_cpu, 2),
        "explain_children_cpu": round(children_cpu, 2),
        "explain_wall": round(explain_wall, 2),
        "parallel": os.environ.get("GPU_ADVISOR_PARALLEL", "auto"),
        "stages": {k: round(v, 2) for k, v in stages.items()},
        "stage_walls": {k: round(v, 2) for k, v in walls.items()},
        "highs_runs": runs,
        "pulp_builds": builds,
        "explain_pulp_builds": counts["pulp_builds"] - before["pulp_builds"],
        "explain_highs_runs": counts["highs_runs"] - before["highs_runs"],
        "explanation_solves": p["solver"]["explanations"]["solves"],
        "approximate": p["solver"]["explanations"]["approximate"],
        "load": os.getloadavg()[0],
    }
    print(json.dumps(row, indent=1))
    if args.out:
        sens = p["sensitivity"]
        Path(args.out).write_text(
            json.dumps(
                {
                    "row": row,
                    "break_even": sens["break_even"],
                    "marginal": sens["marginal"],
                    "speed": sens.get("speed"),
                    "cost": p["total_cost_usd"],
                    "robustness": p["robustness"],
                },
                indent=1,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
