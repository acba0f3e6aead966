"""CPU of the serving model's replica capacity (perf/serve_capacity.py `replica_capacity`: a bisection
over ~50 operating points per layout), the serving plans' candidate builder's inner loop, and a digest
of every result, so that two checkouts can be compared for speed and for the same bits (run by hand;
numbers in docs/performance.md#test-suite):

    python bench/replica_capacity.py                      # this checkout
    python bench/replica_capacity.py --against DIR        # and the checkout in DIR, alternated

The grid: every catalog GPU x 4 models (dense 8B and 405B, two mixtures of experts) x 5 layouts (TP 1,
2, 8; pipelines of 2 and 4 stages of 8) x 2 precisions x 4 request shapes and SLOs, at the 90th
percentile: 4,800 calls.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MODELS = ("llama-3-8b", "mixtral-8x7b", "deepseek-v3", "llama-3.1-405b")
LAYOUTS = ((1, 1), (2, 1), (8, 1), (8, 2), (8, 4))  # (TP, PP)
SHAPES = ((512, 256, 2000, 100), (2048, 512, None, 50), (1024, 1024, 500, None), (256, 128, None, None))


def measure() -> dict:
    """CPU seconds of the grid's replica_rate calls and the digest of their results' repr."""
    from advisor.data.catalog import load_catalog
    from advisor.perf.serving import hardware, replica_rate

    catalog = load_catalog()
    grid = [
        (model, hardware(gpu, catalog), tp, precision, i, o, ttft, tpot, 90, pp)
        for _, gpu in sorted(catalog.gpus.items())
        for model in MODELS
        for tp, pp in LAYOUTS
        for precision in ("bf16", "fp8")
        for i, o, ttft, tpot in SHAPES
    ]
    start = time.process_time()
    results = [repr(replica_rate(*args)) for args in grid]
    cpu = time.process_time() - start
    return {"calls": len(grid), "cpu_s": round(cpu, 3), "digest": hashlib.sha1("\n".join(results).encode()).hexdigest()}


def run_in(folder: Path) -> dict:
    """measure() in a fresh process importing the package from `folder`."""
    env = {**os.environ, "PYTHONPATH": str(folder)}
    out = subprocess.run([sys.executable, __file__, "--json"], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="a checkout of the code before, measured alternately")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one measurement of this process, as JSON")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure()))
        return
    here = Path(__file__).resolve().parent.parent
    folders = [("this", here)] + ([("against", args.against.resolve())] if args.against else [])
    runs: dict[str, list[dict]] = {name: [] for name, _ in folders}
    for _ in range(args.rounds):
        for name, folder in folders:
            runs[name].append(run_in(folder))
    for name, rows in runs.items():
        cpus = sorted(r["cpu_s"] for r in rows)
        print(f"{name}: {rows[0]['calls']} calls, CPU median {cpus[len(cpus) // 2]:.3f} s, digest {rows[0]['digest']}")
    digests = {r["digest"] for rows in runs.values() for r in rows}
    print("same results" if len(digests) == 1 else "RESULTS DIFFER")


if __name__ == "__main__":
    main()
