"""Rendering fixes (issue 32 item 6), each read back from the output a user gets."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from click.testing import CliRunner
from conftest import AS_OF, EXAMPLES

import advisor
from advisor.cli import main
from advisor.durations import duration
from advisor.present.plan_text import plan_text
from advisor.present.tables import crossover_headline, frontier_text, serve_estimate_text


def _memo(example_plan, name: str, fmt: str = "md") -> str:
    _, plan = example_plan(name)
    return advisor.memo(plan, EXAMPLES / f"{name}.yaml", fmt=fmt, charts=False).text


def test_the_markdown_memo_lists_each_source_on_its_own_line(example_plan):
    text = _memo(example_plan, "article-datacenter")
    sources = text.split("## ", 99)[-1]  # the last section: Sources
    assert sources.startswith(tuple(f"{n}. Sources" for n in range(8, 14)))
    items = re.findall(r"^(\d+)\. ", sources.split("\n", 1)[1], re.M)
    assert [int(n) for n in items] == list(range(1, len(items) + 1)) and len(items) >= 10
    assert not re.search(r"\)\d+\. |>\d+\. ", sources)  # no item runs into the next


def test_a_memo_from_standard_input_quotes_it(tmp_path):
    data = (EXAMPLES / "article-office.yaml").read_bytes()
    out = tmp_path / "memo.md"
    result = CliRunner().invoke(main, ["memo", "-", "-o", str(out), "--as-of", str(AS_OF)], input=data)
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert "given in Python" not in text and "as read from standard input, verbatim" in text
    assert data.decode().strip().splitlines()[-1] in text and hashlib.sha256(data).hexdigest() in text


@pytest.mark.slow
def test_the_markdown_plan_names_every_column(example_plan):
    _, plan = example_plan("serve-70b-datacenter")
    text = plan_text(plan, "markdown")
    headers = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    tables = [h for h, nxt in zip(text.splitlines(), text.splitlines()[1:]) if nxt.startswith("|---")]
    assert tables and all("|  |" not in h and "| |" not in h for h in tables), tables
    assert any(h.startswith("| item | count | buy/rent |") for h in tables) and headers


def test_a_serving_estimate_states_only_the_limits_given():
    result = CliRunner().invoke(
        main,
        [
            "estimate",
            "--kind",
            "serve",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--precision",
            "fp8",
            "--input-len",
            "1000",
            "--output-len",
            "300",
            "--ttft-ms",
            "2000",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.stderr
    text = serve_estimate_text(json.loads(result.stdout))
    assert "None" not in text and "p99 TTFT <= 2000 ms" in text and "TPOT <=" not in text


def test_the_pipeline_bubble_is_a_share_of_the_step():
    """A bubble of 1.88 (1.88 s idle per second of work) is 65% of the step, never '188%'."""
    result = CliRunner().invoke(
        main,
        [
            "estimate",
            "--model",
            "gpt2-124m",
            "--gpu",
            "rtx-4090",
            "--count",
            "8",
            "--pipeline-parallel",
            "8",
            "--global-batch-tokens",
            "8K",
            "--format",
            "json",
        ],
    )
    e = json.loads(result.stdout)
    (note,) = [n for n in e["notes"] if "pipeline bubble" in n]
    share = int(re.search(r"(\d+)% of each step", note).group(1))
    bubble = e["layout"]["pipeline_bubble"]
    assert bubble > 0.5 and share == round(100 * bubble / (1 + bubble)) and share < 100


def test_frontier_rows_that_differ_read_differently():
    assert duration(50 / 3600) == "50 seconds" and duration(80 / 3600) == "1.3 minutes"
    assert duration(1 / 60) == "1 minute" and duration(0.5) == "30 minutes"
    f = {
        "name": "x",
        "as_of": "2026-12-01",
        "points": [
            {
                "makespan_days": d,
                "total_cost_usd": c,
                "purchase": [{"count": n, "gpu": "h100-sxm", "ownership": "rent"}],
            }
            for d, c, n in ((50 / 86400, 900.0, 8), (80 / 86400, 700.0, 4), (110 / 86400, 600.0, 2))
        ],
    }
    times = [row.strip().split("  ")[0] for row in frontier_text(f).splitlines()[3:]]
    assert len(set(times)) == 3, times
    # the cost is the plan's total_cost_usd, the present value it minimises: it read "total cost", where
    # `plan` now says "present value" and gives the cash beside it
    assert frontier_text(f).splitlines()[1].split() == ["time", "present", "value", "plan"]


def test_a_serving_only_plan_speaks_of_no_deadline_and_no_range_of_one_value(example_plan):
    _, plan = example_plan("serve-mixed-requests")
    for text in (plan_text(plan), plan_text(plan, full=False)):
        assert "Deadline" not in text and "deadline" not in text
        assert not re.search(r"(\$[\d,]+)–\1\b", text)
    memo = _memo(example_plan, "serve-mixed-requests")
    recommendation = memo.split("## 2.", 1)[0]
    assert "deadline" not in recommendation and not re.search(r"likely (\$[\d,]+) to \1\b", recommendation)


def test_robustness_never_calls_a_rental_plan_nothing(example_plan):
    """The draws compare the GPUs rented for serving too (they were left out: a rent-only serving plan
    was 'the choice (nothing)', holding in 100% of draws whatever they drew)."""
    _, plan = example_plan("serve-mixed-requests")
    rented = [f"{i['count']}× " for i in plan["purchase"] if i["ownership"] == "rent"]
    assert rented and "(nothing)" not in plan["robustness"]["message"]
    for text in (plan_text(plan), plan_text(plan, full=False), _memo(example_plan, "serve-mixed-requests")):
        assert "(nothing)" not in text
    assert all(r in plan["robustness"]["message"] for r in rented)
    assert plan["robustness"]["holds_share"] < 1  # the draws of rent and speed move a rental plan


def test_the_next_best_of_a_serving_mix_is_its_cheapest_single_type(example_plan):
    _, plan = example_plan("serve-mixed-requests")
    mix = plan["serving_mix"]
    forced = min(r["forced_cost_usd"] for r in plan["rejected"] if r["forced_cost_usd"] is not None)
    assert mix["best_single_cost_usd"] < forced  # the cheaper single-type plan is one of the mix's own types
    memo = _memo(example_plan, "serve-mixed-requests")
    name = advisor.load_catalog().gpus[mix["best_single_gpu"]].name
    assert f"The next-best option, the {name} alone, would cost ${mix['best_single_cost_usd']:,.0f}" in memo


def test_the_crossover_headline_names_only_a_real_overtaking(crossover_json):
    x = json.loads(crossover_json)
    assert crossover_headline(x) == (
        "rtx-4090 is the cheapest up to gpt2-1558m; from mpt-3b on, no plan of any allowed GPU meets the limits."
    )
    never = dict(x, points=[dict(p, cheapest="a100-80gb-pcie") for p in x["points"]], crossover_model="gpt2-124m")
    assert crossover_headline(never) == "rtx-4090 is not the cheapest at any size tried."
    taken = dict(
        x,
        points=[dict(p, cheapest="rtx-4090" if i < 5 else "h100-sxm") for i, p in enumerate(x["points"])],
        crossover_model=x["points"][5]["model"],
    )
    assert (
        crossover_headline(taken)
        == f"rtx-4090 stops being the cheapest at {x['points'][5]['model']}, where h100-sxm takes over."
    )


def test_an_existing_memo_is_replaced_only_with_force_said_as_the_caller_writes_it(tmp_path, example_plan):
    target = tmp_path / "memo.html"
    target.write_text("old")
    result = CliRunner().invoke(
        main, ["memo", str(EXAMPLES / "article-office.yaml"), "-o", str(target), "--as-of", str(AS_OF)]
    )
    assert result.exit_code == 2 and "pass --force to replace it" in result.stderr and "force=True" not in result.stderr
    _, plan = example_plan("article-office")
    memo = advisor.memo(plan, EXAMPLES / "article-office.yaml", fmt="html", charts=False)
    try:
        memo.write(target)
    except advisor.InputError as exc:
        assert "pass `force` to replace it" in str(exc) and "--force" not in str(exc)
    else:
        raise AssertionError("an existing file was replaced without force")


def test_a_tie_is_said_as_a_tie():
    """audit28: an exact tie (2 x 2,190 h x $0.33 = 3 x 2,190 h x $0.22) read "the NVIDIA RTX A6000 alone,
    would cost $1,480 ($0 more)" and "one GPU type (rtx-3090, rtx-a6000) is the cheapest": two types."""
    from advisor.explain.serving import _mix_words
    from advisor.present.words import more_or_less

    assert more_or_less(0.0) == more_or_less(0.004) == "no more" and more_or_less(-0.01) == "$0.01 less"
    assert more_or_less(3213, 15) == "$3,213 (+15%) more"
    tie = _mix_words(["rtx-3090", "rtx-a6000"], 0.0, 1480.24, "rtx-a6000")
    assert tie == (
        "the mix of rtx-3090, rtx-a6000 costs the same as the best plan on one GPU type (rtx-a6000, $1,480): "
        "no mix saves money, and either can be bought"
    )
    assert _mix_words(["rtx-a6000"], 0.0, 1480.24, "rtx-a6000").startswith("one GPU type (rtx-a6000) is the cheapest")
    assert "costs $120 (7.5%) less than" in _mix_words(["a", "b"], 120.0, 1600.0, "b")
    assert "costs $3 more than" in _mix_words(["a", "b"], -3.0, 1600.0, "b")


