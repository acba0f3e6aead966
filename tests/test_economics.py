"""Ownership economics (issue 14): hand-worked TCO cases against the plan, within $1.

Every expected value is computed here from stated inputs: prices given in an override catalog,
the workload's own rates, the catalog's sourced residual-value curve and spot terms (asserted to
be what the test states), and the job's speed from the estimator (advisor.estimate)."""

from __future__ import annotations

import math

import pytest
from conftest import AS_OF

import advisor
from advisor.data.catalog import load_catalog
from advisor.economics.ownership import (
    depreciation_schedule,
    discount,
    residual,
    stream_factor,
)
from advisor.economics.rental import RentOption, rental_cost
from advisor.flow import plan
from advisor.inputs.workload import parse_workload
from advisor.present.plan_text import plan_text
from advisor.solve.holding import WORK_END_STEP_MONTHS

OVERRIDE = """
gpus:
  - id: h100-sxm
    prices:
      purchase: {usd: 20000, as_of: "2026-06", source: [test_quote]}
      rent:
        - {provider: "Test on-demand", usd_per_gpu_hour: 4.0, as_of: "2026-06", pricing: on_demand, gpus_per_node: 8,
           fabric: {kind: infiniband, gbps_per_gpu: 400, source: [test_quote]}, tier: neocloud}
        - {provider: "Test 3-year", usd_per_gpu_hour: 1.0, as_of: "2026-06", pricing: reserved_3y, gpus_per_node: 8,
           fabric: {kind: infiniband, gbps_per_gpu: 400, source: [test_quote]}, tier: neocloud}
        - {provider: "Test 1-year", usd_per_gpu_hour: 2.0, as_of: "2026-06", pricing: reserved_1y, gpus_per_node: 8,
           fabric: {kind: infiniband, gbps_per_gpu: 400, source: [test_quote]}, tier: neocloud}
        - {provider: "Test spot", usd_per_gpu_hour: 1.5, as_of: "2026-06", pricing: spot, gpus_per_node: 8,
           fabric: {kind: infiniband, gbps_per_gpu: 400, source: [test_quote]}, tier: neocloud,
           interruption: {rate_low: 0.15, rate_high: 0.25, period_days: 30, confidence: medium, source: [test_quote]}}
servers:
  - id: hgx-h100-8gpu
    purchase: {usd: 100000, as_of: "2026-06"}
sources:
  test_quote: {url: "https://example.com/quote", title: "a test quote", kind: primary}
"""
R = 0.08  # finance.discount_rate
HORIZON_MONTHS = 30  # 2.5 years
GPU_USD, SERVER_USD = 20_000, 100_000
GPU_KW, SERVER_KW = 0.700, 4.600
PUE, KWH, HOST = 1.5, 0.10, 150.0
M0, M36, SPREAD = 0.72, 0.50, 0.15  # Hopper used-market price at 0 and 3.6 years; the dealer's spread
TAX, SUPPORT, BURN_H = 0.0752, 0.15, 72  # US sales tax on hardware; support a year per hardware dollar; burn-in hours
STORAGE_TB, FLASH = 10, 220.0  # the workload's storage, bought as flash at $/TB (every plan keeps its data)
STORE = STORAGE_TB * FLASH * (1 + TAX)


def sf(years: float) -> float:
    """PV of $1 paid evenly over `years` (continuous flow at ln(1 + R))."""
    return 1.0 if years == 0 else (1 - (1 + R) ** -years) / (years * math.log(1 + R))


@pytest.fixture(scope="module")
def quotes(tmp_path_factory):
    path = tmp_path_factory.mktemp("econ") / "quotes.yaml"
    path.write_text(OVERRIDE)
    return load_catalog(path)


def workload(ownership: str, kinds: list[str], hours_of_work: float, tps: float, **extra) -> dict:
    return {
        "deployment": {
            "context": "datacenter",
            "ownership": ownership,
            "rent_kinds": kinds,
            "horizon_months": HORIZON_MONTHS,
            "electricity_usd_per_kwh": KWH,
            "pue": PUE,
            "hosting_usd_per_kw_month": HOST,
            "lead_time_days": 0,
            "storage_tb": STORAGE_TB,
            **extra,
        },
        "finance": {"discount_rate": R},
        "model": "gpt2-350m",
        "tokens": tps * hours_of_work * 3600,
        "goodput": 1.0,  # failure-free hours, so the hand-worked hours are the plan's
        "gpus": {"count": 8, "allow": ["h100-sxm"]},
    }


