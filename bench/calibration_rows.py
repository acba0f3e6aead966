"""The rows of catalog/calibration.csv as the estimator's jobs and GPUs: what every calibration
bench reads first (bench/calibration.py fits and predicts them; bench/calibration_values.py
computes values from them)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.perf import JobSpec, ModelSpec  # noqa: E402
from advisor.perf.training import op_sac_recompute_fraction  # noqa: E402

CALIBRATION = ROOT / "catalog" / "calibration.csv"


def load_rows(path: Path = CALIBRATION) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def _int(v):
    return int(float(v)) if v not in ("", None) else None


def _bool(v):
    return None if v in ("", None) else v.strip().lower() == "true"


def job_of(row: dict) -> JobSpec:
    m = ModelSpec(
        params=float(row["params"]),
        layers=int(row["layers"]),
        hidden=int(row["hidden"]),
        heads=int(row["heads"]),
        kv_heads=_int(row["kv_heads"]),
        ffn=_int(row["ffn"]),
        vocab=int(row["vocab"]),
        seq_len=int(row["seq_len"]),
        tied_embeddings=_bool(row["tied_embeddings"]) or False,
        name=row["model"],
    )
    return JobSpec(
        model=m,
        kind=row.get("kind") or "pretrain",
        precision=row["precision"],
        micro_batch=_int(row["micro_batch"]),
        checkpointing=_bool(row["checkpointing"]),
        global_batch_tokens=float(row["global_batch_tokens"]),
        strategy=row["strategy"] or None,
        tensor_parallel=_int(row["tensor_parallel"]),
        pipeline_parallel=_int(row["pipeline_parallel"]),
        context_parallel=_int(row.get("context_parallel")),
        attention_kernel=row.get("attention_kernel") or None,
        grad_reduce_bytes=float(row["grad_reduce_bytes"] or 2),
        recompute_fraction=op_sac_recompute_fraction(m, row["precision"])
        if row.get("selective_ac") == "op"
        else float(row.get("recompute_fraction") or 0.0),
        virtual_stages=_int(row.get("virtual_stages")),
        software_era=row.get("software_era") or None,
        tp_overlap=_bool(row.get("tp_overlap")) or False,
        fp8_param_gather=_bool(row.get("fp8_param_gather")) or False,
        fp8_tp_gather=_bool(row.get("fp8_tp_gather")) or False,
        fused_elementwise=_bool(row.get("fused_elementwise")) or False,
        software="vendor_tuned" if row.get("software") == "vendor_tuned" else "public",  # in_house: not the vendor's
    )


def gpu_of(row: dict, catalog, p):
    """The GPU the row ran: its catalog entry, or a variant of it (catalog/estimator.yaml
    `calibration_variants`: the memory bandwidth the source states, and the dense rates scaled by
    a fitted factor where the source bounds but does not give them). Every prediction goes through
    it; a variant keeps its entry's id and architecture, so a row's generation (group_of, the band,
    the uncertainty families) is its catalog entry's."""
    gpu = catalog.gpus[row["gpu"]]
    name = row.get("gpu_variant")
    if not name:
        return gpu
    v = (p.calibration_variants or {})[name]
    scale = float(v.get("compute_scale", 1.0))
    tensor = {
        k: f.model_copy(update={"value": f.value * scale}) if f.value is not None else f
        for k, f in gpu.tensor_tflops.items()
    }
    update = {"tensor_tflops": tensor}
    if v.get("memory_bandwidth_gbps"):
        update["memory_bandwidth_gbps"] = gpu.memory_bandwidth_gbps.model_copy(
            update={"value": float(v["memory_bandwidth_gbps"])}
        )
    return gpu.model_copy(update=update)


def measured(row: dict) -> float:
    return float(row["tokens_per_s_per_gpu"])
