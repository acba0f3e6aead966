"""Rules are data: each built-in rule fires where its source says and nowhere else; plans cite
the rule that removed an option; an organisation adds its own rules with --rules FILE."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import AS_OF, EXAMPLES

import advisor
from advisor.data.conditions import describe
from advisor.data.rules import gpu_context, load_rules
from advisor.errors import InputError
from advisor.flow import plan
from advisor.inputs.workload import parse_workload
from advisor.solve.constraints.power import power_limit


def ctx(catalog, gpu, site="office", ownership="buy", region="US", tp=None, count=None):
    context = {
        "deployment": {"context": site, "region": region, "ownership": ownership, "lead_time_days": 0},
        "offer": {"site": "cloud" if ownership == "rent" else site, "ownership": ownership, "lead_time_days": 0},
        "job": {"kind": "pretrain", "precision": "bf16", "params": 124e6},
    }
    context["gpu"] = gpu_context(catalog.gpus[gpu]) if isinstance(gpu, str) else gpu
    if tp is not None:
        context["job"].update(needs_tensor_parallel=tp, gpu_count=count or 2)
    return context


def fired(rules, context, day=AS_OF):
    return {f.rule: f.severity for f in rules.evaluate(context, day)}


def synthetic(catalog, **changes):
    """A catalog GPU's rule view with some figures changed (a part the catalog lacks)."""
    return {**gpu_context(catalog.gpus["l4"]), "id": "x", "name": "Test part", "cooling": None, **changes}


# ----------------------------------------------------------------------------- licence


def test_lic001_forbids_geforce_in_a_datacenter(catalog, rules):
    assert fired(rules, ctx(catalog, "rtx-4090", "datacenter")) == {"LIC001": "forbid"}


@pytest.mark.parametrize(
    "gpu,site", [("rtx-4090", "office"), ("h100-sxm", "datacenter"), ("a100-80gb-sxm", "datacenter")]
)
def test_lic001_does_not_fire_elsewhere(catalog, rules, gpu, site):
    assert "LIC001" not in fired(rules, ctx(catalog, gpu, site))


def test_lic001_not_in_force_before_the_2017_licence_change(catalog, rules):
    assert not rules.evaluate(ctx(catalog, "rtx-4090", "datacenter"), dt.date(2017, 1, 1))


def test_lic002_warns_on_rented_geforce_only(catalog, rules):
    assert fired(rules, ctx(catalog, "rtx-4090", "cloud", "rent")) == {"LIC002": "warn"}
    assert "LIC002" not in fired(rules, ctx(catalog, "rtx-4090", "office", "buy"))
    assert "LIC002" not in fired(rules, ctx(catalog, "h100-sxm", "cloud", "rent"))


# ----------------------------------------------------------------------------- export control


def test_the_3a090_destination_list_is_the_country_group_arithmetic(rules):
    lists = rules.lists
    expected = (
        set(lists["country_group_d1"]) | set(lists["country_group_d4"]) | set(lists["country_group_d5"]) | {"MO", "HK"}
    ) - set(lists["country_group_a5_a6_in_d"])
    assert set(lists["eccn_3a090_destinations"]) == expected
    assert {"CN", "MO", "HK", "RU", "IR", "VN", "AE"} <= expected and "IL" not in expected
    assert set(lists["h20_letter_destinations"]) == set(lists["country_group_d5"]) | {"CN", "HK", "MO"}


@pytest.mark.parametrize("region", ["CN", "MO", "HK", "RU", "VN"])
def test_exp001_forbids_tpp_4800_in_restricted_destinations(catalog, rules, region):
    assert fired(rules, ctx(catalog, "rtx-4090", region=region)).get("EXP001") == "forbid"


@pytest.mark.parametrize(
    "gpu,region", [("rtx-4090", "US"), ("rtx-4090", "DE"), ("rtx-4090", "IL"), ("rtx-4090d", "CN"), ("t4", "CN")]
)
def test_exp_rules_do_not_fire_outside_their_scope(catalog, rules, gpu, region):
    assert not [r for r in fired(rules, ctx(catalog, gpu, region=region)) if r.startswith("EXP")]


