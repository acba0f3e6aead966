"""The rules interpreter: which (job, GPU, offer) combinations are allowed, and why not.

Rules are data (rules/*.yaml): an id, a title, a severity, a declarative condition, a message
template, why the rule exists and its source. A condition is built only from the operators
below; the interpreter looks values up by dotted name and compares them. Nothing in a rule
file is ever executed.

    {field: gpu.brand, in: [geforce, titan]}        equals | in | not_in | gte | lte | gt | lt
    {all: [cond, ...]}   {any: [cond, ...]}          combine
    in/not_in also take {list: NAME}, a named list from a rules file's `lists:` section.

`gt`/`lt` are the strict forms the regulations need ("a TPP of less than 4800"). A comparison
against an unknown (null) value is false, so a rule never fires on a guess; `equals: null`
asks "is it unknown?", for the rules that say a classification could not be computed.

Severities: `forbid` removes the option, `warn` keeps it and says why a reviewer should look,
`limit` sets a deployment-wide bound the optimizer enforces (`effect: {limit: power_kw,
value: 1.44}`); a limit rule's condition may read only `deployment.*`.

Field names are checked when a file is loaded: a rule reading `gpu.brnad` is refused (exit 2,
naming the file and the rule), as is an unknown operator or an unknown key.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from advisor.data.bounds import MAX_RULES
from advisor.data.resources import data_dir
from advisor.errors import InputError, first_error, show
from advisor.errors import describe as describe_error
from advisor.inputs.loader import load_yaml_file

COMPARATORS = ("equals", "in", "not_in", "gte", "lte", "gt", "lt")
COMBINATORS = ("all", "any")
_PLACEHOLDER = re.compile(r"\{([a-z_]+(?:\.[a-z_0-9]+)*)\}")

# The names a condition or a message may read. `gpu.*` is a catalog GPU (gpu_context);
# `deployment.*` the workload's deployment; `offer.*` one way of getting the GPU (bought, or
# rented, in which case it runs in the provider's building: site cloud); `job.*` the job class,
# and, per candidate GPU count, `job.gpu_count` and `job.needs_tensor_parallel` (the estimate's
# layout for that count).
FIELDS = {
    "gpu": ("id", "name", "vendor", "brand", "product_class", "form_factor", "memory_gb",
            "memory_bandwidth_gbps", "tdp_w", "tpp", "performance_density", "link", "link_gbps", "p2p", "cooling"),
    "deployment": ("context", "region", "ownership", "power_limit_kw", "liquid_cooling"),
    "offer": ("ownership", "site"),
    "job": ("kind", "precision", "params", "gpu_count", "needs_tensor_parallel"),
}
PER_COUNT_FIELDS = frozenset({"job.gpu_count", "job.needs_tensor_parallel"})
EFFECT_FIELDS = ("effect.limit", "effect.value")
KNOWN_FIELDS = frozenset(f"{ns}.{name}" for ns, names in FIELDS.items() for name in names)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleSource(_Strict):
    """Where a rule comes from: a URL, a document reference (an internal policy, a contract), or a
    quote (`kind: quote, by: ..., date: ...`, e.g. an emailed statement)."""

    title: str
    url: str | None = Field(None, pattern=r"^https?://")
    document: str | None = None
    kind: Literal["url", "document", "quote"] | None = None
    by: str | None = None
    date: dt.date | None = None
    clause: str | None = None
    also: list[str] = []

    @model_validator(mode="after")
    def _cited(self):
        if self.kind == "quote":
            if not self.by or self.date is None:
                raise ValueError("a quote names who said it and when: {kind: quote, by: NAME, date: YYYY-MM-DD}")
        elif self.url is None and self.document is None:
            raise ValueError("a source is a URL (url: https://...), a document reference (document: "
                             "'IT policy 12, section 3'), or a quote ({kind: quote, by: NAME, date: YYYY-MM-DD})")
        return self

    @property
    def cite(self) -> str:
        """The source in one line: its URL, the document, or who said it and when."""
        if self.url:
            return self.url
        if self.document:
            return self.document
        return f"quote from {self.by}, {self.date}"


class Effective(_Strict):
    from_: dt.date | None = Field(None, alias="from")
    until: dt.date | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def covers(self, day: dt.date) -> bool:
        return (self.from_ is None or day >= self.from_) and (self.until is None or day < self.until)

    def text(self) -> str:
        if self.from_ and self.until:
            return f"from {self.from_} until {self.until} (exclusive)"
        if self.from_:
            return f"from {self.from_}"
        return f"until {self.until} (exclusive)" if self.until else "always"


class Effect(_Strict):
    """What a `limit` rule sets: a bound the optimizer enforces (power_kw: kW of owned hardware)."""

    limit: Literal["power_kw"]
    value: float = Field(gt=0)


class ExampleExpect(_Strict):
    """What a rule's example shows: the GPUs the rule removes from the plan (cited in `rejected`),
    the GPUs it warns about (a plan warning, or a note beside another rule's exclusion), that it
    sets the deployment's limit, or -- for an example given as a rule context -- that it fires."""

    rejects: list[str] = []
    warns: list[str] = []
    limits: bool = False
    fires: bool | None = None


class RuleExample(_Strict):
    """A runnable example (tests/test_rules.py runs every built-in one): a workload to plan, or,
    when no catalog part shows the rule, a rule context (`gpu.id` names the catalog GPU whose
    facts are the base, the other `gpu` keys override them) to evaluate."""

    text: str
    workload: dict | None = None
    context: dict | None = None
    expect: ExampleExpect

    @model_validator(mode="after")
    def _one_subject(self):
        if (self.workload is None) == (self.context is None):
            raise ValueError("an example gives either `workload` (planned) or `context` (evaluated), not both")
        return self


class Rule(_Strict):
    id: str = Field(pattern=r"^[A-Z]{2,5}[0-9]{3}$")
    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    title: str
    severity: Literal["forbid", "warn", "limit"]
    effective: Effective = Effective()
    when: dict
    effect: Effect | None = None
    message: str
    why: str
    example: RuleExample | str | None = None
    source: RuleSource

    @field_validator("when")
    @classmethod
    def _condition(cls, v):
        check_condition(v, "when")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        read = set(condition_fields(self.when))
        if self.severity == "limit":
            if self.effect is None:
                raise ValueError("a `limit` rule needs `effect: {limit: power_kw, value: N}`")
            outside = sorted(f for f in read if not f.startswith("deployment."))
            if outside:
                raise ValueError(f"a `limit` rule applies to the whole deployment, so its condition may read "
                                 f"only deployment.* fields, not {', '.join(outside)}")
        elif self.effect is not None:
            raise ValueError("`effect` belongs to rules of severity `limit`")
        allowed = KNOWN_FIELDS | (set(EFFECT_FIELDS) if self.effect else set())
        for name in sorted(read | set(_PLACEHOLDER.findall(self.message))):
            if name not in allowed:
                from advisor.errors import suggest
                raise ValueError(f"unknown field {name!r}{suggest(name, sorted(allowed))}; known fields: "
                                 f"{', '.join(sorted(allowed))}")
        return self

    @property
    def per_count(self) -> bool:
        """Whether the rule reads (in its condition or its message) a fact that depends on the
        candidate's GPU count."""
        read = set(condition_fields(self.when)) | set(_PLACEHOLDER.findall(self.message))
        return bool(read & PER_COUNT_FIELDS)


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
    if op in ("gte", "lte", "gt", "lt") and (isinstance(value, bool) or not isinstance(value, (int, float))
                                             or not math.isfinite(value)):
        raise ValueError(f"{path}.{op}: a finite number, got {show(value)}")


def condition_fields(cond: dict):
    """Every field name a condition reads."""
    for op in COMBINATORS:
        for part in cond.get(op, []):
            yield from condition_fields(part)
    if "field" in cond:
        yield cond["field"]


def _list_refs(cond: dict):
    for op in COMBINATORS:
        for part in cond.get(op, []):
            yield from _list_refs(part)
    for op in ("in", "not_in"):
        if isinstance(cond.get(op), dict):
            yield cond[op]["list"]


# ------------------------------------------------------------------------------ evaluation

def lookup(context: dict, name: str):
    node = context
    for part in name.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def holds(cond: dict, context: dict, lists: dict) -> bool:
    if "all" in cond:
        return all(holds(c, context, lists) for c in cond["all"])
    if "any" in cond:
        return any(holds(c, context, lists) for c in cond["any"])
    value = lookup(context, cond["field"])
    if "equals" in cond:
        return value == cond["equals"]
    if value is None:
        return False
    if "gte" in cond:
        return _number(value) and value >= cond["gte"]
    if "lte" in cond:
        return _number(value) and value <= cond["lte"]
    if "gt" in cond:
        return _number(value) and value > cond["gt"]
    if "lt" in cond:
        return _number(value) and value < cond["lt"]
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


_SYMBOL = {"gte": "≥", "lte": "≤", "gt": ">", "lt": "<"}


def describe(cond: dict, lists: dict | None = None, _nested: bool = False) -> str:
    """A condition in words: `gpu.tpp ≥ 4800 and deployment.region is in list eccn_3a090_destinations (47)`."""
    for op, word in (("all", " and "), ("any", " or ")):
        if op in cond:
            text = word.join(describe(c, lists, True) for c in cond[op])
            return f"({text})" if _nested and len(cond[op]) > 1 else text
    name = cond["field"]
    op = next(k for k in cond if k != "field")
    value = cond[op]
    if op == "equals":
        return f"{name} is unknown" if value is None else f"{name} is {_word(value)}"
    if op in _SYMBOL:
        return f"{name} {_SYMBOL[op]} {value:g}"
    neg = "not " if op == "not_in" else ""
    if isinstance(value, dict):
        size = len((lists or {}).get(value["list"], []))
        return f"{name} is {neg}in list {value['list']} ({size} entries)"
    return f"{name} is {neg}one of {', '.join(_word(v) for v in value)}"


def _word(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    message: str


@dataclass(frozen=True)
class Limit:
    rule: str
    limit: str
    value: float
    message: str


@dataclass
class RuleSet:
    rules: list[Rule]
    lists: dict[str, list]
    origin: dict[str, str] = field(default_factory=dict)   # rule id -> file
    _memo: dict = field(default_factory=dict, repr=False)

    def get(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id.upper():
                return r
        from advisor.errors import suggest
        raise InputError(f"unknown rule {rule_id!r}{suggest(rule_id.upper(), [r.id for r in self.rules])}; "
                         f"known: {', '.join(r.id for r in self.rules)}", field="rule")

    def _scope(self, per_count: bool | None) -> tuple[list[Rule], tuple[str, ...]]:
        """The option rules (forbid/warn) in a scope, and every field they read (conditions and messages)."""
        key = ("scope", per_count)
        if key not in self._memo:
            chosen = [r for r in self.rules
                      if r.severity != "limit" and (per_count is None or r.per_count == per_count)]
            names = set()
            for r in chosen:
                names |= set(condition_fields(r.when)) | set(_PLACEHOLDER.findall(r.message))
            self._memo[key] = (chosen, tuple(sorted(names)))
        return self._memo[key]

    def evaluate(self, context: dict, as_of: dt.date, per_count: bool | None = None) -> list[Finding]:
        """Every forbid/warn rule in force on `as_of` whose condition holds for `context`, in id
        order. per_count=False evaluates only the rules that do not depend on the GPU count,
        True only those that do, None all. Results are memoised on the values the rules read."""
        chosen, names = self._scope(per_count)
        key = (as_of, per_count, tuple(lookup(context, n) for n in names))
        try:
            return self._memo[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable value in the context: evaluate without the memo
            key = None
        found = [Finding(r.id, r.severity, render(r.message, context)) for r in chosen
                 if r.effective.covers(as_of) and holds(r.when, context, self.lists)]
        if key is not None:
            self._memo[key] = found
        return found

    def limits(self, context: dict, as_of: dt.date) -> list[Limit]:
        """The `limit` rules in force whose condition holds for the deployment `context`."""
        out = []
        for r in self.rules:
            if r.severity == "limit" and r.effective.covers(as_of) and holds(r.when, context, self.lists):
                ctx = {**context, "effect": {"limit": r.effect.limit, "value": r.effect.value}}
                out.append(Limit(r.id, r.effect.limit, r.effect.value, render(r.message, ctx)))
        return out

    def record(self, rule: Rule, as_of: dt.date) -> dict:
        """Everything about one rule, for `advisor rules show` and scripts."""
        used = sorted(set(_list_refs(rule.when)))
        return {
            "id": rule.id, "name": rule.name, "title": rule.title, "severity": rule.severity,
            "effective": {"from": rule.effective.from_.isoformat() if rule.effective.from_ else None,
                          "until": rule.effective.until.isoformat() if rule.effective.until else None},
            "in_force": rule.effective.covers(as_of), "as_of": as_of.isoformat(),
            "file": self.origin.get(rule.id), "when": rule.when, "condition": describe(rule.when, self.lists),
            "effect": rule.effect.model_dump() if rule.effect else None,
            "message": rule.message, "why": " ".join(rule.why.split()), 
            "example": rule.example.text if isinstance(rule.example, RuleExample) else rule.example,
            "source": {k: v for k, v in rule.source.model_dump(mode="json").items()
                       if v is not None or k not in ("document", "kind", "by", "date")},
            "lists": {name: self.lists[name] for name in used},
        }

    def listing(self, as_of: dt.date) -> list[dict]:
        return [{"id": r.id, "name": r.name, "severity": r.severity, "title": r.title,
                 "in_force": r.effective.covers(as_of), "effective": r.effective.text(),
                 "file": self.origin.get(r.id), "source": r.source.cite} for r in self.rules]


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
                msg = describe_error(err)
                if err["type"] == "extra_forbidden":
                    from advisor.errors import suggest
                    msg = (f"unknown field{suggest(str(err['loc'][-1]), Rule.model_fields)} "
                           f"(allowed: {', '.join(Rule.model_fields)})")
                at = f", field `{where}`" if where else ""
                raise InputError(f"{name}: rule {rid}{at}: {msg}", file=name,
                                 field=f"{rid}.{where}" if where else rid) from None
    try:
        return RuleFile.model_validate(doc)
    except ValidationError as exc:
        err = first_error(exc.errors())
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{name}: field `{where}`: {describe_error(err)}", file=name, field=where) from None


def _builtin_files(paths: list[Path]) -> list[tuple[str, RuleFile | None]]:
    """The shipped rules files, parsed and validated once (data/compiled.py)."""
    from advisor.data.compiled import compiled

    def build() -> list[tuple[str, RuleFile | None]]:
        return [(f"rules/{p.name}", _validate_file(load_yaml_file(p, "rules file", shipped=True), f"rules/{p.name}"))
                for p in paths]

    return compiled("rules", paths, build)


def load_rules(extra: list[str | Path] | None = None) -> RuleSet:
    """The built-in rules plus an organisation's own files (`--rules FILE`)."""
    builtin = sorted(data_dir("rules").glob("*.yaml"))
    parsed_files = _builtin_files(builtin)
    parsed_files += [(str(p), None) for p in (extra or [])]
    rules: list[Rule] = []
    lists: dict[str, list] = {}
    origin: dict[str, str] = {}
    for name, parsed in parsed_files:
        if parsed is None:   # a user's file: read defensively every time
            parsed = _validate_file(load_yaml_file(name, "rules file"), name)
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
        if len(rules) > MAX_RULES:
            raise InputError(f"{name}: more than {MAX_RULES:,} rules in all; the limit is {MAX_RULES:,} (every "
                             "option of every job is checked against each; see docs/limits.md)", file=name)
    for rule in rules:
        for list_name in _list_refs(rule.when):
            if list_name not in lists:
                raise InputError(f"{origin[rule.id]}: rule {rule.id} refers to list {list_name!r}, which no "
                                 "rules file defines", file=origin[rule.id], field=rule.id)
    rules.sort(key=lambda r: r.id)
    return RuleSet(rules=rules, lists=lists, origin=origin)


def gpu_context(gpu) -> dict:
    """The flat view of a catalog GPU that rule conditions and messages see as `gpu.*`."""
    ic = gpu.interconnect
    return {
        "id": gpu.id, "name": gpu.name, "vendor": gpu.vendor, "brand": gpu.brand,
        "product_class": gpu.product_class, "form_factor": gpu.form_factor,
        "memory_gb": gpu.memory_gb.value, "memory_bandwidth_gbps": gpu.memory_bandwidth_gbps.value,
        "tdp_w": gpu.tdp_w.value, "tpp": gpu.tpp.value, "performance_density": gpu.performance_density.value,
        "link": ic.link, "link_gbps": ic.link_gbps.value, "p2p": ic.p2p.value,
        "cooling": gpu.cooling.value if getattr(gpu, "cooling", None) else None,
    }


def deployment_context(deployment) -> dict:
    """`deployment.*` as rules see it (a workload's Deployment)."""
    return {"context": deployment.context, "region": deployment.region, "ownership": deployment.ownership,
            "power_limit_kw": deployment.power_limit_kw,
            "liquid_cooling": bool(getattr(deployment, "liquid_cooling", False))}
