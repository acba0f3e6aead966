"""A training step's printed parts add up to the step its printed tokens/s gives (audit28): a reader who
divides jobs[].layout.global_batch_tokens by jobs[].tokens_per_s gets the sum of jobs[].step_breakdown, in
`advisor plan --format json` and in `advisor estimate --format json`, whether the speed is the performance
model's own, held to the best published MFU, derated from a datasheet, or a measurement (measured on the
GPU, or moved to it). Before, step_breakdown held only the model's parts: 25.0 s of a 31.6 s step for the
8x H100 examples (1.26x), 5.28 s of 5.34 s for article-office."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, ROOT

MODEL = ("compute_s", "memory_s", "comm_s")
CAUSES = ("held_to_mfu_ceiling_s", "datasheet_derating_s", "measured_adjustment_s")
DATA = ROOT / "tests" / "data" / "review19"

MI300X_ONLY = """name: GPT-2 small on MI300X only (step28)
deployment: {context: datacenter, ownership: rent}
model: gpt2-124m
tokens: 1B
deadline: 30d
gpus: {allow: [mi300x]}
"""


def _adds_up(batch: float, tokens_per_s: float, parts: dict) -> None:
    """sum(parts) == batch / tokens_per_s, to the precision both are printed at (6 significant digits
    in a plan, 6 decimals and 0.1 tokens/s in an estimate: well under 1e-5 of the step)."""
    step = batch / tokens_per_s
    total = sum(parts.values())
    slack = 1e-5 * (step + sum(abs(v) for v in parts.values()))
    assert abs(total - step) <= slack, (step, total, parts)


def _causes(parts: dict) -> set[str]:
    """The causes printed with a nonzero share of the step."""
    return {k for k in CAUSES if parts[k] != 0}


@pytest.mark.parametrize(
    "path, causes",
    [
        (EXAMPLES / "article-datacenter.yaml", set()),  # the model's own speed
        (EXAMPLES / "continued-pretraining-8x.yaml", {"held_to_mfu_ceiling_s"}),  # 25.0 s modelled, 31.6 s held
        (EXAMPLES / "article-office.yaml", {"held_to_mfu_ceiling_s"}),
        (DATA / "rent64_measured.yaml", {"measured_adjustment_s"}),  # measured on the GPU and count planned
        (DATA / "rent512_h100_measured.yaml", {"held_to_mfu_ceiling_s", "measured_adjustment_s"}),  # moved
        (None, {"datasheet_derating_s"}),  # MI300X: a datasheet speed x the public-stack derating
    ],
    ids=["plain", "held-8x-h100", "held-article-office", "measured", "transferred", "derated"],
)
def test_a_plans_step_breakdown_adds_up_to_its_tokens_per_s(plan_json, tmp_path, path, causes):
    if path is None:
        path = tmp_path / "mi300x.yaml"
        path.write_text(MI300X_ONLY)
    code, plan = plan_json(path)
    assert code == 0
    (job,) = plan["jobs"]
    sb = job["step_breakdown"]
    assert set(sb) == set(MODEL + CAUSES)
    assert _causes(sb) == causes
    _adds_up(job["layout"]["global_batch_tokens"], job["tokens_per_s"], sb)


@pytest.mark.parametrize(
    "args, causes",
    [
        (("--model", "gpt2-124m", "--gpu", "a100-80gb-sxm"), set()),
        (("--model", "llama-3-8b", "--gpu", "h100-sxm", "--count", "8"), {"held_to_mfu_ceiling_s"}),
        (("--model", "gpt2-124m", "--gpu", "mi300x"), {"datasheet_derating_s"}),
    ],
    ids=["plain", "held", "derated"],
)
def test_an_estimates_step_breakdown_adds_up_to_its_tokens_per_s(run, args, causes):
    code, out, _ = run("estimate", *args, "--format", "json")
    assert code == 0
    e = json.loads(out)
    sb = e["step_breakdown"]
    assert _causes(sb) == causes
    _adds_up(e["layout"]["global_batch_tokens"], e["tokens_per_s"], sb)


def test_a_held_step_keeps_the_models_parts():
    """The hold is its own part: the model's compute, memory and communication seconds are the model's step
    for the layout chosen (re-timed here), unchanged by the hold, which is the rest of the step."""
    import advisor
    from advisor.data.catalog import load_catalog
    from advisor.perf.estimate import params_from
    from advisor.perf.jobspec import JobSpec, preset_spec
    from advisor.perf.memory import Layout
    from advisor.perf.training import step_time

    e = advisor.estimate(model="llama-3-8b", gpu="h100-sxm", count=8)
    catalog = load_catalog(None)
    lay = e["layout"]
    layout = Layout(
        lay["strategy"],
        lay["data_parallel"],
        lay["tensor_parallel"],
        lay["pipeline_parallel"],
        lay["micro_batch"],
        lay["checkpointing"],
        lay["context_parallel"],
    )
    job = JobSpec(model=preset_spec(catalog, "llama-3-8b"))
    t = step_time(job, catalog.gpu("h100-sxm"), layout, lay["global_batch_tokens"], params_from(catalog))
    sb = e["step_breakdown"]
    assert [sb[k] for k in MODEL] == pytest.approx([t[k] for k in MODEL], abs=1e-6)
    assert sb["held_to_mfu_ceiling_s"] > 0.2 * sum(sb[k] for k in MODEL)  # the 8x H100 hold: 6.5 s of 25.0 s


def test_the_estimate_table_prints_the_hold_beside_the_models_parts(run):
    """`advisor estimate` (text): the step's columns add up to the global batch over the printed tokens/s
    too: the hold is a column of its own where there is one, none where the speed is the model's."""
    import re

    code, out, _ = run("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--count", "8")
    assert code == 0
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if "step: compute s" in line)
    assert "held to MFU s" in lines[head]
    compute, memory, comm, held = (float(x) for x in lines[head + 2].split()[:4])
    batch = float(re.search(r"global batch: ([\d,]+) tokens", out).group(1).replace(",", ""))
    e = json.loads(run("estimate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--count", "8", "--format", "json")[1])
    assert compute + memory + comm + held == pytest.approx(batch / e["tokens_per_s"], abs=5e-4)
    _, plain, _ = run("estimate", "--model", "gpt2-124m", "--gpu", "a100-80gb-sxm")
    assert "step: compute s  memory s  comm s  layout" in plain
