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
naming the file and the rule), as is an unknown operator or an unknown key. Every mistake in a
rules file is reported at once.

The code lives by concern: conditions.py (typed conditions and their interpreter), rule_models.py
(rules and rules files), and here the registry (RuleSet), the loader and the contexts rules read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from advisor.data.bounds import MAX_RULES
from advisor.data.conditions import (
    PLACEHOLDER,
    TAGS,
    as_written,
    condition_fields,
    describe,
    holds,
    list_refs,
    lookup,
    render,
)
from advisor.data.resources import data_dir
from advisor.data.rule_models import Rule, RuleExample, RuleFile
from advisor.errors import InputError, loc_text, suggest
from advisor.errors import describe as describe_error
from advisor.inputs.loader import load_yaml_file
from advisor.inputs.phrasing import clean_loc, distinct_errors

__all__ = ["Finding", "Limit", "RuleSet", "deployment_context", "gpu_context", "load_rules"]


@dataclass(frozen=True)
class Finding:
    """A rule that applies to a candidate: its id, severity and message."""

    rule: str
    severity: str
    message: str


@dataclass(frozen=True)
class Limit:
    """A number a `limit` rule sets for a context (e.g. PWR001's office power limit)."""

    rule: str
    limit: str
    value: float
    message: str


@dataclass
class RuleSet:
    """The rules in force (built-in and added files) and the lists they refer to."""

    rules: list[Rule]
    lists: dict[str, list[Any]]
    origin: dict[str, str] = field(default_factory=dict)  # rule id -> file
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    def get(self, rule_id: str) -> Rule:
        """The rule `rule_id` (any case); its id is checked as every other id argument is (a 100,000-character
        one was echoed whole in the error)."""
        from advisor.inputs.arguments import text

        rule_id = text()(rule_id, "ID")
        for r in self.rules:
            if r.id == rule_id.upper():
                return r
        raise InputError(
            f"unknown rule {rule_id!r}{suggest(rule_id.upper(), [r.id for r in self.rules])}; "
            f"known: {', '.join(r.id for r in self.rules)}",
            field="rule",
        )

    def _scope(self, per_count: bool | None) -> tuple[list[Rule], tuple[str, ...]]:
        """The option rules (forbid/warn) in a scope, and every field they read (conditions and messages)."""
        key = ("scope", per_count)
        if key not in self._memo:
            chosen = [
                r for r in self.rules if r.severity != "limit" and (per_count is None or r.per_count == per_count)
            ]
            names: set[str] = set()
            for r in chosen:
                names |= set(condition_fields(r.when)) | set(PLACEHOLDER.findall(r.message))
            self._memo[key] = (chosen, tuple(sorted(names)))
        return self._memo[key]

    def evaluate(self, context: dict[str, Any], as_of: dt.date, per_count: bool | None = None) -> list[Finding]:
        """Every forbid/warn rule in force on `as_of` whose condition holds for `context`, in id
        order. per_count=False evaluates only the rules that do not depend on the GPU count,
        True only those that do, None all. Results are memoised on the values the rules read, and each
        caller gets its own list (a caller's `+=` on the memo's list warned later plans of its findings)."""
        chosen, names = self._scope(per_count)
        key: tuple[Any, ...] | None = (as_of, per_count, tuple(lookup(context, n) for n in names))
        try:
            return list(self._memo[key])
        except KeyError:
            pass
        except TypeError:  # an unhashable value in the context: evaluate without the memo
            key = None
        found = tuple(
            Finding(r.id, r.severity, render(r.message, context))
            for r in chosen
            if r.effective.covers(as_of) and holds(r.when, context, self.lists)
        )
        if key is not None:
            self._memo[key] = found
        return list(found)

    def limits(self, context: dict[str, Any], as_of: dt.date) -> list[Limit]:
        """The `limit` rules in force whose condition holds for the deployment `context`."""
        out = []
        for r in self.rules:
            effect = r.effect  # every limit rule has one (Rule checks it)
            if (
                r.severity == "limit"
                and effect is not None
                and r.effective.covers(as_of)
                and holds(r.when, context, self.lists)
            ):
                ctx = {**context, "effect": {"limit": effect.limit, "value": effect.value}}
                out.append(Limit(r.id, effect.limit, effect.value, render(r.message, ctx)))
        return out

    def record(self, rule: Rule, as_of: dt.date) -> dict[str, Any]:
        """Everything about one rule, for `advisor rules show` and scripts."""
        used = sorted(set(list_refs(rule.when)))
        return {
            "id": rule.id,
            "name": rule.name,
            "title": rule.title,
            "severity": rule.severity,
            "effective": {
                "from": rule.effective.from_.isoformat() if rule.effective.from_ else None,
                "until": rule.effective.until.isoformat() if rule.effective.until else None,
            },
            "in_force": rule.effective.covers(as_of),
            "as_of": as_of.isoformat(),
            "file": self.origin.get(rule.id),
            "when": as_written(rule.when),
            "condition": describe(rule.when, self.lists),
            "effect": rule.effect.model_dump() if rule.effect else None,
            "message": rule.message,
            "why": " ".join(rule.why.split()),
            "example": rule.example.text if isinstance(rule.example, RuleExample) else rule.example,
            "source": {
                k: v
                for k, v in rule.source.model_dump(mode="json").items()
                if v is not None or k not in ("document", "kind", "by", "date")
            },
            "lists": {name: self.lists[name] for name in used},
        }

    def listing(self, as_of: dt.date) -> list[dict[str, Any]]:
        return [
            {
                "id": r.id,
                "name": r.name,
                "severity": r.severity,
                "title": r.title,
                "in_force": r.effective.covers(as_of),
                "effective": r.effective.text(),
                "file": self.origin.get(r.id),
                "source": r.source.cite,
            }
            for r in self.rules
        ]


