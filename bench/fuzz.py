"""Fuzz `advisor plan` with 10,000 random workload documents; run by hand, results in docs/fuzz.md.

    python bench/fuzz.py                       # 10,000 examples on every CPU
    python bench/fuzz.py --examples 500 --jobs 1 --seed 7

The documents and the checks are those of tests/test_fuzz.py (which runs a few in CI): every exit is
0, 2 or 3, never a traceback or an internal error; a 2 names the file in one paragraph; a 0 or 3
prints a JSON plan. Each process runs its share of the examples with its own seed, half wild (any
field may hold anything, odd keys, cut and spliced YAML text) and half sane (sensible values, so
most reach the solver). A failure is shrunk by hypothesis and printed; the exit status is then 1.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def shard(kind: str, examples: int, seed: int) -> dict:
    import test_fuzz as fuzz
    from hypothesis import given, settings
    from hypothesis import seed as with_seed

    @with_seed(seed)
    @settings(max_examples=examples, **fuzz.FUZZ)
    @given(case=fuzz.wild if kind == "wild" else fuzz.sane)
    def run(case):
        fuzz.check(fuzz.render(*case))

    fuzz.exit_codes.clear()
    started = time.perf_counter()
    failure = None
    try:
        run()
    except Exception as exc:  # hypothesis has shrunk it: report, do not stop the other shards
        failure = f"{type(exc).__name__}: {exc}"
    return {"kind": kind, "seed": seed, "codes": dict(fuzz.exit_codes), "seconds": time.perf_counter() - started,
            "failure": failure}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0, help="base seed; shard i uses seed + i")
    args = parser.parse_args()

    shards = []
    per_shard = -(-args.examples // (2 * args.jobs))
    for i in range(args.jobs):
        shards += [("wild", per_shard, args.seed + 2 * i), ("sane", per_shard, args.seed + 2 * i + 1)]
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(shard, *zip(*shards)))
    wall = time.perf_counter() - started

    totals = {kind: collections.Counter() for kind in ("wild", "sane")}
    for r in results:
        totals[r["kind"]].update(r["codes"])
    print("| cases | examples | exit 0 | exit 2 | exit 3 | other |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind, codes in totals.items():
        other = sum(n for code, n in codes.items() if code not in (0, 2, 3))
        print(f"| {kind} | {sum(codes.values()):,} | {codes[0]:,} | {codes[2]:,} | {codes[3]:,} | {other:,} |")
    cpu = sum(r["seconds"] for r in results)
    print(f"\n{args.examples:,} examples asked, seeds {args.seed}..{args.seed + 2 * args.jobs - 1}, "
          f"{args.jobs} processes: {wall:,.0f} s wall, {cpu:,.0f} s of process time "
          f"({1000 * cpu / max(1, sum(sum(c.values()) for c in totals.values())):.0f} ms per example)")
    failures = [r for r in results if r["failure"]]
    for r in failures:
        print(f"\nFAILURE ({r['kind']}, seed {r['seed']}):\n{r['failure']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