@pytest.fixture(scope="module")
def tps(quotes):
    return advisor.estimate(model="gpt2-350m", gpu="h100-sxm", count=8, catalog=quotes)["tokens_per_s"]


def test_the_stated_inputs_are_the_catalogs(quotes):
    h100, hgx = quotes.gpus["h100-sxm"], quotes.servers["hgx-h100-8gpu"]
    assert h100.tdp_w.value == GPU_KW * 1000 and hgx.power_overhead_w.value == SERVER_KW * 1000
    pts = {p.years: p.conservative for p in quotes.economics.residual_value["hopper"].points}
    assert pts == {0: M0, 3.6: M36}  # the used-market curve (issue 29): 0.72 new-but-used, 0.50 at 3.6 years
    assert quotes.economics.used_market_discount.value == SPREAD
    econ = quotes.economics
    assert (econ.sales_tax["US"].rate, econ.sales_tax["US"].recoverable) == (TAX, False)
    assert econ.support["hardware_contract_fraction_per_year"].value == SUPPORT
    assert econ.burn_in["hours"].value == BURN_H and econ.storage["flash_usd_per_tb"].value == FLASH
    terms = quotes.economics.rental_terms
    assert terms["checkpoint_interval_hours"].value == 1 and terms["restart_hours"].value == 0.25


def hopper_resale(years: float) -> float:
    """The Hopper curve of the catalog, by hand: log-linear between the used prices at 0 and 3.6 years,
    less the dealer's spread (test_residual_interpolation... checks the catalog says so)."""
    return M0 * (M36 / M0) ** (years / 3.6) * (1 - SPREAD)


def test_buy_use_40_days_resell_at_month_2_against_renting(quotes, tps):
    """Issue 29's hand-worked case: 8 H100 bought for a 40-day job are resold when its P80 time is done
    (held longer, hosting costs more than the resale keeps: review16 #4; the grid alone sold them at
    month 2), against renting the same work on demand and on a 3-year reservation paid in full."""
    hours = 40 * 24.0
    bought = plan(
        parse_workload(workload("buy", ["on_demand"], hours, tps)), catalog=quotes, as_of=AS_OF, explain=False
    )
    ready = bought["purchase"][0]["ready_days"] * 24
    planned = bought["jobs"][0]["wall_days_planned"] * 24
    assert ready == 0 and 730 < planned <= 2 * 730  # in hand at once; the P80 time is past the first month
    (sold,) = bought["disposal"]  # at the period holding the job's P80 end: at most WORK_END_STEP_MONTHS later
    months = sold["month"]  # held from today
    assert planned / 730 <= months <= planned / 730 + WORK_END_STEP_MONTHS
    years, kw = months / 12, 8 * GPU_KW + SERVER_KW  # the GPUs, and the board's power by slot
    upfront = (
        (8 * GPU_USD + SERVER_USD) * (1 + TAX)
        + STORE  # the hardware and the storage, taxed
        + 8 * BURN_H * (GPU_KW + SERVER_KW / 8) * PUE * KWH
    )  # 72 h of burn-in at full power
    support = 8 * SUPPORT / 12 * (GPU_USD + SERVER_USD / 8) * months  # support per GPU and server share
    buy = (
        upfront
        - 8 * GPU_USD * hopper_resale(years) * (1 + R) ** -years
        + (kw * HOST * months + support) * sf(years)  # hosting and support for the months held
        + 8 * hours * (GPU_KW + SERVER_KW / 8) * PUE * KWH * sf(hours / 8760)
    )  # energy of the job
    assert bought["total_cost_usd"] == pytest.approx(buy, abs=1.0)
    assert (sold["when"], sold["count"]) == ("after_work", 8)
    assert sold["resale_usd"] == pytest.approx(8 * GPU_USD * hopper_resale(years), abs=1.0)
    assert bought["residual_value_usd"] == pytest.approx(8 * GPU_USD * hopper_resale(years), abs=1.0)
    assert bought["cost_breakdown"]["purchase_usd"] == 8 * GPU_USD  # nominal keys stay nominal
    assert bought["cost_breakdown"]["tax_usd"] == pytest.approx(
        TAX * (8 * GPU_USD + SERVER_USD + STORAGE_TB * FLASH), abs=0.01
    )
    assert bought["nominal_cost_usd"] == pytest.approx(
        upfront + kw * HOST * months + support + 8 * hours * (GPU_KW + SERVER_KW / 8) * PUE * KWH, abs=1.0
    )
    assert sum(bought["cost_breakdown_pv"].values()) == pytest.approx(bought["present_value_usd"], abs=1.0)
    on_demand = 8 * hours * 4.0 * sf(hours / 8760) + STORE
    reserved = 8 * 3 * 8760 * 1.0 * sf(3.0) + STORE  # a 3-year term is paid in full, evenly over three years
    rented = plan(
        parse_workload(workload("rent", ["on_demand"], hours, tps)), catalog=quotes, as_of=AS_OF, explain=False
    )
    term = plan(
        parse_workload(workload("rent", ["reserved_3y"], hours, tps)), catalog=quotes, as_of=AS_OF, explain=False
    )
    either = plan(
        parse_workload(workload("any", ["on_demand", "reserved_3y"], hours, tps)),
        catalog=quotes,
        as_of=AS_OF,
        explain=False,
    )
    assert rented["total_cost_usd"] == pytest.approx(on_demand, abs=1.0)
    assert term["total_cost_usd"] == pytest.approx(reserved, abs=1.0)
    assert term["cost_breakdown"]["rental_usd"] == pytest.approx(8 * 3 * 8760 * 1.0, abs=1.0)
    assert term["purchase"][0]["rent_kind"] == "reserved_3y"
    assert either["total_cost_usd"] == pytest.approx(min(buy, on_demand, reserved), abs=1.0)
    assert either["purchase"][0]["ownership"] == "rent" and either["purchase"][0]["rent_kind"] == "on_demand"


