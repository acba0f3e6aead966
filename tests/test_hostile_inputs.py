"""Hostile inputs (hostile23): figures of the right type and sign that no workload has -- a training run
measured at 1e-12 tokens/s, a power limit, utilization, storage, goodput or spread of 1e-300 -- are
refused at the input (exit 2: the file, the line, the field, what is allowed and why), never planned
(exit 0 with the figure printed) or left to the solver (exit 3)."""

from __future__ import annotations

import json
import re

import pytest

from advisor.data.catalog import load_catalog
from advisor.inputs.quantities import (
    MIN_POWER_KW,
    MIN_REQUESTS_PER_S,
    MIN_SHARE,
    MIN_STORAGE_TB,
    MIN_TPOT_MS,
    MIN_TTFT_MS,
)

TRAIN_RUN = """\
deployment: {context: cloud, ownership: rent, horizon_months: 12}
model: gpt2-124m
tokens: 10B
measured:
  - {gpu: rtx-4090, count: 1, tokens_per_s: RATE, date: 2026-10-01}
"""


def _least_training_rate() -> tuple[float, float]:
    """(tokens/s, floor): the slowest figure that can be a run of gpt2-124m on one RTX 4090 in bf16 --
    the calibration set's lowest MFU (measured_mfu_floor) on one GPU, read as sequences/s of the
    preset's 1,024 tokens -- worked from the catalog's figures."""
    from advisor.perf.estimate import params_from
    from advisor.perf.jobspec import preset_spec
    from advisor.perf.training import mfu_flops_per_token

    catalog = load_catalog()
    model = preset_spec(catalog, "gpt2-124m")
    assert model.seq_len == 1024
    peak = catalog.gpus["rtx-4090"].dense_tflops("bf16") * 1e12
    floor = params_from(catalog).measured_mfu_floor
    return floor * peak / mfu_flops_per_token(model, "pretrain") / 1024, floor


def test_a_training_run_no_reading_makes_a_run_is_refused(run, write):
    """`measured: tokens_per_s: 1e-12` was only doubted, and the plan rented an RTX A6000 for 136 days
    on it (exit 0). Below the lowest published MFU even read as one GPU's sequences/s (Hugging Face's
    train_samples_per_second) it is exit 2 at its field, with the least it takes; a slow run above
    that (a single GPU at 1% MFU: below the published runs, but a run) is planned and doubted."""
    least, floor = _least_training_rate()
    assert 20 < least < 30  # 24 tokens/s: 0.012% MFU on one card
    for rate in ("1e-12", "1e-300", f"{least * 0.99:.6g}"):
        code, out, err = run("plan", write(TRAIN_RUN.replace("RATE", rate)), "--format", "json")
        assert code == 2 and not out, err
        assert "workload.yaml:5:45: `jobs[0].measured[0].tokens_per_s`: " in err and "Traceback" not in err, err
        assert (
            f"under {least:,.0f} tokens/s on 1 GPU no reading of it is a run" in err and f"({100 * floor:.1f}%)" in err
        )
    code, out, err = run("plan", write(TRAIN_RUN.replace("RATE", f"{least * 1.01:.6g}")), "--format", "json")
    assert code == 0, err
    codes = [w["code"] for w in json.loads(out)["warnings"]]
    assert "measurement-doubt" in codes


def test_calibrate_refuses_a_run_no_reading_makes_a_run(run, write, tmp_path):
    """`advisor calibrate` fitted a 1e-12 tokens/s run (framework_efficiency 1.8e-18 in the estimator it
    wrote): the same rule refuses it, naming the file, line and column."""
    rows = "gpu,count,tokens_per_s,model\nh100-sxm,8,400000,gpt2-1558m\nh100-sxm,8,1e-12,gpt2-1558m\n"
    out = tmp_path / "est.yaml"
    code, text, err = run("calibrate", write(rows, "runs.csv"), "-o", out)
    assert code == 2 and not text and not out.exists(), err
    assert "runs.csv, line 3, field tokens_per_s: 1e-12 tokens/s on 8 x h100-sxm is no run of this job" in err, err


