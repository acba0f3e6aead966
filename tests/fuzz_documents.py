"""Random workload documents and catalog overrides for the fuzzer (tests/test_fuzz.py checks them,
bench/fuzz.py runs 10,000): hypothesis strategies, and the text they are written as.

Each workload document starts from the fields of a real workload; every field is left out, given a
sensible value or (wild cases) given anything at all (NaN, huge integers, nested lists, text, null,
mappings) or a hostile value of its own (HOSTILE); unknown keys and keys that are not text are added,
and the YAML text may then be cut or spliced with tabs, anchors, tags, NUL bytes or control characters.
The documents hold training jobs (with the user's own `measured:` speeds), serving jobs (request
mixes, SLOs, measured throughput), in `jobs:` or as the one-job shorthand at the top level (training
or serving: `kind: serve`, `traffic`, `slo`, `months`, `off_peak_training_hours`), economics and
market fields (rental kinds, lead times, storage, the budget's basis, horizon, confidence) and the
decision basis (`decision: p80` or `{basis, draws}`). A third of the cases come
with a catalog override that replaces or adds rental offers (node size, fabric, tier, order limits,
terms, payment, provisioning, spot interruption), a purchase quote and a lead time.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml
from hypothesis import strategies as st

GPUS = ["rtx-4090", "a100-80gb-sxm", "h100-sxm", "l4", "mi300x", "h20", "h100-sxn"]  # the last: a near miss
PRESETS = ["gpt2-124m", "gpt2-350m", "gpt2-774m", "llama-3-8b"]
NASTY_TEXT = [
    "",
    " ",
    "10B",
    "1e400",
    "-5",
    "0",
    "nan",
    "inf",
    "-inf",
    "7d",
    "0h",
    "3.6kW",
    "1,000",
    "1_0B",
    "10 B",
    "$30K",
    "h100-sxm",
    "H100",
    "office",
    "gpt2-124m",
    "yes",
    "null",
    "~",
    "[",
    "{a: 1}",
    "ünïcødé",
    "\u202e",
    "x" * 300,
    "%s%n",
    "${HOME}",
    "$(rm -rf /)",
    "`id`",
    "__import__('os')",
]

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-10, max_value=10**6),
    st.integers(),
    st.sampled_from([10**40, -(10**400), 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(NASTY_TEXT),
    st.text(max_size=12),
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
)
anything = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)

# gpt2-124m serves at most 1,024 tokens of context; the last is no preset (a near miss)
SERVE_MODELS = ["llama-3.1-8b", "llama-2-7b", "mixtral-8x7b", "llama-3.1-70b", "gpt2-124m", "llama-3.1-8"]
RENT_KINDS = ["on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block", "cluster_term"]
# what a catalog offer may be sold as (data/catalog_prices.py RENT_KINDS), and the GPUs overrides change
OFFER_KINDS = RENT_KINDS + ["marketplace", "serverless"]
OFFER_GPUS = ["h100-sxm", "a100-80gb-sxm", "rtx-4090", "l40s", "h200-sxm", "mi300x", "l4"]
# GPUs measured in `measured:` (the catalog's, and a near miss in wild cases through GPUS)
MEASURED_GPUS = ["h100-sxm", "a100-80gb-sxm", "rtx-4090", "l40s", "h200-sxm"]
DECISIONS = ["expected", "point", "p80", "p90"]
SOURCE = "fuzzq"  # the source an override's fabric, provisioning and interruption cite (defined in it)
# Values each field must refuse by name (issue 20 item 7, issue 33), mixed into wild cases beside `anything`.
HOSTILE: dict[str, list[Any]] = {
    "confidence": [0, 1, 1.5, -0.2, 0.49, "high", "80%", "P80", True, None, [0.8]],
    "share": [0, -0.5, 1.2, "half", None, True],
    "rate": [0, -3, "fast", "40/s", 1e300, True],
    "tokens_per_request": [0, -1, 2.5, "long", 10**40, True],
    "ms": [0, -100, "2s", True, 1e300],
    "percentile": [0, 49, 100, 150, "p99", True],
    "fraction": [-0.1, 1.5, 0, "10%", True, None],
    "rent_kinds": [
        [],
        ["on-demand"],
        ["reserved"],
        ["spot", "spot"],
        "spot",
        [None],
        [1],
        ["cluster-term"],
        ["reserved_2y"],
        ["marketplace"],
    ],
    "days": [-1, "2w", 3651, 1e300, True, "soon", None],
    "basis": ["pv", "nominal", "", "Cash", True, 0, None, ["cash"]],
    "months": [0, -1, 241, "3y", True, 1e-300],
    "measured": [[], {}, "120K", [None], [{}], [{"gpu": "h100-sxm"}]],
    "tokens_per_s": [0, -5, "fast", "120 K/s", 1e300, True, "1e16"],
    "date": ["yesterday", "2026-13-01", "2026/11/20", 20261120, "", None, True],
    "spread": [0, 1, 1.5, -0.05, "5%", True],
    "count": [0, -8, 2.5, 100_001, True, "8 GPUs"],
    "decision": [
        "p85",
        "P80",
        "mean",
        0.8,
        {"basis": "mean"},
        {"draws": 39},
        {"draws": 5001},
        {"draws": True},
        {"draws": 1e9},
        {"draws": 50.5},
        {"basis": "p80", "seed": 1},
        [],
        None,
    ],
    "usd_per_hour": [0, -1, 1e-9, 1e300, "2$", True, None],
    "gpus_per_node": [0, -8, 2.5, 1025, "eight", True],
    "nodes": [0, -1, 100_001, True, "two"],
    "hours": [0, -24, 1e9, "1d", True],
    "fabric": [
        {"kind": "infiniband"},
        {"kind": "nvlink", "source": [SOURCE]},
        {"kind": None},
        {"kind": "none", "gbps_per_gpu": 400, "source": [SOURCE]},
        {"kind": "roce", "gbps_per_gpu": 0, "source": [SOURCE]},
        "infiniband",
        None,
    ],
    "tier": ["cloud", "", "Hyperscaler", None, 1],
    "offer_date": [None, "2026-11-32", "2099-01-01", "today", 2026],
}


class Fields:
    """Field strategies for one kind of case: `wild` ones may hold anything or a hostile value."""

    def __init__(self, wild: bool) -> None:
        self.wild = wild

    def field(self, good: st.SearchStrategy, hostile: str | None = None) -> st.SearchStrategy:
        if not self.wild:
            return good
        bad = [anything] + ([st.sampled_from(HOSTILE[hostile])] if hostile else [])
        return st.one_of(good, good, *bad)

    def fields(self, required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy:
        """A mapping with the required keys and some optional ones; a value given as (strategy,
        hostile key) is given that key's hostile values in wild cases."""

        def one(v: Any) -> st.SearchStrategy:
            return self.field(*v) if isinstance(v, tuple) else self.field(v)

        return st.fixed_dictionaries(
            {k: one(v) for k, v in required.items()}, optional={k: one(v) for k, v in optional.items()}
        )


