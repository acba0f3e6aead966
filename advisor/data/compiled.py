"""The shipped catalog and rules, compiled once: parsing and validating ~300 KB of YAML costs
most of a cold `advisor plan`, so the validated models are stored the first time, as JSON in a
sealed cache entry (data/cache.py), and rebuilt from it (a few ms) on later runs.

An entry is keyed by the SHA-256 of everything that shapes it: the data files' bytes and names,
the source of the modules that define and check the models, and the Python, PyYAML and pydantic
versions; an entry under another key is never read. What is read back is plain JSON, never code:
each model is written as its class's tag, its field values and which fields were set, and is rebuilt
only as one of the data models of this package (the subclasses of inputs/strict.Strict), with exactly
its class's fields; anything else (an unsealed, foreign, truncated or malformed entry) is removed
and the data parsed and validated again. User files (workloads, --catalog, --rules) are never
compiled: they are read with the defensive loader each time.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from advisor.data.cache import cache_dir, read_sealed, remove, write_sealed
from advisor.inputs.strict import Strict

T = TypeVar("T")
FORMAT = 2  # 1: pickle (never read again); 2: sealed JSON
KEEP = 8  # entries of one kind kept (several checkouts may share the folder)
# the code that makes and checks the compiled objects: every module of these folders (not a list of
# names, which a module split or renamed would silently leave stale), and errors.py
_CODE = ("data", "inputs", "errors.py")


class Unsupported(ValueError):
    """A value the plain form does not hold, or a stored value that is not what it should be."""


@functools.lru_cache(maxsize=1)
def _code_digest() -> bytes:
    """The digest of the code that makes and reads compiled data, and of the versions (once per process)."""
    import pydantic
    import yaml

    h = hashlib.sha256(f"{FORMAT}|{sys.version}|{yaml.__version__}|{pydantic.VERSION}".encode())
    package = Path(__file__).resolve().parent.parent
    for rel in _CODE:
        where = package / rel
        for path in sorted(where.glob("*.py")) if where.is_dir() else [where]:
            h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.digest()


def digest(kind: str, files: list[Path]) -> str:
    """The key of one compiled object: its data files, the code that reads them, the versions."""
    h = hashlib.sha256(kind.encode() + b"\0" + _code_digest())
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _tag(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def data_models() -> dict[str, type[Strict]]:
    """The classes a stored entry may name: every data model (Strict subclass) of this package."""
    found: dict[str, type[Strict]] = {}
    todo: list[type[Strict]] = [Strict]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("advisor.") and _tag(sub) not in found:
                found[_tag(sub)] = sub
                todo.append(sub)
    return found


def to_plain(value: Any) -> Any:
    """`value` (data models, dicts with text keys, lists, tuples, dates, text, numbers) as JSON values;
    a model is {"$": tag, "d": fields, "s": fields set[, "p": private attributes]}. Raises Unsupported."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, Strict):
        out = {"$": _tag(type(value)), "d": to_plain(dict(value.__dict__)), "s": sorted(value.__pydantic_fields_set__)}
        if value.__pydantic_private__:
            out["p"] = to_plain(dict(value.__pydantic_private__))
        return out
    if type(value) is dict:
        if not all(type(k) is str for k in value):
            raise Unsupported("a mapping with keys that are not text")
        out = {k: to_plain(v) for k, v in value.items()}
        return {"$": "dict", "d": out} if "$" in out else out
    if type(value) is list:
        return [to_plain(v) for v in value]
    if type(value) is tuple:
        return {"$": "tuple", "d": [to_plain(v) for v in value]}
    if type(value) is dt.date:
        return {"$": "date", "d": value.isoformat()}
    raise Unsupported(f"cannot store a {type(value).__name__}")


def from_json(payload: bytes, models: dict[str, type[Strict]]) -> Any:
    """The value to_plain wrote, rebuilt: models of the allowed classes only, with exactly their fields
    (as pickle would restore them: the stored values were validated when they were made, and the
    seal says they are those). Raises Unsupported (or ValueError) on anything else."""
    new, put = object.__new__, object.__setattr__
    shapes = {tag: (cls, cls.model_fields.keys(), cls.__private_attributes__.keys()) for tag, cls in models.items()}
    tags = frozenset(("$", "d", "s", "p"))

    def hook(d: dict[str, Any]) -> Any:
        tag = d.get("$")
        if tag is None:
            return d
        inner = d.get("d")
        if not tags.issuperset(d):
            raise Unsupported("unknown keys in a tagged value")
        if tag == "dict" and type(inner) is dict:
            return inner
        if tag == "tuple" and type(inner) is list:
            return tuple(inner)
        if tag == "date" and type(inner) is str:
            return dt.date.fromisoformat(inner)
        cls, fields, privates = shapes.get(tag) or (None, None, None) if isinstance(tag, str) else (None, None, None)
        fields_set, private = d.get("s"), d.get("p")
        if (
            cls is None
            or type(inner) is not dict
            or inner.keys() != fields
            or type(fields_set) is not list
            or not inner.keys() >= set(fields_set)
            or (private or {}).keys() != privates
        ):
            raise Unsupported(f"not a stored {tag!r}")
        obj = new(cls)
        put(obj, "__dict__", inner)
        put(obj, "__pydantic_fields_set__", set(fields_set))
        put(obj, "__pydantic_extra__", None)
        put(obj, "__pydantic_private__", private)
        return obj

    return json.loads(payload, object_hook=hook)


def compiled(kind: str, files: list[Path], build: Callable[[], T], check: Callable[[Any], T]) -> T:
    """`build()`, or its result stored by an earlier run for exactly these files and this code.
    `check` turns the stored value back into a T, raising if it is not the shape build() returns."""
    folder = cache_dir()
    if folder is None:
        return build()
    try:
        key = digest(kind, files)
    except OSError:
        return build()
    path = folder / f"{kind}-{key[:24]}.json"
    payload = read_sealed(path, kind, key)
    if payload is not None:
        try:
            return check(from_json(payload, data_models()))
        except (ValueError, TypeError, KeyError, RecursionError):
            remove(path)  # sealed by this user, yet not what this code reads: made anew
    value = build()
    try:
        plain = json.dumps(to_plain(value), separators=(",", ":"), allow_nan=False).encode()
    except (Unsupported, ValueError):
        return value  # nothing stored: parsed every time
    write_sealed(path, kind, key, plain)
    _prune(folder, kind)
    return value


def compiled_document(kind: str, path: Path) -> Any:
    """A shipped YAML data file's document (mappings, lists, text, numbers, dates), compiled like the
    catalog: parsed once, then read back as plain JSON with no model in it. The estimator's
    uncertainty.yaml and accuracy.yaml are read by every plan (libyaml and PyYAML's constructor took
    ~6 ms of a cold `advisor plan`). {} when the installation does not ship the file."""
    if not path.is_file():
        return {}

    def build() -> Any:
        from advisor.inputs.loader import load_yaml_file

        return load_yaml_file(path, "catalog file", shipped=True) or {}  # libyaml: a shipped file

    def stored(value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"not a compiled {kind}")
        return value

    return compiled(kind, [path], build, stored)


def _prune(folder: Path, kind: str) -> None:
    """Keep the newest few entries of `kind`; drop the pickles older versions wrote (never read)."""
    try:
        stale = sorted(folder.glob(f"{kind}-*.json"), key=lambda p: p.stat().st_mtime)
        for old in stale[:-KEEP] + sorted(folder.glob(f"{kind}-*.pickle")):
            remove(old)
    except OSError:
        pass
