"""A job is offered the GPU counts the user named (review19 #2): a fleet of exactly `gpus.count` or at
least `gpus.min` GPUs, and each count the job was measured on, even where the count grid (1-8,
multiples of 8 to 64, powers of two) has no point: 96, 100 or 384 GPUs are cluster sizes sold and
measured, and one job on all of them is how a single job meets them."""

from __future__ import annotations

import json

from click.testing import CliRunner

import advisor
from advisor.cli import main

AS_OF = "2026-12-01"
EXACTLY = """
name: 8B pretrain on rented H100
deployment: {{context: datacenter, region: US, ownership: rent, horizon_months: 12}}
gpus: {{{limit}, allow: [h100-sxm]}}
jobs:
  - name: pretrain
    model: llama-3-8b
    tokens: 1T
"""


def _plan(tmp_path, limit: str):
    path = tmp_path / "w.yaml"
    path.write_text(EXACTLY.format(limit=limit), encoding="utf-8")
    return str(path)


def test_exactly_a_count_off_the_grid_is_one_job_on_that_many_gpus(tmp_path):
    """Exactly 100 rented H100 for one job: the grid's 64 and 128 cannot meet it (was NO FEASIBLE
    PLAN: 'allow 128 GPUs instead of exactly 100'); the job runs on all 100."""
    d = json.loads(advisor.plan(_plan(tmp_path, "count: 100"), as_of=AS_OF).to_json())
    assert d["status"] == "optimal", [x.get("message") for x in d.get("diagnosis") or []]
    (job,) = d["jobs"]
    assert job["gpu_count"] == 100


def test_a_count_no_job_can_use_is_still_no_feasible_plan(tmp_path):
    """Exactly 100,000 GPUs: more than one job is laid out on (65,536), so still exit 3 with the
    change that would make a plan, not an input error."""
    r = CliRunner().invoke(main, ["plan", _plan(tmp_path, "count: 100000"), "--as-of", AS_OF])
    assert r.exit_code == 3, r.output
    assert "NO FEASIBLE PLAN" in r.output


def test_at_least_a_count_off_the_grid_is_a_count_the_job_is_offered(tmp_path):
    """At least 96 rented H100 (12 nodes of 8) and no measurement: without `gpus.min` among the offered
    counts the job's least count is the grid's 128, paying for 32 GPUs more than asked."""
    d = json.loads(advisor.plan(_plan(tmp_path, "min: 96"), as_of=AS_OF, explain="none").to_json())
    assert d["status"] == "optimal", [x.get("message") for x in d.get("diagnosis") or []]
    (job,) = d["jobs"]
    assert job["gpu_count"] == 96


def test_at_most_a_count_off_the_grid_is_a_count_the_job_is_offered(tmp_path):
    """At most 100 rented H100 and an 18-day deadline: the grid's 64 plan 24.7 days and its 128 break the
    limit, so without `gpus.max` among the offered counts there was no plan (exit 3); the job runs on
    all 100 (15.8 days planned), the plan `gpus.count: 100` makes, to the cent."""
    path = tmp_path / "w.yaml"
    path.write_text(EXACTLY.format(limit="max: 100") + "    deadline: 18d\n", encoding="utf-8")
    d = json.loads(advisor.plan(str(path), as_of=AS_OF, explain="none").to_json())
    assert d["status"] == "optimal", [x.get("message") for x in d.get("diagnosis") or []]
    (job,) = d["jobs"]
    assert job["gpu_count"] == 100 and job["wall_days_planned"] <= 18
    exactly = json.loads(advisor.plan(_plan(tmp_path, "count: 100"), as_of=AS_OF, explain="none").to_json())
    assert exactly["jobs"][0]["gpu_count"] == 100
    assert d["nominal_cost_usd"] == exactly["nominal_cost_usd"]