def measured(f: Fields) -> st.SearchStrategy:
    """A training job's `measured:` list (inputs/jobs.py Measurement): one speed per GPU type and count;
    sane speeds from a few tokens/s to 1e12 (valid, if absurd: the estimate must still hold)."""
    one = f.fields(
        {
            "gpu": st.sampled_from(MEASURED_GPUS if not f.wild else MEASURED_GPUS + GPUS),
            "count": (st.sampled_from([1, 2, 8, 16, 64]), "count"),
            "tokens_per_s": (st.sampled_from([3, 5_000, "60K", 120_000.5, "2M", 1e12]), "tokens_per_s"),
            "date": (st.sampled_from(["2026-11-20", "2025-01-31", "2027-06-01", dt.date(2026, 3, 1)]), "date"),
        },
        {
            "note": st.sampled_from(["torchtitan, our cluster", "<b>x</b> | `id`", "x" * 500]),
            "spread": (st.sampled_from([0.01, 0.05, 0.3, 0.99]), "spread"),
        },
    )
    key = (lambda m: (m.get("gpu"), m.get("count"))) if not f.wild else (lambda m: id(m))
    return f.field(st.lists(one, min_size=1, max_size=3, unique_by=key), "measured")


def measured_serving(f: Fields) -> st.SearchStrategy:
    """A serving job's `measured:` throughput runs (inputs/jobs.py MeasuredServing)."""
    one = st.sampled_from([1, 2, 8]).flatmap(
        lambda tp: f.fields(
            {
                "gpu": st.sampled_from(MEASURED_GPUS),
                "count": (st.sampled_from([tp, 8, 16]), "count"),
                "output_tokens_per_s": (st.sampled_from([50, 2_000, 40_000, 1e8]), "tokens_per_s"),
                "input_len": st.sampled_from([200, 1000, 12000]),
                "output_len": st.sampled_from([100, 250, 800]),
            },
            {"tensor_parallel": st.just(tp), "date": st.just("2026-11-20"), "note": st.just("vllm 0.6")},
        )
    )
    return f.field(st.lists(one, min_size=1, max_size=2), "measured")


