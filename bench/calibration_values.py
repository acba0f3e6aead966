"""Values computed from the calibration rows, not fitted (bench/calibration.py uses them in every
fold; bench/accuracy.py prints them for catalog/estimator.yaml): each run's MFU and the medians by
group, the runs with today's attention kernels, the evidence table, the datasheet derating from
the basis=pair rows, and the software share of a run's offset (perf/measured.py)."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

from calibration_rows import job_of, measured

from advisor.data.evidence import DATASHEET, evidence
from advisor.perf import evaluate, mfu_flops_per_token
from advisor.perf.speed_basis import VENDOR_TUNED, derating_entry
from advisor.perf.training import generation, server_size

MEDIAN_BASES = ("measured", "derived")  # steady state: end-to-end (goodput) rows include failures and evaluation


def row_mfu(row: dict, catalog) -> float:
    """The run's MFU in the PaLM convention: tokens/s per GPU x (6N + 12Lsh) / the dense peak of its
    catalog GPU at its precision."""
    g = catalog.gpus[row["gpu"]]
    return (
        measured(row)
        * mfu_flops_per_token(job_of(row).model, row.get("kind") or "pretrain")
        / (g.dense_tflops(row["precision"]) * 1e12)
    )


def mfu_medians(rows: list[dict], catalog, p) -> dict:
    """The median MFU of today's steady-state runs (basis measured or derived, no older software era)
    by generation and precision, `<precision>_multiserver` for runs spanning servers, and `default`
    per precision over every such run: catalog/estimator.yaml `mfu_median`, the base-case ceiling
    (advisor/perf/speed_basis.py). A generation with multi-server runs only uses them for both."""
    groups: dict[tuple, list] = {}
    for r in rows:
        if r["basis"] not in MEDIAN_BASES or r.get("software_era"):
            continue
        g = catalog.gpus[r["gpu"]]
        multi = int(r["gpu_count"]) > server_size(g, p)
        mfu = row_mfu(r, catalog)
        groups.setdefault((generation(g), r["precision"] + ("_multiserver" if multi else "")), []).append(mfu)
        groups.setdefault(("default", r["precision"]), []).append(mfu)
    out: dict = {}
    for (gen, key), v in sorted(groups.items()):
        out.setdefault(gen, {})[key] = round(statistics.median(v), 4)
    for entry in out.values():
        for key in [k for k in entry if k.endswith("_multiserver")]:
            entry.setdefault(key[: -len("_multiserver")], entry[key])
    return out


def mfu_floor(rows: list[dict], catalog) -> dict:
    """The lowest MFU of the steady-state runs (basis measured or derived, any software era) and its
    row: catalog/estimator.yaml `measured_mfu_floor`, below which a user's own measurement is
    questioned (advisor/perf/measured.py `implausibly_slow`)."""
    low = min((r for r in rows if r["basis"] in MEDIAN_BASES), key=lambda r: row_mfu(r, catalog))
    return {"value": round(row_mfu(low, catalog), 4), "run": low["id"]}


def today_kernel_runs(rows: list[dict], catalog) -> dict:
    """Runs that used today's attention kernels (no attention_kernel=fa2), by generation and precision:
    catalog/estimator.yaml `today_kernel_runs` (advisor/perf/speed_basis.py credits today's kernels in
    the base case only where such runs exist)."""
    out: dict = {}
    for r in rows:
        if r["basis"] in ("measured", "goodput", "derived") and not r.get("attention_kernel"):
            entry = out.setdefault(generation(catalog.gpus[r["gpu"]]), {})
            entry[r["precision"]] = entry.get(r["precision"], 0) + 1
    return dict(sorted(out.items()))


def _underated(p):
    """Params without the datasheet derating and AMD's software factor: the model a derating multiplies."""
    return replace(
        p, datasheet_derating=None, software_factor={k: v for k, v in (p.software_factor or {}).items() if k != "cdna"}
    )


def pair_deratings(rows: list[dict], catalog, p) -> list[dict]:
    """For each basis=pair group: the measured speed ratio of its two rows (the part without a run
    over the calibrated part), the model's ratio for the same jobs (no derating, no vendor software
    factor), and their quotient, one estimate of the datasheet derating. `software`: the stack the
    part without a run ran (calibration.csv `software`)."""
    q = _underated(p)
    out = []
    for group in sorted({r["group"] for r in rows if r["basis"] == "pair"}):
        a, b = sorted((r for r in rows if r["group"] == group), key=lambda r: r["gpu"] in REFERENCE_GPUS)
        pa = evaluate(job_of(a), catalog.gpus[a["gpu"]], int(a["gpu_count"]), q).tokens_per_s_per_gpu
        pb = evaluate(job_of(b), catalog.gpus[b["gpu"]], int(b["gpu_count"]), q).tokens_per_s_per_gpu
        measured_ratio, model_ratio = measured(a) / measured(b), pa / pb
        out.append(
            {
                "group": group,
                "gpus": (a["gpu"], b["gpu"]),
                "precision": a["precision"],
                "measured_ratio": measured_ratio,
                "model_ratio": model_ratio,
                "derating": measured_ratio / model_ratio,
                "software": a.get("software") or "public",
            }
        )
    return out


