"""Issue 29, item 7: market-specific parts stay in their markets (rule MKT001 reads the catalog's
sourced `markets`); the accelerators a buyer in China can get (Huawei Ascend) are in the catalog,
sourced, with the PRC-chip warning (MKT002) and no US export rule applied to them."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import AS_OF

from advisor.data.conditions import FieldRef, holds
from advisor.data.rules import deployment_context, gpu_context
from advisor.errors import InputError
from advisor.flow import plan
from advisor.inputs.workload import parse_workload

CHINA_SKUS = ("h800-sxm", "h20", "a800-80gb-sxm", "rtx-4090d", "ascend-910b", "ascend-910c")


def ctx(catalog, gpu, region, ownership="buy"):
    d = parse_workload(
        {
            "deployment": {"context": "datacenter", "region": region, "ownership": ownership},
            "model": "gpt2-124m",
            "tokens": "1B",
        }
    ).deployment
    return {
        "gpu": gpu_context(catalog.gpus[gpu]),
        "deployment": deployment_context(d),
        "offer": {"ownership": ownership, "site": "datacenter"},
        "job": {"kind": "pretrain", "precision": "bf16", "params": 124e6},
    }


def fired(rules, context, day=AS_OF):
    return {f.rule: f.severity for f in rules.evaluate(context, day)}


def test_the_market_specific_skus_say_where_they_are_sold(catalog):
    for gid in CHINA_SKUS:
        m = catalog.gpus[gid].markets
        assert m is not None and "CN" in m.value and m.source and m.note, gid
    assert all(catalog.gpus[g].markets is None for g in ("h100-sxm", "rtx-4090", "mi300x", "b200"))


@pytest.mark.parametrize("gpu", CHINA_SKUS)
@pytest.mark.parametrize("region", ["US", "DE", "JP"])
def test_mkt001_keeps_china_skus_out_of_other_markets(catalog, rules, gpu, region):
    assert fired(rules, ctx(catalog, gpu, region)).get("MKT001") == "forbid"
    assert fired(rules, ctx(catalog, gpu, region, "rent")).get("MKT001") == "forbid"


@pytest.mark.parametrize("gpu", CHINA_SKUS)
def test_mkt001_lets_them_be_bought_in_their_market(catalog, rules, gpu):
    assert "MKT001" not in fired(rules, ctx(catalog, gpu, "CN"))


@pytest.mark.parametrize("region", ["US", "CN", "DE"])
def test_mkt001_never_fires_on_a_part_sold_worldwide(catalog, rules, region):
    for gid in ("h100-sxm", "rtx-4090", "mi300x", "l40s"):
        assert "MKT001" not in fired(rules, ctx(catalog, gid, region))


def test_an_unknown_list_is_no_ground_for_a_finding():
    from advisor.data.conditions import Comparison

    cond = Comparison.model_validate({"field": "deployment.region", "not_in": {"field": "gpu.markets"}})
    assert isinstance(cond.not_in, FieldRef)
    assert not holds(cond, {"deployment": {"region": "US"}, "gpu": {"markets": None}}, {})
    assert holds(cond, {"deployment": {"region": "US"}, "gpu": {"markets": ("CN",)}}, {})
    assert not holds(cond, {"deployment": {"region": "CN"}, "gpu": {"markets": ("CN", "HK")}}, {})


def test_a_rule_reading_an_unknown_list_field_is_refused(write, tmp_path):
    from advisor.data.rules import load_rules

    path = write(
        "rules:\n  - id: ORG001\n    name: org-rule\n    title: t\n    severity: forbid\n"
        "    when: {field: deployment.region, not_in: {field: gpu.market}}\n    message: m\n    why: w\n"
        "    source: {title: t, url: 'https://example.org'}\n",
        "org.yaml",
    )
    with pytest.raises(InputError, match="gpu.market"):
        load_rules([path])


def test_mkt002_warns_on_prc_advanced_chips_from_the_guidance(catalog, rules):
    for gid in ("ascend-910b", "ascend-910c"):
        found = fired(rules, ctx(catalog, gid, "CN"))
        assert found == {"MKT002": "warn"}, gid  # and no US export rule: not a US export
        assert "MKT002" not in fired(rules, ctx(catalog, gid, "CN"), dt.date(2025, 5, 12))
    assert "MKT002" not in fired(rules, ctx(catalog, "h100-sxm", "CN"))


def test_a_us_buyer_is_not_offered_china_market_skus_as_runners_up(catalog):
    doc = {
        "deployment": {"context": "datacenter", "ownership": "buy", "region": "US"},
        "model": "gpt2-124m",
        "tokens": "1B",
        "gpus": {"allow": ["h100-sxm", "h800-sxm", "h20", "a800-80gb-sxm"]},
    }
    p = plan(parse_workload(doc), catalog=catalog, as_of=AS_OF, explain=False)
    assert {i["gpu"] for i in p["purchase"]} == {"h100-sxm"}
    rejected = {r["gpu"]: r for r in p["rejected"]}
    for gid in ("h800-sxm", "h20", "a800-80gb-sxm"):
        assert [x["rule"] for x in rejected[gid]["reasons"] if x.get("severity") == "forbid"] == ["MKT001"], gid


def test_the_ascend_parts_are_sourced_and_get_no_measured_run(catalog):
    import advisor

    for gid in ("ascend-910b", "ascend-910c"):
        g = catalog.gpus[gid]
        assert g.vendor == "Huawei" and g.tensor_tflops["fp16"].value and g.tensor_tflops["fp16"].source
        assert g.prices.purchase.usd is None and g.prices.purchase.note and g.lead_time.note
        assert g.availability == "neither"
    est = advisor.estimate(model="gpt2-124m", gpu="ascend-910c", count=1, precision="fp16", catalog=catalog)
    assert est["fits"] and any("no measured training run" in n for n in est["notes"])
