"""The robustness draws' MILPs (solve/redraw.py), run by hand: per draw, the CPU seconds of its HiGHS run,
its branch-and-bound nodes, and the root LP gap (the optimum against the same model with every column
continuous: what the formulation's tightness decides), with each draw's purchase and objective so two
versions of the formulation can be checked to give the same plans.

    python bench/draw_gap.py examples/train-and-serve.yaml examples/serve-70b-datacenter.yaml [--json out.json]

Each draw is run as robustness() runs it (Verdict.draw: the plan's settings, the first plan as a start).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.data.catalog import load_catalog
from advisor.data.rules import load_rules
from advisor.explain.robustness import Verdict
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.settings import SolveSettings


def lp_bound(h: Any) -> float:
    """The draw's LP relaxation: the model as it stands with every column continuous."""
    import highspy

    lp = h.getLp()
    relaxed = highspy.Highs()
    relaxed.setOptionValue("output_flag", False)
    relaxed.setOptionValue("threads", 1)
    lp.integrality_ = []
    relaxed.passModel(lp)
    relaxed.run()
    return float(relaxed.getInfo().objective_function_value)


def one_example(path: str, draws: int | None) -> dict[str, Any]:
    problem = prepare(load_workload(path), load_catalog(), load_rules(), dt.date(2026, 12, 6))
    verdict = Verdict(problem, SolveSettings())
    rd = verdict.redraw
    assert rd.model is not None, "no HiGHS model to redraw"
    rows = []
    for i, sample in enumerate(verdict.samples[:draws]):
        rd._set_draw(*sample)
        t = time.process_time()
        answer = rd._run_draw()
        cpu = time.process_time() - t
        info = rd.h.getInfo()
        opt = float(info.objective_function_value)
        bound = lp_bound(rd.h)  # after the run: _set_draw left the model as the draw saw it
        rows.append(
            {
                "draw": i,
                "cpu_s": cpu,
                "nodes": int(info.mip_node_count),
                "objective": opt,
                "root_gap": (opt - bound) / abs(opt) if opt else 0.0,
                "purchase": None if answer is None else [list(x) for x in answer[1]],
                "proven": None if answer is None else answer[2],
            }
        )
    h = rd.h
    return {
        "example": Path(path).stem,
        "columns": h.getNumCol(),
        "rows": h.getNumRow(),
        "nonzeros": h.getNumNz(),
        "draws": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("examples", nargs="+")
    ap.add_argument("--draws", type=int, default=None, help="the first N draws only")
    ap.add_argument("--json", default=None, help="write every draw's figures here")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    out = []
    for path in args.examples:
        res = one_example(path, args.draws)
        out.append(res)
        d = res["draws"]
        cpu = [r["cpu_s"] for r in d]
        gaps = [r["root_gap"] for r in d]
        print(
            f"{res['example']}: {res['columns']} columns, {res['rows']} rows, {res['nonzeros']} nonzeros; "
            f"{len(d)} draws, CPU s per draw median {statistics.median(cpu):.4f} mean {statistics.mean(cpu):.4f} "
            f"total {sum(cpu):.2f}; nodes median {statistics.median(r['nodes'] for r in d):.0f}; "
            f"root LP gap median {100 * statistics.median(gaps):.1f}% mean {100 * statistics.mean(gaps):.1f}% "
            f"(draw 0 {100 * gaps[0]:.1f}%, draw 1 {100 * gaps[1] if len(gaps) > 1 else float('nan'):.1f}%)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
