"""present/ renders a typed Plan and its PlanContext (issue 28 item 3): it never reads a solver
Problem and never subscripts a plan's JSON value."""
from __future__ import annotations

import ast
from pathlib import Path

PRESENT = Path(__file__).resolve().parent.parent / "advisor" / "present"


def _plan_subscripts(tree: ast.AST, names: tuple[str, ...]) -> list[int]:
    """Lines where one of `names` is subscripted with a string or asked `.get(...)`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            out.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names:
            out.append(node.lineno)
    return out


def test_present_reads_typed_fields_and_no_solver_problem():
    for path in sorted(PRESENT.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args + n.kwonlyargs}
        assert "problem" not in names, f"{path.name} reads a solver Problem; give it a PlanContext"
        assert "getattr(problem" not in text, path.name
        plan_names = ("plan", "p") if path.name == "plan_text.py" else ("plan",)   # `p` is a price elsewhere
        assert not _plan_subscripts(tree, plan_names), f"{path.name}: plan[...] at {_plan_subscripts(tree, plan_names)}"


def test_memo_render_takes_a_plan_and_its_context():
    import inspect

    from advisor.contract import Plan
    from advisor.contract.context import PlanContext
    from advisor.present.memo import render

    hints = inspect.signature(render).parameters
    assert hints["plan"].annotation in (Plan, "Plan") and hints["context"].annotation in (PlanContext, "PlanContext")
