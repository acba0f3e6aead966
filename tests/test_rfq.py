"""`advisor rfq` and advisor.rfq(plan): the plan as a request for quotation, the inputs worth
confirming first, each item with its specification, quantity, term and latest date (recomputed here
from the plan's own figures), the rule notes it carries; output rules as for `advisor memo`."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import os
import re

import pytest
import yaml
from conftest import AS_OF, EXAMPLES
from test_cash_adds_up import CLUSTERS
from test_decision import KNIFE

import advisor
from advisor.flow import plan
from advisor.inputs.workload import parse_workload


@pytest.fixture(scope="module")
def knife(catalog, rules):
    return plan(
        parse_workload({**KNIFE, "name": "8x H100", "decision": "point"}), catalog=catalog, rules=rules, as_of=AS_OF
    )


def table(doc) -> list[dict]:
    return list(csv.DictReader(io.StringIO(doc.text)))


def test_the_inputs_to_confirm_come_first_in_evpi_order(knife):
    rows = table(advisor.rfq(knife, fmt="csv"))
    verify = knife["decision"]["verify"]
    first = [r for r in rows if r["section"] == "verify first"]
    assert [r["item"] for r in first] == [v["input"] for v in verify[:3]]
    assert rows[: len(first)] == first and first[0]["item"] == "rental_rate:h100-sxm"
    assert "get a firm quote for 8\u00d7 NVIDIA H100 SXM5 80GB rental" in first[0]["notes"]
    text = advisor.rfq(knife).text
    assert text.index("## Confirm first") < text.index("## Items")
    assert "rental\\_rate:h100-sxm" in text and "$2.69/GPU-hour" in text


def test_each_item_has_its_specification_quantity_term_and_latest_date(knife, catalog):
    (item,) = [r for r in table(advisor.rfq(knife, fmt="csv")) if r["section"] == "quote" and r["gpu"]]
    (job,) = knife["jobs"]
    purchase = knife["purchase"][0]
    assert item["gpu"] == "h100-sxm" and int(item["quantity"]) == purchase["count"] == 8
    g = catalog.gpus["h100-sxm"]
    assert g.name in item["specification"] and "80 GB memory" in item["specification"]
    assert "NVLink 900 GB/s" in item["specification"]
    assert f"{purchase['gpu_hours']:,.0f} GPU-hours" in item["term"]
    # the latest start: the plan's date + the deadline - the run time at the workload's confidence
    latest = AS_OF + dt.timedelta(days=int(KNIFE["deadline"].removesuffix("d")) - job["wall_days_planned"])
    assert item["latest_date"] == latest.isoformat()
    assert f"runs {job['wall_days_planned']:.1f} days at the workload's confidence" in item["date_basis"]


def test_a_fabric_the_provider_does_not_publish_is_asked_at_the_bandwidth_the_estimate_assumes(catalog, rules):
    """4,096 H100s at SF Compute span 512 nodes joined by InfiniBand of unpublished bandwidth: the item
    asks for the 8 x 50 GB/s = 400 Gb/s per GPU the speed rests on (estimator.yaml), not just
    'fabric infiniband'."""
    doc = {
        "name": "405B",
        "deployment": {"context": "cloud", "ownership": "rent"},
        "jobs": [{"name": "pt", "kind": "pretrain", "model": "llama-3.1-405b", "tokens": "2T", "deadline": "120d"}],
        "decision": "point",
    }
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF)
    (bought,) = p["purchase"]
    assert bought["fabric_gbps_per_gpu"] is None and bought["count"] > bought["gpus_per_node"]
    gbps = 8 * catalog.estimator["network_gbps_per_gpu"]["hopper"]
    (item,) = [r for r in table(advisor.rfq(p, fmt="csv")) if r["section"] == "quote" and r["gpu"]]
    assert f"the speed estimate assumes {gbps:g} Gb/s per GPU between nodes; ask the provider" in item["notes"]
    assert item["notes"].count("the speed estimate assumes") == 1  # said once
    # and 4,096 GPUs are more than the 1,000 SF Compute's docs show on sale in one order: a quote is needed
    assert item["notes"].count(f"h100-sxm at {bought['provider']}: quote needed: {bought['count']:,} GPUs") == 1
    # what the provider's offer of this GPU leaves unpublished reaches this item, not another GPU's
    # of the same provider nor another provider whose name begins the same
    at, other = f"h100-sxm at {bought['provider']}:", f"h200-sxm at {bought['provider']}:"
    workload = p.workload
    p = p.to_dict()
    p["warnings"] += [
        {"rule": None, "code": "quote-needed", "message": f"{at} quote needed: 9,999 GPUs exceed ..."},
        {"rule": None, "code": "node-size", "message": f"{other} no node size is published"},
        {"rule": None, "code": "fabric", "message": f"h100-sxm at {bought['provider'][:-1]}: a twin"},
    ]
    (item,) = [r for r in table(advisor.rfq(p, workload, fmt="csv")) if r["section"] == "quote" and r["gpu"]]
    assert "quote needed: 9,999 GPUs" in item["notes"]
    assert "no node size" not in item["notes"] and "a twin" not in item["notes"]


@pytest.mark.parametrize(
    ("hours", "words"),
    [
        (1, "shortest term 1 hour"),
        (24, "shortest term 24 hours"),
        (336, "shortest term 14 days"),
        (8760, "12-month term"),
        (3 * 8760, "36-month term"),
    ],
)
def test_term_phrases(hours, words):
    from advisor.present.rfq import term_phrase

    assert term_phrase(hours / 730) == words


def test_rule_notes_reach_the_item_they_name(catalog, rules):
    doc = yaml.safe_load((EXAMPLES / "serve-mixed-requests.yaml").read_text())
    p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain="alternatives")
    ruled = [w for w in p["warnings"] if w["rule"] == "LIC002"]
    assert ruled
    rows = [r for r in table(advisor.rfq(p, fmt="csv")) if r["section"] == "quote" and r["gpu"] == "rtx-4090"]
    assert rows and "[LIC002]" in rows[0]["notes"]
    assert "## Export and licence notes" in advisor.rfq(p).text


def test_same_input_same_bytes(knife):
    assert advisor.rfq(knife).content == advisor.rfq(knife).content
    assert advisor.rfq(knife, fmt="csv").content == advisor.rfq(knife, fmt="csv").content


def test_cli_writes_refuses_and_replaces_like_memo(run, write, tmp_path, plan_once):
    """(plan_once: the three RFQs written are of one plan, planned once; what is checked is the writing)"""
    f = write(yaml.safe_dump({**KNIFE, "decision": "point"}))
    out = tmp_path / "rfq.md"
    code, stdout, _ = run("rfq", f, "-o", out, "--as-of", AS_OF.isoformat())
    assert code == 0 and out.read_text().startswith("# Request for quotation") and "wrote" in stdout
    code, _, err = run("rfq", f, "-o", out, "--as-of", AS_OF.isoformat())
    assert code == 2 and "already exists" in err and "--force" in err
    link = tmp_path / "link.csv"
    os.symlink(tmp_path / "nowhere.csv", link)
    code, _, err = run("rfq", f, "-o", link, "--as-of", AS_OF.isoformat())
    assert code == 2 and "link" in err and not (tmp_path / "nowhere.csv").exists()
    code, _, _ = run("rfq", f, "-o", out, "--force", "--as-of", AS_OF.isoformat(), "--format", "csv")
    assert code == 0 and out.read_text().startswith("section,item,")
    code, _, err = run("rfq", f, "-o", tmp_path / "rfq.txt")
    assert code == 2 and ".md or .csv" in err
    code, _, err = run("rfq", f, "-o", "-")
    assert code == 2 and "--format" in err
    code, stdout, _ = run("rfq", f, "-o", "-", "--format", "csv", "--as-of", AS_OF.isoformat())
    assert code == 0 and stdout.startswith("section,item,")


def test_cli_no_plan_exits_3_and_says_so(run, write, tmp_path):
    f = write(
        "deployment: {context: office, ownership: buy}\nmodel: mpt-7b\ntokens: 20B\ndeadline: 1d\n"
        "gpus: {allow: [rtx-4090], max: 1}\n"
    )
    out = tmp_path / "rfq.md"
    code, _, err = run("rfq", f, "-o", out, "--as-of", AS_OF.isoformat())
    assert code == 3 and "no plan" in err and "nothing to quote" in out.read_text()


def test_library_plans_a_workload_and_refuses_bad_options(tmp_path):
    doc = advisor.rfq(str(EXAMPLES / "article-datacenter.yaml"), as_of=AS_OF, fmt="csv")
    assert doc.format == "csv" and "a100-80gb-sxm" in doc.text
    path = doc.write(tmp_path / "rfq.csv")
    assert path.read_bytes() == doc.content
    with pytest.raises(advisor.InputError, match="already exists"):
        doc.write(tmp_path / "rfq.csv")
    with pytest.raises(advisor.InputError, match="fmt"):
        advisor.rfq(str(EXAMPLES / "article-datacenter.yaml"), fmt="pdf")


BUY_64 = CLUSTERS["buy-64-a100"]  # review 8's bought cluster, small


def _days(date: str) -> int:
    return (dt.date.fromisoformat(date) - AS_OF).days


def _order_day(basis: str) -> int:
    found = re.search(r"order by (\d{4}-\d\d-\d\d)", basis)
    assert found, basis
    return _days(found.group(1))


def test_the_order_by_date_keeps_the_deadline_after_lead_time_and_burn_in(plan_json, write, catalog):
    """Review 8, defect 6: the order-by date was the running-by day less the lead time alone, so an
    order on it (day 112.5) was ready on day 185.5 (70-day lead, 72-hour burn-in) and the 17.5-day run
    ended on day 203, past its 200-day deadline. Ordered on the printed date, lead time + burn-in
    (ready_days) + the run at the workload's confidence keep the deadline; the servers arrive with the
    GPUs and are ordered by their own lead time (catalog servers[].lead_time) before the burn-in."""
    path = write(BUY_64)
    code, p = plan_json(path)
    assert code == 0
    (gpu,) = [i for i in p["purchase"] if i["ownership"] == "buy"]
    (job,) = p["jobs"]
    burn = catalog.economics.burn_in["hours"].value / 24
    assert gpu["ready_days"] == pytest.approx(gpu["lead_time_days"] + burn) and burn > 0
    rows = table(advisor.rfq(p, path, fmt="csv"))
    (item,) = [r for r in rows if r["item"] == "a100-80gb-sxm (buy)"]
    order = _order_day(item["date_basis"])
    assert order + gpu["ready_days"] + job["wall_days_planned"] <= 200
    assert order == math.floor(200 - job["wall_days_planned"] - gpu["ready_days"])  # the latest such day
    assert _days(item["latest_date"]) == math.floor(200 - job["wall_days_planned"])
    (server,) = p["servers"]
    (srow,) = [r for r in rows if r["item"] == server["server"]]
    assert srow["latest_date"] == item["latest_date"]  # the servers work when the GPUs they hold do
    lead = catalog.servers[server["server"]].lead_time
    assert lead is not None and lead.days is not None
    assert f"{lead.days:g}-day lead time (catalog servers[{server['server']}].lead_time" in srow["date_basis"]
    assert _order_day(srow["date_basis"]) == math.floor(200 - job["wall_days_planned"] - burn - lead.days)


def test_bought_serving_gpus_are_ordered_on_the_plans_date_and_a_days_delay_is_priced(plan_json, write):
    """Review 8, defect 6: bought serving GPUs had 'no deadline given', yet the bridge the plan rents
    is sized for an order placed on the plan's date: they are ordered then, serve from day ready_days,
    and each day later keeps the bridge rented a day longer (its billed GPUs x rate x 24 h)."""
    from test_serving_bridge import BOUGHT, _doc

    path = write(_doc())
    code, p = plan_json(path, as_of=BOUGHT)
    assert code == 0
    (gpu,) = [i for i in p["purchase"] if i["ownership"] == "buy"]
    (bridge,) = [i for i in p["purchase"] if i.get("use") == "bridge"]
    rows = table(advisor.rfq(p, path, fmt="csv"))
    (item,) = [r for r in rows if r["item"] == f"{gpu['gpu']} (buy)"]
    ready = BOUGHT + dt.timedelta(days=math.floor(gpu["ready_days"]))
    assert item["latest_date"] == ready.isoformat()
    assert f"order by {BOUGHT.isoformat()}" in item["date_basis"]
    per_day = bridge["billed_gpus"] * bridge["unit_price_usd"] * 24
    assert f"about ${per_day:,.0f} a day" in item["date_basis"]
    for server in p["servers"]:
        (srow,) = [r for r in rows if r["item"] == server["server"]]
        assert srow["latest_date"] == item["latest_date"] and "order by" in srow["date_basis"]


def test_a_quoted_lead_time_covers_delivery_and_burn_in_and_the_servers(plan_json, write):
    """deployment.lead_time_days is the vendor's quote for delivery and burn-in (ready_days = the
    quote): the order-by date is the running-by day less it, and the servers are ordered with the GPUs."""
    path = write(BUY_64.replace("horizon_months: 36}", "horizon_months: 36, lead_time_days: 30}"))
    code, p = plan_json(path)
    assert code == 0
    (gpu,) = [i for i in p["purchase"] if i["ownership"] == "buy"]
    (job,) = p["jobs"]
    assert gpu["ready_days"] == 30
    rows = table(advisor.rfq(p, path, fmt="csv"))
    (item,) = [r for r in rows if r["item"] == "a100-80gb-sxm (buy)"]
    assert _order_day(item["date_basis"]) == math.floor(200 - job["wall_days_planned"] - 30)
    assert "deployment.lead_time_days" in item["date_basis"]
    (srow,) = [r for r in rows if r["item"] == p["servers"][0]["server"]]
    assert srow["latest_date"] == item["latest_date"] and "deployment.lead_time_days" in srow["date_basis"]


def test_a_providers_limit_per_customer_is_checked_on_all_the_gpus_rented_from_it_at_once(run, write, tmp_path):
    """Five 512-GPU copies at once on AWS capacity blocks: each order passed the 512 per order, and the RFQ
    asked AWS for 2,560 GPUs at the list rate with no word of its 2,048 per provider (review 9)."""
    import csv
    import json

    from advisor.data.catalog import load_catalog

    path = write(
        "deployment: {context: datacenter, ownership: rent, rent_kinds: [capacity_block], horizon_months: 12}\n"
        "jobs:\n  - {name: pre, model: llama-3-8b, tokens: 3.5T, deadline: 14d, repeat: 5}\n"
        "gpus: {allow: [h100-sxm]}\n"
    )
    code, out, err = run("plan", path, "--format", "json", "--as-of", "2026-12-06")
    assert code == 0, err
    plan = json.loads(out)
    (item,) = plan["purchase"]
    offer = next(o for o in load_catalog().gpus["h100-sxm"].rentals("capacity_block") if o.provider == item["provider"])
    assert item["billed_gpus"] > offer.max_gpus_per_provider
    head = (
        f"h100-sxm at {item['provider']}: quote needed: {item['billed_gpus']:,} GPUs exceed the "
        f"{offer.max_gpus_per_provider:,} per provider"
    )
    assert any(w["code"] == "quote-needed" and w["message"].startswith(head) for w in plan["warnings"])
    rfq = tmp_path / "rfq.csv"
    code, _, err = run("rfq", path, "-o", rfq, "--as-of", "2026-12-06")
    assert code == 0, err
    (row,) = [r for r in csv.DictReader(rfq.open(encoding="utf-8")) if r["item"] == "h100-sxm (rent)"]
    assert head in row["notes"]


def test_a_bought_item_says_when_it_must_be_delivered_before_its_burn_in(example_plan):
    """The article's RTX 4090 must be running by day 12.7 (due day 14, 1.3 days of work at P80); it
    burns in for 3 days after delivery, so a vendor must deliver by day 9.7 (2026-12-10), not by the
    'latest date' (2026-12-13), which the RFQ called 'delivered and running by': delivered then, the job
    would end on day 17, past its deadline."""
    _, p = example_plan("article-office")
    rows = table(advisor.rfq(p, EXAMPLES / "article-office.yaml", fmt="csv"))
    (item,) = [r for r in rows if r["item"] == "rtx-4090 (buy)"]
    (gpu,) = p["purchase"]
    burn = gpu["ready_days"] - gpu["lead_time_days"]
    found = re.search(r"delivered by (\d{4}-\d\d-\d\d)", item["date_basis"])
    assert found and "delivered and running" not in item["date_basis"], item["date_basis"]
    assert _days(found.group(1)) + burn <= _days(item["latest_date"]) + 1 and burn == 3
    (job,) = p["jobs"]
    assert _days(found.group(1)) + burn + job["wall_days_planned"] <= 14
    assert _days(found.group(1)) == math.floor(14 - job["wall_days_planned"] - burn)


def test_a_date_past_the_calendars_end_is_an_input_error_not_an_internal_one():
    """`advisor rfq ... --as-of 9999-12-31` was exit 1 (OverflowError: date value out of range)."""
    from types import SimpleNamespace

    from advisor.present.rfq_dates import on_day

    assert on_day(SimpleNamespace(as_of="2026-12-01"), 12.7) == dt.date(2026, 12, 13)  # type: ignore[arg-type]
    with pytest.raises(advisor.InputError, match="--as-of 9999-12-31"):
        on_day(SimpleNamespace(as_of="9999-12-31"), 46.9)  # type: ignore[arg-type]


def test_one_server_arrives_with_the_gpu_it_holds(example_plan):
    """review29 L4: article-office's one workstation read "arrive with the rtx-4090 they hold"."""
    from conftest import EXAMPLES

    _, p = example_plan("article-office")
    rows = table(advisor.rfq(p, EXAMPLES / "article-office.yaml", fmt="csv"))
    (srow,) = [r for r in rows if r["item"] == p["servers"][0]["server"]]
    assert p["servers"][0]["count"] == 1 and "arrive with the rtx-4090 it holds" in srow["date_basis"], srow
