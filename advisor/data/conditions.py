"""Rule conditions as typed models, and their interpreter: nothing in a rule file is ever executed.

    {field: gpu.brand, in: [geforce, titan]}        equals | in | not_in | gte | lte | gt | lt
    {all: [cond, ...]}   {any: [cond, ...]}          combine
    in/not_in also take {list: NAME}, a named list from a rules file's `lists:` section, or
    {field: NAME}, a list the context holds (`{field: deployment.region, not_in: {field: gpu.markets}}`;
    an unknown list makes the comparison false, as any unknown value).

A condition is a `Comparison`, an `AllOf` or an `AnyOf`, told apart by its keys. Each refuses, in
words, anything outside the fixed operators. `gt`/`lt` are the strict forms the regulations need
("a TPP of less than 4800"). A comparison against an unknown (null) value is false, so a rule never
fires on a guess; `equals: null` asks "is it unknown?".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Union

from pydantic import Discriminator, Field, PrivateAttr, Tag, model_validator

from advisor.errors import show
from advisor.inputs.strict import Strict

COMPARATORS = ("equals", "in", "not_in", "gte", "lte", "gt", "lt")
COMBINATORS = ("all", "any")
NUMERIC = ("gte", "lte", "gt", "lt")
TAGS = ("all-of", "any-of", "comparison")  # the union's tags, dropped from error locations
PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[a-z_0-9]+)*)\}")
_FIELD_NAME = re.compile(r"[a-z_]+(\.[a-z_0-9]+)+")

Context = Mapping[str, Any]  # {gpu: {...}, deployment: {...}, offer: {...}, job: {...}}
Lists = Mapping[str, list[Any]]  # a rules file's named lists


class ListRef(Strict):
    """`{list: NAME}`: a named list from a rules file's `lists:` section."""

    list: str


class FieldRef(Strict):
    """`{field: NAME}`: a list the context holds (a catalog GPU's `markets`), compared against."""

    field: str = Field(pattern=r"^[a-z_]+(\.[a-z_0-9]+)+$")


class Comparison(Strict):
    """`{field: NAME, OP: VALUE}` with exactly one of the comparison operators."""

    field: str
    equals: Any = None
    in_: list[Any] | ListRef | FieldRef | None = Field(default=None, alias="in")
    not_in: list[Any] | ListRef | FieldRef | None = None
    gte: int | float | None = None
    lte: int | float | None = None
    gt: int | float | None = None
    lt: int | float | None = None

    _op: str = PrivateAttr("")

    @model_validator(mode="before")
    @classmethod
    def _one_comparison(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        keys = set(data)
        if "field" not in keys:
            raise ValueError(
                f"unknown operator(s) {sorted(map(str, keys))}; allowed: "
                f"{', '.join(COMPARATORS + COMBINATORS)} (with field:)"
            )
        ops = keys - {"field"}
        unknown = ops - set(COMPARATORS)
        if unknown:
            raise ValueError(f"unknown operator {sorted(map(str, unknown))[0]!r}; allowed: {', '.join(COMPARATORS)}")
        if len(ops) != 1:
            raise ValueError(f"exactly one comparison per condition, got {sorted(ops)}")
        name = data["field"]
        if not isinstance(name, str) or not _FIELD_NAME.fullmatch(name):
            raise ValueError(f"field is a dotted name such as gpu.brand, got {name!r}")
        op = next(iter(ops))
        value = data[op]
        if op in ("in", "not_in") and not (
            isinstance(value, list)
            or (
                isinstance(value, dict)
                and set(value) in ({"list"}, {"field"})
                and isinstance(next(iter(value.values())), str)
            )
        ):
            raise ValueError(f"{op}: a list of values, {{list: NAME}} or {{field: NAME}}")
        if op in NUMERIC and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
        ):
            raise ValueError(f"{op}: a finite number, got {show(value)}")
        return data

    def model_post_init(self, context: Any) -> None:
        op = next(n for n in self.model_fields_set if n != "field")
        self._op = "in" if op == "in_" else op

    @property
    def op(self) -> str:
        """The operator, as written (`in`, not the attribute name `in_`)."""
        return self._op

    @property
    def value(self) -> Any:
        return getattr(self, "in_" if self._op == "in" else self._op)

    def holds(self, context: Context, lists: Lists) -> bool:
        value = lookup(context, self.field)
        op, target = self._op, self.value
        if op == "equals":
            return bool(value == target)
        if value is None:
            return False
        if op in NUMERIC:
            if not _number(value):
                return False
            return bool(
                value >= target
                if op == "gte"
                else value <= target
                if op == "lte"
                else value > target
                if op == "gt"
                else value < target
            )
        if isinstance(target, FieldRef):
            options = lookup(context, target.field)
            if not isinstance(options, (list, tuple)):
                return False  # an unknown list: the comparison cannot hold
        else:
            options = lists[target.list] if isinstance(target, ListRef) else target
        return (value in options) if op == "in" else (value not in options)