def test_spot_against_on_demand_with_interruptions(quotes, tps):
    hours = 10 * 24.0
    lam = -math.log(1 - (0.15 + 0.25) / 2) / (30 * 24)  # per node-hour, Poisson
    lost = lam * (1 / 2 + 0.25)  # one node: half a checkpoint interval + restart
    wall = hours / (1 - lost)
    spot = 8 * wall * 1.5 * sf(wall / 8760) + STORE
    on_demand = 8 * hours * 4.0 * sf(hours / 8760) + STORE
    p = plan(
        parse_workload(workload("rent", ["on_demand", "spot"], hours, tps)), catalog=quotes, as_of=AS_OF, explain=False
    )
    assert p["total_cost_usd"] == pytest.approx(min(spot, on_demand), abs=1.0)
    assert p["purchase"][0]["rent_kind"] == "spot"
    assert p["jobs"][0]["wall_days"] == pytest.approx(wall / 24, rel=1e-5)
    only = plan(parse_workload(workload("rent", ["on_demand"], hours, tps)), catalog=quotes, as_of=AS_OF, explain=False)
    assert only["total_cost_usd"] == pytest.approx(on_demand, abs=1.0)
    assert only["purchase"][0]["rent_kind"] == "on_demand"


def test_a_reservation_commits_for_its_term(quotes):
    h100 = quotes.gpus["h100-sxm"]
    opt = RentOption("reserved_1y", h100.rentals("reserved_1y")[0])
    cost = rental_cost(opt, 8, 10 * 24.0, R, quotes.economics)
    assert cost.nominal_usd == pytest.approx(8 * 8760 * 2.0)  # a year, though the job runs 10 days
    assert cost.pv_usd == pytest.approx(8 * 8760 * 2.0 * sf(1.0))
    assert rental_cost(opt, 3, 24.0, R, quotes.economics).billed_gpus == 8  # whole 8-GPU nodes


def test_capacity_block_bills_whole_days_and_is_paid_up_front(catalog):
    offer = catalog.gpus["h100-sxm"].rentals("capacity_block")[0]
    assert offer.billing_hours == 24 and offer.gpus_per_node == 8
    cost = rental_cost(RentOption("capacity_block", offer), 8, 30.0, R, catalog.economics)
    assert cost.nominal_usd == pytest.approx(8 * 48 * offer.usd_per_gpu_hour) and cost.pv_usd == cost.nominal_usd


