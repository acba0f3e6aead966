"""What a rules file holds, as typed models: a rule (id, title, severity, effective dates, a
condition, a message, why it exists, a runnable example and its source) and the file (rules and
named lists). Field names a rule reads are checked here: `gpu.brnad` is refused, naming the rule."""

import datetime as dt
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from advisor.data.conditions import (
    PLACEHOLDER,
    AnyCondition,
    Condition,
    condition_fields,
)
from advisor.errors import suggest
from advisor.inputs.strict import Strict

# The names a condition or a message may read. `gpu.*` is a catalog GPU (gpu_context);
# `deployment.*` the workload's deployment; `offer.*` one way of getting the GPU (bought, or
# rented, in which case it runs in the provider's building: site cloud); `job.*` the job class,
# and, per candidate GPU count, `job.gpu_count` and `job.needs_tensor_parallel` (the estimate's
# layout for that count).
FIELDS = {
    "gpu": (
        "id",
        "name",
        "vendor",
        "brand",
        "product_class",
        "form_factor",
        "memory_gb",
        "memory_bandwidth_gbps",
        "tdp_w",
        "tpp",
        "performance_density",
        "link",
        "link_gbps",
        "p2p",
        "cooling",
        "markets",
    ),
    "deployment": ("context", "region", "ownership", "power_limit_kw", "liquid_cooling"),
    "offer": ("ownership", "site"),
    "job": ("kind", "precision", "params", "gpu_count", "needs_tensor_parallel"),
}
PER_COUNT_FIELDS = frozenset({"job.gpu_count", "job.needs_tensor_parallel"})
EFFECT_FIELDS = ("effect.limit", "effect.value")
KNOWN_FIELDS = frozenset(f"{ns}.{name}" for ns, names in FIELDS.items() for name in names)


class RuleSource(Strict):
    """Where a rule comes from: a URL, a document reference (an internal policy, a contract), or a
    quote (`kind: quote, by: ..., date: ...`, e.g. an emailed statement)."""

    title: str
    url: str | None = Field(default=None, pattern=r"^https?://")
    document: str | None = None
    kind: Literal["url", "document", "quote"] | None = None
    by: str | None = None
    date: dt.date | None = None
    clause: str | None = None
    also: list[str] = []

    @model_validator(mode="after")
    def _cited(self) -> "RuleSource":
        if self.kind == "quote":
            if not self.by or self.date is None:
                raise ValueError("a quote names who said it and when: {kind: quote, by: NAME, date: YYYY-MM-DD}")
        elif self.url is None and self.document is None:
            raise ValueError(
                "a source is a URL (url: https://...), a document reference (document: "
                "'IT policy 12, section 3'), or a quote ({kind: quote, by: NAME, date: YYYY-MM-DD})"
            )
        return self

    @property
    def cite(self) -> str:
        """The source in one line: its URL, the document, or who said it and when."""
        if self.url:
            return self.url
        if self.document:
            return self.document
        return f"quote from {self.by}, {self.date}"


class Effective(Strict):
    """When a rule is in force: from a day (inclusive) until a day (exclusive); either may be open."""

    from_: dt.date | None = Field(default=None, alias="from")
    until: dt.date | None = None

    model_config = ConfigDict(populate_by_name=True)

    def covers(self, day: dt.date) -> bool:
        return (self.from_ is None or day >= self.from_) and (self.until is None or day < self.until)

    def text(self) -> str:
        if self.from_ and self.until:
            return f"from {self.from_} until {self.until} (exclusive)"
        if self.from_:
            return f"from {self.from_}"
        return f"until {self.until} (exclusive)" if self.until else "always"


class Effect(Strict):
    """What a `limit` rule sets: a bound the optimizer enforces (power_kw: kW of owned hardware)."""

    limit: Literal["power_kw"]
    value: float = Field(gt=0)


class ExampleExpect(Strict):
    """What a rule's example shows: the GPUs the rule removes from the plan (cited in `rejected`),
    the GPUs it warns about (a plan warning, or a note beside another rule's exclusion), that it
    sets the deployment's limit, or -- for an example given as a rule context -- that it fires."""

    rejects: list[str] = []
    warns: list[str] = []
    limits: bool = False
    fires: bool | None = None


class RuleExample(Strict):
    """A runnable example (tests/test_rules.py runs every built-in one): a workload to plan, or,
    when no catalog part shows the rule, a rule context (`gpu.id` names the catalog GPU whose
    facts are the base, the other `gpu` keys override them) to evaluate."""

    text: str
    workload: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    expect: ExampleExpect

    @model_validator(mode="after")
    def _one_subject(self) -> "RuleExample":
        if (self.workload is None) == (self.context is None):
            raise ValueError("an example gives either `workload` (planned) or `context` (evaluated), not both")
        return self


class Rule(Strict):
    id: str = Field(pattern=r"^[A-Z]{2,5}[0-9]{3}$")
    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    title: str
    severity: Literal["forbid", "warn", "limit"]
    effective: Effective = Effective.model_construct()  # (the defaults: no validator built at import)
    when: Condition
    effect: Effect | None = None
    message: str
    why: str
    example: RuleExample | str | None = None
    source: RuleSource

    @field_validator("when")
    @classmethod
    def _known_fields(cls, v: AnyCondition) -> AnyCondition:
        for name in sorted(set(condition_fields(v))):
            _check_name(name, KNOWN_FIELDS)
        return v

    @field_validator("message")
    @classmethod
    def _known_placeholders(cls, v: str) -> str:
        for name in sorted(set(PLACEHOLDER.findall(v))):
            _check_name(name, KNOWN_FIELDS | set(EFFECT_FIELDS))
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "Rule":
        read = set(condition_fields(self.when))
        if self.severity == "limit":
            if self.effect is None:
                raise ValueError("a `limit` rule needs `effect: {limit: power_kw, value: N}`")
            outside = sorted(f for f in read if not f.startswith("deployment."))
            if outside:
                raise ValueError(
                    f"a `limit` rule applies to the whole deployment, so its condition may read "
                    f"only deployment.* fields, not {', '.join(outside)}"
                )
        elif self.effect is not None:
            raise ValueError("`effect` belongs to rules of severity `limit`")
        if not self.effect:
            for name in sorted(set(PLACEHOLDER.findall(self.message)) & set(EFFECT_FIELDS)):
                _check_name(name, KNOWN_FIELDS)
        return self

    @property
    def per_count(self) -> bool:
        """Whether the rule reads (in its condition or its message) a fact that depends on the
        candidate's GPU count."""
        read = set(condition_fields(self.when)) | set(PLACEHOLDER.findall(self.message))
        return bool(read & PER_COUNT_FIELDS)


class RuleFile(Strict):
    schema_version: int = 1
    lists: dict[str, list[Any]] = {}
    rules: list[Rule] = []


def _check_name(name: str, allowed: Iterable[str]) -> None:
    """Refuse a field name a rule may not read, suggesting the nearest one."""
    known = sorted(allowed)
    if name not in known:
        raise ValueError(f"unknown field {name!r}{suggest(name, known)}; known fields: {', '.join(known)}")
