"""Where a robustness draw's search starts (solve/draw_start.py), timed (run by hand): every planned
draw of the verdict twice in turn, from the model's plan as built with HiGHS's feasibility jump (the
start before) and from the plan `Starts.pick` chooses without it (now), CPU seconds of each and
whether every answer agrees. Draw by draw in turn, so load drifts alike. In-process figures run above
the whole process's (bench/perf.py, farm-bench --vs): quote those for what a user waits.

    python bench/draw_start.py examples/serve-70b-datacenter.yaml examples/train-and-serve.yaml
"""

import datetime as dt
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.data.catalog import load_catalog
from advisor.data.rules import load_rules
from advisor.explain.robustness import Verdict
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve.draw_start import Starts
from advisor.solve.settings import SolveSettings

for ex in sys.argv[1:]:
    problem = prepare(load_workload(ex), load_catalog(), load_rules(), dt.date(2026, 12, 1))
    v = Verdict(problem, SolveSettings())
    r, h = v.redraw, v.redraw.h
    now = r.starts
    built = Starts(h, [now.plans[-1].tolist()])
    ways = {"as built, jump on": (built, True), "picked, jump off": (now, False)}
    cpu = dict.fromkeys(ways, 0.0)
    got: dict[str, list] = {k: [] for k in ways}
    for sample in v.samples:
        for name, (start, jump) in ways.items():
            r.starts = start
            h.setOptionValue("mip_heuristic_run_feasibility_jump", jump)
            t = time.process_time()
            got[name].append(r.choice(*sample))
            cpu[name] += time.process_time() - t
    before, after = got.values()
    differ = sum(a != b for a, b in zip(before, after))
    times = ", ".join(f"{k} {s:.2f} s" for k, s in cpu.items())
    print(f"{Path(ex).name}: {len(v.samples)} draws; {times}; answers differ: {differ}")
