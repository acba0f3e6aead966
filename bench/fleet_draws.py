"""A fleet's robustness draws, each run two ways in turn (run by hand): as shipped, and with HiGHS
options or another start (docs/performance.md, "Fleets: what was tried for the 30 s target").

    python bench/fleet_draws.py 200 --draws 0-19 --option mip_heuristic_run_rens=false
    python bench/fleet_draws.py 200 --start point   # each draw from the plan at the estimates, where it fits
    python bench/fleet_draws.py 200 --full-rows     # with at_once's pair rows in every draw (as before draw_rows)

The fleet is bench/solve.py's (seed 7); the verdict is built as plan.plan builds it, but without the
draws' DRAW_TIME_LIMIT (a draw stopped by the clock gives a plan that depends on the load, so two
ways could not be compared). Each draw runs as shipped and the other way, the order turning draw by
draw so that load drifts alike; printed: CPU seconds of each, whether the two answers (pairs, purchase,
proven, offers) are the same, and whether each holds the point plan's choice. --start: `point` and
`slow` put the plan at the estimates / at every type's slowest drawn speed first (Starts.pick keeps it
where its integer columns lie within the draw's bounds), `none` runs without a start, `inbounds` hands
the plan as built only where it lies within the bounds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from solve import fleet  # noqa: E402

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.data.rules import load_rules  # noqa: E402
from advisor.explain import robustness  # noqa: E402
from advisor.flow import prepare  # noqa: E402
from advisor.inputs.workload import load_workload  # noqa: E402
from advisor.solve.draw_start import Starts, plan_of, slowest  # noqa: E402
from advisor.solve.milp import solve  # noqa: E402
from advisor.solve.rental_offers import offers_of, pairs_of  # noqa: E402
from advisor.solve.settings import SolveSettings  # noqa: E402


def indices(text: str, n: int) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return [i for i in out if i < n]


def value(text: str) -> bool | int | float | str:
    if text in ("true", "false"):
        return text == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jobs", type=int)
    ap.add_argument("--draws", default="0-39", help="draw indices, e.g. 0-19 or 1,7,9")
    ap.add_argument("--option", action="append", default=[], help="a HiGHS option NAME=VALUE (repeatable)")
    ap.add_argument("--start", choices=["built", "point", "slow", "none", "inbounds"], default="built")
    ap.add_argument("--full-rows", action="store_true", help="the other way runs with every pair row in the model")
    args = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(fleet(args.jobs), f)
    problem = prepare(load_workload(f.name), load_catalog(), load_rules(), dt.date(2026, 12, 1))
    os.unlink(f.name)
    settings = SolveSettings(time_limit=None)
    sol = solve(problem, settings=settings)
    robustness.DRAW_TIME_LIMIT = float("inf")
    verdict = robustness.Verdict(problem, settings)
    r, h = verdict.redraw, verdict.redraw.h
    shipped, lazy = r.starts, r.lazy
    plans = list(shipped.plans)
    if args.start in ("point", "slow"):
        gpus = sorted(r.fastest)
        speed, serve = (
            ({g: 1.0 for g in gpus}, None)
            if args.start == "point"
            else slowest(gpus, [s[0] for s in verdict.samples], [s[4] for s in verdict.samples])
        )
        r._set_draw(speed, {}, {}, None, serve)
        if (x := plan_of(h)) is not None:
            plans.insert(0, x)
    other = Starts(h, [p.tolist() if hasattr(p, "tolist") else p for p in plans] if args.start != "none" else [])
    if args.start == "inbounds":
        built = other.pick

        def pick(hh):  # the plan as built only where its integer columns lie within the draw's bounds
            lp = hh.getLp()
            x = other.plans[-1][other.integer]
            lo = np.asarray(lp.col_lower_)[other.integer]
            hi = np.asarray(lp.col_upper_)[other.integer]
            return built(hh) if bool(np.all((x >= lo - 1e-6) & (x <= hi + 1e-6))) else None

        other.pick = pick  # type: ignore[method-assign]
    defaults = {name: h.getOptionValue(name) for name, _ in (o.split("=", 1) for o in args.option)}
    changed = {name: value(text) for name, text in (o.split("=", 1) for o in args.option)}
    chosen = (pairs_of(sol), offers_of(sol))
    cpu = {"shipped": 0.0, "other": 0.0}
    same = held = 0
    todo = indices(args.draws, len(verdict.samples))
    for n, i in enumerate(todo):
        got = {}
        for way in ("shipped", "other") if n % 2 == 0 else ("other", "shipped"):
            r.starts = shipped if way == "shipped" else other
            full = args.full_rows and way == "other" and lazy is not None
            if full:  # every pair row in for this run, as a draw ran before solve/draw_rows.py
                lazy._add(h, list(range(lazy.count)))
                r.lazy = None
            for name, x in (defaults if way == "shipped" else changed).items():
                h.setOptionValue(name, x)
            verdict.known.pop(i, None)
            t = time.process_time()
            got[way] = verdict.draw(i)
            took = time.process_time() - t
            cpu[way] += took
            got[way + "_s"] = took
            if full:
                lazy.restore(h)
                r.lazy = lazy
        same += got["shipped"] == got["other"]
        held += robustness._held(got["shipped"], chosen)
        print(
            f"draw {i}: {got['shipped_s']:.2f} s shipped, {got['other_s']:.2f} s other, "
            f"same answer {got['shipped'] == got['other']}, holds {robustness._held(got['shipped'], chosen)}",
            flush=True,
        )
    print(
        f"{len(todo)} draws: shipped {cpu['shipped']:.2f} s, other {cpu['other']:.2f} s of CPU "
        f"({cpu['other'] / max(cpu['shipped'], 1e-9):.2f}x); same answer in {same}; the choice holds in {held}; "
        f"load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
