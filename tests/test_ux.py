"""Issue 18: the tool as a working user meets it -- schema, all errors at once, terminal-fitted
tables, streams and formats, fast start-up, the Python API."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from conftest import AS_OF, EXAMPLES, ROOT

import advisor
from advisor.cli import main
from advisor.errors import InputError

MALFORMED = sorted((Path(__file__).parent / "malformed").glob("wl-*.yaml"))
# Valid for a schema; refused by the loader for a reason listed in advisor.inputs.schema.LOADER_ONLY
# (bounds after units are read, cross-field rules, YAML hygiene).
LOADER_ONLY = {
    # bounds that apply once units are read (10B, $30K, 1e400, a 4,000-digit number read as text)
    "wl-tokens-tiny.yaml",
    "wl-tokens-absurd.yaml",
    "wl-tokens-1e400.yaml",
    "wl-tokens-10pow4000.yaml",
    "wl-budget-10pow5000.yaml",
    "wl-budget-absurd.yaml",
    # NaN and infinity: YAML has them, JSON (and so JSON Schema) does not
    "wl-tokens-nan.yaml",
    "wl-params-nan.yaml",
    "wl-pue-nan.yaml",
    "wl-power-inf.yaml",
    "wl-deadline-inf.yaml",
    "wl-confidence-nan.yaml",
    "wl-finance-discount-nan.yaml",
    # rules across fields
    "wl-min-above-max.yaml",
    "wl-cloud-buy.yaml",
    "wl-duplicate-job-names.yaml",
    # traffic: sizes or a mix (one of the two), mix shares summing to 1
    "wl-serve-mix-and-sizes.yaml",
    "wl-serve-mix-shares-sum.yaml",
    "wl-serve-traffic-sizes-missing.yaml",
}


@pytest.fixture(scope="module")
def validator():
    code_out = CliRunner().invoke(main, ["schema"])
    assert code_out.exit_code == 0
    schema = json.loads(code_out.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def readme_workloads() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```yaml\n(.*?)```", text, re.S)


def test_schema_names_itself_and_speaks_to_people(validator):
    s = validator.schema
    assert s["$schema"].startswith("https://json-schema.org/") and s["$id"]
    deployment = s["$defs"]["Deployment"]["properties"]
    assert deployment["electricity_usd_per_kwh"]["title"] == "Electricity price"
    assert "rtx-4090" in json.dumps(s) and "gpt2-124m" in json.dumps(s)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_validates_against_the_schema(validator, path):
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8")))]
    assert errors == []


def test_every_readme_workload_validates_against_the_schema(validator):
    snippets = readme_workloads()
    assert snippets
    for text in snippets:
        assert [e.message for e in validator.iter_errors(yaml.safe_load(text))] == []


SPELLINGS = {  # field: strings people write, some the parsers take and some they refuse
    "deadline": [
        "90min",
        "90 minutes",
        "1 Minute",
        "36h",
        "36 Hours",
        "7d",
        "30 days",
        "2w",
        "1,000h",
        "1.5e2 h",
        " 7d ",
        "7",
        "7 m",
        "7 months",
        "7dd",
        "d7",
        ".5d",
        "7 d ays",
        "-7d",
        "7 sec",
        "7 MIN",
        "7 Min",
        "7d,",
        "_7d",
        "1.,5h",
        "1__000h",
    ],
    "tokens": [
        "10B",
        "10 billion",
        "10k",
        "10K",
        "1.5e9",
        "1,000,000",
        "1_000",
        "100",
        "10 Bn",
        "10 KB",
        "B10",
        "10 bytes",
        "ten",
        "-5",
        "1e",
        "1,000",
        "10B,",
        ",10B",
        "1,,000",
    ],
    "power_limit_kw": ["3.6", "3.6kW", "1500 W", "2 megawatts", "3.6 KW", "3.6 kWh", "kW3", "1,500W"],
}


@pytest.mark.parametrize("field", sorted(SPELLINGS))
def test_the_schema_takes_the_spellings_the_tool_takes(validator, field):
    """The schema's patterns said `^[0-9.]+\\s*[hdw]$` and `[KMBT]?`: an editor checking a workload
    against `advisor schema` flagged '30 days', '10 billion', '10k', '1.5e9' and a bare power number, which
    the tool plans. Each spelling now matches the schema exactly when the tool's parser reads it."""
    from advisor.inputs import units

    parse = {"deadline": units.parse_duration_hours, "tokens": units.parse_count}.get(field, units.parse_power_kw)
    for text in SPELLINGS[field]:
        try:
            taken = parse(text) > 0
        except ValueError:
            taken = False
        doc = {"deployment": "office", "model": "gpt2-124m", "tokens": "1B", "deadline": "7d", field: text}
        if field == "power_limit_kw":  # a deployment's field
            doc = {**{k: v for k, v in doc.items() if k != field}, "deployment": {"context": "office", field: text}}
        assert (not list(validator.iter_errors(doc))) == taken, (field, text, taken)


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.name)
def test_malformed_workloads_fail_the_schema_or_a_documented_loader_check(validator, path):
    from advisor.inputs.loader import load_yaml_file

    try:
        doc = load_yaml_file(path, "workload file")
    except InputError:
        return  # not safe YAML text (binary, aliases, tags, duplicate keys): refused before any schema applies
    if path.name in LOADER_ONLY or doc is None:
        with pytest.raises(InputError):
            advisor.load_workload(path)
        return
    assert list(validator.iter_errors(json.loads(json.dumps(doc, default=str)))), path.name


