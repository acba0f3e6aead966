"""The workload file: what the user wants trained, where, by when, and within what limits.

Pydantic models of DESIGN.md §5 are the schema (`advisor schema` prints it). Units are strict
("10B" tokens, "7d", "3.6kW"), unknown fields are errors, and the shorthand in the user's own
words is accepted: `model`/`tokens`/`precision`/`deadline`/`kind` at the top level are one job,
`gpus: 8` means `gpus: {count: 8}`, `deployment: datacenter` means `{context: datacenter}`.
"""
from __future__ import annotations

import typing
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from advisor.errors import KINDS, InputError, describe, first_error, loc_text, show
from advisor.inputs import units
from advisor.inputs.loader import load_yaml_file
from advisor.inputs.regions import check_region

MAX_TOKENS = 1e15          # 1,000T: far beyond any training run published so far
MAX_GPUS = 100_000         # the largest clusters reported hold about this many GPUs
MAX_PARAMS = 1e14          # 100T parameters
MAX_JOBS = 5_000
MAX_BUDGET_USD = 1e12    # a trillion dollars
JOB_SHORTHAND = ("model", "tokens", "precision", "deadline", "kind", "micro_batch", "checkpointing",
                 "global_batch_tokens", "lora_rank", "optimizer", "seq_len", "goodput")


def _bounded(parse, upper: float, what: str):
    def check(value):
        x = parse(value, what)
        if x > upper:
            raise ValueError(f"{what} of {x:.3g} is beyond the {upper:.3g} this tool accepts")
        return x
    return check


Count = Annotated[float, BeforeValidator(_bounded(units.parse_count, MAX_TOKENS, "a count")),
                  WithJsonSchema({"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                            {"type": "string", "pattern": r"^[0-9.]+\s*[KMBT]?$"}],
                                  "description": "a count: a number or 124M, 10B, 1T"})]
Params = Annotated[float, BeforeValidator(_bounded(units.parse_count, MAX_PARAMS, "a parameter count")),
                   WithJsonSchema({"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                             {"type": "string", "pattern": r"^[0-9.]+\s*[KMBT]?$"}],
                                   "description": "parameters: a number or 124M, 7B"})]
Hours = Annotated[float, BeforeValidator(_bounded(units.parse_duration_hours, 24 * 365 * 20, "a duration")),
                  WithJsonSchema({"type": "string", "pattern": r"^[0-9.]+\s*[hdw]$",
                                  "description": "a duration: 36h, 7d or 2w"})]
PowerKW = Annotated[float, BeforeValidator(_bounded(units.parse_power_kw, 1e6, "a power")),
                    WithJsonSchema({"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                              {"type": "string", "pattern": r"^[0-9.]+\s*(W|kW|MW)$"}],
                                    "description": "power in kW: 3.6, 3.6kW or 1500W"})]


def _usd(value, what: str) -> float:
    """30000, '30K' or '$30K'."""
    return units.parse_count(value.replace("$", "") if isinstance(value, str) else value, what)


USD = Annotated[float, BeforeValidator(_bounded(_usd, MAX_BUDGET_USD, "an amount in USD")),
                WithJsonSchema({"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string"}],
                                "description": "US dollars: 30000 or 30K"})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value, info):
        """YAML reads `yes`, `on` and `true` as booleans, which pydantic would take for the number 1."""
        if isinstance(value, bool):
            ann = cls.model_fields[info.field_name].annotation
            types = set(typing.get_args(ann)) | {ann}
            if bool not in types and types & {int, float}:
                raise ValueError("must be a number, not true or false")
        return value


class ModelShape(_Strict):
    """A model given by its size (and, better, its shape) instead of a preset name."""

    params: Params = Field(description="parameter count, e.g. 124M or 7B")
    layers: int | None = Field(None, gt=0, le=1000)
    hidden: int | None = Field(None, gt=0, le=200_000)
    heads: int | None = Field(None, gt=0, le=2048)
    kv_heads: int | None = Field(None, gt=0, le=2048)
    ffn: int | None = Field(None, gt=0, le=1_000_000)
    vocab: int | None = Field(None, gt=0, le=10_000_000)
    seq_len: int | None = Field(None, gt=0, le=10_000_000)


