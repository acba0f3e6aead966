"""present/ renders a typed Plan and its PlanContext (issue 28 item 3): it never reads a solver
Problem and never subscripts a plan's JSON value."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import AS_OF, EXAMPLES

PRESENT = Path(__file__).resolve().parent.parent / "advisor" / "present"


def _plan_subscripts(tree: ast.AST, names: tuple[str, ...]) -> list[int]:
    """Lines where one of `names` is subscripted with a string or asked `.get(...)`."""
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in names
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            out.append(node.lineno)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names
        ):
            out.append(node.lineno)
    return out


def test_present_reads_typed_fields_and_no_solver_problem():
    for path in sorted(PRESENT.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args + n.kwonlyargs
        }
        assert "problem" not in names, f"{path.name} reads a solver Problem; give it a PlanContext"
        assert "getattr(problem" not in text, path.name
        plan_names = (
            ("plan", "p") if path.name in ("plan_text.py", "plan_sections.py", "plan_summary.py") else ("plan",)
        )
        assert not _plan_subscripts(tree, plan_names), f"{path.name}: plan[...] at {_plan_subscripts(tree, plan_names)}"


def test_memo_render_takes_a_plan_and_its_context():
    import inspect

    from advisor.contract import Plan
    from advisor.contract.context import PlanContext
    from advisor.present.memo import render

    hints = inspect.signature(render).parameters
    assert hints["plan"].annotation in (Plan, "Plan") and hints["context"].annotation in (PlanContext, "PlanContext")


# ------------------------------------------------------------------ the decision on one screen (issue 32 item 2)

ROUND3 = {
    "decision": {
        "basis": "expected",
        "draws": 200,
        "expected_cost_usd": 140000.0,
        "p80_cost_usd": 151234.0,
        "price_of_robustness_usd": 2148.0,
        "verify": [
            {
                "input": "a100-80gb-sxm purchase price",
                "current": 9000.0,
                "range": [4000.0, 18000.0],
                "evpi_usd": 3120.0,
                "message": "get a quote for the A100 80GB SXM4 first: knowing its price exactly is worth $3,120",
            },
            {
                "input": "hosting",
                "current": 184.06,
                "range": [150.0, 220.0],
                "evpi_usd": 0.0,
                "message": "the hosting rate does not change the choice",
            },
        ],
    },
    "disposal": [
        {
            "gpu": "a100-80gb-sxm",
            "when": "horizon",
            "month": 36,
            "resale_usd": 21000.0,
            "message": "resell the 8 A100 80GB SXM4 at month 36 for about $21,000",
        }
    ],
    "other_ownership": {
        "ownership": "rent",
        "total_cost_usd": 152000.0,
        "purchase": [],
        "message": "renting the same GPUs instead would cost $152,000",
    },
}


def _with_round3(plan: dict) -> dict:
    plan = dict(plan, **ROUND3)
    plan["jobs"] = [dict(j, speed_evidence="measured") for j in plan["jobs"]]
    return plan


@pytest.mark.parametrize(
    "basis, said",
    [
        ("point", "chosen at the point estimates; over 200 draws: expected $140,000"),
        ("p80", "chosen on the P80 cost over 200 draws: expected $140,000"),
    ],
)
def test_the_basis_line_says_how_the_plan_was_chosen(example_plan, basis, said):
    """`decision: point` read "Basis  chosen on the point cost over 20,000 draws": a plan chosen at the
    point estimates was said to be chosen over the draws, on a "point cost" no table states."""
    from advisor.present.plan_text import plan_text

    _, plan = example_plan("article-datacenter")
    plan = _with_round3(plan)
    plan["decision"] = dict(plan["decision"], basis=basis)
    out = plan_text(plan, full=False)
    assert said in " ".join(out.split()), out
    section = " ".join(plan_text(plan, section="decision").split())
    assert said.replace(": expected", "; expected cost") in section, section


def test_the_one_screen_view_shows_the_round_3_keys(example_plan):
    """decision (basis, expected and P80 cost, the top `verify` item), disposal, other_ownership and
    each job's speed evidence appear on the one screen when a plan carries them."""
    from advisor.present.plan_text import plan_text

    _, plan = example_plan("article-datacenter")
    out = plan_text(_with_round3(plan), full=False)
    assert "chosen on the expected cost over 200 draws" in out and "P80 $151,234" in out
    assert "knowing its price exactly is worth $3,120" in out and "and 1 more: --section decision" in out
    assert "resell the 8 A100 80GB SXM4 at month 36" in out
    assert "renting the same GPUs instead would cost $152,000" in out
    assert "speeds measured (1)" in out
    assert (
        f"{plan['nominal_cost_usd']:,.2f} in cash" in out and f"${plan['present_value_usd']:,.2f} present value" in out
    )
    decision = plan_text(_with_round3(plan), section="decision")
    assert "the hosting rate does not change the choice" in decision and "$4,000–$18,000" not in decision
    assert "4,000–18,000" in decision and "$3,120" in decision
    bare = plan_text(
        {k: v for k, v in plan.items() if k not in ROUND3}, full=False
    )  # without the keys: nothing about them
    assert "Verify" not in bare and "Basis" not in bare and "Otherwise" not in bare


def test_one_part_bought_is_not_priced_each(example_plan):
    """article-office's decision read "buy 1× rtx-4090 at $2,000 each; buy 1× workstation-4x-pcie at $7,000
    each": 'each' belongs to more than one (article-datacenter's eight A100s keep it)."""
    from advisor.present.plan_text import plan_text

    one = plan_text(example_plan("article-office")[1], full=False)
    assert "buy 1× rtx-4090 at $2,000; buy 1× workstation-4x-pcie at $7,000 to hold the rtx-4090" in one, one
    eight = plan_text(example_plan("article-datacenter")[1], full=False)
    assert "buy 8× a100-80gb-sxm at $9,000 each; buy 1× hgx-a100-8gpu at $28,390 to hold" in eight, eight


