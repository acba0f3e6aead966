"""Errors the library raises on purpose; the CLI maps each to an exit code (DESIGN.md §5)."""
from __future__ import annotations


class AdvisorError(Exception):
    """Base class: a failure with a message meant for the user, not a traceback."""

    exit_code = 1


class InputError(AdvisorError):
    """Invalid input: names the file, the field and what is allowed (exit 2)."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None):
        self.file = file
        self.field = field
        super().__init__(message)


class InfeasibleError(AdvisorError):
    """Valid input, but no plan meets every constraint (exit 3). Carries the diagnosis."""

    exit_code = 3

    def __init__(self, message: str, plan=None):
        self.plan = plan
        super().__init__(message)


class SolverError(AdvisorError):
    """The solver failed or ran out of time without a usable answer (exit 1)."""

    exit_code = 1
