"""The article's comparisons: `advisor compare`, its table for any model and GPUs, sourced and
estimated; and `advisor crossover`, the sweep that shows where the RTX 4090 stops being the cheapest
way to train, and why. Public as advisor.compare and advisor.crossover (advisor/api.py checks
their arguments first).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from advisor.data.catalog import GPU, Catalog, load_catalog
from advisor.data.estimator import Params
from advisor.data.resources import data_dir
from advisor.data.rules import RuleSet, gpu_context, load_rules
from advisor.errors import InputError
from advisor.inputs import units
from advisor.inputs.loader import load_yaml_file
from advisor.inputs.workload import parse_workload
from advisor.perf import evaluate, min_gpus, params_from, spec_from_flags
from advisor.perf.jobspec import JobSpec

FACTORS = {
    "memory_size": "memory size: the model does not fit in the allowed number of cards",
    "slots": "slots: it needs several cards to hold the model, and no allowed machine "
             "(or costed network between machines) holds that many",
    "power": "power: the cards it needs draw more than the power limit",
    "licence": "licence: a rule forbids it for this deployment",
    "deadline": "time: even its fastest allowed plan misses the deadline",
    "budget": "budget: its cheapest plan costs more than the budget",
    "availability": "availability: the catalog has no price for it under the allowed ownership",
    "no_plan": "no plan with any allowed GPU meets the limits",
    "memory_bandwidth": "memory bandwidth: memory-bound work dominates its step time",
    "interconnect": "GPU-to-GPU bandwidth: gradient and parameter traffic between cards dominates",
    "compute": "tensor throughput per dollar",
}


CROSSOVER_GPUS = ("rtx-4090", "a100-80gb-sxm", "h100-sxm", "a100-80gb-pcie", "h100-pcie")
# the article's sweep (docs/article.md): one preset per size from GPT-2 124M to Llama 3.1 405B; the
# other presets (Llama 2, Llama 3.1/3.3 at sizes already swept, mixtures of experts) by --model
CROSSOVER_MODELS = ("gpt2-124m", "gpt2-350m", "gpt2-774m", "gpt2-1558m", "mpt-1b", "mpt-3b", "mpt-7b", "mpt-13b",
                    "mpt-30b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b")


def _losing_factor(spec: JobSpec, focus: GPU, winner: GPU, p: Params, n: int) -> str:
    """Which part of the focus GPU's step time is most out of proportion to the winner's, per
    GPU-second of work: that is the factor of the article that decides."""
    mine, theirs = evaluate(spec, focus, n, p), evaluate(spec, winner, n, p)
    if not (mine.fits and theirs.fits):
        return mine.binding
    parts = {"compute": "compute_s", "memory_bandwidth": "memory_s", "interconnect": "comm_s"}
    excess = {f: mine.step_breakdown[k] - theirs.step_breakdown[k] for f, k in parts.items()}
    return max(sorted(excess), key=lambda f: excess[f])


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
    return {"power": "power", "slots": "slots", "combined": "slots", "deadline_limit": "deadline",
            "deadline": "deadline", "budget": "budget", "gpu_count": "memory_size", "cost": "cost",
            "no-price": "availability", "no-purchase-price": "availability", "no-rental-price": "availability",
            "no-server": "availability", "no-plan": "no_plan"}.get(code or "cost", code or "cost")


def _parsed(parse: Callable[[str], Any], value: str, name: str) -> Any:
    """`parse(value)`, a ValueError reported against the parameter `name` (the CLI shows its flag)."""
    try:
        return parse(value)
    except ValueError as exc:
        raise InputError(f"`{name}`: {exc}", field=name) from None


def article_claims() -> dict[str, Any]:
    """The seed article's claims (catalog/article.yaml)."""
    return load_yaml_file(data_dir("catalog") / "article.yaml", "catalog file")


def _check_prices(catalog: Catalog, gpus: list[str], prices: dict[str, Any]) -> None:
    """A --price names a GPU of the catalog that is among those compared: a price for a GPU not
    shown is a typo the user should hear about."""
    if not gpus:
        raise InputError("name at least one GPU id to compare, e.g. rtx-4090 a100-80gb-sxm h100-sxm", field="gpus")
    for gid in prices:
        catalog.gpu(gid)
        if gid not in gpus:
            raise InputError(f"`prices`: {gid} has a price but is not among the GPUs compared ({', '.join(gpus)})",
                             field="prices")


def _price_of(catalog: Catalog, g: GPU, prices: dict[str, Any],
              as_of: dt.date) -> tuple[float | None, str | None, str | None]:
    """(price, its source, its date): the user's --price, else the catalog's purchase price with
    the URLs of its sources."""
    if g.id in prices:
        return float(prices[g.id]), "--price", as_of.isoformat()
    purchase = g.prices.purchase
    price = purchase.usd if purchase else None
    price_src = ", ".join(catalog.sources[s].url for s in purchase.source) if purchase and price else None
    return price, price_src, purchase.as_of if purchase else None


