"""The article's comparison, `advisor compare`: its table for any model and GPUs, sourced and
estimated. Public as advisor.compare (advisor/api.py checks its arguments first); the crossover
sweep is advisor/crossover_sweep.py.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from advisor.data.catalog import GPU, Catalog, load_catalog
from advisor.data.estimator import Params
from advisor.data.resources import data_dir
from advisor.data.rules import RuleSet, gpu_context, load_rules
from advisor.errors import InputError
from advisor.inputs.loader import load_yaml_file
from advisor.perf import evaluate, min_gpus, params_from, spec_from_flags
from advisor.perf.jobspec import JobSpec

DEFAULT_MODEL = "gpt2-124m"  # the article's model: compared when neither a preset nor --params is given


def article_claims() -> dict[str, Any]:
    """The seed article's claims (catalog/article.yaml)."""
    return load_yaml_file(data_dir("catalog") / "article.yaml", "catalog file")


def article_gpus() -> list[str]:
    """The article's three GPUs, in its order: what `advisor compare` sets side by side when no GPU is named."""
    return list(article_claims()["claims"])


def _check_prices(catalog: Catalog, gpus: list[str], prices: dict[str, Any]) -> None:
    """A --price names a GPU of the catalog that is among those compared: a price for a GPU not
    shown is a typo the user should hear about."""
    if not gpus:
        raise InputError("name at least one GPU id to compare, e.g. rtx-4090 a100-80gb-sxm h100-sxm", field="gpus")
    for gid in prices:
        catalog.gpu(gid)
        if gid not in gpus:
            raise InputError(
                f"`prices`: {gid} has a price but is not among the GPUs compared ({', '.join(gpus)})", field="prices"
            )


Price = tuple[float | None, str | None, str | None, str | None]


def _price_of(catalog: Catalog, g: GPU, prices: dict[str, Any], as_of: dt.date) -> Price:
    """(price, its source, its date, its condition): the user's --price (condition as quoted: None),
    else the catalog's purchase price with the URLs of its sources and its condition (new, used,
    refurbished: a used board's price is not a new one's)."""
    if g.id in prices:
        return float(prices[g.id]), "--price", as_of.isoformat(), None
    purchase = g.prices.purchase
    price = purchase.usd if purchase else None
    price_src = ", ".join(catalog.sources[s].url for s in purchase.source) if purchase and price else None
    return price, price_src, purchase.as_of if purchase else None, purchase.condition if purchase and price else None


def _rules_row(
    rules: RuleSet, g: GPU, spec: JobSpec, precision: str, deployment: str, region: str, as_of: dt.date
) -> list[dict[str, Any]]:
    """What the rules say of buying `g` for `deployment` in `region` (a licence, an export control)."""
    ctx = {
        "gpu": gpu_context(g),
        "deployment": {"context": deployment, "region": region, "ownership": "buy"},
        "offer": {"ownership": "buy", "site": deployment},
        "job": {"kind": "pretrain", "precision": precision, "params": spec.model.params},
    }
    return [{"rule": f.rule, "severity": f.severity, "message": f.message} for f in rules.evaluate(ctx, as_of)]


def _compare_row(
    catalog: Catalog,
    g: GPU,
    spec: JobSpec,
    p: Params,
    precision: str,
    price: Price,
) -> dict[str, Any]:
    """One GPU's figures and its estimate on the fewest cards that hold the model."""
    n = min_gpus(spec, g, p, limit=65_536)
    est = evaluate(spec, g, n, p) if n else None
    usd, price_src, price_date, condition = price
    tps = est.tokens_per_s if est and est.fits else None
    run = est if tps and est else None
    fp16acc = g.tensor_tflops.get("fp16_fp16acc")
    return {
        "gpu": g.id,
        "name": g.name,
        "price_usd": usd,
        "price_source": price_src,
        "price_as_of": price_date,
        "price_condition": condition,
        "rent_usd_per_hour": g.rental.usd_per_gpu_hour if g.rental else None,
        "dense_tflops": g.dense_tflops(precision),
        "fp16_fp16acc_tflops": fp16acc.value if fp16acc else None,
        "memory_gb": g.memory_gb.value,
        "memory_bandwidth_gbps": g.memory_bandwidth_gbps.value,
        "link": g.interconnect.link,
        "link_gbps": g.interconnect.link_gbps.value,
        "p2p": g.interconnect.p2p.value,
        "gpu_count": n,
        "tokens_per_s": tps,
        "tokens_per_s_per_gpu": run.tokens_per_s_per_gpu if run else None,
        "mfu": run.mfu if run else None,
        "limited_by": run.binding if run else None,
        "tokens_per_s_per_1k_usd": (tps / (usd * n / 1000.0)) if tps and usd and n else None,
    }


def _add_ratios(rows: list[dict[str, Any]]) -> None:
    """Price (of the cards needed) and speed of each row relative to the first GPU named."""
    first = rows[0]
    for row in rows:
        row["price_ratio"] = (
            row["price_usd"] * row["gpu_count"] / (first["price_usd"] * first["gpu_count"])
            if row["price_usd"] and first["price_usd"] and row["gpu_count"] and first["gpu_count"]
            else None
        )
        row["speed_ratio"] = (
            row["tokens_per_s"] / first["tokens_per_s"] if row["tokens_per_s"] and first["tokens_per_s"] else None
        )


def compare(
    gpus: list[str],
    *,
    model: str | None = None,
    params: Any = None,
    layers: Any = None,
    hidden: Any = None,
    seq_len: Any = None,
    vocab: int | None = None,
    tied_embeddings: bool | None = None,
    precision: str = "bf16",
    prices: dict[str, Any] | None = None,
    deployment: str | None = None,
    region: str = "US",
    catalog: Catalog | None = None,
    rules: RuleSet | None = None,
    as_of: dt.date | None = None,
) -> dict[str, Any]:
    """One row per GPU: price and its source, dense TFLOPs, memory, links, estimated tokens/s on
    the fewest cards that hold the model (DEFAULT_MODEL without a model or params), tokens/s per
    $1,000 and ratios to the first GPU."""
    catalog = catalog or load_catalog()
    rules = rules or load_rules()
    as_of = as_of or dt.date.today()
    prices = prices or {}
    _check_prices(catalog, gpus, prices)
    if model is None and params is None:
        model = DEFAULT_MODEL
    spec = spec_from_flags(
        catalog,
        model=model,
        params=params,
        layers=layers,
        hidden=hidden,
        seq_len=seq_len,
        vocab=vocab,
        tied_embeddings=tied_embeddings,
        precision=precision,
    )
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
    return {
        "model": {
            "name": model,
            "params": spec.model.params,
            "layers": spec.model.layers,
            "hidden": spec.model.hidden,
            "seq_len": spec.model.seq_len,
            "shape_inferred": spec.model.shape_inferred,
        },
        "precision": precision,
        "deployment": deployment,
        "as_of": as_of.isoformat(),
        "rows": rows,
        "article_source": "docs/article.md" if show_claims else None,
    }
