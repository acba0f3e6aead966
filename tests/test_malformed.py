"""Hostile and malformed input files: exit 2, one paragraph naming the file and the field, no traceback,
nothing executed.

The corpus is tests/malformed/. A file's name says how it is fed to the CLI: `wl-*` is the workload of
`advisor plan FILE`; `cat-*` is `--catalog FILE` and `rules-*` is `--rules FILE` over the office example.
Its header says what the message must hold: `# field: LOCATION` (also checked against InputError.field
through the library) and `# says: TEXT` lines. Files that cannot carry a header are in NOT_TEXT.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import AS_OF, EXAMPLES

import advisor
from advisor.errors import InputError

CORPUS = Path(__file__).parent / "malformed"
FILES = sorted(CORPUS.glob("*.yaml"))
OFFICE = EXAMPLES / "article-office.yaml"
NOT_TEXT = {
    "wl-utf16.yaml": ["is UTF-16 text", "save the workload file as UTF-8"],
    "wl-latin1.yaml": ["is not UTF-8 text (byte 7)"],
    "wl-binary.yaml": ["looks like a binary file"],
    "wl-empty.yaml": ["the workload file is empty"],
}
# Valid on their own, wrong only against the catalog: found when planning, so the library error names no file.
AGAINST_CATALOG = {"wl-unknown-gpu.yaml", "wl-unknown-gpu-case.yaml", "wl-unknown-preset.yaml"}


def expectations(path: Path) -> tuple[str | None, list[str]]:
    if path.name in NOT_TEXT:
        return None, NOT_TEXT[path.name]
    field, says = None, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# field: "):
            field = line[len("# field: ") :]
        elif line.startswith("# says: "):
            says.append(line[len("# says: ") :])
    assert field or says, f"{path.name} has no `# field:` or `# says:` header"
    return field, says


def cli_args(path: Path) -> list:
    kind = path.name.split("-")[0]
    return {
        "wl": ["plan", path],
        "cat": ["plan", OFFICE, "--catalog", path],
        "rules": ["plan", OFFICE, "--rules", path],
    }[kind] + ["--as-of", AS_OF]


def load_through_library(path: Path):
    kind = path.name.split("-")[0]
    if kind == "wl":
        advisor.load_workload(path)
    elif kind == "cat":
        advisor.load_catalog(path)
    else:
        advisor.load_rules([path])


def test_the_corpus_is_large_and_covers_every_kind_of_file():
    kinds = [p.name.split("-")[0] for p in FILES]
    assert len(FILES) >= 30
    assert kinds.count("cat") >= 5 and kinds.count("rules") >= 5
    assert set(kinds) == {"wl", "cat", "rules"}


def test_the_corpus_grows_with_the_features():
    """Issue 20 item 7: serving jobs, economics fields, rental kinds and confidence levels each have
    malformed and hostile cases."""
    names = [p.name for p in FILES]
    for prefix, least in [
        ("wl-serve-", 20),
        ("wl-finance-", 6),
        ("wl-utilization-", 2),
        ("wl-rent-kinds-", 5),
        ("cat-rent-", 8),
        ("wl-confidence-", 8),
    ]:
        assert sum(n.startswith(prefix) for n in names) >= least, prefix


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_malformed_file_exits_2_naming_file_and_field(path, run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a file that tried to run `echo pwned > advisor-pwned.txt` would leave it here
    field, says = expectations(path)
    code, out, err = run(*cli_args(path))
    assert code == 2, err
    assert out == ""
    assert "Traceback" not in err
    assert re.match(rf"error: {re.escape(str(path))}(:\d+:\d+)?: ", err) and err.count("\n") == 1  # naming the file
    if field:
        assert field in err
    for text in says:
        assert text in err
    assert not (tmp_path / "advisor-pwned.txt").exists()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_library_raises_input_error_with_file_and_field(path):
    field, _ = expectations(path)
    if path.name in AGAINST_CATALOG:
        with pytest.raises(InputError) as info:
            advisor.plan(advisor.load_workload(path), as_of=AS_OF, explain=False)
    else:
        with pytest.raises(InputError) as info:
            load_through_library(path)
        assert info.value.file == str(path)
    if field:
        assert info.value.field is not None and field in info.value.field


# ------------------------------------------------------------------ files too big or odd to keep in git


def test_a_50_mb_file_is_refused_by_size(run, tmp_path):
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as f:
        f.write(b"deployment: office\n# ")
        f.truncate(50_000_000)
    code, _, err = run("plan", path)
    assert code == 2 and "50,000,000 bytes; the limit is 1,000,000 bytes" in err and str(path) in err


def test_an_endless_device_is_read_no_further_than_the_limit(run):
    code, _, err = run("plan", "/dev/zero")
    assert code == 2 and err.startswith("error: /dev/zero: the workload file is more than 1,000,000 bytes")


def test_nesting_deeper_than_the_stack_is_refused_not_a_recursion_error(run, write):
    path = write("a: " + "[" * 200_000 + "]" * 200_000 + "\n")
    code, _, err = run("plan", path)
    assert code == 2 and "nested more than 50 levels deep" in err and "Recursion" not in err


def test_a_long_alias_chain_is_refused(run, write):
    chain = "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 100))
    code, _, err = run("plan", write(chain))
    assert code == 2 and "nests more than 50 levels deep once its YAML aliases are expanded" in err


@pytest.mark.parametrize("option", ["workload", "--catalog", "--rules"])
def test_missing_file_and_folder_are_named(run, tmp_path, option):
    args = ["plan"] if option == "workload" else ["plan", OFFICE, option]
    code, _, err = run(*args, tmp_path / "nope.yaml")
    assert code == 2 and err.startswith(f"error: {tmp_path / 'nope.yaml'}: no such")
    code, _, err = run(*args, tmp_path)
    if option == "workload":  # click checks the argument first: a usage error, still exit 2, naming it
        assert code == 2 and f"File '{tmp_path}' is a directory" in err
    else:
        assert code == 2 and err.startswith(f"error: {tmp_path}: is a folder")


def test_debug_shows_the_traceback():
    from click.testing import CliRunner

    from advisor.cli import main

    result = CliRunner().invoke(main, ["plan", str(CORPUS / "wl-tokens-nan.yaml"), "--debug"])
    assert isinstance(result.exception, InputError)


# ------------------------------------------------------------------ the solver


def test_a_solver_that_stops_without_a_plan_is_an_error_not_infeasible(run, monkeypatch):
    """Both ways the solver is called: PuLP (the first build, CBC, serving) and HiGHS's own
    interface (the fast path every training plan takes)."""
    import highspy
    import pulp

    def out_of_time(prob, solver=None, **kwargs):
        prob.status, prob.sol_status = pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound
        return prob.status

    monkeypatch.setattr(pulp.LpProblem, "solve", out_of_time)
    monkeypatch.setattr(highspy.Highs, "run", lambda self: highspy.HighsStatus.kWarning)  # stopped, nothing found
    code, out, err = run("plan", OFFICE, "--as-of", AS_OF)
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith("error: the highs solver found no plan within the 30 s time limit")
    assert "raise --time-limit" in err  # the library's message names the parameter, the CLI its flag
    with pytest.raises(advisor.errors.SolverError, match="raise `time_limit` or simplify"):
        advisor.plan(OFFICE, as_of=AS_OF)


def test_a_solver_crash_is_exit_1_with_a_message(run, monkeypatch):
    import highspy
    import pulp

    def crash(prob, solver=None, **kwargs):
        raise pulp.PulpSolverError("HiGHS returned an error")

    monkeypatch.setattr(pulp.LpProblem, "solve", crash)
    monkeypatch.setattr(highspy.Highs, "run", lambda self: highspy.HighsStatus.kError)
    code, _, err = run("plan", OFFICE, "--as-of", AS_OF)
    assert code == 1 and err.startswith("error: the highs solver failed: HiGHS returned an error")


def test_an_internal_error_is_exit_1_without_traceback(run, monkeypatch):
    import sys

    plan_module = sys.modules["advisor.flow"]

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(plan_module, "solve", broken)
    code, _, err = run("plan", OFFICE, "--as-of", AS_OF)
    assert code == 1 and err.startswith("internal error: ZeroDivisionError") and "Traceback" not in err
