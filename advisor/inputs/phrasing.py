"""Validation errors of a workload in the user's terms: one per location, each at the path as
written in the file (the shorthand un-expanded), with the value given and what is allowed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from advisor.errors import (
    KINDS,
    InputError,
    describe,
    either,
    first_error,
    loc_text,
    show,
    suggest,
)
from advisor.inputs.jobs import JOB_SHORTHAND, Job, ServeJob
from advisor.inputs.quantities import MAX_GPUS, MAX_JOBS
from advisor.inputs.yaml_nodes import Marks

_UNION_TAGS = ("str", "ModelShape", "train", "serve")
# What a field holds, for a value of the wrong kind ("`gpus` must be ..., got a list").
_SHAPES = {
    "deployment": "office, datacenter or cloud, or a mapping such as {context: office, region: US}",
    "gpus": "a number of GPUs (gpus: 8) or a mapping such as {count: 8, allow: [h100-sxm]}",
    "jobs": "a list of jobs, each a mapping such as {model: gpt2-124m, tokens: 10B}",
    "job": "a mapping such as {model: gpt2-124m, tokens: 10B}",
    "model": "a preset name such as gpt2-124m or a mapping such as {params: 7B, layers: 32, hidden: 4096}",
    "allow": "a list of GPU ids such as [h100-sxm, a100-80gb-sxm]",
    "deny": "a list of GPU ids such as [rtx-4090]",
    "decision": "expected, point, p80 or p90, or a mapping such as {basis: p80, draws: 200}",
}
# Why an upper bound is where it is.
_LARGEST_CLUSTERS = f"the largest clusters reported hold about {MAX_GPUS:,} GPUs"
_REASONS = {
    "count": _LARGEST_CLUSTERS,
    "min": _LARGEST_CLUSTERS,
    "max": _LARGEST_CLUSTERS,
    "horizon_months": "owned hardware is costed over at most 20 years",
    "jobs": f"a workload holds at most {MAX_JOBS:,} jobs",
    "confidence": "a quantile between 0.5 (the median job time) and 0.99; the default is 0.8",
}


Loc = tuple[int | str, ...]


def clean_loc(loc: Sequence[int | str]) -> Loc:
    """Drop pydantic's union/validator tags ('str', 'ModelShape', 'function-after[...]', a
    mapping key's '[key]')."""
    return tuple(
        p
        for p in loc
        if isinstance(p, int) or not (p in _UNION_TAGS or p == "[key]" or str(p).startswith(("function-", "lax-")))
    )


def located(name: str, loc: Loc, marks: Marks | None, key: bool = False) -> tuple[str, int | None, int | None]:
    """'file:line:column' of `loc` as written (of its key with `key`, e.g. an unknown field), from
    the loader's marks; the nearest enclosing value's when `loc` itself was not written (a field
    that is missing); just the file without marks."""
    if not marks:
        return name, None, None
    for n in range(len(loc), -1, -1):
        mark = marks.get(loc[:n])
        if mark is not None:
            line, column = mark[:2] if key or n < len(loc) else mark[2:]
            return f"{name}:{line}:{column}", line, column
    return name, None, None


def _fields_at(root: type[BaseModel], loc: Loc) -> list[str]:
    """Field names valid at `loc` in the document model `root` (for 'did you mean' on an unknown field)."""
    model = root
    for part in loc[:-1]:
        if part in ("jobs", "train", "serve") and (model is root or model is Job):  # the union's tag: which kind
            model = ServeJob if part == "serve" else Job
        if isinstance(part, int) or part not in clean_loc((part,)) or part in ("jobs", "train", "serve"):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return []
        ann = field.annotation
        found = None
        for candidate in getattr(ann, "__args__", ()) + (ann,):
            inner = getattr(candidate, "__args__", ())
            for c in (candidate,) + inner:
                if isinstance(c, type) and issubclass(c, BaseModel):
                    found = c
        if found is None:
            return []
        model = found
    names = list(model.model_fields)
    if model is root:
        names += list(JOB_SHORTHAND)
    return names


