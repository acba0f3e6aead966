"""gpu-advisor: the cheapest GPU mix for an ML training workload, and why.

    import advisor
    wl = advisor.load_workload("examples/article-office.yaml")
    p = advisor.plan(wl)            # a dict with the keys of `advisor plan --format json`
    print(p["purchase"], p["total_cost_usd"])
    advisor.estimate(model="gpt2-124m", gpu="rtx-4090")
    advisor.memo(p, fmt="html").write("memo.html")

The public functions are imported on first use (PEP 562), so that `import advisor` and
`advisor --version` stay fast; `advisor.plan` is also a module, made callable (plan.py).
"""
from __future__ import annotations

import importlib
from typing import Any

from advisor._version import __version__

_PUBLIC = {
    "load_catalog": "advisor.data.catalog", "load_rules": "advisor.data.rules",
    "AdvisorError": "advisor.errors", "InfeasibleError": "advisor.errors", "InputError": "advisor.errors",
    "load_workload": "advisor.inputs.workload", "parse_workload": "advisor.inputs.workload",
    "estimate": "advisor.perf.estimate", "plan": "advisor.plan", "memo": "advisor.report",
}

__all__ = ["__version__", "load_workload", "parse_workload", "plan", "load_catalog", "load_rules",
           "estimate", "memo", "InputError", "InfeasibleError", "AdvisorError"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'advisor' has no attribute {name!r}")
    module = importlib.import_module(_PUBLIC[name])
    value = module if name == "plan" else getattr(module, name)   # the plan module is callable
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
