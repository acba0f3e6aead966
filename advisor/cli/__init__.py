"""The `advisor` command: parse arguments, call the library, emit. No logic of its own.

The console script is `advisor.cli:main`; the commands live in base (the group and what every
command shares), plans (plan, frontier, memo, validate, schema), study (estimate, compare,
crossover, models) and data (catalog, rules).
"""
import os
import sys
import types

# the tool uses no pydantic plugin: not scanning every installed package's entry points for one
# saves ~0.01 s of a cold `advisor plan` (PYDANTIC_DISABLE_PLUGINS= set empty turns the scan back on),
# and so does not importing pydantic's plugin loader (importlib.metadata, email, ...: ~0.012 s):
# with plugins off, its one function answers "none" (pydantic imports only get_plugins from it)
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
if os.environ["PYDANTIC_DISABLE_PLUGINS"] in ("__all__", "1", "true") and "pydantic.plugin._loader" not in sys.modules:
    _loader = types.ModuleType("pydantic.plugin._loader", "plugins off (advisor.cli)")
    setattr(_loader, "get_plugins", lambda: ())  # noqa: B010
    sys.modules["pydantic.plugin._loader"] = _loader

from advisor.cli import data, plans, study  # noqa: E402,F401  (registers the commands)
from advisor.cli.base import main  # noqa: E402

__all__ = ["main"]
