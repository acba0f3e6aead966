"""The package's layers (docs/architecture.md): each module imports only from its own layer or
the layers below it, and present/ never reaches the solver, the estimators or the explanations
(the memo renders what plan() computed). Checked on the source, imports inside functions included.
And the house rules of issue 28: no module uses another module's private `_name`; functions under
80 lines and cyclomatic complexity 20 (today's exceptions recorded in OVERSIZED, never to grow)."""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "advisor"

# low -> high; a module may import from any layer at or below its own
LAYERS = [
    {"advisor._version", "advisor.durations", "advisor.errors", "advisor.ticker"},
    {"advisor.inputs"},
    {"advisor.data"},
    {"advisor.contract"},
    {"advisor.perf"},
    {"advisor.economics"},
    {"advisor.solve"},
    {"advisor.explain"},
    {"advisor.present"},
    {
        "advisor.flow",
        "advisor.assemble",
        "advisor.plan_notes",
        "advisor.plan_rows",
        "advisor.comparisons",
        "advisor.crossover_sweep",
        "advisor.rule_examples",
    },
    {"advisor.report", "advisor.api"},
    {"advisor.cli", "advisor.__main__", "advisor"},
]
# present/ renders only: it may read data types, never call what computes
FORBIDDEN = {
    "advisor.present": (
        "advisor.perf",
        "advisor.solve",
        "advisor.explain",
        "advisor.flow",
        "advisor.report",
        "advisor.economics",
    )
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    best = None
    for i, members in enumerate(LAYERS):
        for m in members:
            if (module == m or (m != "advisor" and module.startswith(m + "."))) and (
                best is None or len(m) > len(best[1])
            ):
                best = (i, m)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")
    return best[0]


@functools.cache
def parsed(source: str) -> ast.Module:
    """A module's syntax tree, parsed once per process for the checks below that read it (none changes it)."""
    return ast.parse(source)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every `advisor...` import, skipping `if TYPE_CHECKING:` blocks."""
    tree = parsed(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for child in node.body for n in ast.walk(child))
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "advisor":
                out += [
                    (node.lineno, f"advisor.{a.name}" if a.name != "__version__" else "advisor._version")
                    for a in node.names
                ]
            elif node.module.startswith("advisor."):
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}:{node.lineno}: use absolute imports (from advisor.x import y)")
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("advisor")]
    return out


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_go_down_the_layers_only(path):
    mine = module_name(path)
    here = layer_of(mine)
    for line, target in imports(path):
        assert layer_of(target) <= here, (
            f"{mine} (layer {here}) imports {target} (layer {layer_of(target)}) at line {line}: an import up the layers"
        )
        for prefix, banned in FORBIDDEN.items():
            if mine == prefix or mine.startswith(prefix + "."):
                assert not target.startswith(banned), f"{mine} imports {target} at line {line}: present/ renders only"


def test_no_module_is_over_400_lines():
    long = {module_name(p): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"modules over 400 lines (split them by concern): {long}"


def test_the_layer_checker_catches_an_upward_import(tmp_path):
    """The check itself can fail: an upward import is reported."""
    assert layer_of("advisor.data.catalog") < layer_of("advisor.solve.milp")
    assert layer_of("advisor.present.memo") < layer_of("advisor.flow")  # the flow words its plan with present/
    assert layer_of("advisor.contract.facts") < layer_of("advisor.solve.constraints")
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("advisor.nowhere")


def all_imports(path: Path) -> set[str]:
    """Every `advisor...` module a file imports, inside functions and `if TYPE_CHECKING:` too."""
    out = set()
    for node in ast.walk(parsed(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("advisor."):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("advisor.")}
    return out


def import_cycles(package: str) -> list[list[str]]:
    """Every cycle among the modules of `package`, imports inside functions and type-checking
    blocks included (issue 28: the catalog's modules import one way)."""
    mods = {module_name(p): p for p in MODULES if module_name(p).startswith(package + ".")}
    graph = {m: sorted({t for t in all_imports(p) if t in mods and t != m}) for m, p in mods.items()}
    cycles, state = [], {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = "open"
        for t in graph[m]:
            if state.get(t) == "open":
                cycles.append(stack[stack.index(t) :] + [t])
            elif t not in state:
                visit(t, stack + [t])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    return cycles


@pytest.mark.parametrize("package", ["advisor.data", "advisor.economics"])
def test_the_data_and_economics_modules_import_one_way(package):
    assert import_cycles(package) == []


def test_the_cycle_finder_finds_a_cycle(monkeypatch):
    """The check itself can fail: a module that imports its importer is a cycle."""
    fake = {"advisor.data.a": {"advisor.data.b"}, "advisor.data.b": {"advisor.data.a"}}
    paths = [Path("advisor/data/a.py"), Path("advisor/data/b.py")]
    monkeypatch.setattr(sys.modules[__name__], "MODULES", [PACKAGE.parent / p for p in paths])
    monkeypatch.setattr(sys.modules[__name__], "all_imports", lambda p: fake[module_name(p)])
    assert import_cycles("advisor.data") == [["advisor.data.a", "advisor.data.b", "advisor.data.a"]]


# ---------------------------------------------------------------------------------------------
# House rules (issue 28): no module reaches into another's private names; functions stay small.


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


MODULE_NAMES = {module_name(p) for p in MODULES}


def private_uses(source: str, me: str, modules: set[str] = MODULE_NAMES) -> list[str]:
    """Where the module `me` (its source) uses another advisor module's private name: `from
    advisor.x import _name`, or `x._name` / `advisor.x._name` on a name bound to another module."""
    tree = parsed(source)
    bound: dict[str, str] = {}  # local name -> the advisor module it is bound to
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("advisor") and not node.level:
            for a in node.names:
                if f"{node.module}.{a.name}" in modules:
                    bound[a.asname or a.name] = f"{node.module}.{a.name}"
                elif _is_private(a.name) and node.module != me:
                    out.append(f"line {node.lineno}: from {node.module} import {a.name}")
        elif isinstance(node, ast.Import):
            bound.update({a.asname: a.name for a in node.names if a.asname and a.name.startswith("advisor")})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            owner = bound.get(node.value.id) if isinstance(node.value, ast.Name) else ast.unparse(node.value)
            if owner in modules and owner != me:
                out.append(f"line {node.lineno}: {owner}.{node.attr}")
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_uses_another_modules_private_names(path):
    used = private_uses(path.read_text(encoding="utf-8"), module_name(path))
    assert not used, (
        f"{module_name(path)} uses private names of other modules (make the name public, or "
        f"move it where it is used): {used}"
    )


def test_the_private_name_check_can_fail():
    mods = {"advisor.perf.memory", "advisor.perf.training"}
    source = (
        "from advisor.perf.memory import _parts, Layout\n"
        "from advisor.perf import memory as m\n"
        "import advisor.perf.memory\n"
        "x = m._parts(1) + advisor.perf.memory._parts(2) + m.__name__ + m.memory_total\n"
    )
    assert private_uses(source, "advisor.perf.training", mods) == [
        "line 1: from advisor.perf.memory import _parts",
        "line 4: advisor.perf.memory._parts",
        "line 4: advisor.perf.memory._parts",
    ]
    assert private_uses(source, "advisor.perf.memory", mods) == []  # a module's own private names are its own


MAX_LINES = 80  # a function is shorter than this (its `def` line to its last, nested functions included)
MAX_COMPLEXITY = 20  # and its cyclomatic complexity below this (nested functions measured on their own)
_BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.match_case)


def complexity(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """1 + its branches: if (elif, conditional expressions), for, while, except handlers, each extra
    operand of and/or, comprehension ifs and match cases. Nested functions and classes not included."""
    n, stack = 1, list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        n += (
            isinstance(node, _BRANCHES)
            + (len(node.values) - 1 if isinstance(node, ast.BoolOp) else 0)
            + (len(node.ifs) if isinstance(node, ast.comprehension) else 0)
        )
        stack.extend(ast.iter_child_nodes(node))
    return n


def function_sizes(source: str, prefix: str = "") -> dict[str, tuple[int, int]]:
    """'Class.method' or 'outer.inner' -> (lines, complexity) of every function in `source`."""
    out: dict[str, tuple[int, int]] = {}

    def walk(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[where + child.name] = (child.end_lineno - child.lineno + 1, complexity(child))
                walk(child, where + child.name + ".")
            else:
                walk(child, where + child.name + "." if isinstance(child, ast.ClassDef) else where)

    walk(parsed(source), prefix)
    return out


# The debt record: every function over a limit today, at its size when the rule came in
# (lines, complexity). None may grow and no other may join; split one and delete its line here.
OVERSIZED: dict[str, tuple[int, int]] = {}


def size_problems(sizes: dict[str, tuple[int, int]], allowed: dict[str, tuple[int, int]]) -> list[str]:
    """What breaks the size rule: a function over a limit that is not in `allowed`, one that grew
    past its recorded size, and a recorded one now within the limits (delete its line)."""
    out = []
    for name, (lines, cx) in sorted(sizes.items()):
        over = lines >= MAX_LINES or cx >= MAX_COMPLEXITY
        if over and name not in allowed:
            out.append(f"{name}: {lines} lines, complexity {cx} (limits: under {MAX_LINES} and {MAX_COMPLEXITY})")
        elif name in allowed and (lines > allowed[name][0] or cx > allowed[name][1]):
            out.append(f"{name} grew: {lines} lines, complexity {cx} (recorded {allowed[name]})")
        elif name in allowed and not over:
            out.append(f"{name} is within the limits now: delete it from OVERSIZED")
    out += [f"{name} no longer exists: delete it from OVERSIZED" for name in sorted(set(allowed) - set(sizes))]
    return out


def test_functions_stay_short_and_simple():
    sizes: dict[str, tuple[int, int]] = {}
    for path in MODULES:
        sizes.update(function_sizes(path.read_text(encoding="utf-8"), module_name(path) + ":"))
    problems = size_problems(sizes, OVERSIZED)
    assert not problems, "split these functions (or, when one shrank, update OVERSIZED):\n" + "\n".join(problems)


def test_the_size_check_can_fail():
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(19))
    source = (
        f"def big(x):\n{branches}\n    return [y for y in x if y and x or y]\n"
        "class C:\n    def m(self):\n        def inner():\n            pass\n        return 1 if self else 2\n"
    )
    sizes = function_sizes(source, "m:")
    assert sizes["m:big"] == (2 + 2 * 19, 1 + 19 + 1 + 2)  # 19 ifs, a comprehension if, `and`, `or`
    assert sizes["m:C.m"] == (4, 2) and sizes["m:C.m.inner"] == (2, 1)
    assert size_problems(sizes, {}) == ["m:big: 40 lines, complexity 23 (limits: under 80 and 20)"]
    assert size_problems(sizes, {"m:big": (40, 22)}) == ["m:big grew: 40 lines, complexity 23 (recorded (40, 22))"]
    assert size_problems(sizes, {"m:big": (40, 23), "m:C.m": (4, 2), "m:gone": (90, 1)}) == [
        "m:C.m is within the limits now: delete it from OVERSIZED",
        "m:gone no longer exists: delete it from OVERSIZED",
    ]
