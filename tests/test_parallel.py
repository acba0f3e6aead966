"""Re-solves on two cores (solve/parallel.py): a plan made with forced workers is the same JSON as
the serial one, and the fallbacks (off, a failing child, an error) behave as the serial path."""
from __future__ import annotations

import json
import os

import pytest
import yaml
from conftest import AS_OF, EXAMPLES

from advisor.api import plan
from advisor.explain import robustness as rob
from advisor.solve import parallel


def small_fleet() -> dict:
    """team-fleet's first three job lines (11 jobs, datacenter, buy or rent)."""
    doc = yaml.safe_load((EXAMPLES / "team-fleet.yaml").read_text())
    doc["jobs"] = doc["jobs"][:3]
    return doc


def planned_json(monkeypatch, how: str) -> tuple[str, int]:
    """The plan's JSON with GPU_ADVISOR_PARALLEL=`how`, and how many processes were forked."""
    forks = []
    real = os.fork

    def counting() -> int:
        pid = real()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setenv(parallel.ENV, how)
    monkeypatch.setattr(os, "fork", counting)
    p = plan(small_fleet(), as_of=AS_OF)
    return json.dumps(p.to_dict(), indent=2, ensure_ascii=False), len(forks)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: always serial")
def test_forced_workers_give_the_serial_plan(monkeypatch):
    serial, none = planned_json(monkeypatch, "off")
    forked, forks = planned_json(monkeypatch, "on")
    assert none == 0
    # the sensitivity stage forks once (with the robustness verdict's first block of draws), then once per
    # later block
    draws = json.loads(serial)["robustness"]["draws"]
    block = rob.CHECK_EVERY
    assert forks == 1 + -(-max(0, draws - block) // block)
    assert forked == serial


def test_every_task_once_in_index_order(monkeypatch):
    monkeypatch.setenv(parallel.ENV, "on")
    assert parallel.run(lambda i: i * i, 40) == [i * i for i in range(40)]
    assert parallel.gather([lambda: "a", lambda: "b", lambda: "c"]) == ["a", "b", "c"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_failing_child_is_recomputed_in_the_parent(monkeypatch):
    monkeypatch.setenv(parallel.ENV, "on")
    parent = os.getpid()

    def task(i: int) -> int:
        if os.getpid() != parent:
            os._exit(3)   # the child dies without an answer
        return i * i

    assert parallel.run(task, 6) == [i * i for i in range(6)]


def test_off_small_and_errors_stay_serial(monkeypatch):
    monkeypatch.setenv(parallel.ENV, "off")
    assert parallel.workers() == 1 and not parallel.worth(1e9)
    monkeypatch.setenv(parallel.ENV, "")
    if parallel.workers() > 1:
        assert not parallel.worth(parallel.MIN_WORK_S / 2) and parallel.worth(parallel.MIN_WORK_S)
    monkeypatch.setenv(parallel.ENV, "on")

    def task(i: int) -> int:
        if i == 3:
            raise ValueError("task 3")
        return i

    with pytest.raises(ValueError, match="task 3"):   # raised in the child: the parent's re-run raises it
        parallel.run(task, 4)
    merged = []
    counter = {"n": 0}

    def counted(i: int) -> int:
        counter["n"] += 1
        return i

    at_fork = counter["n"]
    assert parallel.run(counted, 4, state=lambda: counter["n"] - at_fork, merge=merged.append) == [0, 1, 2, 3]
    # the tasks the child ran came back as its state: with the parent's own, all four
    assert counter["n"] + sum(merged) == 4
