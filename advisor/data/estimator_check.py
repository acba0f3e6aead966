"""The estimator section of a catalog (built in or a `--catalog` override) checked against the kinds
`estimator.Params` declares, before any of it reaches the performance model: a wrong kind is a clear
error (exit 2), never an internal one."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from advisor.data.catalog_figures import check_date
from advisor.data.estimator import GOODPUT_FIGURES, Params
from advisor.data.evidence import family_of, generation_of
from advisor.errors import InputError, show, suggest


def _number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) and 0 <= x <= 1e18


def _tree(x: Any) -> bool:
    """A number, or a mapping (per GPU family, id or precision) of such trees."""
    return _number(x) or (isinstance(x, dict) and bool(x) and all(map(_tree, x.values())))


def _share(x: Any) -> bool:
    """A share of a nominal rate: above zero, at most all of it."""
    return _number(x) and 0 < float(x) <= 1


def _positive(x: Any, most: float = 1e18) -> bool:
    return _number(x) and 0 < float(x) <= most


def _by_gpu(leaf: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """A value for every GPU, or a mapping of GPU ids, generations or families to such values."""
    return lambda x: leaf(x) or (isinstance(x, dict) and bool(x) and all(map(leaf, x.values())))


def _by_gpu_and_precision(leaf: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """`_by_gpu` whose values may also be mappings of precisions ({bf16: x, fp8: y, bf16_multiserver: z})."""
    return _by_gpu(lambda v: leaf(v) or (isinstance(v, dict) and bool(v) and all(map(leaf, v.values()))))


def _maturity_ok(e: dict[str, Any]) -> bool:
    """A derating's optional scope: `mature_after_months` a whole number >= 1, `as_of` a valid date."""
    if "mature_after_months" not in e:
        return True
    months, as_of = e["mature_after_months"], e["as_of"]
    if isinstance(months, bool) or not isinstance(months, int) or months < 1 or not isinstance(as_of, str):
        return False
    try:
        check_date(as_of)
    except ValueError:
        return False
    return True


def _derating_entry(e: Any, nested: bool = False) -> bool:
    """One generation's `datasheet_derating` entry (SPECIAL below says what it accepts)."""
    keys = {"factor", "upper", "source", "note", "stack"} | (set() if nested else {"mature_after_months", "as_of"})
    if not (isinstance(e, dict) and set(e) <= keys | ({"vendor_tuned", "mature"} if not nested else set())):
        return False
    if ("mature_after_months" in e) != ("as_of" in e) or not _maturity_ok(e):
        return False
    if any(k in e and not _derating_entry(e[k], nested=True) for k in ("vendor_tuned", "mature")):
        return False
    factor: Any = e.get("factor")
    upper: Any = e.get("upper", factor)
    source: Any = e.get("source")
    if not (_number(factor) and _number(upper)):
        return False
    return (
        0 < float(factor) < 1
        and float(factor) <= float(upper) <= 2
        and isinstance(source, list)
        and bool(source)
        and all(isinstance(sid, str) for sid in source)
        and isinstance(e.get("note", ""), str)
        and isinstance(e.get("stack", ""), str)
    )


def _calibrated_from(x: Any) -> bool:
    """An `advisor calibrate` override's record of its runs (perf/calibrate.py `_provenance`)."""
    if not (isinstance(x, dict) and set(x) == {"runs_file", "runs", "groups", "mape_in_sample", "mape_leave_one_out"}):
        return False
    groups, loo = x["groups"], x["mape_leave_one_out"]
    counts = [n for v in groups.values() if isinstance(v, dict) for n in v.values()] if isinstance(groups, dict) else []
    return (
        isinstance(x["runs_file"], str)
        and bool(groups)
        and all(isinstance(k, str) and "/" in k and isinstance(v, dict) and v for k, v in groups.items())
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in counts)
        and isinstance(x["runs"], int)
        and x["runs"] == sum(counts)
        and _number(x["mape_in_sample"])
        and (loo is None or _number(loo))
    )


def _pair_at_least_one(p: Any) -> bool:
    return isinstance(p, list) and len(p) == 2 and all(_number(v) and float(v) >= 1 for v in p)


# the goodput figures (perf/goodput.py): each from 0 to its most (in its unit), with the reason the most is
# physical; beyond it is a slip of unit or digits (`restart_hours: 1.0e+18` planned to exit 3, "5.61e+03B GPU-hours")
GOODPUT_MOST: dict[str, tuple[float, str, str]] = {
    "interruptions_per_gpu_hour": (
        1.0,
        "interruptions per GPU-hour",
        "one an hour on every GPU: a GPU interrupted more often never runs an hour between them",
    ),
    "restart_hours": (168.0, "hours", "a week: a run down longer is rebuilt, not restarted"),
    "checkpoint_hours": (168.0, "hours", "a week: a longer stall is no checkpoint"),
    "evaluation_fraction": (1.0, "", "a share of the training time, less than all of it"),
}