def test_exp001_is_computed_from_tpp_not_names(catalog, rules):
    """Note 2: the 4090D (TPP 4707, consumer) is exempt; the same card at 4800 is not."""
    d = gpu_context(catalog.gpus["rtx-4090d"])
    assert "EXP001" not in fired(rules, ctx(catalog, d, region="CN"))
    assert "EXP001" in fired(rules, ctx(catalog, {**d, "tpp": 4800.0}, region="CN"))


def test_exp001_not_in_force_before_the_october_2023_rule(catalog, rules):
    assert "EXP001" not in fired(rules, ctx(catalog, "rtx-4090", region="CN"), dt.date(2023, 11, 16))
    assert "EXP001" in fired(rules, ctx(catalog, "rtx-4090", region="CN"), dt.date(2023, 11, 17))


def test_exp002_density_band_for_datacenter_parts_only(catalog, rules):
    assert fired(rules, ctx(catalog, "l4", "datacenter", region="CN")).get("EXP002") == "forbid"  # TPP 1936, PD 6.59
    assert "EXP002" not in fired(rules, ctx(catalog, "l4", "datacenter", region="US"))
    consumer = {**gpu_context(catalog.gpus["l4"]), "product_class": "consumer", "cooling": "active"}  # a card with fans
    assert not fired(rules, ctx(catalog, consumer, region="CN"))  # Note 2
    assert "EXP002" not in fired(rules, ctx(catalog, "a100-80gb-sxm", "datacenter", region="CN"))  # .a.1 instead


def test_exp003_warns_for_3a090b(catalog, rules):
    b1 = synthetic(catalog, tpp=2500.0, performance_density=4.0)
    assert fired(rules, ctx(catalog, b1, region="VN")) == {"EXP003": "warn"}
    assert not fired(rules, ctx(catalog, b1, region="US"))
    assert not fired(rules, ctx(catalog, {**b1, "product_class": "consumer"}, region="VN"))
    below = synthetic(catalog, tpp=2000.0, performance_density=3.18)  # the A10: under both .b tests
    assert not fired(rules, ctx(catalog, below, region="CN"))


def test_exp004_warns_when_the_classification_cannot_be_computed(catalog, rules):
    unknown_tpp = synthetic(catalog, tpp=None, performance_density=None)
    assert fired(rules, ctx(catalog, unknown_tpp, region="CN")) == {"EXP004": "warn"}
    assert not fired(rules, ctx(catalog, unknown_tpp, region="US"))
    unknown_pd = synthetic(catalog, tpp=3000.0, performance_density=None)
    assert fired(rules, ctx(catalog, unknown_pd, region="CN")) == {"EXP004": "warn"}
    # a workstation part in the .b band: whether it is "designed for datacenters" decides
    assert fired(rules, ctx(catalog, "rtx-a6000", region="CN")) == {"EXP004": "warn"}
    # a consumer part below 4800 is exempt whatever its density; a known .a.1 part is decided
    assert not fired(rules, ctx(catalog, "rx-7900-xtx", region="CN"))
    assert "EXP004" not in fired(rules, ctx(catalog, "rtx-5090", region="CN"))  # PD unknown, TPP 6704


def test_exp005_h20_letter_is_dated(catalog, rules):
    context = ctx(catalog, "h20", "datacenter", region="CN")
    assert fired(rules, context, dt.date(2025, 4, 9)) == {"EXP005": "warn"}
    assert not fired(rules, context, dt.date(2025, 4, 8))
    # in Germany no export rule fires (the H20 is not sold there either: MKT001, tests/test_market_rules.py)
    assert not [r for r in fired(rules, ctx(catalog, "h20", "datacenter", region="DE"), AS_OF) if r.startswith("EXP")]
    assert "EXP005" not in fired(rules, ctx(catalog, "l40s", "datacenter", region="CN"))  # below both bandwidths


