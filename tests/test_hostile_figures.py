"""Hostile figures (hostile22): numbers that pass their field's type and sign but are no real workload
-- a serving run measured at 1e-12 tokens/s, traffic that takes a hundred million GPUs, a global batch
of one token, a horizon of a thousandth of a month -- are refused at the input (exit 2, the field and
the allowed bound, the bound from the catalog or the model) or leave no plan (exit 3, saying why),
never a solver crash (exit 1) or a plan that prints them."""

from __future__ import annotations

import json

import yaml
from conftest import AS_OF

import advisor
from advisor.data.catalog import load_catalog

SERVE_RUN = """\
deployment: {context: datacenter, ownership: rent, horizon_months: 12}
jobs:
  - name: s
    kind: serve
    model: llama-3.1-70b
    precision: fp8
    traffic: {requests_per_s: 10, input_tokens: 1000, output_tokens: 300}
    measured:
      - {gpu: h100-sxm, count: 8, tensor_parallel: 8, input_len: 1000, output_len: 300, output_tokens_per_s: RATE}
"""


def test_a_serving_run_too_slow_even_per_gpu_is_refused_with_the_floor_it_misses(run, write):
    """A run at 1e-12 output tokens/s passed `gt=0`, sized replicas by the 1e15 and crashed HiGHS
    (IndexError, exit 1). Below measured_factor_floor x the model at the run's own shape / count (a
    per-GPU figure entered for all 8 GPUs is still questioned, not refused) it is exit 2 at its field."""
    from advisor.perf.serving import load_params
    from advisor.perf.serving_estimate import estimate_serving

    floor = load_params().measured_factor_floor
    model = estimate_serving(
        gpu="h100-sxm",
        count=8,
        model="llama-3.1-70b",
        precision="fp8",
        input_len=1000,
        output_len=300,
        tensor_parallel=8,
    )["output_tokens_per_s"]
    least = floor * model / 8
    for rate in ("1e-12", "1e-300", f"{least * 0.99:.6g}"):
        code, out, err = run("validate", write(SERVE_RUN.replace("RATE", rate)))
        assert code == 2 and not out, err
        assert "jobs[0].measured[0].output_tokens_per_s" in err and "Traceback" not in err
        assert f"at least {least:,.4g}" in err and f"{floor:g}x" in err, err
    code, _, err = run("validate", write(SERVE_RUN.replace("RATE", f"{least * 1.01:.6g}")))
    assert code == 0, err


def test_traffic_that_takes_more_gpus_than_any_cluster_leaves_no_plan_saying_so():
    """10M requests/s at a peak factor of 100 printed a plan renting 144,600,000 H100s (and a run at
    1e-12 tokens/s crashed the solver on the same count): a replica layout that takes more GPUs than
    the largest clusters hold (inputs.quantities.MAX_GPUS) is not offered, and the plan says why."""
    from advisor.inputs.quantities import MAX_GPUS

    doc = yaml.safe_load(
        """\
deployment: {context: cloud, ownership: rent, horizon_months: 1}
kind: serve
model: llama-3.1-8b
traffic: {requests_per_s: 1e7, input_tokens: 1000, output_tokens: 1000, peak_factor: 100}
gpus: {allow: [h100-sxm]}
"""
    )
    d = json.loads(advisor.plan(doc, as_of=AS_OF, explain="none").to_json())
    assert d["status"] == "infeasible" and not d["serving"]
    (why,) = [r for g in d["rejected"] if g["gpu"] == "h100-sxm" for r in g["reasons"]]
    assert why["code"] == "too-many-gpus" and f"{MAX_GPUS:,} GPUs" in why["message"]
    replicas = float(why["message"].split(" takes ")[1].split(" replicas")[0])
    rate = float(why["message"].split(" at ")[1].split(" a replica")[0])
    assert replicas > MAX_GPUS and abs(replicas * rate / 1e9 - 1) < 0.01  # 1e9 requests/s at the peak


def test_a_global_batch_below_one_sequence_is_refused_with_the_models_seq_len(run, write):
    """`global_batch_tokens: 1` was planned silently at a batch of whole sequences (16,384 tokens):
    a step takes whole sequences, so anything below the model's seq_len (gpt2-124m's 1,024, or the
    job's own seq_len) is exit 2 at the field as written (line 3 of a one-job workload), and so is
    `advisor estimate --global-batch-tokens 1`; one sequence is accepted."""
    seq = load_catalog().models["gpt2-124m"].seq_len
    base = "deployment: cloud\nmodel: gpt2-124m\nglobal_batch_tokens: {}\ntokens: 1B\n"
    code, out, err = run("validate", write(base.format(1)))
    assert code == 2 and not out
    assert ":3:22: `jobs[0].global_batch_tokens`" in err and f"at least {seq:,}" in err, err
    code, _, err = run("validate", write(base.format(1024) + "seq_len: 2048\n"))
    assert code == 2 and "at least 2,048" in err, err
    assert run("validate", write(base.format(seq)))[0] == 0
    code, out, err = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm", "--global-batch-tokens", "1")
    assert code == 2 and "--global-batch-tokens: a global batch of 1 tokens" in err and f"at least {seq:,}" in err, err


