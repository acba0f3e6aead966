"""The one strict base class of every model read from a file (workloads, catalog, economics, rules):
unknown keys are errors, models are immutable, NaN and infinity are refused, and YAML's `yes`/`true`
is never taken for the number 1. It sits in the lowest layer that all of them may import."""

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

F = TypeVar("F", bound=Callable[..., Any])


def signed(f: F) -> F:
    """`f` with its signature worked out once: pydantic inspects a validator's signature for every
    field it applies to when it builds a model's validator, and a "*" validator applies to every
    field (~500 inspections for a workload: ~5 ms of a cold `advisor plan`); inspect.signature
    returns a function's `__signature__` when it has one."""
    f.__signature__ = inspect.signature(f)  # type: ignore[attr-defined]
    return f


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    @signed
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """YAML reads `yes`, `on` and `true` as booleans, which pydantic would take for the number 1."""
        if isinstance(value, bool) and info.field_name is not None:
            ann = cls.model_fields[info.field_name].annotation
            types = set(typing.get_args(ann)) | {ann}
            if bool not in types and types & {int, float}:
                raise ValueError("must be a number, not true or false")
        return value


# values people write for an enum that its canonical spelling does not already match once case,
# spaces, hyphens and underscores are ignored ("BF16", "on-demand", "Data Center" match by themselves)
SYNONYMS = {"datacentre": "datacenter", "serving": "serve", "inference": "serve"}


def _squeezed(text: str) -> str:
    return "".join(c for c in text.lower() if c not in " -_\t")


def spoken(value: str, choices: tuple[str, ...]) -> str:
    """`value` as one of `choices` when it names one in other words ('BF16' -> 'bf16', 'datacentre'
    -> 'datacenter', 'on-demand' -> 'on_demand'); unchanged otherwise (the model refuses it)."""
    if value in choices:
        return value
    key = _squeezed(value)
    key = SYNONYMS.get(key, key)
    return next((c for c in choices if _squeezed(c) == key), value)


def literal_choices(annotation: Any) -> tuple[str, ...]:
    """The text values of a Literal annotation (or of Literal | None); () for anything else."""
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(a for a in typing.get_args(annotation) if isinstance(a, str))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(v for a in typing.get_args(annotation) for v in literal_choices(a))
    return ()


class Written(Strict):
    """A model of what a person writes (a workload file): an enum's value is also accepted in the
    words people use for it (any case; spaces, hyphens or underscores; 'datacentre')."""

    @field_validator("*", mode="before")
    @classmethod
    @signed
    def _in_their_words(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None:
            return value
        ann = cls.model_fields[info.field_name].annotation
        if isinstance(value, str):
            choices = literal_choices(ann)
            return spoken(value, choices) if choices else value
        if isinstance(value, list) and typing.get_origin(ann) is list:
            choices = literal_choices(typing.get_args(ann)[0])
            return [spoken(v, choices) if isinstance(v, str) else v for v in value] if choices else value
        return value
