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


def test_a_serving_run_slower_than_one_request_at_a_time_is_refused(run, write):
    """A run at 1e-12 output tokens/s passed `gt=0`, sized replicas by the 1e15 and crashed HiGHS
    (IndexError, exit 1). A throughput run at full load beats its GPUs serving one request at a time
    (max_batch 1); below measured_factor_floor x that it is exit 2 at its field. A per-GPU figure
    entered for all 8 GPUs (800, tests/data/review19/serve_per_gpu_figure.yaml) is above it: still
    only questioned."""
    from advisor.perf.serving import load_params
    from advisor.perf.serving_estimate import serve_estimate

    floor = load_params().measured_factor_floor
    one = serve_estimate("llama-3.1-70b", "h100-sxm", 8, "fp8", 1000, 300, tensor_parallel=8, max_batch=1)[
        "output_tokens_per_s"
    ]
    full = serve_estimate("llama-3.1-70b", "h100-sxm", 8, "fp8", 1000, 300, tensor_parallel=8)["output_tokens_per_s"]
    assert 0 < one < full / 8 < 800  # one at a time is far below the batched rate, and below the per-GPU slip
    for rate in ("1e-12", "1e-300", f"{floor * one * 0.99:.6g}"):
        code, out, err = run("validate", write(SERVE_RUN.replace("RATE", rate)))
        assert code == 2 and not out, err
        assert "jobs[0].measured[0].output_tokens_per_s" in err and "Traceback" not in err
        assert f"({one:,.4g} at this shape)" in err and f"at least {floor * one:,.4g} ({floor:g}x" in err, err
    for rate in (f"{floor * one * 1.01:.6g}", "800"):
        code, _, err = run("validate", write(SERVE_RUN.replace("RATE", rate)))
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
    replicas = int(why["message"].split(" takes ")[1].split(" replicas")[0].replace(",", ""))  # whole replicas
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


def test_a_run_measured_below_one_token_a_second_is_quoted_as_written():
    """A training run entered as 1e-12 tokens/s is questioned in the plan ("implausibly slow"), but the
    doubt quoted it as "0 tokens/s ... (if 0 is per GPU, the run's is 0)", and a serving run at 0.001
    output tokens/s as "0 output tokens/s" (review21b #3): below 1 a speed keeps three significant digits."""
    from advisor.inputs.jobs import MeasuredServing
    from advisor.perf.jobspec import spec_from_flags
    from advisor.perf.measured import MeasuredSpeed, implausibly_slow
    from advisor.perf.serving_measured import label

    catalog = load_catalog()
    m = MeasuredSpeed("h100-sxm", 8, 1e-12, "2026-11-01", 0.05, None, figures=catalog.gpus["h100-sxm"])
    assert m.label().endswith(": 1e-12 tokens/s")
    spec = spec_from_flags(catalog, model="gpt2-124m")
    doubt = implausibly_slow(spec, m, 6 * 124e6, 0.1266) or ""
    assert "(if 1e-12 is per GPU, the run's is 8e-12)" in doubt, doubt
    run = MeasuredServing(gpu="h100-sxm", count=1, output_tokens_per_s=0.001, input_len=100, output_len=10)
    assert ": 0.001 output tokens/s" in label(run)
    assert ": 120,000 output tokens/s" in label(run.model_copy(update={"output_tokens_per_s": 120_000.4}))


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
    # the schema states the least the validator takes, not a rounding of it (0.0329 refused 0.03286)
    schema = json.loads(run("schema")[1])
    least = schema["$defs"]["Deployment"]["properties"]["horizon_months"]["minimum"]
    assert least == 24 / (8760 / 12) and run("validate", write(doc.format(repr(least))))[0] == 0
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
    assert f"hold {12 * 12 * 100_000**2:,} parameters" in err and "more than params (124,000,000)" in err, err
    assert run("validate", write(doc.format(768)))[0] == 0
    code, _, err = run("estimate", "--params", "124M", "--layers", "12", "--hidden", "100000", "--gpu", "h100-sxm")
    assert code == 2 and "--params: 12 layers of hidden 100,000" in err, err


def test_a_parameter_count_below_one_is_refused(run, write):
    """`estimate --params 1e-300` printed an estimate of a model with no parameter; the catalog already
    holds presets to at least 1 (data/bounds.MODEL_RANGES), and so now does a workload or a flag."""
    code, out, err = run("validate", write("deployment: cloud\nmodel: {params: 1e-300}\ntokens: 1B\n"))
    assert code == 2 and not out and "`model.params`: a parameter count of 1e-300 is below 1" in err, err
    code, _, err = run("estimate", "--gpu", "h100-sxm", "--params", "124M", "--active-params", "0.5")
    assert code == 2 and "--active-params: a parameter count of 0.5 is below 1" in err, err
