"""The catalog: coverage, sources, units, override semantics, the `advisor catalog` commands."""

from __future__ import annotations

import json

import pytest
from conftest import AS_OF, EXAMPLES

from advisor.data.catalog import load_catalog
from advisor.data.catalog_summary import unknown_figures
from advisor.errors import InputError
from advisor.flow import plan
from advisor.inputs.workload import load_workload

DESIGN_IDS = [
    "rtx-3090",
    "rtx-4090",
    "rtx-4090d",
    "rtx-5090",
    "rtx-a6000",
    "rtx-6000-ada",
    "l4",
    "l40s",
    "a10",
    "t4",
    "v100-32gb-sxm2",
    "a100-40gb-sxm",
    "a100-80gb-sxm",
    "a100-80gb-pcie",
    "a800-80gb-sxm",
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h800-sxm",
    "h20",
    "h200-sxm",
    "b200",
    "mi250x",
    "mi300x",
    "mi325x",
    "gaudi2",
    "gaudi3",
    "rx-7900-xtx",
]
CHINA_MARKET_IDS = ["ascend-910b", "ascend-910c"]  # issue 29 item 7: what a buyer in China can get
BITS = {"bf16": 16, "fp16": 16, "fp16_fp16acc": 16, "fp8": 8, "fp8_fp16acc": 8, "int8": 8, "fp4": 4}


