"""The plan (the JSON contract, advisor/contract/): `advisor plan --format json` is `Plan.to_json()`, and `advisor schema
--output plan` prints `plan_schema()`. Also its assumptions, solver record, sources and ranges."""

import json
from typing import Any, Literal

from pydantic import PrivateAttr

from advisor.contract.base import Num, Out
from advisor.contract.costs import (
    BomItem,
    BreakEvenMonths,
    CostBreakdown,
    CostBreakdownPV,
    DepreciationYear,
    PurchaseItem,
    ServerItem,
    Triple,
)
from advisor.contract.decision import Decision, Disposal, OtherOwnership
from advisor.contract.explanations import (
    Binding,
    Diagnosis,
    PlanWarning,
    Rejected,
    Sensitivity,
)
from advisor.contract.jobs import Job, ServingMix, ServingRow
from advisor.inputs.schema import DIALECT, PLAN_ID


class ResidualValue(Out):
    fraction: Num
    curve: str | None
    confidence: str
    note: str | None


class UncertaintyBasis(Out):
    source: str | None
    generated_by: str | None = None
    speed: str | None = None
    speed_rows: int | None = None
    speed_coverage_p10_p90: str | None = None
    price: str | None = None
    note: str | None = None


class Assumptions(Out):
    deployment: Literal["office", "datacenter", "cloud"]
    region: str
    ownership: Literal["buy", "rent", "any"]
    horizon_months: Num
    electricity_usd_per_kwh: Num
    pue: Num
    hosting_usd_per_kw_month: Num
    power_limit_kw: Num | None
    power_limit_rule: str | None
    discount_rate: Num
    discount_rate_source: str
    utilization: Num | None
    useful_life_years: Num
    rent_kinds: list[str]
    budget_usd: Num | None = None
    budget_basis: Literal["cash", "present_value"] = "cash"  # what budget_usd caps
    residual_value: dict[str, ResidualValue]  # GPU id -> resale assumption, for the GPUs bought
    uncertainty: UncertaintyBasis


class ExplanationSolves(Out):
    solves: int
    gap_limit: Num
    time_limit_s: Num
    approximate: bool


class Solver(Out):
    name: str | None
    reason: str | None = None
    proven_optimal: bool | None = None
    gap: Num | None = None
    gap_limit: Num
    explanations: ExplanationSolves


class Source(Out):
    id: str
    url: str | None
    as_of: str | None
    reference: str | None = None  # a rule's citation when it has no URL


class Confidence(Out):
    level: Num
    quantile: str
    message: str


class RobustAlternative(Out):
    purchase: str
    share: Num


class Robustness(Out):
    draws: int
    seed: int
    holds: int
    holds_share: Num
    alternatives: list[RobustAlternative]
    unproven_draws: int  # draws the time limit stopped with a plan not proven within the gap (that plan counted)
    reused_model: bool
    message: str


def _kept(name: str, doc: str) -> Any:
    """A plan attribute that is not a JSON key (kept in Plan._made_from)."""

    def get(self: "Plan") -> Any:
        return self._made_from.get(name)

    def set(self: "Plan", value: Any) -> None:
        self._made_from[name] = value

    return property(get, set, doc=doc)


class Plan(Out):
    """The plan, as `advisor plan --format json` prints it. A plan made by `plan()` also keeps what it was made from
    (`workload`, `catalog`, `rules`, `problem`, and `chart_data` with charts=True), so
    `advisor.memo(plan)` needs nothing else; these are attributes, not JSON keys."""

    schema_version: Literal[1]
    name: str | None  # the workload's name, if it has one
    objective: Literal["cost", "time"]
    status: Literal["optimal", "feasible", "infeasible"]
    total_cost_usd: Num | None
    cost_breakdown: CostBreakdown
    present_value_usd: Num | None
    nominal_cost_usd: Num | None
    residual_value_usd: Num | None
    cost_breakdown_pv: CostBreakdownPV | None
    purchase: list[PurchaseItem]
    servers: list[ServerItem]
    bill_of_materials: list[BomItem]
    break_even_months: list[BreakEvenMonths]
    depreciation: list[DepreciationYear]
    utilization: Num | None
    jobs: list[Job]
    serving: list[ServingRow]
    serving_mix: ServingMix | None
    rejected: list[Rejected]
    binding: list[Binding]
    sensitivity: Sensitivity
    diagnosis: list[Diagnosis]
    warnings: list[PlanWarning]
    assumptions: Assumptions
    solver: Solver
    sources: list[Source]
    as_of: str
    tool_version: str
    catalog_digest: str
    confidence: Confidence
    total_cost_usd_range: Triple | None = None  # feasible plans only
    robustness: Robustness | None = None  # feasible, cost-optimal, fully explained plans
    decision: Decision | None = None  # round 3 (docs/model.md §2.7): how the plan was chosen, what to verify
    disposal: list[Disposal] | None = None  # round 3: bought GPUs resold, when and for how much
    other_ownership: OtherOwnership | None = None  # round 3: the best plan acquiring the GPUs the other way

    _made_from: dict[str, Any] = PrivateAttr(default_factory=dict)

    def __repr__(self) -> str:
        """Short: the status, the cost and what to buy or rent (the whole plan is long)."""
        items = ", ".join(f"{i.count}x {i.gpu} ({i.ownership})" for i in self.purchase)
        money = f" ${self.total_cost_usd:,.0f}" if self.total_cost_usd is not None else ""
        return f"<Plan {self.status}{money}{': ' + items if items else ''}>"

    @property
    def feasible(self) -> bool:
        return self.status != "infeasible"

    @property
    def training_jobs(self) -> int:
        """How many training jobs the plan runs: its rows' copies added up (with allow_mixed, a job's
        shares on several rows add up to one)."""
        return round(sum(j.copies for j in self.jobs))

    def to_json(self) -> str:
        """`advisor plan --format json`: the same bytes for the same input."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    # what the plan was made from (not JSON keys): read by advisor.memo
    workload = _kept("workload", "the Workload")
    catalog = _kept("catalog", "the Catalog")
    rules = _kept("rules", "the RuleSet")
    problem = _kept("problem", "the candidates it was chosen from (solve/problem.py)")
    chart_data = _kept("chart_data", "cost-time and value points, with plan(..., charts=True)")
    workload_file = _kept("workload_file", "the workload file's path, when advisor.plan() was given one")


def plan_schema() -> dict[str, Any]:
    """The JSON Schema of a plan (`advisor schema --output plan`)."""
    doc = Plan.model_json_schema()
    return {"$schema": DIALECT, "$id": PLAN_ID, **doc, "title": "gpu-advisor plan"}
