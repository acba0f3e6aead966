"""A training job that runs only in the serving GPUs' off-peak hours (solve/constraints/at_once.py
off_peak_hours) finishes when its running, spread over those hours a day, is done: train-and-serve's
fine-tune read "takes 21.6 hours once its GPUs are ready on day 73.0" and "46.00 days of slack" for 2.7
days of 8-hour nights, and the memo "46.1 days before its 120-day deadline"."""

from __future__ import annotations

import pytest

from advisor import api
from advisor.present.memo_recommendation import _finish_sentence
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