def _rules_row(rules: RuleSet, g: GPU, spec: JobSpec, precision: str, deployment: str, region: str,
               as_of: dt.date) -> list[dict[str, Any]]:
    """What the rules say of buying `g` for `deployment` in `region` (a licence, an export control)."""
    ctx = {"gpu": gpu_context(g), "deployment": {"context": deployment, "region": region, "ownership": "buy"},
           "offer": {"ownership": "buy", "site": deployment},
           "job": {"kind": "pretrain", "precision": precision, "params": spec.model.params}}
    return [{"rule": f.rule, "severity": f.severity, "message": f.message} for f in rules.evaluate(ctx, as_of)]


def _compare_row(catalog: Catalog, g: GPU, spec: JobSpec, p: Params, precision: str,
                 price: tuple[float | None, str | None, str | None]) -> dict[str, Any]:
    """One GPU's figures and its estimate on the fewest cards that hold the model."""
    n = min_gpus(spec, g, p, limit=65_536)
    est = evaluate(spec, g, n, p) if n else None
    usd, price_src, price_date = price
    tps = est.tokens_per_s if est and est.fits else None
    run = est if tps and est else None
    fp16acc = g.tensor_tflops.get("fp16_fp16acc")
    return {
        "gpu": g.id, "name": g.name, "price_usd": usd, "price_source": price_src, "price_as_of": price_date,
        "rent_usd_per_hour": g.rental.usd_per_gpu_hour if g.rental else None,
        "dense_tflops": g.dense_tflops(precision),
        "fp16_fp16acc_tflops": fp16acc.value if fp16acc else None,
        "memory_gb": g.memory_gb.value, "memory_bandwidth_gbps": g.memory_bandwidth_gbps.value,
        "link": g.interconnect.link, "link_gbps": g.interconnect.link_gbps.value,
        "p2p": g.interconnect.p2p.value, "gpu_count": n, "tokens_per_s": tps,
        "tokens_per_s_per_gpu": run.tokens_per_s_per_gpu if run else None,
        "mfu": run.mfu if run else None, "limited_by": run.binding if run else None,
        "tokens_per_s_per_1k_usd": (tps / (usd * n / 1000.0)) if tps and usd and n else None,
    }


def _add_ratios(rows: list[dict[str, Any]]) -> None:
    """Price (of the cards needed) and speed of each row relative to the first GPU named."""
    first = rows[0]
    for row in rows:
        row["price_ratio"] = (row["price_usd"] * row["gpu_count"] / (first["price_usd"] * first["gpu_count"])
                              if row["price_usd"] and first["price_usd"] and row["gpu_count"] and first["gpu_count"]
                              else None)
        row["speed_ratio"] = (row["tokens_per_s"] / first["tokens_per_s"]
                              if row["tokens_per_s"] and first["tokens_per_s"] else None)


def compare(gpus: list[str], *, model: str | None = None, params: Any = None, layers: Any = None,
            hidden: Any = None, seq_len: Any = None, vocab: int | None = None, tied_embeddings: bool | None = None,
            precision: str = "bf16", prices: dict[str, Any] | None = None, deployment: str | None = None,
            region: str = "US", catalog: Catalog | None = None, rules: RuleSet | None = None,
            as_of: dt.date | None = None) -> dict[str, Any]:
    """One row per GPU: price and its source, dense TFLOPs, memory, links, estimated tokens/s on
    the fewest cards that hold the model, tokens/s per $1,000 and ratios to the first GPU."""
    catalog = catalog or load_catalog()
    rules = rules or load_rules()
    as_of = as_of or dt.date.today()
    prices = prices or {}
    _check_prices(catalog, gpus, prices)
    spec = spec_from_flags(catalog, model=model, params=params, layers=layers, hidden=hidden, seq_len=seq_len,
                           vocab=vocab, tied_embeddings=tied_embeddings, precision=precision)
    p = params_from(catalog)
    claims = article_claims()
    show_claims = model == claims["model"] and precision == "bf16" and seq_len is None
    rows: list[dict[str, Any]] = []
    for gid in gpus:
        g = catalog.gpu(gid)
        row = _compare_row(catalog, g, spec, p, precision, _price_of(catalog, g, prices, as_of))
        if deployment is not None:
            row["rules"] = _rules_row(rules, g, spec, precision, deployment, region, as_of)
        if show_claims and gid in claims["claims"]:
            row["article"] = claims["claims"][gid]
        rows.append(row)
    _add_ratios(rows)
    return {"model": {"name": model, "params": spec.model.params, "layers": spec.model.layers,
                      "hidden": spec.model.hidden, "seq_len": spec.model.seq_len,
                      "shape_inferred": spec.model.shape_inferred},
            "precision": precision, "deployment": deployment, "as_of": as_of.isoformat(), "rows": rows,
            "article_source": "docs/article.md" if show_claims else None}