def check_goodput(x: Any, name: str) -> None:
    """`estimator.goodput`: each of GOODPUT_FIGURES given, a number from 0 to its GOODPUT_MOST; a misspelt,
    missing, non-numeric or out-of-range figure is named (the error named only `estimator.goodput`)."""

    def refuse(key: str, text: str) -> InputError:
        field = "estimator.goodput" + (f".{key}" if key else "")
        return InputError(f"{name}: `{field}` {text}", file=name, field=field)

    if not isinstance(x, dict):
        raise refuse("", f"must be a mapping of {', '.join(GOODPUT_FIGURES)} (given {show(x)})")
    for key in x:
        if key not in GOODPUT_FIGURES:
            figures = ", ".join(GOODPUT_FIGURES)
            raise refuse(str(key), f"is not a goodput figure{suggest(str(key), GOODPUT_FIGURES)}; figures: {figures}")
    for key in GOODPUT_FIGURES:
        most, unit, why = GOODPUT_MOST[key]
        below = key == "evaluation_fraction"  # a share below 1: all the time evaluating leaves none to train
        allowed = f"a number from 0 to {'below ' if below else ''}{most:g} {unit}".rstrip() + f" ({why})"
        if key not in x:
            raise refuse(key, f"is missing: goodput takes all of {', '.join(GOODPUT_FIGURES)}")
        value: Any = x[key]
        if not _number(value):
            hint = _text_hint(value, lambda v: 0 <= v <= most)
            raise refuse(key, f"must be {allowed} (given {show(value)}){hint}")
        if value > most or (below and value == most):
            raise refuse(key, f"is {value:g}: it must be {allowed}")


def _text_hint(x: Any, ok: Callable[[Any], bool]) -> str:
    """'; YAML reads 5e-1 as text: write 5.0e-01' where a figure is a number's digits as text (YAML 1.1
    reads `5e-1`, without a point, as a string), or that the number is not allowed either (out of range, or where a table is wanted); else nothing."""
    if not _numeric_text(x):
        return ""
    if not ok(float(x)):
        return f"; YAML reads {x} as text, and as a number ({float(x):g}) it is not allowed either"
    return f"; YAML reads {x} as text: write {float(x):.1e}"


def _numeric_text(x: Any) -> bool:
    """Text a number's digits (YAML 1.1 reads `1e18`, without a point, as a string)."""
    try:
        return isinstance(x, str) and math.isfinite(float(x))
    except ValueError:
        return False


Check = tuple[str, Callable[[Any], bool]]  # (what is allowed, in words; the test)

BY_KIND: dict[str, Check] = {
    "int": ("a whole number above zero", lambda x: _number(x) and isinstance(x, int) and x >= 1),
    "list": (
        "a list of [number, number] pairs",
        lambda x: isinstance(x, list) and all(isinstance(p, list) and len(p) == 2 and all(map(_number, p)) for p in x),
    ),
}
NUMBERS: Check = ("a finite number at or above zero, or a mapping of names to such numbers", _tree)
SPECIAL: dict[str, Check] = {
    "datasheet_derating": (
        "a mapping of GPU generations to {factor: a number in (0, 1), upper: at least "
        "factor and at most 2, source: [ids], note: text, stack: text, and optionally "
        "mature_after_months: a whole number with as_of: a YYYY, YYYY-MM or YYYY-MM-DD date, and "
        "vendor_tuned: {factor, upper, source, note, stack} for the vendor's own tuned software, and "
        "mature: {factor, upper, source, note} for a generation past mature_after_months}",
        lambda x: isinstance(x, dict) and bool(x) and all(map(_derating_entry, x.values())),
    ),
    "link_efficiency": (
        "a number above 0 and at most 1, or a mapping of GPU ids or families to such numbers with a `default`",
        lambda x: _by_gpu(_share)(x) and (not isinstance(x, dict) or "default" in x),
    ),
    **dict.fromkeys(
        ("architecture_efficiency", "mfu_cap", "mfu_median"),
        (
            "a share above 0 and at most 1, or a mapping of GPU ids or families to such shares or to "
            "{precision: share} mappings",
            _by_gpu_and_precision(_share),
        ),
    ),
    "framework_efficiency": (  # read as a table with its `default` (perf/training.py; a number crashed: AttributeError)
        "a mapping of GPU ids or families to numbers above 0 or to {precision: number} mappings, with a `default`",
        lambda x: isinstance(x, dict) and "default" in x and _by_gpu_and_precision(_positive)(x),
    ),
    # shares the models multiply or divide by: 0 divided (no_p2p_factor, ZeroDivisionError) or fitted no
    # job (usable_memory_fraction, exit 3), and 5 hid five times the traffic there is (comm_overlap)
    **dict.fromkeys(
        ("usable_memory_fraction", "no_p2p_factor", "fused_memory_share", "matmul_efficiency_max"),
        ("a share above 0 and at most 1", _share),
    ),
    **dict.fromkeys(
        ("comm_overlap", "tp_comm_overlap"),
        ("a share of the traffic hidden, from 0 to 1", lambda x: _number(x) and 0 <= float(x) <= 1),
    ),
    "batch_tokens_by_params": (  # read in order, the last pair for any larger model ([] was an IndexError)
        "a list of at least one [parameters, global batch tokens] pair, each at least 1, in ascending parameters",
        lambda x: (
            isinstance(x, list)
            and bool(x)
            and all(_pair_at_least_one(p) for p in x)
            and all(a[0] < b[0] for a, b in zip(x, x[1:]))
        ),
    ),
    "today_kernel_runs": (
        "a mapping of GPU generations to {precision: a count of runs}",
        _by_gpu_and_precision(_number),
    ),
    **dict.fromkeys(
        ("attention_efficiency", "attention_kernel_speedup", "software_factor"),
        ("a number above 0, or a mapping of GPU ids or families to such numbers", _by_gpu(_positive)),
    ),
    "measured_software_share": (
        "a share of a measured offset from 0 to 1",
        lambda x: _number(x) and 0 <= float(x) <= 1,
    ),
    "measured_mfu_floor": (
        "an MFU from 0 to 1 (0: no user's run is questioned)",
        lambda x: _number(x) and 0 <= float(x) <= 1,
    ),
    "network_gbps_per_gpu": (
        "a number above 0, or a mapping of GPU ids or families to such numbers with a `default`",
        lambda x: _by_gpu(_positive)(x) and (not isinstance(x, dict) or "default" in x),
    ),
    "calibrated_from": (
        "what `advisor calibrate` writes: {runs_file: text, runs: the number of runs, groups: "
        "{generation/precision: {GPU id: runs}}, mape_in_sample: a number, mape_leave_one_out: a number or null}",
        _calibrated_from,
    ),
    "mfu_measured_on": (
        "a mapping of GPU generations to the catalog id of the GPU their published MFUs were measured on",
        lambda x: isinstance(x, dict) and bool(x) and all(isinstance(v, str) and v for v in x.values()),
    ),
}


