"""The plan contract built without validation (what the tool does, contract/base.Out.build) is the
plan validation gives: the same objects, the same JSON, the same dict-like reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import AS_OF, EXAMPLES
from pydantic import ValidationError

from advisor.contract import Plan
from advisor.contract.base import Out, _shaper


def _all_out_classes() -> list[type[Out]]:
    seen, todo = [], [Out]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def _same(a: Any, b: Any, path: str = "plan") -> None:
    """Deep equality of two plans, types, key order and fields set included."""
    assert type(a) is type(b), path
    if isinstance(a, Out):
        assert a._keys == b._keys and a.model_fields_set == b.model_fields_set, path
        assert list(a.__dict__) == list(b.__dict__), path
        for k in a.__dict__:
            _same(a.__dict__[k], b.__dict__[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _same(a[k], b[k], f"{path}[{k}]")
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize(
    "name", ["article-office", pytest.param("serve-8b-office", marks=pytest.mark.slow), "llama-70b-budget"]
)
def test_a_built_plan_is_the_validated_plan(name, monkeypatch, catalog, rules):
    from advisor.flow import plan
    from advisor.inputs.workload import load_workload

    seen: dict[str, dict] = {}
    build = Plan.build.__func__

    def spy(cls, data):
        seen["data"] = data
        return build(cls, data)

    monkeypatch.setattr(Plan, "build", classmethod(spy))
    monkeypatch.delenv("GPU_ADVISOR_CHECK_PLANS")
    built = plan(load_workload(EXAMPLES / f"{name}.yaml"), catalog=catalog, rules=rules, as_of=AS_OF)
    validated = Plan.model_validate(seen["data"])
    _same(built, validated)
    assert built.to_json() == validated.to_json()
    assert json.dumps(built.to_dict()) == json.dumps(validated.model_dump(mode="json"))  # pydantic's serializer
    for key in validated.model_dump(mode="json"):
        assert built[key] == validated[key] and built.get(key) == validated.get(key) and key in built
    assert built.robustness is not None and built.robustness.message == seen["data"]["robustness"]["message"]


def test_every_contract_field_can_be_built():
    """A field whose JSON shape does not say which class to build (a union of two objects) would
    need validation: none exists, and one is refused."""
    for cls in _all_out_classes():
        for field in cls.model_fields.values():
            _shaper(field.annotation)

    class A(Out):
        x: int

    class B(Out):
        y: int

    with pytest.raises(TypeError, match="union of several objects"):
        _shaper(A | B)


def test_the_tool_builds_and_the_tests_validate(monkeypatch):
    """Under GPU_ADVISOR_CHECK_PLANS (set for the whole suite) a wrong plan is refused; without it, it is
    built as given (the tool's trusted path)."""
    from advisor.contract.plan import Confidence

    bad = {"level": 0.8, "quantile": 80, "message": "m"}  # quantile is a string
    with pytest.raises(ValidationError, match="quantile"):
        Confidence.build(bad)
    monkeypatch.delenv("GPU_ADVISOR_CHECK_PLANS")
    assert Confidence.build(bad).quantile == 80
