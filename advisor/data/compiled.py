"""The shipped catalog and rules, compiled once: parsing and validating ~300 KB of YAML costs
most of a cold `advisor plan`, so the validated objects are pickled the first time and read back
(a few ms) on later runs.

A compiled file is keyed by the SHA-256 of everything that shapes it: the data files' bytes and
names, the source of the modules that define and check the objects, and the Python, PyYAML and
pydantic versions. A file whose stored key differs is never used; it is rebuilt. Files live in
`$GPU_ADVISOR_CACHE`, else `$XDG_CACHE_HOME/gpu-advisor`, else `~/.cache/gpu-advisor`; when the
folder cannot be written the data is simply parsed every time. `GPU_ADVISOR_CACHE=off` turns the
cache off. User files (workloads, --catalog, --rules) are never compiled: they are read with the
defensive loader each time.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
FORMAT = 1
_CODE = ("data/catalog.py", "data/catalog_figures.py", "data/catalog_prices.py", "data/catalog_entries.py",
         "data/catalog_model.py", "data/catalog_load.py", "data/economics.py", "data/rules.py", "data/rule_models.py",
         "data/conditions.py", "data/estimator.py", "data/compiled.py", "data/overrides.py", "data/source_grades.py",
         "data/bounds.py", "inputs/loader.py", "inputs/strict.py", "inputs/units.py",
         "errors.py")


def cache_dir() -> Path | None:
    where = os.environ.get("GPU_ADVISOR_CACHE")
    if where is not None:
        return None if where.strip().lower() in ("", "0", "off", "no", "false") else Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpu-advisor"


def digest(kind: str, files: list[Path]) -> str:
    """The key of one compiled object: its data files, the code that reads them, the versions."""
    import pydantic
    import yaml

    h = hashlib.sha256(f"{kind}|{FORMAT}|{sys.version}|{yaml.__version__}|{pydantic.VERSION}".encode())
    package = Path(__file__).resolve().parent.parent
    for rel in _CODE:
        h.update(rel.encode() + b"\0" + (package / rel).read_bytes() + b"\0")
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def compiled(kind: str, files: list[Path], build: Callable[[], T]) -> T:
    """`build()`, or its result stored by an earlier run for exactly these files and this code."""
    folder = cache_dir()
    if folder is None:
        return build()
    try:
        key = digest(kind, files)
    except OSError:
        return build()
    path = folder / f"{kind}-{key[:24]}.pickle"
    try:
        with open(path, "rb") as f:
            stored_key, value = pickle.load(f)
        if stored_key == key:
            return value
    except Exception:  # noqa: BLE001, S110 -- missing, truncated, from another version: rebuild
        pass
    value = build()
    _store(folder, path, key, value)
    return value


def _store(folder: Path, path: Path, key: str, value: Any) -> None:
    """Write atomically (a temporary file renamed into place); failures are ignored."""
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pickle")
        with os.fdopen(fd, "wb") as f:
            pickle.dump((key, value), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        stale = sorted(folder.glob(path.name.split("-")[0] + "-*.pickle"), key=lambda p: p.stat().st_mtime)
        for old in stale[:-8]:   # keep the newest few (several checkouts may share the folder)
            old.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001 -- a read-only or full disk: parse every time instead
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
