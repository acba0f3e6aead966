"""Layout searches remembered: for the life of the process, and between runs on disk.

The layout search (perf/layout.py) is a pure function of the job's shape, the GPU's catalog
figures, the GPU count and the estimator's parameters, and costs a few milliseconds to a quarter
of a second. One command asks the same question many times (`crossover` plans a dozen workloads;
a diagnosis rebuilds its problem under other deployments and batches: 2,188 searches, 764
distinct), and a cold `advisor plan` spent most of its own time in it. Remembering the answer by
value changes nothing but time.

Keys are by value: the JobSpec (a frozen dataclass), the GPU's figures and the parameters' repr,
so a --catalog override with the same GPU id but other figures gets its own entry. The GPU's name,
prices and note are left out (the search never reads them), and so is its id unless a parameter
table names it (`gpu_value` in perf/training.py reads tables by id, then by generation): two GPUs
with the same figures share one search (a --catalog copy of a GPU at another price, say). On disk,
one sealed JSON entry (data/cache.py) per (question, job, GPU, parameters) holds every count asked
so far, in a folder of the cache (`GPU_ADVISOR_CACHE=off` turns it off) named by a digest of the
estimator's source: a changed estimator never reads an old answer. An answer read back is checked
value by value (a layout of known strategy and positive sizes, finite times, a speed above zero, or
a GPU count); an entry that is unsealed, for another question, or not of that shape is removed and
searched again. Files are written at exit, atomically.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.data.cache import cache_dir, read_sealed, remove, usable_folder, write_sealed
from advisor.perf.memory import Layout

MAX_ENTRIES = 200_000  # a 1,000-job x 56-type fleet asks ~10^5 questions; beyond this, start again
MAX_FILES = 20_000  # files per store folder: beyond this, nothing more is written
KEEP_FOLDERS = 3  # store folders of other estimator versions kept (several checkouts may share)
_SOURCES = (
    "perf/layout.py",
    "perf/layout_grid.py",
    "perf/training.py",
    "perf/memory.py",
    "perf/jobspec.py",
    "perf/layout_cache.py",
    "data/estimator.py",
    "data/cache.py",
)
_STRATEGIES = ("ddp", "zero1", "zero2", "zero3")  # perf/layout.py's STRATEGIES (it imports this module)
_SHARDS: dict[tuple, dict] = {}  # (kind, job, GPU key, params key) -> {n: answer}
_DIRTY: set[tuple] = set()  # shards with new answers, not yet on disk
_VALUE_KEYS: dict[int, tuple[object, str]] = {}  # id(obj) -> (obj, its value key)
_GPU_KEYS: dict[tuple[int, int], tuple[object, object, str]] = {}  # (id(gpu), id(params)) -> (gpu, params, key)
_NAMED: dict[int, tuple[object, frozenset]] = {}  # id(params) -> (params, the keys of its tables)
# (id(gpu), id kept?) -> (gpu, its figures): each plan has its own parameters object (a `crossover`
# makes 12), while its GPUs are the catalog's, read once
_FIGURES: dict[tuple[int, bool], tuple[object, str]] = {}
_UNREAD = frozenset({"name", "prices", "note"})  # GPU fields the layout search never reads
_FOLDER: list[Path | None] = []  # [folder] once known (None: no disk)
_OWNER = os.getpid()  # the process that writes the store: a forked worker (solve/parallel.py) only sends answers


def _value_key(obj: object, describe: Callable[[Any], str]) -> str:
    hit = _VALUE_KEYS.get(id(obj))
    if hit is None or hit[0] is not obj:  # (the object is kept with its key, so its id stays unique)
        hit = _VALUE_KEYS[id(obj)] = (obj, describe(obj))
    return hit[1]


def _folder() -> Path | None:
    if not _FOLDER:
        where = cache_dir()
        if where is not None:
            package = Path(__file__).resolve().parent.parent
            h = hashlib.sha256(sys.version.encode())
            try:
                for rel in _SOURCES:
                    h.update(rel.encode() + b"\0" + (package / rel).read_bytes() + b"\0")
                where = where / f"layouts-{h.hexdigest()[:20]}"
            except OSError:
                where = None
        _FOLDER.append(where)
        if where is not None:
            atexit.register(save)
    return _FOLDER[0]


def _identity(shard: tuple) -> str:
    """The shard's key as a digest (the file is named by its first 32 digits, the entry sealed with all)."""
    kind, job, gpu_key, params_key = shard
    return hashlib.sha256(f"{kind}\0{job!r}\0{gpu_key}\0{params_key}".encode()).hexdigest()