def serving_fields(f: Fields) -> tuple[dict[str, Any], dict[str, Any]]:
    """(required, optional) fields of a serving job (issue 17): one request size or a mix whose
    shares sum to 1, a latency SLO, months, off-peak hours, measured runs."""
    request = {
        "input_tokens": f.field(st.sampled_from([200, 1000, 12000]), "tokens_per_request"),
        "output_tokens": f.field(st.sampled_from([100, 250, 800]), "tokens_per_request"),
    }
    shares = st.sampled_from([[1.0], [0.8, 0.2], [0.5, 0.3, 0.2]] + ([[0.5, 0.4], [0.7, 0.7]] if f.wild else []))
    mix = shares.flatmap(
        lambda ss: st.tuples(
            *[
                st.fixed_dictionaries(
                    {**request, "share": f.field(st.just(s), "share")},
                    optional={"name": st.sampled_from(["chat", "docs"])},
                )
                for s in ss
            ]
        ).map(list)
    )
    rate = f.field(st.sampled_from([0.5, 4, 40]), "rate")
    peak = {"peak_factor": f.field(st.sampled_from([1, 1.5, 3]))}
    traffic = st.one_of(
        st.fixed_dictionaries({"requests_per_s": rate, **request}, optional=peak),
        st.fixed_dictionaries({"requests_per_s": rate, "mix": f.field(mix)}, optional=peak),
    )
    slo = st.fixed_dictionaries(
        {},
        optional={
            "ttft_ms": f.field(st.sampled_from([500, 2000, 10000]), "ms"),
            "tpot_ms": f.field(st.sampled_from([20, 60, 200]), "ms"),
            "percentile": f.field(st.sampled_from([50, 90, 99, 99.9]), "percentile"),
        },
    )
    required = {"model": st.sampled_from(SERVE_MODELS), "traffic": traffic}
    optional = {
        "precision": st.sampled_from(["bf16", "fp16", "fp8", "fp4", "int8", "int4"]),
        "slo": slo,
        "months": (st.sampled_from([1, 3, 12, 36, 60]), "months"),
        "off_peak_training_hours": st.sampled_from([0, 8, 24]),
        "measured": measured_serving(f),
    }
    return required, optional