def direct_deratings(rows: list[dict], catalog, p) -> list[dict]:
    """Steady-state runs of the vendor's tuned software on a part with no fitted run (a `datasheet`
    part in the evidence table in force) whose derating is measured per stack: measured tokens/s over
    the model's for the same job without the derating, one estimate of the vendor-tuned derating each
    (a pair whose calibrated side is the model itself). AMD's MLPerf LoRA runs, A001-A004."""
    q = _underated(p)
    out = []
    for r in rows:
        g = catalog.gpus[r["gpu"]]
        if r["basis"] != "measured" or r.get("software") != VENDOR_TUNED:
            continue
        if evidence(g, r["precision"]).level != DATASHEET or VENDOR_TUNED not in (derating_entry(g, p) or {}):
            continue
        model = evaluate(job_of(r), g, int(r["gpu_count"]), q).tokens_per_s_per_gpu
        out.append({"id": r["id"], "group": r["group"], "gpu": r["gpu"], "derating": measured(r) / model})
    return out


def deratings(rows: list[dict], catalog, p) -> dict:
    """catalog/estimator.yaml `datasheet_derating.cdna` from the rows: the public factor is the median of
    the pairs measured on the public stack (the median, not the best, issue 30; every pair when a fold
    has none), the best pair of any stack its upper end (a buyer may move to the vendor's code);
    `vendor_tuned` is the median of the vendor-tuned evidence (the pairs run with the vendor's own code
    and its direct runs, direct_deratings), the best its upper end. docs/model.md §1.7."""
    pairs = pair_deratings(rows, catalog, p)
    tuned = [x["derating"] for x in pairs if x["software"] == VENDOR_TUNED]
    tuned += [x["derating"] for x in direct_deratings(rows, catalog, p)]
    public = [x["derating"] for x in pairs if x["software"] != VENDOR_TUNED] or [x["derating"] for x in pairs]
    out = {**derating_from_pairs(public), "upper": derating_from_pairs([x["derating"] for x in pairs])["upper"]}
    if tuned:
        out["vendor_tuned"] = derating_from_pairs(tuned)
    return out


# the calibration source each `mature` derating of catalog/estimator.yaml was measured on (its held-out error)
MATURE_FROM = {"nvidia": "speedrun-4090"}


def with_deratings(rows: list[dict], catalog, p):
    """Params whose CDNA derating (both stacks) is computed from `rows`: a leave-one-source-out fold's,
    so a held-out source's pairs and runs do not set the derating its own rows are predicted with; a
    `mature` derating measured on a held-out source is dropped the same way."""
    table = {k: dict(v) for k, v in (p.datasheet_derating or {}).items()}
    kept = {source_of(r["group"]) for r in rows}
    for vendor, source in MATURE_FROM.items():
        if vendor in table and source not in kept:
            table[vendor].pop("mature", None)
    if "cdna" not in table:
        return replace(p, datasheet_derating=table)
    d = deratings(rows, catalog, p)
    table["cdna"].update(factor=d["factor"], upper=d["upper"])
    if "vendor_tuned" in d and "vendor_tuned" in table["cdna"]:
        table["cdna"]["vendor_tuned"] = dict(
            table["cdna"]["vendor_tuned"], factor=d["vendor_tuned"]["factor"], upper=d["vendor_tuned"]["upper"]
        )
    elif "vendor_tuned" in table["cdna"]:  # no vendor-tuned evidence left: the stack is priced as the public one
        table["cdna"]["vendor_tuned"] = dict(table["cdna"]["vendor_tuned"], factor=d["factor"], upper=d["upper"])
    return replace(p, datasheet_derating=table)


REFERENCE_GPUS = ("h100-sxm", "h200-sxm", "a100-80gb-sxm")  # the calibrated side of a pair


def derating_from_pairs(values: list[float]) -> dict:
    """The base case is the median estimate of the derating, the upper end the best (issue 30: median, not best)."""
    values = sorted(values)
    return {
        "factor": round(statistics.median(values), 3),
        "upper": round(values[-1], 3),
        "lowest": round(values[0], 3),
        "n": len(values),
    }


