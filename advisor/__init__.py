"""gpu-advisor: the cheapest GPU mix for an ML training workload, and why.

    import advisor
    wl = advisor.load_workload("examples/article-office.yaml")
    p = advisor.plan(wl)            # a dict with the keys of `advisor plan --format json`
    print(p["purchase"], p["total_cost_usd"])
    advisor.estimate(model="gpt2-124m", gpu="rtx-4090")
    advisor.memo(p, fmt="html").write("memo.html")
"""
from advisor._version import __version__

# The functions share their modules' names (advisor.plan, advisor.estimate, advisor.memo);
# importing them here, once, makes the package attribute the function for good.
from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.data.rules import load_rules  # noqa: E402
from advisor.errors import AdvisorError, InfeasibleError, InputError  # noqa: E402
from advisor.inputs.workload import load_workload, parse_workload  # noqa: E402
from advisor.perf.estimate import estimate  # noqa: E402
from advisor.plan import plan  # noqa: E402
from advisor.report import memo  # noqa: E402

__all__ = ["__version__", "load_workload", "parse_workload", "plan", "load_catalog", "load_rules",
           "estimate", "memo", "InputError", "InfeasibleError", "AdvisorError"]
