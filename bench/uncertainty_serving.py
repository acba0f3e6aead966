"""The serving throughput error behind a serving replica's draws: log(measured / held-out predicted
requests/s) of each published serving run (catalog/serving_accuracy.yaml, leave-one-source-out:
bench/serving_accuracy.py), grouped by GPU generation with bench/uncertainty.py's rank rule and
shrinkage, so a generation with serving runs takes its own band and one without the wide default."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import yaml
from uncertainty_residuals import family

ROOT = Path(__file__).resolve().parent.parent


def serving_residuals(catalog) -> list[dict]:
    """[{'family', 'precision', 'e', 'id'}] of every run the serving accuracy table holds out."""
    acc = yaml.safe_load((ROOT / "catalog" / "serving_accuracy.yaml").read_text(encoding="utf-8"))
    with (ROOT / "catalog" / "serving_calibration.csv").open(encoding="utf-8") as f:
        gpu = {r["id"]: r["gpu"] for r in csv.DictReader(f)}
    return [
        {"id": k, "family": family(catalog, gpu[k]), "precision": "any", "e": math.log(v["measured"] / v["held_out"])}
        for k, v in sorted(acc["rows"].items())
    ]


def serving_section(catalog, distributions) -> dict:
    """The `serving` block of catalog/uncertainty.yaml (`distributions`: bench/uncertainty.py's)."""
    res = serving_residuals(catalog)
    fams = sorted({family(catalog, g) for g in catalog.gpus})
    dist = distributions(res, fams)
    inside = sum(dist["families"][x["family"]]["q10"] <= x["e"] <= dist["families"][x["family"]]["q90"] for x in res)
    return {
        "quantity": "log(measured / estimated requests/s of a serving replica); real throughput = estimate x exp(q)",
        "source": "catalog/serving_accuracy.yaml rows: each published serving run (MLPerf Inference, TensorRT-LLM, "
        "AMD ROCm, Oracle; offline and server) predicted with its own source left out (bench/serving_accuracy.py)",
        "derived": [
            "families: GPU generation (architecture's first word), every precision and scenario together; the speed "
            "section's rank rule and shrinkage; a generation with no serving run takes `unmeasured`",
            "a GPU type's serving draw reads the same standard normal as its training speed (explain/draws.py)",
        ],
        "rows": len(res),
        "in_sample_coverage_p10_p90": f"{inside}/{len(res)} = {100 * inside / len(res):.0f}%",
        "families": dist["families"],
        "unmeasured": dist["unmeasured"],
    }