class Job(_Strict):
    name: str | None = Field(None, min_length=1, max_length=200)
    kind: Literal["pretrain", "finetune", "lora", "qlora"] = "pretrain"
    model: str | ModelShape = Field(description="a preset id (advisor models) or {params: 124M, layers: 12, ...}")
    tokens: Count = Field(description="token budget: 10B")
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    deadline: Hours | None = Field(None, description="wall-clock limit: 36h, 7d, 2w")
    micro_batch: int | None = Field(None, gt=0, le=4096)
    checkpointing: bool | None = Field(None, description="activation checkpointing; chosen automatically when absent")
    global_batch_tokens: Count | None = None
    seq_len: int | None = Field(None, gt=0, le=10_000_000, description="overrides the preset's sequence length")
    lora_rank: int = Field(16, gt=0, le=4096)
    optimizer: Literal["adamw", "adamw-8bit"] = "adamw"
    goodput: float | None = Field(None, gt=0, le=1, description="share of wall time spent training (failures, "
                                  "restarts, checkpoints, evaluation); by default from GPU count and job length")
    repeat: int = Field(1, gt=0, le=MAX_JOBS, description="this many identical copies of the job")

    @field_validator("tokens")
    @classmethod
    def _tokens_bound(cls, v):
        if v < 1e3:
            raise ValueError(f"a token budget of {v:.0f} is too small to plan hardware for; write e.g. 10B")
        return v


class RequestClass(_Strict):
    """One kind of request in a serving mix: prompt and answer lengths, share of requests."""
    name: str | None = Field(None, min_length=1, max_length=200)
    input_tokens: int = Field(gt=0, le=10_000_000, description="mean prompt length in tokens")
    output_tokens: int = Field(gt=0, le=10_000_000, description="mean generated tokens per request")
    share: float = Field(gt=0, le=1, description="share of all requests (the shares sum to 1)")


class Traffic(_Strict):
    """Requests a serving job must sustain: one request size, or a `mix` of request classes."""
    requests_per_s: float = Field(gt=0, le=1e7, description="average requests per second over the day")
    input_tokens: int | None = Field(None, gt=0, le=10_000_000, description="mean prompt length (without mix)")
    output_tokens: int | None = Field(None, gt=0, le=10_000_000, description="mean output length (without mix)")
    mix: list[RequestClass] | None = Field(None, min_length=1, max_length=50)
    peak_factor: float = Field(1.0, ge=1, le=100, description="daily profile: peak rate / average rate; "
                               "capacity is sized for the peak")

    @model_validator(mode="after")
    def _one_shape(self):
        sizes = self.input_tokens is not None or self.output_tokens is not None
        if self.mix is not None and sizes:
            raise ValueError("give either input_tokens and output_tokens, or a mix of request classes, not both")
        if self.mix is None and (self.input_tokens is None or self.output_tokens is None):
            raise ValueError("give input_tokens and output_tokens (mean request size), or a mix: "
                             "[{input_tokens, output_tokens, share}, ...]")
        if self.mix is not None and abs(sum(c.share for c in self.mix) - 1.0) > 1e-3:
            raise ValueError(f"the shares of the mix sum to {sum(c.share for c in self.mix):.4g}; they must sum to 1")
        return self

    def classes(self) -> list[tuple[str, int, int, float]]:
        """(name, input tokens, output tokens, peak requests/s) per request class."""
        peak = self.requests_per_s * self.peak_factor
        if self.mix is None:
            return [("all", int(self.input_tokens or 0), int(self.output_tokens or 0), peak)]
        return [(c.name or f"{c.input_tokens}/{c.output_tokens}", c.input_tokens, c.output_tokens, peak * c.share)
                for c in self.mix]


class Slo(_Strict):
    """Latency limits at a percentile of requests (none: the offline peak rate)."""
    ttft_ms: float | None = Field(None, gt=0, le=1e7, description="time to first token limit, ms")
    tpot_ms: float | None = Field(None, gt=0, le=1e7, description="time per output token limit, ms")
    percentile: float = Field(99, ge=50, lt=100)


class ServeJob(_Strict):
    """A model served to traffic under a latency SLO, for the horizon (or `months`)."""
    name: str | None = Field(None, min_length=1, max_length=200)
    kind: Literal["serve"]
    model: str = Field(description="a serving preset (advisor estimate --kind serve --help lists them)")
    precision: Literal["bf16", "fp16", "fp8", "fp4", "int8", "int4"] = "bf16"
    traffic: Traffic
    slo: Slo = Slo()
    months: float | None = Field(None, gt=0, le=240, description="months of serving [the horizon]")
    off_peak_training_hours: float = Field(0, ge=0, le=24, description="hours a day (low traffic) in which "
                                           "training jobs may use this job's owned GPUs [0: never]")

    @property
    def repeat(self) -> int:
        return 1


