"""Issue 29, item 4: the whole bill of materials of a purchase, as linear per-unit coefficients and
as line items, each sourced with its confidence; cash (what a budget caps) apart from present value.
Hand-worked within $1."""
from __future__ import annotations

import math

import pytest

from advisor.economics.costs import Costs
from advisor.economics.purchase_bill import (
    PurchaseOrder,
    bill_lines,
    bought_gpu_coefficients,
    cash_usd,
    network_band,
    network_per_gpu,
    nic_per_gpu,
    present_value_usd,
    storage_need,
    tax_coefficients,
)

COSTS = Costs(electricity_usd_per_kwh=0.10, pue=1.5, hosting_usd_per_kw_month=150.0, horizon_hours=36 * 730,
              sources=("test",), discount_rate=0.08)


def test_a_nic_per_networked_gpu_is_costed_from_its_sourced_price(catalog):
    nic = nic_per_gpu(catalog.economics)
    assert nic.usd == 2188 and nic.when == "upfront" and nic.source and nic.confidence == "low"


@pytest.mark.parametrize("gpus, band_usd", [(16, 810), (64, 1883), (512, 1883), (513, 4248), (1024, 4248),
                                            (16384, 4248), (16385, 6612), (100_000, 6612)])
def test_the_fabric_is_costed_by_a_band_that_matches_scale(catalog, gpus, band_usd):
    e = catalog.economics
    assert network_band(e, gpus).usd_per_gpu == band_usd
    k = network_per_gpu(e, gpus)
    assert k.usd == band_usd + 2188 and k.per == "networked GPU" and k.source


def test_a_cluster_network_is_within_the_sourced_3_to_10k_per_gpu(catalog):
    """ipcarrier: 'per GPU, interconnect can add roughly USD 3,000-10,000 over server cost'."""
    for gpus in (64, 256, 1024, 4096, 32768):
        assert 3000 <= network_per_gpu(catalog.economics, gpus).usd <= 10000, gpus


def test_tax_by_region_and_whether_it_is_a_cost(catalog):
    e = catalog.economics
    us, de, jp = tax_coefficients(e, "US"), tax_coefficients(e, "DE"), tax_coefficients(e, "JP")
    assert (us.paid_rate, us.cost_rate, us.recoverable) == (0.0752, 0.0752, False)
    assert (de.paid_rate, de.cost_rate, de.recoverable) == (0.19, 0.0, True) and de.cash_rate == 0.0
    assert jp.paid_rate == 0.10 and jp.confidence == "high"
    assert tax_coefficients(e, "DE", recoverable=False).cost_rate == 0.19    # a buyer who cannot reclaim VAT
    unknown = tax_coefficients(e, "BR")
    assert unknown.paid_rate is None and "no sourced" in unknown.note


def test_per_bought_gpu_coefficients_by_hand(catalog):
    """H100 SXM with an HGX slot's 0.575 kW: burn-in 72 h x (0.700 + 0.575) kW x PUE 1.5 x
    $0.10/kWh = $13.77; support 15%/year = 1.25% of the hardware a month; delay 3 days."""
    k = bought_gpu_coefficients(catalog, "h100-sxm", "US", COSTS, server_overhead_kw_per_gpu=0.575)
    assert k.burn_in_energy.usd == pytest.approx(72 * 1.275 * 1.5 * 0.10, abs=1e-9) == pytest.approx(13.77)
    assert k.burn_in_days == 3 and k.burn_in_energy.when == "upfront"
    assert k.support.usd == pytest.approx(0.15 / 12) and k.support.when == "per_month"
    assert k.tax.cost_rate == 0.0752


def test_storage_by_model_size_and_tokens_by_hand(catalog):
    """70B on 15T tokens: 15e12 x 2.93 B = 43.95 TB of data + 2 x 70e9 x 11.2 B = 1.568 TB of
    checkpoints = 45.518 TB x $220 = $10,013.96."""
    need = storage_need(catalog.economics, 70e9, 15e12)
    assert need.dataset_tb == pytest.approx(43.95) and need.checkpoint_tb == pytest.approx(1.568)
    assert need.usd == pytest.approx(10_013.96, abs=1.0) and need.source and need.confidence == "low"


def test_the_bill_lines_and_cash_against_present_value_by_hand(catalog):
    """16 H100 SXM in 2 HGX servers, networked, US, held 24 months, resold at 45%. By hand:
    GPUs 16 x 30,000 = 480,000; servers 2 x 96,644 = 193,288; NICs 16 x 2,188 = 35,008; fabric
    (band <= 16) 16 x 810 = 12,960; hardware 721,256 x 7.52% tax = 54,238.45; burn-in 16 x
    72 h x 1.275 kW x 1.5 x $0.10 = 220.32; support 721,256 x 15% / 12 = 9,015.70 a month;
    hosting 16 x 1.275 kW x $150 = 3,060 a month; resale -16 x 30,000 x 0.45 = -216,000."""
    order = PurchaseOrder("h100-sxm", 16, "hgx-h100-8gpu", 2, 16, "US", 24, resale_fraction=0.45)
    lines = bill_lines(catalog, order, COSTS)
    for ln in lines:
        assert set(ln) == {"item", "quantity", "unit_usd", "total_usd", "when", "source", "confidence", "note"}
        assert ln["when"] in ("upfront", "per_month", "at_disposal") and ln["confidence"] in ("high", "medium", "low")
    total = {ln["item"].split(" (")[0].split(",")[0]: ln["total_usd"] for ln in lines}
    hardware = 480_000 + 193_288 + 35_008 + 12_960
    assert total["NICs"] == 35_008 and total["tax on hardware"] == pytest.approx(hardware * 0.0752, abs=1.0)
    assert total["burn-in"] == pytest.approx(220.32, abs=1.0)
    assert total["hardware support contract"] == pytest.approx(hardware * 0.15 / 12, abs=1.0)
    assert total["hosting"] == pytest.approx(3060, abs=1.0)
    upfront = hardware * 1.0752 + 220.32
    monthly = hardware * 0.15 / 12 + 3060
    assert cash_usd(lines, 24) == pytest.approx(upfront + 24 * monthly, abs=1.0)       # resale not deducted
    r = 0.08
    stream = (1 - 1.08 ** -2) / (2 * math.log(1.08))
    assert present_value_usd(lines, 24, r) == pytest.approx(upfront + 24 * monthly * stream - 216_000 / 1.08 ** 2,
                                                           abs=1.0)


def test_one_server_needs_no_fabric_line(catalog):
    lines = bill_lines(catalog, PurchaseOrder("h100-sxm", 8, "hgx-h100-8gpu", 1, 0, "DE", 12), COSTS)
    assert not any("fabric" in ln["item"] or "NIC" in ln["item"] for ln in lines)
    tax = next(ln for ln in lines if ln["item"].startswith("tax"))
    assert tax["total_usd"] == 0.0 and "paid $" in tax["note"]          # German VAT: paid, reclaimed, no cost