def format_error(
    err: ErrorDetails,
    name: str,
    root: type[BaseModel],
    mapped: Callable[[Loc], Loc] = lambda loc: loc,
    marks: Marks | None = None,
) -> InputError:
    """One error of a `root` document (a Workload) as a sentence naming the file, the line and
    column (with the loader's marks) and the location as written."""
    real = clean_loc(err["loc"])
    loc = mapped(real)
    where = loc_text(loc)
    given = err.get("input")
    kind = err["type"]
    head, line, column = located(name, loc, marks, key=kind in ("extra_forbidden", "missing"))

    def error(text: str) -> InputError:
        return InputError(
            f"{head}: {text}",
            file=name,
            field=where or None,
            line=line,
            column=column,
            given=None if kind in ("missing", "extra_forbidden") else given,
        )

    if kind == "extra_forbidden":
        field = str(loc[-1])
        valid = _fields_at(root, err["loc"])
        return error(f"unknown field `{where}`{suggest(field, valid)}. Allowed here: {', '.join(valid) or 'none'}.")
    if kind == "missing":
        what = "; give the job as model: and tokens: at the top level, or a list under jobs:" if where == "jobs" else ""
        return error(f"`{where}` is required but missing{what}.")
    if not where:
        return error(f"{describe(err)}.")
    last: int | str | None = real[-1] if not isinstance(real[-1], int) else ("job" if real[:-1] == ("jobs",) else None)
    if kind in KINDS and isinstance(last, str) and last in _SHAPES:
        return error(f"`{where}` must be {_SHAPES[last]}, got {show(given)}.")
    if kind == "literal_error":
        allowed = _allowed(err)
        if loc[-1] == "kind" and (loc[0] == "jobs" or loc == ("kind",)):
            allowed = ["pretrain", "finetune", "lora", "qlora", "serve"]
        hint = suggest(str(given), allowed) if isinstance(given, str) else ""
        return error(f"`{where}` must be {either(allowed)}, got {show(given)}{hint}.")
    bound = kind.startswith(("less_than", "too_long"))
    reason = _REASONS.get(last) if bound and isinstance(last, str) else None
    return error(f"`{where}`: {describe(err, reason)}.")


def _allowed(err: ErrorDetails) -> list[str]:
    """The values a Literal field allows, from pydantic's error ("'a', 'b' or 'c'")."""
    expected = str((err.get("ctx") or {}).get("expected", ""))
    return [v.strip().strip("'") for v in expected.replace(" or ", ", ").split(", ") if v.strip()]


def as_written(data: dict[str, Any]) -> Callable[[Loc], Loc]:
    """A function mapping a location in the expanded document back to where the user wrote it:
    `jobs[0].kind` is `kind` when the job was written at the top level, `gpus.count` is `gpus`
    for `gpus: 8`, `deployment.context` is `deployment` for `deployment: office`."""
    top_job = "jobs" not in data and any(k in data for k in JOB_SHORTHAND)
    gpus_scalar = isinstance(data.get("gpus"), (int, float)) and not isinstance(data.get("gpus"), bool)
    gpus_text = isinstance(data.get("gpus"), str)
    deployment_scalar = isinstance(data.get("deployment"), str)

    def mapped(loc: Loc) -> Loc:
        if top_job and loc[:2] == ("jobs", 0) and len(loc) > 2:
            return loc[2:]
        if gpus_scalar and loc == ("gpus", "count"):
            return ("gpus",)
        if gpus_text and loc[:1] == ("gpus",):  # `gpus: "H100:8"`
            return ("gpus",)
        if deployment_scalar and loc == ("deployment", "context"):
            return ("deployment",)
        return loc

    return mapped


def distinct_errors(
    errors: Sequence[ErrorDetails],
    clean: Callable[[Sequence[int | str]], Loc] = clean_loc,
) -> list[ErrorDetails]:
    """One error per location, in file order; a union branch's type error (`model` is neither text
    nor a mapping) gives way to the other branch's errors deeper inside the same value. `clean`
    drops the union tags from a location (the workload's by default)."""
    groups: dict[Loc, list[ErrorDetails]] = {}
    for err in errors:
        groups.setdefault(clean(err["loc"]), []).append(err)

    import difflib  # (here: only a workload with errors needs it)

    typos = {loc for loc, errs in groups.items() if any(e["type"] == "extra_forbidden" for e in errs)}
    out: list[ErrorDetails] = []
    for loc, errs in groups.items():
        deeper = any(len(other) > len(loc) and other[: len(loc)] == loc for other in groups)
        if deeper and all(e["type"] in KINDS for e in errs):
            continue
        if (
            all(e["type"] == "missing" for e in errs)
            and any(  # `tokenz` given: `tokens` missing says nothing new
                t[:-1] == loc[:-1] and difflib.get_close_matches(str(t[-1]).lower(), [str(loc[-1])], n=1, cutoff=0.6)
                for t in typos
            )
        ):
            continue
        out.append(first_error(errs, clean))
    return sorted(out, key=lambda e: e["type"] != "extra_forbidden")
