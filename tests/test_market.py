"""Issue 14, data side: 2026 market prices, rental kinds, end of life, source grades, economics data,
override quote records and the --as-of view of the catalog."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from advisor.data.catalog import load_catalog
from advisor.data.catalog_figures import parse_as_of
from advisor.data.source_grades import SOURCE_KINDS, price_records, tertiary_only
from advisor.errors import InputError

ROOT = Path(__file__).resolve().parent.parent


def _prices(catalog):
    return list(price_records({"gpus": catalog.gpus, "servers": catalog.servers}))


def test_every_price_has_as_of_source_and_confidence(catalog):
    records = _prices(catalog)
    assert len(records) > 60
    for path, rec in records:
        assert rec.source and rec.confidence in ("high", "medium", "low"), path
        if getattr(rec, "pricing", "on_demand") == "on_demand" and rec.as_of is None:
            assert rec.note, path  # an undated offer says why (and is never planned on)
        elif not hasattr(rec, "pricing"):
            assert rec.as_of, path


def test_every_source_has_a_kind(catalog):
    assert all(s.kind in SOURCE_KINDS for s in catalog.sources.values())
    assert set(SOURCE_KINDS) == {"primary", "secondary", "tertiary", "derived", "assumption"}


def test_no_price_rests_only_on_tertiary_sources_without_saying_low(catalog):
    weak = [(p, r) for p, r in _prices(catalog) if tertiary_only(r, catalog.sources)]
    assert weak and all(r.confidence == "low" for _, r in weak)


def test_weak_sources_named_in_the_issue_no_longer_carry_a_figure_alone(catalog):
    # RunPod prices read in an unrelated repository are graded tertiary and marked low
    assert catalog.sources["sanskrit_rental_note"].kind == "tertiary"
    for o in catalog.gpus["h100-sxm"].prices.rent:
        if "sanskrit_rental_note" in o.source:
            assert o.confidence == "low"
    # the RTX 4090 price no longer cites an article about the RX 7900 XTX
    p = catalog.gpus["rtx-4090"].prices
    for rec in [p.purchase, *p.other_purchases]:
        assert "mybroadband_7900xtx" not in rec.source


def test_h200_and_b200_can_be_bought_and_h200_rented(catalog):
    for gid in ("h200-sxm", "b200"):
        g = catalog.gpus[gid]
        assert g.purchase_usd and g.prices.purchase.confidence
        priced = [s for s in catalog.servers_for(gid, "datacenter") if s.purchase.usd is not None]
        assert priced and all(s.purchase.as_of and s.purchase.confidence for s in priced)
    assert catalog.gpus["h200-sxm"].rental is not None
    # AWS p5en.48xlarge: $63.296 per 8-GPU instance-hour
    aws = next(o for o in catalog.gpus["h200-sxm"].prices.rent if o.provider.startswith("AWS p5en.48xlarge (8x"))
    assert aws.usd_per_gpu_hour == pytest.approx(63.296 / 8) and aws.min_gpus == 8 and aws.confidence == "high"


def test_hgx_b200_platform_is_the_dgx_price_minus_its_gpus(catalog):
    s = catalog.servers["hgx-b200-8gpu"]
    assert s.purchase.usd == 515_000 - 8 * 40_000 and "derived" in s.purchase.source
    assert s.purchase.confidence == "low"


def test_a100_sxm_is_end_of_life_and_sold_used(catalog):
    for gid in ("a100-80gb-sxm", "a100-40gb-sxm"):
        g = catalog.gpus[gid]
        assert g.end_of_life is not None and g.end_of_life.new_purchase == "unavailable" and g.end_of_life.source
        p = g.prices.purchase
        assert p.condition == "used" and p.usd and p.warranty and p.as_of.startswith("2026")
        assert any(o.condition == "new" for o in g.prices.other_purchases)  # the launch price, kept as history


def test_geforce_priced_at_street_not_msrp(catalog):
    p = catalog.gpus["rtx-5090"].prices
    assert p.purchase.kind == "street" and p.purchase.usd > 1999
    assert any(o.kind == "msrp" and o.usd == 1999 for o in p.other_purchases)


def test_mi300x_low_confidence_rate_is_marked(catalog):
    best = catalog.gpus["mi300x"].rental
    assert best.usd_per_gpu_hour == 1.50 and best.confidence == "low"


def test_rental_kinds_are_data(catalog):
    kinds = {o.pricing for g in catalog.gpus.values() for o in g.prices.rent}
    assert {"on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block"} <= kinds
    spot = catalog.gpus["h100-sxm"].rentals("spot")
    assert spot and spot == sorted(spot, key=lambda o: o.usd_per_gpu_hour)
    banded = [o for o in spot if o.interruption]
    assert banded and 0 <= banded[0].interruption.rate_low <= banded[0].interruption.rate_high <= 1
    block = catalog.gpus["h100-sxm"].rentals("capacity_block")[0]
    assert block.billing_hours == 24 and block.min_gpus == 8


def test_economics_file_is_loaded_and_sourced(catalog):
    e = catalog.economics
    assert e is not None and e.cost_of_capital["default"].value == 0.10
    assert e.useful_life_years.value == 5 and e.colocation_usd_per_kw_month["north_america"].value == 184.06
    hopper = e.residual_value["hopper"]
    assert hopper.points[0].years == 0 and hopper.points[0].fraction < 1  # a new part resold is a used one
    assert [p.years for p in hopper.points] == sorted(p.years for p in hopper.points)
    # Llama 3: 419 unexpected interruptions / (54 days x 16,384 GPUs)
    assert e.reliability["unexpected_interruptions_per_gpu_day"].value == pytest.approx(419 / (54 * 16384), rel=1e-3)


def test_economics_range_is_checked(write):
    path = write("economics: {}\n", "bad.yaml")
    with pytest.raises(InputError):
        load_catalog(path)  # economics is not an override key
    from advisor.data.economics import EconFigure

    with pytest.raises(ValueError):
        EconFigure(value=10, unit="fraction per year", confidence="low", source=["x"])  # 10 is a percent


def test_override_price_without_a_date_is_refused(write, run):
    path = write("gpus:\n  - id: h100-sxm\n    prices:\n      purchase: {usd: 21500}\n", "quote.yaml")
    with pytest.raises(InputError) as err:
        load_catalog(path)
    assert "quote.yaml" in str(err.value) and "prices.purchase.as_of" in str(err.value)
    code, _, stderr = run("catalog", "validate", path)
    assert code == 2 and "as_of" in stderr


def test_override_replaces_the_whole_record_and_cites_the_file(write):
    path = write(
        "gpus:\n  - id: a100-80gb-sxm\n    prices:\n      purchase: {usd: 7000, as_of: '2026-11-20'}\n", "acme.yaml"
    )
    c = load_catalog(path)
    p = c.gpus["a100-80gb-sxm"].prices.purchase
    assert (p.usd, p.as_of, p.kind, p.source) == (7000, "2026-11-20", "quote", ["override:acme.yaml"])
    assert p.condition == "new" and p.warranty is None and p.usd_range is None  # nothing of the built-in kept
    assert c.gpus["a100-80gb-sxm"].prices.other_purchases == []
    assert "acme.yaml" in c.sources["override:acme.yaml"].title


def test_as_of_2023_excludes_later_prices_and_parts(catalog):
    day = dt.date(2023, 1, 1)
    old = catalog.at(day)
    for path, rec in _prices(old):
        d = parse_as_of(rec.as_of)
        assert d is None or d <= day, path
    assert old.gpus["h100-sxm"].purchase_usd is None or parse_as_of(old.gpus["h100-sxm"].prices.purchase.as_of) <= day
    # the A100 falls back to its new price of 2020 (before end of life); B200 was not launched
    assert old.gpus["a100-80gb-sxm"].prices.purchase.usd == 15000
    assert old.gpus["b200"].purchase_usd is None and old.gpus["b200"].rental is None
    entries = {(i["entry"], i["field"]) for i in old.ignored_after_as_of}
    assert ("b200", "launch") in entries and ("h100-sxm", "prices.purchase") in entries
    assert all(i["message"] for i in old.ignored_after_as_of)
    assert catalog.at(None) is catalog and not catalog.ignored_after_as_of


def test_plan_as_of_2023_uses_no_later_price(run_json):
    _, p = run_json("plan", ROOT / "examples" / "article-office.yaml", "--as-of", "2023-01-01")
    for s in p["sources"]:
        assert s["as_of"] is None or s["as_of"] <= "2023-01-01", s


def test_no_catalog_text_names_internal_paths():
    for f in (
        list((ROOT / "catalog").glob("*.yaml"))
        + list((ROOT / "catalog").glob("*.csv"))
        + list((ROOT / "advisor").rglob("*.py"))
        + list((ROOT / "rules").glob("*.yaml"))
    ):
        text = f.read_text()
        assert "shared/reference" not in text and "research: " not in text, f


def test_a_quote_for_a_new_part_past_its_end_of_life_is_planned_on(write):
    """A user's quote is an offer in hand: the A100 SXM quoted new is bought at the quote, not dropped
    for the catalog's end of life (which left the plan without it, saying its prices were 'all later')."""
    path = write(
        "gpus:\n  - id: a100-80gb-sxm\n    prices:\n      purchase: {usd: 7000, as_of: '2026-11-20'}\n", "acme.yaml"
    )
    at = load_catalog(path).at(dt.date(2026, 12, 1))
    assert at.gpus["a100-80gb-sxm"].purchase_usd == 7000


