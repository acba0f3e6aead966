"""Cold start against the floor (run by hand, never by the test suite): fresh processes of the floor
(`python -c "import pulp, pydantic, click, yaml"`), `advisor plan` of the article examples and,
with --crossover, `advisor crossover`, one of each in turn, N rounds; the medians of their CPU
seconds (user + system, from getrusage of the children) and wall seconds, and each over the floor's.

    python bench/cold_start.py [--runs 21] [--crossover] [--against DIR]

Alternating matters: the machine is shared, and the floor moves with the load as much as the
commands do, so a ratio is only taken between runs made side by side. --against DIR also runs the
commands from another checkout (e.g. `git worktree add DIR main`), in the same rounds, each with a
cache folder of its own, after checking both print the same plans: a change's before and after under
one load. Bytecode is written (PYTHONDONTWRITEBYTECODE unset, as an installed package is compiled),
and every command runs twice before the rounds, so the compiled data, the layout store and the .pyc
files exist: a user's second run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AS_OF = ["--as-of", "2026-12-01"]
Command = tuple[list[str], Path, Path]  # argv, working folder (the checkout: `python -m advisor` imports it), cache


def commands(checkouts: dict[str, Path], crossover: bool, caches: Path) -> dict[str, Command]:
    out: dict[str, Command] = {"floor": ([sys.executable, "-c", "import pulp, pydantic, click, yaml"], ROOT, caches)}
    runs = [["plan", f"examples/{name}.yaml", *AS_OF] for name in ("article-office", "article-datacenter")]
    runs += [["crossover", *AS_OF]] if crossover else []
    for args in runs:
        label = Path(args[1]).stem if args[0] == "plan" else args[0]
        for tree, where in checkouts.items():
            name = f"{label} ({tree})" if len(checkouts) > 1 else label
            out[name] = ([sys.executable, "-m", "advisor", *args], where, caches / tree)
    return out


def run(command: Command) -> bytes:
    argv, where, cache = command
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["GPU_ADVISOR_CACHE"] = str(cache)
    return subprocess.run(argv, cwd=where, env=env, capture_output=True, check=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--crossover", action="store_true", help="advisor crossover too")
    ap.add_argument("--against", type=Path, default=None, help="another checkout, run in the same rounds")
    args = ap.parse_args()
    checkouts = {"this": ROOT} if args.against is None else {"this": ROOT, "other": args.against.resolve()}
    with tempfile.TemporaryDirectory(prefix="advisor-cold-") as caches:
        measure(commands(checkouts, args.crossover, Path(caches)), args.runs, args.against is not None)


def measure(todo: dict[str, Command], runs: int, compare: bool) -> None:
    """Each command warmed twice, then `runs` rounds in turn; the medians printed against the floor's."""
    for command in todo.values():
        run(command)
        run(command)
    if compare:  # the same plans, or the comparison means nothing
        for name in todo:
            other = name.replace("(this)", "(other)")
            if name.endswith("(this)") and run(todo[name]) != run(todo[other]):
                sys.exit(f"{name} and {other} print different output: no comparison")
    cpu: dict[str, list[float]] = {name: [] for name in todo}
    wall: dict[str, list[float]] = {name: [] for name in todo}
    loads = []
    for _ in range(runs):
        for name, command in todo.items():
            before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            run(command)
            wall[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        loads.append(os.getloadavg()[0])
    floor_cpu, floor_wall = statistics.median(cpu["floor"]), statistics.median(wall["floor"])
    print(
        f"{runs} rounds; load average {statistics.median(loads):.1f} "
        f"(from {min(loads):.1f} to {max(loads):.1f}); medians:"
    )
    for name in todo:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(f"  {name:32s} CPU {c:.3f} s = {c / floor_cpu:.2f}x floor   wall {w:.3f} s = {w / floor_wall:.2f}x")


if __name__ == "__main__":
    main()