def training_fields(f: Fields) -> tuple[dict[str, Any], dict[str, Any]]:
    """(required, optional) fields of a training job, with the user's measured speeds."""
    model = st.one_of(
        st.sampled_from(PRESETS),
        f.fields(
            {"params": st.sampled_from(["124M", "350M", "1.3B", "7B", 5e8])},
            {
                "layers": st.integers(1, 96),
                "hidden": st.sampled_from([768, 1024, 4096]),
                "seq_len": st.sampled_from([512, 1024, 2048]),
                "heads": st.sampled_from([12, 16, 32]),
                "kv_heads": st.sampled_from([4, 8]),
                "ffn": st.sampled_from([3072, 11008]),
                "vocab": st.sampled_from([32000, 128256]),
                "tied_embeddings": st.booleans(),
                "active_params": st.sampled_from(["100M", "1B"]),
            },
        ),
    )
    required = {"model": model, "tokens": st.sampled_from(["100M", "1B", "10B", "50B", 2e9])}
    optional = {
        "kind": st.sampled_from(["pretrain", "finetune", "lora", "qlora"]),
        "lora_rank": f.field(st.sampled_from([8, 16, 64])),
        "goodput": f.field(st.sampled_from([0.5, 0.9, 1.0]), "fraction"),
        "precision": st.sampled_from(["bf16", "fp16", "fp8"]),
        "deadline": st.sampled_from(["12h", "1d", "3d", "7d", "2w", "30d", "400d"]),
        "micro_batch": st.sampled_from([1, 4, 16]),
        "checkpointing": st.booleans(),
        "global_batch_tokens": st.sampled_from(["512K", "1M", "4M"]),
        "seq_len": st.sampled_from([1024, 2048]),
        "optimizer": st.sampled_from(["adamw", "adamw-8bit"]),
        "measured": measured(f),
    }
    return required, optional


def deployment(f: Fields) -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from(["office", "datacenter", "cloud"]),
        f.fields(
            {"context": st.sampled_from(["office", "datacenter", "cloud"])},
            {
                "region": st.sampled_from(["US", "DE", "CN", "us", "ZZ", "USA", "\u0423\u0405", "\uff35\uff33", "HK"]),
                "ownership": st.sampled_from(["buy", "rent", "any"]),
                "power_limit_kw": st.sampled_from([3.6, "1500W", "2kW", 50]),
                "electricity_usd_per_kwh": st.just(0.15),
                "pue": st.sampled_from([1.1, 1.5]),
                "hosting_usd_per_kw_month": st.just(150.0),
                "horizon_months": (st.sampled_from([1, 3, 6, 12, 36, 60, 240]), "months"),
                # economics and rental kinds (issue 14), lead times (issue 29)
                "rent_kinds": (
                    st.lists(st.sampled_from(RENT_KINDS), min_size=1, max_size=4, unique=True),
                    "rent_kinds",
                ),
                "lead_time_days": (st.sampled_from([0, 7, 30, 120, 400, 3650]), "days"),
                "utilization": (st.sampled_from([0.2, 0.7, 1.0]), "fraction"),
                "storage_tb": st.sampled_from([0, 10, 500]),
                "liquid_cooling": st.booleans(),
            },
        ),
    )


def top_fields(f: Fields) -> dict[str, Any]:
    """Workload-wide fields: confidence, finance, the budget's basis, the decision basis (issue 30;
    few draws, since every example solves once per draw), mixed GPU types per job."""
    finance = st.fixed_dictionaries(
        {},
        optional={
            "discount_rate": f.field(st.sampled_from([0, 0.05, 0.1, 0.3]), "fraction"),
            "utilization": f.field(st.sampled_from([0.3, 0.7, 1.0]), "fraction"),
        },
    )
    draws = st.sampled_from([40, 48, 60])
    return {
        "confidence": (st.sampled_from([0.5, 0.8, 0.9, 0.99]), "confidence"),
        "finance": finance,
        "budget_basis": (st.sampled_from(["cash", "present_value"]), "basis"),
        "decision": (
            st.one_of(
                st.sampled_from(DECISIONS),
                st.fixed_dictionaries({}, optional={"basis": st.sampled_from(DECISIONS), "draws": draws}),
            ),
            "decision",
        ),
        "allow_mixed": st.booleans(),
    }


