"""Bought GPUs are held until their own work is done, not to the next month of a grid (review16 #4):
each bought GPU type's holding periods include its jobs' work ends (solve/holding.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import advisor
from advisor.economics.costs import Costs
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.solve.holding import HOLD_MONTHS, MAX_WORK_ENDS, WORK_END_STEP_MONTHS, hold_hours

DATA = Path(__file__).parent / "data" / "review16"
DAYS_PER_MONTH = 365 / 12


@pytest.fixture(scope="module")
def held():
    """64 used A100 80GB SXM for one 8B pretrain: they arrive on day 73 and the run takes 327.6 days
    at P80, so the work is done at month 13.16 (the grid's next month is 18)."""
    return json.loads(advisor.plan(str(DATA / "hold_grid_a100_64.yaml"), as_of="2026-12-01").to_json())


def _line(d: dict, kind: str) -> dict:
    (line,) = [b for b in d["bill_of_materials"] if b["kind"] == kind]
    return line


def _support(d: dict) -> tuple[dict, dict]:
    """The GPUs' support line and their servers' (each server supported whole on its own line)."""
    gpus, servers = [b for b in d["bill_of_materials"] if b["kind"] == "support"]
    return gpus, servers


def test_the_gpus_are_sold_the_month_their_work_is_done_and_billed_to_then(held):
    """Hand-worked from the plan's own arrival and P80 run and the catalog: support 15%/year / 12 of the
    GPU's $9,000 and its share of the HGX A100's $28,390 (8 slots): $156.859375 a GPU-month; hosting
    $184.06/kW-month on 0.4 kW of GPU + 3.3 kW / 8 slots of server overhead = 0.8125 kW a GPU; resale
    at the ampere curve's 0.6990 of the price at month 13.16 (review16's own figure; 0.6505 at 18), and
    log-linear between them (one segment of the curve): 0.6975 at month 13.30, the run since refit22."""
    (job,), (sale,) = held["jobs"], held["disposal"]
    ready, run = held["purchase"][0]["ready_days"], job["wall_days_planned"]
    assert (ready, round(run, 1)) == (73.0, 331.8)  # 327.3 in review16; 327.6 before refit22
    months = run / DAYS_PER_MONTH  # in service: arrival to sale
    assert sale["when"] == "after_work" and sale["month"] == pytest.approx((ready + run) / DAYS_PER_MONTH, abs=1e-3)
    assert "13.3 months, when their planned work is done" in sale["message"]
    gpus, servers = _support(held)
    assert gpus["quantity"] == pytest.approx(64 * months, abs=1e-3)
    assert servers["quantity"] == pytest.approx(8 * months, abs=1e-3)  # 8 HGX A100, full: the same as 8 shares
    # the run is printed to 6 significant digits (327.6xx days, +-0.0005): +-$0.17 on either line
    support = gpus["total_usd"] + servers["total_usd"]
    assert support == pytest.approx(64 * months * 0.15 / 12 * (9000 + 28390 / 8), abs=0.2)
    assert _line(held, "hosting")["total_usd"] == pytest.approx(64 * months * 184.06 * (0.4 + 3.3 / 8), abs=0.2)
    share = 0.6990 * (0.6505 / 0.6990) ** ((sale["month"] - 13.16) / (18 - 13.16))  # log-linear in time
    assert sale["resale_usd"] == pytest.approx(576_000 * share, abs=576_000 * 0.00015)


def test_selling_at_the_work_end_saves_the_months_the_grid_held(held):
    """Against holding to month 18 (the grid before): 4.70 months of $9,571 hosting and $10,039 support
    for 64 GPUs is $91,980 of cash less; the resale gains 576,000 x (0.6975 - 0.6505) = $27,050 (review16,
    at a run 4.2 days shorter before refit22: 4.84 months, $94,900 and $27,900)."""
    extra = 18 - held["disposal"][0]["month"]
    per_month = 64 * (184.06 * (0.4 + 3.3 / 8) + 0.15 / 12 * (9000 + 28390 / 8))
    assert per_month == pytest.approx(9_571 + 10_039, abs=1)
    cash = sum(b["total_usd"] for b in _support(held)) + _line(held, "hosting")["total_usd"]
    held_to_18 = per_month * (18 - 73 / DAYS_PER_MONTH)  # the plan before: 15.6 months in service
    assert held_to_18 - cash == pytest.approx(per_month * extra, abs=1) == pytest.approx(91_980, abs=300)
    assert held["residual_value_usd"] - 576_000 * 0.6505 == pytest.approx(27_050, abs=100)


def test_a_work_end_is_its_own_period_unless_a_period_ends_within_the_step_after_it():
    """Periods: the grid, the horizon, and the work ends, each end held by a period at most
    WORK_END_STEP_MONTHS later, the fewest such periods; past MAX_WORK_ENDS ends (a fleet), none."""
    costs = Costs(0.1, 1.2, 150.0, 36 * HOURS_PER_MONTH, ())
    grid = [m * HOURS_PER_MONTH for m in HOLD_MONTHS if m < 36] + [36 * HOURS_PER_MONTH]
    assert hold_hours(costs) == grid
    step = WORK_END_STEP_MONTHS * HOURS_PER_MONTH
    ends = [13.16 * HOURS_PER_MONTH, 13.3 * HOURS_PER_MONTH, 13.9 * HOURS_PER_MONTH, 11.9 * HOURS_PER_MONTH]
    got = hold_hours(costs, ends + [40 * HOURS_PER_MONTH])  # an end past the horizon: the horizon holds it
    # 11.9 is held by month 12; 13.16 and 13.3 by 13.3 (within the step after 13.16); 13.9 by itself
    assert sorted(set(got) - set(grid)) == [13.3 * HOURS_PER_MONTH, 13.9 * HOURS_PER_MONTH]
    assert all(any(end <= p <= end + step for p in got) for end in ends)
    many = [(1 + i / 100) * HOURS_PER_MONTH for i in range(MAX_WORK_ENDS + 1)]  # a fleet's: the grid alone
    assert hold_hours(costs, many) == grid


def test_a_sale_after_the_work_says_how_long_after_and_why():
    """A type sold at a period after its work's end (copies in turn, jobs sharing it: no finish of its
    own is a period) says how long after, at which month, and why; a sale at the end says it is done."""
    from advisor.solve.holding import Holding
    from advisor.solve.ownership_terms import _after_work

    levels = [Holding(m * HOURS_PER_MONTH, 0.5, 0.5, 0.0, 0.0) for m in (12, 18, 24)]
    done = 13.16 * HOURS_PER_MONTH
    text = _after_work(levels, 18 * HOURS_PER_MONTH, done, 8)
    assert (
        text
        == "4.8 months after their planned work is done at month 13.16 (no holding period ends sooner after it: docs/model.md §2.2)"
    )
    assert "within its gap" in _after_work(levels, 24 * HOURS_PER_MONTH, done, 8)  # 18 was offered
    assert "13 hours after" in _after_work(levels, done + 13, done, 8)
    # two days to a month past the work read in days, the unit between hours and months
    assert _after_work(levels, done + 48, done, 8).startswith("2 days after")
    assert _after_work(levels, done + 29.6 * 24, done, 8).startswith("30 days after")
    assert _after_work(levels, done + HOURS_PER_MONTH, done, 8).startswith("1 month after")
    assert _after_work(levels, done, done, 8).startswith("when their planned work is done")
    # one GPU sold: "its" work, "holding it longer" (article-office read "1 ... RTX 4090 resold ... when their")
    assert _after_work(levels, done, done, 1).startswith("when its planned work is done (holding it longer")
    assert _after_work(levels, done + 13, done, 1).startswith("13 hours after its planned work is done")


def test_gpus_that_serve_for_some_months_are_sold_when_the_serving_ends():
    """review17 #2: serve-8b-office served for 7 months sold its two 4090s at month 9, "2 months after
    their planned work is done at month 7.00": a serving job's end is a holding period too."""
    import yaml

    doc = yaml.safe_load((Path(__file__).resolve().parent.parent / "examples" / "serve-8b-office.yaml").read_text())
    (job,) = [j for j in doc["jobs"] if j["kind"] == "serve"]
    job["months"] = 7
    p = json.loads(advisor.plan(doc, as_of="2026-12-01", explain="none").to_json())  # (disposal: every level)
    (sale,) = p["disposal"]
    assert sale["month"] == pytest.approx(7.0, abs=1e-3) and "when their planned work is done" in sale["message"]


def test_a_jobs_copies_run_in_turn_and_its_gpus_are_sold_after_the_last(plan_json, write):
    """review29: 12 copies of a job with no deadline on 1 bought GPU were said done at one copy's finish
    (month 2.41: "resold ... after their planned work is done at month 0.45" in the review's case), where
    they run one after another: done at arrival + 12 x one copy's planned time, by hand from the JSON. The
    plan's GPU count row says "1 GPU" too (it read "1 GPUs, at most 1 allowed")."""
    doc = (
        "deployment: {context: datacenter, ownership: buy}\njobs:\n"
        "  - {name: sweep, model: gpt2-124m, tokens: 5B, repeat: 12}\ngpus: {allow: [a100-80gb-pcie], max: 1}\n"
    )
    code, p = plan_json(write(doc))
    (job,), (item,), (sale,) = p["jobs"], p["purchase"], p["disposal"]
    assert code == 0 and (job["copies"], job["gpu_count"], item["count"]) == (12, 1, 1)
    done_month = (item["ready_days"] + 12 * job["wall_days_planned"]) / DAYS_PER_MONTH
    assert f"after its planned work is done at month {done_month:.2f}" in sale["message"], (done_month, sale)
    assert sale["month"] >= done_month
    (row,) = [b for b in p["binding"] if b["constraint"].startswith("gpu_count")]
    assert row["message"].startswith("1 GPU, at most 1 allowed"), row


def test_one_gpu_bought_and_resold_is_it_in_the_memo(example_plan):
    """review29 L4: article-office's memo read "... workstation ... to hold them" and "reselling the GPUs" for
    its one RTX 4090."""
    from conftest import EXAMPLES

    _, plan = example_plan("article-office")
    assert sum(i["count"] for i in plan["purchase"] if i["ownership"] == "buy") == 1
    text = advisor.memo(plan, EXAMPLES / "article-office.yaml", fmt="md", charts=False).text
    assert "to hold it" in text and "to hold them" not in text
    assert re.search(r"back by reselling the GPU\b(?!s)", text), text[:2000]