def _job_kind(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return "serve" if kind == "serve" else "train"


AnyJob = Annotated[Union[Annotated[Job, Tag("train")], Annotated[ServeJob, Tag("serve")]], Discriminator(_job_kind)]


class Deployment(_Strict):
    context: Literal["office", "datacenter", "cloud"] = Field(description="where the GPUs run")
    region: str = Field("US", description="ISO 3166 alpha-2 country code; drives export-control rules")
    ownership: Literal["buy", "rent", "any"] = "any"
    power_limit_kw: PowerKW | None = None
    electricity_usd_per_kwh: float | None = Field(None, gt=0, le=5)
    pue: float | None = Field(None, ge=1.0, le=3.0)
    hosting_usd_per_kw_month: float | None = Field(None, ge=0, le=10_000)
    horizon_months: float = Field(36, gt=0, le=240)
    # issue 14 (economics): rental kinds allowed, owned-GPU utilization, facility, storage
    rent_kinds: list[Literal["on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block"]] = Field(
        ["on_demand"], min_length=1, description="rental kinds a plan may use [on_demand]")
    utilization: float | None = Field(None, gt=0, le=1, description=(
        "share of the horizon owned GPUs run (energy is costed for it); default: the planned jobs' own hours"))
    liquid_cooling: bool = Field(False, description="the facility offers liquid cooling (needed by liquid-only systems)")
    storage_tb: float | None = Field(None, ge=0, le=1e7, description="training storage to cost, TB [none]")

    @property
    def site(self) -> str:
        """Whose building the owned hardware's costs follow: the cloud is rented hardware in a
        datacenter, so its rates are the datacenter's. The one place this is decided."""
        return "datacenter" if self.context == "cloud" else self.context

    @property
    def ownerships(self) -> list[str]:
        """The ownerships a plan may use: the cloud rents; otherwise as the workload says."""
        if self.context == "cloud":
            return ["rent"]
        return ["buy", "rent"] if self.ownership == "any" else [self.ownership]

    @property
    def renting_only(self) -> bool:
        return self.ownerships == ["rent"]

    def moved_to(self, **changes) -> Deployment:
        """This deployment with another context or ownership (a diagnosis lever); moving to the
        cloud turns `buy` into `any`, since the cloud only rents."""
        d = self.model_copy(update=changes)
        return d.model_copy(update={"ownership": "any"}) if d.context == "cloud" and d.ownership == "buy" else d

    @model_validator(mode="after")
    def _cloud_is_rented(self):
        if self.context == "cloud" and self.ownership == "buy":
            raise ValueError("context cloud means renting GPUs; to buy GPUs and host them, use context: datacenter")
        return self

    @field_validator("region", mode="before")
    @classmethod
    def _region(cls, v):
        return check_region(v)


class Finance(_Strict):
    """How money is valued over time (issue 14): the buyer's discount rate (cost of capital) and how
    much of the horizon owned GPUs are used."""

    discount_rate: float | None = Field(None, ge=0, le=1, description=(
        "cost of capital per year as a fraction (0.10 = 10%); default: the catalog's sourced economics.cost_of_capital"))
    utilization: float | None = Field(None, gt=0, le=1, description="as deployment.utilization")


class GpuSelection(_Strict):
    count: int | None = Field(None, gt=0, le=MAX_GPUS, description="exactly this many GPUs in the plan")
    min: int | None = Field(None, gt=0, le=MAX_GPUS)
    max: int | None = Field(None, gt=0, le=MAX_GPUS)
    allow: list[str] | None = Field(None, description="candidate GPU ids; all catalog GPUs when absent")
    deny: list[str] = []
    stock: dict[str, int] | None = Field(None, description="most units of a GPU type that can be bought or rented")

    @field_validator("stock")
    @classmethod
    def _stock(cls, v):
        for gid, n in (v or {}).items():
            if n < 0 or n > MAX_GPUS:
                raise ValueError(f"stock of {gid} must be between 0 and {MAX_GPUS}, got {n}")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if self.count is not None and (self.min is not None or self.max is not None):
            raise ValueError("give either count, or min and/or max, not both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        if self.allow is not None and not self.allow:
            raise ValueError("allow is empty, so no GPU could be chosen; remove it to consider every GPU")
        return self

    @property
    def lower(self) -> int | None:
        return self.count if self.count is not None else self.min

    @property
    def upper(self) -> int | None:
        return self.count if self.count is not None else self.max


class Workload(_Strict):
    """A workload file, after the shorthand has been expanded."""

    name: str | None = Field(None, max_length=200)
    deployment: Deployment
    jobs: list[AnyJob] = Field(min_length=1, max_length=MAX_JOBS)
    gpus: GpuSelection = GpuSelection()
    budget_usd: USD | None = None
    allow_mixed: bool = Field(False, description="let one job's tokens be split across GPU types")
    confidence: float = Field(0.8, ge=0.5, le=0.99, description=(
        "every deadline must hold at this quantile of the job's time (the estimator's measured error, "
        "catalog/uncertainty.yaml): 0.5 plans on the median, 0.9 on the time 9 runs in 10 beat [0.8]"))
    finance: Finance = Finance()

    @model_validator(mode="before")
    @classmethod
    def _expand_shorthand(cls, data: Any):
        if not isinstance(data, dict):
            return data
        data = dict(data)
        top = {k: data.pop(k) for k in JOB_SHORTHAND if k in data}
        if top:
            if "jobs" in data:
                raise ValueError(f"write the job either at the top level ({', '.join(top)}) or under "
                                 "jobs:, not both")
            data["jobs"] = [top]
        if isinstance(data.get("gpus"), (int, float)) and not isinstance(data.get("gpus"), bool):
            data["gpus"] = {"count": data["gpus"]}
        if isinstance(data.get("deployment"), str):
            data["deployment"] = {"context": data["deployment"]}
        return data

    @model_validator(mode="after")
    def _job_names(self):
        if sum(j.repeat for j in self.jobs) > MAX_JOBS:
            raise ValueError(f"at most {MAX_JOBS:,} jobs (counting repeat) in one workload")
        names = [j.name for j in self.jobs if j.name]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"job names must be unique; repeated: {', '.join(dup)}")
        return self

    def job_name(self, index: int) -> str:
        job = self.jobs[index]
        return job.name or ("job" if len(self.jobs) == 1 else f"job-{index + 1}")


# ------------------------------------------------------------------ errors users can act on

_UNION_TAGS = ("str", "ModelShape", "train", "serve")
# What a field holds, for a value of the wrong kind ("`gpus` must be ..., got a list").
_SHAPES = {
    "deployment": "office, datacenter or cloud, or a mapping such as {context: office, region: US}",
    "gpus": "a number of GPUs (gpus: 8) or a mapping such as {count: 8, allow: [h100-sxm]}",
    "jobs": "a list of jobs, each a mapping such as {model: gpt2-124m, tokens: 10B}",
    "job": "a mapping such as {model: gpt2-124m, tokens: 10B}",
    "model": "a preset name such as gpt2-124m or a mapping such as {params: 7B, layers: 32, hidden: 4096}",
    "allow": "a list of GPU ids such as [h100-sxm, a100-80gb-sxm]",
    "deny": "a list of GPU ids such as [rtx-4090]",
}
# Why an upper bound is where it is.
_LARGEST_CLUSTERS = f"the largest clusters reported hold about {MAX_GPUS:,} GPUs"
_REASONS = {"count": _LARGEST_CLUSTERS, "min": _LARGEST_CLUSTERS, "max": _LARGEST_CLUSTERS,
            "horizon_months": "owned hardware is costed over at most 20 years",
            "jobs": f"a workload holds at most {MAX_JOBS:,} jobs",
            "confidence": "a quantile between 0.5 (the median job time) and 0.99; the default is 0.8"}


def _clean_loc(loc) -> tuple:
    """Drop pydantic's union/validator tags ('str', 'ModelShape', 'function-after[...]')."""
    return tuple(p for p in loc if isinstance(p, int) or not (
        p in _UNION_TAGS or str(p).startswith(("function-", "lax-"))))


def _fields_at(model, loc) -> list[str]:
    """Field names valid at `loc` (for 'did you mean' on an unknown field)."""
    for part in loc[:-1]:
        if part in ("jobs", "train", "serve") and model in (Workload, Job):  # the union's tag: which kind
            model = ServeJob if part == "serve" else Job
        if isinstance(part, int) or part not in _clean_loc((part,)) or part in ("jobs", "train", "serve"):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        ann = field.annotation
        found = None
        for candidate in getattr(ann, "__args__", ()) + (ann,):
            inner = getattr(candidate, "__args__", ())
            for c in (candidate,) + inner:
                if isinstance(c, type) and issubclass(c, BaseModel):
                    found = c
        if found is None:
            return []
        model = found
    names = list(model.model_fields)
    if model is Workload:
        names += list(JOB_SHORTHAND)
    return names


def _format_error(err: dict, name: str, mapped=lambda loc: loc) -> InputError:
    from advisor.errors import suggest

    real = _clean_loc(err["loc"])
    loc = mapped(real)
    where = loc_text(loc)
    given = err.get("input")
    if err["type"] == "extra_forbidden":
        field = str(loc[-1])
        valid = _fields_at(Workload, err["loc"])
        return InputError(f"{name}: unknown field `{where}`{suggest(field, valid)}. "
                          f"Allowed here: {', '.join(valid) or 'none'}.", file=name, field=where)
    if err["type"] == "missing":
        what = ("; give the job as model: and tokens: at the top level, or a list under jobs:"
                if where == "jobs" else "")
        return InputError(f"{name}: `{where}` is required but missing{what}.", file=name, field=where)
    if not where:
        return InputError(f"{name}: {describe(err)}.", file=name)
    last = real[-1] if not isinstance(real[-1], int) else ("job" if real[:-1] == ("jobs",) else None)
    if err["type"] in KINDS and last in _SHAPES:
        return InputError(f"{name}: `{where}` must be {_SHAPES[last]}, got {show(given)}.", file=name, field=where)
    if err["type"] == "literal_error" and loc[0] == "jobs" and last == "kind":
        return InputError(f"{name}: `{where}` must be pretrain, finetune, lora or serve, got {show(given)}.",
                          file=name, field=where)
    bound = err["type"].startswith(("less_than", "too_long"))
    return InputError(f"{name}: `{where}`: {describe(err, _REASONS.get(last) if bound else None)}.",
                      file=name, field=where)


def _as_written(data: dict):
    """A function mapping a location in the expanded document back to where the user wrote it:
    `jobs[0].kind` is `kind` when the job was written at the top level, `gpus.count` is `gpus`
    for `gpus: 8`, `deployment.context` is `deployment` for `deployment: office`."""
    top_job = "jobs" not in data and any(k in data for k in JOB_SHORTHAND)
    gpus_scalar = isinstance(data.get("gpus"), (int, float)) and not isinstance(data.get("gpus"), bool)
    deployment_scalar = isinstance(data.get("deployment"), str)

    def mapped(loc: tuple) -> tuple:
        if top_job and loc[:2] == ("jobs", 0) and len(loc) > 2:
            return loc[2:]
        if gpus_scalar and loc == ("gpus", "count"):
            return ("gpus",)
        if deployment_scalar and loc == ("deployment", "context"):
            return ("deployment",)
        return loc
    return mapped


def _distinct_errors(errors: list[dict]) -> list[dict]:
    """One error per location, in file order; a union branch's type error (`model` is neither text
    nor a mapping) gives way to the other branch's errors deeper inside the same value."""
    groups: dict[tuple, list[dict]] = {}
    for err in errors:
        groups.setdefault(_clean_loc(err["loc"]), []).append(err)
    import difflib

    typos = {loc for loc, errs in groups.items() if any(e["type"] == "extra_forbidden" for e in errs)}
    out = []
    for loc, errs in groups.items():
        deeper = any(len(other) > len(loc) and other[:len(loc)] == loc for other in groups)
        if deeper and all(e["type"] in KINDS for e in errs):
            continue
        if all(e["type"] == "missing" for e in errs) and any(   # `tokenz` given: `tokens` missing says nothing new
                t[:-1] == loc[:-1] and difflib.get_close_matches(str(t[-1]).lower(), [str(loc[-1])], n=1, cutoff=0.6)
                for t in typos):
            continue
        out.append(first_error(errs, _clean_loc))
    return sorted(out, key=lambda e: e["type"] != "extra_forbidden")


def parse_workload(data: Any, name: str = "<workload>") -> Workload:
    """Validate a workload document (already parsed YAML or a dict from Python). Every mistake is
    reported at once (InputError.errors), each at its location as written in the file."""
    if data is None:
        raise InputError(f"{name}: the workload file is empty; it needs at least deployment, model and tokens.",
                         file=name)
    if not isinstance(data, dict):
        raise InputError(f"{name}: a workload file is a mapping (deployment:, jobs: or model:/tokens:, ...), "
                         f"got {show(data)}.", file=name)
    try:
        return Workload.model_validate(data)
    except ValidationError as exc:
        mapped = _as_written(data)
        found = [_format_error(err, name, mapped) for err in _distinct_errors(exc.errors())]
        raise InputError.many(found) from None


def load_workload(path: str | Path) -> Workload:
    """Read and validate a workload file."""
    return parse_workload(load_yaml_file(path, "workload file"), "<stdin>" if str(path) == "-" else str(path))


def workload_json_schema() -> dict:
    return Workload.model_json_schema()