def workloads(wild: bool) -> st.SearchStrategy:
    """Workload documents; with `wild`, any field may hold anything at all."""
    f = Fields(wild)
    train, train_optional = training_fields(f)
    serve, serve_optional = serving_fields(f)
    gpus = st.one_of(
        st.integers(1, 16),
        f.fields(
            {},
            {
                "count": st.integers(1, 16),
                "min": st.integers(1, 8),
                "max": st.integers(1, 64),
                "allow": st.lists(st.sampled_from(GPUS[:-1]), min_size=1, max_size=3, unique=True),
                "stock": st.dictionaries(st.sampled_from(GPUS[:-1]), st.integers(0, 64), min_size=1, max_size=2),
                "deny": st.lists(st.sampled_from(GPUS), max_size=2, unique=True),
            },
        ),
    )
    budget = st.sampled_from([500, 5000, "50K", "$1M", "$20M"])
    top = {**top_fields(f), "gpus": gpus, "budget_usd": budget}
    serve_job = f.fields(
        {"kind": st.just("serve"), **serve}, {"name": st.sampled_from(["chat", "api"]), **serve_optional}
    )
    train_job = f.fields(
        train,
        {
            "name": st.sampled_from(["pretrain", "finetune", "a", "b"]),
            "repeat": st.sampled_from([1, 2, 12]),
            **train_optional,
        },
    )
    # serving shorthand: `kind: serve` may be left out (a job with traffic serves); wild cases mix in a
    # training field, which the shorthand must refuse by name
    serve_top = {**serve_optional, "kind": st.just("serve")}
    if wild:
        serve_top.update(
            tokens=st.just("1B"), deadline=st.just("7d"), jobs=st.just([{"model": "gpt2-124m", "tokens": "1B"}])
        )
    return st.one_of(
        f.fields({"deployment": deployment(f), **train}, {"name": st.just("fuzz"), **train_optional, **top}),
        f.fields({"deployment": deployment(f), **serve}, {"name": st.just("fuzz-serve"), **serve_top, **top}),
        f.fields({"deployment": deployment(f), "jobs": st.lists(train_job, min_size=1, max_size=3)}, top),
        f.fields(
            {"deployment": deployment(f), "jobs": st.lists(st.one_of(serve_job, train_job), min_size=1, max_size=2)},
            top,
        ),
    )


def fabric(f: Fields) -> st.SearchStrategy:
    """How an offer's nodes are joined: a published kind and line rate, a kind without its rate,
    none (pods on a general network) or unknown (null, with a note)."""
    return f.field(
        st.one_of(
            st.fixed_dictionaries(
                {
                    "kind": st.sampled_from(["infiniband", "roce", "ethernet"]),
                    "gbps_per_gpu": st.sampled_from([25, 50, 200, 400, 3200]),
                    "source": st.just([SOURCE]),
                }
            ),
            st.fixed_dictionaries({"kind": st.sampled_from(["infiniband", "ethernet"]), "source": st.just([SOURCE])}),
            st.just({"kind": "none", "source": [SOURCE]}),
            st.just({"kind": None, "note": "the provider publishes no network figure"}),
        ),
        "fabric",
    )


# (min_term_hours, max_term_hours): none, a day to six months (capacity blocks), a week, a month to a
# year, one and three years, an hour to a day
TERMS = [(None, None), (24, None), (24, 4368), (168, 168), (720, 8760), (8760, None), (26280, None), (1, 24)]


