"""Fuzzing `advisor plan` with random workload documents (hypothesis).

Each document starts from the fields of a real workload; every field is left out, given a sensible
value or given anything at all (NaN, huge integers, nested lists, text, null, mappings), unknown keys
and keys that are not text are added, and the YAML text itself may then be cut, spliced with tabs,
anchors, tags, NUL bytes or control characters. Whatever comes in, the CLI must exit 0, 2 or 3: a
plan, a clear error naming the file, or a diagnosis; never a traceback or an internal error.
The documents hold training and serving jobs (request mixes, SLOs), economics fields, rental kinds
and confidence levels; wild ones give those fields the hostile values of HOSTILE. Sane documents go
through the library at explanation level "none" (check_light), a fifth as many through the CLI with
every explanation (check); every plan passes the hard-constraint check inside plan().

Marked slow (`pytest -m "not slow"` skips them). Their example counts follow the hypothesis profile
(tests/conftest.py: "ci" by default, derandomized, 40 + 10 documents; HYPOTHESIS_PROFILE=long for
thousands); bench/fuzz.py runs 10,000 (results in docs/fuzz.md).
"""
from __future__ import annotations

import re

import collections
import datetime as dt
import json
import os
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import AS_OF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.cli import main

GPUS = ["rtx-4090", "a100-80gb-sxm", "h100-sxm", "l4", "mi300x", "h20"]   # ids the catalog may lack, too
PRESETS = ["gpt2-124m", "gpt2-350m", "gpt2-774m", "llama-3-8b"]
NASTY_TEXT = ["", " ", "10B", "1e400", "-5", "0", "nan", "inf", "-inf", "7d", "0h", "3.6kW", "1,000", "1_0B",
              "10 B", "$30K", "h100-sxm", "H100", "office", "gpt2-124m", "yes", "null", "~", "[", "{a: 1}",
              "ünïcødé", "\u202e", "x" * 300, "%s%n", "${HOME}", "$(rm -rf /)", "`id`", "__import__('os')"]

leaves = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-10, max_value=10**6), st.integers(), st.sampled_from([10**40, -(10**400), 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(NASTY_TEXT), st.text(max_size=12),
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
)
anything = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)


# gpt2-124m serves at most 1,024 tokens of context; the last is no preset (a near miss)
SERVE_MODELS = ["llama-3.1-8b", "llama-2-7b", "mixtral-8x7b", "llama-3.1-70b", "gpt2-124m", "llama-3.1-8"]
RENT_KINDS = ["on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block"]
# Values each new field must refuse by name (issue 20 item 7), mixed into wild cases beside `anything`.
HOSTILE = {
    "confidence": [0, 1, 1.5, -0.2, 0.49, "high", "80%", "P80", True, None, [0.8]],
    "share": [0, -0.5, 1.2, "half", None, True],
    "rate": [0, -3, "fast", "40/s", 1e300, True],
    "tokens_per_request": [0, -1, 2.5, "long", 10**40, True],
    "ms": [0, -100, "2s", True, 1e300],
    "percentile": [0, 49, 100, 150, "p99", True],
    "fraction": [-0.1, 1.5, 0, "10%", True, None],
    "rent_kinds": [[], ["on-demand"], ["reserved"], ["spot", "spot"], "spot", [None], [1]],
}