def test_eight_h100_bought_for_thirty_months_print_a_break_even_beyond_them(catalog):
    """At the market's on-demand rate, with tax, support and the used-market resale curve (issue 29),
    8 H100 kept busy for 30 months cost more bought than rented: a plan free to choose rents, and the
    plan told to buy prints a break-even beyond the horizon that says so."""
    rate = advisor.estimate(model="gpt2-350m", gpu="h100-sxm", count=8)["tokens_per_s"]
    doc = {
        "deployment": {
            "context": "datacenter",
            "ownership": "any",
            "horizon_months": 30,
            "rent_kinds": ["on_demand"],
            "lead_time_days": 0,
        },
        # 30 months of work, planned at the P80 time with goodput losses: the job fills ~85% of the horizon
        "model": "gpt2-350m",
        "tokens": rate * 730 * 3600 * 30 * 0.85,
        "gpus": {"count": 8, "allow": ["h100-sxm"]},
    }
    free = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain=False)
    assert [(i["gpu"], i["ownership"]) for i in free["purchase"]] == [("h100-sxm", "rent")]
    doc["deployment"]["ownership"] = "buy"
    p = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain=False)
    (be,) = p["break_even_months"]
    assert 30 < be["months"] < be["months_without_resale"] < 120
    assert "pays for itself after" in plan_text(p)


def test_break_even_without_resale_is_the_hand_worked_payback(catalog):
    """At a zero discount rate and no resale, owning pays for itself when the upfront cost equals the
    rent saved: U / (R - O) months, U the GPUs and servers with their sales tax and burn-in, R the
    monthly rent of as many GPUs, O the hosting, support and full-power electricity per month (the
    job's energy per GPU-hour x 730 h x 8 GPUs)."""
    rate = advisor.estimate(model="gpt2-350m", gpu="h100-sxm", count=8)["tokens_per_s"]
    doc = {
        "deployment": {
            "context": "datacenter",
            "ownership": "buy",
            "horizon_months": 24,
            "rent_kinds": ["on_demand"],
            "lead_time_days": 0,
        },
        "finance": {"discount_rate": 0},
        "model": "gpt2-350m",
        "tokens": rate * 730 * 86400 * 0.85,
        "gpus": {"count": 8, "allow": ["h100-sxm"]},
    }
    p = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain=False)
    (be,) = p["break_even_months"]
    cb, (job,) = p["cost_breakdown"], p["jobs"]
    hardware = cb["purchase_usd"] + cb["servers_usd"]
    upfront = hardware * (1 + TAX) + cb["burn_in_usd"]
    energy_per_gpu_hour = cb["energy_usd"] / (8 * job["wall_days"] * 24)
    (sold,) = p["disposal"]  # held from its arrival to its work's end (review16 #4), not the 24-month horizon
    held = sold["month"] - p["purchase"][0]["ready_days"] / (365 / 12)
    monthly_own = cb["hosting_usd"] / held + 8 * 730 * energy_per_gpu_hour + SUPPORT / 12 * hardware
    monthly_rent = 8 * 730 * be["rent_usd_per_gpu_hour"]
    assert be["months_without_resale"] == pytest.approx(upfront / (monthly_rent - monthly_own), rel=0.005)
    assert be["months"] < be["months_without_resale"]  # resale only shortens the payback
    assert f"{be['months']:.1f} months of continuous use if resold at the hopper residual-value curve" in be["message"]
    assert f"{be['months_without_resale']:.1f} months if never resold" in be["message"]


def test_a_256_gpu_network_is_its_band_and_a_nic_per_gpu(catalog):
    """256 networked H100 pay the one-switch-layer band of the sourced cluster sheet per GPU (its
    64-node row: no 256-GPU row exists) and a 400 Gb/s NIC each, taxed like the rest of the hardware:
    $1,883 + $2,188 = $4,071 a GPU, inside the issue's sourced $3-10K (issue 29)."""
    doc = {
        "deployment": {"context": "datacenter", "ownership": "buy"},
        "model": "llama-3-8b",
        "tokens": "1T",
        "gpus": {"count": 256, "allow": ["h100-sxm"]},
    }
    p = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain=False)
    econ = catalog.economics
    (band,) = [b for b in econ.network_bands if b.up_to_gpus == 512]
    nic = econ.network["nic_usd"].value
    assert (band.usd_per_gpu, nic) == (1883.0, 2188.0)
    assert p["cost_breakdown"]["network_usd"] == pytest.approx(256 * (band.usd_per_gpu + nic), abs=0.01)
    assert 3000 <= band.usd_per_gpu + nic <= 10000
    lines = {b["item"].split(" (")[0].split(" for ")[0]: b for b in p["bill_of_materials"]}
    assert lines["NICs"]["quantity"] == 256 and lines["NICs"]["unit_usd"] == nic
    assert lines["scale-out fabric"]["quantity"] == 256 and lines["scale-out fabric"]["unit_usd"] == band.usd_per_gpu
    assert all(lines[k]["confidence"] == "low" and lines[k]["source"] for k in ("NICs", "scale-out fabric"))


