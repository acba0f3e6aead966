"""The lines and columns of a RUNS.csv row (`advisor calibrate`, perf/calibrate.py) read and checked: a number
within the range a workload or the catalog allows for the same figure, a flag written true or false, a
word from its list. Each error names the file, the line, the column and what is allowed: a count of
1e300 GPUs, `kind: bogus` or `checkpointing: maybe` was read (or ignored) without a word."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from advisor.data.bounds import MAX_RUNS, MODEL_RANGES
from advisor.errors import InputError, show, suggest
from advisor.inputs.jobs import Job
from advisor.inputs.loader import read_bytes
from advisor.inputs.quantities import MAX_GPUS, MAX_TOKENS

# (least, most) of each numeric column a workload or a catalog preset bounds; any other is above zero
RANGES: dict[str, tuple[float, float]] = {
    **{k: (float(lo), float(hi)) for k, (lo, hi) in MODEL_RANGES.items()},
    **dict.fromkeys(("count", "gpu_count", "tensor_parallel", "pipeline_parallel", "context_parallel"), (1, MAX_GPUS)),
    **dict.fromkeys(("tokens_per_s", "tokens_per_s_per_gpu", "global_batch_tokens"), (0, MAX_TOKENS)),
}
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")
TRAINING_KINDS: tuple[str, ...] = get_args(Job.model_fields["kind"].annotation)  # a workload's training kinds
TRAINING_PRECISIONS: tuple[str, ...] = get_args(Job.model_fields["precision"].annotation)  # and precisions
ATTENTION_KERNELS = ("fa2",)  # JobSpec.attention_kernel: FlashAttention-2-era kernels (empty: today's)


def run_lines(path: str | Path) -> list[tuple[int, str]]:
    """(line number, text) of a RUNS.csv's header and runs, blank and `#` lines left out: read as a
    workload is (inputs/loader.read_bytes: `-` for standard input, at most its MAX_BYTES, so /dev/zero
    is refused rather than read without end), UTF-8 with or without a BOM."""
    name, raw = read_bytes(path, "runs file")
    try:
        lines = raw.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: is not UTF-8 text (byte {exc.start}); save the runs file as UTF-8 CSV", file=name
        ) from None
    body = [(i + 1, t) for i, t in enumerate(lines) if t.strip() and not t.startswith("#")]
    if len(body) < 2:
        raise InputError(f"{name}: no runs (a header line and one run per line)", file=name)
    if len(body) - 1 > MAX_RUNS:
        raise InputError(
            f"{name}: {len(body) - 1:,} runs; the limit is {MAX_RUNS:,} (the leave-one-out error refits once per "
            "run, so the time grows as the square of the runs): fit a sample of them",
            file=name,
        )
    return body


def _wrong(name: str, line: int, key: str, why: str) -> InputError:
    return InputError(f"{name}, line {line}, field {key}: {why}", file=name, field=key)


def number(row: dict[str, str], key: str, line: int, name: str, kind: type = float) -> Any:
    """Column `key` as a number (None when empty): finite, above zero, within RANGES, whole for `int`."""
    v = (row.get(key) or "").strip()
    if not v:
        return None
    try:
        x = float(v)
    except ValueError:
        raise _wrong(name, line, key, f"{v!r} is not a number") from None
    lo, hi = RANGES.get(key, (0.0, math.inf))
    if not math.isfinite(x) or x <= 0:
        raise _wrong(name, line, key, f"must be a finite number above zero (given {v})")
    if kind is int and x % 1:  # (a count of GPUs, layers, a parallel size is never rounded)
        raise _wrong(name, line, key, f"must be a whole number (given {v})")
    if not lo <= x <= hi:
        raise _wrong(name, line, key, f"must be from {lo:,.6g} to {hi:,.6g} (given {v})")
    return int(x) if kind is int else x


def flag(row: dict[str, str], key: str, line: int, name: str) -> bool | None:
    """Column `key` as true or false (None when empty)."""
    v = (row.get(key) or "").strip().lower()
    if v and v not in TRUE + FALSE:
        raise _wrong(name, line, key, f"{v!r} is not true or false (allowed: {', '.join(TRUE + FALSE)}, or empty)")
    return None if not v else v in TRUE


def word(row: dict[str, str], key: str, line: int, name: str, allowed: Sequence[str]) -> str | None:
    """Column `key` as one of `allowed` (None when empty)."""
    v = (row.get(key) or "").strip()
    if v and v not in allowed:
        raise _wrong(name, line, key, f"{v!r} is not one of {', '.join(allowed)} (or empty)")
    return v or None


# the columns a run cannot do without, each with the alternatives that stand for it
REQUIRED_COLUMNS = (("gpu",), ("count", "gpu_count"), ("tokens_per_s", "tokens_per_s_per_gpu"))
# every column perf/calibrate.py reads (the calibrate module's docstring says what each holds)
READ_COLUMNS = (
    *(name for options in REQUIRED_COLUMNS for name in options),
    *("model", "params", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len", "tied_embeddings"),
    *("precision", "kind", "global_batch_tokens", "micro_batch", "checkpointing", "strategy", "tensor_parallel"),
    *("pipeline_parallel", "context_parallel", "virtual_stages", "tp_overlap", "fp8_param_gather", "fp8_tp_gather"),
    *("fused_elementwise", "selective_ac", "recompute_fraction", "grad_reduce_bytes", "attention_kernel"),
    *("layout_assumed", "basis"),
)
# catalog/calibration.csv's record of each run, read by no fit, so that the file itself can be calibrated on
RECORD_COLUMNS = (
    *("id", "group", "fit", "reported_mfu", "conversion", "shape_source", "layout_source", "source", "quote"),
    *("run_tokens", "gpu_variant", "software_era", "software"),
)
# a user's record of a run, as a workload's `measured:` entry takes it (`date`, `note`): read by no fit
NOTE_COLUMNS = ("date", "note")
UNNAMED = "(column "  # the key of a column the header leaves unnamed: no column calibrate takes starts so


def check_header(fields: Sequence[str] | None, line: int, name: str) -> list[str]:
    """The header's column names (at `line`), spaces around them taken off ('gpu, count' read a column
    ' count', and the first run's count as missing). A header without a required column is refused,
    naming it: one in capitals or separated by semicolons was read as unknown columns, and the first run
    refused as an unknown GPU ''. So is a column named twice, or beside its alias (count and gpu_count):
    one of them was read and the other dropped without a word."""
    names = [f.strip() for f in fields or ()]
    named = [f for f in names if f]  # an unnamed column (a spreadsheet's trailing comma) must hold no cell
    have = set(named)
    # each unnamed column its own key: csv.DictReader keeps one cell a key, and two under '' lost the first's
    keys = [f or f"{UNNAMED}{i + 1}" for i, f in enumerate(names)]
    _check_known(named, line, name)
    twice = [f"{f} twice" for f in sorted({f for f in named if named.count(f) > 1})] + [
        f"both {' and '.join(both)}, one column under two names"
        for both in (tuple(o for o in opts if o in have) for opts in REQUIRED_COLUMNS)
        if len(both) > 1
    ]
    if twice:
        raise InputError(
            f"{name}, line {line}: the header names {twice[0]} (one would be read, the other dropped); keep one",
            file=name,
            field=twice[0].removeprefix("both ").split()[0],
        )
    for options in REQUIRED_COLUMNS:
        if not have & set(options):
            raise InputError(
                f"{name}, line {line}: the header has no {' or '.join(options)} column (it reads "
                f"{show(','.join(fields or ()))}); a runs file is comma-separated with a lower-case header "
                "line, e.g. gpu,count,tokens_per_s,model",
                file=name,
                field=options[0],
            )
    return keys


def _check_known(names: Sequence[str], line: int, name: str) -> None:
    """A column calibrate does not read is refused, naming it: a misspelt `checkpointng` was ignored
    without a word, and the run fitted as if the column were empty. Once every required column is there."""
    if not all(set(names) & set(options) for options in REQUIRED_COLUMNS):
        return  # the missing column is the error to show (a header in capitals or split by semicolons)
    known = READ_COLUMNS + RECORD_COLUMNS + NOTE_COLUMNS
    for column in names:
        if column not in known:
            raise InputError(
                f"{name}, line {line}: the header names a column {show(column)} that calibrate does not read"
                f"{suggest(column, known)}; the columns it reads: {', '.join(READ_COLUMNS)} (and a run's "
                f"{' and '.join(NOTE_COLUMNS)}, and catalog/calibration.csv's record of each run: "
                f"{', '.join(RECORD_COLUMNS)})",
                file=name,
                field=column,
            )


def check_cells(row: dict[Any, Any], line: int, name: str, columns: int) -> None:
    """A run with more cells than the header has columns is refused: its extra cells were dropped
    silently, the others perhaps read under the wrong columns. So is a cell under an unnamed column (a
    header's trailing comma, which a spreadsheet's export writes, is taken when its cells are empty)."""
    unnamed = [(k, v.strip()) for k, v in row.items() if str(k).startswith(UNNAMED) and (v or "").strip()]
    if unnamed and row.get(None) is None:
        column, cell = unnamed[0]
        raise InputError(
            f"{name}, line {line}: a cell {show(cell)} under {column.removeprefix('(')}, which the header does not "
            "name; name the column or remove the cell",
            file=name,
        )
    if extra := row.get(None):
        raise InputError(
            f"{name}, line {line}: {columns + len(extra)} cells, but the header names {columns} columns; "
            "quote a cell that holds a comma, or name the extra columns in the header",
            file=name,
        )


def check_copied(seen: dict[str, int], run: str, line: int, name: str) -> None:
    """A run on two lines (the same GPU, count, speed and every setting, `run` its key): refused, since
    leave-one-out would predict each copy from the other and read low (a memo quotes that error)."""
    first = seen.setdefault(run, line)
    if first != line:
        raise InputError(
            f"{name}, line {line}: the same run as line {first} (GPU, count, speed and every setting): the "
            "leave-one-out error would predict each copy from the other and read low; keep one",
            file=name,
        )
