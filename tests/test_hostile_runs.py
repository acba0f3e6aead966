"""Hostile RUNS.csv files for `advisor calibrate` (hostile22): a column out of the range a workload
allows for the same figure, a word or flag not in its list, a batch under one sequence, /dev/zero,
a binary file, too many runs -- each exit 2 naming the file, the line, the column and what is
allowed; a BOM, standard input and a sub-unit speed are read as written."""

from __future__ import annotations

import pytest

from advisor.data import bounds
from advisor.inputs.quantities import MAX_GPUS

HEADER = "gpu,count,tokens_per_s,model,kind,strategy,attention_kernel,checkpointing,global_batch_tokens,params,layers,hidden,heads\n"
GOOD = {"gpu": "h100-sxm", "count": "8", "tokens_per_s": "400000", "model": "gpt2-1558m"}


def row(**change: str) -> str:
    cells = {**GOOD, **change}
    return HEADER + ",".join(cells.get(k, "") for k in HEADER.strip().split(",")) + "\n"


@pytest.mark.parametrize(
    "change, field, allowed",
    [
        ({"count": "1e300"}, "count", f"from 1 to {MAX_GPUS:,}"),
        ({"tokens_per_s": "inf"}, "tokens_per_s", "must be a finite number above zero (given inf)"),  # "above zero"
        ({"kind": "bogus"}, "kind", "pretrain, finetune, lora, qlora"),
        ({"strategy": "bogus"}, "strategy", "ddp, zero1, zero2, zero3, fsdp"),
        ({"attention_kernel": "fa9"}, "attention_kernel", "one of fa2"),
        ({"checkpointing": "maybe"}, "checkpointing", "is not true or false"),
        ({"global_batch_tokens": "1"}, "global_batch_tokens", "at least 1,024"),
        ({"global_batch_tokens": "1e300"}, "global_batch_tokens", "from 0 to 1e+15"),
        ({"model": "", "params": "1e-300", "layers": "12", "hidden": "768", "heads": "12"}, "params", "from 1 to"),
        ({"model": "", "params": "124e6", "layers": "12", "hidden": "1e9", "heads": "12"}, "hidden", "to 200,000"),
    ],
)
def test_a_run_column_out_of_its_range_or_list_is_refused(run, write, tmp_path, change, field, allowed):
    """Each of these was fitted (exit 0): 1e300 GPUs printed as a 300-digit count, `kind: bogus` read as
    pretraining, `checkpointing: maybe` as no, a batch of 1 token raised to whole sequences."""
    code, out, err = run("calibrate", write(row(**change), "runs.csv"), "-o", tmp_path / "est.yaml")
    assert code == 2 and not out, err
    assert f"runs.csv, line 2, field {field}: " in err and allowed in err and "Traceback" not in err, err


def test_a_runs_precision_not_in_the_workloads_list_is_refused_as_precision(run, write, tmp_path):
    """`precision: fp3` was refused as "field count: ... no fp3 tensor rate", naming the wrong column and
    no allowed value; a workload's job takes bf16, fp16 or fp8."""
    runs = "gpu,count,tokens_per_s,model,precision\nh100-sxm,8,400000,gpt2-1558m,fp3\n"
    code, out, err = run("calibrate", write(runs, "runs.csv"), "-o", tmp_path / "est.yaml")
    assert code == 2 and not out, err
    assert "runs.csv, line 2, field precision: 'fp3' is not one of bf16, fp16, fp8" in err, err


