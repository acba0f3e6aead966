"""A training job that runs only in the serving GPUs' off-peak hours (solve/constraints/at_once.py
off_peak_hours) finishes when its running, spread over those hours a day, is done: train-and-serve's
fine-tune read "takes 21.6 hours once its GPUs are ready on day 73.0" and "46.00 days of slack" for 2.7
days of 8-hour nights, and the memo "46.1 days before its 120-day deadline"."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from advisor import api
from advisor.flow import pareto
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.inputs.workload import parse_workload
from advisor.present.memo_recommendation import _finish_sentence
from advisor.present.plan_sections import jobs_section
from advisor.present.plan_summary import time_text
from advisor.report import plan_context

WORKLOAD = """\
name: off-peak finish
deployment: {context: datacenter, ownership: buy, horizon_months: 24}
jobs:
  - name: chat
    kind: serve
    model: llama-3.1-8b
    precision: fp8
    traffic: {requests_per_s: 30, input_tokens: 1000, output_tokens: 250}
    slo: {ttft_ms: 2000, tpot_ms: 80, percentile: 99}
    off_peak_training_hours: HOURS
  - name: finetune
    kind: finetune
    model: llama-3-8b
    tokens: 1B
    deadline: 120d
gpus: {allow: [rtx-6000-ada]}
"""


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    path = tmp_path_factory.mktemp("off-peak") / "workload.yaml"
    path.write_text(WORKLOAD.replace("HOURS", "8"))
    return api.plan(path, explain="none", as_of="2026-12-01")


def test_the_deadline_slack_counts_the_running_spread_over_the_off_peak_hours(nights):
    (job,) = nights["jobs"]
    (ready,) = {p["ready_days"] for p in nights["purchase"]}
    assert job["gpu_count"] == 4 and len(nights["serving"]) == 1 and nights["serving"][0]["gpu_count"] == 4
    (row,) = [b for b in nights["binding"] if b["constraint"] == "deadline:finetune"]
    # by hand: arrival, then the P80 running time's hours at 8 a day
    assert row["slack"] == pytest.approx(120 - (ready + job["wall_days_planned"] * 24 / 8), abs=1e-4)
    assert row["slack"] < 120 - ready - 2 * job["wall_days_planned"]
    assert job["hours_a_day"] == 8  # every bought GPU serves: the job has only their nights


def test_the_plan_and_memo_say_the_days_the_running_takes(nights):
    (job,) = nights["jobs"]
    days = job["wall_days"] * 3
    summary = time_text(nights, plan_context(nights.problem))
    assert " of running" in summary
    assert f"about {days:.1f} days in the serving GPUs' 8 off-peak hours a day" in summary, summary
    ctx = plan_context(nights.problem)
    (ready,) = {p["ready_days"] for p in nights["purchase"]}
    sentence = _finish_sentence(nights, ctx, 24 * job["wall_days"])
    assert f"{120 - ready - days:.1f} days before its 120-day deadline" in sentence, sentence
    table = "\n".join(jobs_section(nights, "text"))
    assert f"{days:.1f} days in 8-hour nights" in table, table


def test_a_job_with_free_gpus_runs_around_the_clock(tmp_path):
    """No off-peak hours lent: the job holds GPUs that serve no one and its time is its running."""
    path = tmp_path / "workload.yaml"
    path.write_text(WORKLOAD.replace("HOURS", "0"))
    plan = api.plan(path, explain="none", as_of="2026-12-01")
    (job,) = plan["jobs"]
    (ready,) = {p["ready_days"] for p in plan["purchase"]}
    assert "hours_a_day" not in job
    (row,) = [b for b in plan["binding"] if b["constraint"] == "deadline:finetune"]
    assert row["slack"] == pytest.approx(120 - ready - job["wall_days_planned"], abs=1e-4)
    assert "off-peak" not in time_text(plan, plan_context(plan.problem))


def _two(tmp_path, first: int, second: int):
    text = WORKLOAD.replace("HOURS", "8").replace("deadline: 120d", f"deadline: {first}d")
    text = text.replace(
        "gpus:", f"  - {{name: finetune2, kind: finetune, model: llama-3-8b, tokens: 1B, deadline: {second}d}}\ngpus:"
    )
    text = text.replace("gpus: {allow: [rtx-6000-ada]}", "gpus: {allow: [rtx-6000-ada, rtx-a6000]}")
    path = tmp_path / "two.yaml"
    path.write_text(text)
    return api.plan(path, explain="none", as_of="2026-12-01")


def _slack(plan, job: str) -> float:
    (row,) = [b for b in plan["binding"] if b["constraint"] == f"deadline:{job}"]
    return row["slack"]


def test_two_jobs_in_the_same_nights_run_one_after_the_other(tmp_path):
    """review30 HIGH 1: two fine-tunes on the 4 serving GPUs' nights both read "finishes in 76.01" days;
    one runs after the other, so the second is done on day 73 + 2 x 3.01."""
    plan = _two(tmp_path, 120, 121)
    jobs = {j["name"]: j for j in plan["jobs"]}
    assert all(j["gpu"] == "rtx-6000-ada" and j.get("hours_a_day") == 8 for j in jobs.values())
    (ready,) = {p["ready_days"] for p in plan["purchase"] if p["gpu"] == "rtx-6000-ada"}
    nights = [jobs[n]["wall_days_planned"] * 3 for n in ("finetune", "finetune2")]
    assert _slack(plan, "finetune") == pytest.approx(120 - ready - nights[0], abs=1e-4)
    assert _slack(plan, "finetune2") == pytest.approx(121 - ready - sum(nights), abs=1e-4)


def test_two_jobs_the_nights_cannot_hold_by_their_deadlines_get_gpus_of_their_own(tmp_path):
    """review30 HIGH 1: due on days 78 and 77, the two cannot run one night after another (day 79.0); the
    plan bought a fifth RTX 6000 Ada, still only nights for both, and called both on time."""
    plan = _two(tmp_path, 78, 77)
    assert plan["status"] == "optimal"
    assert not [w for w in plan["warnings"] if w["code"] == "deadline-schedule"]
    for job in plan["jobs"]:
        (ready,) = {p["ready_days"] for p in plan["purchase"] if p["gpu"] == job["gpu"]}
        spread = 24 / job["hours_a_day"] if job.get("hours_a_day") else 1.0
        due = {"finetune": 78, "finetune2": 77}[job["name"]]
        assert ready + job["wall_days_planned"] * spread <= due  # by hand: each alone in its own hours
        assert _slack(plan, job["name"]) >= 0
    assert len({j["gpu"] for j in plan["jobs"]}) == 2 or sum(p["count"] for p in plan["purchase"]) >= 8


def test_a_job_without_a_deadline_in_the_nights_ends_within_the_horizon(tmp_path):
    """review30 HIGH 2: 8B tokens in 8-hour nights "finishes in 97.12 days ... within the 3-month horizon
    (91 days)", resold at month 3 while it ran: it now runs where it ends within the horizon."""
    text = WORKLOAD.replace("HOURS", "8").replace("horizon_months: 24", "horizon_months: 3")
    text = text.replace("tokens: 1B\n    deadline: 120d\n", "tokens: 8B\n").replace(
        "[rtx-6000-ada]", "[rtx-6000-ada, rtx-a6000]"
    )
    path = tmp_path / "horizon.yaml"
    path.write_text(text)
    plan = api.plan(path, explain="none", as_of="2026-12-01")
    (job,) = plan["jobs"]
    (ready,) = {p["ready_days"] for p in plan["purchase"] if p["gpu"] == job["gpu"]}
    spread = 24 / job["hours_a_day"] if job.get("hours_a_day") else 1.0
    (row,) = [b for b in plan["binding"] if b["constraint"] == "horizon"]
    horizon = 3 * HOURS_PER_MONTH / 24
    assert ready + job["wall_days_planned"] * spread <= horizon  # by hand, from the JSON
    assert row["slack"] == pytest.approx(horizon - ready - job["wall_days_planned"] * spread, abs=1e-4)