def test_a_new_price_past_end_of_life_says_so(catalog):
    """The built-in new price of an end-of-life part dated before the day is left out for the end of life,
    and the note says that, not that the prices are later."""
    g = catalog.gpus["a100-80gb-sxm"]
    new = g.model_copy(update={"prices": g.prices.model_copy(update={"purchase": g.prices.other_purchases[0]})})
    assert new.prices.purchase.condition == "new" and new.prices.purchase.kind != "quote"
    c = catalog.model_copy(update={"gpus": {**catalog.gpus, "a100-80gb-sxm": new}})
    p = c.at(dt.date(2026, 12, 1)).gpus["a100-80gb-sxm"].prices.purchase
    assert p.usd is None and "end of life" in p.note and "later" not in p.note


def test_a_used_quote_for_a_part_of_unverified_launch_is_aged_as_the_catalogs_used_price(write, catalog):
    """The A100 SXM's launch is unverified, so a used one is aged from its earliest new price (2020). An
    override's used quote replaced that record too, so the same $9,000 used board was aged 0, resold as if
    bought new (59% of its price after 2.4 months, not 82%): $16,216 more present value for the same quote."""
    from advisor.economics.ownership import purchase_age_years

    path = write(
        "gpus:\n  - id: a100-80gb-sxm\n    prices:\n      purchase: {usd: 9000, as_of: '2026-11-20', "
        "condition: used, warranty: 'seller, 90 days'}\n",
        "used.yaml",
    )
    day = dt.date(2026, 12, 1)
    quoted = load_catalog(path).at(day).gpus["a100-80gb-sxm"]
    assert quoted.prices.purchase.condition == "used" and quoted.prices.other_purchases == []
    built_in = purchase_age_years(catalog.at(day).gpus["a100-80gb-sxm"], day)
    assert built_in > 5 and purchase_age_years(quoted, day) == pytest.approx(built_in)
