"""The same question gets the same bytes: table and JSON output, and error messages, whatever the
process's hash seed (set and dict ordering must not leak into output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import AS_OF, EXAMPLES, memoized_plan

# Several jobs, every GPU of the catalog, buy or rent, a budget: many sets and dicts on the way.
MIXED = """\
name: determinism check
deployment: {context: datacenter, ownership: any, region: DE}
jobs:
  - {name: pretrain, model: gpt2-350m, tokens: 20B, deadline: 5d}
  - {name: finetune, kind: finetune, model: gpt2-124m, tokens: 2B, deadline: 2d}
  - {name: big, model: {params: 1.3B, layers: 24}, tokens: 5B}
gpus: {max: 64, deny: [rtx-4090]}
budget_usd: 2M
"""
# Two combinators in one condition: the message names one of them, the same one every time.
TWO_COMBINATORS = """\
rules:
  - id: ORG001
    name: two-combinators
    title: t
    severity: forbid
    message: m
    why: w
    source: {title: t, url: https://example.org}
    when: {all: [{field: gpu.id, equals: x}], any: [{field: gpu.id, equals: y}]}
"""


# ~4 s of CPU for two plans of MIXED: slow. The fast subset plans the same input twice in one process and
# compares the bytes on article-office (tests/test_plan_cli.py::test_same_input_gives_identical_bytes), and
# MIXED's JSON and table under two hash seeds (below)
@pytest.mark.slow
def test_twice_in_one_process_gives_identical_bytes(run, write, monkeypatch):
    """`advisor plan` twice on one input in one process prints the same table and the same JSON. Each
    round plans afresh and prints its plan both ways through the CLI (the table reads the round's plan,
    conftest.memoized_plan, which checks that printing left it as made): two plans, not one per format."""
    import advisor.flow as flow

    real = flow.plan
    path = write(MIXED)
    rounds = []
    for _ in range(2):
        monkeypatch.setattr(flow, "plan", memoized_plan(real, made := {}, []))
        rounds.append([run("plan", path, "--format", fmt, "--as-of", AS_OF) for fmt in ("table", "json")])
        assert len(made) == 1  # the round's one plan, made afresh
    first, second = rounds
    assert [r[0] for r in first] == [0, 0] and first == second
    assert json.loads(first[1][1])["status"] == "optimal" and "Not chosen" in first[0][1]


# One process per hash seed: it plans MIXED once and prints it through the CLI's own output step
# (cli/base.emit with the plan command's renderer) as `plan --format json` and `plan --format table`
# print it, then runs the CLI on a rules file whose message names one of two combinators.
BOTH_FORMATS = """\
import datetime as dt, sys
from click.testing import CliRunner
from advisor.cli import main
from advisor.cli.base import emit
from advisor.cli.plans import _plan_render
from advisor.inputs.workload import load_workload
from advisor.flow import plan
p = plan(load_workload(sys.argv[1]), as_of=dt.date.fromisoformat(sys.argv[2]))
emit(p, "json")
sys.stdout.write("\\0")
emit(p, "table", _plan_render)
sys.stdout.write("\\0")
bad = CliRunner().invoke(main, ["plan", sys.argv[3], "--rules", sys.argv[4]])
sys.stdout.write(f"{bad.exit_code}\\0{bad.stderr}")
"""


# The tests of this file run on one pytest-xdist worker, in order: the first one's layout searches are
# in the on-disk store (tests/conftest.py writes it after each test) when the hash-seed processes start
pytestmark = pytest.mark.xdist_group("determinism")


@pytest.mark.slow
def test_hash_seed_does_not_leak_into_output(write, capsys, monkeypatch):
    """This process (its hash seed random, unless PYTHONHASHSEED is set) and a fresh one under another
    seed print the same bytes: any leak of set or dict order shows between them. (One new process, not
    two: ~2 s of CPU less; the in-process run goes through the same script.)"""
    path = write(MIXED)
    rules = write(TWO_COMBINATORS, "rules.yaml")
    args = [str(path), AS_OF.isoformat(), str(EXAMPLES / "article-office.yaml"), str(rules)]
    other = "4242" if os.environ.get("PYTHONHASHSEED") == "0" else "0"
    assert os.environ.get("PYTHONHASHSEED") != other and (sys.flags.hash_randomization or other != "0")
    monkeypatch.setattr(sys, "argv", ["-c", *args])
    exec(BOTH_FORMATS, {"__name__": "__main__"})
    here = capsys.readouterr().out.encode().split(b"\0")
    env = {**os.environ, "PYTHONHASHSEED": other}
    fresh = subprocess.run([sys.executable, "-c", BOTH_FORMATS, *args], capture_output=True, env=env, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.split(b"\0") == here
    plan = json.loads(here[0])
    assert plan["status"] == "optimal" and "Not chosen" in here[1].decode()  # the table, not an empty render
    assert here[2] == b"2" and "stands alone" in here[3].decode()  # the rules file's error


def test_json_output_is_pure_json_in_a_real_pipe():
    """HiGHS prints a banner from C++ straight to file descriptor 1; it must not reach stdout."""
    plan = subprocess.run(
        f'"{sys.executable}" -m advisor plan "{EXAMPLES / "article-datacenter.yaml"}" '
        f'--format json --as-of {AS_OF} | "{sys.executable}" -m json.tool',
        shell=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["status"] == "optimal"