def _count(value: Any) -> int:
    if type(value) is not int or value < 1:
        raise ValueError("not a count")
    return value


def _layout_answer(value: Any) -> tuple | None:
    """A stored `_choose_layout` answer, checked: None, or (Layout, step times, tokens/s, needs TP)."""
    if value is None:
        return None
    if type(value) is not list or len(value) != 4 or type(value[0]) is not list or len(value[0]) != 7:
        raise ValueError("not a layout answer")
    lay, times, tps, needs = value
    strategy, dp, tp, pp, micro_batch, checkpointing, cp = lay
    if (
        strategy not in _STRATEGIES
        or type(checkpointing) is not bool
        or type(needs) is not bool
        or type(times) is not dict
        or type(tps) is not float
        or not math.isfinite(tps)
        or tps <= 0
    ):
        raise ValueError("not a layout answer")
    for name, t in times.items():
        if not (type(t) is str or (type(t) in (int, float) and math.isfinite(t) and t >= 0)):
            raise ValueError(f"step time {name!r}")
    return (
        Layout(strategy, _count(dp), _count(tp), _count(pp), _count(micro_batch), checkpointing, _count(cp)),
        times,
        tps,
        needs,
    )


def _stored(kind: str, answers: dict) -> bytes:
    if kind == "layout":
        answers = {n: None if a is None else [dataclasses.astuple(a[0]), a[1], a[2], a[3]] for n, a in answers.items()}
    return json.dumps(sorted(answers.items()), separators=(",", ":"), allow_nan=False).encode()


def _read(kind: str, payload: bytes) -> dict:
    """The answers of a stored shard; raises ValueError (or TypeError) unless each is of the right shape."""
    read = _layout_answer if kind == "layout" else (lambda v: None if v is None else _count(v))
    pairs = json.loads(payload)
    if type(pairs) is not list or not all(type(p) is list and len(p) == 2 for p in pairs):
        raise ValueError("not a list of (count, answer)")
    return {_count(n): read(value) for n, value in pairs}


def _load(shard: tuple) -> dict:
    answers: dict = {}
    folder = _folder()
    if folder is not None:
        key = _identity(shard)
        path = folder / (key[:32] + ".json")
        payload = read_sealed(path, "layouts", key)
        if payload is not None:
            try:
                answers = _read(shard[0], payload)
            except (ValueError, TypeError):  # sealed, yet not of this shape: searched again
                remove(path)
    if len(_SHARDS) >= MAX_ENTRIES // 8 and os.getpid() == _OWNER:  # (a worker's memory just grows)
        save()
        _SHARDS.clear()
        _VALUE_KEYS.clear()
        _GPU_KEYS.clear()
        _NAMED.clear()
        _FIGURES.clear()
    _SHARDS[shard] = answers
    return answers


def remembered(fn: Callable[..., Any], kind: str, job: Any, gpu: Any, n: int, p: Any) -> Any:
    """fn(job, gpu, n, p), computed once per distinct (job, GPU figures, n, parameters)."""
    shard = (kind, job, _gpu_value_key(gpu, p), _value_key(p, repr))
    answers = _SHARDS.get(shard)
    if answers is None:
        answers = _load(shard)
    try:
        return answers[n]
    except KeyError:
        pass
    value = answers[n] = fn(job, gpu, n, p)
    _DIRTY.add(shard)
    return value


def mark() -> dict[tuple, int]:
    """How many answers each unsaved shard holds now: new_answers(mark()) is what was found since."""
    return {shard: len(_SHARDS[shard]) for shard in _DIRTY if shard in _SHARDS}


def new_answers(since: dict[tuple, int] | None = None) -> dict[tuple, dict]:
    """The shards with answers not yet on disk, those new or grown `since` a mark() only: what a
    worker process (solve/parallel.py) found, sent to the parent with its results."""
    since = since or {}
    return {shard: _SHARDS[shard] for shard in _DIRTY if shard in _SHARDS and len(_SHARDS[shard]) > since.get(shard, 0)}


