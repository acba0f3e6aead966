"""Where a robustness draw's search starts (solve/draw_start.py), timed (run by hand): every planned
draw of the verdict twice in turn, from the plan at the fastest speeds with HiGHS's feasibility jump
(the start before) and from the plan at the slowest drawn speeds without it (the start now), CPU
seconds of each and whether every answer agrees. Draw by draw in turn, so load drifts alike.

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
from advisor.solve.draw_start import plan_of
from advisor.solve.settings import SolveSettings

for ex in sys.argv[1:]:
    problem = prepare(load_workload(ex), load_catalog(), load_rules(), dt.date(2026, 12, 1))
    v = Verdict(problem, SolveSettings())
    r, h = v.redraw, v.redraw.h
    slow = r.hint
    r._set_draw(r.fastest, {}, {})
    fast = plan_of(h)
    ways = {"fastest start, jump on": (fast, True), "slowest start, jump off": (slow, False)}
    cpu = dict.fromkeys(ways, 0.0)
    got: dict[str, list] = {k: [] for k in ways}
    for sample in v.samples:
        for name, (start, jump) in ways.items():
            r.hint = start
            h.setOptionValue("mip_heuristic_run_feasibility_jump", jump)
            t = time.process_time()
            got[name].append(r.choice(*sample))
            cpu[name] += time.process_time() - t
    before, after = got.values()
    differ = sum(a != b for a, b in zip(before, after))
    times = ", ".join(f"{k} {s:.2f} s" for k, s in cpu.items())
    print(f"{Path(ex).name}: {len(v.samples)} draws; {times}; answers differ: {differ}")
