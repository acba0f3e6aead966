"""Is forking after HiGHS runs safe, and from what size does a second process pay (issue 19)?
`python bench/parallel_fork.py [--repeat 30]`.

1. Safety: plans rent-vs-buy-3y (200 draws: 5 blocks, 5 forks a verdict), then runs its robustness verdict `--repeat` times with workers forced
   (GPU_ADVISOR_PARALLEL=on: every block of draws forks a child that re-solves with HiGHS after
   the parent's HiGHS runs), each under an alarm (a deadlock fails the run), and compares each
   verdict with the serial one.
2. Cost of a fork: wall of solve/parallel.run over two trivial tasks, forced, with the problem in
   memory (the child touches nothing).
4. `--fleet N`: bench/solve.py's N-job fleet solved once, then its plan assembled with every
   explanation serially and with workers (auto), JSON compared, wall and CPU of each (the main
   solve is solved once: a 1,000-job fleet's idle-GPU polish stops at its time limit, so two
   solves of it may differ with the machine's load, whatever the explanations do).
3. Break-even: per example, the robustness verdict's wall serial against forced workers, with the
   measured CPU of one draw: `parallel.MIN_WORK_S` is set from where forced stops losing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    """Median wall seconds of fn() and its last result."""
    walls, out = [], None
    for _ in range(repeat):
        w = time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - w)
    return statistics.median(walls), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--safety", default="rent-vs-buy-3y", help="example whose verdict is re-drawn --repeat times")
    ap.add_argument(
        "--examples",
        nargs="*",
        default=["article-office", "lora-7b-workstation", "rent-vs-buy-3y", "llama-70b-budget", "team-fleet"],
    )
    ap.add_argument("--fleet", type=int, help="only compare serial and parallel explanations of this fleet")
    ap.add_argument(
        "--modes", nargs=2, default=["off", "auto"], help="GPU_ADVISOR_PARALLEL of the two assemblies, in order"
    )
    args = ap.parse_args()
    if args.fleet:
        return fleet_check(args.fleet, args.modes)
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.explain.robustness import robustness
    from advisor.flow import prepare
    from advisor.inputs.workload import load_workload
    from advisor.solve import parallel
    from advisor.solve.milp import solve
    from advisor.solve.settings import SolveSettings

    cat, rules, as_of = load_catalog(), load_rules(), dt.date(2026, 12, 1)
    problems = {}
    for name in dict.fromkeys(args.examples + [args.safety]):
        pr = prepare(load_workload(ROOT / "examples" / f"{name}.yaml"), cat, rules, as_of)
        problems[name] = (pr, solve(pr))
    report: dict = {"load_start": os.getloadavg()[0]}

    def alarm(*_):
        raise TimeoutError("a forked re-solve hung (deadlock?)")

    signal.signal(signal.SIGALRM, alarm)
    pr, sol = problems[args.safety]
    os.environ[parallel.ENV] = "off"
    serial = robustness(pr, sol, SolveSettings())
    os.environ[parallel.ENV] = "on"
    forks = same = 0
    for _ in range(args.repeat):
        signal.alarm(60)
        got = robustness(pr, sol, SolveSettings())
        signal.alarm(0)
        forks += -(-(got or {}).get("draws", 0) // 40)
        same += got == serial
    report["safety"] = {"example": args.safety, "runs": args.repeat, "forks": forks, "identical": same}

    def trivial():
        return parallel.run(lambda i: i, 2)

    wall, _ = timed(trivial, 20)
    report["fork_wall_ms"] = round(1000 * wall, 2)
    rows = []
    for name in args.examples:
        pr, sol = problems[name]
        os.environ[parallel.ENV] = "off"
        t = time.process_time()
        r = robustness(pr, sol, SolveSettings())
        draws = (r or {}).get("draws", 0)
        per = (time.process_time() - t) / max(draws, 1)
        off, a = timed(lambda: robustness(pr, sol, SolveSettings()))
        os.environ[parallel.ENV] = "on"
        on, b = timed(lambda: robustness(pr, sol, SolveSettings()))
        rows.append(
            {
                "example": name,
                "draws": draws,
                "draw_cpu_ms": round(1000 * per, 2),
                "serial_wall_s": round(off, 4),
                "forced_wall_s": round(on, 4),
                "identical": a == b,
            }
        )
    os.environ.pop(parallel.ENV)
    report["break_even"] = rows
    report["load_end"] = os.getloadavg()[0]
    print(json.dumps(report, indent=1))


def fleet_check(n: int, modes: list[str]) -> None:
    import resource
    import tempfile

    import yaml

    sys.path.insert(0, str(ROOT / "bench"))
    from solve import fleet

    from advisor.assemble import assemble
    from advisor.flow import prepare
    from advisor.inputs.workload import load_workload
    from advisor.solve import parallel
    from advisor.solve.milp import solve
    from advisor.solve.settings import SolveSettings

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(fleet(n), f)
    pr = prepare(load_workload(f.name), as_of=dt.date(2026, 12, 1))
    os.unlink(f.name)
    sol = solve(pr)
    rows, texts = [], []
    for how in modes:  # the second reuses the models the first built (problem.solver_cache)
        os.environ[parallel.ENV] = how
        load = os.getloadavg()[0]
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        t, w = time.process_time(), time.perf_counter()
        p = assemble(pr, sol, SolveSettings())
        cpu, wall = time.process_time() - t, time.perf_counter() - w
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        texts.append(json.dumps(p.to_dict(), indent=2, ensure_ascii=False))
        rows.append(
            {
                "mode": how,
                "explain_wall_s": round(wall, 2),
                "parent_cpu_s": round(cpu, 2),
                "children_cpu_s": round(now.ru_utime + now.ru_stime - kids.ru_utime - kids.ru_stime, 2),
                "load": round(load, 2),
            }
        )
    print(json.dumps({"jobs": n, "rows": rows, "identical": texts[0] == texts[1]}, indent=1))


if __name__ == "__main__":
    main()
