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
    first_error,
    loc_text,
    show,
    suggest,
)
from advisor.inputs.jobs import JOB_SHORTHAND, Job, ServeJob
from advisor.inputs.quantities import MAX_GPUS, MAX_JOBS

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
}
# Why an upper bound is where it is.
_LARGEST_CLUSTERS = f"the largest clusters reported hold about {MAX_GPUS:,} GPUs"
_REASONS = {"count": _LARGEST_CLUSTERS, "min": _LARGEST_CLUSTERS, "max": _LARGEST_CLUSTERS,
            "horizon_months": "owned hardware is costed over at most 20 years",
            "jobs": f"a workload holds at most {MAX_JOBS:,} jobs",
            "confidence": "a quantile between 0.5 (the median job time) and 0.99; the default is 0.8"}


Loc = tuple[int | str, ...]


def clean_loc(loc: Sequence[int | str]) -> Loc:
    """Drop pydantic's union/validator tags ('str', 'ModelShape', 'function-after[...]')."""
    return tuple(p for p in loc if isinstance(p, int) or not (
        p in _UNION_TAGS or str(p).startswith(("function-", "lax-"))))


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


def format_error(err: ErrorDetails, name: str, root: type[BaseModel],
                 mapped: Callable[[Loc], Loc] = lambda loc: loc) -> InputError:
    """One error of a `root` document (a Workload) as a sentence naming the file and the location."""
    real = clean_loc(err["loc"])
    loc = mapped(real)
    where = loc_text(loc)
    given = err.get("input")
    if err["type"] == "extra_forbidden":
        field = str(loc[-1])
        valid = _fields_at(root, err["loc"])
        return InputError(f"{name}: unknown field `{where}`{suggest(field, valid)}. "
                          f"Allowed here: {', '.join(valid) or 'none'}.", file=name, field=where)
    if err["type"] == "missing":
        what = ("; give the job as model: and tokens: at the top level, or a list under jobs:"
                if where == "jobs" else "")
        return InputError(f"{name}: `{where}` is required but missing{what}.", file=name, field=where)
    if not where:
        return InputError(f"{name}: {describe(err)}.", file=name)
    last: int | str | None = real[-1] if not isinstance(real[-1], int) else ("job" if real[:-1] == ("jobs",) else None)
    if err["type"] in KINDS and isinstance(last, str) and last in _SHAPES:
        return InputError(f"{name}: `{where}` must be {_SHAPES[last]}, got {show(given)}.", file=name, field=where)
    if err["type"] == "literal_error" and loc[0] == "jobs" and last == "kind":
        return InputError(f"{name}: `{where}` must be pretrain, finetune, lora or serve, got {show(given)}.",
                          file=name, field=where)
    bound = err["type"].startswith(("less_than", "too_long"))
    reason = _REASONS.get(last) if bound and isinstance(last, str) else None
    return InputError(f"{name}: `{where}`: {describe(err, reason)}.",
                      file=name, field=where)


def as_written(data: dict[str, Any]) -> Callable[[Loc], Loc]:
    """A function mapping a location in the expanded document back to where the user wrote it:
    `jobs[0].kind` is `kind` when the job was written at the top level, `gpus.count` is `gpus`
    for `gpus: 8`, `deployment.context` is `deployment` for `deployment: office`."""
    top_job = "jobs" not in data and any(k in data for k in JOB_SHORTHAND)
    gpus_scalar = isinstance(data.get("gpus"), (int, float)) and not isinstance(data.get("gpus"), bool)
    deployment_scalar = isinstance(data.get("deployment"), str)

    def mapped(loc: Loc) -> Loc:
        if top_job and loc[:2] == ("jobs", 0) and len(loc) > 2:
            return loc[2:]
        if gpus_scalar and loc == ("gpus", "count"):
            return ("gpus",)
        if deployment_scalar and loc == ("deployment", "context"):
            return ("deployment",)
        return loc
    return mapped


def distinct_errors(errors: Sequence[ErrorDetails], clean: Callable[[Sequence[int | str]], Loc] = clean_loc,
                    ) -> list[ErrorDetails]:
    """One error per location, in file order; a union branch's type error (`model` is neither text
    nor a mapping) gives way to the other branch's errors deeper inside the same value. `clean`
    drops the union tags from a location (the workload's by default)."""
    groups: dict[Loc, list[ErrorDetails]] = {}
    for err in errors:
        groups.setdefault(clean(err["loc"]), []).append(err)

    import difflib   # (here: only a workload with errors needs it)

    typos = {loc for loc, errs in groups.items() if any(e["type"] == "extra_forbidden" for e in errs)}
    out: list[ErrorDetails] = []
    for loc, errs in groups.items():
        deeper = any(len(other) > len(loc) and other[:len(loc)] == loc for other in groups)
        if deeper and all(e["type"] in KINDS for e in errs):
            continue
        if all(e["type"] == "missing" for e in errs) and any(   # `tokenz` given: `tokens` missing says nothing new
                t[:-1] == loc[:-1] and difflib.get_close_matches(str(t[-1]).lower(), [str(loc[-1])], n=1, cutoff=0.6)
                for t in typos):
            continue
        out.append(first_error(errs, clean))
    return sorted(out, key=lambda e: e["type"] != "extra_forbidden")