def test_five_independent_mistakes_are_reported_in_one_run(run, write):
    path = write("deployment: offce\nmodel: gpt2-124m\ntokens: 10Q\ndeadlin: 7d\ngpus: 0\nbudget_usd: -5\n")
    code, out, err = run("plan", path)
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 5
    assert all(re.match(rf"error: {re.escape(str(path))}:\d+:\d+: ", line) for line in lines)
    for where in ("deadlin", "`deployment`", "`tokens`", "`gpus`", "`budget_usd`"):  # as written, not jobs[0]...
        assert any(where in line for line in lines), where
    assert "jobs[0]" not in err and "^" not in err


FIVE = """\
name: five mistakes
deployment:
  context: offise
  ownership: byu
model: gpt2-124mm
tokens: 10Q
deadline: 3 fortnights
"""


def test_the_five_mistake_file_gets_five_messages_with_lines_and_paths_as_written(run, write):
    """Unknown ids, units, enums and structure in one run (issue 32): each message has its line and
    column, the path as written (a top-level `model` is `model`, not jobs[0].model) and every close
    value; `validate --format json` gives the same as data."""
    path = write(FIVE)
    code, out, err = run("validate", path)
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 5, err
    expect = [
        (3, 12, "`deployment.context`", "did you mean office?"),
        (4, 14, "`deployment.ownership`", "did you mean buy?"),
        (5, 8, "`model`", "did you mean gpt2-124m?"),
        (6, 9, "`tokens`", "unknown unit 'Q'"),
        (7, 11, "`deadline`", "unknown unit 'fortnights'"),
    ]
    for line, (row, col, where, words) in zip(lines, expect):
        assert line.startswith(f"error: {path}:{row}:{col}: {where}") and words in line, line
    assert "jobs[0]" not in err
    code, out, _ = run("validate", path, "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["valid"] is False
    assert [(e["line"], e["column"], e["path"]) for e in doc["errors"]] == [
        (3, 12, "deployment.context"),
        (4, 14, "deployment.ownership"),
        (5, 8, "model"),
        (6, 9, "tokens"),
        (7, 11, "deadline"),
    ]
    assert doc["errors"][2]["given"] == "gpt2-124mm" and doc["errors"][0]["file"] == str(path)
    code, out, _ = run("validate", EXAMPLES / "article-office.yaml", "--format", "json")
    assert code == 0 and json.loads(out)["valid"] is True


def test_a_job_under_jobs_is_reported_under_jobs(run, write):
    code, _, err = run("validate", write("deployment: office\njobs:\n  - model: gpt2-124mm\n    tokens: 10B\n"))
    assert code == 2 and ":3:12: `jobs[0].model`: unknown model preset 'gpt2-124mm'" in err


def test_library_gets_every_error_too(write):
    with pytest.raises(InputError) as info:
        advisor.load_workload(write("deployment: office\nmodel: gpt2-124m\ntokens: 10Q\ngpus: 0\n"))
    assert [e.field for e in info.value.errors] == ["tokens", "gpus"]


def test_plan_fits_80_columns_and_has_no_colour_off_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(main, ["plan", str(EXAMPLES / "article-datacenter.yaml"), "--as-of", str(AS_OF)])
    assert result.exit_code == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "\x1b[" not in result.stdout and "LIC001" in result.stdout


@pytest.mark.parametrize("width", [None, 20, 44, 80])
def test_tables_keep_every_word_whole_at_any_width(width):
    """Random tables, wide and narrow, with wide characters, combining marks and empty cells: every
    word of every cell comes out whole, no line is wider than the terminal unless it is one word
    that cannot be broken, and a table drawn side by side has its rule under the header."""
    import random
    import string

    from advisor.present import grid

    rng = random.Random(7)
    text = string.ascii_letters + string.digits + " .,$%-_/()[]:'*#|<>=+&–§×≤→€é"

    def cell():
        return rng.choice(
            [
                None,
                True,
                0,
                rng.randint(1, 10**6),
                rng.random() * 1e4,
                "",
                " a  b ",
                "日本",
                "e\u20d7",
                "\u00ad",
                "\t",
                "".join(rng.choice(text) for _ in range(rng.randint(1, 24))),
            ]
        )

    grid.configure(color=False, width=width)
    try:
        side_by_side = 0
        for _ in range(150):
            n = rng.randint(1, 6)
            headers = ["".join(rng.choice(text) for _ in range(rng.randint(0, 10))) for _ in range(n)]
            rows = [[cell() for _ in range(n)] for _ in range(rng.randint(0, 5))]
            wrap = tuple(i for i in range(n) if rng.random() < 0.3)
            out = grid.table(headers, rows, wrap=wrap)
            words = set(out.split()) | {w[:-1] for w in out.split() if w.endswith(":")}  # blocks: `header: value`
            fallback = "too wide" in out
            for v in [*([] if fallback else headers), *(x for r in rows for x in r)]:
                assert set(grid._cell(v).split()) <= words, (v, out)
            for line in out.splitlines():
                assert width is None or grid.cell_len(line) <= width or len(line.split()) == 1, line
            side_by_side += not fallback
        assert side_by_side >= 10  # the side-by-side layout was exercised, not only the fallbacks
    finally:
        grid.configure()


@pytest.mark.parametrize(
    "cmd",
    [
        ["plan", EXAMPLES / "article-office.yaml"],
        ["catalog", "list"],
        ["rules", "list"],
        ["compare", "rtx-4090", "h100-sxm"],
        ["frontier", EXAMPLES / "article-office.yaml", "--points", "3"],
    ],
)
def test_csv_and_markdown_formats(run, cmd):
    code, out, _ = run(*cmd, "--format", "csv", "--as-of", AS_OF)
    assert code == 0 and "," in out.splitlines()[0] and "$" not in out.splitlines()[0]
    code, out, _ = run(*cmd, "--format", "markdown", "--as-of", AS_OF)
    assert code == 0 and "|---|" in out


def test_stdin_workload_and_stdout_memo(tmp_path):
    text = (EXAMPLES / "article-office.yaml").read_text(encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", "-", "--format", "json", "--as-of", str(AS_OF)], input=text)
    assert r.exit_code == 0 and json.loads(r.stdout)["status"] == "optimal"
    r = CliRunner().invoke(main, ["validate", "-"], input="deployment: office\nmodel: gpt2-124m\ntokens: 10Q\n")
    assert r.exit_code == 2 and r.stderr.startswith("error: <stdin>:3:9: `tokens`")


def test_output_folder_must_exist_and_is_checked_before_solving(run, tmp_path):
    target = tmp_path / "missing" / "memo.html"
    code, _, err = run("memo", EXAMPLES / "article-office.yaml", "-o", target)
    assert code == 2 and str(target) in err and not target.parent.exists()


def test_estimate_exit_codes_and_fields_versus_flags(run):
    code, out, _ = run("estimate", "--model", "llama-3-70b", "--gpu", "rtx-4090")
    assert code == 3 and "does not run" in out
    code, _, err = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm", "--count", "8", "--tensor-parallel", 5)
    assert code == 2 and "--tensor-parallel" in err
    code, _, err = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm", "--rules", "/nonexistent.yaml")
    assert code == 2 and "--rules" in err
    with pytest.raises(InputError) as info:
        advisor.estimate(model="gpt2-124m", gpu="h100-sxm", count=8, tensor_parallel=5)
    assert "tensor_parallel" in str(info.value) and "--" not in str(info.value)


# `validate` builds the candidates (every layout search) of its file: a small one, with a repeated job
TWO_JOBS = """\
name: two jobs, one repeated
deployment: {context: office, ownership: buy, lead_time_days: 0}
jobs:
  - {name: sweep, model: gpt2-124m, tokens: 1B, deadline: 2d, repeat: 3}
  - {name: tune, kind: finetune, model: gpt2-124m, tokens: 200M}
gpus: {allow: [rtx-4090]}
"""


def test_validate_models_and_catalog_filters(run, write):
    code, out, _ = run("validate", write(TWO_JOBS))
    assert code == 0 and "valid (4 jobs, office, region US)" in out  # 3 copies + 1
    code, _, err = run("validate", EXAMPLES / "rules" / "no-amd.yaml")
    assert code == 2
    code, out, _ = run("rules", "validate", EXAMPLES / "rules" / "no-amd.yaml")
    assert code == 0 and "valid" in out
    code, out, _ = run("models", "show", "gpt2-124m", "--format", "json")
    assert code == 0 and json.loads(out)["layers"] == 12 and json.loads(out)["sources"][0]["url"].startswith("http")
    code, out, _ = run("catalog", "list", "a100", "--format", "json", "--as-of", AS_OF)
    assert code == 0 and {g["id"] for g in json.loads(out)["gpus"]} >= {"a100-80gb-sxm"}
    assert all("a100" in g["id"] or "a100" in g["name"].lower() for g in json.loads(out)["gpus"])
    code, out, _ = run(
        "catalog",
        "list",
        "--vendor",
        "amd",
        "--min-memory",
        128,
        "--sort",
        "memory",
        "--format",
        "json",
        "--as-of",
        AS_OF,
    )
    mem = [g["memory_gb"] for g in json.loads(out)["gpus"]]
    assert code == 0 and mem == sorted(mem, reverse=True) and all(m >= 128 for m in mem)
    assert {g["vendor"] for g in json.loads(out)["gpus"]} == {"AMD"}


def test_version_imports_nothing_heavy():
    code = (
        "import sys, runpy; sys.argv=['advisor','-V']\n"
        "try:\n runpy.run_module('advisor', run_name='__main__')\nexcept SystemExit: pass\n"
        "heavy=[m for m in ('pulp','highspy','pydantic','matplotlib','jinja2','weasyprint','rich') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip().endswith("[]"), out.stdout + out.stderr


def test_a_command_imports_only_its_own_module_and_help_lists_every_command():
    """`advisor validate` imports the workload commands' module only; the group still lists, finds and
    suggests every command."""
    code = (
        "import sys\nfrom advisor.cli import main\n"
        "try:\n    main(['validate', 'examples/article-office.yaml'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('advisor.cli.')), file=sys.stderr)\n"
        "import click\nctx = click.Context(main)\n"
        "print(sorted(main.list_commands(ctx)), main.get_command(ctx, 'rfq') is not None, file=sys.stderr)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    loaded, listed = run.stderr.strip().splitlines()[-2:]
    assert loaded == "['advisor.cli.base', 'advisor.cli.plans']", run.stderr
    names = "calibrate catalog compare crossover estimate frontier init memo models plan rfq rules schema validate"
    assert listed == f"{names.split()} True"
    # a mistyped name, before any command module is imported: click's suggestion sees every command
    code = "from advisor.cli import main\nmain(['rfx'])"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "Did you mean 'rfq'?" in run.stderr, run.stderr


def test_python_api_takes_dicts_and_has_short_reprs():
    p = advisor.plan(
        {"deployment": "office", "model": "gpt2-124m", "tokens": "1B", "gpus": {"allow": ["rtx-4090"]}},
        as_of=AS_OF,
        explain=False,
    )
    assert p["purchase"][0]["gpu"] == "rtx-4090" and len(repr(p)) < 200
    with pytest.raises(InputError, match="workload"):
        advisor.plan(42)


def test_memo_takes_a_workload_in_place_of_a_plan():
    """advisor.memo(workload) plans it first: the same bytes as memo(plan(workload)); a plan's JSON
    dict is still a plan, and two workloads are refused in words."""
    w = {"deployment": "office", "model": "gpt2-124m", "tokens": "1B", "gpus": {"allow": ["rtx-4090"]}}
    direct = advisor.memo(w, as_of=AS_OF, explain=False, charts=False)
    p = advisor.plan(w, as_of=AS_OF, explain=False)
    assert direct.content == advisor.memo(p, charts=False).content
    assert advisor.memo(json.loads(p.to_json()), p.workload, charts=False).content == direct.content
    with pytest.raises(InputError, match="not a plan"):
        advisor.memo(w, w)


def test_cli_reference_is_generated_from_help():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "cli_docs.py"), "--check"], cwd=ROOT)
    assert out.returncode == 0, "docs/cli.md is stale: run python bench/cli_docs.py"


def test_words_formatters():
    from advisor.present.words import tokens

    assert tokens(612.4) == "612" and tokens(72948) == "72.9K" and tokens(1_234_000) == "1.23M"
    assert tokens(999_600) == "1M" and tokens(1.5e9) == "1.5B"  # rounded before the suffix: not '1e+03K'/'1.5e+03M'


def test_the_collector_pauses_for_start_up_only(monkeypatch):
    """A command's start-up runs without the cyclic collector (imports and inputs are long-lived);
    the plan itself runs with it, and the caller gets it back as it was, nothing left frozen."""
    import gc
    import importlib

    module = importlib.import_module("advisor.flow")  # the flow; advisor.plan is its function
    seen = []
    real = module.plan

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "plan", spy)
    assert gc.isenabled()
    result = CliRunner().invoke(main, ["plan", str(EXAMPLES / "article-office.yaml"), "--as-of", str(AS_OF)])
    assert result.exit_code == 0 and seen == [True]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:  # a caller that had turned it off keeps it off
        assert CliRunner().invoke(main, ["rules", "list"]).exit_code == 0 and not gc.isenabled()
    finally:
        gc.enable()
    gc.freeze()  # a caller that froze its own objects (before forking workers) finds them frozen still
    frozen = gc.get_freeze_count()
    try:
        assert frozen > 0
        result = CliRunner().invoke(main, ["plan", str(EXAMPLES / "article-office.yaml"), "--as-of", str(AS_OF)])
        assert result.exit_code == 0 and seen == [True, True], gc.get_freeze_count()
        assert gc.get_freeze_count() > frozen // 2, (frozen, gc.get_freeze_count())  # unfrozen would be 0
    finally:
        gc.unfreeze()