def test_a_training_run_too_slow_even_per_gpu_is_refused_with_the_mfu_floor(run, write):
    """A training run at 1e-12 tokens/s was planned on, with a doubt printing "0 tokens/s": below the
    lowest MFU of the published runs (measured_mfu_floor) even as one GPU's figure for all `count`, it is
    exit 2 at its field; a run at that MFU on one GPU of 8 (per-GPU figure) is still only questioned."""
    from advisor.perf.estimate import params_from
    from advisor.perf.jobspec import spec_from_flags
    from advisor.perf.training import mfu_flops_per_token

    catalog = load_catalog()
    floor = params_from(catalog).measured_mfu_floor
    spec = spec_from_flags(catalog, model="gpt2-124m")
    peak = catalog.gpus["h100-sxm"].dense_tflops("bf16") * 1e12
    least = floor * peak / mfu_flops_per_token(spec.model, spec.kind)  # tokens/s of one H100 at the floor's MFU
    doc = "deployment: cloud\nmodel: gpt2-124m\ntokens: 1B\nmeasured:\n  - {{gpu: h100-sxm, count: {}, tokens_per_s: {}, date: 2026-11-01}}\n"
    for count, rate in ((1, "1e-12"), (1, f"{least * 0.99:.6g}"), (8, f"{least * 0.99:.6g}")):
        code, out, err = run("validate", write(doc.format(count, rate)))
        assert code == 2 and not out, err
        assert ":5:" in err and "`jobs[0].measured[0].tokens_per_s`" in err and f"{100 * floor:.1f}% MFU" in err, err
        assert f"at least {least:,.4g}" in err, err
    assert run("validate", write(doc.format(8, f"{least * 1.01:.6g}")))[0] == 0


def test_a_horizon_or_serving_period_under_a_day_is_refused(run, write):
    """A 0.001-month horizon (44 minutes) planned "0 GPU-hours" finishing "within the 0.001-month horizon
    (0 days)": a horizon or a serving job's `months` shorter than a day is exit 2, naming the field and
    the least allowed; a day is accepted."""
    from advisor.inputs.quantities import MIN_MONTHS

    doc = "deployment: {{context: cloud, horizon_months: {}}}\nmodel: gpt2-124m\ntokens: 1M\n"
    code, out, err = run("validate", write(doc.format(0.001)))
    assert code == 2 and not out and "`deployment.horizon_months`" in err, err
    assert f"at least {MIN_MONTHS:.3f} months (one day)" in err, err
    assert run("validate", write(doc.format(0.033)))[0] == 0
    serve = (
        "deployment: {context: cloud}\nkind: serve\nmodel: llama-3.1-8b\nmonths: 0.01\n"
        "traffic: {requests_per_s: 1, input_tokens: 100, output_tokens: 100}\n"
    )
    code, _, err = run("validate", write(serve))
    assert code == 2 and ":4:9: `months`" in err and "(one day)" in err, err


def test_a_global_batch_above_the_jobs_tokens_is_refused(run, write):
    """`global_batch_tokens: 1e15` on a 5B-token job was planned as if the job finished (less than one
    optimizer step): more than the job's tokens is exit 2 at the field. `advisor estimate`, which has
    no token budget, still takes any batch up to the tool's 1e15."""
    code, out, err = run(
        "validate", write("deployment: cloud\nmodel: gpt2-124m\nglobal_batch_tokens: 2B\ntokens: 1B\n")
    )
    assert code == 2 and not out and ":3:22: `global_batch_tokens`" in err and "at most its tokens" in err, err
    assert run("validate", write("deployment: cloud\nmodel: gpt2-124m\nglobal_batch_tokens: 1B\ntokens: 1B\n"))[0] == 0
    code, _, err = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm", "--global-batch-tokens", "2B")
    assert code == 0, err


def test_a_shape_whose_layers_hold_more_than_its_params_is_refused(run, write):
    """`{params: 124M, layers: 12, hidden: 100000}` was estimated as "0.124B params" at a speed set by
    its 1.4T-parameter layers: when the blocks' matrices alone (ModelSpec.block_params, worked here by
    hand: 12 x 12 x hidden^2 for a plain MLP of 4 x hidden) hold more than `params`, it is exit 2 at the
    model, in a workload and in estimate's flags; GPT-2 124M's own shape is accepted."""
    doc = "deployment: cloud\nmodel: {{params: 124M, layers: 12, hidden: {}}}\ntokens: 1B\n"
    code, out, err = run("validate", write(doc.format(100_000)))
    assert code == 2 and not out and ":2:8: `jobs[0].model`" in err, err
    assert f"hold {12 * 12 * 100_000**2 / 1e9:,.4g}B parameters" in err and "more than the 0.124B given" in err, err
    assert run("validate", write(doc.format(768)))[0] == 0
    code, _, err = run("estimate", "--params", "124M", "--layers", "12", "--hidden", "100000", "--gpu", "h100-sxm")
    assert code == 2 and "--params: 12 layers of hidden 100,000" in err, err