def test_the_front_ends_at_the_cheapest_plan_at_its_real_finish(nights, catalog, rules):
    """review30 HIGH 3: `frontier` listed "73.9 days $57,009 5x" and left out the cheapest plan (4x, day
    75.7 in 8-hour nights); a plan's time on the front is its running spread over the nights it runs in."""
    workload = parse_workload(yaml.safe_load(WORKLOAD.replace("HOURS", "8")))
    front = pareto(workload, catalog=catalog, rules=rules, as_of=dt.date(2026, 12, 1), points=6)["points"]
    (ready,) = {p["ready_days"] for p in nights["purchase"]}
    (job,) = nights["jobs"]
    last = front[-1]
    assert last["total_cost_usd"] == pytest.approx(nights["total_cost_usd"], abs=0.01)
    assert last["makespan_days"] == pytest.approx(ready + job["wall_days"] * 3, abs=1e-4)
    days = [p["makespan_days"] for p in front]
    costs = [p["total_cost_usd"] for p in front]
    assert days == sorted(days) and costs == sorted(costs, reverse=True)


def test_the_fastest_plan_within_a_budget_may_train_in_the_nights(tmp_path, nights):
    """review30b HIGH 2: with a $60,000 budget `--objective time` said "no feasible plan" and advised raising
    it to $54,462, beside the $54,461 cost plan: its caps were the jobs' own times, which a job in lent nights
    finishes after. Past every cap, the cheapest plan is the only one and so the fastest."""
    path = tmp_path / "budget.yaml"
    path.write_text(WORKLOAD.replace("HOURS", "8") + "budget_usd: 60000\n")
    plan = api.plan(path, explain="none", as_of="2026-12-01", objective="time")
    assert plan.feasible and plan["total_cost_usd"] == pytest.approx(nights["total_cost_usd"], abs=0.01)
    assert plan["jobs"][0].get("hours_a_day") == 8


def test_jobs_run_in_turn_beside_the_gpus_that_serve_not_on_them(tmp_path):
    """review30b HIGH 1: 8 RTX 6000 Ada bought, 4 serving all day (none lent), two 4-GPU fine-tunes read
    "finishes in 74.00" days each, scheduled on all 8; on the 4 free of serving they run one after the
    other. The deadlines here hold either way (120 and 121 days): the second's slack counts its turn."""
    text = WORKLOAD.replace("HOURS", "0").replace(
        "gpus:", "  - {name: finetune2, kind: finetune, model: llama-3-8b, tokens: 1B, deadline: 121d}\ngpus:"
    )
    path = tmp_path / "turns.yaml"
    path.write_text(text.replace("gpus: {allow: [rtx-6000-ada]}", "gpus: {allow: [rtx-6000-ada], min: 8}"))
    plan = api.plan(path, explain="none", as_of="2026-12-01")
    (serving,) = plan["serving"]
    (bought,) = plan["purchase"]
    jobs = {j["name"]: j for j in plan["jobs"]}
    assert bought["count"] - serving["gpu_count"] == 4 and all(j["gpu_count"] == 4 for j in jobs.values())
    ready, runs = bought["ready_days"], [jobs[n]["wall_days_planned"] for n in ("finetune", "finetune2")]
    assert _slack(plan, "finetune") == pytest.approx(120 - ready - runs[0], abs=1e-4)
    assert _slack(plan, "finetune2") == pytest.approx(121 - ready - runs[0] - runs[1], abs=1e-4)
