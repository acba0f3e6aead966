"""The `advisor` command: parse arguments, call the library, emit. No logic of its own.

The console script is `advisor.cli:main`; the commands live in base (the group and what every
command shares), plans (plan, frontier, validate, init, schema), documents (memo, rfq), study
(estimate, models), comparisons (compare, crossover) and data (catalog, rules, calibrate), each module
imported when one of its commands is asked for (Commands below).
"""

import importlib
import os
from collections.abc import Iterator
from typing import Any

# the tool uses no pydantic plugin: not scanning every installed package's entry points for one
# saves ~0.01 s of a cold `advisor plan` (PYDANTIC_DISABLE_PLUGINS= set empty turns the scan back on)
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

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
