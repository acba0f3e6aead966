"""The `advisor` command: parse arguments, call the library, emit. No logic of its own.

The console script is `advisor.cli:main`; the commands live in base (the group and what every
command shares), plans (plan, frontier, memo, validate, schema), study (estimate, compare,
crossover, models) and data (catalog, rules).
"""
from advisor.cli import data, plans, study  # noqa: F401  (registers the commands)
from advisor.cli.base import main

__all__ = ["main"]
