"""The `advisor` command: parse arguments, call the library, emit. No logic of its own.

The console script is `advisor.cli:main`; the commands live in base (the group and what every
command shares), plans (plan, frontier, validate, init, schema), documents (memo, rfq), study
(estimate, models), comparisons (compare, crossover) and data (catalog, rules, calibrate), each module
imported when one of its commands is asked for (base.LazyGroup).
"""

import os

# the tool uses no pydantic plugin: not scanning every installed package's entry points for one
# saves ~0.01 s of a cold `advisor plan` (PYDANTIC_DISABLE_PLUGINS= set empty turns the scan back on)
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from advisor.cli.base import main  # noqa: E402

__all__ = ["main"]
