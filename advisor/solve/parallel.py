"""Independent work on both cores (issue 19): the GPU types' candidates (their layout searches come
back to the parent, perf/layout_cache.py), robustness draws (the first block begun while the plan itself is
solved: `Early`) and break-even bisections of different GPU types, mapped over forked worker
processes, merged in index order.

Why processes and fork: HiGHS threads = 2 overran its time limit (highspy 1.16), and highspy
objects do not pickle, so a worker must inherit the built models: a forked child has the parent's
memory (models, caches, closures) for free and sends back only its results (pickled). Every solve
runs HiGHS with threads = 1, which starts no scheduler threads, so forking after a HiGHS run is
safe (bench/parallel_fork.py forks after HiGHS runs and re-solves in the children, many times).

The tasks are dealt from a queue: the parent and each child take the next index as they finish
one, so long and short tasks balance; a child exits with os._exit (no atexit hooks: the layout
store is the parent's to write, perf/layout_cache.py). When no child can start (os.fork fails), the parent
does every task. A child that fails in
any way (an exception, a crash, an unreadable answer) is recomputed in the parent, so errors and
results are those of the serial path. Results do not depend on which process computed them: each
task is a fresh HiGHS run of a model whose coefficients the task sets (tests/test_parallel.py
compares plans made both ways).

Serial (one process) when: GPU_ADVISOR_PARALLEL=off (or 0), one usable core, no os.fork (Windows)
or macOS (fork is unsafe with its system frameworks), fewer than two tasks, or the work is too
small to pay for a fork: `worth(seconds)` compares the caller's estimate of the serial work with
MIN_WORK_S. GPU_ADVISOR_PARALLEL=on forces workers whatever the size (the tests use it).
"""

from __future__ import annotations

import itertools
import os
import pickle
import struct
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

ENV = "GPU_ADVISOR_PARALLEL"
MAX_WORKERS = 2
# bench/parallel_fork.py: a fork and a trivial answer cost ~3 ms of wall here; with the child's
# first touches of the parent's pages, a block of draws broke even at ~0.05-0.1 s of serial work
# (lora-7b-workstation: 54 ms blocks, 0.108 s serial vs 0.100 s forced; article-office: 13 ms,
# 11 vs 15 ms) and halves from ~0.2 s (rent-vs-buy-3y 0.94 -> 0.55 s). Below this, serial.
MIN_WORK_S = 0.1


def mode() -> str:
    """'off', 'on' (forced, whatever the size) or 'auto', from GPU_ADVISOR_PARALLEL."""
    v = os.environ.get(ENV, "").strip().lower()
    if v in ("0", "off", "no", "false", "serial"):
        return "off"
    if v in ("1", "on", "yes", "true", "force"):
        return "on"
    return "auto"


