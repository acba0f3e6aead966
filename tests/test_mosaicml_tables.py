"""bench/mosaicml_tables.py times every row of MosaicML's two H100 tables as the set times the rows of
them it holds (docs/accuracy.md's diagnosis of the mosaicml-h100 stacks rests on it): each set row's
quote is a line of the copied table, and the bench's row for that line is the set's row."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import mosaicml_tables  # noqa: E402  (bench/ is not a package)
from calibration_rows import load_rows  # noqa: E402

FIELDS = (
    "seq_len",
    "gpu_count",
    "micro_batch",
    "global_batch_tokens",
    "strategy",
    "checkpointing",
    "params",
    "layers",
    "hidden",
    "grad_reduce_bytes",
    "attention_kernel",
    "fused_elementwise",
)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_every_set_row_is_a_table_line_timed_as_the_set_times_it():
    rows = load_rows()
    shapes = {r["id"]: r for r in rows}
    for stack, text in mosaicml_tables.TABLES:
        held = [r for r in rows if r["group"] == stack]
        lines = [_cells(x) for x in text.splitlines()]
        bench = mosaicml_tables.table_rows(text, shapes)
        assert len(held) >= 3 and len(bench) == len(lines)
        for r in held:
            hits = [i for i, c in enumerate(lines) if c == _cells(r["quote"])]
            assert len(hits) == 1, f"{r['id']}: its quote is not one line of the copied {stack} table"
            b = bench[hits[0]]
            assert {k: b[k] for k in FIELDS} == {k: r[k] for k in FIELDS}, r["id"]
            assert float(b["tokens_per_s_per_gpu"]) == float(r["tokens_per_s_per_gpu"]), r["id"]


def test_a_line_reads_its_own_layout():
    """The 1B run on 512 GPUs: SHARD_GRAD_OP is ZeRO-2, the global batch is sequences x sequence length."""
    shapes = {r["id"]: r for r in load_rows()}
    row = mosaicml_tables.table_rows(mosaicml_tables.H100_LARGE, shapes)[-3]
    assert (row["gpu_count"], row["strategy"], row["micro_batch"], row["global_batch_tokens"]) == (
        "512",
        "zero2",
        "12",
        str(6144 * 2048),
    )
    assert row["checkpointing"] == "false" and row["tokens_per_s_per_gpu"] == "39837.7"
