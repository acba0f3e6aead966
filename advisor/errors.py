"""Errors the library raises on purpose; the CLI maps each to an exit code (docs/cli.md).

Also the small helpers every input check shares, so that workload, catalog and rules files get
messages of one shape: the file, the location, the value given and what is allowed.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

Error = TypeVar("Error", bound=Mapping[str, Any])  # a pydantic error (ErrorDetails) or a plain dict


class AdvisorError(Exception):
    """Base class: a failure with a message meant for the user, not a traceback."""

    exit_code = 1


class InputError(AdvisorError):
    """Invalid input: names the file, the field and what is allowed (exit 2)."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        line: int | None = None,
        column: int | None = None,
        given: Any = None,
    ):
        self.file = file
        self.field = field
        self.line, self.column = line, column  # where in the file (1-based), when read from one
        self.given = given  # the value as written, when there is one
        self.errors: list[InputError] = [self]  # every mistake found, when a file has several
        super().__init__(message)

    def to_dict(self) -> dict[str, Any]:
        """One mistake as data (`advisor validate --format json`)."""
        given = (
            self.given if isinstance(self.given, (str, int, float, bool)) or self.given is None else show(self.given)
        )
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.field,
            "given": given,
            "message": str(self),
        }

    @classmethod
    def many(cls, errors: list[InputError]) -> InputError:
        """One error carrying several: its message has one line per mistake; `file` and `field`
        are the first's."""
        if len(errors) == 1:
            return errors[0]
        out = cls("\n".join(str(e) for e in errors), file=errors[0].file, field=errors[0].field)
        out.errors = list(errors)
        return out

    def at(self, position: tuple[int, int] | None) -> InputError:
        """This error at `position` (line, column) of its file, found after the check that raised it (a
        catalog override's field, located in the file once the merged catalog failed a check)."""
        prefix = f"{self.file}: "
        message = str(self)
        if position is None or self.line is not None or len(self.errors) > 1 or not message.startswith(prefix):
            return self
        line, column = position
        return InputError(
            f"{self.file}:{line}:{column}: {message[len(prefix) :]}",
            file=self.file,
            field=self.field,
            line=line,
            column=column,
            given=self.given,
        )

    def in_file(self, file: str | None, position: Callable[[str], tuple[int, int] | None] | None = None) -> InputError:
        """This error, attributed to `file` if it names none yet (a check that needed the catalog
        found the problem after the workload was read), at the line and column `position(field)`
        finds its field written on."""
        if self.file is not None or file is None:
            return self
        if len(self.errors) > 1:
            return InputError.many([e.in_file(file, position) for e in self.errors])
        message = str(self)
        if self.field and message.startswith(f"{self.field}:"):
            message = f"`{self.field}`" + message[len(self.field) :]
        line, column = self.line, self.column
        found = position(self.field) if position is not None and self.field and line is None else None
        if found is not None:
            line, column = found
        where = f"{file}:{line}:{column}" if line is not None else file
        return InputError(
            f"{where}: {message}", file=file, field=self.field, line=line, column=column, given=self.given
        )


class InfeasibleError(AdvisorError):
    """Valid input, but no plan meets every constraint (exit 3). Carries the diagnosis."""

    exit_code = 3

    def __init__(self, message: str, plan: Mapping[str, Any] | None = None):
        self.plan = plan
        super().__init__(message)


class SolverError(AdvisorError):
    """The solver failed or ran out of time without a usable answer (exit 1)."""

    exit_code = 1


class NoPlanInTime(SolverError):
    """The solver stopped (time limit) before it found any plan: not proof that none exists."""


# ------------------------------------------------------------------ message helpers


def close_matches(word: str, choices: Iterable[Any], n: int = 6) -> list[str]:
    """The choices `word` may have meant (case-insensitive): those it begins word for word ('h100'
    -> h100-sxm, h100-pcie, h100-nvl), then the closest by spelling and any as close (within 0.1
    of its similarity ratio, at least 0.6), the closest first."""
    import difflib

    by_lower = {str(c).lower(): c for c in sorted(choices, key=str)}
    low = str(word).lower().strip()
    words = low.replace("_", "-").split("-")
    starting = [c for c in by_lower if low and c != low and c.split("-")[: len(words)] == words]
    scored = sorted(((difflib.SequenceMatcher(None, low, c).ratio(), c) for c in by_lower), key=lambda x: (-x[0], x[1]))
    best = scored[0][0] if scored else 0.0
    near = [c for r, c in scored if r >= max(0.6, best - 0.1)]
    return [by_lower[c] for c in dict.fromkeys(starting + near)][:n]