def test_a_bought_gpu_that_arrives_too_late_is_said_in_the_plural():
    """team-fleet's not-chosen table read "l4: [lead_time] bought NVIDIA L4 arrive too late"."""
    from advisor.contract.facts import Lever
    from advisor.present.constraint_words import limit_reason

    lv = Lever("lead_time", "lead_time", {}, 73.0, 45.0)
    assert limit_reason(lv, "NVIDIA L4")["message"].startswith(
        "bought NVIDIA L4 GPUs arrive too late (45 days or more to arrive and burn in) to finish the work"
    )


def test_an_option_that_ties_is_said_to_cost_the_same_in_the_memos_alternatives(example_plan):
    """review29 L6: an option costing the plan's own total read "Costs more" beside "costs no more than the
    recommendation"."""
    from conftest import EXAMPLES

    import advisor

    _, p = example_plan("serve-8b-office")
    (rtx5090,) = [r for r in p["rejected"] if r["gpu"] == "rtx-5090"]
    rtx5090["forced_cost_usd"] = p["total_cost_usd"]  # an exact tie
    text = advisor.memo(p, EXAMPLES / "serve-8b-office.yaml", fmt="md", charts=False).text
    (row,) = [line for line in text.splitlines() if line.startswith("| NVIDIA GeForce RTX 5090 |")]
    assert "| Costs the same |" in row and "costs no more than the recommendation" in row, row
