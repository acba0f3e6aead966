"""Issue 29, item 4: the costs of a purchase beyond its GPUs and servers as the linear per-unit
coefficients the MILP charges (NICs and fabric by cluster size, tax by region, burn-in, support,
storage), each sourced with its confidence. Hand-worked within $1."""

from __future__ import annotations

import pytest

from advisor.economics.costs import Costs
from advisor.economics.purchase_bill import (
    bought_gpu_coefficients,
    network_band,
    network_lines,
    nic_per_gpu,
    storage_need,
    tax_coefficients,
)

COSTS = Costs(
    electricity_usd_per_kwh=0.10,
    pue=1.5,
    hosting_usd_per_kw_month=150.0,
    horizon_hours=36 * 730,
    sources=("test",),
    discount_rate=0.08,
)


def test_a_nic_per_networked_gpu_is_costed_from_its_sourced_price(catalog):
    nic = nic_per_gpu(catalog.economics)
    assert nic.usd == 2188 and nic.when == "upfront" and nic.source and nic.confidence == "low"


@pytest.mark.parametrize(
    "gpus, band_usd",
    [(16, 810), (64, 1883), (512, 1883), (513, 4248), (1024, 4248), (16384, 4248), (16385, 6612), (100_000, 6612)],
)
def test_the_fabric_is_costed_by_a_band_that_matches_scale(catalog, gpus, band_usd):
    e = catalog.economics
    assert network_band(e, gpus).usd_per_gpu == band_usd
    nic, fabric = network_lines(e, gpus, 1.0)  # the bill's lines per networked GPU
    assert (nic["kind"], fabric["kind"]) == ("nic", "fabric") and nic["quantity"] == fabric["quantity"] == gpus
    assert nic["unit_usd"] + fabric["unit_usd"] == band_usd + 2188 and nic["source"] and fabric["source"]


def test_a_cluster_network_is_within_the_sourced_3_to_10k_per_gpu(catalog):
    """ipcarrier: 'per GPU, interconnect can add roughly USD 3,000-10,000 over server cost'."""
    for gpus in (64, 256, 1024, 4096, 32768):
        assert 3000 <= sum(r["unit_usd"] for r in network_lines(catalog.economics, gpus, 1.0)) <= 10000, gpus


def test_tax_by_region_and_whether_it_is_a_cost(catalog):
    e = catalog.economics
    us, de, jp = tax_coefficients(e, "US"), tax_coefficients(e, "DE"), tax_coefficients(e, "JP")
    assert (us.paid_rate, us.cost_rate, us.recoverable) == (0.0752, 0.0752, False)
    assert (de.paid_rate, de.cost_rate, de.recoverable) == (0.19, 0.0, True) and de.cash_rate == 0.0
    assert jp.paid_rate == 0.10 and jp.confidence == "high"
    assert tax_coefficients(e, "DE", recoverable=False).cost_rate == 0.19  # a buyer who cannot reclaim VAT
    unknown = tax_coefficients(e, "BR")
    assert unknown.paid_rate is None and "no sourced" in unknown.note


def test_a_tax_and_an_id_are_written_as_they_are_spelt(catalog):
    """A DE bill read "Vat 19.00%, not recoverable" (the kind's id, capitalised as a sentence), the memo's
    cost table "Sales tax on the hardware" for that VAT, and a warning "Rtx-a6000 at RunPod ..." (an id
    capitalised)."""
    from advisor.present.memo_costs import COST_LINES
    from advisor.present.words import sentence

    e = catalog.economics
    notes = {r: tax_coefficients(e, r, recoverable=False).note for r in ("US", "DE", "SG", "JP")}
    starts = ("sales tax 7.52%", "VAT 19.00%", "GST 9.00%", "consumption tax 10.00%")
    assert all(n.startswith(w) for n, w in zip(notes.values(), starts, strict=True)), notes
    assert sentence(notes["DE"]).startswith("VAT 19.00%, not recoverable")
    assert next(what for key, what, _ in COST_LINES if key == "tax_usd").startswith("Tax on the hardware (")
    assert sentence("rtx-a6000 at RunPod: no node size") == "rtx-a6000 at RunPod: no node size."
    assert sentence("no node size") == "No node size."


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


def test_the_racks_line_names_the_servers_it_holds_not_a_rack_s_room(catalog):
    """train-and-serve's bill read 'racks (22 server(s) of 1.3 kW per 30 kW air-cooled rack) | 1' for
    its 2 workstations: 22 was what one rack has room for, read as servers bought."""
    from advisor.economics.bom import racks

    row, warning = racks(1.325, 2, catalog.economics)
    assert warning is None and row["quantity"] == 1
    assert row["item"] == "a rack for 2 servers of 1.3 kW (a 30 kW air-cooled rack holds 22)", row["item"]
    row, _ = racks(10.2, 7, catalog.economics)  # 2 a rack: 4 racks
    assert row["quantity"] == 4 and row["item"].startswith(
        "racks for 7 servers of 10.2 kW (a 30 kW air-cooled rack holds 2)"
    )
