"""Cash is cash (issue 29 item 6, issue 32): every figure a plan prints about its cost adds up, to the
cent, to the total printed beside it: the bill of materials to the nominal cost, the nominal lines to
the nominal cost, the present-value lines to the total; a plan that rents still keeps its data."""

from __future__ import annotations

import re
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
    for row in plan["bill_of_materials"]:  # a line's total is its quantity at its unit price (printed to 6 digits)
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


def _money(cell: str) -> Decimal:
    text = cell.strip().strip("*").replace(",", "")
    sign = -1 if text.startswith("-") else 1
    return sign * Decimal(text.lstrip("-").lstrip("$"))


def _table(markdown: str, heading: str) -> list[list[str]]:
    """The rows of the first table under the `## N. <heading>...` section, as cells."""
    section = re.split(r"\n## \d+\. " + re.escape(heading), markdown, maxsplit=1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row.strip()[1:-1])] for row in rows[1:]]  # after the header


def memo_adds_up(markdown: str) -> None:
    """A memo's bill of materials and cost table, read as a finance reader adds them: the BOM's
    extended prices add up to its total cash, the cost lines to the cash subtotal, and the cash less
    the resale plus the discounting to the total present value, each to the cent."""
    bom = _table(markdown, "Bill of materials")
    *items, (label, *_, total_cash, _, _) = [r for r in bom if not set(r[0]) <= set("-:")]
    assert label == "**Total cash**"
    assert sum(_money(r[3]) for r in items if r[3] not in ("in hosting", "unpriced")) == _money(total_cash)
    costs = [r for r in _table(markdown, "Cost") if not set(r[0]) <= set("-:")]
    labels = [r[0] for r in costs]
    cut = next(i for i, name in enumerate(labels) if name.startswith("**Cash paid over"))
    cash = _money(costs[cut][2])
    assert sum(_money(r[2]) for r in costs[:cut]) == cash == _money(total_cash)
    assert costs[-1][0] == "**Total, present value**"
    assert cash + sum(_money(r[2]) for r in costs[cut + 1 : -1]) == _money(costs[-1][2])


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
def test_every_examples_memo_adds_up_to_the_cent(example_plan, name):
    """Issue 32's target: every example's Markdown memo (made from the example's plan, as `advisor memo`
    does after planning: tests/test_memo.py runs the CLI), its tables summed as printed, its totals the
    plan's own."""
    import advisor

    _, plan = example_plan(name)
    text = advisor.memo(plan, EXAMPLES / f"{name}.yaml", fmt="md", charts=False).text
    memo_adds_up(text)
    cash_sentence_foots(text)
    assert bom_lines_multiply_out(text) >= 1
    assert f"**${plan['total_cost_usd']:,.2f}**" in text and f"${plan['nominal_cost_usd']:,.2f}" in text


def cash_sentence_foots(markdown: str) -> None:
    """The recommendation's 'it pays $C in cash ($A upfront, $B for ...)' adds up as printed, and $C
    is the cost table's cash subtotal at the sentence's precision."""
    m = re.search(r"it pays \$([\d,.]+) in cash \((.*?)\)(?: and|;)", markdown)
    assert m, "no cash sentence"
    cash = Decimal(m.group(1).replace(",", ""))
    parts = [Decimal(x.replace(",", "")) for x in re.findall(r"\$([\d,.]+)", m.group(2))]
    assert sum(parts) == cash, m.group(0)
    costs = _table(markdown, "Cost")
    (subtotal,) = [_money(r[2]) for r in costs if r[0].startswith("**Cash paid over")]
    places = Decimal(1) if "." not in m.group(1) else Decimal("0.01")
    assert subtotal.quantize(places) == cash


def bom_lines_multiply_out(markdown: str) -> int:
    """Each bill-of-materials line, multiplied as printed (quantity x unit price; a tax line's base x
    its rate), is its extended price to the cent; returns the lines checked."""
    checked = 0
    for item, qty, unit, ext, *_ in _table(markdown, "Bill of materials"):
        if set(item) <= set("-:") or not ext.startswith("$") or item.startswith("**"):
            continue
        if unit.endswith("%"):
            product = _money(qty) * Decimal(unit[:-1]) / 100
        else:
            product = Decimal(qty.replace(",", "")) * _money(unit)
        assert abs(product - _money(ext)) <= Decimal("0.01"), (item, qty, unit, ext)
        checked += 1
    return checked


def rental_basis_adds_up(markdown: str) -> int:
    """The cost table's GPU rental line, multiplied out as printed (each 'H GPU-hours [billed] × $R'),
    is its amount to the cent per term; returns the number of terms read."""
    (row,) = [r for r in _table(markdown, "Cost") if r[0] == "GPU rental"]
    terms = re.findall(r"([\d,.]+) GPU-hours(?: billed)? \u00d7 \$([\d,.]+)", row[3])
    product = sum(Decimal(h.replace(",", "")) * Decimal(r.replace(",", "")) for h, r in terms)
    assert abs(product - _money(row[2])) <= Decimal("0.01") * len(terms), row
    return len(terms)


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
def test_the_rental_line_multiplies_out_to_its_amount(example_plan, name):
    """A finance reader multiplies the GPU rental's 'how it is computed' and gets its amount: the
    GPU-hours billed (whole nodes, billing steps, minimum terms), not the hours used, at the rate."""
    import advisor

    _, plan = example_plan(name)
    text = advisor.memo(plan, EXAMPLES / f"{name}.yaml", fmt="md", charts=False).text
    if plan["cost_breakdown"]["rental_usd"]:
        assert rental_basis_adds_up(text) >= 1


def test_every_rental_kind_has_words():
    from advisor.data.catalog_prices import RENT_KINDS
    from advisor.present.words import RENT_KIND_PHRASES

    assert set(RENT_KIND_PHRASES) == set(RENT_KINDS)


@pytest.mark.parametrize(
    ("parts", "total", "printed"),
    [
        ([9688.95, 31.05, 1.69], 9721.69, (["$9,689", "$31", "$2"], "$9,722")),
        ([49.48, 793.36], 842.84, (["$49.48", "$793.36"], "$842.84")),  # $49 + $793 is $842, not $843
        ([3536.60, 8175861.76], 8179398.36, (["$3,536.60", "$8,175,861.76"], "$8,179,398.36")),
    ],
)
def test_sentence_figures_foot_in_whole_dollars_or_in_cents(parts, total, printed):
    from advisor.present.words import footed

    assert footed(parts, total) == printed