def test_exp006_case_by_case_band_from_january_2026(catalog, rules):
    h200 = ctx(catalog, "h200-sxm", "datacenter", region="CN")
    assert fired(rules, h200, dt.date(2026, 1, 15)) == {"EXP001": "forbid", "EXP005": "warn", "EXP006": "warn"}
    assert "EXP006" not in fired(rules, h200, dt.date(2026, 1, 14))
    assert "EXP006" not in fired(rules, ctx(catalog, "b200", "datacenter", region="CN"))  # 7,700 GB/s
    assert "EXP006" not in fired(rules, ctx(catalog, "h200-sxm", "datacenter", region="RU"))


def test_export_rules_never_fire_on_unknown_figures(catalog, rules):
    blank = synthetic(catalog, tpp=None, performance_density=None, memory_bandwidth_gbps=None, link_gbps=None)
    assert set(fired(rules, ctx(catalog, blank, region="CN"))) == {"EXP004"}


# ----------------------------------------------------------------------------- deployment, power, interconnect


@pytest.mark.parametrize(
    "gpu,site,ownership,expected",
    [
        ("h100-sxm", "office", "buy", True),
        ("mi300x", "office", "buy", True),
        ("h100-sxm", "datacenter", "buy", False),
        ("h100-sxm", "office", "rent", False),
        ("h100-pcie", "office", "buy", False),
    ],
)
def test_dep001_sxm_and_oam_modules_need_a_datacenter(catalog, rules, gpu, site, ownership, expected):
    assert ("DEP001" in fired(rules, ctx(catalog, gpu, site, ownership))) == expected


def test_pwr001_sets_the_office_default_and_the_workload_overrides_it(rules):
    office = parse_workload({"deployment": "office", "model": "gpt2-124m", "tokens": "1B"})
    lim = power_limit(office, rules, AS_OF)
    assert (lim.kw, lim.rule) == (1.44, "PWR001") and "NEC 210.20(A)" in lim.message
    own = parse_workload(
        {"deployment": {"context": "office", "power_limit_kw": "3kW"}, "model": "gpt2-124m", "tokens": "1B"}
    )
    assert (power_limit(own, rules, AS_OF).kw, power_limit(own, rules, AS_OF).rule) == (3.0, None)
    datacenter = parse_workload({"deployment": "datacenter", "model": "gpt2-124m", "tokens": "1B"})
    assert power_limit(datacenter, rules, AS_OF) is None
    assert not rules.evaluate({"deployment": {"context": "office"}}, AS_OF)  # a limit is not a finding


def test_int001_needs_p2p_for_tensor_parallelism(catalog, rules):
    assert fired(rules, ctx(catalog, "rtx-4090", tp=True)) == {"INT001": "forbid"}
    assert not fired(rules, ctx(catalog, "rtx-4090", tp=False))
    assert not fired(rules, ctx(catalog, "rtx-4090"))  # the estimate said nothing: no guess
    assert not fired(rules, ctx(catalog, "h100-sxm", "datacenter", tp=True))
    assert fired(rules, ctx(catalog, "l40s", "datacenter", tp=True)) == {"INT002": "warn"}  # p2p unverified
    assert [r.id for r in rules.rules if r.per_count] == ["INT001", "INT002"]


# ----------------------------------------------------------------------------- the rule files


def test_every_rule_is_sourced_explained_and_has_an_example(rules):
    assert len(rules.rules) >= 12
    for r in rules.rules:
        assert r.source.url.startswith("http") and r.source.title and r.source.clause, r.id
        assert len(r.why.split()) > 30 and r.example and r.message, r.id
    export = [r for r in rules.rules if r.id.startswith("EXP")]
    assert all(r.effective.from_ for r in export)


def test_conditions_read_as_words(rules):
    text = describe(rules.get("EXP001").when, rules.lists)
    assert text == (
        "deployment.region is in list eccn_3a090_destinations (47 entries) and gpu.tpp ≥ 4800 "
        "and gpu.vendor is not in list prc_designers (1 entries)"
    )
    assert "gpu.tpp is unknown" in describe(rules.get("EXP004").when, rules.lists)


