"""Issue 29, item 3: resale curves for every generation from sourced used-market prices, with the
dealer's spread, falling with age, never 100% at month 0, at any month."""

from __future__ import annotations

import pytest

from advisor.data.economics import ResidualCurve
from advisor.economics.ownership import market_fraction, resale_curve, residual
from advisor.solve.holding import WORK_END_STEP_MONTHS


def test_every_catalog_gpu_has_a_resale_curve(catalog):
    missing = [gid for gid in catalog.gpus if resale_curve(catalog, gid) is None]
    assert missing == []
    gens = catalog.economics.residual_value
    assert resale_curve(catalog, "b200")[0] == "blackwell" and gens["blackwell"].like == "hopper"
    for name, curve in gens.items():
        assert curve.note and curve.source, name
        for p in curve.points:
            assert p.source and p.note, (name, p.years)  # each used-market point cites where it was read


@pytest.mark.parametrize(
    "gpu",
    [
        "h100-sxm",
        "h200-sxm",
        "b200",
        "a100-80gb-sxm",
        "rtx-4090",
        "rtx-3090",
        "rtx-5090",
        "v100-32gb-sxm2",
        "mi300x",
        "l40s",
        "t4",
    ],
)
def test_resale_is_below_one_at_month_zero_and_falls_every_month(catalog, gpu):
    months = [residual(catalog, gpu, m / 12).fraction for m in range(0, 121)]
    assert 0 < months[0] < 1
    assert all(b < a for a, b in zip(months, months[1:])), "resale must fall with age, month by month"
    first = residual(catalog, gpu, 0.0)
    assert first.fraction == pytest.approx(first.market_fraction * (1 - first.discount)) and first.discount > 0


def test_the_dealers_spread_is_what_a_seller_loses(catalog):
    spread = catalog.economics.used_market_discount
    assert (spread.value, spread.low, spread.high, spread.confidence) == (0.15, 0.15, 0.35, "low")
    r = residual(catalog, "h100-sxm", 3.0)
    assert r.discount == 0.15 and r.fraction == pytest.approx(r.market_fraction * 0.85)
    # by hand: 0.72 x (0.50 / 0.72)^(3 / 3.6) = 0.5313 of the price on the used market, 0.4516 to the seller
    assert r.market_fraction == pytest.approx(0.72 * (0.50 / 0.72) ** (3 / 3.6), rel=1e-12)
    assert r.fraction == pytest.approx(0.4516, abs=1e-4)
    assert "36.0 months" in r.note and "15% spread" in r.note


def test_a_part_bought_used_keeps_the_curves_ratio(catalog):
    hopper = catalog.economics.residual_value["hopper"]
    r = residual(catalog, "h100-sxm", 1.0, age_years=2.0)
    assert r.fraction == pytest.approx(market_fraction(hopper, 3.0) / market_fraction(hopper, 2.0) * 0.85)
    assert "bought used" not in r.note and "after buying it used at 2.0 years old" in r.note


def test_the_memo_no_longer_pays_back_in_a_month(catalog):
    """Issue 29: with 100% resale at month 0, a bought H100 'paid for itself' in a month. At one
    month it now returns 60.7% of its price: 39% of it is lost at once."""
    assert residual(catalog, "h100-sxm", 1 / 12).fraction < 0.62


@pytest.mark.parametrize(
    "points, why",
    [
        ([{"years": 0, "fraction": 1.0}, {"years": 3, "fraction": 0.5}], "below 1"),
        ([{"years": 1, "fraction": 0.7}, {"years": 3, "fraction": 0.5}], "years 0"),
        ([{"years": 0, "fraction": 0.7}, {"years": 3, "fraction": 0.8}], "must not rise"),
        ([{"years": 0, "fraction": 0.7}, {"years": 3, "fraction": None, "low": 0.75, "high": 0.9}], "must not rise"),
    ],
)
def test_a_curve_at_100_percent_or_rising_is_refused(points, why):
    with pytest.raises(ValueError, match=why):
        ResidualCurve.model_validate(
            {"gpus": ["x"], "points": points, "confidence": "low", "source": ["s"], "note": "n"}
        )
    with pytest.raises(ValueError, match="not both"):
        ResidualCurve.model_validate(
            {"gpus": ["x"], "points": points[:1], "like": "hopper", "confidence": "low", "source": ["s"], "note": "n"}
        )


def test_a_gpu_waiting_for_delivery_is_resold_at_its_age_since_purchase(example_plan, catalog):
    """article-datacenter buys 8 used A100 80GB with a 70-day lead time and sells them when the job is
    done, at month 2.42 (73 days to arrive, its P80 run of 2 hours, and 13 hours to the period holding
    it): the used market prices them at 2.42 months after the purchase, not at the 0.02 months they
    were in hand."""
    from conftest import AS_OF

    from advisor.economics.ownership import purchase_age_years

    _, plan = example_plan("article-datacenter")
    (item,) = plan["purchase"]
    (sold,) = plan["disposal"]
    (job,) = plan["jobs"]
    month = (item["ready_days"] + job["wall_days_planned"]) / (365 / 12)
    # at the period holding its work end (another GPU count's end, 13 hours later: solve/holding.py)
    assert item["lead_time_days"] == 70 and month <= sold["month"] <= month + WORK_END_STEP_MONTHS
    assert sold["month"] == pytest.approx(2.42, abs=0.005)
    gpu = catalog.gpus["a100-80gb-sxm"]
    age = purchase_age_years(gpu, AS_OF)
    by_purchase = residual(catalog, gpu.id, sold["month"] / 12, age).fraction
    in_hand = residual(catalog, gpu.id, (sold["month"] * 730 - 70 * 24 - 72) / 8760, age).fraction
    assert sold["resale_usd"] == pytest.approx(8 * item["unit_price_usd"] * by_purchase, abs=0.01)
    assert by_purchase < in_hand  # the older part fetches less


def test_a_used_part_thousands_of_years_old_resells_for_nothing_not_a_division_by_zero(catalog):
    """`--as-of 9999-12-31` was exit 1 (ZeroDivisionError): the used A100's market fraction at its age
    (~8,000 years, the curve's decline continued) underflowed to 0.0 and the resale divided by it."""
    from advisor.economics.ownership import residual

    r = residual(catalog, "a100-80gb-sxm", 1.0, age_years=7975.0)
    assert r.fraction == 0.0
