"""The rules interpreter: which (job, GPU, offer) combinations are allowed, and why not.

Rules are data (rules/*.yaml): an id, a title, a severity, a declarative condition, a message
template, why the rule exists and its source. A condition is built only from the operators
below; the interpreter looks values up by dotted name and compares them. Nothing in a rule
file is ever executed.

    {field: gpu.brand, in: [geforce, titan]}        equals | in | not_in | gte | lte
    {all: [cond, ...]}   {any: [cond, ...]}          combine
    in/not_in also take {list: NAME}, a named list from the file's `lists:` section.

A comparison against an unknown (null) value is false, so a rule never fires on a guess.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import InputError, describe, first_error, show
from .loader import load_yaml_file
from .resources import data_dir

COMPARATORS = ("equals", "in", "not_in", "gte", "lte")
COMBINATORS = ("all", "any")
_PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[a-z_0-9]+)*)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleSource(_Strict):
    title: str
    url: str
    clause: str | None = None
    also: list[str] = []


class Effective(_Strict):
    from_: dt.date | None = Field(None, alias="from")
    until: dt.date | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def covers(self, day: dt.date) -> bool:
        return (self.from_ is None or day >= self.from_) and (self.until is None or day < self.until)


class Rule(_Strict):
    id: str = Field(pattern=r"^[A-Z]{2,5}[0-9]{3}$")
    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    title: str
    severity: Literal["forbid", "warn"]
    effective: Effective = Effective()
    when: dict
    message: str
    why: str
    example: str | None = None
    source: RuleSource

    @field_validator("when")
    @classmethod
    def _condition(cls, v):
        check_condition(v, "when")
        return v


class RuleFile(_Strict):
    schema_version: int = 1
    lists: dict[str, list[Any]] = {}
    rules: list[Rule] = []


def check_condition(cond, path: str) -> None:
    """Refuse anything that is not one of the fixed operators (raises ValueError)."""
    if not isinstance(cond, dict):
        raise ValueError(f"{path}: a condition is a mapping, got {cond!r}")
    keys = set(cond)
    combinators = keys & set(COMBINATORS)
    if combinators:
        if len(keys) != 1:
            raise ValueError(f"{path}: `{min(combinators)}` stands alone, got keys {sorted(keys)}")
        op = next(iter(combinators))
        parts = cond[op]
        if not isinstance(parts, list) or not parts:
            raise ValueError(f"{path}.{op}: a non-empty list of conditions")
        for i, part in enumerate(parts):
            check_condition(part, f"{path}.{op}[{i}]")
        return
    if "field" not in keys:
        raise ValueError(f"{path}: unknown operator(s) {sorted(keys)}; allowed: "
                         f"{', '.join(COMPARATORS + COMBINATORS)} (with field:)")
    ops = keys - {"field"}
    unknown = ops - set(COMPARATORS)
    if unknown:
        raise ValueError(f"{path}: unknown operator {sorted(unknown)[0]!r}; allowed: {', '.join(COMPARATORS)}")
    if len(ops) != 1:
        raise ValueError(f"{path}: exactly one comparison per condition, got {sorted(ops)}")
    if not isinstance(cond["field"], str) or not re.fullmatch(r"[a-z_]+(\.[a-z_0-9]+)+", cond["field"]):
        raise ValueError(f"{path}: field is a dotted name such as gpu.brand, got {cond['field']!r}")
    op = next(iter(ops))
    value = cond[op]
    if op in ("in", "not_in") and not (isinstance(value, list) or (isinstance(value, dict) and set(value) == {"list"}
                                                                   and isinstance(value["list"], str))):
        raise ValueError(f"{path}.{op}: a list of values or {{list: NAME}}")
    if op in ("gte", "lte") and (isinstance(value, bool) or not isinstance(value, (int, float))
                                 or not math.isfinite(value)):
        raise ValueError(f"{path}.{op}: a finite number, got {show(value)}")


# ------------------------------------------------------------------------------ evaluation

def lookup(context: dict, name: str):
    node = context
    for part in name.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def holds(cond: dict, context: dict, lists: dict) -> bool:
    if "all" in cond:
        return all(holds(c, context, lists) for c in cond["all"])
    if "any" in cond:
        return any(holds(c, context, lists) for c in cond["any"])
    value = lookup(context, cond["field"])
    if value is None and "equals" not in cond:
        return False
    if "equals" in cond:
        return value == cond["equals"]
    if "gte" in cond:
        return isinstance(value, (int, float)) and value >= cond["gte"]
    if "lte" in cond:
        return isinstance(value, (int, float)) and value <= cond["lte"]
    options = cond.get("in", cond.get("not_in"))
    if isinstance(options, dict):
        options = lists[options["list"]]
    return (value in options) if "in" in cond else (value not in options)


def render(template: str, context: dict) -> str:
    def sub(m):
        v = lookup(context, m.group(1))
        if isinstance(v, float):
            return f"{v:g}"
        return "unknown" if v is None else str(v)
    return _PLACEHOLDER.sub(sub, template)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    message: str


@dataclass
class RuleSet:
    rules: list[Rule]
    lists: dict[str, list]
    origin: dict[str, str] = field(default_factory=dict)   # rule id -> file

    def get(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id.upper():
                return r
        from .catalog import suggest
        raise InputError(f"unknown rule {rule_id!r}{suggest(rule_id.upper(), [r.id for r in self.rules])}; "
                         f"known: {', '.join(r.id for r in self.rules)}", field="rule")

    def evaluate(self, context: dict, as_of: dt.date) -> list[Finding]:
        """Every rule in force on `as_of` whose condition holds for `context`, in id order."""
        found = []
        for rule in self.rules:
            if rule.effective.covers(as_of) and holds(rule.when, context, self.lists):
                found.append(Finding(rule.id, rule.severity, render(rule.message, context)))
        return found


def _validate_file(doc, name: str) -> RuleFile:
    if not isinstance(doc, dict):
        raise InputError(f"{name}: a rules file is a mapping with `rules:` (and optional `lists:`)", file=name)
    rules = doc.get("rules")
    if isinstance(rules, list):
        for i, raw in enumerate(rules):
            rid = raw.get("id", f"rules[{i}]") if isinstance(raw, dict) else f"rules[{i}]"
            try:
                Rule.model_validate(raw)
            except ValidationError as exc:
                err = first_error(exc.errors())
                where = ".".join(str(p) for p in err["loc"])
                msg = describe(err)
                if err["type"] == "extra_forbidden":
                    from .catalog import suggest
                    msg = (f"unknown field{suggest(str(err['loc'][-1]), Rule.model_fields)} "
                           f"(allowed: {', '.join(Rule.model_fields)})")
                at = f", field `{where}`" if where else ""
                raise InputError(f"{name}: rule {rid}{at}: {msg}", file=name, field=f"{rid}.{where}") from None
    try:
        return RuleFile.model_validate(doc)
    except ValidationError as exc:
        err = first_error(exc.errors())
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{name}: field `{where}`: {describe(err)}", file=name, field=where) from None


def load_rules(extra: list[str | Path] | None = None) -> RuleSet:
    """The built-in rules plus an organisation's own files (`--rules FILE`)."""
    files = sorted(data_dir("rules").glob("*.yaml")) + [Path(p) for p in (extra or [])]
    rules: list[Rule] = []
    lists: dict[str, list] = {}
    origin: dict[str, str] = {}
    for path in files:
        name = str(path)
        parsed = _validate_file(load_yaml_file(path, "rules file"), name)
        for key, values in parsed.lists.items():
            if key in lists and lists[key] != values:
                raise InputError(f"{name}: list {key!r} is already defined differently in another rules file",
                                 file=name, field=f"lists.{key}")
            lists[key] = values
        for rule in parsed.rules:
            if rule.id in origin:
                raise InputError(f"{name}: rule {rule.id} is already defined in {origin[rule.id]}",
                                 file=name, field=rule.id)
            origin[rule.id] = name
            rules.append(rule)
    for rule in rules:
        for list_name in _list_refs(rule.when):
            if list_name not in lists:
                raise InputError(f"{origin[rule.id]}: rule {rule.id} refers to list {list_name!r}, which no "
                                 "rules file defines", file=origin[rule.id], field=rule.id)
    rules.sort(key=lambda r: r.id)
    return RuleSet(rules=rules, lists=lists, origin=origin)


def _list_refs(cond: dict):
    for op in COMBINATORS:
        for part in cond.get(op, []):
            yield from _list_refs(part)
    for op in ("in", "not_in"):
        if isinstance(cond.get(op), dict):
            yield cond[op]["list"]


def gpu_context(gpu) -> dict:
    """The flat view of a catalog GPU that rule conditions and messages see as `gpu.*`."""
    ic = gpu.interconnect
    return {
        "id": gpu.id, "name": gpu.name, "vendor": gpu.vendor, "brand": gpu.brand,
        "product_class": gpu.product_class, "form_factor": gpu.form_factor,
        "memory_gb": gpu.memory_gb.value, "memory_bandwidth_gbps": gpu.memory_bandwidth_gbps.value,
        "tdp_w": gpu.tdp_w.value, "tpp": gpu.tpp.value, "performance_density": gpu.performance_density.value,
        "link": ic.link, "link_gbps": ic.link_gbps.value, "p2p": ic.p2p.value,
    }
