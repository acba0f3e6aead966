"""Fuzz the planner with 10,000 random workload documents in-process; run by hand, results in docs/fuzz.md.

    nice -n 19 python bench/fuzz.py                          # 10,000 examples, 2 processes
    python bench/fuzz.py --examples 500 --jobs 1 --seed 7 --full 0.1 --until 3600

The documents are tests/fuzz_documents.py's (training jobs with measured speeds, serving jobs in
`jobs:` or as the one-job shorthand, economics and market fields, the decision basis; a third with
a --catalog override of rental offers, quotes and lead times; half wild, half sane). Most examples
run the library path at explanation level "none" (load, plan, JSON: `test_fuzz.check_light`), since
the explanations are not what is fuzzed; every tenth (`--full`) runs `advisor plan --format json`
through the CLI with every explanation (`test_fuzz.check`). Every plan is checked inside plan()
(solve/verify.py) and again from its JSON (`test_fuzz.plan_breaks`: cash, or present value under
budget_basis: present_value, within the budget; every training job done within its deadline and
the horizon). A failure is any exception other than InputError (exit 2) or no feasible plan
(exit 3), a plan refused by either check, or a broken exit contract; each failing document (and its
override) is saved to --save/failures with its traceback, and the run goes on (no shrinking, so the
count is honest). The first --seed-corpus documents of each kind and exit code per process go to
--save/seed (`tests/test_fuzz.py` replays both folders). Each process runs chunks of 50 examples,
seed base + chunk number, until its share is done or --until seconds have passed; the exit status
is 1 on any failure.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's advisor, not an installed one
CHUNK = 50


def memoize_estimates() -> None:
    """The training estimator is a pure function of (job, GPU, count, parameters) and takes most of
    a plan's time; the fuzzed workloads repeat the same jobs on the same GPUs, so within one process
    its results are reused. The planning code around it runs unchanged."""
    from advisor.solve import class_candidates

    evaluate, memo = class_candidates.evaluate, dict[tuple, tuple]()

    def remembered(job: Any, gpu: Any, count: int, p: Any) -> Any:
        key = (job, gpu.id, count, id(p))
        hit = memo.get(key)
        if hit is None or hit[0] is not p or hit[1] is not gpu:
            if len(memo) > 200_000:
                memo.clear()
            hit = memo[key] = (p, gpu, evaluate(job, gpu, count, p))
        return hit[2]

    class_candidates.evaluate = remembered


def keep(folder: Path, stem: str, data: bytes, override: bytes | None) -> Path:
    """Write a document (and its catalog override, STEM.catalog.yaml) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.yaml").write_bytes(data)
    if override is not None:
        (folder / f"{stem}.catalog.yaml").write_bytes(override)
    return folder / f"{stem}.yaml"