RULE = (
    "rules:\n  - id: ORG001\n    name: org-rule\n    title: t\n    severity: {severity}\n    when: {when}\n"
    "    message: m\n    why: w\n    source: {{title: t, url: 'https://example.org'}}\n{extra}"
)


@pytest.mark.parametrize(
    "severity,when,extra,words",
    [
        ("forbid", "{field: gpu.vendor, matches: AMD}", "", ["matches"]),
        ("forbid", "{field: gpu.brnad, equals: geforce}", "", ["gpu.brnad", "did you mean gpu.brand"]),
        ("forbid", "{field: gpu.vendor, equals: AMD}", "    severtiy: warn\n", ["severtiy", "unknown field"]),
        ("limit", "{field: gpu.vendor, equals: AMD}", "    effect: {limit: power_kw, value: 1}\n", ["only deployment"]),
        ("forbid", "{field: gpu.vendor, equals: AMD}", "    effect: {limit: power_kw, value: 1}\n", ["effect"]),
        ("forbid", "{field: gpu.vendor, in: {list: nowhere}}", "", ["nowhere"]),
    ],
)
def test_a_bad_rule_file_is_refused_naming_file_and_rule(write, severity, when, extra, words):
    path = write(RULE.format(severity=severity, when=when, extra=extra), "org.yaml")
    with pytest.raises(InputError) as info:
        load_rules([path])
    assert "ORG001" in str(info.value) and str(path) in str(info.value)
    for word in words:
        assert word in str(info.value)


def test_bad_rule_file_exits_2_on_the_cli(write, run):
    path = write(RULE.format(severity="forbid", when="{field: gpu.vendor, matches: AMD}", extra=""), "org.yaml")
    code, _, err = run("rules", "list", "--rules", path)
    assert code == 2 and "ORG001" in err and "org.yaml" in err


MISTAKES = """\
lists:
  big_gpus: h100-sxm
rules:
  - id: ORG001
    name: no-amd
    title: t
    severity: forbidd
    when: {field: gpu.vendor, matches: AMD}
    message: m
    why: w
    source: {title: t, url: 'https://example.org'}
  - id: ORG2
    name: two
    title: t
    severity: warn
    when: {field: gpu.vendor, equals: AMD}
    message: m
    why: w
    source: {title: t, url: 'https://example.org'}
  - id: ORG003
    name: three
    title: t
    severity: forbid
    when: {all: [{field: gpu.tdp_w, gte: 500}, {field: gpu.brnad, equals: geforce}]}
    message: m
    why: w
    source: {title: t, url: 'https://example.org'}
  - id: ORG004
    name: four
    title: t
    severity: forbid
    when: {field: gpu.tdp_w, gte: 500}
    mesage: m
    why: w
    source: {title: t, url: 'https://example.org'}
  - id: ORG005
    name: five
    title: t
    severity: forbid
    when: {any: [{field: gpu.tdp_w, lt: .nan}]}
    message: m
    why: w
    source: {title: t}
"""
# (InputError.field, words the message holds), one per mistake above, in file order
FOUND = [
    ("ORG001.severity", ["rule ORG001", "`severity`", "'forbidd'"]),
    ("ORG001.when", ["rule ORG001", "`when`", "unknown operator 'matches'"]),
    ("ORG2.id", ["rule ORG2", "2 to 5 capital letters and 3 digits"]),
    ("ORG003.when", ["rule ORG003", "unknown field 'gpu.brnad'", "did you mean gpu.brand"]),
    ("ORG004.mesage", ["rule ORG004", "unknown field (did you mean message?)"]),
    ("ORG005.when.any[0]", ["rule ORG005", "`when.any[0]`", "lt: a finite number, got nan"]),
    ("ORG005.source", ["rule ORG005", "`source`", "a source is a URL"]),
    ("lists.big_gpus", ["field `lists.big_gpus`", "must be a list"]),
]


