"""gpu-advisor: the cheapest GPU mix to train and serve ML models, and why.

    import advisor
    p = advisor.plan("examples/article-office.yaml")   # a path, a dict or a Workload
    print(p["purchase"], p["total_cost_usd"])           # the keys of `advisor plan --format json`
    advisor.estimate(model="gpt2-124m", gpu="rtx-4090")
    advisor.memo(p, fmt="html").write("memo.html")
    advisor.rfq(p).write("rfq.md")                      # a request for quotation (or fmt="csv")
    advisor.compare(["rtx-4090", "h100-sxm"], model="gpt2-124m")

Nothing heavy is imported until it is used (`advisor --version` stays fast): the names below are
resolved on first access, and the functions are thin ones in advisor.api that check their
arguments (an InputError naming the argument) before any work.
"""

from __future__ import annotations

import importlib
from typing import Any

from advisor._version import __version__

_LAZY = {
    "InputError": "advisor.errors",
    "InfeasibleError": "advisor.errors",
    "AdvisorError": "advisor.errors",
    # the public functions, each checking its arguments first (advisor/api.py)
    "plan": "advisor.api",
    "estimate": "advisor.api",
    "memo": "advisor.api",
    "compare": "advisor.api",
    "crossover": "advisor.api",
    "rfq": "advisor.api",
    "load_workload": "advisor.api",
    "parse_workload": "advisor.api",
    "load_catalog": "advisor.api",
    "load_rules": "advisor.api",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "__version__",
    "load_workload",
    "parse_workload",
    "plan",
    "load_catalog",
    "load_rules",
    "estimate",
    "memo",
    "rfq",
    "compare",
    "crossover",
    "InputError",
    "InfeasibleError",
    "AdvisorError",
]
