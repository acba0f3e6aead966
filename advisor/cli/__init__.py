"""The `advisor` command: parse arguments, call the library, emit. No logic of its own.

The console script is `advisor.cli:main`; the commands live in base (the group and what every
command shares), plans (plan, frontier, validate, init, schema), documents (memo, rfq), study
(estimate, models), comparisons (compare, crossover) and data (catalog, rules, calibrate), each module
imported when one of its commands is asked for (Commands below).
"""

import importlib
import os
import sys
import types
from collections.abc import Iterable, Iterator
from typing import Any

# the tool uses no pydantic plugin: not scanning every installed package's entry points for one
# saves ~0.01 s of a cold `advisor plan` (PYDANTIC_DISABLE_PLUGINS= set empty turns the scan back on)
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

PLUGIN_LOADER = "pydantic.plugin._loader"
PLUGINS_OFF = ("__all__", "1", "true")  # the values with which pydantic's get_plugins returns () at once


def get_plugins() -> Iterable[Any]:
    """pydantic's plugin loader's get_plugins: () while every plugin is disabled (what the loader
    returns then, without importing it); else the real loader's answer."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in PLUGINS_OFF:
        return ()
    if getattr(sys.modules.get(PLUGIN_LOADER), "get_plugins", None) is get_plugins:
        del sys.modules[PLUGIN_LOADER]  # plugins turned back on in this process: the real loader from now on
    loader: Any = importlib.import_module(PLUGIN_LOADER)
    return loader.get_plugins()


def _defer_plugin_loader() -> None:
    """pydantic imports its plugin loader, and with it importlib.metadata (email, socket, zipfile:
    ~0.01 s of a cold `advisor plan`), when it builds its first validator, even with every plugin
    disabled; until plugins are turned back on, the loader is this module's get_plugins."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in PLUGINS_OFF and PLUGIN_LOADER not in sys.modules:
        stand_in = types.ModuleType(PLUGIN_LOADER, get_plugins.__doc__)
        stand_in.__dict__["get_plugins"] = get_plugins
        sys.modules[PLUGIN_LOADER] = stand_in


_defer_plugin_loader()

from advisor.cli.base import main  # noqa: E402

# the module of each command (each registers its commands on `main` when imported)
COMMAND_MODULES = {
    **dict.fromkeys(("plan", "frontier", "validate", "init", "schema"), "plans"),
    **dict.fromkeys(("memo", "rfq"), "documents"),
    **dict.fromkeys(("estimate", "models"), "study"),
    **dict.fromkeys(("compare", "crossover"), "comparisons"),
    **dict.fromkeys(("catalog", "rules", "calibrate"), "data"),
}


class Commands(dict[str, Any]):
    """`main`'s commands, each module imported when one of its commands is asked for (`advisor plan`
    imports neither the memo's nor the comparisons' commands: ~3 ms of a cold plan), every module when
    they are listed (help, completion, a mistyped name's suggestions): what click reads is the same."""

    def _load(self, name: object) -> None:
        module = COMMAND_MODULES.get(name) if isinstance(name, str) else None
        if module is not None and not dict.__contains__(self, name):
            importlib.import_module(f"advisor.cli.{module}")

    def _load_all(self) -> None:
        for module in dict.fromkeys(COMMAND_MODULES.values()):
            importlib.import_module(f"advisor.cli.{module}")

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        self._load(name)
        return super().get(name, default)

    def __getitem__(self, name: str) -> Any:
        self._load(name)
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        self._load(name)
        return super().__contains__(name)

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return super().__iter__()

    def __len__(self) -> int:
        self._load_all()
        return super().__len__()

    def keys(self) -> Any:
        self._load_all()
        return super().keys()

    def values(self) -> Any:
        self._load_all()
        return super().values()

    def items(self) -> Any:
        self._load_all()
        return super().items()


main.commands = Commands(main.commands)

__all__ = ["main"]
