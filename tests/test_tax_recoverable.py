"""VAT a registered business reclaims is paid at purchase and not a cost (docs/model.md); a buyer that
cannot reclaim it (a university, a bank) says `finance.tax_recoverable: false`, and then it is a cost and
cash a budget caps. Either way the bill of materials says what is paid at purchase."""

from __future__ import annotations

import pytest

CN = """\
deployment: {{context: datacenter, region: CN, ownership: buy}}
jobs:
  - {{name: ft, kind: finetune, model: llama-3-8b, tokens: 2B, deadline: 200d}}
gpus: {{allow: [rtx-a6000], max: 16}}
{finance}"""


def _tax_line(plan: dict) -> dict:
    (line,) = [b for b in plan["bill_of_materials"] if b["item"].startswith("tax on hardware")]
    return line


def test_vat_a_buyer_cannot_reclaim_is_a_cost_and_cash(plan_json, write, catalog):
    rate = catalog.economics.sales_tax["CN"].rate
    code, reclaimed = plan_json(write(CN.format(finance="")))
    code2, paid = plan_json(write(CN.format(finance="finance: {tax_recoverable: false}"), "paid.yaml"))
    assert code == code2 == 0 and reclaimed["purchase"] == paid["purchase"]
    base = _tax_line(reclaimed)["quantity"]
    assert reclaimed["cost_breakdown"]["tax_usd"] == 0.0
    assert f"${base * rate:,.2f} paid at purchase and reclaimed" in _tax_line(reclaimed)["note"]
    assert paid["cost_breakdown"]["tax_usd"] == pytest.approx(base * rate, abs=0.01)
    assert paid["nominal_cost_usd"] - reclaimed["nominal_cost_usd"] == pytest.approx(base * rate, abs=0.02)


def test_a_us_sales_tax_is_never_reclaimed(plan_json, write):
    us = CN.replace("region: CN", "region: US")
    code, rule = plan_json(write(us.format(finance="")))
    code2, claimed = plan_json(write(us.format(finance="finance: {tax_recoverable: true}"), "t.yaml"))
    assert code == code2 == 0 and rule["cost_breakdown"]["tax_usd"] > 0
    assert claimed["cost_breakdown"] == rule["cost_breakdown"]
