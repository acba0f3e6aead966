"""The cost draws price each rented candidate at its own offer's rate band and its own speed
distribution, and a commitment billed its full term costs the same at any speed that still fits in it
(explain/plan_cost.py, explain/draws.py; docs/model.md "Joint draws"). Review 8's defects 2 and 4
(tests/test_review8_cluster_plans.py on branch review8), re-computed from the plan's own figures: the
rented offer's rate band, the job's time band and the billed hours.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from advisor.cli import main
from advisor.data.catalog import load_catalog
from advisor.data.uncertainty import price_dist, rate_dist

AS_OF = "2026-12-01"
HOURS_PER_YEAR = 8760


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _plan(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["plan", str(path), "--format", "json", "--as-of", AS_OF], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


MEASURED_64 = """\
name: measured 64 H100
deployment: {context: cloud, ownership: rent}
jobs:
  - name: pt
    kind: pretrain
    model: llama-3-8b
    tokens: 500B
    deadline: 45d
    measured:
      - {gpu: h100-sxm, count: 64, tokens_per_s: 600000, date: 2026-11-20, note: "our trainer"}
gpus: {count: 64}
"""


def test_cost_range_is_bounded_by_the_rented_offers_rate_band_and_the_jobs_time_band(tmp_path: Path) -> None:
    """Review 8, defect 2 (explain/draws.py: rent_confidence / gpu_prices; gpu_speed): the cost range
    and the decision's P80/P90 drew a rented GPU's rate at the confidence of its cheapest ON-DEMAND
    listing (h100-sxm: RunPod Community, low, P10-P90 x0.67-x1.50), not of the offer the plan rents (SF
    Compute cluster_term, medium, x0.89-x1.13, the range `decision.verify` prints); and with the user's
    own measurement on exactly this GPU and count the draws still took the Hopper prior (every other
    count of h100-sxm is a 'transferred' candidate), not the measurement's +-5%. Printed: P10-P90
    $21,915-$50,968 on a $31,853 plan; the job's own time band (x1.053 at P90) and the offer's rate band
    (x1.128) allow at most about $37.8K at P90."""
    plan = _plan(_write(tmp_path, "measured", MEASURED_64))
    (row,) = [p for p in plan["purchase"] if p["ownership"] == "rent"]
    (job,) = plan["jobs"]
    rate_p90 = price_dist(row["confidence"]).factor(0.9)
    time_p90 = job["wall_days_range"]["p90"] / job["wall_days"]
    rent = plan["cost_breakdown_pv"]["rental_usd"]
    ceiling = plan["total_cost_usd"] - rent + rent * rate_p90 * time_p90
    assert plan["total_cost_usd_range"]["p90"] <= ceiling * 1.01, (plan["total_cost_usd_range"], ceiling)
    assert plan["decision"]["p90_cost_usd"] <= ceiling * 1.01, (plan["decision"], ceiling)


RESERVED_64 = """\
name: reserved 1y 64 A100
deployment: {context: cloud, ownership: rent, rent_kinds: [reserved_1y]}
jobs:
  - {name: pt, kind: pretrain, model: llama-3-8b, tokens: 300B, deadline: 60d}
gpus: {count: 64, allow: [a100-40gb-sxm]}
decision: point
"""


def test_a_full_term_reservation_costs_the_same_at_any_speed(tmp_path: Path) -> None:
    """Review 8, defect 4 (explain/plan_cost.py: PlanCost.at; solve/redraw.py: Redraw._set_draw): a
    draw scaled every rented cost by rate / speed, but a 1-year reservation is billed its full 8,760
    hours whatever the speed (billed_gpu_hours 560,640 = 64 x 8,760 for 29,563 used). Printed: P10-P90
    $1,032,919-$2,422,050 and decision P80 $2,124,446 on a plan whose cost can only move with the rate:
    at the offer's P80 rate (x1.08, medium) it is about $1.64M, and even the widest (low) band gives
    $1.98M."""
    plan = _plan(_write(tmp_path, "reserved", RESERVED_64))
    (row,) = [p for p in plan["purchase"] if p["ownership"] == "rent"]
    assert row["billed_gpu_hours"] == row["billed_gpus"] * HOURS_PER_YEAR  # the full term is billed
    # the offer's band at this order (64 GPUs, eight of the one-node VMs Azure lists: the low grade's
    # spread about its own grade's mean, tested in test_offers.py)
    (offer,) = [o for o in load_catalog().gpus[row["gpu"]].prices.rent if o.provider == row["provider"]]
    dist = rate_dist(offer, row["billed_gpus"])
    rent = plan["cost_breakdown_pv"]["rental_usd"]
    fixed = plan["total_cost_usd"] - rent
    low, high = fixed + rent * dist.factor(0.1), fixed + rent * dist.factor(0.9)
    span = plan["total_cost_usd_range"]
    assert low * 0.99 <= span["p10"] and span["p90"] <= high * 1.01, (span, low, high)
    # the decision's P80 is the 80th percentile of its own n draws: within two standard errors of the
    # level (sqrt(0.8 x 0.2 / n), 0.028 at 200 draws) of the offer's P80 rate
    n = plan["decision"]["draws"]
    err = 2 * (0.8 * 0.2 / n) ** 0.5
    p80 = plan["decision"]["p80_cost_usd"]
    assert fixed + rent * dist.factor(0.8 - err) <= p80 <= fixed + rent * dist.factor(0.8 + err), plan["decision"]


RESERVED_ANY = """\
name: reserved 3y 64 GPU
deployment: {context: cloud, ownership: rent, rent_kinds: [reserved_3y, reserved_1y]}
jobs:
  - {name: pt, kind: pretrain, model: llama-3-8b, tokens: 300B, deadline: 60d}