@pytest.mark.parametrize(
    ("gpu", "per_gpu_gbps"),
    [
        # the workstation sources no network: the estimator's Ada assumption, one 200 Gb/s NIC per 8 cards
        ("rtx-6000-ada", 200 / 8),
        # the HGX A100 server's sourced 8 x 200 Gb/s HDR (catalog/servers.yaml), which the estimate assumes too
        ("a100-80gb-sxm", 200),
    ],
)
def test_a_network_is_billed_at_the_bandwidth_the_speed_assumes(catalog, gpu, per_gpu_gbps):
    """128 GPUs that the speed estimate joins at 25 Gb/s (RTX 6000 Ada in workstations) or 200 Gb/s
    (A100 in HGX servers) each were billed a 400 Gb/s NIC and a 400 Gb/s fabric per GPU: $521,088 of
    networking for 128 Ada cards whose speed credits 1/16 of it. The NIC and fabric are billed at the
    share of the priced 400 Gb/s per GPU the speed assumes, and the plan's network cost is the bill's."""
    doc = {
        "deployment": {"context": "datacenter", "ownership": "buy", "region": "US"},
        "model": "llama-3-8b",
        "tokens": "1T",
        "gpus": {"count": 128, "allow": [gpu]},
    }
    p = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain=False)
    econ = catalog.economics
    share = per_gpu_gbps / econ.network["nic_gbps"].value
    (band,) = [b for b in econ.network_bands if b.up_to_gpus == 512]
    nic = econ.network["nic_usd"].value
    lines = {b["item"].split(" (")[0].split(" for ")[0]: b for b in p["bill_of_materials"]}
    assert lines["NICs"]["quantity"] == 128 and lines["NICs"]["unit_usd"] == pytest.approx(nic * share, rel=5e-6)
    assert lines["scale-out fabric"]["unit_usd"] == pytest.approx(band.usd_per_gpu * share, rel=5e-6)
    assert p["cost_breakdown"]["network_usd"] == pytest.approx(128 * (band.usd_per_gpu + nic) * share, abs=0.01)
    assert f"{share:g} of one per GPU" in next(
        b["item"] for b in p["bill_of_materials"] if b["item"].startswith("NICs")
    )


PASSIVE = sorted(g.id for g in load_catalog().gpus.values() if g.cooling and g.cooling.value == "passive")


@pytest.mark.parametrize("gpu", PASSIVE)
@pytest.mark.parametrize("ownership", ["buy", "any"])
def test_no_office_plan_contains_a_passively_cooled_card(catalog, gpu, ownership):
    doc = {
        "deployment": {"context": "office", "ownership": ownership, "power_limit_kw": 10},
        "model": "gpt2-124m",
        "tokens": "1B",
        "gpus": {"allow": [gpu, "rtx-4090"]},
    }
    p = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain=False)
    assert not any(i["gpu"] == gpu and i["ownership"] == "buy" for i in p["purchase"])
    if ownership == "buy" and catalog.gpus[gpu].purchase_usd is not None:  # (no price: never a purchase)
        reasons = next(r for r in p["rejected"] if r["gpu"] == gpu)["reasons"]
        assert [x["rule"] for x in reasons if x.get("severity") == "forbid"] == ["DEP002"]


def test_passive_cards_are_the_datasheets(catalog):
    assert {"a100-80gb-pcie", "h100-pcie", "l40s", "l4", "a10", "t4"} <= set(PASSIVE)