def absorb(found: dict[tuple, dict] | None) -> None:
    """Another process's new_answers(), remembered here (and written at exit) as if found here."""
    for shard, answers in (found or {}).items():
        mine = _SHARDS.get(shard)
        if mine is None:
            mine = _load(shard)  # (it keeps what it loads)
        mine.update(answers)
        _DIRTY.add(shard)


def search_key(gpu: Any, p: Any) -> tuple[str, str]:
    """The GPU's figures the search reads and the parameters, by value (what a shard is keyed by):
    perf/layout_grid.py keeps its per-GPU arrays under it, since every plan of a `crossover` gets
    its own catalog and parameter objects."""
    return _gpu_value_key(gpu, p), _value_key(p, repr)


def _gpu_value_key(gpu: Any, p: Any) -> str:
    hit = _GPU_KEYS.get((id(gpu), id(p)))
    if hit is None or hit[0] is not gpu or hit[1] is not p:
        hit = _GPU_KEYS[id(gpu), id(p)] = (gpu, p, _gpu_key(gpu, p))
    return hit[2]


def _gpu_key(gpu: Any, p: Any) -> str:
    """The GPU's figures the search can read: without name, prices and note, and without the id
    unless one of the parameters' tables has an entry for it."""
    named = _NAMED.get(id(p))
    if named is None or named[0] is not p:
        tables = [getattr(p, f.name) for f in dataclasses.fields(p)] if dataclasses.is_dataclass(p) else []
        named = _NAMED[id(p)] = (p, frozenset(k for t in tables if isinstance(t, dict) for k in t))
    keep_id = gpu.id in named[1]
    hit = _FIGURES.get((id(gpu), keep_id))
    if hit is None or hit[0] is not gpu:
        hit = _FIGURES[id(gpu), keep_id] = (gpu, _figures(gpu, _UNREAD if keep_id else _UNREAD | {"id"}))
    return hit[1]


def _figures(value: Any, drop: frozenset = frozenset()) -> str:
    """A model's field values, nested, as text (not model_dump_json: the catalog models defer
    their build, and building the GPU's serializer cost ~0.01 s of a cold plan)."""
    fields = getattr(type(value), "model_fields", None)
    if fields is not None:
        return "{" + ",".join(f"{k}:{_figures(getattr(value, k))}" for k in fields if k not in drop) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_figures(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{_figures(v)}" for k, v in value.items()) + "}"
    return repr(value)


def save() -> None:
    """Write the shards with new answers (sealed entries, each written atomically)."""
    folder = _folder()
    dirty = [s for s in _DIRTY if s in _SHARDS]
    _DIRTY.clear()
    if (
        folder is None
        or not dirty
        or not (usable_folder(folder.parent, create=True) and usable_folder(folder, create=True))
    ):
        return
    try:
        _prune(folder)
        room = MAX_FILES - sum(1 for _ in os.scandir(folder))
    except OSError:
        return
    for shard in dirty[: max(0, room)]:
        key = _identity(shard)
        try:
            payload = _stored(shard[0], _SHARDS[shard])
        except (ValueError, TypeError):  # (a NaN time: not stored, searched again next time)
            continue
        write_sealed(folder / (key[:32] + ".json"), "layouts", key, payload)


def _prune(folder: Path) -> None:
    """Remove the stores of older estimator versions, keeping the newest few."""
    others = sorted(
        (p for p in folder.parent.glob("layouts-*") if p != folder and p.is_dir() and not p.is_symlink()),
        key=lambda p: p.lstat().st_mtime,
    )
    for old in others[:-KEEP_FOLDERS] if len(others) > KEEP_FOLDERS else []:
        try:  # by a descriptor of the folder itself: a link swapped in for it is never followed
            fd = os.open(old, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            for name in os.listdir(fd):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)
        except OSError:
            pass
        finally:
            os.close(fd)
        try:
            old.rmdir()
        except OSError:
            pass


def forget() -> None:
    """Drop what this process remembers (the files stay)."""
    _SHARDS.clear()
    _DIRTY.clear()
    _VALUE_KEYS.clear()
    _GPU_KEYS.clear()
    _NAMED.clear()
    _FIGURES.clear()
