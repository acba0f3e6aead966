"""One price basis per decision (issue 29 item 3): a rented GPU's offer is shown beside the cheapest
offer of the same kind in every other provider tier, and GPUs rented at different tiers are said to
be compared on their providers as much as on themselves."""

from __future__ import annotations

from conftest import AS_OF

from advisor.flow import plan
from advisor.inputs.workload import parse_workload


def test_a_rented_gpu_is_shown_beside_the_other_tiers_cheapest_offer(catalog, rules):
    doc = {
        "deployment": {"context": "cloud", "rent_kinds": ["on_demand"]},
        "model": "gpt2-350m",
        "tokens": "20B",
        "gpus": {"allow": ["h100-sxm"], "count": 8},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    (item,) = p["purchase"]
    offers = catalog.gpus["h100-sxm"].rentals("on_demand")
    others = {}
    for o in sorted(offers, key=lambda o: (o.usd_per_gpu_hour, o.provider)):
        if o.tier != item["tier"]:
            others.setdefault(o.tier, o)
    assert others, "the premise: H100 on-demand offers exist in more than one tier"
    (w,) = [w for w in p["warnings"] if w["code"] == "price-basis"]
    assert f"priced at {item['provider']} ({item['tier']}" in w["message"]
    for tier, o in others.items():
        assert f"the cheapest {tier} offer is {o.provider} ${o.usd_per_gpu_hour:g}" in w["message"]