DEPLOY = "deployment: {{context: datacenter, ownership: any, {field}: {value}}}\nmodel: gpt2-124m\ntokens: 1B\ndeadline: 7d\n"
JOB = "deployment: {{context: datacenter}}\nmodel: gpt2-124m\ntokens: 1B\ndeadline: 7d\n{field}: {value}\n"
SPREAD = (
    "deployment: {{context: datacenter}}\nmodel: gpt2-124m\ntokens: 1B\ndeadline: 7d\n"
    "measured:\n  - {{gpu: h100-sxm, count: 1, tokens_per_s: 300K, date: 2026-10-01, spread: {value}}}\n"
)
SERVE_SPREAD = (
    "deployment: {{context: cloud}}\nkind: serve\nmodel: llama-3.1-8b\n"
    "traffic: {{requests_per_s: 1, input_tokens: 100, output_tokens: 100}}\nmeasured:\n"
    "  - {{gpu: h100-sxm, count: 1, input_len: 100, output_len: 100, output_tokens_per_s: 5000, spread: {value}}}\n"
)
TRAFFIC = (
    "deployment: {{context: cloud}}\nkind: serve\nmodel: llama-3.1-8b\n"
    "traffic: {{{field}: {value}, input_tokens: 100, output_tokens: 100}}\n"
)
SLO = (
    "deployment: {{context: cloud}}\nkind: serve\nmodel: llama-3.1-8b\n"
    "traffic: {{requests_per_s: 1, input_tokens: 100, output_tokens: 100}}\nslo: {{{field}: {value}}}\n"
)
FINANCE = "deployment: {{context: datacenter}}\nfinance: {{utilization: {value}}}\nmodel: gpt2-124m\ntokens: 1B\n"


@pytest.mark.parametrize(
    "doc, field, least, allowed, schema_at",
    [
        (DEPLOY, "power_limit_kw", MIN_POWER_KW, "1 W: the least a GPU may draw", ("Deployment", "power_limit_kw")),
        (DEPLOY, "utilization", MIN_SHARE, "give at least 0.01", ("Deployment", "utilization")),
        (DEPLOY, "storage_tb", MIN_STORAGE_TB, "give 0 or at least 0.001", ("Deployment", "storage_tb")),
        (FINANCE, "utilization", MIN_SHARE, "give at least 0.01", ("Finance", "utilization")),
        (JOB, "goodput", MIN_SHARE, "give at least 0.01", ("Job", "goodput")),
        (SPREAD, "spread", MIN_SHARE, "give at least 0.01", ("Measurement", "spread")),
        (SERVE_SPREAD, "spread", MIN_SHARE, "give at least 0.01", ("MeasuredServing", "spread")),
        (TRAFFIC, "requests_per_s", MIN_REQUESTS_PER_S, "less than a request a day", ("Traffic", "requests_per_s")),
        # hostile25: 1e-300 ms was planned to "no GPU meets the latency limits" (exit 3), naming no field
        (SLO, "ttft_ms", MIN_TTFT_MS, "in whole milliseconds: a limit under 1 ms reads 0 ms", ("Slo", "ttft_ms")),
        (SLO, "tpot_ms", MIN_TPOT_MS, "to 0.1 ms: a limit under it reads 0.0 ms", ("Slo", "tpot_ms")),
    ],
)
def test_a_share_or_size_below_its_physical_floor_is_refused_as_the_schema_says(
    run, write, doc, field, least, allowed, schema_at
):
    """1e-300 was taken for each (a goodput of 1e-300 left no plan, exit 3, naming no field): each has a
    floor with its reason, and the schema states exactly that floor (the least it takes is valid)."""
    for value in ("1e-300", f"{least * 0.9:g}", "-1"):
        code, out, err = run("validate", write(doc.format(field=field, value=value)))
        assert code == 2 and not out, err
        assert re.match(r"error: \S*workload\.yaml:\d+:\d+: `\S*" + field + "`: ", err), err
        assert allowed in err or value == "-1", err  # (a negative power is refused by the unit parser's words)
    assert run("validate", write(doc.format(field=field, value=repr(least))))[0] == 0
    schema = json.loads(run("schema")[1])
    prop = schema["$defs"][schema_at[0]]["properties"][schema_at[1]]
    lower = [(k, v) for k, v in _walk(prop) if k in ("minimum", "exclusiveMinimum")]
    assert lower == [("minimum", least)], prop  # the validator's floor, and no looser bound beside it


def _walk(schema: object):
    """Every (key, value) of a JSON schema, nested anyOf branches included."""
    if isinstance(schema, dict):
        for k, v in schema.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from _walk(v)