def workloads(wild: bool):
    """Workload documents; with `wild`, any field may hold anything at all."""
    def field(good, hostile: str | None = None):
        if not wild:
            return good
        bad = [anything] + ([st.sampled_from(HOSTILE[hostile])] if hostile else [])
        return st.one_of(good, good, *bad)

    def fields(required: dict, optional: dict):
        return st.fixed_dictionaries({k: field(v) for k, v in required.items()},
                                     optional={k: field(v) for k, v in optional.items()})

    model = st.one_of(st.sampled_from(PRESETS), fields(
        {"params": st.sampled_from(["124M", "350M", "1.3B", "7B", 5e8])},
        {"layers": st.integers(1, 96), "hidden": st.sampled_from([768, 1024, 4096]),
         "seq_len": st.sampled_from([512, 1024, 2048]), "heads": st.sampled_from([12, 16, 32])}))
    job = {"model": model, "tokens": st.sampled_from(["100M", "1B", "10B", "50B", 2e9])}
    job_optional = {
        "name": st.sampled_from(["pretrain", "finetune", "a", "b"]),
        "kind": st.sampled_from(["pretrain", "finetune", "lora"]),
        "precision": st.sampled_from(["bf16", "fp16", "fp8"]),
        "deadline": st.sampled_from(["12h", "1d", "3d", "7d", "2w", "30d"]),
        "micro_batch": st.sampled_from([1, 4, 16]),
        "checkpointing": st.booleans(),
        "global_batch_tokens": st.sampled_from(["512K", "1M", "4M"]),
        "seq_len": st.sampled_from([1024, 2048]),
        "optimizer": st.sampled_from(["adamw", "adamw-8bit"]),
        "repeat": st.sampled_from([1, 2, 12]),
    }
    # serving jobs (issue 17): one request size or a mix whose shares sum to 1, a latency SLO
    request = {"input_tokens": field(st.sampled_from([200, 1000, 12000]), "tokens_per_request"),
               "output_tokens": field(st.sampled_from([100, 250, 800]), "tokens_per_request")}
    shares = st.sampled_from([[1.0], [0.8, 0.2], [0.5, 0.3, 0.2]] + ([[0.5, 0.4], [0.7, 0.7]] if wild else []))
    mix = shares.flatmap(lambda ss: st.tuples(*[st.fixed_dictionaries(
        {**request, "share": field(st.just(s), "share")}, optional={"name": st.sampled_from(["chat", "docs"])})
        for s in ss]).map(list))
    traffic = st.one_of(
        st.fixed_dictionaries({"requests_per_s": field(st.sampled_from([0.5, 4, 40]), "rate"), **request},
                              optional={"peak_factor": field(st.sampled_from([1, 1.5, 3]))}),
        st.fixed_dictionaries({"requests_per_s": field(st.sampled_from([0.5, 4, 40]), "rate"), "mix": field(mix)},
                              optional={"peak_factor": field(st.sampled_from([1, 1.5, 3]))}))
    slo = st.fixed_dictionaries({}, optional={
        "ttft_ms": field(st.sampled_from([500, 2000, 10000]), "ms"),
        "tpot_ms": field(st.sampled_from([20, 60, 200]), "ms"),
        "percentile": field(st.sampled_from([50, 90, 99, 99.9]), "percentile")})
    serve_job = fields({"kind": st.just("serve"), "model": st.sampled_from(SERVE_MODELS), "traffic": traffic},
                       {"name": st.sampled_from(["chat", "api"]), "precision": st.sampled_from(["bf16", "fp8", "int4"]),
                        "slo": slo, "months": st.sampled_from([3, 12]),
                        "off_peak_training_hours": st.sampled_from([0, 8])})
    deployment = st.one_of(st.sampled_from(["office", "datacenter", "cloud"]), fields(
        {"context": st.sampled_from(["office", "datacenter", "cloud"])},
        {"region": st.sampled_from(["US", "DE", "CN", "us", "ZZ", "USA", "\u0423\u0405", "\uff35\uff33", "HK"]),
         "ownership": st.sampled_from(["buy", "rent", "any"]),
         "power_limit_kw": st.sampled_from([3.6, "1500W", "2kW", 50]), "electricity_usd_per_kwh": st.just(0.15),
         "pue": st.sampled_from([1.1, 1.5]), "hosting_usd_per_kw_month": st.just(150.0),
         "horizon_months": st.sampled_from([12, 36]),
         # economics and rental kinds (issue 14)
         "rent_kinds": field(st.lists(st.sampled_from(RENT_KINDS), min_size=1, max_size=3, unique=True), "rent_kinds"),
         "utilization": field(st.sampled_from([0.2, 0.7, 1.0]), "fraction"),
         "storage_tb": st.sampled_from([0, 10, 500]), "liquid_cooling": st.booleans()}))
    finance = st.fixed_dictionaries({}, optional={
        "discount_rate": field(st.sampled_from([0, 0.05, 0.1, 0.3]), "fraction"),
        "utilization": field(st.sampled_from([0.3, 0.7, 1.0]), "fraction")})
    gpus = st.one_of(st.integers(1, 16), fields({}, {
        "count": st.integers(1, 16), "min": st.integers(1, 8), "max": st.integers(1, 64),
        "allow": st.lists(st.sampled_from(GPUS), min_size=1, max_size=3, unique=True),
        "deny": st.lists(st.sampled_from(GPUS), max_size=2, unique=True)}))
    top = {"confidence": field(st.sampled_from([0.5, 0.8, 0.9, 0.99]), "confidence"), "finance": field(finance)}
    return st.one_of(
        fields({"deployment": deployment, **job},
               {"name": st.just("fuzz"), "gpus": gpus, "budget_usd": st.sampled_from([5000, "50K", "$1M"]),
                **job_optional, **top}),
        fields({"deployment": deployment, "jobs": st.lists(fields(job, job_optional), min_size=1, max_size=3)},
               {"gpus": gpus, "budget_usd": st.sampled_from([20000, "200K"]), **top}),
        fields({"deployment": deployment,
                "jobs": st.lists(st.one_of(serve_job, fields(job, job_optional)), min_size=1, max_size=2)},
               {"gpus": gpus, "budget_usd": st.sampled_from([20000, "200K", "$2M"]), **top}),
    )


odd_keys = st.dictionaries(st.one_of(st.sampled_from(["deadlin", "gpu", "modle", "jobs ", "Deployment"]),
                                     st.integers(), st.booleans(), st.none(), st.text(max_size=6)),
                           anything, max_size=2)
SPLICES = ["\t", ": ", "- ", "&a ", "*a", "*nope", "<<: *a\n", "!!python/object/apply:os.system ['id'] ",
           "!custom ", "\x00", "\x07", "\ufeff", "\n---\n", "{", "]", "'", '"', "#", "\n  ", "? ", "%YAML 1.1\n"]
