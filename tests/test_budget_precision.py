"""A budget copied from the plan's printed cost admits that plan: the figures a budget may cap (cash, or
present value with `budget_basis: present_value`) are printed to the cent, as the budget is checked."""

from __future__ import annotations

import re

import pytest
from conftest import AS_OF, EXAMPLES

WORKLOAD = """\
deployment: {context: cloud, ownership: rent}
jobs:
  - {model: llama-3-8b, tokens: 500B, deadline: 45d}
gpus: {allow: [h100-sxm], count: 64}
"""


def test_a_budget_copied_from_the_printed_cash_admits_the_plan(run, write):
    """The review's case: "$31,853 in cash" copied into budget_usd gave exit 3 ("raise the budget from
    $31,853 to $31,854"): the cash was $31,853.41."""
    code, text, _ = run("plan", write(WORKLOAD), "--as-of", AS_OF)
    assert code == 0
    cash = re.search(r"\$([\d,]+\.\d\d) in cash", text)
    pv = re.search(r"Cost +\$([\d,]+\.\d\d) present value", text)
    assert cash and pv, text
    for basis, figure in (("cash", cash.group(1)), ("present_value", pv.group(1))):
        capped = WORKLOAD + f"budget_usd: {figure.replace(',', '')}\nbudget_basis: {basis}\n"
        code, out, err = run("plan", write(capped, f"{basis}.yaml"), "--as-of", AS_OF, "--format", "json")
        assert code == 0, (basis, figure, err)
        # one cent less is refused: the figure printed is the figure checked
        less = f"{float(figure.replace(',', '')) - 0.01:.2f}"
        code, _, _ = run(
            "plan", write(WORKLOAD + f"budget_usd: {less}\nbudget_basis: {basis}\n", "x.yaml"), "--as-of", AS_OF
        )
        assert code == 3, (basis, less)