def test_one_screen_view_of_the_fleet_is_short_and_says_what_was_decided(run, example_plan, example_plans_reused):
    import os

    # one plan of the fleet, printed three ways: the one screen, at 80 columns, and --full; the plan is the
    # one example_plan made for the JSON read below (conftest.example_plans_reused)
    _, plan = example_plan("team-fleet")
    code, out, _ = run("plan", EXAMPLES / "team-fleet.yaml", "--as-of", AS_OF)
    wide = out.splitlines()
    assert code == 0 and len(wide) <= 40
    for label in ("Decision", "Cost", "Time", "Binds", "Sensitive", "Robust", "Not chosen, by family"):
        assert any(line.startswith(label) for line in wide), label
    assert "--section NAME" in out and "--full" in out
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        code, narrow, _ = run("plan", EXAMPLES / "team-fleet.yaml", "--as-of", AS_OF)
        code_full, full, _ = run("plan", EXAMPLES / "team-fleet.yaml", "--as-of", AS_OF, "--full")
    finally:
        os.environ.pop("COLUMNS") if old is None else os.environ.__setitem__("COLUMNS", old)
    assert len(set(example_plans_reused)) == 1  # the three printed the one plan
    assert code == 0 and len(narrow.splitlines()) <= 80 and max(len(x) for x in narrow.splitlines()) <= 80
    assert code_full == 0 and len(full.splitlines()) > len(narrow.splitlines())
    # a family not chosen is named with its best GPU and that GPU's cost, read from the plan's JSON
    ampere = [
        r
        for r in plan["rejected"]
        if r["gpu"] in ("a100-40gb-sxm", "a100-80gb-sxm", "a100-80gb-pcie", "a800-80gb-sxm", "a10")
    ]
    best = min((r for r in ampere if r["forced_cost_usd"] is not None), key=lambda r: r["forced_cost_usd"])
    extra = best["forced_cost_usd"] - plan["total_cost_usd"]
    found = re.search(r"Ampere datacenter\s+(\S+) \(\+4 more\): \$([\d,]+), \$([\d,]+)\s+\(\+\d+%\) more", out)
    assert found and found.groups() == (best["gpu"], f"{best['forced_cost_usd']:,.0f}", f"{extra:,.0f}")


def test_sections_one_at_a_time_and_a_mistyped_one_gets_its_near_names(run):
    code, out, _ = run("plan", EXAMPLES / "article-office.yaml", "--as-of", AS_OF, "--section", "costs")
    assert code == 0 and out.startswith("\nCost breakdown") is False and "Cost breakdown" in out
    assert "Decision" not in out and "Not chosen" not in out
    code, _, err = run("plan", EXAMPLES / "article-office.yaml", "--section", "cost")
    assert code == 2 and "did you mean costs?" in err
    code, _, err = run("plan", EXAMPLES / "article-office.yaml", "--section", "sen")
    assert code == 2 and "sensitivity" in err
    code, out, _ = run("plan", "--help")
    assert all(name in " ".join(out.split()) for name in ("not-chosen", "robustness", "decision", "warnings"))


def test_one_job_split_over_two_offers_is_one_training_run_in_the_memo(example_plan):
    """With allow_mixed a job's tokens may be shared between two rows (copies 0.5 each): the memo's
    recommendation counts jobs, not rows, and says 'the training run', never 'All 1 jobs'."""
    import copy

    import advisor

    _, plan = example_plan("article-office")
    (job,) = plan["jobs"]
    half = copy.deepcopy(job)
    half["copies"] = job["copies"] / 2
    plan["jobs"] = [half, copy.deepcopy(half)]
    text = advisor.memo(plan, EXAMPLES / "article-office.yaml", fmt="md", charts=False).text
    assert "The training run finishes after about" in text
    assert "All 1 jobs" not in text


def test_a_family_no_offer_can_join_says_why_not_only_its_name(example_plan):
    """The MI300X of llama-70b-budget is refused because no offer joins 8 of its 1-GPU nodes: the
    one-screen view says that, not '[fabric] AMD Instinct MI300X' (the message cut at the
    parenthesis that follows the GPU's name)."""
    _, plan = example_plan("llama-70b-budget")
    (mi300x,) = [r for r in plan["rejected"] if r["gpu"] == "mi300x"]
    why = mi300x["reasons"][0]
    assert why["code"] == "fabric" and why["message"].startswith(mi300x["name"] + " (")
    from advisor.present.plan_text import plan_text

    out = " ".join(plan_text(plan, full=False).split())
    detail = why["message"].split(": ", 1)[1].split(" (")[0]
    assert f"mi300x: [fabric] {' '.join(detail.split())}" in out
    assert "[fabric] AMD Instinct MI300X " not in out + " "


def test_the_gpu_count_shortfall_agrees_in_number():
    """`gpus: {count: 1}` for a job that needs 2 read "at most 1 are allowed"."""
    from advisor.contract.facts import Shortfall
    from advisor.present.constraint_words import diagnosis_row

    def said(needed: int, limit: int) -> str:
        return diagnosis_row(Shortfall("gpu_count", "shortfall:gpu_count", needed, limit))["message"]

    assert said(2, 1).endswith("uses 2 GPUs; the GPU limit is 1"), said(2, 1)  # as "the power limit is 1.44 kW"
    assert said(8, 4).endswith("uses 8 GPUs; the GPU limit is 4"), said(8, 4)