# ------------------------------------------------------------------------------ loading


def _clean(loc: Sequence[int | str]) -> tuple[int | str, ...]:
    """An error location without pydantic's union tags (the condition kinds, validator names)."""
    return clean_loc([p for p in loc if p not in TAGS])


def _phrase(err: ErrorDetails, name: str, rid: str | None) -> InputError:
    """One pydantic error of a rules file as a sentence naming the file, the rule and the field."""
    loc = _clean(err["loc"])
    where = loc_text(loc)
    msg = describe_error(err)
    if rid is None:
        return InputError(f"{name}: field `{where}`: {msg}", file=name, field=where)
    if err["type"] == "extra_forbidden":
        msg = f"unknown field{suggest(str(loc[-1]), Rule.model_fields)} (allowed: {', '.join(Rule.model_fields)})"
    at = f", field `{where}`" if where else ""
    return InputError(f"{name}: rule {rid}{at}: {msg}", file=name, field=f"{rid}.{where}" if where else rid)


def _read_file(doc: Any, name: str) -> tuple[RuleFile, list[InputError], bool]:
    """(the valid part of a rules document, every mistake in it, whether its top level -- `lists:`
    and the rest -- is valid). Only a document that is not a mapping at all stops the reading."""
    if not isinstance(doc, dict):
        raise InputError(f"{name}: a rules file is a mapping with `rules:` (and optional `lists:`)", file=name)
    errors: list[InputError] = []
    rules: list[Rule] = []
    raw_rules = doc.get("rules", [])
    if isinstance(raw_rules, list):
        for i, raw in enumerate(raw_rules):
            rid = raw.get("id", f"rules[{i}]") if isinstance(raw, dict) else f"rules[{i}]"
            try:
                rules.append(Rule.model_validate(raw))
            except ValidationError as exc:
                errors += [_phrase(err, name, str(rid)) for err in distinct_errors(exc.errors(), _clean)]
    rest = {k: v for k, v in doc.items() if k != "rules" or not isinstance(v, list)}
    try:
        parsed = RuleFile.model_validate(rest)
    except ValidationError as exc:
        errors += [_phrase(err, name, None) for err in distinct_errors(exc.errors(), _clean)]
        return RuleFile(rules=rules), errors, False
    return parsed.model_copy(update={"rules": rules}), errors, True


def _validate_file(doc: Any, name: str) -> RuleFile:
    """A rules document as a RuleFile; every mistake in it is reported at once (InputError.errors)."""
    parsed, errors, _ = _read_file(doc, name)
    if errors:
        raise InputError.many(errors)
    return parsed