def test_every_mistake_in_a_rules_file_is_reported_at_once(write, run):
    """Eight independent mistakes in five rules and the lists come back in one run: exit 2,
    one line each, no traceback -- through the library and through `rules validate` and `--rules`."""
    path = write(MISTAKES, "org.yaml")
    with pytest.raises(InputError) as info:
        load_rules([path])
    found = sorted(info.value.errors, key=lambda e: [f for f, _ in FOUND].index(e.field))
    assert [e.field for e in found] == [f for f, _ in FOUND]
    for error, (_, words) in zip(found, FOUND):
        assert str(error).startswith(f"{path}: ")
        for word in words:
            assert word in str(error), (word, str(error))
    for args in (("rules", "validate", path), ("rules", "list", "--rules", path)):
        code, out, err = run(*args)
        assert code == 2 and out == "" and "Traceback" not in err
        lines = err.strip().splitlines()
        assert len(lines) == len(FOUND), err
        assert all(str(path) in line for line in lines)


def test_a_rule_mistake_does_not_hide_a_duplicate_id_or_a_missing_list(write):
    """Checks across rules still run when one rule is wrong: the duplicate and the missing list are
    reported with it."""
    rule = (
        "  - id: {id}\n    name: r\n    title: t\n    severity: {severity}\n    when: {when}\n"
        "    message: m\n    why: w\n    source: {{title: t, url: 'https://example.org'}}\n"
    )
    text = "rules:\n" + "".join(
        rule.format(id=i, severity=s, when=w)
        for i, s, w in (
            ("ORG001", "forbid", "{field: gpu.id, in: {list: nowhere}}"),
            ("LIC001", "forbid", "{field: gpu.tdp_w, gte: 500}"),
            ("ORG003", "sometimes", "{field: gpu.tdp_w, gte: 500}"),
        )
    )
    with pytest.raises(InputError) as info:
        load_rules([write(text, "org.yaml")])
    messages = [str(e) for e in info.value.errors]
    assert len(messages) == 3, messages
    assert any("rule ORG003" in m and "'sometimes'" in m for m in messages)
    assert any("rule LIC001 is already defined" in m for m in messages)
    assert any("refers to list 'nowhere'" in m for m in messages)


def test_organisation_rule_file_adds_a_rule(write, catalog):
    path = write(
        "rules:\n  - id: ORG001\n    name: no-hopper\n    title: No Hopper parts\n    severity: forbid\n"
        "    when: {field: gpu.id, in: [h100-sxm]}\n    message: '{gpu.name} is not on our approved list'\n"
        "    why: procurement policy\n    source: {title: policy, url: 'https://example.org/policy'}\n",
        "org.yaml",
    )
    found = load_rules([path]).evaluate(ctx(catalog, "h100-sxm", "datacenter"), AS_OF)
    assert [f.message for f in found] == ["NVIDIA H100 SXM5 80GB is not on our approved list"]


def test_example_no_amd_rule_rejects_amd_in_a_plan(run_json):
    rules_file = EXAMPLES / "rules" / "no-amd.yaml"
    code, p = run_json("plan", EXAMPLES / "article-datacenter.yaml", "--rules", rules_file, "--as-of", AS_OF)
    assert code == 0 and "ORG001" not in str(p["rejected"])  # no AMD part allowed there: nothing to reject
    wl = parse_workload(
        {
            "deployment": {"context": "datacenter", "ownership": "rent"},
            "model": "gpt2-124m",
            "tokens": "10B",
            "deadline": "7d",
            "gpus": {"allow": ["mi300x", "h100-sxm"]},
        }
    )
    p = plan(wl, rules=load_rules([rules_file]), as_of=AS_OF, explain=False)
    rejected = {r["gpu"]: r["reasons"] for r in p["rejected"]}
    assert [r["rule"] for r in rejected["mi300x"]] == ["ORG001"] and p["purchase"][0]["gpu"] == "h100-sxm"
    assert any(s["id"] == "ORG001" for s in p["sources"])