def test_a_runs_file_is_read_as_a_workload_is(run, write, tmp_path):
    """/dev/zero was read without end (killed at 15 s) and 5.8 MB of runs fitted for hours: a runs file
    is read through the workload's loader (at most MAX_BYTES, `-` for standard input, a BOM allowed),
    and more than MAX_RUNS runs are refused before any fit."""
    out = tmp_path / "est.yaml"
    code, _, err = run("calibrate", "/dev/zero", "-o", out)
    assert code == 2 and "the limit is 1,000,000 bytes" in err, err
    (tmp_path / "bin.csv").write_bytes(b"gpu,count\n\xff\xfe\x00\x81")
    code, _, err = run("calibrate", tmp_path / "bin.csv", "-o", out)
    assert code == 2 and "bin.csv: is not UTF-8 text (byte 10)" in err, err
    many = HEADER + "".join(row().splitlines(keepends=True)[1] for _ in range(bounds.MAX_RUNS + 1))
    code, _, err = run("calibrate", write(many, "many.csv"), "-o", out)
    assert code == 2 and f"{bounds.MAX_RUNS + 1:,} runs; the limit is {bounds.MAX_RUNS:,}" in err, err
    code, text, err = run("calibrate", write("\ufeff" + row(tokens_per_s="400000"), "bom.csv"), "-o", out)
    assert code == 0 and "h100-sxm x 8" in text, err
    # (a sub-unit speed, once printed as "0", is no run at all now: tests/test_hostile_inputs.py)


@pytest.mark.parametrize(
    "text, said",
    [
        (
            "# my runs\ngpu;count;tokens_per_s;model\nh100-sxm;8;400000;gpt2-1558m\n",
            "line 2: the header has no gpu column",
        ),
        ("GPU,COUNT,TOKENS_PER_S,MODEL\nh100-sxm,8,400000,gpt2-1558m\n", "line 1: the header has no gpu column"),
        ("gpu,model,count\nh100-sxm,gpt2-1558m,8\n", "line 1: the header has no tokens_per_s or tokens_per_s_per_gpu"),
        (HEADER + row().splitlines()[1] + ",extra,cells\n", "line 2: 15 cells, but the header names 13 columns"),
        # review23a #4: a repeated column or a column beside its alias read one and dropped the other (x 9, not 8)
        (
            "gpu,count,tokens_per_s,model,count\nh100-sxm,8,400000,gpt2-1558m,9\n",
            "line 1: the header names count twice",
        ),
        (
            "gpu,count,gpu_count,tokens_per_s,model\nh100-sxm,8,16,400000,gpt2-1558m\n",
            "line 1: the header names both count and gpu_count, one column under two names",
        ),
    ],
)
def test_a_runs_header_without_its_columns_or_a_row_beyond_it_is_refused(run, write, tmp_path, text, said):
    """A semicolon-separated or capitalised header was read as unknown columns and the first run refused
    as "field gpu: unknown GPU id ''" (the wrong line and cause); a row's cells beyond the header were
    dropped silently (exit 0)."""
    code, out, err = run("calibrate", write(text, "runs.csv"), "-o", tmp_path / "est.yaml")
    assert code == 2 and not out and f"runs.csv, {said}" in err, err


def test_a_runs_header_with_spaces_after_its_commas_is_read(run, write, tmp_path):
    """review23a #4: 'gpu, count, tokens_per_s, model' passed the header check, then the first run's
    count was 'missing' (its column was ' count'): the names are read without the spaces, as the
    same file without them."""
    rows = "h100-sxm,8,400000,gpt2-1558m\n"
    spaced = run("calibrate", write("gpu, count, tokens_per_s, model\n" + rows, "a.csv"), "-o", tmp_path / "a.yaml")
    plain = run("calibrate", write("gpu,count,tokens_per_s,model\n" + rows, "b.csv"), "-o", tmp_path / "b.yaml")
    assert spaced[0] == plain[0] == 0, spaced
    assert (tmp_path / "a.yaml").read_text().replace("a.csv", "b.csv") == (tmp_path / "b.yaml").read_text()


def test_a_run_copied_twice_is_refused_naming_both_lines(run, write, tmp_path):
    """Two identical lines were fitted as two runs: "MAPE in-sample 1.1%, leave-one-out 1.1%", each copy
    predicted by the other, the error a memo then quotes for the user's estimator."""
    text = row() + row().split("\n", 1)[1]
    code, _, err = run("calibrate", write(text, "runs.csv"), "-o", tmp_path / "est.yaml")
    assert code == 2 and "line 3: the same run as line 2" in err and "keep one" in err, err