def shard(
    index: int, examples: int, seed: int, full: float, until: float, save: str, memo: bool = True, seeds_kept: int = 3
) -> dict:
    import fuzz_documents
    import test_fuzz as fuzz

    if memo:
        memoize_estimates()
    from hypothesis import Phase, given, settings
    from hypothesis import seed as with_seed

    counts: collections.Counter = collections.Counter()
    kept: collections.Counter = collections.Counter()
    failures: list[dict] = []
    done, started, chunks = [0], time.monotonic(), []
    every = round(1 / full) if full > 0 else 0

    def one(kind: str, case: tuple) -> None:
        if done[0] >= examples or time.monotonic() - started > until:
            return
        data, override = fuzz_documents.documents(case)
        level = "full" if every and done[0] % every == 0 else "light"
        done[0] += 1
        try:
            code = fuzz.check(data, override) if level == "full" else fuzz.check_light(data, override)
            counts[(kind, level, code)] += 1
            kept[(kind, code)] += 1
            if kept[(kind, code)] <= seeds_kept:  # the seed corpus: a few of each kind and exit code
                keep(Path(save) / "seed", f"{kind}-exit{code}-{index}-{done[0]}", data, override)
        except BaseException as exc:  # noqa: B036 - a failure of any kind is recorded, the run goes on
            if isinstance(exc, KeyboardInterrupt):
                raise
            counts[(kind, level, "failure")] += 1
            name = keep(Path(save) / "failures", f"{kind}-{index}-{done[0]}", data, override)
            text = "".join(traceback.format_exception(exc))
            name.with_suffix(".txt").write_text(f"level {level}\n{text}", encoding="utf-8")
            failures.append(
                {"file": str(name), "kind": kind, "level": level, "error": f"{type(exc).__name__}: {exc}"[:500]}
            )
        if done[0] % 100 == 0:
            rate = done[0] / (time.monotonic() - started)
            print(
                f"[process {index}] {done[0]:,}/{examples:,} examples, {len(failures)} failures, {rate:.2f}/s",
                file=sys.stderr,
                flush=True,
            )

    chunk = 0
    while done[0] < examples and time.monotonic() - started <= until:
        chunk_seed, kind = seed + chunk, ("wild", "sane")[chunk % 2]  # the two kinds take turns
        before = done[0]

        def chunk_of(kind: str, chunk_seed: int) -> Any:
            @with_seed(chunk_seed)
            @settings(
                max_examples=CHUNK,
                deadline=None,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(fuzz.HealthCheck),
            )
            @given(case=fuzz.wild if kind == "wild" else fuzz.sane)
            def run(case: tuple) -> None:
                one(kind, case)

            return run

        chunk_of(kind, chunk_seed)()
        chunks.append(chunk_seed)
        chunk += 1
        if done[0] == before:  # hypothesis had nothing new to generate
            break
    return {
        "index": index,
        "done": done[0],
        "seeds": [chunks[0], chunks[-1]] if chunks else [],
        "codes": {f"{k}:{lvl}:{code}": n for (k, lvl, code), n in sorted(counts.items(), key=str)},
        "seconds": time.monotonic() - started,
        "cpu": time.process_time(),
        "failures": failures,
        "checked": dict(fuzz.plans_checked),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2, help="processes (wild and sane chunks take turns in each)")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="base seed; process i's chunk k uses seed + 100000 i + k (even k wild, odd sane)",
    )
    parser.add_argument("--full", type=float, default=0.1, help="share of examples run with every explanation")
    parser.add_argument("--until", type=float, default=float("inf"), help="stop after this many seconds")
    parser.add_argument("--no-memo", action="store_true", help="do not reuse training estimates within a process")
    parser.add_argument(
        "--save",
        default=str(ROOT / "tests" / "fuzz-corpus"),
        help="folder for failing documents (failures/) and the seed corpus (seed/)",
    )
    parser.add_argument(
        "--seed-corpus", type=int, default=3, help="documents kept per kind and exit code per process in SAVE/seed"
    )
    args = parser.parse_args()

    per = -(-args.examples // args.jobs)
    shards = [
        (i, per, args.seed + 100_000 * i, args.full, args.until, args.save, not args.no_memo, args.seed_corpus)
        for i in range(args.jobs)
    ]
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(shard, *zip(*shards)))
    wall = time.perf_counter() - started

    print("| cases | level | examples | exit 0 | exit 2 | exit 3 | failures |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for kind in ("wild", "sane"):
        for level in ("light", "full"):
            codes: collections.Counter = collections.Counter()
            for r in results:
                codes.update({k.split(":")[2]: n for k, n in r["codes"].items() if k.startswith(f"{kind}:{level}:")})
            print(
                f"| {kind} | {level} | {sum(codes.values()):,} | {codes['0']:,} | {codes['2']:,} | {codes['3']:,} "
                f"| {codes['failure']:,} |"
            )
    total = sum(r["done"] for r in results)
    cpu = sum(r["cpu"] for r in results)
    seeds = ", ".join(f"{r['seeds'][0]}..{r['seeds'][-1]}" for r in results if r["seeds"])
    print(
        f"\n{total:,} of {args.examples:,} examples run (chunks of {CHUNK}; seeds {seeds}), {args.jobs} processes, "
        f"full explanations for {args.full:.0%}: {wall:,.0f} s wall, {cpu:,.0f} s of CPU "
        f"({1000 * cpu / max(1, total):.0f} ms of CPU per example)"
    )
    checked: collections.Counter = collections.Counter()
    for r in results:
        checked.update(r["checked"])
    print(
        "Checked from the plans' JSON (cash or present value within the budget; each training job done within "
        "its deadline and the horizon): " + ", ".join(f"{n:,} {what}" for what, n in sorted(checked.items()))
    )
    failures = [f for r in results for f in r["failures"]]
    for f in failures:
        print(f"\nFAILURE ({f['kind']}, {f['level']}): {f['file']}\n{f['error']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