def either(items: Sequence[str], word: str = "or") -> str:
    """'a', 'a or b', 'a, b or c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} " + items[-1]


def suggest(word: str, choices: Iterable[Any]) -> str:
    """' (did you mean x?)' or ' (did you mean x, y or z?)' for near misses, else ''."""
    close = close_matches(word, choices)
    return f" (did you mean {either(close)}?)" if close else ""


def show(value: object, limit: int = 60) -> str:
    """A value as the user wrote it, short enough for a one-paragraph message."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, (dt.date, dt.datetime)):
        text = value.isoformat()
    elif isinstance(value, bytes):
        return f"{len(value):,} bytes of binary data"
    elif isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    elif isinstance(value, (list, tuple)):
        return f"a list of {len(value)}" if value else "an empty list"
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, int):
        text = str(value) if len(str(value)) <= limit else f"a {len(str(value)):,}-digit number"
    else:
        text = repr(value)
    if len(text) > limit:  # the value's own length: a string's, not its quoted repr's (100,002 for 100,000)
        size = len(value) if isinstance(value, str) else len(text)
        text = f"{text[: limit - 20]}... ({size:,} characters)"
    return text


# pydantic's "wrong kind of value" errors, and what the value should have been
KINDS = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "string_type": "text",
    "int_type": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
}


# what a field's pattern means, in words (a user should never see a regex)
PATTERNS = {
    r"^[A-Z]{2,5}[0-9]{3}$": "2 to 5 capital letters and 3 digits, such as LIC001 or ORG001",
    r"^[a-z0-9]+(-[a-z0-9]+)*$": "lowercase words joined by hyphens, such as no-amd",
    r"^[a-z0-9]+(-[a-z0-9.]+)*$": "lowercase words joined by hyphens, such as h100-sxm",
    r"^https?://": "a URL starting with https:// (or give `document:` or a quote instead)",
}


def describe(err: Mapping[str, Any], reason: str | None = None) -> str:
    """One pydantic error in the user's terms rather than Python's: what is wrong, why the bound
    is where it is (`reason`), and the value given."""
    kind = err["type"]
    given = err.get("input")
    if kind == "int_parsing_size" or (kind == "float_type" and isinstance(given, int)):
        return f"the number is far too large (given {show(given)})"
    if kind in KINDS:
        return f"must be {KINDS[kind]}, got {show(given)}"
    if kind == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern", "")
        return f"must be {PATTERNS.get(pattern, 'written in the expected form')}, got {show(given)}"
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.replace(prefix, "")
    if reason:
        msg += f" ({reason})"
    quoted = isinstance(given, str) and show(given) in msg  # the message already quotes the value
    return msg if kind == "missing" or quoted else f"{msg} (given {show(given)})"


def first_error(errors: Sequence[Error], clean: Callable[..., tuple[Any, ...]] = tuple) -> Error:
    """The pydantic error to report: an unknown field first (the likeliest typo), then the first in
    field order; a union branch's type error gives way to another branch's error deeper inside the value.
    `clean` drops the union tags from a location."""
    locs = [clean(e["loc"]) for e in errors]

    def key(i: int) -> tuple[bool, bool, int]:
        deeper = any(len(other) > len(locs[i]) and other[: len(locs[i])] == locs[i] for other in locs)
        return errors[i]["type"] != "extra_forbidden", deeper, i

    return errors[min(range(len(errors)), key=key)]


def loc_text(loc: Iterable[int | str]) -> str:
    """('jobs', 0, 'tokens') -> 'jobs[0].tokens'; an empty key shows as ''."""
    text = ""
    for part in loc:
        part = part if isinstance(part, int) or part else "''"
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def is_control(c: str) -> bool:
    """Control, format (bidirectional overrides), unassigned or line-separator characters."""
    return unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def printable(text: str) -> str:
    """`text` with control characters but newlines escaped (\\x1b, \\u202e), so that a value echoed
    from a hostile file cannot drive the terminal."""
    if text.isprintable():  # no Other or Separator character but a space: nothing to escape (fast)
        return text
    return "".join(ascii(c)[1:-1] if is_control(c) and c != "\n" else c for c in text)
