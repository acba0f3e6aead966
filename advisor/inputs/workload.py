"""The workload file: what the user wants trained, where, by when, and within what limits.

Pydantic models of the workload format (README.md, A workload file) are the schema (`advisor schema` prints it). Units are strict
("10B" tokens, "7d", "3.6kW"), unknown fields are errors, and the shorthand in the user's own
words is accepted: `model`/`tokens`/`precision`/`deadline`/`kind` at the top level are one job,
`gpus: 8` means `gpus: {count: 8}`, `deployment: datacenter` means `{context: datacenter}`.
"""

import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from advisor.errors import InputError, show
from advisor.inputs.deployment import Deployment, Finance, GpuSelection
from advisor.inputs.jobs import JOB_SHORTHAND, SOFTWARE_HELP, AnyJob, Software
from advisor.inputs.known import Known, gpus_shorthand
from advisor.inputs.loader import parse_bytes, read_bytes
from advisor.inputs.phrasing import as_written, distinct_errors, format_error, located
from advisor.inputs.quantities import MAX_JOBS, USD
from advisor.inputs.strict import Written
from advisor.inputs.units import HOURS_PER_MONTH
from advisor.inputs.yaml_nodes import Marks

__all__ = [
    "MAX_JOBS",
    "DecisionBasis",
    "Workload",
    "load_workload",
    "parse_workload",
    "read_workload",
    "workload_json_schema",
]

MIN_DRAWS, MAX_DRAWS = 40, 5000  # the robustness verdict's first look is at 40 draws (explain/robustness.py)


class DecisionBasis(Written):
    """How the plan is chosen among joint draws of speed and price (docs/model.md, "Decision"):
    the lowest mean cost (expected), the lowest 80th or 90th percentile of cost (p80, p90), or the
    optimum at the point estimates (point)."""

    basis: Literal["expected", "point", "p80", "p90"] = Field(
        default="expected",
        description=(
            "expected: the plan with the lowest mean cost over the draws [expected]; p80/p90: the lowest 80th/90th "
            "percentile of cost; point: the optimum at the catalog's figures and the estimates. Deadlines hold at the "
            "workload's confidence whatever the basis"
        ),
    )
    draws: int = Field(
        default=200,
        ge=MIN_DRAWS,
        le=MAX_DRAWS,
        description=(
            "joint draws of every GPU's speed and prices the candidate plans are found on [200]; the robustness "
            "verdict uses the first of them; the plan is chosen among the candidates on 20,000 draws (docs/model.md "
            "§2.7)"
        ),
    )


