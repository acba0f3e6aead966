"""Layout searches remembered for the life of the process.

The layout search (perf/layout.py) is a pure function of the job's shape, the GPU's catalog
figures, the GPU count and the estimator's parameters, and costs a few milliseconds to a quarter
of a second. One command asks the same question many times: `crossover` plans a dozen workloads
and each diagnosis rebuilds its problem under other deployments and batches (2,188 searches of
which most repeat), and fleets repeat model shapes across jobs. Remembering the answer by value
changes nothing but time.

Keys are by value: the JobSpec (a frozen dataclass), the GPU's full figures and the parameters'
repr, so a --catalog override with the same GPU id but other figures gets its own entry. The
objects behind a key are kept with it (their id is only a shortcut to the value key).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_ENTRIES = 200_000        # a 1,000-job x 56-type fleet asks ~10^5; beyond this, start again
_RESULTS: dict[tuple, Any] = {}
_VALUE_KEYS: dict[int, tuple[object, str]] = {}   # id(obj) -> (obj, its value key)


def _value_key(obj: object, describe: Callable[[Any], str]) -> str:
    hit = _VALUE_KEYS.get(id(obj))
    if hit is None or hit[0] is not obj:
        hit = _VALUE_KEYS[id(obj)] = (obj, describe(obj))
    return hit[1]


def _gpu_key(gpu: Any) -> str:
    return gpu.model_dump_json()


def remembered(fn: Callable[..., Any], kind: str, job: Any, gpu: Any, n: int, p: Any) -> Any:
    """fn(job, gpu, n, p), computed once per distinct (job, GPU figures, n, parameters)."""
    key = (kind, job, _value_key(gpu, _gpu_key), n, _value_key(p, repr))
    try:
        return _RESULTS[key]
    except KeyError:
        pass
    value = fn(job, gpu, n, p)
    if len(_RESULTS) >= MAX_ENTRIES:
        _RESULTS.clear()
    if len(_VALUE_KEYS) >= MAX_ENTRIES:
        _VALUE_KEYS.clear()
    _RESULTS[key] = value
    return value


def forget() -> None:
    """Drop everything remembered (tests that patch the estimator's internals call this)."""
    _RESULTS.clear()
    _VALUE_KEYS.clear()