def cores() -> int:
    """Cores this process may use (its affinity mask where the platform says)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# Set while this process does a run()'s tasks beside another process (the parent with children, or a
# child): a run inside a task stays serial. Both cores are busy already, and a nested fork costs more than
# it gives: the rent problem the other way to own rebuilds (a task of the sensitivity stage) took 2.35 s
# serially and 2.23 s of the parent's CPU forked, its child's 1.35 s lost (the parent re-offers the child's
# GPU types from its layout searches, and for renting the offers, not the searches, are the work).
_BUSY = [False]


def workers() -> int:
    """Processes to use, the parent included: 1 means serial."""
    if _BUSY[0] or mode() == "off" or not hasattr(os, "fork") or sys.platform == "darwin":
        return 1
    return max(1, min(MAX_WORKERS, cores()))


def worth(work_s: float) -> bool:
    """Would forking pay for `work_s` seconds of serial work?"""
    if workers() < 2:
        return False
    return mode() == "on" or work_s >= MIN_WORK_S


def run(
    task: Callable[[int], T],
    n: int,
    *,
    work_s: float | None = None,
    merge: Callable[[Any], None] | None = None,
    state: Callable[[], Any] | None = None,
) -> list[T]:
    """[task(0), ..., task(n - 1)], computed over worker processes when worth it (`work_s`: the
    caller's estimate of the serial time; None: always worth it when workers are allowed).

    The tasks are dealt from a queue (a pipe holding their indices; each process takes the next
    as it finishes one), so give the longest first. Task 0 is always computed in the calling process
    (taken before any fork), so its result may be what does not pickle. `state()` (optional) is read in a child after
    its tasks, and `merge(state)` called in the parent with it: for counters the tasks change
    (the explanation solve count), which a child's copy would otherwise lose."""
    parts = workers()
    if n < 2 or parts < 2 or n > MAX_QUEUE or (work_s is not None and not worth(work_s)):
        return [task(i) for i in range(n)]
    rfd = _queue(n)
    first = next(_indices(rfd))  # the parent takes task 0 before forking: the split starts the same every run
    children = []
    for _ in range(parts - 1):
        child = _fork(task, rfd, state)
        if child is not None:  # (no fork possible: the parent does the rest)
            children.append(child)
    out: list[Any] = [_NONE] * n
    busy, _BUSY[0] = _BUSY[0], bool(children)
    try:
        for i in itertools.chain([first], _indices(rfd)):
            out[i] = task(i)
    except BaseException:
        for pid, fd in children:
            _reap(pid, fd, kill=True)
        raise
    finally:
        _BUSY[0] = busy
        os.close(rfd)
    for pid, fd in children:
        got = _reap(pid, fd)
        if got is None:  # the child failed: its tasks are redone below, as the serial path would
            continue
        results, extra = got
        for i, x in results:
            out[i] = x
        if merge is not None:
            merge(extra)
    return [task(i) if x is _NONE else x for i, x in enumerate(out)]


_NONE = object()
MAX_QUEUE = 16000  # task indices the queue pipe holds (4 bytes each, within a 64 KiB pipe)


def _queue(n: int) -> int:
    """The read end of a pipe holding the task indices 0..n-1 (it fits the pipe: no reader needed yet)."""
    rfd, wfd = os.pipe()
    os.write(wfd, b"".join(struct.pack("<I", i) for i in range(n)))
    os.close(wfd)
    return rfd


def _indices(fd: int) -> Iterator[int]:
    """The next task index from the queue until it is empty (a 4-byte read from a pipe is atomic)."""
    while True:
        b = os.read(fd, 4)
        if len(b) < 4:
            return
        yield struct.unpack("<I", b)[0]


def _fork(task: Callable[[int], Any], queue: int, state: Callable[[], Any] | None) -> tuple[int, int] | None:
    """Start a child taking tasks from the queue; (pid, read end of its answer pipe), or None when
    the system cannot start one (out of processes or memory: the caller goes on alone)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        rfd, wfd = os.pipe()
    except OSError:
        return None
    try:
        with warnings.catch_warnings():  # Python 3.12 warns on fork with threads (the progress line's)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(rfd)
        os.close(wfd)
        return None
    if pid == 0:  # the child: compute, send, leave without running the parent's exit hooks
        code = 1
        _BUSY[0] = True
        try:
            os.close(rfd)
            results = [(i, task(i)) for i in _indices(queue)]
            payload = pickle.dumps((results, state() if state is not None else None), pickle.HIGHEST_PROTOCOL)
            with os.fdopen(wfd, "wb") as f:
                f.write(payload)
            code = 0
        except BaseException:  # noqa: BLE001 -- any failure: the parent redoes this child's tasks
            pass
        finally:
            os._exit(code)
    os.close(wfd)
    return pid, rfd


def _reap(pid: int, fd: int, kill: bool = False) -> Any:
    """The child's ([(index, result)], state), or None when it failed (or was killed)."""
    if kill:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    finally:
        _, status = os.waitpid(pid, 0)
    if kill or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 -- a truncated answer: recompute
        return None


class Early:
    """Tasks begun in one child process before the caller has the rest of its work (the robustness
    draws while the plan itself is solved: they need the candidates, not the plan). `rest()` takes
    back the indices no process has begun, for the caller to run beside its other work (through
    run(), say); `done()` waits for the child's answers. With no child (serial, as run() would be,
    or more tasks than the queue holds) rest() gives every index back. `cancel()` stops the child
    whatever it is doing (the caller no longer needs the answers, or failed)."""

    def __init__(self, task: Callable[[int], Any], n: int, state: Callable[[], Any] | None = None):
        self.n = n
        self.queue: int | None = None
        self.child: tuple[int, int] | None = None
        if n < 1 or n > MAX_QUEUE or workers() < 2:
            return
        self.queue = _queue(n)
        self.child = _fork(task, self.queue, state)
        if self.child is None:  # no process could start: every index goes back to the caller
            os.close(self.queue)
            self.queue = None

    def rest(self) -> list[int]:
        """The indices nobody has begun, in order (the child finishes the one it is on and stops)."""
        if self.child is None:
            return list(range(self.n))
        if self.queue is None:
            return []
        left = list(_indices(self.queue))  # 4-byte reads are atomic: each index goes to one process
        os.close(self.queue)
        self.queue = None
        return left

    def done(self) -> tuple[dict[int, Any], Any]:
        """The child's answers by index and its state; ({}, None) when there was no child or it
        failed (the caller computes what is missing, as the serial path would)."""
        self.rest()
        if self.child is None:
            return {}, None
        pid, fd = self.child
        self.child = None
        got = _reap(pid, fd)
        if got is None:
            return {}, None
        results, extra = got
        return dict(results), extra

    def cancel(self) -> None:
        if self.queue is not None:
            os.close(self.queue)
            self.queue = None
        if self.child is not None:
            _reap(*self.child, kill=True)
            self.child = None


def gather(
    tasks: Sequence[Callable[[], T]],
    *,
    work_s: float | None = None,
    merge: Callable[[Any], None] | None = None,
    state: Callable[[], Any] | None = None,
) -> list[T]:
    """[t() for t in tasks] through run(): independent calls, e.g. one bisection per GPU type."""
    return run(lambda i: tasks[i](), len(tasks), work_s=work_s, merge=merge, state=state)


def paced(tasks: Sequence[Callable[[], T]], *, counted: Callable[[], dict[str, Any]] | None = None) -> list[T]:
    """gather(tasks) for alike tasks whose work has no estimate at hand (re-solves of one model at other
    prices): the first runs here, and its CPU time x the tasks left is the estimate the rest are forked on.
    `counted` (SolveTally.forked) gives gather's state and merge, taken after the first task: a child
    forked after it would otherwise count its solves again (review23b #4: 4 tasks counted 5 solves)."""
    if not tasks:
        return []
    took = time.process_time()
    first = tasks[0]()
    took = time.process_time() - took
    return [first, *gather(tasks[1:], work_s=took * (len(tasks) - 1), **(counted() if counted else {}))]
