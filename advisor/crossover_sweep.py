"""The article's crossover, `advisor crossover`: the sweep that shows where the RTX 4090 stops being
the cheapest way to train as models grow, and why (the factor of the article that decides). Public
as advisor.crossover (advisor/api.py checks its arguments first).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from advisor.data.catalog import GPU, Catalog, load_catalog
from advisor.data.estimator import Params
from advisor.data.rules import RuleSet, load_rules
from advisor.errors import InputError
from advisor.inputs import units
from advisor.inputs.quantities import deadline_hours
from advisor.inputs.workload import parse_workload
from advisor.perf import evaluate, min_gpus, params_from, spec_from_flags
from advisor.perf.jobspec import JobSpec
from advisor.perf.step_parts import DERATED, HELD, MEASURED

FACTORS = {
    "memory_size": "memory size: the model does not fit in the allowed number of cards",
    "slots": "slots: it needs several cards to hold the model, and no allowed machine "
    "(or costed network between machines) holds that many",
    "power": "power: the cards it needs draw more than the power limit",
    "licence": "licence: a rule forbids it for this deployment",
    "deadline": "time: even its fastest allowed plan misses the deadline",
    "time": "time: on the GPUs allowed it does not finish by the deadline or within the horizon",
    "budget": "budget: its cheapest plan costs more than the budget",
    "availability": "availability: the catalog has no price for it under the allowed ownership",
    "fabric": "fabric: its rental offers join the nodes a job needs by no fabric for collective traffic",
    "lead_time": "lead time: it cannot be delivered and burned in before the deadline",
    "unknown_figure": "an unknown figure: the catalog has no sourced figure its speed needs",
    "no_plan": "no plan with any allowed GPU meets the limits",
    "memory_bandwidth": "memory bandwidth: it spends longer than the winner, a token, moving data in and out of memory",
    "interconnect": "GPU-to-GPU bandwidth: it spends longer than the winner, a token, on traffic between cards",
    "compute": "tensor throughput per dollar",
    "price": "price: it is as fast or faster on every part of the step, but dearer by more than it is faster",
    "datasheet_derating": "no measured training run: its datasheet speed is derated (docs/model.md)",
    "mfu_ceiling": "published runs: its speed is held to the best MFU published runs on it reached",
    "measured_speed": "your runs: the speed your own measurements give it",
}
# the step's parts (perf/step_parts.py) and the factor each names when the focus GPU is slowest on it
STEP_FACTORS = {
    "compute_s": "compute",
    "memory_s": "memory_bandwidth",
    "comm_s": "interconnect",
    HELD: "mfu_ceiling",
    DERATED: "datasheet_derating",
    MEASURED: "measured_speed",
}


CROSSOVER_GPUS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm", "a100-80gb-pcie", "h100-pcie")
# the article's sweep (docs/article.md): one preset per size from GPT-2 124M to Llama 3.1 405B; the
# other presets (Llama 2, Llama 3.1/3.3 at sizes already swept, mixtures of experts) by --model
CROSSOVER_MODELS = (
    "gpt2-124m",
    "gpt2-350m",
    "gpt2-774m",
    "gpt2-1558m",
    "mpt-1b",
    "mpt-3b",
    "mpt-7b",
    "mpt-13b",
    "mpt-30b",
    "llama-3-8b",
    "llama-3-70b",
    "llama-3.1-405b",
)


def _losing_factor(spec: JobSpec, focus: GPU, winner: GPU, p: Params, n: int) -> str:
    """The part of the step (its hardware parts and the parts its speed evidence adds: a derating, a hold
    to published MFU, the user's runs) on which the focus GPU spends the most more GPU-seconds a token than
    the winner, each on `n` GPUs or, where the winner does not fit on them, on the fewest that hold it: the
    factor that decides. No slower a token in all, it loses on price (review29: an H100 PCIe 3.6x as fast
    as an RTX 4090 "lost on its MFU hold", 0.012 s; an MI300X derated for no measured run, 286 s of its
    step, read "compute" where the H100 needed more GPUs)."""
    mine = evaluate(spec, focus, n, p)
    theirs = evaluate(spec, winner, n, p)
    if not theirs.fits and (m := min_gpus(spec, winner, p)) is not None:
        theirs = evaluate(spec, winner, m, p)
    if not (mine.fits and theirs.fits):
        return mine.binding

    def per_token(e: Any) -> dict[str, float]:  # GPU-seconds a token of each part
        scale = e.gpu_count / e.layout["global_batch_tokens"]
        return {f: e.step_breakdown.get(k, 0.0) * scale for k, f in STEP_FACTORS.items()}

    a, b = per_token(mine), per_token(theirs)
    if sum(a.values()) <= sum(b.values()):
        return "price"
    excess = {f: a[f] - b[f] for f in a}
    return max(sorted(excess), key=lambda f: excess[f])


def _factor_text(factor: str | None, rules: RuleSet) -> str | None:
    """The factor in words: a rule by its id and title ('rule INT001: Tensor parallelism across GPUs
    needs ...'), the others from FACTORS."""
    if factor is None:
        return None
    rule = next((r for r in rules.rules if f"rule:{r.id}" == factor), None)
    if rule is not None:
        return f"rule {rule.id}: {rule.title}"
    return FACTORS.get(factor, factor)


def factor_of(primary: dict[str, Any], n_min: int | None, max_gpus: int) -> str:
    """The article's deciding factor from the plan's own primary reason for not choosing the
    focus GPU (explain/alternatives.py): a rule, the GPU count memory needs, power, slots, the
    deadline, the budget, availability; "cost" when it runs but costs more (the step-time
    comparison then says which part of the step)."""
    code: str | None = primary.get("code")
    rule: str | None = primary.get("rule")
    if code == "memory" or n_min is None or n_min > max_gpus:
        return "memory_size"  # no allowed count holds the model, whatever else also rules it out
    if rule:
        return "licence" if rule.startswith("LIC") else f"rule:{rule}"
    return {
        "power": "power",
        "slots": "slots",
        "combined": "slots",
        "deadline_limit": "deadline",
        "deadline": "deadline",
        "budget": "budget",
        "gpu_count": "time",  # (more cards than allowed to hold the model: memory_size above)
        "horizon": "time",
        "estimate": "unknown_figure",
        "size": "memory_size",
        "cost": "cost",
        "no-price": "availability",
        "no-purchase-price": "availability",
        "no-rental-price": "availability",
        "no-server": "availability",
        "no-plan": "no_plan",
        "fabric": "fabric",
        "arrives-too-late": "lead_time",
        "too-many-gpus": "memory_size",
        "no-offer-holds": "availability",
        "unknown-figure": "unknown_figure",
    }.get(code or "cost", code or "cost")


def _parsed(parse: Callable[[str], Any], value: str, name: str) -> Any:
    """`parse(value)`, a ValueError reported against the parameter `name` (the CLI shows its flag)."""
    try:
        return parse(value)
    except ValueError as exc:
        raise InputError(f"`{name}`: {exc}", field=name) from None


def _crossover_models(
    catalog: Catalog, tokens: str, deadline: str | None, gpus: list[str], focus: str, models: list[str] | None
) -> list[str]:
    """The sweep's arguments checked before any solve, and its models: those named (as catalog ids),
    else the article's presets the catalog holds, smallest first."""
    _parsed(units.parse_count, tokens, "tokens")
    if deadline is not None:
        _parsed(deadline_hours, deadline, "deadline")
    for gid in gpus:
        catalog.gpu(gid)
    if focus not in gpus:
        raise InputError(f"`focus`: {focus} must be one of the GPUs swept ({', '.join(gpus)})", field="focus")
    for name in models or []:
        spec_from_flags(catalog, model=name)  # an unknown preset is reported as `model`
    return (
        [catalog.model_id(m) for m in models]
        if models
        else sorted((m for m in CROSSOVER_MODELS if m in catalog.models), key=lambda m: (catalog.models[m].params, m))
    )


def _no_plan_reason(
    result: Any, catalog: Catalog, focus: str, deployment: str, n: int | None, primary: dict[str, Any]
) -> dict[str, Any]:
    """When no plan exists at all, the focus GPU's reason from the plan's own diagnosis (the limit
    whose relaxation would give a plan), else the slots when no host holds the cards it needs."""
    lever = next(
        (
            d
            for d in result.diagnosis
            if d.kind != "shortfall" and d.relaxation and d.constraint in ("power", "deadline", "budget", "gpu_count")
        ),
        None,
    )
    slots = max((s.gpu_slots for s in catalog.servers_for(focus, deployment)), default=0)
    if lever is not None:
        return {"code": lever.constraint, "rule": None, "message": lever.message}
    if n is not None and n > slots:  # more cards than any host of this deployment holds
        return {
            "code": "slots",
            "rule": None,
            "message": f"it needs at least {n} cards and no {deployment} machine holds more than {slots}",
        }
    return primary


def _focus_loses(
    row: dict[str, Any],
    result: Any,
    catalog: Catalog,
    spec: JobSpec,
    p: Params,
    focus: str,
    deployment: str,
    max_gpus: int,
    n: int | None,
) -> None:
    """The focus GPU is not the cheapest: its forced cost, the reason and the article's factor."""
    winner = row["cheapest"]
    rej = next((r for r in result.rejected if r.gpu == focus), None)
    row["focus_cost_usd"] = rej.forced_cost_usd if rej else None
    primary: dict[str, Any] = rej.reasons[0].to_dict() if rej else {"code": "cost", "rule": None}
    if primary.get("code") == "no-plan":
        primary = _no_plan_reason(result, catalog, focus, deployment, n, primary)
    row["focus_reason"] = primary.get("message")
    row["factor"] = factor_of(primary, n, max_gpus)
    if row["factor"] == "cost":  # it runs (factor_of says memory_size when no count holds it)
        row["factor"] = (
            _losing_factor(spec, catalog.gpu(focus), catalog.gpu(winner), p, n)
            if winner and n is not None
            else "compute"
        )


def crossover(
    *,
    tokens: str = "10B",
    max_gpus: int = 8,
    gpus: list[str] | None = None,
    models: list[str] | None = None,
    deployment: str = "office",
    ownership: str = "buy",
    deadline: str | None = None,
    focus: str = "rtx-4090",
    catalog: Catalog | None = None,
    rules: RuleSet | None = None,
    as_of: dt.date | None = None,
) -> dict[str, Any]:
    """Sweep model size at a fixed token budget and GPU-count limit: the cheapest plan per size,
    and for `focus` (the 4090) its cost or why it cannot run, with the factor that decides."""
    from advisor.flow import plan

    catalog = catalog or load_catalog()
    rules = rules or load_rules()
    as_of = as_of or dt.date.today()
    gpus = gpus or list(CROSSOVER_GPUS)
    models = _crossover_models(catalog, tokens, deadline, gpus, focus, models)
    p = params_from(catalog)
    points: list[dict[str, Any]] = []
    crossed = None
    for name in models:
        doc: dict[str, Any] = {
            "name": f"crossover {name}",
            "deployment": {"context": deployment, "ownership": ownership},
            "model": name,
            "tokens": tokens,
            "gpus": {"allow": gpus, "max": max_gpus},
        }
        if deadline:
            doc["deadline"] = deadline
        result = plan(  # forced costs only: no break-evens and no plan of the other way to own are shown
            parse_workload(doc),
            catalog=catalog,
            rules=rules,
            as_of=as_of,
            explain="alternatives",
            other_ownership=False,
        )
        winner = result.purchase[0].gpu if result.purchase else None
        row: dict[str, Any] = {
            "model": name,
            "params": catalog.models[name].params,
            "cheapest": winner,
            "total_cost_usd": result.total_cost_usd,
        }
        spec = spec_from_flags(catalog, model=name)
        n = min_gpus(spec, catalog.gpu(focus), p, limit=65_536)
        row[f"{focus}_min_gpus"] = n
        if winner == focus:
            row["focus_cost_usd"], row["factor"] = result.total_cost_usd, None
        else:
            _focus_loses(row, result, catalog, spec, p, focus, deployment, max_gpus, n)
            if crossed is None:
                crossed = name
        row["factor_text"] = _factor_text(row["factor"], rules)
        points.append(row)
    return {
        "tokens": tokens,
        "max_gpus": max_gpus,
        "gpus": gpus,
        "deployment": deployment,
        "focus": focus,
        "crossover_model": crossed,
        "points": points,
        "as_of": as_of.isoformat(),
    }
