"""What the public functions accept (advisor.plan, estimate, memo, compare, crossover and the loaders):
each argument's kind and bounds, the same as the command line's options (advisor/cli reads its
ranges from here). A value outside them is an InputError naming the argument in backticks (the CLI
shows its flag), never a TypeError or AttributeError from deep inside; a bool is never a number,
NaN and infinity never a bound.

A check is a function (value, argument name) -> the value to use; `checked` applies a table of them
to a call's keyword arguments and refuses a name the table does not hold.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.errors import InputError, is_control, show, suggest

MAX_GPU_COUNT = 100_000  # GPUs in one estimate or sweep (`--count`, `--max-gpus`)
TIME_LIMIT_S = (0.1, 86_400.0)  # seconds a solve may take (`--time-limit`)
LORA_RANK = (1, 4_096)
TENSOR_PARALLEL = (1, 64)
PIPELINE_PARALLEL = (1, 1_024)
# a model's shape and a request's size: the bounds of the workload file's fields (inputs/jobs.py)
LAYERS = (1, 1_000)
HIDDEN = (1, 200_000)
FFN = (1, 1_000_000)
VOCAB = (1, 10_000_000)
HEADS = (1, 2_048)
EXPERTS = (1, 100_000)
SEQ_LEN = (1, 10_000_000)
MICRO_BATCH = (1, 4_096)
REQUEST_TOKENS = (1, 10_000_000)  # prompt or output tokens of one request
LATENCY_MS = 1e7  # a time-to-first-token or per-output-token limit, ms
MAX_PATH = 4_096  # characters of a file name
MAX_TEXT = 200  # characters of an id, a name or a memo's file stem
MAX_NAMES = 1_000  # ids in one list (GPUs compared, presets swept)

Check = Callable[[Any, str], Any]


def _refuse(name: str, wanted: str, value: Any) -> InputError:
    return InputError(f"`{name}`: must be {wanted}, got {show(value)}", field=name)


def _optional(check: Check, optional: bool) -> Check:
    return (lambda value, name: None if value is None else check(value, name)) if optional else check


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def whole(lo: int = 1, hi: int | None = None, optional: bool = False) -> Check:
    """A whole number from lo to hi (a float with no fraction, 8.0, is taken as 8)."""
    wanted = f"a whole number from {lo:,} to {hi:,}" if hi is not None else f"a whole number of at least {lo:,}"

    def check(value: Any, name: str) -> int:
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _refuse(name, wanted, value)
        whole_value = int(value)
        if whole_value < lo or (hi is not None and whole_value > hi):
            raise _refuse(name, wanted, value)
        return whole_value

    return _optional(check, optional)


def number(
    lo: float | None = None,
    hi: float | None = None,
    optional: bool = False,
    above: bool = False,
    below: bool = False,
    says: str | None = None,
) -> Check:
    """A finite number from lo to hi (above/below: strictly); `says` words the refusal (what the number is)."""
    parts = ([f"{'above' if above else 'at least'} {lo:g}"] if lo is not None else []) + (
        [f"{'below' if below else 'at most'} {hi:g}"] if hi is not None else []
    )
    wanted = "a finite number" + (f" {' and '.join(parts)}" if parts else "")

    def check(value: Any, name: str) -> float:
        ok = _is_number(value) and math.isfinite(value)
        if ok and lo is not None:
            ok = value > lo if above else value >= lo
        if ok and hi is not None:
            ok = value < hi if below else value <= hi
        if not ok:
            if says:
                raise InputError(f"`{name}`: {says} (given {show(value)})", field=name)
            raise _refuse(name, wanted, value)
        return float(value) if isinstance(value, float) else value

    return _optional(check, optional)


def latency(least: float, why: str) -> Check:
    """A latency limit in ms, from a workload's `slo` floor (inputs/quantities.py, `why` it is) to LATENCY_MS."""
    says = f"a latency limit is a number of milliseconds from {least:g} ({why}) to {LATENCY_MS:,.0f}"
    return number(least, LATENCY_MS, optional=True, says=says)


def one_of(choices: Sequence[str], optional: bool = False) -> Check:
    def check(value: Any, name: str) -> str:
        if not isinstance(value, str) or value not in choices:
            hint = suggest(value, choices) if isinstance(value, str) else ""
            raise InputError(f"`{name}`: must be one of {', '.join(choices)}, got {show(value)}{hint}", field=name)
        return value

    return _optional(check, optional)


def flag(optional: bool = False) -> Check:
    def check(value: Any, name: str) -> bool:
        if not isinstance(value, bool):
            raise _refuse(name, "true or false", value)
        return value

    return _optional(check, optional)


def text(optional: bool = False, max_len: int = MAX_TEXT) -> Check:
    """Non-empty text of at most max_len characters, without control characters."""

    def check(value: Any, name: str) -> str:
        if not isinstance(value, str) or not value.strip() or len(value) > max_len or any(map(is_control, value)):
            raise _refuse(name, f"text of 1 to {max_len} characters without control characters", value)
        return value

    return _optional(check, optional)