def test_an_id_argument_of_any_length_is_refused_in_a_line(run):
    """`catalog show` and `rules show` echoed a 100,000-character id whole (100 KB on stderr): they check
    their id as every other id argument is (inputs/arguments.text: 1 to 200 characters)."""
    from advisor.inputs.arguments import MAX_TEXT

    for command in (("catalog", "show"), ("rules", "show")):
        code, out, err = run(*command, "a" * 100_000)
        assert code == 2 and not out and len(err) < 400, err[:400]
        assert f"`ID`: must be text of 1 to {MAX_TEXT} characters" in err and "(100,000 characters)" in err, err
        code, _, err = run(*command, "a" * MAX_TEXT)
        assert code == 2 and "unknown" in err  # within the limit: looked up, and not found


@pytest.mark.parametrize(
    "entry, allowed",
    [
        ("batch_tokens_by_params: []", "a list of at least one [parameters, global batch tokens] pair"),  # IndexError
        ("batch_tokens_by_params: [[1, 0]]", "each at least 1"),  # blamed the workload's global_batch_tokens
        ("batch_tokens_by_params: [[1000000000000000, 4194304], [1, 1]]", "in ascending parameters"),  # first won
        ("framework_efficiency: 0.9", "with a `default`"),  # AttributeError: a number has no .get
        ("no_p2p_factor: 0", "a share above 0 and at most 1"),  # ZeroDivisionError
        ("usable_memory_fraction: 0", "a share above 0 and at most 1"),  # no job fit: exit 3
        ("usable_memory_fraction: 5", "a share above 0 and at most 1"),  # five times the memory: planned
        ("comm_overlap: 5", "a share of the traffic hidden, from 0 to 1"),  # five times the traffic hidden: planned
    ],
)
def test_an_estimator_override_out_of_its_kind_is_refused_naming_the_override(run, write, entry, allowed):
    """`--catalog` estimator figures the checker took as 'any number at or above zero' crashed the plan
    (exit 1), left it without a GPU (exit 3), planned on them (exit 0) or blamed the workload: each is
    refused at the override's key, with what it takes."""
    override = write(f"estimator:\n  {entry}\n", "mine.yaml")
    workload = write("deployment: {context: datacenter}\nmodel: gpt2-124m\ntokens: 1B\ndeadline: 7d\ngpus: 8\n")
    code, out, err = run("plan", workload, "--catalog", override)
    key = entry.split(":")[0]
    assert (
        code == 2 and not out and re.search(rf"mine.yaml:\d+:\d+: `estimator.{key}` must be ", err) and allowed in err
    ), err


def test_a_default_batch_below_one_sequence_is_one_sequence_not_the_workloads_error(run, write):
    """review23a #1: `batch_tokens_by_params: [[1e15, 1]]` planned on a 1-token batch, then failed after
    the solve naming the workload's line 1 and a `global_batch_tokens` it never gave; a 1M-token context
    on gpt2-124m took the catalog's 524,288 tokens, half a sequence a step. A default batch is at least
    one sequence: the plan's layout says so."""
    override = write("estimator:\n  batch_tokens_by_params: [[1000000000000000, 1]]\n", "mine.yaml")
    workload = write("deployment: {context: datacenter}\nmodel: gpt2-124m\ntokens: 1B\ndeadline: 7d\ngpus: 8\n")
    code, out, err = run("plan", workload, "--catalog", override, "--format", "json")
    assert code == 0, err
    assert {j["layout"]["global_batch_tokens"] for j in json.loads(out)["jobs"]} == {1024}  # gpt2's sequence
    long = write(
        "deployment: {context: datacenter}\nmodel: gpt2-124m\nseq_len: 1048576\ntokens: 1B\ndeadline: 7d\ngpus: 8\n"
    )
    code, out, err = run("plan", long, "--format", "json")
    assert code == 0 and {j["layout"]["global_batch_tokens"] for j in json.loads(out)["jobs"]} == {1048576}, err


