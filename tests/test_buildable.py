"""Issue 29, item 5: hardware that can be built. Passively cooled cards go into priced rack PCIe
servers; the workstation holds only actively cooled cards, in any context."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, example_params

PASSIVE = ("a100-80gb-pcie", "h100-pcie", "l40s", "l4", "a10", "t4")


def test_the_datasheets_passive_cards_are_passive(catalog):
    assert {g for g in catalog.gpus if catalog.gpus[g].cooling and catalog.gpus[g].cooling.value == "passive"} == set(
        PASSIVE
    )


@pytest.mark.parametrize("context", ["office", "datacenter"])
def test_the_workstation_holds_only_actively_cooled_cards(catalog, context):
    ws = catalog.servers["workstation-4x-pcie"]
    assert ws.gpu_cooling == ["active"]
    held = [g for g in catalog.gpus if ws in catalog.servers_for(g, context)]
    assert held and all(catalog.gpus[g].cooling.value == "active" for g in held)
    assert not set(held) & set(PASSIVE)
    assert "h100-nvl" not in held  # cooling unknown: no server that names its cooling takes it


def test_passive_cards_go_into_priced_rack_pcie_servers(catalog):
    for gid in PASSIVE:
        servers = catalog.servers_for(gid, "datacenter")
        assert {s.id for s in servers} == {"pcie-server-4gpu", "pcie-server-8gpu"}, gid
        assert catalog.servers_for(gid, "office") == []
    for sid, slots in (("pcie-server-4gpu", 4), ("pcie-server-8gpu", 8)):
        s = catalog.servers[sid]
        assert s.gpu_slots == slots and s.contexts == ["datacenter"] and s.kind == "pcie-server"
        assert s.purchase.usd and s.purchase.as_of and s.purchase.source and s.purchase.confidence == "low"
        assert s.power_overhead_w.value is not None and s.lead_time.days is not None


def test_the_workstation_is_priced_today(catalog):
    ws = catalog.servers["workstation-4x-pcie"]
    assert (ws.purchase.usd, ws.purchase.as_of, ws.purchase.kind) == (7000, "2026", "list")
    assert catalog.sources[ws.purchase.source[0]].kind == "primary"
    assert any(p.usd == 2630 and p.as_of == "2019-01-31" for p in ws.other_purchases)  # the old estimate, kept


@pytest.mark.parametrize("path", example_params(sorted(EXAMPLES.glob("*.yaml"))), ids=lambda p: p.stem)
def test_no_example_puts_a_passive_card_in_a_workstation(example_plan, catalog, path):
    code, plan = example_plan(path.stem)
    for srv in plan.get("servers") or []:
        cooling = catalog.gpus[srv["gpu"]].cooling
        if srv["server"].startswith("workstation"):
            assert cooling is not None and cooling.value == "active", (path.stem, srv)


def test_a_job_across_four_slot_towers_networks_every_tower_it_spans(plan_json, write, catalog):
    """128 RTX 6000 Ada bought in 32 four-slot workstations for one job: every tower joins the network.
    `servers[].networked` said 16 (the job counted in the type's largest, eight-slot server) while the
    NICs and fabric were priced for all 128 GPUs."""
    path = write(
        "deployment: {context: datacenter, ownership: buy, region: US}\n"
        "jobs:\n  - {name: pretrain, model: llama-3-8b, tokens: 2T, deadline: 200d}\n"
        "gpus: {allow: [rtx-6000-ada], max: 256}\n"
    )
    code, plan = plan_json(path)
    assert code == 0
    (job,) = plan["jobs"]
    (srv,) = plan["servers"]
    slots = catalog.servers[srv["server"]].gpu_slots
    assert job["gpu_count"] > slots and srv["networked"] * slots >= job["gpu_count"]
    assert srv["networked"] == -(-job["gpu_count"] // slots) <= srv["count"]
    (nics,) = [b for b in plan["bill_of_materials"] if b["item"].startswith("NICs")]
    assert nics["quantity"] == srv["networked"] * slots  # one NIC per GPU of the towers joined


def test_servers_joined_on_a_network_the_catalog_does_not_source_say_so(plan_json, write, catalog):
    """The PCIe server's catalog entry sources no bandwidth (`network_gbps_per_server: null`), yet a job
    spanning several was planned and priced with a NIC share per GPU without a word: the plan says what
    the speed and the bill assume there, so the buyer confirms the servers take the NICs."""
    path = write(
        "deployment: {context: datacenter, ownership: buy, region: US}\n"
        "jobs:\n  - {name: pretrain, model: llama-3-8b, tokens: 2T, deadline: 200d}\n"
        "gpus: {allow: [rtx-6000-ada], max: 256}\n"
    )
    code, plan = plan_json(path)
    (srv,) = plan["servers"]
    assert code == 0 and srv["networked"] > 1
    assert catalog.servers[srv["server"]].network_gbps_per_server.value is None
    fabric = [w["message"] for w in plan["warnings"] if w["code"] == "fabric"]
    assert any(m.startswith(f"rtx-6000-ada in {srv['server']}:") and "Gb/s per GPU" in m for m in fabric), fabric


def test_the_rfq_asks_the_vendor_about_the_network_the_catalog_does_not_source(run, write, tmp_path):
    path = write(
        "deployment: {context: datacenter, ownership: buy, region: US}\n"
        "jobs:\n  - {name: pretrain, model: llama-3-8b, tokens: 2T, deadline: 200d}\n"
        "gpus: {allow: [rtx-6000-ada], max: 256}\n"
    )
    out = tmp_path / "rfq.csv"
    code, _, err = run("rfq", path, "-o", out)
    assert code == 0, err
    import csv

    rows = {r["item"]: r for r in csv.DictReader(out.open(encoding="utf-8"))}
    # the 8-GPU PCIe server (bandwidth unsourced, network priced); not the workstation, which sources
    # no network at all and holds no job that spans servers (tests/test_server_network.py)
    assert "rtx-6000-ada in pcie-server-8gpu:" in rows["rtx-6000-ada (buy)"]["notes"]