def offers(f: Fields) -> st.SearchStrategy:
    """One rental offer as a --catalog override writes it (data/catalog_prices.py RentalOffer)."""

    def offer(kind: str, terms: tuple[float | None, float | None]) -> st.SearchStrategy:
        optional: dict[str, Any] = {
            "min_nodes": (st.sampled_from([1, 2, 4, 16]), "nodes"),
            "whole_nodes": st.booleans(),
            "billing_hours": (st.sampled_from([1 / 60, 1, 24, 730]), "hours"),
            "max_gpus_per_order": (st.sampled_from([1, 8, 64, 512, 10_000]), "nodes"),
            "max_gpus_per_provider": (st.sampled_from([8, 256, 2048]), "nodes"),
            "paid": st.sampled_from(["upfront", "monthly", "as_used"]),
            "region": st.sampled_from(["us-east-1", "eu-west-4"]),
            "provisioning": f.field(
                st.one_of(
                    st.fixed_dictionaries(
                        {
                            "days": st.sampled_from([0, 1, 14, 90]),
                            "as_of": st.just("2026-10-01"),
                            "confidence": st.sampled_from(["high", "low"]),
                            "source": st.just([SOURCE]),
                        }
                    ),
                    st.just({"days": None, "note": "starts when capacity frees up"}),
                ),
                "days",
            ),
        }
        if kind in ("spot", "marketplace") or f.wild:
            optional["interruption"] = f.field(
                st.sampled_from([(0.0, 0.05), (0.05, 0.2), (0.5, 1.0)]).map(
                    lambda band: {
                        "rate_low": band[0],
                        "rate_high": band[1],
                        "period_days": 30,
                        "confidence": "medium",
                        "source": [SOURCE],
                    }
                ),
                "fraction",
            )
        required: dict[str, Any] = {
            "provider": st.sampled_from(["Fuzz Cloud", "<script>alert(1)</script> | `id`", "Acme GPU Co."]),
            "usd_per_gpu_hour": (st.sampled_from([0.05, 0.39, 1.99, 2.5, 8.0, 120.0]), "usd_per_hour"),
            "as_of": (st.sampled_from(["2026-11-01", "2025-06", "2026"]), "offer_date"),
            "pricing": st.just(kind),
            "confidence": st.sampled_from(["high", "medium", "low"]),
            "gpus_per_node": (st.sampled_from([1, 2, 4, 8]), "gpus_per_node"),
            "fabric": fabric(f),
            "tier": (st.sampled_from(["hyperscaler", "neocloud", "marketplace"]), "tier"),
            "note": st.just("a fuzzed offer"),
        }
        for name, hours in zip(("min_term_hours", "max_term_hours"), terms):
            if hours is not None:
                required[name] = (st.just(hours), "hours")
        return f.fields(required, optional)

    kinds = st.sampled_from(OFFER_KINDS if not f.wild else OFFER_KINDS + ["reserved_2y", "free_lunch"])
    return (
        st.tuples(kinds, st.sampled_from(TERMS))
        .filter(lambda kt: f.wild or kt[0] != "cluster_term" or kt[1][0] is not None)
        .flatmap(lambda kt: offer(*kt))
    )


def overrides(f: Fields) -> st.SearchStrategy:
    """A --catalog override: for one or two GPUs, rental offers that replace the built-in ones or are
    added to them ("+built-in": the GPU's dated built-in offers, copied in by `override_text`), and
    perhaps a purchase quote and a lead time; the source its figures cite."""
    lead = f.field(
        st.one_of(
            st.fixed_dictionaries(
                {
                    "days": st.sampled_from([0, 7, 60, 300]),
                    "as_of": st.just("2026-10-01"),
                    "confidence": st.just("medium"),
                    "source": st.just([SOURCE]),
                }
            ),
            st.just({"days": None, "note": "no quote yet"}),
        ),
        "days",
    )
    prices = f.fields(
        {
            "rent": st.tuples(st.booleans(), st.lists(offers(f), min_size=1, max_size=3)).map(
                lambda added: (["+built-in"] if added[0] else []) + added[1]
            )
        },
        {
            "purchase": f.fields(
                {"usd": (st.sampled_from([500, 9000, 25000]), "usd_per_hour"), "as_of": st.just("2026-11-01")}, {}
            )
        },
    )
    entry = f.fields(
        {"id": st.sampled_from(OFFER_GPUS if not f.wild else OFFER_GPUS + ["h100-sxn", "fuzz-gpu"]), "prices": prices},
        {"lead_time": lead},
    )
    source = {SOURCE: {"url": "https://example.com/fuzz-prices", "title": "Fuzzed price list", "kind": "primary"}}
    return st.fixed_dictionaries(
        {
            "gpus": st.lists(entry, min_size=1, max_size=2, unique_by=lambda e: str(e.get("id"))),
            "sources": f.field(st.just(source)),
        }
    )