def test_example_approved_vendors_rule_uses_its_list(catalog):
    rules = load_rules([EXAMPLES / "rules" / "approved-vendors.yaml"])
    assert rules.lists["approved_vendors"] == ["NVIDIA"]
    for gid, expected in (("gaudi3", True), ("mi300x", True), ("h100-sxm", False)):
        assert ("ORG002" in fired(rules, ctx(catalog, gid, "datacenter"))) == expected


# ----------------------------------------------------------------------------- rules in plans


def test_china_office_buys_the_4090d_and_rejects_the_4090_with_exp001(example_plan, plan_json):
    import datetime as dt

    from advisor.present.plan_text import plan_text

    code, p = example_plan("china-office")
    assert code == 0 and [(i["gpu"], i["ownership"]) for i in p["purchase"]] == [("rtx-4090d", "buy")]
    reasons = {r["gpu"]: r["reasons"] for r in p["rejected"]}["rtx-4090"]
    assert reasons[0]["rule"] == "EXP001" and reasons[0]["severity"] == "forbid"
    assert "3A090.a.1" in reasons[0]["message"] and "TPP 5285" in reasons[0]["message"]
    assert any(s["id"] == "EXP001" and "govinfo.gov" in s["url"] for s in p["sources"])
    table = plan_text(p, "table")  # what `advisor plan` prints, rendered from the same plan
    assert "EXP001" in table  # the primary reason; the warning that comes with it is listed by --verbose
    verbose = plan_text(p, "table", verbose=True)
    assert "EXP001" in verbose and "EXP006 (warn)" in verbose
    # before the October 2023 rule the 4090 was the cheaper buy (the purchase only: no explanation)
    _, before = plan_json(EXAMPLES / "china-office.yaml", as_of=dt.date(2023, 6, 1))
    assert before["purchase"][0]["gpu"] == "rtx-4090"


