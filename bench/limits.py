"""How fast each size limit refuses (run by hand, never by the test suite; docs/limits.md quotes it):
`advisor plan FILE` in a fresh process on inputs just past a limit, CPU and wall seconds of the
child (median of --runs), and the exit status (2 expected). The limits are checked before any
estimating or solving, so every refusal should come in under 2 s.

    python bench/limits.py [--runs 3]
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

import yaml

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def cases(folder: Path) -> list[tuple[str, list[str]]]:
    """(what, the command's arguments) for inputs just past each limit."""
    office = str(ROOT / "examples" / "article-office.yaml")

    def workload(name: str, doc: dict) -> str:
        path = folder / name
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return str(path)

    distinct = [
        {"name": f"j{i}", "model": "gpt2-124m", "tokens": f"{1 + i / 10_000:.4f}B", "deadline": "30d"}
        for i in range(5_000)
    ]
    many = workload("distinct.yaml", {"deployment": {"context": "datacenter"}, "jobs": distinct})
    repeat = workload(
        "repeat.yaml", {"deployment": "office", "jobs": [{"model": "gpt2-124m", "tokens": "1B", "repeat": 5_001}]}
    )
    gpus = [{"id": f"gpu-{i}", "name": f"GPU {i}", "vendor": "NVIDIA"} for i in range(1_000)]
    catalog = workload("catalog.yaml", {"gpus": gpus})
    big = folder / "big.yaml"
    big.write_text("name: big\n" + "# padding\n" * 110_000)
    laughs = workload("laughs.yaml", {})
    Path(laughs).write_text(
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))
    )
    deep = folder / "deep.yaml"
    deep.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    return [
        ("5,000 distinct jobs (5,000 x 28 GPU types = 140,000 pairs; limit 25,000)", ["plan", many]),
        ("5,001 jobs counting repeat (limit 5,000)", ["plan", repeat]),
        ("--catalog adding 1,000 GPU types (limit 120)", ["plan", office, "--catalog", catalog]),
        ("a 1.1 MB workload file (limit 1,000,000 bytes)", ["plan", str(big)]),
        ("YAML aliases expanding to 10^9 values (limit 200,000)", ["plan", laughs]),
        ("100,000 levels of nesting (limit 50)", ["plan", str(deep)]),
    ]


def timed(args: list[str], runs: int) -> tuple[float, float, int]:
    """(median CPU s, median wall s, exit status) of `python -m advisor ARGS` in a child process."""
    cpu, wall, code = [], [], 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        code = subprocess.run([PY, "-m", "advisor", *args], capture_output=True, cwd=ROOT).returncode
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall), code


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"| input | exit | CPU s | wall s |  (median of {args.runs}; load average {os.getloadavg()[0]:.1f})")
    print("|---|---|---|---|")
    slow = 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, argv in cases(Path(tmp)):
            cpu, wall, code = timed(argv, args.runs)
            slow += code != 2 or cpu >= 2.0
            print(f"| {what} | {code} | {cpu:.2f} | {wall:.2f} |", flush=True)
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