odd_keys = st.dictionaries(
    st.one_of(
        st.sampled_from(["deadlin", "gpu", "modle", "jobs ", "Deployment", "decison", "budget_bases", "measure"]),
        st.integers(),
        st.booleans(),
        st.none(),
        st.text(max_size=6),
    ),
    anything,
    max_size=2,
)
SPLICES = [
    "\t",
    ": ",
    "- ",
    "&a ",
    "*a",
    "*nope",
    "<<: *a\n",
    "!!python/object/apply:os.system ['id'] ",
    "!custom ",
    "\x00",
    "\x07",
    "\ufeff",
    "\n---\n",
    "{",
    "]",
    "'",
    '"',
    "#",
    "\n  ",
    "? ",
    "%YAML 1.1\n",
]
edits = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPLICES + ["<cut>"])), max_size=3)


def render(doc: dict, extra: dict, cuts: list) -> bytes:
    """The document as YAML text, with `extra` keys added and `cuts` applied to the text."""
    text = yaml.safe_dump({**doc, **extra}, allow_unicode=True, sort_keys=False, width=10**6)
    for position, splice in cuts:
        at = position % (len(text) + 1)
        text = text[:at] + text[at + 1 + position % 7 :] if splice == "<cut>" else text[:at] + splice + text[at:]
    return text.encode("utf-8", "surrogatepass")


_BUILT_IN: dict[str, list[dict]] = {}


def override_text(override: dict | None) -> bytes | None:
    """The override as YAML text, "+built-in" replaced by the GPU's dated built-in offers (an
    override's price needs its date; an undated listing is documentation)."""
    if override is None:
        return None
    if not _BUILT_IN:
        from advisor.data.catalog import load_catalog

        _BUILT_IN.update(
            {g.id: [o.model_dump(mode="json") for o in g.prices.rent if o.as_of] for g in load_catalog().gpus.values()}
        )
    doc = {**override, "gpus": [dict(e) for e in override["gpus"]]}
    for e in doc["gpus"]:
        prices = e.get("prices")
        if isinstance(prices, dict) and isinstance(prices.get("rent"), list) and "+built-in" in prices["rent"]:
            rent = [o for o in prices["rent"] if o != "+built-in"]
            e["prices"] = {**prices, "rent": _BUILT_IN.get(str(e.get("id")), []) + rent}
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=10**6).encode("utf-8", "surrogatepass")


def documents(case: tuple) -> tuple[bytes, bytes | None]:
    """(the workload file's bytes, the catalog override's or None) of a case."""
    doc, extra, cuts, override = case
    return render(doc, extra, cuts), override_text(override)


# A case is (document, extra keys, text edits, catalog override or None): wild ones test the error
# paths; sane ones, with sensible values only, are mostly valid, so that the plan path itself
# (estimate, rules, MILP, explanations) is fuzzed. A third come with an override.
wild = st.tuples(workloads(wild=True), odd_keys, edits, st.one_of(st.none(), st.none(), overrides(Fields(True))))
sane = st.tuples(
    workloads(wild=False), st.just({}), st.just([]), st.one_of(st.none(), st.none(), overrides(Fields(False)))
)