def _crossover_models(catalog: Catalog, tokens: str, deadline: str | None, gpus: list[str], focus: str,
                      models: list[str] | None) -> list[str]:
    """The sweep's arguments checked before any solve, and its models: those named (as catalog ids),
    else the article's presets the catalog holds, smallest first."""
    _parsed(units.parse_count, tokens, "tokens")
    if deadline is not None:
        _parsed(units.parse_duration_hours, deadline, "deadline")
    for gid in gpus:
        catalog.gpu(gid)
    if focus not in gpus:
        raise InputError(f"`focus`: {focus} must be one of the GPUs swept ({', '.join(gpus)})", field="focus")
    for name in models or []:
        spec_from_flags(catalog, model=name)   # an unknown preset is reported as `model`
    return ([catalog.model_id(m) for m in models] if models else
            sorted((m for m in CROSSOVER_MODELS if m in catalog.models), key=lambda m: (catalog.models[m].params, m)))


def _no_plan_reason(result: Any, catalog: Catalog, focus: str, deployment: str, n: int | None,
                    primary: dict[str, Any]) -> dict[str, Any]:
    """When no plan exists at all, the focus GPU's reason from the plan's own diagnosis (the limit
    whose relaxation would give a plan), else the slots when no host holds the cards it needs."""
    lever = next((d for d in result.diagnosis if d.kind != "shortfall" and d.relaxation
                  and d.constraint in ("power", "deadline", "budget", "gpu_count")), None)
    slots = max((s.gpu_slots for s in catalog.servers_for(focus, deployment)), default=0)
    if lever is not None:
        return {"code": lever.constraint, "rule": None, "message": lever.message}
    if n is not None and n > slots:   # more cards than any host of this deployment holds
        return {"code": "slots", "rule": None,
                "message": f"it needs at least {n} cards and no {deployment} machine holds more than {slots}"}
    return primary


def _focus_loses(row: dict[str, Any], result: Any, catalog: Catalog, spec: JobSpec, p: Params, focus: str,
                 deployment: str, max_gpus: int, n: int | None) -> None:
    """The focus GPU is not the cheapest: its forced cost, the reason and the article's factor."""
    winner = row["cheapest"]
    rej = next((r for r in result.rejected if r.gpu == focus), None)
    row["focus_cost_usd"] = rej.forced_cost_usd if rej else None
    primary: dict[str, Any] = rej.reasons[0].to_dict() if rej else {"code": "cost", "rule": None}
    if primary.get("code") == "no-plan":
        primary = _no_plan_reason(result, catalog, focus, deployment, n, primary)
    row["focus_reason"] = primary.get("message")
    row["factor"] = factor_of(primary, n, max_gpus)
    if row["factor"] == "cost":   # it runs (factor_of says memory_size when no count holds it)
        row["factor"] = (_losing_factor(spec, catalog.gpu(focus), catalog.gpu(winner), p, n)
                         if winner and n is not None else "compute")


def crossover(*, tokens: str = "10B", max_gpus: int = 8, gpus: list[str] | None = None, models: list[str] | None = None,
              deployment: str = "office", ownership: str = "buy", deadline: str | None = None, focus: str = "rtx-4090",
              catalog: Catalog | None = None, rules: RuleSet | None = None, as_of: dt.date | None = None) -> dict[str, Any]:
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
        doc: dict[str, Any] = {"name": f"crossover {name}", "deployment": {"context": deployment, "ownership": ownership},
               "model": name, "tokens": tokens, "gpus": {"allow": gpus, "max": max_gpus}}
        if deadline:
            doc["deadline"] = deadline
        result = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=as_of,
                      explain="alternatives")   # forced costs only: no break-evens are shown
        winner = result.purchase[0].gpu if result.purchase else None
        row: dict[str, Any] = {"model": name, "params": catalog.models[name].params, "cheapest": winner,
                               "total_cost_usd": result.total_cost_usd}
        spec = spec_from_flags(catalog, model=name)
        n = min_gpus(spec, catalog.gpu(focus), p, limit=65_536)
        row[f"{focus}_min_gpus"] = n
        if winner == focus:
            row["focus_cost_usd"], row["factor"] = result.total_cost_usd, None
        else:
            _focus_loses(row, result, catalog, spec, p, focus, deployment, max_gpus, n)
            if crossed is None:
                crossed = name
        row["factor_text"] = FACTORS.get(row["factor"], row["factor"]) if row["factor"] else None
        points.append(row)
    return {"tokens": tokens, "max_gpus": max_gpus, "gpus": gpus, "deployment": deployment, "focus": focus,
            "crossover_model": crossed, "points": points, "as_of": as_of.isoformat()}
