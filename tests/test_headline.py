"""A plan the solver did not prove optimal says so on the first line of every format, with how
far from optimal it may be; JSON carries solver.gap (issue 20)."""

from __future__ import annotations

import json

from conftest import AS_OF, EXAMPLES

import advisor
from advisor.present.plan_text import plan_text


def test_an_unproven_plan_says_how_far_from_optimal_it_may_be_on_its_first_line(catalog, rules):
    p = advisor.plan(
        advisor.load_workload(EXAMPLES / "article-office.yaml"),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        explain=False,
    )
    assert "best found" not in plan_text(p).splitlines()[0]
    p = p.model_copy(
        update={
            "status": "feasible",  # what a time-limited solve would give
            "solver": p.solver.model_copy(update={"proven_optimal": False, "gap": 0.0014}),
        }
    )
    assert plan_text(p).splitlines()[0].endswith("[best found, within 0.14% of optimal]")
    assert json.loads(p.to_json())["solver"]["gap"] == 0.0014
    wl = EXAMPLES / "article-office.yaml"
    md = advisor.memo(p, wl, fmt="md", catalog=catalog, rules=rules, charts=False).text
    assert md.splitlines()[0].endswith("(best found, within 0.14% of optimal)")
    html = advisor.memo(p, wl, fmt="html", catalog=catalog, rules=rules, charts=False).text
    assert "<title>GPU purchase justification: GPT-2 124M, office lab (best found, within 0.14% of optimal)" in html