def test_a_top_level_serving_workload_validates_and_plans(run, write, plan_json):
    """Serving written the short way (issue 32): traffic and slo at the top level, as training's
    model/tokens are; the plan serves it."""
    path = write(  # (the fewest robustness draws: the shorthand is read the same way whatever their number)
        "name: short serve\ndeployment: {context: datacenter, ownership: any, lead_time_days: 0}\nkind: serve\n"
        "model: llama-3.1-8b\nprecision: fp8\ntraffic: {requests_per_s: 20, input_tokens: 1000, "
        "output_tokens: 300}\nslo: {ttft_ms: 2000, tpot_ms: 100}\ndecision: {draws: 40}\n"
    )
    code, out, err = run("validate", path)
    assert code == 0 and "valid (1 job" in out, err
    # the serving rows only: planned in-process without explanations (conftest.plan_json; the CLI's JSON of
    # a serving plan in full: tests/test_examples.py on the serving examples)
    code, plan = plan_json(path)
    assert code == 0 and plan["serving"] and plan["serving"][0]["slo"]["tpot_ms"] == 100
    assert sum(r["replicas"] * r["requests_per_s_per_replica"] for r in plan["serving"]) >= 20


@pytest.mark.parametrize("serve", [False, True], ids=["training", "serving"])
def test_init_writes_a_commented_starter_that_validates_and_plans(run, plan_json, tmp_path, serve):
    path = tmp_path / "w.yaml"
    code, out, _ = run("init", path, *(["--serve"] if serve else []))
    text = path.read_text(encoding="utf-8")
    assert code == 0 and f"advisor validate {path}" in out
    assert sum(line.lstrip().startswith("#") or " # " in line for line in text.splitlines()) >= 10  # commented
    assert ("traffic:" in text) == serve and ("\ntokens:" in text) == (not serve)
    code, out, err = run("validate", path)
    assert code == 0 and "valid (1 job" in out, err
    if serve:  # its 200 robustness draws of a serving MILP take ~5 s of CPU: planned in-process without
        # explanations here, in full through the CLI by test_the_serving_starter_plans_in_full (slow)
        code, plan = plan_json(path)
    else:
        code, out, _ = run("plan", path, "--as-of", AS_OF, "--format", "json")
        plan = json.loads(out)
    assert code == 0 and plan["purchase"]
    code, _, err = run("init", path)
    assert code == 2 and "already exists; pass --force" in err
    assert run("init", path, "--force")[0] == 0