edits = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPLICES + ["<cut>"])), max_size=3)


def render(doc: dict, extra: dict, cuts: list) -> bytes:
    """The document as YAML text, with `extra` keys added and `cuts` applied to the text."""
    text = yaml.safe_dump({**doc, **extra}, allow_unicode=True, sort_keys=False, width=10**6)
    for position, splice in cuts:
        at = position % (len(text) + 1)
        text = text[:at] + text[at + 1 + position % 7:] if splice == "<cut>" else text[:at] + splice + text[at:]
    return text.encode("utf-8", "surrogatepass")


exit_codes: collections.Counter = collections.Counter()


def check(data: bytes) -> int:
    """Run `advisor plan` on `data`; assert the exit contract. Returns the exit code."""
    fd, name = tempfile.mkstemp(prefix="advisor-fuzz-", suffix=".yaml")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        result = CliRunner().invoke(main, ["plan", name, "--format", "json", "--as-of", str(AS_OF),
                                           "--time-limit", "10"])
    finally:
        path.unlink()
    out, err = result.stdout, result.stderr
    exit_codes[result.exit_code] += 1
    assert result.exit_code in (0, 2, 3), f"exit {result.exit_code}: {err or result.exception!r}"
    assert "Traceback" not in out + err and "internal error" not in err
    if result.exit_code == 2:   # one line per mistake, each naming the file
        assert err and out == "" and all(re.match(rf"error: {re.escape(str(path))}(:\d+:\d+)?: ", line)
                                         for line in err.splitlines()), err
    else:
        assert (json.loads(out)["status"] == "infeasible") == (result.exit_code == 3)
    return result.exit_code


_LOADED: list = []


def check_light(data: bytes) -> int:
    """The library path at explanation level "none" (bench/fuzz.py runs most examples so, since the
    explanations are not what is fuzzed): load, plan, JSON. InputError is exit 2, a plan without a
    feasible solution exit 3; anything else raises (a failure), including a plan refused by the
    hard-constraint check (solve/verify.py, ConstraintViolation). Returns the exit code."""
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.errors import InfeasibleError, InputError
    from advisor.inputs.workload import load_workload
    from advisor.flow import plan

    if not _LOADED:
        _LOADED.extend([load_catalog(), load_rules()])
    fd, name = tempfile.mkstemp(prefix="advisor-fuzz-", suffix=".yaml")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            workload = load_workload(name)
        except InputError as exc:
            assert exc.file == name and re.match(rf"{re.escape(name)}(:\d+:\d+)?: ", str(exc)), str(exc)
            code = 2
        else:
            try:
                p = plan(workload, catalog=_LOADED[0], rules=_LOADED[1], as_of=AS_OF, explain="none", time_limit=10)
            except InputError as exc:   # found against the catalog (a GPU id it lacks): names the field
                assert str(exc), repr(exc)
                code = 2
            except InfeasibleError:
                code = 3
            else:
                code = 0 if p.feasible else 3
                assert json.loads(p.to_json())["status"] == p["status"]
                if p.feasible and workload.budget_usd is not None:   # verify.py's check, seen from outside
                    assert p["total_cost_usd"] <= workload.budget_usd * (1 + 1e-7) + 0.01, p["total_cost_usd"]
    finally:
        Path(name).unlink()
    exit_codes[code] += 1
    return code


# A case is (document, extra keys, text edits): wild ones test the error paths; sane ones, with sensible
# values only, are mostly valid, so that the plan path itself (estimate, rules, MILP, explanations) is fuzzed.
wild = st.tuples(workloads(wild=True), odd_keys, edits)
sane = st.tuples(workloads(wild=False), st.just({}), st.just([]))
FUZZ = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


# CI's share of the fuzzing stays small ("ci" profile, 25: 40 wild and 10 sane documents, about a
# minute of CPU, so the whole CI fits in 10 minutes on a busy 2-core machine); the long runs are
# HYPOTHESIS_PROFILE=long (3,200 and 800) and bench/fuzz.py (10,000).
WILD_EXAMPLES = settings.default.max_examples * 8 // 5
SANE_EXAMPLES = settings.default.max_examples * 2 // 5


@pytest.mark.slow
@settings(max_examples=WILD_EXAMPLES, **FUZZ)
@given(case=wild)
def test_random_workloads_exit_0_2_or_3_never_a_traceback(case):
    check(render(*case))


@pytest.mark.slow
@settings(max_examples=SANE_EXAMPLES, **FUZZ)
@given(case=sane)
def test_well_formed_random_workloads_reach_the_solver(case):
    check_light(render(*case))   # the library at explanation level "none": the plan path, not the explanations


@pytest.mark.slow
@settings(max_examples=max(2, settings.default.max_examples // 5), **FUZZ)
@given(case=sane)
def test_well_formed_random_workloads_with_every_explanation(case):
    check(render(*case))
