"""Rentals as they are billed, on workloads the examples do not cover: two providers of one GPU and
kind, serving on whole nodes with idle GPUs, a capacity block priced to the tenth of a cent, a
one-year reservation. Each memo's rental line multiplies out to its amount as printed, and the
recommendation and the RFQ ask for what is billed (a review of the round found each of these wrong)."""

from __future__ import annotations

import csv
import io
import math

import pytest
from conftest import AS_OF
from test_cash_adds_up import bom_lines_multiply_out, cash_sentence_foots, memo_adds_up, rental_basis_adds_up

import advisor
from advisor.flow import plan
from advisor.inputs.workload import parse_workload

RENT = {"context": "cloud", "ownership": "rent"}
FINETUNE_8B = {"name": "tr", "kind": "finetune", "model": "llama-3-8b", "tokens": "300M"}
WORKLOADS = {
    "hourly": {  # SF Compute's H100 clusters: billed by the whole hour, from one hour
        "deployment": RENT,
        "jobs": [{"name": "tr", "kind": "pretrain", "model": "llama-3-8b", "tokens": "10B", "deadline": "30d"}],
    },
    "two-providers": {
        "deployment": {**RENT, "rent_kinds": ["on_demand", "spot"]},
        "gpus": {"allow": ["h100-sxm"]},
        "jobs": [
            {**FINETUNE_8B, "deadline": "1d"},
            {"name": "big", "kind": "pretrain", "model": "llama-3-70b", "tokens": "20B", "deadline": "20d"},
        ],
    },
    "serving-idle-node": {
        "deployment": {**RENT, "horizon_months": 1, "rent_kinds": ["on_demand"]},
        "gpus": {"allow": ["h200-sxm"]},
        "jobs": [
            {
                "name": "chat",
                "kind": "serve",
                "model": "llama-3.1-70b",
                "precision": "bf16",
                "traffic": {"requests_per_s": 0.2, "input_tokens": 500, "output_tokens": 200},
                "slo": {"ttft_ms": 3000, "tpot_ms": 150},
            }
        ],
    },
    "capacity-block": {
        "deployment": {**RENT, "rent_kinds": ["capacity_block"]},
        "gpus": {"allow": ["h100-sxm"]},
        "jobs": [{**FINETUNE_8B, "deadline": "5d"}],
    },
}


@pytest.fixture(scope="module")
def plans(catalog, rules) -> dict[str, dict]:
    docs = {k: parse_workload({"name": k, **v, "decision": "point"}) for k, v in WORKLOADS.items()}
    return {k: plan(d, catalog=catalog, rules=rules, as_of=AS_OF) for k, d in docs.items()}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_the_memo_multiplies_out_as_printed(plans, name):
    text = advisor.memo(plans[name], None, fmt="md", charts=False).text
    memo_adds_up(text)
    cash_sentence_foots(text)
    bom_lines_multiply_out(text)
    assert rental_basis_adds_up(text) == len([i for i in plans[name]["purchase"] if i["ownership"] == "rent"])


def test_two_providers_of_one_gpu_and_kind_are_two_lines_at_their_own_rates(plans, catalog):
    """The 8-GPU job and the 64-GPU job rent H100 spot from different providers: one line under the
    first provider's name and rate ($187 short, every GPU sent to it in the RFQ) was wrong."""
    items = plans["two-providers"]["purchase"]
    assert len({i["provider"] for i in items}) == len(items) >= 2
    for i in items:
        (offer,) = [o for o in catalog.gpus[i["gpu"]].rentals(i["rent_kind"]) if o.provider == i["provider"]]
        assert i["unit_price_usd"] == offer.usd_per_gpu_hour
    paid = sum(i["billed_gpu_hours"] * i["unit_price_usd"] for i in items)
    assert paid == pytest.approx(plans["two-providers"]["cost_breakdown"]["rental_usd"], abs=0.01 * len(items))


def test_idle_gpus_of_a_whole_node_are_in_the_serving_rental_line(plans):
    """4 H200 serve, the provider bills its 8-GPU node: 8 x 730 GPU-hours at the rate, not 4 x 730."""
    p = plans["serving-idle-node"]
    (item,) = p["purchase"]
    assert item["billed_gpus"] == 8 > item["count"]
    assert item["billed_gpu_hours"] == pytest.approx(8 * 730)
    assert item["billed_gpu_hours"] * item["unit_price_usd"] == pytest.approx(p["cost_breakdown"]["rental_usd"])


def test_a_capacity_block_is_asked_for_as_billed_at_its_quoted_rate(plans):
    """AWS's H100 capacity block costs $4.916 a GPU-hour, billed by the 8-GPU node for at least a day:
    the recommendation and the RFQ say so ('$4.92' and '10 GPU-hours ... up to 4 GPUs' did not)."""
    p = plans["capacity-block"]
    (item,) = p["purchase"]
    assert item["unit_price_usd"] == 4.916 and item["billed_gpus"] == 8 and item["billed_gpu_hours"] == 8 * 24
    text = advisor.memo(p, None, fmt="md", charts=False).text
    assert "as a capacity block from AWS" in text and "192 GPU-hours billed for 10 used at $4.916 per GPU-hour" in text
    (row,) = [
        r for r in csv.DictReader(io.StringIO(advisor.rfq(p, fmt="csv").text)) if r["section"] == "quote" and r["gpu"]
    ]
    assert "192 GPU-hours billed for 10 used" in row["term"] and "billed as 8 (whole nodes)" in row["term"]
    assert "catalog $4.916/GPU-hour" in row["notes"]


def test_hourly_billing_is_what_the_memo_multiplies(plans):
    """8 H100 rented by the hour for a 46-hour run: the memo said '371 GPU-hours x $2.11' beside
    $793.36 (371 x 2.11 = $782.81); it multiplies the 376 GPU-hours billed (8 GPUs x 47 whole hours)
    and says how many were used."""
    p = plans["hourly"]
    (item,) = p["purchase"]
    per_gpu = item["gpu_hours"] / item["count"]
    assert item["billed_gpu_hours"] == item["billed_gpus"] * math.ceil(per_gpu)  # whole hours
    assert p["cost_breakdown"]["rental_usd"] == pytest.approx(item["billed_gpu_hours"] * item["unit_price_usd"])
    text = advisor.memo(p, None, fmt="md", charts=False).text
    assert f"{item['billed_gpu_hours']:,.0f} GPU-hours billed" in text and f"({item['gpu_hours']:,.0f} used" in text
    # the recommendation names the offer's kind as the bill of materials does (it said "on demand")
    assert item["rent_kind"] == "cluster_term" and "rented (cluster term, SF Compute" in text
    assert "GPUs on a cluster term from SF Compute" in text and " on demand " not in text


def test_a_short_term_is_written_in_hours_or_days_not_a_fraction_of_a_month(plans):
    """SF Compute sells H100 clusters from one hour (min_term_hours 1): the RFQ item says 'shortest term
    1 hour', not '0.00136986-month term' (a user's RFQ did)."""
    p = plans["hourly"]
    (item,) = [
        r for r in csv.DictReader(io.StringIO(advisor.rfq(p, fmt="csv").text)) if r["section"] == "quote" and r["gpu"]
    ]
    (bought,) = p["purchase"]
    assert bought["term_months"] * 730 == pytest.approx(1.0, rel=1e-5)  # the offer's own minimum term, in hours
    assert item["term"].endswith(", shortest term 1 hour") and "-month term" not in item["term"]