@pytest.mark.slow
def test_the_serving_starter_plans_in_full(run, tmp_path, plan_validator):
    """`advisor init --serve` then `advisor plan`, as a new user runs them: the whole plan, its robustness
    draws and every explanation, in the JSON `advisor schema --output plan` describes."""
    path = tmp_path / "w.yaml"
    assert run("init", path, "--serve")[0] == 0
    code, out, err = run("plan", path, "--as-of", AS_OF, "--format", "json")
    plan = json.loads(out)
    assert code == 0 and plan["purchase"] and plan["serving"], err
    assert plan["robustness"]["draws"] >= 40 and plan["decision"]["draws"] == 200
    assert not [e.message for e in plan_validator.iter_errors(plan)]


def test_every_command_that_can_take_seconds_says_what_it_does(monkeypatch, write):
    """plan, frontier, memo, validate, estimate, compare and crossover run their work inside the
    progress line (cli/base.working: shown after 2 s, on a terminal only)."""
    import contextlib

    from advisor.cli import comparisons, documents, plans, study

    seen: list[str] = []

    @contextlib.contextmanager
    def spy(what, **kwargs):
        seen.append(what)
        yield

    for module in (plans, study, comparisons, documents):
        monkeypatch.setattr(module, "working", spy)
    office = str(EXAMPLES / "article-office.yaml")
    for args in (
        ["validate", office],
        ["estimate", "--model", "gpt2-124m", "--gpu", "rtx-4090"],
        ["compare", "rtx-4090", "h100-sxm"],
        ["plan", office, "--as-of", str(AS_OF)],
    ):
        seen.clear()
        assert CliRunner().invoke(main, args).exit_code == 0
        assert seen, args


