"""The base of the plan's models: strict, closed objects that print the JSON scripts already read.

Two rules keep that JSON byte-identical: a number keeps the form it was computed in (1 stays 1,
1.0 stays 1.0), and each object lists its keys in the order its builder wrote them (the
explainers write optional keys in different places), leaving out optional keys never written. A plan also reads like the dict it used to be: plan["jobs"] is the
JSON value (plain dicts and lists), plan.jobs the typed one.

Building pydantic's validators for these ~35 classes costs a cold `advisor plan` more than the
plan's own solve, so they are built only when something validates (`defer_build`): the tool
assembles its plans with `Out.build` (the same objects `model_validate` returns for valid data,
without checking it) and prints them with `to_dict` (no pydantic serializer). The tests check both
against validation and the JSON Schema (`GPU_ADVISOR_CHECK_PLANS=1` makes `build` validate).
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, ItemsView, KeysView
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainSerializer,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_serializer,
    model_validator,
)
from typing_extensions import Self


def _as_computed(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """An int stays an int: pydantic would print 36 as 36.0."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return handler(value)


def _as_is(value: float) -> float:
    return value


# a JSON number, printed in the form it was computed
Num = Annotated[float, WrapValidator(_as_computed), PlainSerializer(_as_is, return_type=Any)]
Ownership = Literal["buy", "rent"]


class Out(BaseModel):
    """A JSON object of the plan: strict types, no unknown keys, keys in the order written."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)
    _keys: tuple[str, ...] = PrivateAttr(default=())

    @classmethod
    def build(cls, data: dict[str, Any]) -> Self:
        """The object `model_validate(data)` returns for valid data, made without validating it
        (trusted data from assemble.py). With GPU_ADVISOR_CHECK_PLANS set (the tests) it also
        validates, and checks the object it ships reads the same as the validated one."""
        built = cls._construct(data)
        if os.environ.get("GPU_ADVISOR_CHECK_PLANS"):
            checked = cls.model_validate(data)
            if built.to_dict() != checked.to_dict():
                raise AssertionError(f"{cls.__name__}: built without validation differs from the validated object")
        return built

    @classmethod
    def _construct(cls, data: dict[str, Any]) -> Self:
        shapers = _SHAPERS.get(cls)
        if shapers is None:
            shapers = _SHAPERS[cls] = {
                name: s for name, f in cls.model_fields.items() if (s := _shaper(f.annotation)) is not None
            }
        obj = cls.model_construct(
            **{k: (shapers[k](v) if k in shapers and v is not None else v) for k, v in data.items()}
        )
        obj._keys = tuple(data)
        return obj

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        obj = handler(data)
        if isinstance(data, dict):
            obj._keys = tuple(data)
        return obj

    @model_serializer(mode="wrap")
    def _in_written_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        return {k: out[k] for k in self._present() if k in out}

    def to_dict(self) -> dict[str, Any]:
        """The JSON value: plain dicts, lists and scalars (what `model_dump(mode="json")` gives)."""
        return {k: _plain(getattr(self, k)) for k in self._present()}

    def __getitem__(self, key: str) -> Any:
        if key not in self._present():
            raise KeyError(key)
        return _plain(getattr(self, key))

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._present() else default

    def __contains__(self, key: object) -> bool:
        return key in self._present()

    def keys(self) -> KeysView[str]:
        return self.to_dict().keys()

    def items(self) -> ItemsView[str, Any]:
        return self.to_dict().items()

    def _present(self) -> tuple[str, ...]:
        """The keys written, in the order written (field order for an object made otherwise)."""
        return self._keys or tuple(k for k in type(self).model_fields if k in self.model_fields_set)


_SHAPERS: dict[type[Out], dict[str, Callable[[Any], Any]]] = {}


def _shaper(annotation: Any) -> Callable[[Any], Any] | None:
    """How `Out.build` turns a field's JSON value into its typed value (None: kept as it is)."""
    if isinstance(annotation, type) and issubclass(annotation, Out):
        return annotation._construct
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):  # X | None, list[X] | None (None values are never shaped)
        shaped = [s for a in args if (s := _shaper(a)) is not None]
        if len(shaped) > 1:
            raise TypeError(f"{annotation}: a union of several objects cannot be built without validating")
        return shaped[0] if shaped else None
    if origin is list and args and (item := _shaper(args[0])) is not None:
        return _each(item)
    if origin is dict and len(args) == 2 and (value := _shaper(args[1])) is not None:
        return _each_value(value)
    return None


def _each(shape: Callable[[Any], Any]) -> Callable[[list[Any]], list[Any]]:
    return lambda v: [shape(x) for x in v]


def _each_value(shape: Callable[[Any], Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda v: {k: shape(x) for k, x in v.items()}


def _plain(value: Any) -> Any:
    """A typed value as JSON: objects in their written key order, lists and dicts item by item."""
    if isinstance(value, Out):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
