"""Issue 29, item 2: every purchase (GPU, server, network) carries a sourced, dated lead time with its
confidence, or an explicit unknown with a note; the catalog refuses one with neither. Rentals carry
their provisioning time where the provider gives it."""
from __future__ import annotations

import pytest

from advisor.data.catalog import load_catalog
from advisor.economics.lead_time import lead_time, provisioning_time, purchase_lead_time
from advisor.errors import InputError


def test_every_purchase_has_a_lead_time_or_says_it_is_unknown(catalog):
    parts = [(g.id, g.prices.purchase, g.lead_time) for g in catalog.gpus.values()]
    parts += [(s.id, s.purchase, s.lead_time) for s in catalog.servers.values()]
    priced = [(pid, lt) for pid, price, lt in parts if price is not None and price.usd is not None]
    assert len(priced) > 25
    for pid, lt in priced:
        assert lt is not None, pid
        if lt.days is None:
            assert lt.note, pid
        else:
            assert lt.as_of and lt.confidence in ("high", "medium", "low") and lt.source, pid
            assert set(lt.source) <= set(catalog.sources), pid
    known = [pid for pid, lt in priced if lt.days is not None]
    assert {"h100-sxm", "h200-sxm", "b200", "hgx-h100-8gpu", "hgx-b200-8gpu"} <= set(known)
    assert lead_time(catalog, "network").days is None and lead_time(catalog, "network").note


def test_lead_times_as_sourced(catalog):
    h100, b200 = lead_time(catalog, "h100-sxm"), lead_time(catalog, "b200")
    # 2026: 'GPU and memory lead times into the 3-7 month range' -> 5 months; B200 '4-10 months' -> 7
    assert (h100.days, h100.low_days, h100.high_days, h100.confidence) == (152, 91, 213, "low")
    assert (b200.days, b200.low_days, b200.high_days) == (213, 122, 304)
    assert h100.weeks == pytest.approx(152 / 7)
    assert lead_time(catalog, "workstation-4x-pcie").days == 7
    with pytest.raises(InputError, match="unknown part"):
        lead_time(catalog, "h100-sxmm")


def test_an_order_waits_for_its_last_part_and_names_the_unknown_ones(catalog):
    order = purchase_lead_time(catalog, ["h100-sxm", "hgx-h100-8gpu"])
    assert order.days == 152 and order.item == "h100-sxm"          # the GPU (5 months) after the server (10 weeks)
    with_net = purchase_lead_time(catalog, ["h100-sxm", "hgx-h100-8gpu", "network"])
    assert with_net.days == 152 and with_net.confidence == "low" and "unknown for network" in with_net.note
    assert not purchase_lead_time(catalog, ["network"]).known


def test_rentals_carry_their_provisioning_time(catalog):
    block = next(o for o in catalog.gpus["h100-sxm"].prices.rent if o.pricing == "capacity_block")
    t = provisioning_time(block)
    assert t.days is None and "eight weeks" in t.note
    pods = next(o for o in catalog.gpus["h100-sxm"].prices.rent if o.provider.startswith("RunPod (Community"))
    assert not provisioning_time(pods).known and "publishes no provisioning time" in provisioning_time(pods).note


@pytest.mark.parametrize("kind", ["gpus", "servers"])
def test_validate_refuses_a_purchase_without_a_lead_time(write, run, catalog, kind):
    if kind == "gpus":
        entry = catalog.gpus["l4"].model_dump(mode="json")
        entry.update(id="l4-clone", name="L4 clone")
        entry.pop("lead_time")
        entry["prices"]["rent"] = []
    else:
        entry = catalog.servers["hgx-h100-8gpu"].model_dump(mode="json")
        entry.update(id="hgx-clone", name="HGX clone")
        entry.pop("lead_time")
    import yaml

    path = write(yaml.safe_dump({kind: [entry]}), "nolead.yaml")
    with pytest.raises(InputError) as err:
        load_catalog(path)
    assert "lead_time" in str(err.value) and entry["id"] in str(err.value)
    code, out, stderr = run("catalog", "validate", path)
    assert code == 2 and "nolead.yaml" in stderr and "field lead_time" in stderr and "Traceback" not in stderr
    entry["lead_time"] = {"days": None, "note": "not quoted yet"}          # an explicit unknown is accepted
    load_catalog(write(yaml.safe_dump({kind: [entry]}), "unknown.yaml"))