def test_the_repository_carries_its_licence():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert 'license = {text = "Apache-2.0"}' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_a_command_that_solves_nothing_shows_its_stage_without_the_solver():
    """estimate/compare/validate's progress line names the stage and the seconds, and importing the
    solver (pulp, numpy) is left to the commands that solve."""
    code = (
        "import io, sys, time\nfrom advisor.cli.base import working\n"
        "class T(io.StringIO):\n    def isatty(self): return True\n"
        "t = T()\nwith working('estimating', stream=t, after=0.01, every=0.01, collect=False):\n    time.sleep(0.1)\n"
        "print(repr(t.getvalue()), 'pulp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "| estimating, 0 s" in out and out.strip().endswith("False")


@pytest.mark.parametrize("section", ["decision", "robustness"])
def test_a_fastest_plan_says_why_it_has_no_draws_or_decision_basis(section):
    """`--objective time` made no robustness draws, decision basis or verify list, and `--section
    robustness` read only 'this plan has no robustness': a reader could not tell it from a plan whose
    draws failed. The section now says why, and the cheapest plan of the same file has the draws."""
    from advisor.cli import main

    args = ["plan", str(EXAMPLES / "article-office.yaml"), "--as-of", str(AS_OF), "--section", section]
    fastest = CliRunner().invoke(main, [*args, "--objective", "time"])
    cheapest = CliRunner().invoke(main, args)
    assert fastest.exit_code == 0 and cheapest.exit_code == 0, (fastest.output, cheapest.output)
    why = "not made: --objective time chooses the shortest makespan"
    assert why in fastest.output and why not in cheapest.output
    assert ("draws of speed and price" if section == "robustness" else "chosen on the expected cost") in cheapest.output
