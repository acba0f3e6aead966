"""Library errors are InputError (issue 33 item 7): every public function checks its arguments with
the bounds of the command line and raises advisor.InputError naming the argument, whatever a script
passes -- wrong types, NaN, infinity, negatives, bools, numbers out of range."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import click
import pytest
from conftest import AS_OF, EXAMPLES, ci_examples
from hypothesis import given, settings
from hypothesis import strategies as st

import advisor
from advisor import api
from advisor.cli import main
from advisor.inputs import arguments
from advisor.inputs.jobs import Job, ModelShape
from advisor.inputs.workload import Workload

WORKLOAD = {
    "name": "t",
    "deployment": "cloud",
    "model": "gpt2-124m",
    "tokens": "1B",
    "gpus": {"allow": ["rtx-4090", "h100-sxm"]},
}


def _command(name: str) -> click.Command:
    """One of `advisor`'s commands (its module imported on demand, as the CLI does)."""
    cmd = main.get_command(click.Context(main), name)
    assert cmd is not None
    return cmd


@pytest.fixture(scope="module")
def made_plan():
    return advisor.plan(WORKLOAD, as_of=AS_OF, explain=False)


def calls(made_plan) -> dict:
    """Each public function, as a call taking keyword arguments, and a valid, quick set of them."""
    return {
        "plan": (
            lambda workload, **k: advisor.plan(workload, **k),
            dict(
                workload=WORKLOAD,
                as_of=AS_OF,
                explain=False,
                time_limit=10,
                objective="cost",
                charts=False,
                gap=None,
                catalog=None,
                rules=None,
            ),
        ),
        "estimate": (
            advisor.estimate,
            dict(
                gpu="h100-sxm",
                count=1,
                model="gpt2-124m",
                precision="bf16",
                kind="pretrain",
                micro_batch=None,
                checkpointing=None,
                global_batch_tokens=None,
                optimizer="adamw",
                lora_rank=16,
                strategy=None,
                tensor_parallel=None,
                pipeline_parallel=None,
                catalog=None,
                params=None,
                layers=None,
                hidden=None,
                seq_len=None,
            ),
        ),
        "estimate(kind='serve')": (
            advisor.estimate,
            dict(
                kind="serve",
                gpu="h100-sxm",
                count=1,
                model="llama-3.1-8b",
                precision="bf16",
                input_len=100,
                output_len=100,
                ttft_ms=None,
                tpot_ms=None,
                percentile=99,
                tensor_parallel=None,
                catalog=None,
                list_models=False,
            ),
        ),
        "memo": (
            lambda plan, **k: advisor.memo(plan, **k),
            dict(
                plan=made_plan,
                workload=None,
                fmt="md",
                date=None,
                charts=False,
                name="memo",
                time_limit=10,
                paper="a4",
                catalog=None,
                rules=None,
            ),
        ),
        "compare": (
            lambda gpus, **k: advisor.compare(gpus, **k),
            dict(
                gpus=["rtx-4090", "h100-sxm"],
                model="gpt2-124m",
                params=None,
                layers=None,
                hidden=None,
                seq_len=None,
                precision="bf16",
                prices=None,
                deployment=None,
                region="US",
                catalog=None,
                rules=None,
                as_of=AS_OF,
            ),
        ),
        "crossover": (
            advisor.crossover,
            dict(
                tokens="1B",
                max_gpus=8,
                gpus=["rtx-4090", "h100-sxm"],
                models=["gpt2-124m"],
                deployment="office",
                ownership="buy",
                deadline=None,
                focus="rtx-4090",
                catalog=None,
                rules=None,
                as_of=AS_OF,
            ),
        ),
        "load_workload": (advisor.load_workload, dict(path=EXAMPLES / "article-office.yaml")),
        "parse_workload": (advisor.parse_workload, dict(data=WORKLOAD, name="x")),
        "load_catalog": (advisor.load_catalog, dict(override=None)),
        "load_rules": (advisor.load_rules, dict(extra=None)),
    }


