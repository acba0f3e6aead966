"""Warm-start check (run by hand): one highspy model re-priced after a solve, four ways -- plain
re-run, setSolution(incumbent) before the re-run, clearSolver() before the re-run, and clearSolver()
then setSolution(incumbent) (what solve/redraw.py does with its first plan) -- against a fresh solve
per price. highspy 1.16 once returned a start as "optimal" with objective 0 (2 of 12 on team-fleet,
an older model); on this round's model every way agrees with the fresh solve in 12 of 12 on both
examples. HighsModel.run stays a plain re-run; the redraw checks each draw's objective adds up.

    python bench/warm_start.py examples/lora-7b-workstation.yaml examples/team-fleet.yaml
"""

import datetime as dt
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import highspy

from advisor.data.catalog import load_catalog
from advisor.data.rules import load_rules
from advisor.flow import prepare
from advisor.inputs.workload import load_workload
from advisor.solve import constraints, fast, plan_values
from advisor.solve.milp import solve
from advisor.solve.scenario import baseline

cat = load_catalog()
r = load_rules()
for ex in sys.argv[1:]:
    wl = load_workload(ex)
    p = prepare(wl, cat, r, dt.date(2026, 12, 1))
    base = baseline(p)
    gids = [g for g in p.considered if g not in p.rejected]
    rng = random.Random(1)
    bad = {"setSolution": 0, "clearSolver": 0, "plain": 0, "clearSet": 0}
    n = 0

    def fresh(sc):
        p.solver_cache.clear()
        s = solve(p, sc)
        return s.objective_usd if s.feasible else None

    # persistent model
    p.solver_cache.clear()
    solve(p, base)
    hm = next(iter(fast.cache_of(p).values()))
    for _trial in range(12):
        g = rng.choice(gids)
        f = rng.choice([0.3, 0.6, 0.9, 1.1, 1.5, 2.5])
        sc = base.but(price_factor={g: f})
        want = fresh(sc)
        for mode in ("plain", "setSolution", "clearSolver", "clearSet"):
            prev = list(hm.h.getSolution().col_value)
            hm.apply(sc, constraints.limit_rows(sc))
            if mode == "clearSet":
                hm.h.clearSolver()
            if mode in ("setSolution", "clearSet"):
                sol = highspy.HighsSolution()
                sol.col_value = prev
                sol.value_valid = True
                hm.h.setSolution(sol)
            elif mode == "clearSolver":
                hm.h.clearSolver()
            st, proven, gap = hm.run(30, 1e-4)
            got = (
                None
                if st in ("infeasible", "none")
                else sum(hm.model.run_cost(c) * (hm.model.y[k, i].value() or 0) for k, i, c in hm.model.pairs())
                + plan_values.owned_value(hm.model)
            )
            ok = (want is None and got is None) or (
                want is not None and got is not None and abs(got - want) <= 1e-3 * max(1, abs(want))
            )
            if not ok:
                bad[mode] += 1
                print(ex, mode, g, f, "fresh", want, "reused", got, st)
            # back to base for next trial
            hm.apply(base, constraints.limit_rows(base))
            hm.run(30, 1e-4)
        n += 1
    print(ex, "trials", n, "wrong", bad)
