"""The base of the plan's models: strict, closed objects that print the JSON scripts already read.

Two rules keep that JSON byte-identical: a number keeps the form it was computed in (1 stays 1,
1.0 stays 1.0), and each object lists its keys in the order its builder wrote them (the
explainers write optional keys in different places), leaving out optional keys never written. A plan also reads like the dict it used to be: plan["jobs"] is the
JSON value (plain dicts and lists), plan.jobs the typed one.
"""
from __future__ import annotations

from collections.abc import ItemsView, KeysView
from typing import Annotated, Any, Literal

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

    model_config = ConfigDict(extra="forbid", strict=True)
    _keys: tuple[str, ...] = PrivateAttr(default=())

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
        keys = self._keys or tuple(k for k in type(self).model_fields if k in self.model_fields_set)
        return {k: out[k] for k in keys if k in out}

    def to_dict(self) -> dict[str, Any]:
        """The JSON value: plain dicts, lists and scalars."""
        return self.model_dump(mode="json")

    def __getitem__(self, key: str) -> Any:
        if key not in self._present():
            raise KeyError(key)
        return self.model_dump(mode="json", include={key})[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._present() else default

    def __contains__(self, key: object) -> bool:
        return key in self._present()

    def keys(self) -> KeysView[str]:
        return self.to_dict().keys()

    def items(self) -> ItemsView[str, Any]:
        return self.to_dict().items()

    def _present(self) -> tuple[str, ...]:
        return self._keys or tuple(self.model_fields_set)