ODD = [
    True,
    False,
    None,
    math.nan,
    math.inf,
    -math.inf,
    -1,
    0,
    1.5,
    10**9,
    2**70,
    -(10**12),
    "",
    "x",
    "\x00",
    "yesterday",
    [],
    {},
    [None],
    (1,),
    object(),
    b"x",
    dt.date(2026, 1, 1),
    dt.datetime(2026, 1, 1, 12),
    1e308,
]
values = st.one_of(
    st.sampled_from(ODD),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.text(max_size=4),
    st.none(),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@pytest.mark.parametrize(
    "function",
    [
        "plan",
        "estimate",
        "estimate(kind='serve')",
        "memo",
        "compare",
        "crossover",
        "load_workload",
        "parse_workload",
        "load_catalog",
        "load_rules",
    ],
)
def test_odd_arguments_give_input_errors_only(function, made_plan):
    """Any value for any one argument: a result, or an InputError naming that argument; never another error."""
    call, base = calls(made_plan)[function]

    @settings(max_examples=ci_examples(25, 400))
    @given(name=st.sampled_from(sorted(base)), value=values)
    def check(name, value):
        if function.startswith("estimate") and name == "kind":
            return  # the kind picks the table; another kind is the other estimate
        try:
            call(**{**base, name: value})
        except advisor.InputError as exc:
            assert exc.field or exc.file, exc  # it names the argument (or the field it conflicts with), or the file

    check()


REFUSED = [  # the cases and their kin: each an InputError naming the argument
    ("estimate", "count", [-1, 0, True, False, 10**9, 1.5, math.nan, math.inf, "8"]),
    ("estimate", "lora_rank", [0, 4097, True]),
    ("estimate", "layers", [0, 10**9, 2**70, True]),
    ("estimate", "tensor_parallel", [0, 65, True]),
    ("estimate(kind='serve')", "count", [-1, True, 10**9]),
    ("estimate(kind='serve')", "ttft_ms", [0, -1, math.nan, math.inf, True, "100"]),
    ("plan", "rules", [[None], 3, True, [1]]),
    ("plan", "catalog", [3, True, [None], b"x", "\x00"]),
    ("plan", "as_of", ["yesterday", 20261201, True, math.nan]),
    ("plan", "time_limit", [0, -1, 86_401, math.nan, math.inf, True, "30"]),
    ("plan", "gap", [1, -0.1, math.nan, True]),
    ("plan", "explain", ["most", 1, None]),
    ("plan", "charts", ["yes", 1, None]),
    ("memo", "date", ["x", True, 3, math.nan]),
    ("memo", "name", ["", "../x", "a/b", 3, "\x1b[2J"]),
    ("memo", "fmt", ["docx", None, 1]),
    ("memo", "workload", [3, True, b"x", "\x00"]),
    ("compare", "gpus", ["rtx-4090", [], [None], [1], None]),
    ("compare", "prices", [{"rtx-4090": -1}, {"rtx-4090": math.nan}, {"rtx-4090": True}, [1]]),
    ("compare", "region", ["ZZ", 3, None]),
    ("crossover", "max_gpus", [0, 100_001, True, math.inf]),
    ("crossover", "tokens", [-1, 0, math.nan, True, None]),
    ("load_workload", "path", [None, 3, True, b"x", "\x00", "x" * 5000]),
    ("load_rules", "extra", [True, 3, [None], "\x00"]),
    ("parse_workload", "name", [None, 3, ""]),
]


@pytest.mark.parametrize("function, name, bad", REFUSED, ids=[f"{f}-{n}" for f, n, _ in REFUSED])
def test_values_out_of_bounds_are_refused_naming_the_argument(function, name, bad, made_plan):
    call, base = calls(made_plan)[function]
    for value in bad:
        with pytest.raises(advisor.InputError) as caught:
            call(**{**base, name: value})
        assert caught.value.field == name or caught.value.field.startswith(f"{name}["), (value, caught.value.field)
        assert f"`{name}" in str(caught.value), str(caught.value)


def test_a_catalog_or_rules_given_as_paths_are_loaded(write):
    override = write("gpus:\n  - id: h100-sxm\n    name: H100 (our quote)\n", "catalog.yaml")
    result = advisor.plan(WORKLOAD, catalog=override, rules=[], as_of=str(AS_OF), explain=False)
    assert result.catalog.gpus["h100-sxm"].name == "H100 (our quote)" and result.as_of == AS_OF.isoformat()
    assert advisor.estimate(gpu="h100-sxm", model="gpt2-124m", count=8.0)["gpu_count"] == 8


def test_unknown_arguments_are_input_errors():
    for call in (
        lambda: advisor.plan(WORKLOAD, explian=False),
        lambda: advisor.estimate(gpu="h100-sxm", cuont=2),
        lambda: advisor.compare(["rtx-4090"], modle="gpt2-124m"),
        lambda: advisor.crossover(token="1B"),
    ):
        with pytest.raises(advisor.InputError, match="unknown argument"):
            call()


def test_every_estimate_flag_reaches_the_estimator_of_its_kind():
    """`advisor estimate` passes its flags on by name (cli/study.py, SERVING_FLAGS and TRAINING_FLAGS):
    every option of the command is passed on by at least one kind, and each kind passes on only
    arguments advisor.estimate takes for it, so no flag is dropped or refused unnoticed."""
    from advisor.cli.study import SERVING_FLAGS, TRAINING_FLAGS

    options = {
        "model" if p.name == "preset" else "catalog" if p.name == "catalog_file" else p.name
        for p in _command("estimate").params
    } - {"fmt", "debug"}
    assert options == set(SERVING_FLAGS) | set(TRAINING_FLAGS)
    assert set(SERVING_FLAGS) <= set(api.SERVING) and set(TRAINING_FLAGS) <= set(api.TRAINING)
    assert len(set(SERVING_FLAGS)) == len(SERVING_FLAGS) and len(set(TRAINING_FLAGS)) == len(TRAINING_FLAGS)


def _range(param: click.Parameter) -> tuple[float, float] | None:
    kind = param.type
    if isinstance(kind, (click.IntRange, click.FloatRange)) and kind.max is not None:
        return kind.min, kind.max
    return None


@pytest.mark.parametrize(
    "command, tables",
    [
        ("estimate", [api.TRAINING, api.SERVING]),
        ("compare", [api.COMPARE]),
        ("crossover", [api.CROSSOVER]),
        ("plan", [api.PLAN]),
    ],
)
def test_the_library_and_the_cli_have_the_same_bounds(command, tables):
    """Each bounded CLI option and the public function's argument of the same name accept the same
    ends and refuse just past them."""
    checked = 0
    for param in _command(command).params:
        bounds = _range(param)
        for table in tables:
            if bounds is None or param.name not in table:
                continue
            lo, hi = bounds
            check = table[param.name]
            assert check(lo, param.name) == lo and check(hi, param.name) == hi
            step = 1 if isinstance(lo, int) else 0.05
            for outside in (lo - step, hi + step):
                with pytest.raises(advisor.InputError):
                    check(outside, param.name)
            checked += 1
    assert checked


def test_a_model_shape_has_the_bounds_of_a_workload_file():
    def le(model, field: str) -> int:
        return next(m.le for m in model.model_fields[field].metadata if hasattr(m, "le"))

    assert le(ModelShape, "layers") == arguments.LAYERS[1] and le(ModelShape, "hidden") == arguments.HIDDEN[1]
    assert le(ModelShape, "heads") == arguments.HEADS[1] and le(ModelShape, "seq_len") == arguments.SEQ_LEN[1]
    assert le(Job, "micro_batch") == arguments.MICRO_BATCH[1] and le(Job, "lora_rank") == arguments.LORA_RANK[1]
    assert isinstance(advisor.load_workload(EXAMPLES / "article-office.yaml"), Workload)


def test_memo_write_checks_its_arguments(made_plan, tmp_path):
    """Memo.write checks its arguments with the table of inputs/arguments.py, like every public
    function: each wrong one is an InputError naming it, and nothing is written."""
    memo = advisor.memo(made_plan, charts=False)
    dangling = tmp_path / "memo.md"
    dangling.symlink_to(tmp_path / "nowhere.md")
    for path, force, named in (
        (None, False, "path"),
        (3, False, "path"),
        (b"x", False, "path"),
        ("\x00", False, "path"),
        (tmp_path / "m.md", "yes", "force"),
        (tmp_path / "m.md", 1, "force"),
        (dangling, False, "path"),
        (tmp_path / "no-such-folder" / "m.md", False, "path"),
        (tmp_path, True, "path"),
        ("-", False, "path"),
    ):
        with pytest.raises(advisor.InputError) as err:
            memo.write(path, force=force)
        said = str(err.value)
        assert err.value.field == named and (f"`{named}`" in said or str(path) in said), (path, force, said)
    assert dangling.is_symlink() and not (tmp_path / "nowhere.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.md"]
    assert memo.write(dangling, force=True) == [dangling] and not dangling.is_symlink()  # the link replaced
    assert not (tmp_path / "nowhere.md").exists()


def test_the_cli_refuses_a_link_given_to_output_before_any_work(run, tmp_path, monkeypatch):
    """`advisor memo -o LINK`: a link, even one pointing nowhere, is an existing file (exit 2 without
    --force, before planning); with --force the link itself is replaced, never written through."""
    import importlib

    flow = importlib.import_module("advisor.flow")  # the flow (advisor.plan is its function)

    link, target = tmp_path / "memo.md", tmp_path / "elsewhere.md"
    link.symlink_to(target)

    def never(*args, **kwargs):
        raise AssertionError("planned before refusing the output file")

    with monkeypatch.context() as m:
        m.setattr(flow, "plan", never)
        code, _, err = run("memo", EXAMPLES / "article-office.yaml", "-o", link, "--as-of", AS_OF)
    assert code == 2 and "is a link to nothing; pass --force" in err
    assert link.is_symlink() and not target.exists()
    code, _, err = run("memo", EXAMPLES / "article-office.yaml", "-o", link, "--as-of", AS_OF, "--force")
    assert code == 0, err
    assert not link.is_symlink() and link.stat().st_size > 0 and not target.exists()


def test_a_chart_is_never_written_through_a_link(tmp_path):
    from advisor.cli.base import write_file

    target = tmp_path / "precious.txt"
    target.write_text("keep")
    link = tmp_path / "chart.svg"
    link.symlink_to(target)
    write_file(str(link), "<svg/>")
    assert target.read_text() == "keep" and not link.is_symlink() and link.read_text() == "<svg/>"
    assert Path(str(link)).parent == tmp_path


@pytest.mark.parametrize(
    "args, flag",
    [
        (
            ["--params", "50B", "--active-params", "13B", "--experts", "8", "--gpu", "h100-sxm", "--count", "8"],
            "--experts",
        ),
        (["--model", "gpt2-124m", "--gpu", "rtx-4090", "--ttft-ms", "500"], "--ttft-ms"),
        (
            [
                "--kind",
                "serve",
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--input-len",
                "1000",
                "--output-len",
                "300",
                "--seq-len",
                "2048",
            ],
            "--seq-len",
        ),
        (
            [
                "--kind",
                "serve",
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--input-len",
                "1000",
                "--output-len",
                "300",
                "--strategy",
                "fsdp",
            ],
            "--strategy",
        ),
    ],
)
def test_a_flag_the_estimate_kind_does_not_read_is_refused_by_name(run, args, flag):
    """`--experts 8` on a training estimate answered as if it were not given; each kind now refuses the
    other kind's flags, naming the flag and the kind it applies to."""
    code, out, err = run("estimate", *args)
    assert code == 2 and out == "" and err.startswith(f"error: {flag} applies to ") and "does not read it" in err, err
