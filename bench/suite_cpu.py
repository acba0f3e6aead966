"""CPU seconds per test and per test file, to choose what is `slow` (README "Tests"); run by hand,
numbers in docs/performance.md#test-suite. Wall time on a shared machine follows the load; the CPU a
test burns (its process's and its children's, user + system) much less.

    GPU_ADVISOR_CACHE=$(mktemp -d) PYTHONPATH=bench SUITE_CPU=/tmp/cpu \\
        python -m pytest -m "not slow" -n 2 --dist loadgroup -p suite_cpu
    python bench/suite_cpu.py /tmp/cpu                 # the costliest files and tests
    python bench/suite_cpu.py /tmp/cpu --over 1.0      # the tests over a second of CPU

As a pytest plugin (`-p suite_cpu`, bench/ on PYTHONPATH) each process (each xdist worker) appends one
line per test to SUITE_CPU/<worker>.jsonl: node id, CPU seconds, wall seconds, setup and teardown
included, so the test that first asks a shared fixture (a shipped example's plan) carries its cost.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import time
from pathlib import Path
from typing import Any

import pytest

_out: list[Any] = []  # the open file of this process, once a test has run


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _file() -> Any:
    if not _out:
        folder = Path(os.environ.get("SUITE_CPU", "suite-cpu"))
        folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out.append(open(folder / f"{worker}.jsonl", "a", encoding="utf-8"))  # noqa: SIM115  # kept for the run
    return _out[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
    cpu, wall = _cpu(), time.perf_counter()
    outcome = yield
    out = _file()
    out.write(json.dumps([item.nodeid, round(_cpu() - cpu, 4), round(time.perf_counter() - wall, 4)]) + "\n")
    out.flush()
    return outcome


def report(folder: Path, top: int, over: float | None) -> str:
    """The files by CPU, then the tests (all those over `over` seconds, else the `top` costliest)."""
    rows = [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.open(encoding="utf-8")]
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for node, cpu, _ in rows:
        by_file[node.split("::")[0]][0] += cpu
        by_file[node.split("::")[0]][1] += 1
    lines = [f"{len(rows)} tests, {sum(r[1] for r in rows):.1f} s of CPU", "", "CPU s  tests  file"]
    for name, (cpu, count) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{cpu:6.1f} {count:6.0f}  {name}")
    tests = sorted(rows, key=lambda r: -r[1])
    chosen = [r for r in tests if r[1] >= over] if over is not None else tests[:top]
    lines += ["", "CPU s  wall s  test"] + [f"{cpu:6.2f} {wall:7.2f}  {node}" for node, cpu, wall in chosen]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the SUITE_CPU folder of a run")
    parser.add_argument("--top", type=int, default=30, help="files and tests to list (default 30)")
    parser.add_argument("--over", type=float, help="list every test over this many CPU seconds instead")
    args = parser.parse_args()
    print(report(args.folder, args.top, args.over))


if __name__ == "__main__":
    main()