def test_price_warnings(catalog):
    rent = plan(
        parse_workload({"deployment": "cloud", "model": "gpt2-124m", "tokens": "10B", "gpus": {"allow": ["mi300x"]}}),
        catalog=catalog,
        as_of=AS_OF,
        explain=False,
    )
    assert any(w["code"] == "low-confidence-price" and "MI300X" in w["message"] for w in rent["warnings"])
    used = plan(
        parse_workload(
            {
                "deployment": {"context": "datacenter", "ownership": "buy"},
                "model": "gpt2-124m",
                "tokens": "10B",
                "gpus": {"allow": ["a100-80gb-sxm"]},
            }
        ),
        catalog=catalog,
        as_of=AS_OF,
        explain=False,
    )
    assert any(w["code"] == "used-part" for w in used["warnings"])
    old = plan(
        parse_workload({"deployment": "cloud", "model": "gpt2-124m", "tokens": "10B", "gpus": {"allow": ["h100-sxm"]}}),
        catalog=catalog,
        as_of=AS_OF.replace(year=2025),
        explain=False,
    )
    assert any(w["code"] == "as-of" for w in old["warnings"])


def test_utilization_charges_energy_while_the_gpus_are_held(quotes, tps):
    doc = workload("buy", ["on_demand"], 24.0, tps)
    doc["finance"]["utilization"] = 0.5
    p = plan(parse_workload(doc), catalog=quotes, as_of=AS_OF, explain=False)
    kw = 8 * GPU_KW + SERVER_KW
    (sold,) = p["disposal"]  # a day's work: resold when it is done, energy paid at 50% while held
    held = sold["month"] * 730  # from today: at the period holding the P80 end, at most the step after it
    done = p["jobs"][0]["wall_days_planned"] * 24
    assert p["purchase"][0]["ready_days"] == 0 and done <= held <= done + WORK_END_STEP_MONTHS * 730
    assert p["cost_breakdown"]["energy_usd"] == pytest.approx(kw * held * 0.5 * PUE * KWH, abs=0.01)
    assert p["utilization"] == 0.5


def test_residual_interpolation_discounting_and_depreciation(catalog):
    # log-linear between the points, the last segment's rate continued past 3.6 years, less the spread
    assert residual(catalog, "h100-sxm", 1.5).fraction == pytest.approx(M0 * (M36 / M0) ** (1.5 / 3.6) * (1 - SPREAD))
    assert residual(catalog, "h100-sxm", 5.0).fraction == pytest.approx(M0 * (M36 / M0) ** (5.0 / 3.6) * (1 - SPREAD))
    assert residual(catalog, "h100-sxm", 0.0).fraction == pytest.approx(M0 * (1 - SPREAD))
    assert discount(2.0, 0.1) == pytest.approx(1 / 1.21) and stream_factor(0.0, 0.1) == 1.0
    sched = depreciation_schedule(100_000, 5, 2.5)
    assert [round(y["depreciation_usd"]) for y in sched] == [20_000, 20_000, 10_000]
    assert sched[-1]["book_value_usd"] == pytest.approx(50_000)


def test_an_economics_date_is_checked_as_the_catalogs_are():
    """catalog/economics.yaml figures use the catalog's date check: a month 13 is refused, not stored."""
    from pydantic import ValidationError

    from advisor.data.economics import EconFigure

    ok = EconFigure(value=1.0, unit="USD", as_of="2024-12", confidence="low", source=["derived"])
    assert ok.as_of == "2024-12"
    with pytest.raises(ValidationError, match="as_of"):
        EconFigure(value=1.0, unit="USD", as_of="2024-13", confidence="low", source=["derived"])


def test_no_bought_gpu_is_timed_over_a_faster_network_than_it_is_billed(catalog):
    """The bill prices the network bought GPUs' servers source (else the estimator's assumption); the
    speed is estimated at the estimator's network_gbps_per_gpu. A job must never be timed over more
    bandwidth than the plan pays for (review 12: a B200 is billed 400 Gb/s and timed at 200, the
    conservative way round; the reverse would promise a speed the bill does not buy)."""
    from advisor.perf.estimate import params_from
    from advisor.perf.training import default_network_gbps
    from advisor.solve.options import bought_network_gbps, server_options

    params = params_from(catalog)
    checked = 0
    for gpu in catalog.gpus.values():
        servers, _ = server_options(catalog, gpu, "datacenter")
        if not servers:
            continue
        assert default_network_gbps(gpu, params) <= bought_network_gbps(catalog, gpu, servers) + 1e-9, gpu.id
        checked += 1
    assert checked >= 5