def test_a_memo_or_rfq_output_name_too_long_or_taken_is_refused_naming_it(run, write, tmp_path, monkeypatch):
    """`-o` with a 300-character name solved, then failed to write (OSError, exit 1): it is refused
    before any work, as a name of at most MAX_TEXT bytes. A chart of another memo with the same stem
    (a.md's a_files/ beside a.MD) was refused naming the workload's line 3 and the library's `force`:
    it names the chart and --force."""
    from advisor.inputs.arguments import MAX_TEXT

    monkeypatch.chdir(tmp_path)
    workload = write("deployment: {context: office, ownership: buy}\nmodel: gpt2-124m\ntokens: 1B\ndeadline: 7d\n")
    for command in ("memo", "rfq"):
        code, out, err = run(command, workload, "-o", "m" * 300 + ".md")
        assert code == 2 and not out and f"a file name of 303 bytes; give one of at most {MAX_TEXT}" in err, err
    assert run("memo", workload, "-o", "a.md")[0] in (0, 3)
    code, _, err = run("memo", workload, "-o", "a.MD")
    assert code == 2 and err.startswith("error: a_files/") and "already exists; pass --force" in err, err
    assert "workload.yaml" not in err


def test_a_preset_whose_layers_hold_more_than_its_params_is_refused(run, write):
    """A `--catalog` preset of 1,000 parameters in GPT-2's 12 layers of 768 planned its training in
    "0 GPU-hours" (a workload's own shape was refused so, hostile22; a preset was not): the catalog
    refuses it with the matrices' count, by the workload's formula (84,934,656 = 12 x 12 x 768^2)."""
    preset = (
        "{params: 1000, layers: 12, hidden: 768, heads: 12, kv_heads: 12, ffn: 3072, vocab: 50257, "
        "seq_len: 1024, tied_embeddings: true, source: [hf_gpt2_config]}"
    )
    override = write(f"models:\n  mine: {preset}\n", "mine.yaml")
    workload = write("deployment: {context: datacenter}\nmodel: mine\ntokens: 1B\ndeadline: 7d\n")
    code, out, err = run("plan", workload, "--catalog", override)
    assert code == 2 and not out and re.search(r"mine.yaml:\d+:\d+: models entry .mine.", err), err
    assert f"hold {12 * 12 * 768**2:,} parameters in their matrices alone, more than params (1,000)" in err, err
    fine = write(f"models:\n  mine: {preset.replace('1000', '124439808', 1)}\n", "fine.yaml")  # GPT-2 124M's own
    assert run("plan", workload, "--catalog", fine)[0] == 0


def test_a_compare_price_outside_a_catalog_purchase_range_is_refused(run):
    """`compare --price h100-sxm=1e-300` printed "$0.00", "infT" tokens/s per $1k and a 300-digit "price x"
    (exit 0): a price is held to the range a catalog's purchase price is (data/bounds.PURCHASE_USD)."""
    from advisor.data.bounds import PURCHASE_USD

    lo, hi, _ = PURCHASE_USD
    for price in ("1e-300", f"{lo / 2:g}", f"{hi * 2:g}"):
        code, out, err = run("compare", "h100-sxm", "--price", f"h100-sxm={price}")
        assert code == 2 and not out, err
        assert f"--price: h100-sxm's price must be from ${lo:,.0f} to ${hi:,.0f}, as a catalog's" in err, err
    assert run("compare", "h100-sxm", "--price", f"h100-sxm={lo:g}")[0] == 0


def test_serving_traffic_under_a_request_a_day_is_refused_before_the_solver(run, write):
    """1e-10 requests/s sat under HiGHS's tolerance: no replica "held" it and the plan failed (exit 1,
    ValueError in the sensitivity; 1e-6: "a plan that breaks a hard constraint"); a mix class of share
    1e-300 was planned with no replica at all (exit 0). Both are refused at the traffic (exit 2), and a
    request a day is planned with replicas."""
    doc = "deployment: {{context: cloud}}\nkind: serve\nmodel: llama-3.1-8b\ntraffic: {{{traffic}}}\n"
    for traffic in (
        "requests_per_s: 1e-10, input_tokens: 100, output_tokens: 100",
        "requests_per_s: 1e-6, input_tokens: 100, output_tokens: 100",
    ):
        code, out, err = run("plan", write(doc.format(traffic=traffic)), "--format", "json")
        assert code == 2 and not out and "`traffic.requests_per_s`: " in err, err
    mix = "requests_per_s: 1, mix: [{input_tokens: 100, output_tokens: 100, share: 1e-300}, {input_tokens: 10, output_tokens: 10, share: 1}]"
    code, out, err = run("plan", write(doc.format(traffic=mix)), "--format", "json")
    assert code == 2 and "`traffic`: mix[0] (share 1e-300 of 1 requests/s)" in err, err
    day = f"requests_per_s: {MIN_REQUESTS_PER_S!r}, input_tokens: 100, output_tokens: 100"
    code, out, err = run("plan", write(doc.format(traffic=day)), "--format", "json")
    assert code == 0 and json.loads(out)["serving"], err


