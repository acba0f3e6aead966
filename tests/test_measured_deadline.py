"""A job whose speed is the user's own measurement is held to its deadline and the horizon at the
measurement's band (review19 #1): the time the plan holds it to is the measurement's P80, the
quantile of the P10-P90 it prints, not the P80 of the GPU generation's error. Figures by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist

from click.testing import CliRunner

import advisor
from advisor.cli import main

DATA = Path(__file__).parent / "data" / "review19"
AS_OF = "2026-12-01"
# 64 H100 measured at 600K tokens/s (spread 5%: P10 speed at x 0.95); exactly these 64 rented
MEASURED_64 = """
name: 8B pretrain on exactly 64 H100, our measurement
deployment: {{context: datacenter, region: US, ownership: rent, horizon_months: {months}}}
gpus: {{count: 64, allow: [h100-sxm]}}
jobs:
  - name: pretrain
    model: llama-3-8b
    tokens: {tokens}
{deadline}    measured:
      - {{gpu: h100-sxm, count: 64, tokens_per_s: 600K, date: 2026-11-20, note: torchtitan on our cluster}}
"""


def _write(tmp_path: Path, months: int = 12, tokens: str = "1T", deadline: str | None = None) -> str:
    path = tmp_path / "w.yaml"
    line = f"    deadline: {deadline}\n" if deadline else ""
    path.write_text(MEASURED_64.format(months=months, tokens=tokens, deadline=line), encoding="utf-8")
    return str(path)


def _p80_over_p50() -> float:
    """The measurement's P80 time over its P50: speed at the 20th percentile of a log-normal whose
    P10 is x 0.95, so time x exp(-ln(0.95) x z(0.8) / z(0.9))."""
    z = NormalDist().inv_cdf
    return math.exp(-math.log(0.95) * z(0.8) / z(0.9))  # 1.03426


def test_a_measured_jobs_planned_time_is_its_measurements_p80():
    """1T tokens / 600K tokens/s / goodput = 19.349 days; the P80 held: 19.349 x 1.03426 = 20.012
    days (the generation's band held it at 20.75, above the printed P90 of 20.37)."""
    d = json.loads(advisor.plan(str(DATA / "rent64_measured.yaml"), as_of=AS_OF).to_json())
    (job,) = d["jobs"]
    assert job["speed_evidence"] == "measured"
    assert math.isclose(job["wall_days_planned"], job["wall_days"] * _p80_over_p50(), rel_tol=1e-4)
    assert job["wall_days_range"]["p50"] < job["wall_days_planned"] < job["wall_days_range"]["p90"]


def test_the_horizon_holds_a_measured_job_at_its_measurements_band(tmp_path):
    """1.5T tokens: 29.02 days estimated, P80 30.02 by the measurement (31.13 by Hopper's band):
    within a 1-month horizon (30.4 days) only at the measurement's band."""
    d = json.loads(advisor.plan(_write(tmp_path, months=1, tokens="1.5T"), as_of=AS_OF).to_json())
    assert d["status"] == "optimal", [x.get("message") for x in d.get("diagnosis") or []]
    (job,) = d["jobs"]
    assert math.isclose(job["wall_days_planned"], job["wall_days"] * _p80_over_p50(), rel_tol=1e-4)
    assert 29.9 < job["wall_days_planned"] < 30.1


def test_a_deadline_the_measurements_p80_misses_is_no_feasible_plan_saying_its_p80(tmp_path):
    """A 19.9-day deadline: the measurement's P80 (20.0 days) misses it, so exit 3, and the
    diagnosis names that time, not the generation's 20.75."""
    r = CliRunner().invoke(main, ["plan", _write(tmp_path, deadline="19.9d"), "--as-of", AS_OF])
    assert r.exit_code == 3, r.output
    assert "takes 20.0 days; the deadline is 19.9 days" in r.output
