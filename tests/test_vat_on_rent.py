"""Review 10, defect 10: a buyer that cannot reclaim VAT (`finance.tax_recoverable: false`, a German
university) pays it on rent, support, hosting and electricity too -- charged by the provider, or
self-assessed under the reverse charge and not reclaimed -- not only on hardware. Each figure is
re-done by hand from the plan's own JSON lines and the catalog's 19% for DE."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import AS_OF

import advisor

DATA = Path(__file__).parent / "data" / "sens10"
SERVICES = ("burn_in_usd", "support_usd", "energy_usd", "hosting_usd", "rental_usd", "bridge_usd")
DE_VAT = 0.19


def planned(path: Path, catalog, rules) -> dict:
    p = advisor.plan(advisor.load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF)
    return json.loads(p.to_json())


def with_budget(tmp_path: Path, usd: str, **finance) -> Path:
    doc = yaml.safe_load((DATA / "de_university_rent.yaml").read_text(encoding="utf-8"))
    doc["budget_usd"] = usd
    if finance:
        doc["finance"] = finance
    elif "finance" in doc:
        del doc["finance"]
    out = tmp_path / f"rent_{usd}_{len(finance)}.yaml"
    out.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return out


def test_vat_not_reclaimable_is_counted_on_rent_too(catalog, rules):
    """Was: 'uses $165,789.88 of the $170,000.00 budget', VAT on the $1,328.77 of storage only; by hand
    1.19 x (1,328.77 + 165,288.96) = $198,275.10, over the budget: no plan fits it."""
    d = planned(DATA / "de_university_rent.yaml", catalog, rules)
    assert d["status"] == "infeasible" and not d["purchase"], d["nominal_cost_usd"]
    assert "$198,275.10" in json.dumps(d["diagnosis"]), d["diagnosis"]  # the cheapest plan's cash, by hand


@pytest.fixture(scope="module")
def made(catalog, rules, tmp_path_factory, data_plan) -> dict[str, tuple[Path, Any, str]]:
    """The rented plan (a 250K budget, no VAT reclaim) and the bought 70B one (~2 s of CPU, the plan
    test_signable_memo reads too: conftest.data_plan), each made once for the tests below that read them:
    name -> (workload file, Plan, its JSON as made)."""
    rent = with_budget(tmp_path_factory.mktemp("vat"), "250K", tax_recoverable=False)
    return {"rent": (rent, *data_plan(rent)), "buy": (DATA / "buy_70b_de.yaml", *data_plan(DATA / "buy_70b_de.yaml"))}


def test_the_rent_plan_pays_vat_on_its_rent_on_a_line_of_its_own(made):
    """Given the budget, the cash is 1.19 x (storage + rent), the VAT on the rent on its own bill line
    (rent at the offer's rate), and every line adds up to the cash to the cent."""
    d = json.loads(made["rent"][2])
    cb = d["cost_breakdown"]
    assert cb["rental_usd"] == pytest.approx(78336 * 2.11, abs=0.01)  # billed GPU-hours x SF Compute's rate
    assert cb["services_tax_usd"] == pytest.approx(DE_VAT * cb["rental_usd"], abs=0.01)
    assert d["nominal_cost_usd"] == pytest.approx((1 + DE_VAT) * (cb["storage_usd"] + cb["rental_usd"]), abs=0.02)
    assert round(sum(cb.values()), 2) == d["nominal_cost_usd"]
    assert round(sum(r["total_usd"] or 0.0 for r in d["bill_of_materials"]), 2) == d["nominal_cost_usd"]
    (vat,) = [r for r in d["bill_of_materials"] if r["item"].startswith("tax on rent and services (DE)")]
    assert vat["total_usd"] == cb["services_tax_usd"] and vat["unit_usd"] == DE_VAT
    assert {"ecovis_eu_eservices", "danish_vat_reverse_charge"} <= set(vat["source"])


def test_a_buyer_that_reclaims_vat_pays_none_on_rent(catalog, rules, tmp_path):
    """The default (a registered business reclaims it): no VAT line, the same rent."""
    d = planned(with_budget(tmp_path, "250K"), catalog, rules)
    assert "services_tax_usd" not in d["cost_breakdown"]
    assert d["nominal_cost_usd"] == pytest.approx(
        d["cost_breakdown"]["storage_usd"] + d["cost_breakdown"]["rental_usd"], abs=0.01
    )


def test_owned_gpus_pay_vat_on_support_hosting_and_electricity(made):
    """Bought in DE without a VAT reclaim: the support, hosting, electricity and burn-in lines at their
    prices, and 19% of their sum on its own line (w1 in review 10: $79,163.71 left out beside burn-in's)."""
    d = json.loads(made["buy"][2])
    cb = d["cost_breakdown"]
    base = sum(cb.get(k) or 0.0 for k in SERVICES)
    assert cb["support_usd"] > 0 and cb["hosting_usd"] > 0 and cb["energy_usd"] > 0
    assert cb["services_tax_usd"] == pytest.approx(DE_VAT * base, abs=0.02)
    assert round(sum(cb.values()), 2) == d["nominal_cost_usd"]


@pytest.mark.parametrize("name", ["rent", "buy"])
def test_the_memo_with_vat_on_services_adds_up_to_the_cent(catalog, rules, made, name):
    """The memo's bill, cost table and cash sentence, summed as printed, with the VAT on its own rows."""
    from test_cash_adds_up import bom_lines_multiply_out, cash_sentence_foots, memo_adds_up

    path, p, as_made = made[name]
    text = advisor.memo(p, path, fmt="md", catalog=catalog, rules=rules, charts=False).text
    assert p.to_json() == as_made, "printing the plan changed it"
    memo_adds_up(text)
    cash_sentence_foots(text)
    assert bom_lines_multiply_out(text) >= 1
    assert "| VAT on rent and services (not reclaimable) |" in text and "for VAT on rent and services" in text
