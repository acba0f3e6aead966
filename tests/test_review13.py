"""Review 13 (issue 30, hostile): decisions that survive their inputs, checked as a reviewer of capital
purchases would. Every test here failed on main at the time of the review. Issue 30's target 2 ("p80
never reports a lower cost than expected") is not among them: the P80 basis keeps the reservation, whose
P80 ($199,420) is below the on-demand plan's mean ($207,788), as any quantile of a cost that jumps by a
whole second term in 14% of draws may be (docs/model.md §2.6).

The commitment case (tests/data/review13/commitment.yaml): 8 A100 40GB for ~330 days, allowed a 1-year
reservation (billed in full, and a whole second year when the job runs past the term) or on demand.
At the point estimates the reservation is cheaper ($189,931 vs $198,015). Over the plan's own 200 draws
(seed 16; the same draws for both workloads: one GPU type, both offers high confidence) the
reservation's mean is $220,524 and the on-demand plan's $207,788; on 50,000 draws (seed 4242)
$216,813 vs $206,656, a difference of $10,157 +- $251. In 11 of the first 40 draws (the robustness
verdict's) the reservation pays a second year.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import advisor

DATA = Path(__file__).parent / "data" / "review13"
AS_OF = "2026-12-01"


def _plan(name: str, basis: str | None = None) -> dict:
    import yaml

    w = yaml.safe_load((DATA / name).read_text())
    if basis is not None:
        w["decision"] = {"basis": basis}
    p = advisor.plan(w, catalog=str(DATA / "commitment_catalog.yaml"), as_of=AS_OF)
    return json.loads(p.to_json())


@pytest.fixture(scope="module")
def both():
    return _plan("commitment.yaml"), _plan("commitment_on_demand.yaml")


def test_expected_basis_does_not_choose_a_plan_dearer_in_expectation_than_an_allowed_one(both):
    """Target 1's intent: the expected basis chooses the least mean cost. The on-demand plan is allowed
    in the same workload, and its mean over the same draws is $12,736 lower; the decision never saw it
    (`candidates: 1`: the mean-price re-solve cannot see a commitment's second term)."""
    chosen, on_demand = both
    gap = chosen["solver"].get("gap") or 1e-4
    mine = chosen["decision"]["expected_cost_usd"]
    theirs = on_demand["decision"]["expected_cost_usd"]
    assert mine <= theirs * (1 + gap) + 1.0, (
        f"expected basis chose {chosen['purchase'][0]['provider']} at mean ${mine:,.0f}; "
        f"on demand, allowed, has mean ${theirs:,.0f}"
    )


def test_robustness_counts_a_commitment_that_pays_a_second_term(both):
    """In 11 of the first 40 draws the reservation runs past its year and pays a second one ($380k),
    where on demand costs at most ~$250k: the choice does not hold there. The verdict reads
    100% of 40 (it compares (GPU, ownership) pairs, and both plans are (a100-40gb-sxm, rent)), so the
    honest headline (target 6) cannot fire."""
    chosen, _ = both
    assert chosen["robustness"]["holds_share"] < 0.95, chosen["robustness"]["message"]


def test_verify_names_the_speed_that_decides_the_term(both):
    """Knowing the job's real speed decides reservation vs on demand (a second year in ~14% of draws):
    its value of information is thousands of dollars, yet decision.verify is empty."""
    chosen, _ = both
    verify = chosen["decision"]["verify"]
    assert any(v["input"].startswith("speed:a100-40gb-sxm") and v["evpi_usd"] > 0 for v in verify), verify


def test_amd_chosen_shows_no_measured_run_and_the_price_of_robustness():
    """Target 5, with AMD chosen (only the MI300X allowed): 'no measured training run' is in the
    recommendation (it is); the price of robustness is not shown in the memo when it is $0 (the point
    plan is the expected one), so a reader cannot tell 'nothing lost' from 'not computed'."""
    p = advisor.plan(
        str(DATA / "llama405b_mi300x_only.yaml"), catalog=str(DATA / "amd_cluster_catalog.yaml"), as_of=AS_OF
    )
    text = advisor.memo(p, charts=False).text
    rec = text.split("## 1. Recommendation", 1)[1].split("\n## ", 1)[0]
    assert "No measured training run" in rec
    assert "price of robustness" in rec


@pytest.mark.slow
def test_the_alternative_named_first_is_counted_as_the_verdict_counts_a_hold():
    """Target 6: 'the alternative that holds most often'. A hold is counted on (GPU, ownership) pairs,
    but alternatives on exact counts: this plan (8 H100 for a $50 fine-tune + 54 MI300X replicas) reads
    'holds in only 29% ...; the alternative that holds most often is 47x AMD Instinct MI300X (rent)
    (2%)', with 48x, 50x and 52x MI300X listed apart at 2% each. The alternatives shown add to 10%
    of the draws; 61% are not accounted for."""
    p = advisor.plan(str(DATA / "serve_and_finetune.yaml"), as_of=AS_OF)
    r = json.loads(p.to_json())["robustness"]
    assert r["holds_share"] < 0.8
    kinds = [frozenset(part.split("× ", 1)[1] for part in a["purchase"].split(" + ")) for a in r["alternatives"]]
    assert len(kinds) == len(set(kinds)), [a["purchase"] for a in r["alternatives"]]


@pytest.fixture(scope="module")
def community_rate():
    """8 H100 rented for a 7B pretrain; RunPod Community (low confidence) at $2.91 is 1.2% under the
    $2.94 at which Nebius ($2.95, medium confidence) becomes the cheaper offer: the issue's own
    'knife-edge choice resting on the weakest price'. Returns (the plan, the plan without RunPod)."""
    wl = str(DATA / "community_rate_near_break_even.yaml")
    plans = []
    for cat in ("community_rate_catalog.yaml", "community_rate_removed_catalog.yaml"):
        plans.append(json.loads(advisor.plan(wl, catalog=str(DATA / cat), as_of=AS_OF).to_json()))
    return plans


def test_a_low_confidence_rate_near_its_break_even_is_named_in_verify(community_rate):
    """Target 3: the plan rents from the low-confidence offer within 5% of its break-even; verify is
    empty (its candidates are per (GPU, ownership) pair, and the other offer is the same pair)."""
    chosen, _ = community_rate
    # (decide11) the expected basis now weighs the low-confidence band and rents from Nebius (the test
    # below); the plan at the point estimates still rests on the low-confidence rate: both name it
    import yaml

    w = yaml.safe_load((DATA / "community_rate_near_break_even.yaml").read_text())
    cat = str(DATA / "community_rate_catalog.yaml")
    point = json.loads(advisor.plan({**w, "decision": {"basis": "point"}}, catalog=cat, as_of=AS_OF).to_json())
    assert point["purchase"][0]["confidence"] == "low"
    for p in (point, chosen):
        verify = p["decision"]["verify"]
        assert any(v["input"] == "rental_rate:h100-sxm" and v["evpi_usd"] > 0 for v in verify), verify


def test_expected_basis_weighs_a_low_confidence_offer_against_a_firmer_one(community_rate):
    """On the same draws (one GPU group, one rent normal per GPU type read through each offer's band)
    the Nebius plan's mean is lower than the RunPod plan's (50,000 draws: $287,755 against $296,984, 3.1% lower). The
    expected basis kept RunPod when its one re-solve scaled every H100 offer by one type-wide factor; it
    now prices each offer at its own band's mean and rents from Nebius, as the plan without RunPod does."""
    chosen, other = community_rate
    assert chosen["purchase"][0]["provider"].startswith("Nebius"), chosen["purchase"]
    gap = chosen["solver"].get("gap") or 1e-4
    assert chosen["decision"]["expected_cost_usd"] <= other["decision"]["expected_cost_usd"] * (1 + gap)