gpus: {count: 64}
decision: point
"""


def test_a_full_term_reservation_stays_the_choice_until_the_job_misses_its_deadline(tmp_path: Path) -> None:
    """Review 8, defect 4, in the speed break-even (explain/ranges.py through solve/usable.at_speed): a
    slower GPU made the 1-year reservation's run cost / speed, so 64 A100 40GB reserved "stay the
    choice unless its real speed is >= 20% below the estimate" though their full term costs the same at
    any speed the job still fits in. The choice can change only where the job misses its 60-day
    deadline: the first whole percent X with planned days / (1 - X / 100) > 60 (66% here)."""
    plan = _plan(_write(tmp_path, "reserved_any", RESERVED_ANY))
    (row,) = [p for p in plan["purchase"] if p["ownership"] == "rent"]
    (job,) = plan["jobs"]
    assert row["billed_gpu_hours"] == row["billed_gpus"] * HOURS_PER_YEAR  # a term billed in full
    misses = next(x for x in range(1, 100) if job["wall_days_planned"] / (1 - x / 100) > 60 * (1 + 1e-9))
    (slower,) = [s for s in plan["sensitivity"]["speed"] if s["direction"] == "slower"]
    assert slower["gpu"] == row["gpu"] and slower["percent"] == misses, (slower, misses)
    # the robustness draws price it at its own offer's band and term (checked by hand in the next test);
    # 64 GPUs are eight of the one-node VMs Azure lists, a size its rate is not evidenced at: said, and
    # drawn at the low grade (the choice then holds in about 68% of the draws, 67% before the term fix
    # at the medium grade)
    assert row["confidence"] == "low"
    assert any(w["code"] == "quote-needed" and "in one node" in w["message"] for w in plan["warnings"])


def test_a_redrawn_reservation_is_billed_its_term_at_its_offers_rate(catalog: Any, rules: Any) -> None:
    """A robustness draw (solve/redraw.py) prices each rented column at its own offer's band at its GPU
    type's rent normal, and bills a reservation its term at any speed that fits: its choice is the
    full solve's with each GPU type's (single) offer factor set by hand, and 20% slower A100 40GB keep
    the reservation at the same cost."""
    from conftest import AS_OF as TEST_AS_OF

    from advisor.data.uncertainty import rate_dist
    from advisor.flow import prepare
    from advisor.inputs.workload import parse_workload
    from advisor.solve.milp import solve
    from advisor.solve.redraw import Redraw, signature
    from advisor.solve.scenario import baseline
    from advisor.solve.settings import SolveSettings

    doc = {
        "deployment": {"context": "cloud", "ownership": "rent", "rent_kinds": ["reserved_1y"]},
        "jobs": [{"name": "pt", "kind": "pretrain", "model": "llama-3-8b", "tokens": "300B", "deadline": "60d"}],
        "gpus": {"count": 64, "allow": ["a100-40gb-sxm", "a100-80gb-sxm"]},
        "decision": "point",
    }
    problem = prepare(parse_workload(doc), catalog, rules, TEST_AS_OF)
    offers = {c.gpu: c.offer.offer for cs in problem.candidates for c in cs if c.offer is not None}
    assert len({(c.gpu, c.offer.offer.provider) for cs in problem.candidates for c in cs}) == len(offers) == 2
    point = solve(problem)
    slow = solve(problem, baseline(problem).but(speed_factor={"a100-40gb-sxm": 0.8}))
    assert signature(problem, slow.bought, slow.assignment) == signature(problem, point.bought, point.assignment)
    assert slow.objective_usd == pytest.approx(point.objective_usd, rel=1e-9)  # the same term, the same cost
    redraw = Redraw(problem, baseline(problem), {g: 1.0 for g in offers}, SolveSettings())
    assert redraw.model is not None
    chosen = set()
    for speed, z in ((1.0, 0.0), (0.8, 0.0), (0.5, 0.0), (1.0, 1.5), (0.9, -1.2)):
        speeds = {"a100-40gb-sxm": speed, "a100-80gb-sxm": 1.0}
        normals = {"a100-40gb-sxm": z, "a100-80gb-sxm": -z}
        rent = {g: rate_dist(o).factor_at(normals[g]) for g, o in offers.items()}
        full = solve(problem, baseline(problem).but(speed_factor=speeds, rent_factor=rent))
        got = redraw.choice(speeds, {}, {}, normals)
        assert got is not None and got[1] == signature(problem, full.bought, full.assignment), (
            speed,
            z,
            got,
            full.chosen,
        )
        chosen.add(got[1][0][0])
    assert chosen == set(offers)  # a dearer A100 40GB rate (z = 1.5) moves the plan, a slower speed does not