def _builtin_files(paths: list[Path]) -> list[tuple[str, RuleFile | None]]:
    """The shipped rules files, parsed and validated once (data/compiled.py)."""
    from advisor.data.compiled import compiled

    def build() -> list[tuple[str, RuleFile | None]]:
        return [
            (f"rules/{p.name}", _validate_file(load_yaml_file(p, "rules file", shipped=True), f"rules/{p.name}"))
            for p in paths
        ]

    def stored(value: Any) -> list[tuple[str, RuleFile | None]]:
        if not (
            type(value) is list
            and all(
                type(f) is tuple and len(f) == 2 and type(f[0]) is str and isinstance(f[1], RuleFile) for f in value
            )
        ):
            raise ValueError("not compiled rules")
        return value

    return compiled("rules", paths, build, stored)


def load_rules(extra: list[str | Path] | None = None) -> RuleSet:
    """The built-in rules plus an organisation's own files (`--rules FILE`). Every mistake found,
    in every file, is reported at once."""
    builtin = sorted(data_dir("rules").glob("*.yaml"))
    parsed_files = _builtin_files(builtin)
    parsed_files += [(str(p), None) for p in (extra or [])]
    rules: list[Rule] = []
    lists: dict[str, list[Any]] = {}
    origin: dict[str, str] = {}
    errors: list[InputError] = []
    unlisted: set[str] = set()  # files whose `lists:` could not be read: their list references go unchecked
    for name, parsed in parsed_files:
        if parsed is None:  # a user's file: read defensively every time
            try:
                parsed, found, lists_ok = _read_file(load_yaml_file(name, "rules file"), name)
            except InputError as exc:
                errors += exc.errors
                continue
            errors += found
            if not lists_ok:
                unlisted.add(name)
        for key, values in parsed.lists.items():
            if key in lists and lists[key] != values:
                errors.append(
                    InputError(
                        f"{name}: list {key!r} is already defined differently in another rules file",
                        file=name,
                        field=f"lists.{key}",
                    )
                )
                continue
            lists[key] = values
        for rule in parsed.rules:
            if rule.id in origin:
                errors.append(
                    InputError(
                        f"{name}: rule {rule.id} is already defined in {origin[rule.id]}", file=name, field=rule.id
                    )
                )
                continue
            origin[rule.id] = name
            rules.append(rule)
        if len(rules) > MAX_RULES:
            errors.append(
                InputError(
                    f"{name}: more than {MAX_RULES:,} rules in all; the limit is {MAX_RULES:,} "
                    "(every option of every job is checked against each; see docs/limits.md)",
                    file=name,
                )
            )
            break
    for rule in rules:
        for list_name in list_refs(rule.when):
            if list_name not in lists and not unlisted:
                errors.append(
                    InputError(
                        f"{origin[rule.id]}: rule {rule.id} refers to list {list_name!r}, which no rules file defines",
                        file=origin[rule.id],
                        field=rule.id,
                    )
                )
    if errors:
        raise InputError.many(errors)
    rules.sort(key=lambda r: r.id)
    return RuleSet(rules=rules, lists=lists, origin=origin)


def gpu_context(gpu: Any) -> dict[str, Any]:
    """The flat view of a catalog GPU that rule conditions and messages see as `gpu.*`."""
    ic = gpu.interconnect
    return {
        "id": gpu.id,
        "name": gpu.name,
        "vendor": gpu.vendor,
        "brand": gpu.brand,
        "product_class": gpu.product_class,
        "form_factor": gpu.form_factor,
        "memory_gb": gpu.memory_gb.value,
        "memory_bandwidth_gbps": gpu.memory_bandwidth_gbps.value,
        "tdp_w": gpu.tdp_w.value,
        "tpp": gpu.tpp.value,
        "performance_density": gpu.performance_density.value,
        "link": ic.link,
        "link_gbps": ic.link_gbps.value,
        "p2p": ic.p2p.value,
        "cooling": gpu.cooling.value if getattr(gpu, "cooling", None) else None,
        "markets": tuple(gpu.markets.value) if getattr(gpu, "markets", None) and gpu.markets.value else None,
    }


def deployment_context(deployment: Any) -> dict[str, Any]:
    """`deployment.*` as rules see it (a workload's Deployment)."""
    return {
        "context": deployment.context,
        "region": deployment.region,
        "ownership": deployment.ownership,
        "power_limit_kw": deployment.power_limit_kw,
        "liquid_cooling": bool(getattr(deployment, "liquid_cooling", False)),
    }
