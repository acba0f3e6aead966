"""JSON Schema of what users may write in a workload file, generated from the pydantic models.

The models describe the file after its shorthand is expanded; this adds the shorthand (a job's
fields at the top level, `gpus: 8`, `deployment: office`), enums of GPU ids and model presets
(from the catalog, passed in: inputs/ sits below data/), titles and descriptions for people, and
`$schema`/`$id`. What a schema cannot express is checked by the loader only (docs/cli.md lists it).
"""

from __future__ import annotations

import copy
from typing import Any

from advisor.inputs.jobs import JOB_SHORTHAND, SERVING_SHORTHAND
from advisor.inputs.quantities import MAX_GPUS
from advisor.inputs.workload import Workload

DIALECT = "https://json-schema.org/draft/2020-12/schema"
WORKLOAD_ID = "urn:gpu-advisor:schema:workload:1"
PLAN_ID = "urn:gpu-advisor:schema:plan:1"

# Titles and descriptions for people (pydantic would say "Electricity Usd Per Kwh").
WORDS = {
    "name": ("Name", "a name for the workload or the job, shown in plans and memos"),
    "deployment": ("Deployment", "where the GPUs run: office, datacenter or cloud, or a mapping with the details"),
    "context": (
        "Where the GPUs run",
        "office (desk-side, one power circuit), datacenter (racks you own or colocate) or cloud (rented)",
    ),
    "region": ("Country", "ISO 3166 two-letter country code of where the hardware goes (drives export rules)"),
    "ownership": ("Buy or rent", "buy, rent or any [any]"),
    "power_limit_kw": ("Power limit", "most power the owned hardware may draw: 3.6, 3.6kW or 1500W"),
    "electricity_usd_per_kwh": ("Electricity price", "US dollars per kWh [from the catalog's assumptions]"),
    "pue": ("PUE", "power usage effectiveness of the facility, 1.0 to 3.0 [from the catalog]"),
    "hosting_usd_per_kw_month": ("Hosting price", "US dollars per kW of IT load per month [from the catalog]"),
    "horizon_months": ("Horizon", "months over which owned hardware is costed [36]"),
    "jobs": ("Jobs", "several jobs; for one, write its fields at the top level instead"),
    "kind": ("Kind of job", "pretrain, finetune, lora, qlora or serve [pretrain]"),
    "traffic": (
        "Traffic",
        "a serving job's requests: {requests_per_s: 50, input_tokens: 1000, output_tokens: 300, "
        "peak_factor: 2}, or a `mix` of request classes",
    ),
    "slo": ("Latency limits", "a serving job's limits at a percentile: {ttft_ms: 2000, tpot_ms: 100, percentile: 99}"),
    "months": ("Months of serving", "how long a serving job runs [the horizon]"),
    "off_peak_training_hours": (
        "Off-peak training hours",
        "hours a day training may use a serving job's owned GPUs [0]",
    ),
    "until_arrival": (
        "Until bought GPUs arrive",
        "rent replicas that serve until a serving job's bought GPUs arrive, or wait and launch then [rent]",
    ),
    "model": ("Model", "a preset id (`advisor models`) or its shape: {params: 7B, layers: 32, hidden: 4096}"),
    "tokens": ("Tokens", "tokens to train on: a number or 124M, 10B, 1T"),
    "precision": ("Precision", "bf16, fp16 or fp8 [bf16]"),
    "deadline": ("Deadline", "wall-clock limit: 90min, 36h, 7d or 2w [none]"),
    "micro_batch": ("Micro-batch", "sequences per GPU per step [chosen]"),
    "checkpointing": ("Activation checkpointing", "true or false [chosen]"),
    "global_batch_tokens": ("Global batch", "tokens per optimizer step, e.g. 512K or 4M [from the model]"),
    "seq_len": ("Sequence length", "tokens per sequence [the preset's]"),
    "lora_rank": ("LoRA rank", "adapter rank with kind: lora [16]"),
    "optimizer": ("Optimizer", "adamw or adamw-8bit [adamw]"),
    "repeat": ("Copies", "this many identical copies of the job [1]"),
    "gpus": ("GPUs", "a number (exactly that many GPUs) or a mapping: count, min, max, allow, deny, stock"),
    "count": ("Exact GPU count", "exactly this many GPUs, owned plus rented"),
    "min": ("Least GPUs", "at least this many GPUs"),
    "max": ("Most GPUs", "at most this many GPUs"),
    "allow": ("Candidate GPUs", "only these GPU ids are considered [every GPU in the catalog]"),
    "deny": ("Excluded GPUs", "these GPU ids are never chosen"),
    "stock": ("Stock", "most units of a GPU id that can be bought or rented, e.g. {h100-sxm: 16}"),
    "budget_usd": ("Budget", "most the plan may cost over the horizon, in US dollars: 30000 or 30K"),
    "allow_mixed": ("Mixed GPU types per job", "let one job's tokens be split across GPU types [false]"),
    "confidence": ("Confidence", "deadlines hold at this quantile of job time"),
    "decision": ("Decision basis", "expected, p80, p90 or point, or {basis, draws} [expected over 200 draws]"),
    "basis": (
        "Basis",
        "expected: least mean cost over the draws; p80/p90: least 80th/90th percentile; point: "
        "least cost at the point estimates [expected]",
    ),
    "draws": ("Draws", "joint draws of speed and price the candidate plans are found on [200]; chosen among on 20,000"),
    "params": ("Parameters", "parameter count: a number or 124M, 7B"),
    "layers": ("Layers", "transformer layers"),
    "hidden": ("Hidden size", "model width"),
    "heads": ("Attention heads", ""),
    "kv_heads": ("Key-value heads", "for grouped-query attention"),
    "ffn": ("Feed-forward width", ""),
    "vocab": ("Vocabulary", "tokens in the vocabulary [50257]"),
    "measured": (
        "Your measured speeds",
        "tokens/s you measured for this job on a GPU type and count: used "
        "exactly there and moving the estimates of related GPUs",
    ),
    "tokens_per_s": ("Measured tokens/s", "over all the GPUs of the run, e.g. 120K"),
    "spread": ("Spread", "P10-P90 half-width of the measurement as a share [0.05]"),
    "tied_embeddings": (
        "Tied embeddings",
        "the output head shares the input embedding [inferred from params, layers and hidden]",
    ),
}
LOADER_ONLY = [
    "a token budget below 1,000 (too small to plan hardware for)",
    "counts, durations, powers and dollar amounts beyond the tool's bounds once their units are read "
    "(e.g. 1000T tokens, 20 years)",
    "NaN and infinity (YAML .nan and .inf; JSON has neither, so a JSON Schema cannot refuse them)",
    "gpus: min above max",
    "context cloud with ownership buy",
    "job names that repeat, and more than 5,000 jobs counting repeat",
    "a serving job's traffic with both request sizes and a mix, or neither; mix shares that do not sum to 1",
    "YAML that is not safe to read: duplicate keys, non-text keys, tags, deep nesting, control characters, "
    "files that are not UTF-8 or over 1 MB",
    "GPU ids and presets in a --catalog file that the schema was not generated with (advisor schema --catalog)",
]


