"""Rules are data: LIC001 fires where the GeForce licence forbids, and nowhere else."""
from __future__ import annotations

import pytest

from advisor.errors import InputError
from advisor.rules import gpu_context, load_rules
from conftest import AS_OF


def ctx(catalog, gpu, site, ownership="buy"):
    return {"gpu": gpu_context(catalog.gpus[gpu]), "offer": {"site": site, "ownership": ownership},
            "deployment": {"context": site, "region": "US"}}


def test_lic001_forbids_geforce_in_a_datacenter(catalog, rules):
    found = rules.evaluate(ctx(catalog, "rtx-4090", "datacenter"), AS_OF)
    assert [(f.rule, f.severity) for f in found] == [("LIC001", "forbid")]


@pytest.mark.parametrize("gpu,site", [("rtx-4090", "office"), ("h100-sxm", "datacenter"),
                                      ("a100-80gb-sxm", "datacenter")])
def test_lic001_does_not_fire_elsewhere(catalog, rules, gpu, site):
    assert "LIC001" not in [f.rule for f in rules.evaluate(ctx(catalog, gpu, site), AS_OF)]


def test_lic001_not_in_force_before_the_2017_licence_change(catalog, rules):
    import datetime as dt
    assert not rules.evaluate(ctx(catalog, "rtx-4090", "datacenter"), dt.date(2017, 1, 1))


def test_rule_with_unknown_operator_is_refused(write):
    path = write("rules:\n  - id: ORG001\n    name: no-amd\n    title: t\n    severity: forbid\n"
                 "    when: {field: gpu.vendor, matches: AMD}\n    message: m\n    why: w\n"
                 "    source: {title: t, url: 'https://example.org'}\n", "org.yaml")
    with pytest.raises(InputError) as info:
        load_rules([path])
    assert "ORG001" in str(info.value) and "matches" in str(info.value) and str(path) in str(info.value)


def test_organisation_rule_file_adds_a_rule(write, catalog):
    path = write("rules:\n  - id: ORG001\n    name: no-hopper\n    title: No Hopper parts\n    severity: forbid\n"
                 "    when: {field: gpu.id, in: [h100-sxm]}\n    message: '{gpu.name} is not on our approved list'\n"
                 "    why: procurement policy\n    source: {title: policy, url: 'https://example.org/policy'}\n",
                 "org.yaml")
    rules = load_rules([path])
    found = rules.evaluate(ctx(catalog, "h100-sxm", "datacenter"), AS_OF)
    assert [f.message for f in found] == ["NVIDIA H100 SXM5 80GB is not on our approved list"]