def test_a_budget_between_cents_admits_no_plan_above_it(catalog, rules):
    """A budget a tenth of a cent under the plan's cash prints as the same cents ("uses $37,930.21 of the
    $37,930.21 budget") but is below it: no plan (it was admitted, the budget plus half a cent). At the
    cash itself, unrounded, the plan is within it."""
    import yaml

    from advisor.contract.numbers import cents
    from advisor.flow import plan, prepare
    from advisor.inputs.workload import parse_workload
    from advisor.solve.milp import solve

    doc = yaml.safe_load(WORKLOAD)
    sol = solve(prepare(parse_workload(doc), catalog, rules, AS_OF))
    cash = sol.cost("cash")
    under = cash - 0.0001
    assert cents(under) == cents(cash)  # printed alike
    p = plan(parse_workload({**doc, "budget_usd": under}), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert p["status"] == "infeasible", p["nominal_cost_usd"]
    p = plan(parse_workload({**doc, "budget_usd": cash}), catalog=catalog, rules=rules, as_of=AS_OF, explain=False)
    assert p["status"] != "infeasible" and p["nominal_cost_usd"] == cents(cash)


@pytest.mark.parametrize(
    ("budget", "admits", "refuses"),
    [
        (9696.08, 9696.0849, 9696.085),  # whole cents: every figure that prints as it
        (5.1511, 5.1511, 5.1512),  # between cents, under half a cent: no higher than written
        (9696.071, 9696.071, 9696.0711),  # (the cap took the looser of the two: $9,696.075, review28)
        (37930.209, 37930.209, 37930.2091),  # between cents, over half a cent
        (0.01, 0.0149, 0.015),
    ],
)
def test_a_budget_caps_at_itself_between_cents_and_at_its_printed_figure_in_whole_cents(budget, admits, refuses):
    """review28: a budget of $5.1511 admitted a plan printed as "uses $5.1517 of the $5.1511 budget": the cap
    was the larger of the budget and its whole cents plus half a cent, the looser bound below half a cent."""
    from advisor.solve.constraints.budget import cap

    assert admits <= cap(budget) < refuses


def test_a_budget_between_cents_is_printed_as_written_and_what_it_caps_beside_it():
    """Printed to the cent, $37,930.2065 of a $37,930.209 budget read "$37,930.21 of the $37,930.21 budget"
    (within it) and a refused $37,930.2099 read the same."""
    from advisor.present.constraint_words import budget_usd

    assert budget_usd(37930.209) == "$37,930.209"
    assert budget_usd(37930.2065, 37930.209) == "$37,930.2065"
    assert budget_usd(133256.77, 2.5e6) == "$133,256.77" and budget_usd(2.5e6) == "$2,500,000.00"
    # review28 L5: a budget under a millionth of a dollar read "the $0.000000 budget"
    assert budget_usd(1e-7) == "$0.0000001" and budget_usd(2.4e-7, 1e-7) == "$0.0000002"
    # review29 L7: under a cent is not whole cents ($1e-9 read "$0.00", its share "2.5e-12%")
    from advisor.contract.numbers import whole_cents
    from advisor.present.constraint_words import _share
    from advisor.solve.constraints.budget import cap

    assert budget_usd(1e-9) == "$0.000000001" and cap(1e-9) < 0.001
    assert [whole_cents(x) for x in (0.0, 0.01, 1e-9, 0.001, 2.5e6)] == [True, True, False, False, True]
    assert _share(1e-9, 3.97) == "under 0.01%" and _share(0.5, 100) == "0.5%" and _share(38, 100) == "38%"


def test_the_memos_budget_row_is_the_budget_as_written(catalog):
    """The memo's requirement table printed a $5.1511 budget as "$5.15" and a $37,930.209 one as "$37,930",
    beside "uses $37,930.2065 of the $37,930.209 budget" in its margins."""
    from advisor.inputs.workload import parse_workload
    from advisor.present.memo_requirement import _limits

    def row(budget: float) -> str:
        doc = {"deployment": {"context": "cloud"}, "model": "gpt2-124m", "tokens": "1B", "budget_usd": budget}
        wl = parse_workload(doc)
        return dict(_limits(wl, catalog))["Budget"]

    assert [row(b) for b in (37930.209, 5.1511, 30000, 5.5)] == ["$37,930.209", "$5.1511", "$30,000", "$5.50"]


def test_a_budgets_slack_is_in_dollars_as_the_budget_is():
    """The memo's margin read '2,366,743.23 USD to spare' beside 'of the $2,500,000.00 budget'."""
    from advisor.present.words import amount

    assert amount(2366743.23, "USD") == "$2,366,743.23"


def test_a_power_rows_draw_and_slack_foot_to_its_limit_and_gpus_are_whole(run):
    """article-office's power row read "draw 0.57 of 1.44 kW" beside "slack 0.86 kW" (0.575 and 0.865
    kW, each rounded down at two decimals: 0.57 + 0.86 = 1.43); both are now to the watt and add up to
    the limit as printed. A GPU count's slack read "768.00 GPUs"."""
    from decimal import Decimal

    from advisor.present.words import amount

    code, out, _ = run("plan", EXAMPLES / "article-office.yaml", "--as-of", AS_OF, "--section", "constraints")
    found = re.search(r"slack ([\d.]+) kW +owned GPUs and servers draw ([\d.]+) of ([\d.]+) kW", out)
    assert code == 0 and found, out
    slack, draw, limit = map(Decimal, found.groups())
    assert draw + slack == limit and draw > 0
    assert (amount(768.0, "GPUs"), amount(1.0, "GPUs"), amount(0.86, "kW")) == ("768 GPUs", "1 GPU", "0.860 kW")


def test_the_budget_lever_says_the_budget_as_written_and_its_share_of_the_plan_it_needs():
    """review28: a $0.01 budget read "raise the budget from $0 to $6 (...; the budget is 0.17% of the cheapest
    plan)" and $5.155 "from $5 to $6 (... 86% ...)" where the plan within the other limits costs $5.16: the
    share was taken against the budget the lever asks for (the cost rounded up to a dollar), and the budget
    printed to the dollar."""
    from advisor.contract.facts import Lever
    from advisor.present.constraint_words import diagnosis_row

    def words(budget: float, cost: float) -> str:
        lever = Lever("budget", "budget", {"budget_usd": 6}, 6, budget, facts={"basis": "cash", "cost": cost})
        return diagnosis_row(lever)["message"]

    assert words(5.155, 5.16).startswith(
        "raise the budget from $5.155 to $6 (cash paid over the horizon; the budget is"
    )
    assert "the budget is 100% of the cheapest plan within the other limits" in words(5.155, 5.16)
    assert "from $0.01 to $6" in words(0.01, 5.16) and "the budget is 0.19% of" in words(0.01, 5.16)