def test_dep001_is_the_reason_an_office_plan_shows_for_sxm(catalog, rules):
    wl = parse_workload(
        {
            "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
            "model": "gpt2-124m",
            "tokens": "10B",
            "deadline": "7d",
            "gpus": {"allow": ["rtx-4090", "h100-sxm", "mi300x"]},
        }
    )
    p = plan(wl, catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    rejected = {r["gpu"]: r["reasons"] for r in p["rejected"]}
    for gid in ("h100-sxm", "mi300x"):
        assert [r["rule"] for r in rejected[gid]] == ["DEP001"]  # not the catalog's 'no server'


def test_pwr001_bounds_an_office_plan_and_is_cited(catalog, rules):
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "10B",
        "deadline": "7d",
        "gpus": {"allow": ["rtx-4090"], "count": 4},
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    assert p["status"] == "infeasible"  # 4 x 450 W + 125 W > 1.44 kW
    power = next(d for d in p["diagnosis"] if d["constraint"] == "power")
    assert power["rule"] == "PWR001" and "PWR001" in power["message"]
    assert 1.9 < power["relaxation"]["power_limit_kw"] < 2.0
    ok = plan(
        parse_workload({**doc, "gpus": {"allow": ["rtx-4090"], "count": 2}}), catalog=catalog, rules=rules, as_of=AS_OF
    )
    assert ok["assumptions"]["power_limit_kw"] == 1.44 and ok["assumptions"]["power_limit_rule"] == "PWR001"
    binding = next(b for b in ok["binding"] if b["constraint"] == "power")
    assert binding["rule"] == "PWR001" and "of 1.44 kW (PWR001" in binding["message"]
    assert any(s["id"] == "PWR001" for s in ok["sources"])
    own = {**doc, "deployment": {**doc["deployment"], "power_limit_kw": 2.5}}
    mine = plan(parse_workload(own), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert mine["status"] == "optimal" and mine["assumptions"]["power_limit_rule"] is None
    assert "PWR001" not in str(mine["binding"])


def _tensor_parallel_above_one(monkeypatch):
    """Make the estimate say every count above one needs tensor parallelism (the estimator
    reports it in Estimate.layout)."""
    import advisor.solve.class_candidates as class_candidates

    real = class_candidates.evaluate

    def patched(spec, gpu, n, params):
        est = real(spec, gpu, n, params)
        est.layout["needs_tensor_parallel"] = n > 1
        return est

    monkeypatch.setattr(class_candidates, "evaluate", patched)


def test_int001_rejects_counts_whose_layout_needs_tensor_parallelism(monkeypatch, catalog, rules):
    doc = {
        "deployment": {"context": "office", "ownership": "buy", "lead_time_days": 0, "power_limit_kw": 5},
        "model": "gpt2-1558m",
        "tokens": "1B",
        "gpus": {"allow": ["rtx-4090"]},
    }
    assert plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)["status"] == "optimal"
    _tensor_parallel_above_one(monkeypatch)
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert p["status"] == "infeasible"  # 1.5B parameters do not fit one 24 GB card; more need TP
    reasons = p["rejected"][0]["reasons"]
    assert [r["rule"] for r in reasons] == ["INT001"] and "on 2 of them" in reasons[0]["message"]


def test_warnings_reach_json_and_table(monkeypatch, catalog, rules, run_json, run, write):
    path = write(
        "deployment: {context: cloud}\nmodel: gpt2-124m\ntokens: 10B\ndeadline: 7d\ngpus: {allow: [rtx-4090]}\n"
    )
    _, p = run_json("plan", path, "--as-of", AS_OF)
    assert p["purchase"][0]["ownership"] == "rent"
    assert any(w["rule"] == "LIC002" and "§2.7" in w["message"] for w in p["warnings"])
    assert any(s["id"] == "LIC002" for s in p["sources"])
    _, table, _ = run("plan", path, "--as-of", AS_OF)
    assert "[LIC002]" in table
    # a per-count warning (INT002) reaches the plan too
    _tensor_parallel_above_one(monkeypatch)
    wl = parse_workload(
        {
            "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
            "model": "gpt2-1558m",
            "tokens": "1B",
            "gpus": {"allow": ["l40s"], "count": 2},
        }
    )
    p = plan(wl, catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert any(w["rule"] == "INT002" for w in p["warnings"])


# ----------------------------------------------------------------------------- advisor rules list|show


def test_rules_list_table_and_json(run):
    code, out, _ = run("rules", "list", "--as-of", AS_OF)
    assert code == 0
    for rid in (
        "LIC001",
        "LIC002",
        "EXP001",
        "EXP002",
        "EXP003",
        "EXP004",
        "EXP005",
        "EXP006",
        "DEP001",
        "PWR001",
        "INT001",
        "INT002",
    ):
        assert rid in out
    code, out, _ = run(
        "rules", "list", "--format", "json", "--as-of", "2025-01-01", "--rules", EXAMPLES / "rules" / "no-amd.yaml"
    )
    import json

    data = json.loads(out)
    by_id = {r["id"]: r for r in data["rules"]}
    assert by_id["EXP005"]["in_force"] is False and by_id["EXP001"]["in_force"] is True
    assert by_id["ORG001"]["file"].endswith("no-amd.yaml") and by_id["LIC001"]["file"] == "rules/licence.yaml"


def test_rules_show_prints_what_why_example_and_source(run):
    code, out, _ = run("rules", "show", "lic001", "--as-of", AS_OF)
    assert code == 0
    for part in (
        "LIC001 (geforce-no-datacenter): forbid, in force",
        "What it does",
        "Why",
        "Example",
        "Source",
        "is not licensed for datacenter deployment",
        "deb.debian.org",
    ):
        assert part in out
    code, out, _ = run("rules", "show", "EXP001", "--format", "json", "--as-of", "2023-01-01")
    import json

    rec = json.loads(out)
    assert rec["in_force"] is False and rec["effective"]["from"] == "2023-11-17"
    assert len(rec["lists"]["eccn_3a090_destinations"]) == 47 and rec["source"]["clause"]


def test_rules_show_unknown_id_exits_2_with_a_suggestion(run):
    code, _, err = run("rules", "show", "LIC01")
    assert code == 2 and "LIC001" in err


# ----------------------------------------------------------------------------- runnable examples


def _examples():
    from advisor.data.rule_models import RuleExample

    return [(r.id, r.example) for r in load_rules().rules if isinstance(r.example, RuleExample)]


def test_every_built_in_rule_has_a_runnable_example():
    runnable = {rid for rid, _ in _examples()}
    assert runnable == {r.id for r in load_rules().rules}


@pytest.mark.parametrize("rule_id,example", _examples(), ids=[rid for rid, _ in _examples()])
def test_rule_example_shows_the_rule(rule_id, example, catalog, rules):
    """Each rule's `example:` planned (or evaluated) as written: the rule is cited as it says."""
    from advisor.data.rules import deployment_context, gpu_context
    from advisor.inputs.deployment import Deployment

    expect = example.expect
    if example.context is not None:
        ctx = dict(example.context)
        gpu = dict(gpu_context(catalog.gpus[ctx["gpu"]["id"]]), **ctx["gpu"])
        dep = deployment_context(Deployment(**ctx["deployment"]))
        context = {
            "gpu": gpu,
            "deployment": dep,
            "offer": {"ownership": "buy", "site": dep["context"]},
            "job": {"kind": "pretrain", "precision": "bf16", "params": 1e9},
        }
        fired = {f.rule for f in rules.evaluate(context, AS_OF)}
        assert (rule_id in fired) is expect.fires
        return
    p = plan(
        parse_workload(dict(example.workload, name=f"{rule_id} example")),
        catalog=catalog,
        rules=rules,
        as_of=AS_OF,
        explain=False,
    )
    cited = {r["gpu"]: {x.get("rule") for x in r["reasons"]} for r in p["rejected"]}
    for gid in expect.rejects:
        assert rule_id in cited.get(gid, set()), f"{gid} should be rejected by {rule_id}: {cited}"
    for gid in expect.warns:
        warned = (
            {w.get("rule") for w in p["warnings"]} if gid in {j["gpu"] for j in p["jobs"]} else cited.get(gid, set())
        )
        assert rule_id in warned, f"{gid} should carry {rule_id}'s warning"
    if expect.limits:
        assert p["assumptions"]["power_limit_rule"] == rule_id


WL_70B_PCIE = (
    "name: 70B on H100 PCIe\ndeployment: {context: datacenter, ownership: buy, horizon_months: 24}\n"
    "jobs:\n  - {name: ft, model: llama-3-70b, kind: finetune, tokens: 2B, deadline: 200d}\n"
    "gpus: {allow: [h100-pcie]}\n"
)


def test_planning_leaves_the_rules_as_it_found_them(write, catalog, rules):
    """review25b: a plan's check extended the rules' memoised findings in place (`found += ...`), so every
    later plan on the same RuleSet (a library caller's, the test session's shared one) read a per-count
    warning on every count."""
    from advisor.data.rules import RuleSet
    from advisor.perf.estimate import params_from
    from advisor.solve.candidates import build_problem

    fresh = RuleSet(list(rules.rules), dict(rules.lists), dict(rules.origin))  # no memo another test filled
    wl = advisor.load_workload(write(WL_70B_PCIE))

    def int002() -> list[tuple[int, list[str]]]:
        p = build_problem(wl, catalog, fresh, params_from(catalog), AS_OF)
        return [(c.count, [w["message"][:20] for w in c.warnings if w["code"] == "INT002"]) for c in p.candidates[0]]

    before = int002()
    assert before[:2] == [(16, ["this job on 16 x NVI"]), (24, [])]  # 16 needs tensor parallelism, 24 does not
    advisor.plan(wl, catalog=catalog, rules=fresh, as_of=AS_OF, explain=False)
    assert int002() == before