def day(optional: bool = True) -> Check:
    """A date, or its text YYYY-MM-DD (a datetime is taken as its day)."""

    def check(value: Any, name: str) -> dt.date:
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str) and len(value) <= 32:
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                pass
        raise _refuse(name, "a date (datetime.date, or text YYYY-MM-DD)", value)

    return _optional(check, optional)


def path(optional: bool = False) -> Check:
    """A file name: text or a path object, not empty, without NUL, at most MAX_PATH characters."""

    def check(value: Any, name: str) -> str | Path:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value or "\0" in value or len(value) > MAX_PATH:
            raise _refuse(name, f"a file name (text or a path, at most {MAX_PATH:,} characters, no NUL)", value)
        return value

    return _optional(check, optional)


def output_file(value: Any, name: str = "output", force: bool = False, force_as: str = "force=True") -> Path:
    """A file to write: in a folder that exists, not itself a folder; an existing file, or a link
    (even one pointing nowhere, which `exists()` does not see), is replaced only with force (named
    `force_as`, as the caller writes it: `--force` on the command line)."""
    target = Path(path()(value, name))
    where = str(target)
    if len(os.fsencode(target.name)) > MAX_TEXT:  # (300 characters: OSError, exit 1, after the solve)
        raise InputError(
            f"{show(where)}: a file name of {len(os.fsencode(target.name)):,} bytes; give one of at most {MAX_TEXT} "
            "(file systems take 255, and the file is written first under a longer temporary name beside it)",
            file=where,
            field=name,
        )
    if not target.parent.is_dir():
        raise InputError(
            f"{where}: the folder {target.parent} does not exist; create it first or write elsewhere",
            file=where,
            field=name,
        )
    if target.is_dir():
        raise InputError(f"{where}: is a folder; give a file name", file=where, field=name)
    if target.is_symlink() and not force:
        pointing = "" if target.exists() else " to nothing"
        raise InputError(
            f"{where}: is a link{pointing}; pass {force_as} to replace the link with the file", file=where, field=name
        )
    if target.exists() and not force:
        raise InputError(f"{where}: already exists; pass {force_as} to replace it", file=where, field=name)
    return target


def paths(value: Any, name: str) -> list[str]:
    """None (no files), one file name, or a list of them."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [path()(value, name)]
    if not isinstance(value, (list, tuple)) or len(value) > MAX_NAMES:
        raise _refuse(name, "a file name or a list of file names", value)
    return [path()(v, f"{name}[{i}]") for i, v in enumerate(value)]


def names(optional: bool = False, empty: bool = False) -> Check:
    """A list (or tuple) of ids, each non-empty text; `empty`: the list may be empty."""

    def check(value: Any, name: str) -> list[str]:
        if not isinstance(value, (list, tuple)) or len(value) > MAX_NAMES or (not value and not empty):
            raise _refuse(name, f"a list of {'' if empty else '1 to '}{MAX_NAMES:,} ids such as ['rtx-4090']", value)
        return [text()(v, f"{name}[{i}]") for i, v in enumerate(value)]

    return _optional(check, optional)


def amount(optional: bool = False) -> Check:
    """A count as the workload writes it: a positive finite number, or text such as 124M or 10B."""

    def check(value: Any, name: str) -> float | str:
        if isinstance(value, str):
            return text(max_len=40)(value, name)
        return number(lo=0, above=True)(value, name)

    return _optional(check, optional)


def prices(value: Any, name: str) -> dict[str, float]:
    """{GPU id: purchase price in USD} (`--price ID=USD`), within the range a catalog's purchase price
    is held to (quantities.PURCHASE_USD_RANGE)."""
    from advisor.inputs.quantities import PURCHASE_USD_RANGE

    if value is None:
        return {}
    if not isinstance(value, Mapping) or len(value) > MAX_NAMES:
        raise _refuse(name, "a mapping of GPU id to price in USD, such as {'rtx-4090': 1749}", value)
    lo, hi = PURCHASE_USD_RANGE
    return {
        text()(k, f"{name} key"): number(
            lo, hi, says=f"{k}'s price must be from ${lo:,.0f} to ${hi:,.0f}, as a catalog's"
        )(v, name)
        for k, v in value.items()
    }


def region(value: Any, name: str) -> str:
    """An ISO 3166-1 alpha-2 code (inputs/regions.py), upper-cased."""
    from advisor.inputs.regions import check_region

    try:
        return check_region(value)
    except ValueError as exc:
        raise InputError(f"`{name}`: {exc}", field=name) from None


def checked(function: str, table: Mapping[str, Check], options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` with each value checked (and normalised) by its entry in `table`; a name the table
    does not hold is an InputError listing those it does."""
    out = {}
    for key, value in options.items():
        check = table.get(key)
        if check is None:
            raise InputError(
                f"{function}: unknown argument `{key}`{suggest(str(key), table)}; arguments: {', '.join(table)}",
                field=str(key),
            )
        out[key] = check(value, key)
    return out