class Workload(Written):
    """A workload file, after the shorthand has been expanded."""

    name: str | None = Field(default=None, max_length=200)
    deployment: Deployment
    jobs: list[AnyJob] = Field(min_length=1, max_length=MAX_JOBS)
    gpus: GpuSelection = GpuSelection.model_construct()  # (the defaults: no validator built at import)
    budget_usd: USD | None = Field(
        default=None,
        description=(
            "a cap on the cash paid over the horizon (purchases, servers, network, energy, hosting, rental; resale "
            "is not cash in hand), or on the present value with budget_basis: present_value"
        ),
    )
    budget_basis: Literal["cash", "present_value"] = Field(
        default="cash",
        description=(
            "what budget_usd caps: the nominal cash paid over the horizon [cash], or the present value the plan "
            "minimises (purchases less discounted resale, streams discounted)"
        ),
    )
    allow_mixed: bool = Field(default=False, description="let one job's tokens be split across GPU types")
    confidence: float = Field(
        default=0.8,
        ge=0.5,
        le=0.99,
        description=(
            "every deadline must hold at this quantile of the job's time (the estimator's measured error, "
            "catalog/uncertainty.yaml): 0.5 plans on the median, 0.9 on the time 9 runs in 10 beat [0.8]"
        ),
    )
    software: Software = Field(
        default="public", description=SOFTWARE_HELP + "; the default of every training job that does not state its own"
    )
    finance: Finance = Finance.model_construct()
    decision: DecisionBasis = DecisionBasis.model_construct()

    @model_validator(mode="before")
    @classmethod
    def _decision_shorthand(cls, data: Any) -> Any:
        """`decision: p80` means `decision: {basis: p80}`."""
        if isinstance(data, dict) and isinstance(data.get("decision"), str):
            data = {**data, "decision": {"basis": data["decision"]}}
        return data

    @model_validator(mode="before")
    @classmethod
    def _expand_shorthand(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        top = {k: data.pop(k) for k in JOB_SHORTHAND if k in data}
        if top:
            if "jobs" in data:
                raise ValueError(f"write the job either at the top level ({', '.join(top)}) or under jobs:, not both")
            data["jobs"] = [top]
        if isinstance(data.get("gpus"), (int, float)) and not isinstance(data.get("gpus"), bool):
            data["gpus"] = {"count": data["gpus"]}
        if isinstance(data.get("gpus"), str):  # `gpus: h100-sxm`, `gpus: "H100:8"`
            data["gpus"] = gpus_shorthand(data["gpus"])
        if isinstance(data.get("deployment"), str):
            data["deployment"] = {"context": data["deployment"]}
        return data

    @model_validator(mode="after")
    def _job_names(self) -> "Workload":
        if sum(j.repeat for j in self.jobs) > MAX_JOBS:
            raise ValueError(f"at most {MAX_JOBS:,} jobs (counting repeat) in one workload")
        names = Counter(j.name for j in self.jobs if j.name)  # (not list.count: 5,000 jobs took 1.3 s)
        dup = sorted(n for n, times in names.items() if times > 1)
        if dup:
            raise ValueError(f"job names must be unique; repeated: {', '.join(dup)}")
        return self

    def job_name(self, index: int) -> str:
        job = self.jobs[index]
        return job.name or ("job" if len(self.jobs) == 1 else f"job-{index + 1}")

    def serving_hours(self, index: int) -> float:
        """Hours a serving job runs from today: its `months`, else the whole horizon."""
        return (getattr(self.jobs[index], "months", None) or self.deployment.horizon_months) * HOURS_PER_MONTH

    def serving_ends(self) -> list[float]:
        """When each serving job ends, hours from today: a bought GPU that serves may be sold then."""
        return [self.serving_hours(i) for i, job in enumerate(self.jobs) if job.kind == "serve"]


def parse_workload(
    data: Any, name: str = "<workload>", *, known: Known | None = None, marks: Marks | None = None
) -> Workload:
    """Validate a workload document (already parsed YAML or a dict from Python). Every mistake is
    reported at once (InputError.errors), each at its location as written in the file, with its
    line and column when `marks` (from the loader) has them. With `known` (the catalog's ids), GPU
    ids and presets are checked too, and GPU names resolved (`H100-SXM`, `h200`)."""
    if data is None:
        raise InputError(
            f"{name}: the workload file is empty; it needs at least deployment, model and tokens.", file=name
        )
    if not isinstance(data, dict):
        raise InputError(
            f"{name}: a workload file is a mapping (deployment:, jobs: or model:/tokens:, ...), got {show(data)}.",
            file=name,
        )
    try:
        return Workload.model_validate(data, context={"known": known})
    except ValidationError as exc:
        mapped = as_written(data)
        found = [format_error(err, name, Workload, mapped, marks) for err in distinct_errors(exc.errors())]
        raise InputError.many(found) from None


def load_workload(path: str | Path, known: Known | None = None) -> Workload:
    """Read and validate a workload file (its GPU ids and presets too, given what the catalog knows)."""
    return read_workload(path, known)[0]


def read_workload(path: str | Path, known: Known | None = None) -> tuple[Workload, str, bytes]:
    """(the Workload, the file's name for messages, its bytes): for a memo, which quotes and hashes
    the file as read, standard input included."""
    name, raw = read_bytes(path, "workload file")
    marks: Marks = {}
    data = parse_bytes(raw, name, "workload file", marks=marks)
    return parse_workload(data, name, known=known, marks=marks), name, raw


def field_position(path: str | Path, field: str) -> tuple[int, int] | None:
    """(line, column) where a field such as `jobs[0].measured[1]` is written in the workload file, for
    an error found after reading (a check that needed the catalog); None when unreadable or unwritten."""
    try:
        name, raw = read_bytes(path, "workload file")
        marks: Marks = {}
        data = parse_bytes(raw, name, "workload file", marks=marks)
    except InputError:
        return None
    loc = tuple(int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", field))
    if isinstance(data, dict):  # `jobs[0].tokens` is `tokens` in a job written at the top level
        loc = as_written(data)(loc)
    _, line, column = located(name, loc, marks)
    return (line, column) if line is not None and column is not None else None


def workload_json_schema() -> dict[str, Any]:
    return Workload.model_json_schema()
