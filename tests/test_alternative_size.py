"""A GPU type whose only plan needs more GPUs than any cluster holds (inputs.quantities.MAX_GPUS) is not
quoted a price: Llama 3.1 405B at fp8 on A100 (no fp8 rate) holds its 80 ms TPOT only a few sequences at a
time, and the not-chosen table printed "$9,367,834,127 ... (416976x buy serving)" as a plan's cost."""

from __future__ import annotations

from conftest import AS_OF

from advisor.inputs.quantities import MAX_GPUS

WORKLOAD = """\
deployment: {context: datacenter, ownership: any, horizon_months: 24}
gpus: {allow: [a100-80gb-sxm, h200-sxm]}
jobs:
  - name: chat
    kind: serve
    model: llama-3.1-405b
    precision: fp8
    traffic: {requests_per_s: 10, input_tokens: 2000, output_tokens: 500}
    slo: {ttft_ms: 3000, tpot_ms: 80, percentile: 99}
"""


def test_a_plan_beyond_any_cluster_is_named_by_its_size_not_priced(run_json, write):
    code, plan = run_json("plan", write(WORKLOAD), "--as-of", AS_OF)
    assert code == 0 and {r["gpu"] for r in plan["serving"]} == {"h200-sxm"}
    (a100,) = [r for r in plan["rejected"] if r["gpu"] == "a100-80gb-sxm"]
    (reason,) = a100["reasons"]
    assert a100["forced_cost_usd"] is None and reason["code"] == "size"
    size = int(reason["message"].split(" needs ")[1].split(" GPUs")[0].replace(",", ""))
    assert size > MAX_GPUS and f"({MAX_GPUS:,})" in reason["message"] and "$" not in reason["message"]
