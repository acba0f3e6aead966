"""A budget copied from the plan's printed cost admits that plan: the figures a budget may cap (cash, or
present value with `budget_basis: present_value`) are printed to the cent, as the budget is checked."""

from __future__ import annotations

import re

from conftest import AS_OF

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