def _retitle(node: object, key: str | None = None) -> None:
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                if name in WORDS and isinstance(sub, dict):
                    title, desc = WORDS[name]
                    sub["title"] = title
                    if desc:
                        sub["description"] = desc
        for k, v in node.items():
            _retitle(v, k)
    elif isinstance(node, list):
        for v in node:
            _retitle(v)


def workload_schema(gpus: list[str] | None = None, presets: list[str] | None = None) -> dict:
    """The schema of workload files as users write them; `gpus` and `presets` become enums."""
    base = Workload.model_json_schema()
    defs = base.pop("$defs")
    _name_ids(defs, gpus, presets)
    props = base["properties"]
    props["deployment"] = {
        "anyOf": [{"type": "string", "enum": ["office", "datacenter", "cloud"]}, {"$ref": "#/$defs/Deployment"}]
    }
    props["gpus"] = {
        "anyOf": [{"type": "integer", "exclusiveMinimum": 0, "maximum": MAX_GPUS}, {"$ref": "#/$defs/GpuSelection"}]
    }
    props["decision"] = {
        "anyOf": [{"type": "string", "enum": ["expected", "point", "p80", "p90"]}, {"$ref": "#/$defs/DecisionBasis"}]
    }
    defs["GpuSelection"]["not"] = {"anyOf": [{"required": ["count", "min"]}, {"required": ["count", "max"]}]}
    dep = defs["Deployment"]["properties"]
    from advisor.inputs.regions import codes

    dep["region"] = {
        "type": "string",
        "default": "US",  # ISO 3166-1 alpha-2 (the loader also takes lower case)
        "enum": sorted(set(codes()) | {c.lower() for c in codes()}),
    }
    _one_job_shorthand(base, defs)
    schema = {
        "$schema": DIALECT,
        "$id": WORKLOAD_ID,
        "title": "gpu-advisor workload",
        "description": "What to train, where, by when and within what limits (README.md, A workload file). Checked "
        "by `advisor validate FILE`, which also catches what a schema cannot express.",
        **{k: v for k, v in base.items() if k not in ("title", "description")},
        "$defs": defs,
    }
    _retitle(schema)
    return schema