def _sourced(node, path=""):
    """(path, source ids, value) of every mapping with a `source` list in a raw catalog entry."""
    if isinstance(node, dict):
        if "source" in node:
            yield path, node["source"], node.get("value", node.get("usd", node.get("usd_per_gpu_hour")))
        for k, v in node.items():
            if k != "source":
                yield from _sourced(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _sourced(v, f"{path}[{i}]")


# ----------------------------------------------------------------------------- coverage and sources


def test_the_28_design_ids_and_the_china_market_parts_and_nothing_else(catalog):
    assert sorted(catalog.gpus) == sorted(DESIGN_IDS + CHINA_MARKET_IDS)


def test_every_cited_source_resolves_to_a_url_or_a_documented_kind(catalog):
    entries = [g.model_dump() for g in catalog.gpus.values()] + [s.model_dump() for s in catalog.servers.values()]
    entries += [a.model_dump() for a in catalog.assumptions.values()] + [
        m.model_dump() for m in catalog.models.values()
    ]
    checked = 0
    for entry in entries:
        for path, ids, _ in _sourced(entry):
            for sid in ids:
                src = catalog.sources[sid]
                assert src.url.startswith("http") or src.kind in ("derived", "assumption"), (path, sid, src.url)
                checked += 1
    assert checked > 500


def test_every_known_value_cites_a_source_and_every_null_says_why(catalog):
    for g in catalog.gpus.values():
        for path, ids, value in _sourced(g.model_dump()):
            assert value is None or ids, (g.id, path)
    for u in unknown_figures(catalog):
        assert u["note"], u


def test_derived_figures_explain_their_formula(catalog):
    for g in catalog.gpus.values():
        for path, ids, value in _sourced(g.model_dump()):
            if "derived" in ids and value is not None:
                node = g.model_dump()
                for part in path.replace("]", "").replace("[", ".").split("."):
                    node = node[int(part)] if part.isdigit() else node[part]
                assert node.get("note"), (g.id, path)


# ----------------------------------------------------------------------------- units and orderings


@pytest.mark.parametrize("gid", DESIGN_IDS)
def test_units_and_orderings(catalog, gid):
    g = catalog.gpus[gid]
    assert g.memory_gb.value > 0
    assert g.memory_bandwidth_gbps.value is None or g.memory_bandwidth_gbps.value > 0
    assert g.tdp_w.value > 0
    assert {"bf16", "fp16", "fp8"} <= set(g.tensor_tflops) <= set(BITS)
    t = {k: f.value for k, f in g.tensor_tflops.items() if f.value is not None}
    assert all(v > 0 for v in t.values())
    for fast, slow in (("fp8", "bf16"), ("fp8", "fp16"), ("fp16_fp16acc", "fp16"), ("fp8_fp16acc", "fp8")):
        if fast in t and slow in t:
            assert t[fast] >= t[slow], (fast, slow)
    # vendor TFLOPs are far above any bandwidth/TFLOP mixup and below a single-GPU sanity bound
    assert all(1 <= v <= 20000 for v in t.values())
    assert g.memory_gb.value <= 512 and g.tdp_w.value <= 1500
    ic = g.interconnect
    assert ic.link_domain.value in (None, 1, 2, 8)
    if ic.link == "none":
        assert ic.link_gbps.value is None and ic.link_domain.value == 1
    else:
        assert ic.link_gbps.value > ic.pcie_gbps.value / 2
    assert {3: 32, 4: 64, 5: 128}[ic.pcie_gen] == ic.pcie_gbps.value


@pytest.mark.parametrize("gid", DESIGN_IDS)
def test_tpp_matches_tensor_rates_times_bit_length(catalog, gid):
    g = catalog.gpus[gid]
    best = max(f.value * BITS[k] for k, f in g.tensor_tflops.items() if f.value is not None)
    assert abs(g.tpp.value - best) <= 0.02 * best
    if g.performance_density.value is not None:
        assert (
            abs(g.performance_density.value - g.tpp.value / g.die_area_mm2.value) <= 0.01 * g.performance_density.value
        )


def test_rtx_4090_carries_both_the_fp32_and_fp16_accumulate_rates(catalog):
    t = catalog.gpus["rtx-4090"].tensor_tflops
    assert t["bf16"].value == t["fp16"].value == 165.2
    assert t["fp16_fp16acc"].value == 330.3
    assert catalog.gpus["rtx-4090"].dense_tflops("bf16") == 165.2


def test_classes_brands_and_link_domains(catalog):
    g = catalog.gpus
    assert {i for i in g if g[i].brand == "geforce"} == {"rtx-3090", "rtx-4090", "rtx-4090d", "rtx-5090"}
    assert g["rx-7900-xtx"].brand == "radeon" and g["rx-7900-xtx"].product_class == "consumer"
    assert {i for i in g if g[i].product_class == "workstation"} == {"rtx-a6000", "rtx-6000-ada"}
    assert {i for i in g if g[i].interconnect.link_domain.value == 2} == {
        "rtx-3090",
        "rtx-a6000",
        "a100-80gb-pcie",
        "h100-pcie",
        "h100-nvl",
    }
    for i in ("rtx-4090", "rtx-4090d", "rtx-5090"):
        assert g[i].interconnect.p2p.value is False
    for i in ("mi300x", "mi325x", "gaudi2", "gaudi3", "h100-sxm", "a100-80gb-sxm", "b200"):
        assert g[i].interconnect.link_domain.value == 8


def test_prices_are_dated_and_plausible(catalog):
    for g in catalog.gpus.values():
        p = g.prices.purchase
        if p is not None and p.usd is not None:
            assert p.as_of and 300 <= p.usd <= 60000, g.id
        for o in g.prices.rent:
            assert 0.05 <= o.usd_per_gpu_hour <= 20, (g.id, o.provider)
        r = g.rental
        assert r is None or (r.pricing == "on_demand" and r.as_of is not None)


def test_undated_offers_are_never_planned_on(catalog):
    nvl = catalog.gpus["h100-nvl"]
    assert nvl.prices.rent and all(o.as_of is None for o in nvl.prices.rent)
    assert nvl.rental is None and nvl.availability == "neither"


def test_availability(catalog):
    assert catalog.gpus["a10"].availability == "rent only"
    assert catalog.gpus["rx-7900-xtx"].availability == "buy only"
    assert catalog.gpus["h100-sxm"].availability == "buy and rent"
    assert catalog.gpus["gaudi2"].availability == "neither"


# ----------------------------------------------------------------------------- servers


def test_servers_cover_the_required_kinds(catalog):
    s = catalog.servers
    assert len(s) >= 6
    assert {x.kind for x in s.values()} == {"workstation", "pcie-server", "hgx", "oam-platform"}
    ws = [x for x in s.values() if x.kind == "workstation"]
    assert ws and all(x.gpu_slots == 4 and set(x.contexts) == {"office", "datacenter"} for x in ws)
    assert sorted(x.gpu_slots for x in s.values() if x.kind == "pcie-server") == [4, 8]
    assert {"a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x"} <= {
        g for x in s.values() if x.kind in ("hgx", "oam-platform") for g in x.compatible_gpus
    }
    for x in s.values():
        assert x.purchase.usd is not None or x.purchase.note
        if x.purchase.usd is not None:
            assert x.purchase.as_of and x.purchase.source


def test_servers_for(catalog):
    assert [x.id for x in catalog.servers_for("h100-sxm", "datacenter")] == ["hgx-h100-8gpu"]
    assert catalog.servers_for("h100-sxm", "office") == []
    assert [x.id for x in catalog.servers_for("rtx-4090", "office")] == ["workstation-4x-pcie"]
    ids = [x.id for x in catalog.servers_for("rtx-4090", "datacenter")]
    assert ids == sorted(ids) and {"pcie-server-4gpu", "pcie-server-8gpu", "workstation-4x-pcie"} == set(ids)
    assert catalog.servers_for("v100-32gb-sxm2", "datacenter") == []  # no SXM2 server: not a usable purchase
    with pytest.raises(InputError):
        catalog.servers_for("h100", "datacenter")


def test_derived_hgx_h100_platform_price(catalog):
    import datetime as dt

    s = catalog.servers["hgx-h100-8gpu"]
    # the split uses the H100 price in force on the day of the system price (2024-03-21)
    then = catalog.at(dt.date(2024, 3, 21)).gpus["h100-sxm"].purchase_usd
    assert s.purchase.usd == 296644 - 8 * then
    assert "derived" in s.purchase.source and "296,644" in s.purchase.note


# ----------------------------------------------------------------------------- override semantics


def test_override_price_replaces_the_whole_record(write):
    path = write(
        "gpus:\n  - id: h100-sxm\n    prices:\n      purchase: {usd: 21500, as_of: '2026-11-20', kind: quote}\n",
        "quote.yaml",
    )
    c = load_catalog(path)
    p = c.gpus["h100-sxm"].prices.purchase
    assert (p.usd, p.as_of, p.kind) == (21500, "2026-11-20", "quote")
    # the quote replaces the whole record: its source is the override file, not the built-in's
    assert p.source == ["override:quote.yaml"] and p.condition == "new" and p.usd_range is None
    assert c.sources["override:quote.yaml"].kind == "primary" and "quote.yaml" in c.sources["override:quote.yaml"].title
    assert c.gpus["h100-sxm"].prices.rent == load_catalog().gpus["h100-sxm"].prices.rent
    assert c.gpus["h100-sxm"].memory_gb.value == 80


def test_override_lead_time_replaces_the_whole_record(write, catalog):
    """A vendor's quoted lead time outside the built-in band was refused against a band the user
    never wrote (found by bench/fuzz.py); it replaces the record, band and source included."""
    built_in = catalog.gpus["h100-sxm"].lead_time
    assert built_in.high_days is not None and built_in.high_days < 300  # (what made the merge refuse it)
    path = write(
        "gpus:\n  - id: h100-sxm\n    lead_time: {days: 300, as_of: '2026-10-01', confidence: medium, "
        "source: [acme]}\nsources:\n  acme: {url: 'https://example.com/acme', title: ACME quote, kind: primary}\n",
        "lead.yaml",
    )
    lead = load_catalog(path).gpus["h100-sxm"].lead_time
    assert (lead.days, lead.low_days, lead.high_days, lead.source, lead.note) == (300, None, None, ["acme"], None)
    unknown = write("gpus:\n  - id: h100-sxm\n    lead_time: {days: null, note: no quote yet}\n", "unknown.yaml")
    lead = load_catalog(unknown).gpus["h100-sxm"].lead_time
    assert (lead.days, lead.as_of, lead.source, lead.note) == (None, None, [], "no quote yet")


def test_override_lists_replace(write):
    path = write(
        "gpus:\n  - id: h100-sxm\n    prices:\n      rent:\n"
        "        - {provider: ACME, usd_per_gpu_hour: 1.25, as_of: '2026-11-01', pricing: on_demand,"
        " source: [acme], gpus_per_node: 8, fabric: {kind: none, source: [acme]}, tier: neocloud}\n"
        "sources:\n  acme: {url: 'https://example.com/acme', title: ACME price list, kind: primary}\n",
        "rent.yaml",
    )
    c = load_catalog(path)
    assert [o.provider for o in c.gpus["h100-sxm"].prices.rent] == ["ACME"]
    assert c.gpus["h100-sxm"].rental.usd_per_gpu_hour == 1.25


def test_override_adds_a_gpu_and_a_server(write, catalog):
    entry = catalog.gpus["h100-sxm"].model_dump()
    entry.update(id="h100-sxm-custom", name="Our H100")
    server = catalog.servers["hgx-h100-8gpu"].model_dump()
    server.update(id="our-hgx", compatible_gpus=["h100-sxm-custom"])
    path = write(json.dumps({"gpus": [entry], "servers": [server]}), "add.yaml")
    c = load_catalog(path)
    assert "h100-sxm-custom" in c.gpus and len(c.gpus) == 31
    assert [x.id for x in c.servers_for("h100-sxm-custom", "datacenter")] == ["our-hgx"]


def test_override_server_price(write):
    path = write(
        "servers:\n  - id: pcie-server-8gpu\n    purchase: {usd: 9000, as_of: '2026-10', kind: quote,"
        " source: [q]}\nsources:\n  q: {url: 'https://example.com/q', kind: primary}\n",
        "srv.yaml",
    )
    c = load_catalog(path)
    assert c.servers["pcie-server-8gpu"].purchase.usd == 9000
    assert c.servers["pcie-server-8gpu"].gpu_slots == 8


@pytest.mark.parametrize(
    "text, field",
    [
        ("gpus:\n  - id: h100-sxm\n    memory_gb: {value: eighty}\n", "memory_gb.value"),
        ("gpus:\n  - id: h100-sxm\n    prices: {purchase: {usd: 9000, as_of: null}}\n", "prices.purchase"),
        ("gpus:\n  - id: h100-sxm\n    tdp_w: {value: 700, source: [nowhere]}\n", "tdp_w.source"),
        ("servers:\n  - id: hgx-h100-8gpu\n    compatible_gpus: [rtx-4090]\n", "compatible_gpus[0]"),
        ("servers:\n  - id: oam-8gpu\n    gpu_slots: 0\n", "gpu_slots"),
        (
            "gpus:\n  - id: h100-sxm\n    tdp_w: {value: -700, source: [nv_h100_page_copies]}\n",
            "field tdp_w.value: Input should be greater than or equal to 0 (given -700)",
        ),
        (
            "servers:\n  - id: oam-8gpu\n    power_overhead_w: {value: -1, source: [derived], note: x}\n",
            "field power_overhead_w.value: Input should be greater than or equal to 0 (given -1)",
        ),
        ("gpu:\n  - id: h100-sxm\n", "gpu"),
    ],
)
def test_override_errors_name_file_entry_and_field(write, text, field):
    path = write(text, "broken.yaml")
    with pytest.raises(InputError) as exc:
        load_catalog(path)
    msg = str(exc.value)
    assert str(path) in msg and field in msg


# ----------------------------------------------------------------------------- a negotiated price changes a plan

QUOTES = """
gpus:
  - id: h100-sxm
    prices:
      purchase: {usd: 5000, as_of: "2026-11-20", kind: quote, source: [acme_quote], note: "negotiated"}
servers:
  - id: hgx-h100-8gpu
    purchase: {usd: 10000, as_of: "2026-11-20", kind: quote, source: [acme_quote], note: "negotiated"}
sources:
  acme_quote: {url: "https://example.com/quotes/4711", title: "ACME quote 4711", kind: quote}
"""


def test_negotiated_h100_quote_changes_the_datacenter_plan(write, rules):
    workload = load_workload(EXAMPLES / "article-datacenter.yaml")  # with the hardware in hand (no lead time)
    workload = workload.model_copy(update={"deployment": workload.deployment.model_copy(update={"lead_time_days": 0})})
    # purchase, servers, costs, sources and warnings only: no explanation is computed
    before = plan(workload, rules=rules, as_of=AS_OF, explain=False)
    after = plan(workload, catalog=load_catalog(write(QUOTES, "quotes.yaml")), rules=rules, as_of=AS_OF, explain=False)
    # SXM modules come eight to an HGX board: the board and its eight GPUs are the purchase
    assert [(p["gpu"], p["count"], p["ownership"], p["unit_price_usd"]) for p in before["purchase"]] == [
        ("a100-80gb-sxm", 8, "buy", load_catalog().gpus["a100-80gb-sxm"].purchase_usd)
    ]
    assert [(s["server"], s["count"]) for s in before["servers"]] == [("hgx-a100-8gpu", 1)]
    assert [(p["gpu"], p["count"], p["ownership"], p["unit_price_usd"]) for p in after["purchase"]] == [
        ("h100-sxm", 8, "buy", 5000)
    ]
    assert [(s["server"], s["count"], s["unit_price_usd"]) for s in after["servers"]] == [("hgx-h100-8gpu", 1, 10000)]
    assert after["cost_breakdown"]["purchase_usd"] == 8 * 5000  # exact: the rounding cents go elsewhere
    assert after["cost_breakdown"]["servers_usd"] == 10000
    assert after["total_cost_usd"] < before["total_cost_usd"]
    assert any(s["id"] == "acme_quote" and s["as_of"] == "2026-11-20" for s in after["sources"])
    assert not any(w.get("code") == "stale-price" and "H100" in w["message"] for w in after["warnings"])


def test_plan_says_rent_only(write, run_json):
    path = write(
        "deployment: {context: datacenter, ownership: any, lead_time_days: 0}\nmodel: gpt2-124m\ntokens: 1B\n"
        "deadline: 7d\ngpus: {allow: [a10]}\n"
    )
    _, p = run_json("plan", path, "--as-of", AS_OF)
    assert p["purchase"][0]["ownership"] == "rent"
    assert any(w.get("code") == "rent-only" and "A10" in w["message"] for w in p["warnings"])


def test_plan_names_a_gpu_it_cannot_buy(write, run_json):
    path = write(
        "deployment: {context: datacenter, ownership: buy, lead_time_days: 0}\nmodel: gpt2-124m\ntokens: 1B\n"
        "deadline: 7d\ngpus: {allow: [a10, h100-sxm]}\n"
    )
    _, p = run_json("plan", path, "--as-of", AS_OF)
    reasons = {r["gpu"]: r["reasons"] for r in p["rejected"]}
    assert any(x.get("code") == "no-purchase-price" for x in reasons["a10"])


# ----------------------------------------------------------------------------- advisor catalog ...


def test_catalog_list_table_and_json(run):
    code, out, _ = run("catalog", "list", "--as-of", AS_OF)
    assert code == 0
    for gid in DESIGN_IDS:
        assert gid in out
    assert "STALE" in out and "rent only" in out and "hgx-h100-8gpu" in out
    code, out, _ = run("catalog", "list", "--format", "json", "--as-of", AS_OF)
    data = json.loads(out)
    assert code == 0 and len(data["gpus"]) == 30 and data["servers"]
    h100 = next(g for g in data["gpus"] if g["id"] == "h100-sxm")
    # ages by hand from AS_OF = 2026-12-01: 2026-06 -> 6 months; 2020-09-02 -> 6 * 12 + 3 = 75 months
    assert h100["purchase"] == {"usd": 30000, "as_of": "2026-06", "age_months": 6, "stale": False}
    rtx3090 = next(g for g in data["gpus"] if g["id"] == "rtx-3090")
    assert rtx3090["purchase"] == {"usd": 1499, "as_of": "2020-09-02", "age_months": 75, "stale": True}
    assert h100["rent"]["age_months"] == 3 and h100["rent"]["stale"] is False


def test_catalog_show_prints_every_figure_with_its_url(run):
    code, out, _ = run("catalog", "show", "rtx-4090", "--as-of", AS_OF)
    assert code == 0
    assert "165.2" in out and "330.3" in out and "fp16_fp16acc" in out
    assert "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf" in out
    assert "37 mo STALE" in out and "workstation-4x-pcie" in out  # street price of 2023-11-23


def test_catalog_show_json_resolves_sources_and_ages(run):
    code, out, _ = run("catalog", "show", "h100-sxm", "--format", "json", "--as-of", AS_OF)
    rec = json.loads(out)
    assert code == 0 and rec["availability"] == "buy and rent" and rec["servers"]["datacenter"] == ["hgx-h100-8gpu"]
    for f in rec["figures"]:
        for s in f["sources"]:
            assert s["url"].startswith("http") or s["kind"] in ("derived", "assumption")
    assert rec["prices"]["purchase"]["age_months"] == 6 and not rec["prices"]["purchase"]["stale"]
    older = {p["as_of"]: p for p in rec["prices"]["other_purchases"]}
    assert older["2023-08"]["age_months"] == 40 and older["2023-08"]["stale"]  # 3 * 12 + 4 months
    assert sum(o["used_for_plans"] for o in rec["prices"]["rent"]) == 1
    # the size each rate is evidenced at: the published largest order, what its sources show, else one node
    rent = {o["provider"]: o for o in rec["prices"]["rent"]}
    assert rent["SF Compute (H100 clusters, market average)"]["evidenced_gpus"] == 1000
    assert rent["AWS EC2 Capacity Blocks p5.48xlarge (8x H100), US East (N. Virginia)"]["evidenced_gpus"] == 512
    assert rent["Nebius (8x H100 SXM VM), eu-north1"]["evidenced_gpus"] == 8
    code, out, _ = run("catalog", "show", "h100-sxm", "--as-of", AS_OF)
    assert "order: up to 1,000 GPUs in one order the sources of SF Compute" in out.replace("\n", " ")


def test_catalog_show_says_the_most_gpus_held_at_once_each_rate_is_evidenced_at(run):
    """`catalog show` printed each offer's largest evidenced order but not the limit over all the orders
    held at once on its provider, which plans grade by too (RentalOffer.provider_evidenced)."""
    code, out, _ = run("catalog", "show", "h100-sxm", "--format", "json", "--as-of", AS_OF)
    assert code == 0
    rent = {o["provider"]: o for o in json.loads(out)["prices"]["rent"]}
    aws = "AWS EC2 Capacity Blocks p5.48xlarge (8x H100), US East (N. Virginia)"
    assert (
        rent["SF Compute (H100 clusters, market average)"]["evidenced_at_once_gpus"] == 1000
    )  # the largest order its sources show
    assert rent[aws]["evidenced_gpus"] == 512 and rent[aws]["evidenced_at_once_gpus"] == 2048  # published
    assert rent[aws]["evidenced_at_once_where"] == f"per provider {aws} publishes"
    nebius = rent["Nebius (8x H100 SXM VM), eu-north1"]
    assert nebius["evidenced_at_once_gpus"] is None and nebius["evidenced_at_once_where"] is None
    code, out, _ = run("catalog", "show", "h100-sxm", "--as-of", AS_OF)
    text = " ".join(out.split())
    assert f"at once: up to 2,048 GPUs over all orders held at once (per provider {aws} publishes)" in text
    assert "at once: no limit over several orders published or seen" in text


@pytest.mark.parametrize(
    "gid, words",
    [
        ("a10", "rent only"),
        ("rx-7900-xtx", "buy only"),
        ("gaudi2", "neither"),
        ("v100-32gb-sxm2", "cannot be bought as a usable unit"),
        ("mi300x", "whose price is unknown"),
        ("b200", "bought GPUs go into hgx-b200-8gpu"),
    ],
)
def test_catalog_show_says_how_a_gpu_can_be_had(run, gid, words):
    code, out, _ = run("catalog", "show", gid, "--as-of", AS_OF)
    assert code == 0 and words in out


def test_catalog_show_server(run):
    code, out, _ = run("catalog", "show", "hgx-h100-8gpu", "--as-of", AS_OF)
    assert code == 0 and "$96,644" in out and "h200-sxm" in out and "docs.nvidia.com" in out


def test_catalog_show_unknown_id_exits_2(run):
    code, _, err = run("catalog", "show", "h100sxm")
    assert code == 2 and "did you mean h100-sxm" in err


def test_catalog_show_honours_override(run, write):
    path = write(QUOTES, "quotes.yaml")
    code, out, _ = run("catalog", "show", "h100-sxm", "--catalog", path, "--as-of", AS_OF)
    assert code == 0 and "$5,000 quote" in out and "https://example.com/quotes/4711" in out


def test_catalog_validate_builtin(run):
    code, out, _ = run("catalog", "validate")
    assert code == 0 and "built-in catalog: valid" in out and "30 GPUs" in out
    code, out, _ = run("catalog", "validate", "--format", "json")
    assert code == 0 and json.loads(out)["gpus"] == 30


def test_catalog_validate_file(run, write):
    path = write(QUOTES, "quotes.yaml")
    code, out, _ = run("catalog", "validate", path)
    assert code == 0 and f"{path}: valid" in out


def test_catalog_validate_broken_file_exits_2_naming_file_entry_and_field(run, write):
    path = write(
        "gpus:\n  - id: h100-sxm\n    prices:\n      purchase: {usd: 21000, as_of: '2026-13'}\n", "broken.yaml"
    )
    code, out, err = run("catalog", "validate", path)
    assert code == 2 and out == ""
    assert str(path) in err and "'h100-sxm'" in err and "prices.purchase.as_of" in err
    assert "Traceback" not in err


def test_catalog_validate_errors(run, write, tmp_path):
    code, _, err = run("catalog", "validate", tmp_path / "missing.yaml")
    assert code == 2 and "no such catalog file" in err
    code, _, err = run("catalog", "validate", write("- just a list\n", "list.yaml"))
    assert code == 2 and "mapping" in err
    a, b = write(QUOTES, "a.yaml"), write(QUOTES, "b.yaml")
    code, _, err = run("catalog", "validate", a, "--catalog", b)
    assert code == 2 and "not both" in err


def test_every_command_takes_catalog(run, write):
    bad = write("gpus:\n  - id: h100-sxm\n    memory_gb: {value: null}\n", "bad.yaml")
    for args in (
        ("catalog", "list"),
        ("catalog", "show", "h100-sxm"),
        ("plan", EXAMPLES / "article-office.yaml"),
        ("estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm"),
    ):
        code, _, err = run(*args, "--catalog", bad)
        assert code == 2 and "memory_gb" in err, args


def test_a_price_band_must_contain_its_price(run, write, catalog):
    """A --catalog purchase of $20,000 with usd_range [1, 2] passed validation, and the draws took the band
    as the price's P10-P90: the plan's P10 fell to half its point estimate. A band beside its price is
    refused (exit 2, naming the file, the GPU and the field); every built-in band contains its price."""
    bad = write(
        'gpus:\n  - id: h100-sxm\n    prices:\n      purchase: {usd: 20000, as_of: "2026-11-20", usd_range: [1, 2]}\n',
        "override.yaml",
    )
    code, out, err = run("catalog", "validate", bad)
    assert code == 2 and not out
    assert (
        f"{bad}:4:" in err and "GPU 'h100-sxm', field prices.purchase: usd_range [1, 2] must contain usd 20000" in err
    )
    priced = [p for g in catalog.gpus.values() if (p := g.prices.purchase) is not None and p.usd and p.usd_range]
    assert priced and all(p.usd_range[0] <= p.usd <= p.usd_range[1] for p in priced)


@pytest.mark.parametrize("when", ["banana", "2019-13"])
def test_a_first_new_date_in_an_override_is_a_date(run, write, when):
    """review28: `prices.first_new_as_of` (what a used part of unverified launch is aged from) was read
    unchecked from a --catalog file: "banana" or "2019-13" ended in "internal error: ValueError" (exit 1)."""
    bad = write(f'gpus:\n  - id: a100-80gb-sxm\n    prices:\n      first_new_as_of: "{when}"\n', "override.yaml")
    code, out, err = run("plan", EXAMPLES / "article-datacenter.yaml", "--catalog", bad, "--as-of", AS_OF)
    assert code == 2 and not out
    assert f"{bad}:4:" in err and "GPU 'a100-80gb-sxm', field prices.first_new_as_of:" in err, err
