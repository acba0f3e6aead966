"""The `advisor` command: parse arguments, call the library, emit. No logic of its own.

The console script is `advisor.cli:main`; the commands live in base (the group and what every
command shares), plans (plan, frontier, validate, init, schema), documents (memo, rfq), study
(estimate, models), comparisons (compare, crossover) and data (catalog, rules, calibrate), each module
imported when one of its commands is asked for (base.LazyGroup).
"""

import atexit
import gc
import os
import sys
import types

# the tool uses no pydantic plugin: not scanning every installed package's entry points for one
# saves ~0.01 s of a cold `advisor plan` (PYDANTIC_DISABLE_PLUGINS= set empty turns the scan back on)
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
# numpy's OpenBLAS starts a worker thread per core at import, which spins on a core for up to ~0.1 s
# waiting for work: the tool's arrays (highspy's columns, 200 draws) are far too small for BLAS to
# split, so the thread only takes CPU from the plan on a busy machine (OPENBLAS_NUM_THREADS=N sets it)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _no_plugin_loader() -> None:
    """With every pydantic plugin off (above), pydantic's plugin loader only returns none, yet
    importing it imports importlib.metadata (and email, zipfile, socket): ~0.013 s of a cold
    `advisor plan`. Its one function, the same answer, stands in for it."""
    if os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__" and "pydantic.plugin._loader" not in sys.modules:
        loader = types.ModuleType("pydantic.plugin._loader", _no_plugin_loader.__doc__)
        loader.get_plugins = tuple  # type: ignore[attr-defined]  # get_plugins() -> () (no plugin)
        sys.modules["pydantic.plugin._loader"] = loader


_no_plugin_loader()


def _exit_without_collecting() -> None:
    """At the interpreter's exit, after the exit handlers registered later (the layout store's save):
    every object is frozen, so the collections of the interpreter's shutdown no longer walk the whole
    heap (package, catalog, plan) just before the process frees it. Objects are still released by
    reference counting, files closed and buffers flushed; only cyclic garbage is left to the exit.
    ~0.07 s of a cold `advisor plan` (docs/performance.md)."""
    gc.freeze()


atexit.register(_exit_without_collecting)

from advisor.cli.base import main  # noqa: E402

__all__ = ["main"]
