"""Issue 13: planning at a fixed global batch past 512 GPUs. A 405B model on 2T tokens within 90
days for $10M is feasible: at 16M tokens per step, 2T tokens are 119,210 steps, and e.g. 2,048 H100
at ~150 tokens/s/GPU take 2e12 / (2048 x 150) / 86400 = 75 days."""

from __future__ import annotations


def test_405b_2t_tokens_90_days_10m_is_feasible(plan_json, write):
    path = write("""
name: 405B pretraining at a fixed batch
deployment:
  context: datacenter
  ownership: any
model: llama-3.1-405b
tokens: 2T
deadline: 90d
budget_usd: 10M
global_batch_tokens: 16M
""")
    code, plan = plan_json(path, as_of=None)  # jobs, costs, status: no explanation read
    assert code == 0 and plan["status"] == "optimal"
    assert plan["total_cost_usd"] <= 10e6
    for job in plan["jobs"]:
        assert job["wall_days"] <= 90
        assert job["layout"]["global_batch_tokens"] == 16e6 and not job["layout"]["batch_changed"]
        assert job["gpu_count"] > 512
        g = job["goodput"]
        assert 0 < g["fraction"] < 1
        # the loss line adds up: wall time x (1 - goodput) = the hours lost
        assert abs(g["lost_days"] - job["wall_days"] * (1 - g["fraction"])) < 1e-4 * job["wall_days"]  # JSON rounds


def test_workload_goodput_override(plan_json, write):
    path = write("""
deployment: {context: datacenter, ownership: rent}
model: gpt2-124m
tokens: 10B
goodput: 0.8
gpus: {allow: [h100-sxm]}
""")
    code, plan = plan_json(path, as_of=None)  # jobs, costs, status: no explanation read
    assert code == 0
    job = plan["jobs"][0]
    assert job["goodput"]["fraction"] == 0.8 and job["goodput"]["source"] == "workload"
    # wall time = failure-free time / goodput, failure-free time = tokens / tokens/s
    assert abs(job["wall_days"] - 10e9 / job["tokens_per_s"] / 0.8 / 86400) < 1e-4 * job["wall_days"]