class _Combined(Strict):
    """What `all` and `any` share: a non-empty list of conditions, alone in its mapping."""

    @model_validator(mode="before")
    @classmethod
    def _alone(cls, data: Any) -> Any:
        if isinstance(data, dict):
            keys = set(data)
            combinators = keys & set(COMBINATORS)
            if len(keys) != 1:
                raise ValueError(f"`{min(combinators)}` stands alone, got keys {sorted(map(str, keys))}")
            parts = next(iter(data.values()))
            if not isinstance(parts, list) or not parts:
                raise ValueError(f"{next(iter(keys))}: a non-empty list of conditions")
        return data


class AllOf(_Combined):
    all: list[Condition]

    def holds(self, context: Context, lists: Lists) -> bool:
        return all(c.holds(context, lists) for c in self.all)


class AnyOf(_Combined):
    any: list[Condition]

    def holds(self, context: Context, lists: Lists) -> bool:
        return any(c.holds(context, lists) for c in self.any)


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return "all-of" if "all" in value else "any-of" if "any" in value else "comparison"
    kinds: dict[type, str] = {AllOf: "all-of", AnyOf: "any-of", Comparison: "comparison"}
    return kinds.get(type(value))


Condition = Annotated[
    Union[Annotated[AllOf, Tag("all-of")], Annotated[AnyOf, Tag("any-of")], Annotated[Comparison, Tag("comparison")]],
    Discriminator(
        _kind,
        custom_error_type="condition_type",
        custom_error_message="a condition is a mapping such as "
        "{field: gpu.vendor, equals: AMD}, {all: [...]} or {any: [...]}",
    ),
]
AnyCondition = AllOf | AnyOf | Comparison


# ------------------------------------------------------------------------------ reading a condition


def parts(cond: AnyCondition) -> list[AnyCondition]:
    """The conditions an `all`/`any` combines (none for a comparison)."""
    if isinstance(cond, AllOf):
        return list(cond.all)
    if isinstance(cond, AnyOf):
        return list(cond.any)
    return []


def condition_fields(cond: AnyCondition) -> Iterator[str]:
    """Every field name a condition reads."""
    for part in parts(cond):
        yield from condition_fields(part)
    if isinstance(cond, Comparison):
        yield cond.field
        if isinstance(cond.value, FieldRef):
            yield cond.value.field


def list_refs(cond: AnyCondition) -> Iterator[str]:
    """Every named list a condition refers to."""
    for part in parts(cond):
        yield from list_refs(part)
    if isinstance(cond, Comparison) and isinstance(cond.value, ListRef):
        yield cond.value.list


def as_written(cond: AnyCondition) -> dict[str, Any]:
    """The condition as a rules file writes it (`advisor rules show --format json`)."""
    if isinstance(cond, AllOf):
        return {"all": [as_written(c) for c in cond.all]}
    if isinstance(cond, AnyOf):
        return {"any": [as_written(c) for c in cond.any]}
    value = cond.value
    if isinstance(value, FieldRef):
        return {"field": cond.field, cond.op: {"field": value.field}}
    return {"field": cond.field, cond.op: {"list": value.list} if isinstance(value, ListRef) else value}


def holds(cond: AnyCondition, context: Context, lists: Lists) -> bool:
    return cond.holds(context, lists)


def lookup(context: Context, name: str) -> Any:
    node: Any = context
    for part in name.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def render(template: str, context: Context) -> str:
    def sub(m: re.Match[str]) -> str:
        v = lookup(context, m.group(1))
        if isinstance(v, float):
            return f"{v:g}"
        return "unknown" if v is None else str(v)

    return PLACEHOLDER.sub(sub, template)


_SYMBOL = {"gte": "≥", "lte": "≤", "gt": ">", "lt": "<"}


def describe(cond: AnyCondition, lists: Lists | None = None, _nested: bool = False) -> str:
    """A condition in words: `gpu.tpp ≥ 4800 and deployment.region is in list eccn_3a090_destinations (47)`."""
    if not isinstance(cond, Comparison):
        word = " and " if isinstance(cond, AllOf) else " or "
        text = word.join(describe(c, lists, True) for c in parts(cond))
        return f"({text})" if _nested and len(parts(cond)) > 1 else text
    name, op, value = cond.field, cond.op, cond.value
    if op == "equals":
        return f"{name} is unknown" if value is None else f"{name} is {_word(value)}"
    if op in _SYMBOL:
        return f"{name} {_SYMBOL[op]} {value:g}"
    neg = "not " if op == "not_in" else ""
    if isinstance(value, FieldRef):
        return f"{name} is {neg}in {value.field}"
    if isinstance(value, ListRef):
        size = len((lists or {}).get(value.list, []))
        return f"{name} is {neg}in list {value.list} ({size} entries)"
    return f"{name} is {neg}one of {', '.join(_word(v) for v in value)}"


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)
