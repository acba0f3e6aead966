"""Cash is cash (issue 29 item 6, issue 32): every figure a plan prints about its cost adds up, to the
cent, to the total printed beside it: the bill of materials to the nominal cost, the nominal lines to
the nominal cost, the present-value lines to the total; a plan that rents still keeps its data."""
from __future__ import annotations

from decimal import Decimal

import pytest
from conftest import EXAMPLES


def _sum(values) -> Decimal:
    return sum((Decimal(repr(v)) for v in values if v is not None), Decimal(0))


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
def test_every_cost_line_adds_up_to_its_printed_total(example_plan, name):
    code, plan = example_plan(name)
    assert code == 0
    nominal, total = Decimal(repr(plan["nominal_cost_usd"])), Decimal(repr(plan["total_cost_usd"]))
    assert _sum(row["total_usd"] for row in plan["bill_of_materials"]) == nominal
    assert _sum(plan["cost_breakdown"].values()) == nominal
    assert _sum(plan["cost_breakdown_pv"].values()) == total
    for row in plan["bill_of_materials"]:   # a line's total is its quantity at its unit price (printed to 6 digits)
        if row["total_usd"] is not None and row["unit_usd"] is not None:
            product = row["quantity"] * row["unit_usd"]
            assert abs(product - row["total_usd"]) <= 0.01 + 5e-6 * abs(product)


def test_a_rented_plan_pays_for_its_storage_like_a_bought_one(example_plan):
    """The data and checkpoints are kept whoever owns the GPUs: renting is not made cheaper by leaving
    them out (priced as bought flash, taxed; the plan says no cloud storage rate is sourced)."""
    _, plan = example_plan("rent-vs-buy-3y")
    assert all(p["ownership"] == "rent" for p in plan["purchase"])
    (store,) = [r for r in plan["bill_of_materials"] if r["item"].startswith("flash storage")]
    assert store["total_usd"] > 0 and "no sourced cloud storage rate" in store["note"]
    assert plan["cost_breakdown"]["storage_usd"] == pytest.approx(store["total_usd"], abs=0.01)
