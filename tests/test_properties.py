"""Invariants of the optimizer on small random workloads (hypothesis)."""

from __future__ import annotations

from conftest import AS_OF, ci_examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_optimize import CATALOG, RULES

from advisor.flow import plan
from advisor.inputs.workload import parse_workload

GPUS = ["rtx-4090", "a100-80gb-sxm", "h100-sxm"]

workloads = st.fixed_dictionaries(
    {
        "deployment": st.fixed_dictionaries(
            {
                "context": st.sampled_from(["office", "datacenter"]),
                "ownership": st.sampled_from(["buy", "rent", "any"]),
            }
        ),
        "model": st.sampled_from(["gpt2-124m", "gpt2-350m", "gpt2-774m"]),
        "tokens": st.sampled_from(["1B", "5B", "20B", "100B"]),
        "deadline": st.sampled_from(["1d", "3d", "7d", "30d"]),
    }
)

# 12 derandomized examples in CI (each plans twice, ~0.65 s of CPU), 25 otherwise
SETTINGS = settings(max_examples=ci_examples(12, 25), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cost(doc):
    p = plan(parse_workload(doc), catalog=CATALOG(), rules=RULES(), as_of=AS_OF, explain=False)
    return p["total_cost_usd"]


@SETTINGS
@given(
    doc=workloads,
    subset=st.lists(st.sampled_from(GPUS), min_size=1, max_size=2, unique=True),
    extra=st.sampled_from(GPUS),
)
def test_adding_a_gpu_option_never_raises_the_optimal_cost(doc, subset, extra):
    small = cost({**doc, "gpus": {"allow": subset}})
    large = cost({**doc, "gpus": {"allow": sorted(set(subset) | {extra})}})
    if small is not None:
        assert large is not None and large <= small * (1 + 1e-6) + 1e-3


@SETTINGS
@given(doc=workloads, budget=st.sampled_from([50, 500, 5_000, 50_000]), factor=st.sampled_from([1.5, 2, 10]))
def test_a_looser_budget_never_makes_a_feasible_workload_infeasible(doc, budget, factor):
    doc = {**doc, "gpus": {"allow": GPUS}}  # an office and two datacenter boards: a fraction of the estimates of all
    tight = cost({**doc, "budget_usd": budget})
    loose = cost({**doc, "budget_usd": budget * factor})
    if tight is not None:
        assert loose is not None and loose <= tight + 1e-3
