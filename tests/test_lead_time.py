"""Issue 29, item 2: every purchase (GPU, server, network) carries a sourced, dated lead time with its
confidence, or an explicit unknown with a note; the catalog refuses one with neither. Rentals carry
their provisioning time where the provider gives it."""

from __future__ import annotations

import re

import pytest
import yaml

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
    assert order.days == 152 and order.item == "h100-sxm"  # the GPU (5 months) after the server (10 weeks)
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
    entry["lead_time"] = {"days": None, "note": "not quoted yet"}  # an explicit unknown is accepted
    load_catalog(write(yaml.safe_dump({kind: [entry]}), "unknown.yaml"))


def test_ten_weeks_of_lead_time_and_three_weeks_of_work_miss_an_eight_week_deadline(run, write, catalog, rules):
    """Issue 29's hand-worked case: 8 H100 bought with a quoted 10-week lead time, a job of 3 weeks of
    work (tokens = 3 weeks at the estimator's rate), a deadline of 8 weeks: 70 + 21 > 56 days, so no
    plan (exit 3); the diagnosis names the lead time with its days and the job's, and the levers
    (rent for those weeks, or a later deadline); allowed to rent, a plan exists."""
    from conftest import AS_OF

    import advisor
    from advisor.flow import plan
    from advisor.inputs.workload import parse_workload

    tps = advisor.estimate(model="llama-3-8b", gpu="h100-sxm", count=8)["tokens_per_s"]
    doc = {
        "name": "ten weeks",
        "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 70},
        "gpus": {"allow": ["h100-sxm"], "count": 8},
        "model": "llama-3-8b",
        "tokens": tps * 21 * 86400,
        "deadline": "56d",
    }
    code, out, _ = run("plan", write(yaml.safe_dump(doc), "ten-weeks.yaml"), "--as-of", AS_OF.isoformat())
    assert code == 3
    lines = " ".join(out.split())
    assert "bought h100-sxm GPUs take 70.0 days to arrive and burn in" in lines
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    (lever,) = [d for d in p["diagnosis"] if d["constraint"] == "lead_time"]
    assert lever["kind"] == "lever" and lever["relaxation"] == {"lead_time_days": 0}
    assert "70 days or more to arrive and burn in" in lever["message"]
    work = float(re.search(r"with ([\d.]+) days of work, job cannot finish by its 56-day deadline", lines).group(1))
    assert 21.0 <= work < 30.0  # three weeks at the estimate, planned at its P80 time with goodput losses
    assert "rent for those weeks (ownership: any) or set a later deadline" in lines
    doc["deployment"]["ownership"] = "any"
    rented = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert rented["status"] == "optimal" and {i["ownership"] for i in rented["purchase"]} == {"rent"}
    assert rented["jobs"][0]["wall_days_planned"] <= 56


def test_an_alternative_ruled_out_by_its_lead_time_is_given_its_own(plan_json, write):
    """train-and-serve said "bought NVIDIA H100 SXM5 80GB arrive too late (73 days or more to arrive and burn
    in)": 73 days is the chosen RTX 6000 Ada's (70-day lead time, 3-day burn-in); the H100's is 155."""
    text = """
deployment: {context: datacenter, ownership: buy, horizon_months: 24}
gpus: {allow: [rtx-6000-ada, h100-sxm]}
jobs:
  - {name: chat, kind: serve, model: llama-3.1-8b, precision: fp8,
     traffic: {requests_per_s: 5, input_tokens: 500, output_tokens: 200}}
  - {name: ft, model: llama-3-8b, kind: finetune, tokens: 1B, deadline: 120d}
"""
    code, plan = plan_json(write(text), explain="alternatives")
    assert code == 0 and [p["ready_days"] for p in plan["purchase"] if p["gpu"] == "rtx-6000-ada"] == [73.0]
    (h100,) = [r for r in plan["rejected"] if r["gpu"] == "h100-sxm"]
    lead = next(r for r in h100["reasons"] if r["code"] == "lead_time")
    assert lead["limit"] == 155.0 and "(155 days or more to arrive and burn in)" in lead["message"], lead
