"""Re-solves on two cores (solve/parallel.py): a plan made with forced workers is the same JSON as
the serial one, and the fallbacks (off, a failing child, an error) behave as the serial path."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
import yaml
from conftest import AS_OF, EXAMPLES

from advisor.api import plan
from advisor.explain import robustness as rob
from advisor.solve import parallel

# a run forks a second worker only with two cores and os.fork, and not on macOS (parallel.workers)
TWO_PROCESSES = pytest.mark.skipif(
    parallel.cores() < 2 or sys.platform == "darwin" or not hasattr(os, "fork"), reason="always serial here"
)


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
@pytest.mark.slow
def test_forced_workers_give_the_serial_plan(monkeypatch):
    serial, none = planned_json(monkeypatch, "off")
    forked, forks = planned_json(monkeypatch, "on")
    assert none == 0
    # the candidates fork once (GPU types offered on both cores), the robustness verdict's first block
    # begins in a child before the plan is solved (forced: whatever the size), the sensitivity stage forks
    # once (with the draws that child had not begun), then once per later block, and the value of
    # information's restricted re-solves once (decision.restricted_options: the first here, then the rest)
    draws = json.loads(serial)["robustness"]["draws"]
    block = rob.CHECK_EVERY
    assert forks == 4 + -(-max(0, draws - block) // block)
    assert forked == serial


def test_early_tasks_each_once_whoever_takes_them(monkeypatch):
    """Tasks begun in a child before the rest of the work: the indices taken back and the child's
    answers are every task once; a child that dies is recomputed; cancel leaves no process behind."""
    monkeypatch.setenv(parallel.ENV, "on")
    early = parallel.Early(lambda i: i * i, 40)
    left = early.rest()
    answers, _ = early.done()
    assert sorted(left + list(answers)) == list(range(40)) and not set(left) & set(answers)
    assert all(answers[i] == i * i for i in answers)
    parent = os.getpid()

    def dies(i: int) -> int:
        if os.getpid() != parent:
            os._exit(3)
        return i

    early = parallel.Early(dies, 5)
    assert early.done() == ({}, None)  # the caller draws what is missing, as serially
    early = parallel.Early(lambda i: time.sleep(30), 3)
    early.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # reaped: no child left
    monkeypatch.setenv(parallel.ENV, "off")
    assert parallel.Early(lambda i: i, 4).rest() == [0, 1, 2, 3]  # serial: every task back to the caller


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_draws_begun_before_an_infeasible_plan_are_stopped(monkeypatch):
    """No plan, no verdict: the draws begun are stopped before the diagnosis re-plans."""
    from advisor.explain import diagnosis  # imported by assemble.py when no plan exists

    monkeypatch.setenv(parallel.ENV, "on")
    doc = small_fleet()
    doc["budget_usd"] = 1.0
    real, alive, calls = diagnosis.diagnose, [], []

    def diagnose(*a, **k):
        calls.append(True)
        try:
            os.waitpid(-1, os.WNOHANG)
            alive.append(True)  # a child to reap: the draws were still there
        except ChildProcessError:
            pass
        return real(*a, **k)

    monkeypatch.setattr(diagnosis, "diagnose", diagnose)
    p = plan(doc, as_of=AS_OF)
    assert p["status"] == "infeasible" and p["diagnosis"] and calls and not alive
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_no_process_to_start_means_the_parent_does_everything(monkeypatch):
    monkeypatch.setenv(parallel.ENV, "on")

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    assert parallel.Early(lambda i: i, 5).rest() == [0, 1, 2, 3, 4]
    assert parallel.run(lambda i: i * i, 6) == [i * i for i in range(6)]
    if before is not None:  # no pipe left open
        assert len(os.listdir("/proc/self/fd")) == before


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
            os._exit(3)  # the child dies without an answer
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

    with pytest.raises(ValueError, match="task 3"):  # raised in the child: the parent's re-run raises it
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


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_candidates_offered_on_two_cores_are_the_serial_ones(monkeypatch, tmp_path):
    """GPU types offered in a child (forced) give the candidates and reasons of a serial build, and
    the child's layout searches come back to the parent as new answers (layout_cache.absorb): a layout
    search made elsewhere is not made again here."""
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.flow import prepare
    from advisor.inputs.workload import parse_workload
    from advisor.perf import layout, layout_cache, params_from

    monkeypatch.setattr(layout_cache, "_FOLDER", [None])  # no store on disk: this process's memory only
    layout_cache.forget()
    wl = parse_workload(small_fleet())
    catalog, rules = load_catalog(), load_rules()

    def rows(problem) -> list:
        return [[(c.gpu, c.count, c.ownership, c.hours, c.run_cost_usd) for c in cs] for cs in problem.candidates]

    monkeypatch.setenv(parallel.ENV, "on")
    forked = prepare(wl, catalog, rules, AS_OF)
    found = layout_cache.new_answers()
    layout_cache.forget()
    monkeypatch.setenv(parallel.ENV, "off")
    serial = prepare(wl, catalog, rules, AS_OF)
    assert rows(forked) == rows(serial) and sum(map(len, serial.candidates)) > 100
    assert {g: r.reasons for g, r in forked.rejected.items()} == {g: r.reasons for g, r in serial.rejected.items()}
    for name in ("gpu_kw", "unit_price", "rent_rate", "holdings"):  # keyed and ordered as serially
        assert list(getattr(forked, name).items()) == list(getattr(serial, name).items())
    assert list(forked.servers) == list(serial.servers) and list(forked.residual) == list(serial.residual)
    layout_cache.forget()
    layout_cache.absorb(found)  # what another process found, as a child's answers arrive
    searched = []
    real = layout._choose_layout
    monkeypatch.setattr(layout, "_choose_layout", lambda *a: searched.append(a) or real(*a))
    assert rows(prepare(wl, catalog, rules, AS_OF)) == rows(serial)
    assert searched == []
    # the way back from a child: the parent takes task 0 and waits until the child has searched, and the
    # child's searches are found here afterwards
    layout_cache.forget()
    monkeypatch.setenv(parallel.ENV, "on")
    gpu, spec, params = catalog.gpus["h100-sxm"], serial.classes[0].spec, params_from(catalog)
    parent = os.getpid()
    flag = tmp_path / "child-searched"

    def task(i: int) -> int:
        if i == 0 and os.getpid() == parent:  # wait (20 s at most) until the child has taken a task
            deadline = time.monotonic() + 20
            while not flag.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        layout.choose_layout(spec, gpu, 8 * (i + 1), params)
        if os.getpid() != parent:
            flag.touch()
        return os.getpid()

    known = layout_cache.mark()
    layout.choose_layout(spec, gpu, 8, params)
    assert (
        len(layout_cache.new_answers(known)) == 1 and layout_cache.new_answers(layout_cache.mark()) == {}
    )  # only what is new since
    layout_cache.forget()
    pids = parallel.run(task, 6, state=layout_cache.new_answers, merge=layout_cache.absorb)
    assert any(p != parent for p in pids)  # the child searched some
    searched.clear()
    monkeypatch.setenv(parallel.ENV, "off")
    assert all(task(i) == parent for i in range(1, 6)) and searched == []
    layout_cache.forget()


@TWO_PROCESSES
def test_task_zero_is_the_callers_and_paced_forks_only_when_worth_it(monkeypatch):
    """run() computes task 0 in the calling process (the other way to own is task 0 of the sensitivity
    stage: its rebuilt problem does not pickle); paced() runs its first task here and forks for the rest
    only when the first's time says they are worth it."""
    monkeypatch.setenv(parallel.ENV, "on")
    me = os.getpid()
    # task 0 the long one: the parent is busy while the child takes the rest, however late it is scheduled
    pids = parallel.run(lambda i: (time.sleep(0.5 if i == 0 else 0.01), os.getpid())[1], 6)
    assert pids[0] == me and any(p != me for p in pids)
    assert parallel.paced([lambda: os.getpid()] + [lambda: (time.sleep(0.05), os.getpid())[1]] * 4)[0] == me
    forks = []
    real = os.fork
    monkeypatch.setattr(os, "fork", lambda: (pid := real()) and forks.append(pid) or pid)
    monkeypatch.setenv(parallel.ENV, "")  # auto: a first task of no work forks nothing for the rest
    assert parallel.paced([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3] and forks == []
    assert parallel.paced([]) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_paced_counts_each_solve_once_with_workers_forced(monkeypatch):
    """review23b #4: paced() took the tally's snapshot before its first task ran here, so a child forked
    after it counted that task's solve again: 4 tasks, 5 solves."""
    from advisor.solve.settings import SolveTally

    monkeypatch.setenv(parallel.ENV, "on")
    t = SolveTally()

    def solve(i: int):
        def f() -> int:
            t.solves += 1
            return i

        return f

    assert parallel.paced([solve(i) for i in range(4)], counted=t.forked) == [0, 1, 2, 3]
    assert t.solves == 4


def test_a_tally_counts_what_children_solved():
    """SolveTally.forked(): a child's solves since the fork, added in the parent."""
    from advisor.solve.settings import SolveTally

    tally = SolveTally(solves=5, unproven=1)
    sync = tally.forked()
    tally.solves += 3  # as in a child, after the fork
    extra = sync["state"]()
    tally.solves, tally.unproven = 5, 1  # the parent's copy did not see them
    sync["merge"](extra)
    assert (tally.solves, tally.unproven) == (8, 1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: always serial")
@pytest.mark.slow
def test_the_other_way_beside_the_sensitivity_is_the_serial_one(monkeypatch):
    """A buy-only workload's other way to own rebuilds the problem for renting: made beside the
    sensitivity re-solves and the draws (task 0, in this process), the plan is the serial one."""
    doc = small_fleet()
    doc["deployment"] = {**doc["deployment"], "ownership": "buy", "lead_time_days": 0}  # (hardware in hand)
    out = {}
    for how in ("off", "on"):
        monkeypatch.setenv(parallel.ENV, how)
        out[how] = json.dumps(plan(doc, as_of=AS_OF).to_dict(), indent=2, ensure_ascii=False)
    p = json.loads(out["off"])
    assert p["other_ownership"]["ownership"] == "rent" and p["other_ownership"]["total_cost_usd"] > 0
    assert out["on"] == out["off"]


@TWO_PROCESSES
def test_a_run_inside_a_task_stays_serial(monkeypatch):
    """While a run's tasks are done beside another process, a run inside a task does not fork (both cores
    are busy; the rent problem rebuilt inside the sensitivity stage lost a child's CPU re-offering)."""
    monkeypatch.setenv(parallel.ENV, "on")
    me = os.getpid()
    inside = parallel.run(lambda i: (time.sleep(0.5 if i == 0 else 0.01), os.getpid(), parallel.workers())[1:], 6)
    assert {w for _, w in inside} == {1} and {p for p, _ in inside} - {me}  # a child did some, none forked
    assert parallel.workers() == 2  # and after the run, forks again