# the tables read per GPU (perf/training.gpu_value: its id, its generation, its family word, then `default`)
GPU_TABLES = (
    *("architecture_efficiency", "framework_efficiency", "software_factor", "link_efficiency", "mfu_cap"),
    *("network_gbps_per_gpu", "attention_efficiency", "attention_kernel_speedup", "today_kernel_runs"),
    *("mfu_measured_on", "mfu_median"),
)


def gpu_keys(architectures: dict[str, str | None]) -> set[str]:
    """What a per-GPU table may be keyed by, for GPUs of these ids and architectures."""
    gens = {generation_of(a) for a in architectures.values()}
    return {*architectures, *gens, *map(family_of, gens), "default"}


def _check_gpu_keys(values: dict[str, Any], name: str, keys: set[str]) -> None:
    """A per-GPU table's key that names no GPU, generation or family is refused: a misspelt `h100-sxmm`
    was read by no GPU, without a word (review25a)."""
    for table in GPU_TABLES:
        entries = values.get(table)
        for key in entries if isinstance(entries, dict) else ():
            if key not in keys:
                raise InputError(
                    f"{name}: `estimator.{table}.{key}` names no GPU, GPU generation or family of the catalog"
                    f"{suggest(str(key), keys)}; a table is keyed by GPU ids (h100-sxm), generations (hopper), "
                    "families (cdna) and `default`",
                    file=name,
                    field=f"estimator.{table}.{key}",
                )


def check_estimator(
    values: dict[str, Any], name: str, gpu_ids: set[str] | None = None, keys: set[str] | None = None
) -> None:
    """The estimator's parameters have the kinds estimate.Params declares: whole numbers above zero,
    lists of [number, number] pairs, the entries SPECIAL describes, and otherwise finite numbers at
    or above zero or (nested) mappings of them; `mfu_measured_on` names GPUs of the catalog (`gpu_ids`),
    and a per-GPU table's keys its GPUs, generations or families (`keys`: gpu_keys)."""
    kinds = {f.name: str(f.type) for f in dataclasses.fields(Params)}
    for key, value in values.items():
        if key not in kinds:
            raise InputError(
                f"{name}: `estimator.{key}` is not a parameter of the estimator{suggest(key, kinds)}; "
                f"parameters: {', '.join(kinds)}",
                file=name,
                field=f"estimator.{key}",
            )
        if key == "goodput":
            check_goodput(value, name)
            continue
        what, ok = SPECIAL.get(key) or BY_KIND.get(kinds[key], NUMBERS)
        if not ok(value):
            raise InputError(
                f"{name}: `estimator.{key}` must be {what} (given {show(value)}){_text_hint(value, ok)}",
                file=name,
                field=f"estimator.{key}",
            )
    if keys is not None:
        _check_gpu_keys(values, name, keys)
    unknown = sorted(
        v for v in (values.get("mfu_measured_on") or {}).values() if gpu_ids is not None and v not in gpu_ids
    )
    if unknown:
        raise InputError(
            f"{name}: `estimator.mfu_measured_on` names {unknown[0]!r}, which is not a GPU of the catalog"
            f"{suggest(unknown[0], gpu_ids or set())}",
            file=name,
            field="estimator.mfu_measured_on",
        )