def _name_ids(defs: dict, gpus: list[str] | None, presets: list[str] | None) -> None:
    """Where a workload names a GPU (allow, deny, stock) or a training preset, the catalog's ids as
    an enum, so an editor completes them and flags a typo."""
    job = defs["Job"]
    gpu_id: dict[str, Any] = {"type": "string", "description": "a GPU id (`advisor catalog list`)"}
    if gpus:
        gpu_id["enum"] = sorted(gpus)
    preset: dict[str, Any] = {"type": "string", "description": "a model preset (`advisor models`)"}
    if presets:
        preset["enum"] = sorted(presets)
    job["properties"]["model"] = {"anyOf": [preset, {"$ref": "#/$defs/ModelShape"}]}
    sel = defs["GpuSelection"]["properties"]
    sel["allow"] = {"anyOf": [{"type": "array", "items": gpu_id, "minItems": 1}, {"type": "null"}]}
    sel["deny"] = {"type": "array", "items": gpu_id}
    sel["stock"] = {
        "anyOf": [
            {"type": "object", "propertyNames": gpu_id, "additionalProperties": {"type": "integer", "minimum": 0}},
            {"type": "null"},
        ]
    }


def _one_job_shorthand(base: dict, defs: dict) -> None:
    """One job written at the top level (a training or a serving job): its keys, a model that is a
    serving model when `traffic` is given, and either `jobs` or one job's keys, never both."""
    job, serve = defs["Job"], defs["ServeJob"]
    props = base["properties"]
    serve["properties"]["model"] = {"anyOf": [{"type": "string", "description": "a serving model (`advisor models`)"}]}
    for key in JOB_SHORTHAND:
        props[key] = copy.deepcopy(job["properties"][key] if key in job["properties"] else serve["properties"][key])
    props["kind"] = {
        "type": "string",
        "enum": ["pretrain", "finetune", "lora", "qlora", "serve"],
        "title": "Kind of job",
        "description": "pretrain, finetune, lora, qlora or serve [pretrain]",
    }
    props["precision"] = copy.deepcopy(serve["properties"]["precision"])  # a serving job's list holds training's
    training_model = props.pop("model")
    props["model"] = {
        "title": "Model",
        "description": "a training preset or shape; for a serving job (one with `traffic`), a serving model",
    }
    base["if"] = {"required": ["traffic"]}
    base["then"] = {"properties": {"model": serve["properties"]["model"]}}
    base["else"] = {"properties": {"model": training_model}}
    base["required"] = ["deployment"]
    base["anyOf"] = [
        {"required": ["jobs"], "not": {"anyOf": [{"required": [k]} for k in JOB_SHORTHAND]}},
        {
            "required": ["model", "tokens"],
            "not": {"anyOf": [{"required": ["jobs"]}] + [{"required": [k]} for k in SERVING_SHORTHAND]},
        },
        {
            "required": ["kind", "model", "traffic"],
            "properties": {"kind": {"const": "serve"}},
            "not": {"anyOf": [{"required": ["jobs"]}, {"required": ["tokens"]}]},
        },
    ]