PUBLISHERS = {
    "mosaicml": "mosaicml",
    "torchtitan": "torchtitan",
    "megatron": "nvidia",
    "mlperf-v3.0-h100": "nvidia",
    "nemo": "nvidia",
    "llama2": "meta",
    "llama3": "meta",
    "speedrun": "speedrun",
    "llmc": "llmc",
    "mt": "nvidia",
    "mlperf-v3.0-gaudi2": "intel",
    "mlperf-v4.0-gaudi2": "intel",
    "intel-gaudi2": "intel",
    "mlperf-v5.0-amd": "amd",
    "mlperf-v5.1-amd": "amd",
    "mlperf-v5.0-nvidia": "nvidia",
}


SAME_SOURCE = {
    # AMD's blog claim (pair P007/P008: MI325X 'up to 8%' over H200 on Llama 2 70B LoRA) reports its MLPerf Training v5.0
    # submissions: rows A003/A004 are that source, so holding one out holds out the other
    "amd-mlperf-v5.0-lora": "mlperf-v5.0-amd-lora",
}


def source_of(group: str) -> str:
    """The source a `group` of calibration.csv reports (itself unless SAME_SOURCE says): the unit a
    leave-one-source-out fold removes whole."""
    return SAME_SOURCE.get(group, group)


def fold_rows(rows: list[dict], group: str) -> list[dict]:
    """The rows a leave-one-source-out fold keeps when `group` is held out: every other source's, without
    the pairs that report the held-out source (source_of)."""
    return [r for r in rows if source_of(r["group"]) != group]


def publisher(group: str) -> str:
    """The software publisher of a source (calibration.csv `group`): its stack across GPUs."""
    for prefix, name in sorted(PUBLISHERS.items(), key=lambda kv: -len(kv[0])):
        if group.startswith(prefix):
            return name
    return group


def software_share(rows: list[dict], catalog, preds: dict) -> dict:
    """How much of a run's offset from the model is its software and how much its GPU: over publishers
    whose runs span several GPU generations, e = log(measured / predicted) is split into the
    publisher's mean (between publishers: software) and each generation's mean within the publisher
    (hardware); the share is var(publisher means) / (that + mean within-publisher var of generation
    means). catalog/estimator.yaml measured_software_share."""
    cells: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["basis"] not in ("measured", "goodput", "derived") or not preds.get(r["id"]):
            continue
        e = math.log(measured(r) / preds[r["id"]])
        cells.setdefault((publisher(r["group"]), generation(catalog.gpus[r["gpu"]])), []).append(e)
    pubs: dict[str, dict[str, float]] = {}
    for (pub, gen), es in cells.items():
        pubs.setdefault(pub, {})[gen] = statistics.mean(es)
    multi = {pub: gens for pub, gens in pubs.items() if len(gens) >= 2}
    means = [statistics.mean(g.values()) for g in multi.values()]
    between = statistics.pvariance(means) if len(means) > 1 else 0.0
    within = statistics.mean(statistics.pvariance(list(g.values())) for g in multi.values()) if multi else 0.0
    share = between / (between + within) if between + within > 0 else 0.5
    return {"share": round(share, 3), "publishers": sorted(multi), "between": between, "within": within}


EVIDENCE_BASES = ("measured", "goodput", "derived")  # runs the estimator predicts (pair rows set a ratio only)


def evidence_table(rows, catalog) -> dict:
    """catalog/accuracy.yaml `evidence`: per GPU id its generation and, per precision, how many runs
    of the calibration set the estimator is fitted to ran on it and from which sources
    (advisor/data/evidence.py reads it). A run scored but not fitted (its layout not published, such
    as MLPerf's tuned LoRA runs) does not lift a part's datasheet derating: the model cannot predict
    it like for like, so it cannot vouch for the part's other speeds."""
    gpus: dict = {}
    for r in rows:
        if r["basis"] not in EVIDENCE_BASES or r["fit"] != "yes":
            continue
        entry = gpus.setdefault(r["gpu"], {"generation": generation(catalog.gpus[r["gpu"]]), "precisions": {}})
        prec = entry["precisions"].setdefault(r["precision"], {"runs": 0, "sources": []})
        prec["runs"] += 1
        if r["group"] not in prec["sources"]:
            prec["sources"].append(r["group"])
    for entry in gpus.values():
        for prec in entry["precisions"].values():
            prec["sources"].sort()
    return {
        "basis": "catalog/calibration.csv rows of basis " + ", ".join(EVIDENCE_BASES) + " that the fit uses (fit: yes)",
        "gpus": dict(sorted(gpus.items())),
    }