def test_a_largest_order_seen_states_its_evidence(run, write):
    """`largest_order_seen` with an empty note passed (the order size an offer's rate is evidenced at,
    with no words of the sources behind it); gpus of 0, -5 or 1e300, a missing or empty source were
    already refused. Each names the offer's field."""
    offer = (
        '{provider: X, usd_per_gpu_hour: 2.0, as_of: "2026-09-20", pricing: on_demand, tier: neocloud, '
        "confidence: medium, gpus_per_node: 8, fabric: {kind: null, note: n}, source: [sfc_docs], "
        "largest_order_seen: SEEN}"
    )
    field = "prices.rent[0].largest_order_seen"
    for seen, says in (
        ("{gpus: 100, source: [sfc_docs], note: ''}", f"{field}.note: String should have at least 1 character"),
        ("{gpus: 0, source: [sfc_docs], note: n}", f"{field}.gpus: Input should be greater than or equal to 1"),
        ("{gpus: 100, note: n}", f"{field}.source: Field required"),
    ):
        override = write(
            f"gpus:\n  - id: h100-sxm\n    prices:\n      rent:\n        - {offer.replace('SEEN', seen)}\n"
        )
        code, out, err = run("catalog", "validate", override)
        assert code == 2 and says in err, err


@pytest.mark.parametrize(
    "field, given",
    [("deployment.utilization", "0.009996"), ("traffic.requests_per_s", "1.1574e-05")],
)
def test_a_figure_under_its_floor_is_shown_as_given_and_the_least_printed_passes(run, write, field, given):
    """review23a #2: the refusal rounded the given figure to three digits ("0.01 is below 0.01",
    "1.16e-05 is below 1.15741e-05"). It shows the figure as given, and the least it prints is one the
    check takes (checked by `advisor validate` with it)."""

    def doc(figure: str) -> str:
        util, rate = (f", utilization: {figure}", "1") if field == "deployment.utilization" else ("", figure)
        return (
            f"deployment: {{context: cloud{util}}}\nkind: serve\nmodel: llama-3.1-8b\n"
            f"traffic: {{requests_per_s: {rate}, input_tokens: 100, output_tokens: 100}}\n"
        )

    code, _, err = run("validate", write(doc(given)))
    assert code == 2 and f"`{field}`: {given} is below " in err, err
    least = re.search(r"give at least ([0-9.e+-]+)", err).group(1)
    code, _, err = run("validate", write(doc(least)))
    assert code == 0, err


def test_a_per_gpu_run_below_any_reading_names_its_own_column(run, write):
    """review23a #5: a RUNS.csv speed given per GPU and below any reading was refused under
    `field tokens_per_s`, a column the file does not have, with the figure times the count: it names
    the column as written and the figure the row gives."""
    runs = write("gpu,gpu_count,tokens_per_s_per_gpu,model\nh100-sxm,8,1e-13,gpt2-1558m\n", "runs.csv")
    code, out, err = run("calibrate", runs, "-o", str(runs.with_suffix(".yaml")))
    assert code == 2 and "runs.csv, line 2, field tokens_per_s_per_gpu (1e-13 per GPU x 8): " in err, err


def test_a_mix_whose_classes_share_a_name_is_refused(run, write):
    """Two classes named `a` (100 and 4,000 prompt tokens) were planned as two serving rows both named
    chat/a: a script reading the plan's serving rows by class could not tell them apart."""
    doc = (
        "deployment: {context: cloud}\njobs:\n  - {name: chat, kind: serve, model: llama-3.1-8b, traffic: "
        "{requests_per_s: 5, mix: [{name: a, input_tokens: 100, output_tokens: 50, share: 0.5}, "
        "{name: a, input_tokens: 4000, output_tokens: 500, share: 0.5}]}}\n"
    )
    code, out, err = run("validate", write(doc))
    assert code == 2 and "`jobs[0].traffic`: the names of the mix's classes must be unique; repeated: a" in err, err
