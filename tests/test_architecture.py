"""The package's layers (docs/architecture.md): each module imports only from its own layer or
the layers below it, and present/ never reaches the solver, the estimators or the explanations
(the memo renders what plan() computed). Checked on the source, imports inside functions included."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "advisor"

# low -> high; a module may import from any layer at or below its own
LAYERS = [
    {"advisor._version", "advisor.errors"},
    {"advisor.inputs"},
    {"advisor.data"},
    {"advisor.contract"},
    {"advisor.perf"},
    {"advisor.economics"},
    {"advisor.solve"},
    {"advisor.explain"},
    {"advisor.present"},
    {"advisor.flow", "advisor.assemble", "advisor.plan_notes", "advisor.comparisons", "advisor.rule_examples"},
    {"advisor.report", "advisor.api"},
    {"advisor.cli", "advisor.__main__", "advisor"},
]
# present/ renders only: it may read data types, never call what computes
FORBIDDEN = {"advisor.present": ("advisor.perf", "advisor.solve", "advisor.explain", "advisor.flow",
                                 "advisor.report", "advisor.economics")}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    best = None
    for i, members in enumerate(LAYERS):
        for m in members:
            if (module == m or (m != "advisor" and module.startswith(m + "."))) and (best is None or len(m) > len(best[1])):
                best = (i, m)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")
    return best[0]


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every `advisor...` import, skipping `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
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
                out += [(node.lineno, f"advisor.{a.name}" if a.name != "__version__" else "advisor._version")
                        for a in node.names]
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
        assert layer_of(target) <= here, (f"{mine} (layer {here}) imports {target} (layer {layer_of(target)}) "
                                          f"at line {line}: an import up the layers")
        for prefix, banned in FORBIDDEN.items():
            if mine == prefix or mine.startswith(prefix + "."):
                assert not target.startswith(banned), f"{mine} imports {target} at line {line}: present/ renders only"


def test_no_module_is_over_400_lines():
    long = {module_name(p): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"modules over 400 lines (split them by concern): {long}"


def test_the_layer_checker_catches_an_upward_import(tmp_path):
    """The check itself can fail: an upward import is reported."""
    assert layer_of("advisor.data.catalog") < layer_of("advisor.solve.milp")
    assert layer_of("advisor.present.memo") < layer_of("advisor.flow")   # the flow words its plan with present/
    assert layer_of("advisor.contract.facts") < layer_of("advisor.solve.constraints")
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("advisor.nowhere")


def all_imports(path: Path) -> set[str]:
    """Every `advisor...` module a file imports, inside functions and `if TYPE_CHECKING:` too."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
                cycles.append(stack[stack.index(t):] + [t])
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
