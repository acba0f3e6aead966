"""The performance model: memory worked examples, layouts, monotonicity, the 4090's missing
peer-to-peer, and the `advisor estimate` command. Accuracy against measured runs is not tested
here: bench/accuracy.py measures it (docs/accuracy.md)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import advisor
from advisor.perf import (
    GB,
    JobSpec,
    ModelSpec,
    activation_bytes_per_layer,
    evaluate,
    memory_per_gpu,
    min_gpus,
    params_from,
    trainable_params,
)
from advisor.perf.jobspec import preset_spec

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def p(catalog):
    return params_from(catalog)


def gpt(layers: int, hidden: int, seq_len: int = 2048, vocab: int = 50257) -> ModelSpec:
    """A GPT-style shape: 12*L*h^2 in the blocks plus the (tied) embedding."""
    return ModelSpec(
        params=12 * layers * hidden**2 + vocab * hidden,
        layers=layers,
        hidden=hidden,
        heads=max(1, hidden // 128),
        vocab=vocab,
        seq_len=seq_len,
        tied_embeddings=True,
    )


def _preset(catalog, name: str) -> ModelSpec:
    return preset_spec(catalog, name)


def with_p2p(gpu, value: bool):
    ic = gpu.interconnect
    p2p = ic.p2p.model_copy(update={"value": value})
    return gpu.model_copy(update={"interconnect": ic.model_copy(update={"p2p": p2p})})


# --------------------------------------------------------------------------- the article's anchor


def test_gpt2_small_on_one_a100_is_within_30_percent_of_195k():
    e = advisor.estimate(model="gpt2-124m", gpu="a100-80gb-sxm")
    assert e["fits"] and e["gpu_count"] == 1
    assert abs(e["tokens_per_s"] / 195_000 - 1) <= 0.30


def test_rtx_4090_uses_fp32_accumulate_rate_not_330(catalog):
    g = catalog.gpus["rtx-4090"]
    assert g.dense_tflops("bf16") == pytest.approx(165.2)
    assert g.tensor_tflops["fp16_fp16acc"].value == pytest.approx(330.3)
    e = advisor.estimate(model="gpt2-124m", gpu="rtx-4090")
    assert e["dense_tflops"] == pytest.approx(165.2)


def test_memory_bound_share_grows_as_models_shrink():
    small = advisor.estimate(model="gpt2-124m", gpu="h100-sxm")["step_breakdown"]
    large = advisor.estimate(model="gpt2-1558m", gpu="h100-sxm")["step_breakdown"]
    share = lambda sb: sb["memory_s"] / (sb["compute_s"] + sb["memory_s"])  # noqa: E731
    assert share(small) > share(large)


# --------------------------------------------------------------------------- memory


def test_7b_full_finetune_with_adam_worked_example(catalog, p):
    """7B parameters x 16 bytes (bf16 weights 2 + bf16 gradients 2 + fp32 master, m, v 12) = 112 GB:
    more than one 80 GB GPU holds; sharded eight ways by ZeRO-3 the states are 14 GB per GPU."""
    model = ModelSpec(params=7e9, layers=32, hidden=4096, heads=32, vocab=32000, seq_len=2048)
    job = JobSpec(model=model, kind="finetune")
    one = memory_per_gpu(job, 1, 1, True, p, strategy="ddp")
    assert one["weights"] + one["gradients"] + one["optimizer"] == pytest.approx(112 * GB)
    a100 = catalog.gpus["a100-80gb-sxm"]
    assert not evaluate(job, a100, 1, p).fits
    eight = evaluate(replace(job, strategy="zero3"), a100, 8, p)
    assert eight.fits and eight.layout["shards"] == 8
    mem = eight.memory_breakdown
    assert mem["gradients"] + mem["optimizer"] == pytest.approx(14 * 7 / 8, abs=0.01)  # (2 + 12) B x 7e9 / 8
    assert mem["weights"] == pytest.approx(2 * 7 / 8 + 2 * 2 * 7 / 32, abs=0.01)  # shard + two gathered layers


def test_a_7b_model_needs_several_24gb_cards():
    e = advisor.estimate(params="7B", layers=32, hidden=4096, seq_len=2048, gpu="rtx-4090")
    assert not e["fits"] and e["min_gpus"] > 1
    more = advisor.estimate(params="7B", layers=32, hidden=4096, seq_len=2048, gpu="rtx-4090", count=e["min_gpus"])
    assert more["fits"] and more["layout"]["strategy"] == "zero3"


def test_lora_trains_adapters_only_and_needs_far_less_memory(p):
    model = gpt(32, 4096)
    full = JobSpec(model=model, kind="finetune")
    lora = JobSpec(model=model, kind="lora", lora_rank=16)
    assert trainable_params(lora) < 0.01 * model.params
    m_full = memory_per_gpu(full, 1, 1, True, p)
    m_lora = memory_per_gpu(lora, 1, 1, True, p)
    assert m_lora["weights"] == m_full["weights"]  # the frozen base stays in bf16
    assert m_lora["gradients"] + m_lora["optimizer"] < 0.01 * (m_full["gradients"] + m_full["optimizer"])
    assert sum(m_lora.values()) < 0.3 * sum(m_full.values())
    e = advisor.estimate(params="7B", layers=32, hidden=4096, seq_len=2048, gpu="a100-80gb-sxm", kind="lora")
    assert e["fits"] and e["gpu_count"] == 1 and e["job"]["trainable_params"] < 0.01 * e["model"]["params"]


def test_lora_skips_weight_gradients_so_it_is_faster(catalog, p):
    model = gpt(24, 2048)
    g = catalog.gpus["a100-80gb-sxm"]
    full = evaluate(JobSpec(model=model, kind="finetune", micro_batch=4, checkpointing=False), g, 1, p)
    lora = evaluate(JobSpec(model=model, kind="lora", micro_batch=4, checkpointing=False), g, 1, p)
    assert 1.2 < lora.tokens_per_s / full.tokens_per_s < 1.6  # 4N instead of 6N FLOPs per token


def test_8bit_optimizer_keeps_6_bytes_per_parameter_instead_of_12(p):
    model = gpt(12, 768)
    adam = memory_per_gpu(JobSpec(model=model), 1, 1, False, p)["optimizer"]
    eight = memory_per_gpu(JobSpec(model=model, optimizer="adamw-8bit"), 1, 1, False, p)["optimizer"]
    assert adam == pytest.approx(12 * model.params) and eight == pytest.approx(6 * model.params)


def test_activations_follow_korthikanti_with_and_without_checkpointing():
    """Flash attention, no dropout: 32*s*b*h bytes per layer for a 4h GELU MLP (the paper's 34 less
    two dropout masks); full checkpointing keeps the 2*s*b*h input; sequence parallelism divides by t."""
    job = JobSpec(model=gpt(24, 2048, seq_len=4096))
    sbh = 4096 * 8 * 2048
    assert activation_bytes_per_layer(job, 8, False) == pytest.approx(32 * sbh)
    assert activation_bytes_per_layer(job, 8, True) == pytest.approx(2 * sbh)
    assert activation_bytes_per_layer(job, 8, False, tp=4) == pytest.approx(8 * sbh)


def test_zero_stages_shard_more_and_more(p):
    job = JobSpec(model=gpt(32, 4096))
    parts = {s: memory_per_gpu(job, 8, 1, True, p, strategy=s) for s in ("ddp", "zero1", "zero2", "zero3")}
    total = {s: sum(m.values()) for s, m in parts.items()}
    assert total["ddp"] > total["zero1"] > total["zero2"] > total["zero3"]
    assert parts["zero1"]["optimizer"] == pytest.approx(parts["ddp"]["optimizer"] / 8)
    assert parts["zero2"]["gradients"] == pytest.approx(parts["ddp"]["gradients"] / 8)


def test_checkpointing_trades_memory_for_speed():
    on = advisor.estimate(model="gpt2-124m", gpu="rtx-4090", micro_batch=16, checkpointing=True)
    off = advisor.estimate(model="gpt2-124m", gpu="rtx-4090", micro_batch=16, checkpointing=False)
    assert on["memory_per_gpu_gb"] < off["memory_per_gpu_gb"]
    assert 0.6 < on["tokens_per_s"] / off["tokens_per_s"] < 0.9  # a recomputed forward: ~4/3 the work


def test_min_gpus_is_the_smallest_count_that_fits(catalog, p):
    for model in ("gpt2-1558m", "llama-3-8b"):
        job = JobSpec(model=_preset(catalog, model))
        for gid in ("rtx-4090", "a100-80gb-sxm"):
            g = catalog.gpus[gid]
            n = min_gpus(job, g, p)
            assert n is not None and evaluate(job, g, n, p).fits
            assert n == 1 or not any(evaluate(job, g, k, p).fits for k in range(1, n))


# --------------------------------------------------------------------------- layouts and links


def test_the_4090_pays_for_missing_peer_to_peer(catalog, p):
    one = advisor.estimate(model="gpt2-350m", gpu="rtx-4090")
    four = advisor.estimate(model="gpt2-350m", gpu="rtx-4090", count=4)
    assert four["layout"]["interconnect"] == "pcie-via-host"
    assert four["tokens_per_s_per_gpu"] < one["tokens_per_s_per_gpu"]
    # the same card with peer-to-peer on: a sharded job (gradients and weights cross PCIe every
    # micro-batch) runs clearly faster, a once-per-step all-reduce barely notices
    stock = catalog.gpus["rtx-4090"]
    patched = with_p2p(stock, True)
    sharded = JobSpec(model=_preset(catalog, "gpt2-1558m"), strategy="zero3")
    slow, fast = evaluate(sharded, stock, 4, p), evaluate(sharded, patched, 4, p)
    assert fast.layout["interconnect"] == "pcie-p2p" and slow.layout["interconnect"] == "pcie-via-host"
    assert slow.tokens_per_s < 0.95 * fast.tokens_per_s
    assert slow.step_breakdown["comm_s"] > 1.5 * fast.step_breakdown["comm_s"]


def test_tensor_parallelism_is_flagged_when_the_job_needs_it(catalog, p):
    g = catalog.gpus["rtx-4090"]
    big = evaluate(JobSpec(model=_preset(catalog, "llama-3-8b")), g, 8, p)
    assert big.fits and big.layout["tensor_parallel"] > 1 and big.layout["needs_tensor_parallel"]
    assert not evaluate(JobSpec(model=_preset(catalog, "llama-3-8b"), tensor_parallel=1), g, 8, p).fits
    small = evaluate(JobSpec(model=_preset(catalog, "gpt2-124m")), g, 8, p)
    assert small.layout["tensor_parallel"] == 1 and not small.layout["needs_tensor_parallel"]


@SETTINGS
@given(
    layers=st.integers(4, 48),
    hidden=st.sampled_from([1024, 2048, 3072, 4096, 5120]),
    count=st.sampled_from([2, 4, 8]),
    seq=st.sampled_from([1024, 2048, 4096]),
)
def test_without_peer_to_peer_a_layout_without_tensor_parallelism_wins_if_one_fits(
    catalog, p, layers, hidden, count, seq
):
    g = catalog.gpus["rtx-4090"]
    job = JobSpec(model=gpt(layers, hidden, seq))
    if evaluate(replace(job, tensor_parallel=1), g, count, p).fits:
        e = evaluate(job, g, count, p)
        assert e.layout["tensor_parallel"] == 1 and not e.layout["needs_tensor_parallel"]


def test_pipeline_parallelism_reports_its_bubble(catalog, p):
    job = JobSpec(
        model=_preset(catalog, "llama-3-70b"),
        tensor_parallel=8,
        pipeline_parallel=4,
        micro_batch=1,
        global_batch_tokens=4 * 2**20,
    )
    e = evaluate(job, catalog.gpus["h100-sxm"], 64, p)
    m = e.layout["gradient_accumulation"]  # micro-batches per pipeline per step
    assert e.layout["pipeline_bubble"] == pytest.approx(3 / (m * p.pipeline_virtual_stages), abs=1e-4)
    assert e.layout["interconnect"] == "nvlink+network"


def test_plain_1f1b_has_the_bubble_of_one_chunk_per_gpu(catalog, p):
    """A job that says `virtual_stages=1` (torchtitan's "1F1B", DeepSpeed's pipeline) idles
    (q - 1) / m of the step, v times the interleaved schedule's (q - 1) / (m v)."""
    job = JobSpec(
        model=_preset(catalog, "llama-3-70b"),
        tensor_parallel=8,
        pipeline_parallel=4,
        micro_batch=1,
        global_batch_tokens=4 * 2**20,
        virtual_stages=1,
    )
    e = evaluate(job, catalog.gpus["h100-sxm"], 64, p)
    m = e.layout["gradient_accumulation"]
    assert e.layout["pipeline_bubble"] == pytest.approx(3 / m, abs=1e-4)
    assert e.tokens_per_s < evaluate(replace(job, virtual_stages=None), catalog.gpus["h100-sxm"], 64, p).tokens_per_s


def test_per_op_selective_checkpointing_recomputes_wk_wo_and_w3():
    """torchtitan's per-op policy saves every mm but the 2nd, 4th and 6th of wq, wk, wv, wo, w1,
    w3, w2: Llama 3.1 8B (h 4096, 8 of 32 heads for k/v, MLP 14336) recomputes this share of its
    forward matmul FLOPs; fp8 linears (aten._scaled_mm, not in the save list) recompute all."""
    from advisor.perf.training import op_sac_recompute_fraction

    m = ModelSpec(params=8.03e9, layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256, seq_len=8192)
    h, kv, f = 4096, 1024, 14336
    by_hand = (h * kv + h * h + h * f) / (h * h + h * kv + h * kv + h * h + 3 * h * f)
    assert by_hand == pytest.approx(0.3654, abs=1e-4)
    assert op_sac_recompute_fraction(m, "bf16") == pytest.approx(by_hand)
    assert op_sac_recompute_fraction(m, "fp8") == 1.0


def test_selective_recompute_costs_between_none_and_full(catalog, p):
    """Recomputing a share of the forward matmuls is slower than none and faster than full
    checkpointing, in the same layout: the step's structure, without the published-MFU ceiling
    (which a fast enough layout reaches with or without some recompute) or the base-case hold."""
    m = _preset(catalog, "llama-3-8b")
    g = catalog.gpus["h100-sxm"]
    base = JobSpec(
        model=m,
        strategy="zero3",
        tensor_parallel=1,
        pipeline_parallel=1,
        micro_batch=1,
        checkpointing=False,
        global_batch_tokens=8 * m.seq_len,
        attention_kernel="fa2",
    )
    p = replace(p, mfu_cap=None)
    none = evaluate(base, g, 8, p).tokens_per_s
    some = evaluate(replace(base, recompute_fraction=0.37), g, 8, p).tokens_per_s
    full = evaluate(replace(base, checkpointing=True), g, 8, p).tokens_per_s
    assert full < some < none


def test_an_older_software_era_slows_only_the_rows_that_name_it(catalog, p):
    """`software_era` (calibration rows) scales compute by its fitted factor; a user's job has none."""
    from advisor.perf.training import era_factor

    job = JobSpec(model=_preset(catalog, "gpt2-124m"))
    assert era_factor(job, p) == 1.0
    old = replace(job, software_era="megatron-2021")
    assert era_factor(old, p) == p.software_era_factor["megatron-2021"] < 1.0
    g = catalog.gpus["a100-80gb-sxm"]
    assert evaluate(old, g, 1, p).tokens_per_s < evaluate(job, g, 1, p).tokens_per_s


def test_a_missing_bf16_cap_follows_from_the_fp8_cap_by_the_gemm_ratio(catalog, p):
    """With only an fp8 run published (Gaudi2 when its bf16 source is held out), the bf16 cap is
    the fp8 cap x (best bf16 GEMM share / best fp8 GEMM share), as fp8 follows from bf16."""
    from advisor.perf.published_mfu import mfu_cap
    from advisor.perf.training import achievable_fraction

    g = catalog.gpus["gaudi2"]
    q = replace(p, mfu_cap={"gaudi": {"fp8": 0.379}})
    ratio = achievable_fraction(g, "bf16", q) / achievable_fraction(g, "fp8", q)
    assert mfu_cap(g, "bf16", q) == pytest.approx(0.379 * ratio)


def test_a_missing_cap_across_servers_follows_from_the_other_precisions_multiserver_run(catalog, p):
    """A job spanning servers with no run at its precision takes the other precision's best
    multi-server run (not its single-server one), scaled by the GEMM ratio; within a server the
    single-server run: Gaudi2 bf16 from the fp8 runs of Intel's table (47.0% on 8, 43.8% on 64)."""
    from advisor.perf.published_mfu import mfu_cap
    from advisor.perf.training import achievable_fraction

    g = catalog.gpus["gaudi2"]
    q = replace(p, mfu_cap={"gaudi": {"fp8": 0.470, "fp8_multiserver": 0.438}})
    ratio = achievable_fraction(g, "bf16", q) / achievable_fraction(g, "fp8", q)
    assert mfu_cap(g, "bf16", q, 384) == pytest.approx(0.438 * ratio)
    assert mfu_cap(g, "bf16", q, 8) == pytest.approx(0.470 * ratio)
    assert mfu_cap(g, "fp8", q, 64) == pytest.approx(0.438) and mfu_cap(g, "fp8", q, 8) == pytest.approx(0.470)


def test_a_sibling_gpu_reaches_its_generations_published_mfu_in_the_ratio_of_its_gemm_share(catalog, p):
    """The Gaudi rows ran on Gaudi 2 (GEMMs at 96.9% / 95.5% of its peak); Gaudi 3's reach 67.7% / 70.3%
    (stas00's MAMF table). Its caps are Gaudi 2's scaled by that ratio, so a capped 70B job on 64 cards
    runs at the MAMF ratio of the two (measured: 1,243.0 / 418.7 bf16, 1,289.5 / 826.5 fp8 TFLOPS),
    not at Gaudi 2's MFU of Gaudi 3's paper peak (4.2x and 2.1x before)."""
    from advisor.perf.published_mfu import mfu_cap

    g2, g3 = catalog.gpus["gaudi2"], catalog.gpus["gaudi3"]
    assert mfu_cap(g3, "bf16", p) == pytest.approx(0.42 * 0.677 / 0.969, rel=1e-3)
    assert mfu_cap(g3, "fp8", p, 64) == pytest.approx(0.438 * 0.703 / 0.955, rel=1e-3)
    assert mfu_cap(g2, "fp8", p, 64) == pytest.approx(0.438)  # the GPU the runs ran on: unscaled
    job = JobSpec(model=_preset(catalog, "llama-2-70b"))
    for precision, measured in (("bf16", 1243.0 / 418.7), ("fp8", 1289.5 / 826.5)):
        spec = replace(job, precision=precision)
        ratio = evaluate(spec, g3, 64, p).tokens_per_s / evaluate(spec, g2, 64, p).tokens_per_s
        assert ratio == pytest.approx(measured, rel=0.05), precision


# --------------------------------------------------------------------------- monotonicity


@SETTINGS
@given(
    layers=st.integers(2, 60),
    hidden=st.integers(4, 48).map(lambda k: 128 * k),
    more_layers=st.integers(0, 24),
    more_hidden=st.integers(0, 16).map(lambda k: 128 * k),
    gpu=st.sampled_from(["rtx-4090", "a100-80gb-sxm", "h100-sxm"]),
    count=st.sampled_from([1, 2, 4, 8]),
)
def test_a_larger_model_never_gets_more_tokens_per_s(catalog, p, layers, hidden, more_layers, more_hidden, gpu, count):
    g = catalog.gpus[gpu]
    small = JobSpec(model=gpt(layers, hidden), global_batch_tokens=2**21)
    large = replace(small, model=gpt(layers + more_layers, hidden + more_hidden))
    e_small, e_large = evaluate(small, g, count, p), evaluate(large, g, count, p)
    if e_large.fits:
        assert e_small.fits
        assert e_large.tokens_per_s <= e_small.tokens_per_s * (1 + 1e-9)


@SETTINGS
@given(
    model=st.sampled_from(["gpt2-124m", "gpt2-350m", "gpt2-774m", "gpt2-1558m", "llama-3-8b"]),
    gpu=st.sampled_from(["a100-80gb-sxm", "a100-40gb-sxm", "h100-sxm"]),
    n=st.integers(1, 7),
    kind=st.sampled_from(["pretrain", "lora"]),
    batch=st.sampled_from([2**19, 2**21, 2**23]),
)
def test_more_nvlink_gpus_never_give_fewer_total_tokens_per_s(catalog, p, model, gpu, n, kind, batch):
    g = catalog.gpus[gpu]
    job = JobSpec(model=_preset(catalog, model), kind=kind, global_batch_tokens=batch)
    a, b = evaluate(job, g, n, p), evaluate(job, g, n + 1, p)
    if a.fits:
        assert b.fits and b.tokens_per_s >= a.tokens_per_s * (1 - 1e-9)
        assert b.layout["interconnect"] == "nvlink"


@SETTINGS
@given(
    model=st.sampled_from(["gpt2-124m", "gpt2-774m", "llama-3-8b", "llama-3-70b"]),
    gpu=st.sampled_from(["rtx-4090", "a100-40gb-sxm", "h100-sxm"]),
    count=st.sampled_from([1, 3, 8, 16, 64, 256]),
    precision=st.sampled_from(["bf16", "fp8"]),
)
def test_every_estimate_is_physical(catalog, p, model, gpu, count, precision):
    g = catalog.gpus[gpu]
    e = evaluate(JobSpec(model=_preset(catalog, model), precision=precision), g, count, p)
    if not e.fits:
        assert e.reason
        return
    assert 0 < e.mfu < 1
    assert all(v >= 0 for v in e.step_breakdown.values())  # no measurement: every cause only slows the step
    assert math.isclose(sum(e.step_breakdown.values()), e.layout["global_batch_tokens"] / e.tokens_per_s, rel_tol=1e-9)
    assert e.memory_per_gpu_gb <= g.memory_gb.value
    assert e.binding in ("compute", "memory_bandwidth", "interconnect")
    lay = e.layout
    assert lay["data_parallel"] * lay["tensor_parallel"] * lay["pipeline_parallel"] + lay["idle_gpus"] == count
    assert lay["idle_gpus"] == 0 or lay["tensor_parallel"] * lay["pipeline_parallel"] > 1


# --------------------------------------------------------------------------- the command


def test_estimate_cli_json(run):
    code, out, _ = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sxm", "--format", "json")
    e = json.loads(out)
    assert code == 0
    assert {
        "gpu",
        "gpu_count",
        "fits",
        "memory_per_gpu_gb",
        "tokens_per_s",
        "tokens_per_s_per_gpu",
        "mfu",
        "step_breakdown",
    } <= set(e)
    assert set(e["step_breakdown"]) == {
        "compute_s",
        "memory_s",
        "comm_s",
        "held_to_mfu_ceiling_s",
        "datasheet_derating_s",
        "measured_adjustment_s",
    }
    assert {
        "strategy",
        "shards",
        "micro_batch",
        "checkpointing",
        "data_parallel",
        "tensor_parallel",
        "interconnect",
        "global_batch_tokens",
        "needs_tensor_parallel",
    } <= set(e["layout"])


def test_estimate_cli_flags(run):
    code, out, _ = run(
        "estimate",
        "--model",
        "gpt2-350m",
        "--gpu",
        "a100-80gb-sxm",
        "--count",
        "2",
        "--kind",
        "finetune",
        "--micro-batch",
        "4",
        "--checkpointing",
        "--global-batch-tokens",
        "1M",
        "--format",
        "json",
    )
    e = json.loads(out)
    assert code == 0 and e["fits"]
    assert e["layout"]["micro_batch"] == 4 and e["layout"]["checkpointing"] is True
    assert e["layout"]["global_batch_tokens"] == 1e6 and e["job"]["kind"] == "finetune"
    code, out, _ = run(
        "estimate",
        "--params",
        "1.3B",
        "--layers",
        "24",
        "--hidden",
        "2048",
        "--seq-len",
        "2048",
        "--gpu",
        "h100-sxm",
        "--count",
        "8",
        "--strategy",
        "fsdp",
        "--no-checkpointing",
        "--kind",
        "lora",
        "--optimizer",
        "adamw-8bit",
        "--format",
        "json",
    )
    e = json.loads(out)
    assert code == 0 and e["layout"]["strategy"] == "zero3" and e["layout"]["checkpointing"] is False
    code, out, _ = run(
        "estimate",
        "--model",
        "llama-3-70b",
        "--gpu",
        "h100-sxm",
        "--count",
        "64",
        "--tensor-parallel",
        "8",
        "--pipeline-parallel",
        "2",
    )
    assert code == 0 and "TP8 x PP2" in out


@pytest.mark.parametrize(
    "args, words",
    [
        (["--micro-batch", "0"], "--micro-batch"),
        (["--kind", "pretraining"], "--kind"),
        (["--global-batch-tokens", "12X"], "--global-batch-tokens"),
        (["--tensor-parallel", "5", "--count", "5"], "--tensor-parallel"),
        (["--tensor-parallel", "2", "--count", "3"], "--count"),
        (["--pipeline-parallel", "13"], "--pipeline-parallel"),
        (["--strategy", "zero4"], "--strategy"),
        (["--params", "7B"], "either --model"),
        (["--count", "0"], "--count"),
    ],
)
def test_estimate_cli_bad_flags_exit_2_naming_the_flag(run, args, words):
    code, _, err = run("estimate", "--model", "gpt2-124m", "--gpu", "rtx-4090", *args)
    assert code == 2 and words in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "nosuch", "--gpu", "rtx-4090"], "error: --model: unknown model preset 'nosuch'"),
        (
            [
                "--kind",
                "serve",
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--input-len",
                "10",
                "--output-len",
                "10",
                "--ttft-ms",
                "-1",
            ],
            "error: --ttft-ms: a latency limit is a number of milliseconds from 1 (",
        ),
    ],
)
def test_the_cli_turns_the_field_into_its_flag_and_leaves_the_words_alone(run, args, message):
    """The library quotes fields (`model`, `ttft_ms`); the CLI names the flag, once, and no other word
    of the sentence (a rewrite of bare words once printed 'unknown model --model')."""
    code, _, err = run("estimate", *args)
    assert code == 2 and err.startswith(message) and err.count("--model") + err.count("--ttft-ms") == 1


def test_estimate_cli_needs_a_model(run):
    code, _, err = run("estimate", "--gpu", "rtx-4090")
    assert code == 2 and "either --model" in err


def test_estimate_cli_unknown_gpu_suggests(run):
    code, _, err = run("estimate", "--model", "gpt2-124m", "--gpu", "h100-sx")
    assert code == 2 and "did you mean h100-sxm" in err


# --- issue 13: throughput a buyer can bet on ------------------------------------------------------


def test_fp8_beats_bf16_on_h100_and_b200_beats_h100(catalog, p):
    """fp8 doubles the H100's dense rate (1979 vs 989 TFLOPs); even at a smaller share of it the
    same job runs faster. The B200's bf16 rate (2250) is 2.3x the H100's."""
    job = JobSpec(model=_preset(catalog, "llama-3-8b"), global_batch_tokens=2**21)
    h100, b200 = catalog.gpus["h100-sxm"], catalog.gpus["b200"]
    bf16 = evaluate(job, h100, 8, p)
    fp8 = evaluate(replace(job, precision="fp8"), h100, 8, p)
    assert fp8.tokens_per_s > bf16.tokens_per_s
    assert evaluate(job, b200, 8, p).tokens_per_s > bf16.tokens_per_s


def test_405b_on_2048_h100_keeps_a_16m_batch_with_model_parallelism(catalog, p):
    """16M tokens (as a workload's `16M` parses: 16,000,000) of sequence 8,192 are 1,953 sequences:
    fewer than 2,048 data-parallel replicas need, so tensor x pipeline parallelism > 1 splits the
    model instead of growing the batch."""
    batch = 16_000_000
    job = JobSpec(model=_preset(catalog, "llama-3.1-405b"), global_batch_tokens=batch)
    e = evaluate(job, catalog.gpus["h100-sxm"], 2048, p)
    assert e.fits
    lay = e.layout
    assert lay["tensor_parallel"] * lay["pipeline_parallel"] > 1
    assert lay["global_batch_tokens"] == batch and not lay["batch_changed"]
    assert lay["data_parallel"] * job.model.seq_len <= batch
    assert not any("global batch raised" in n for n in e.notes)


def test_16384_gpus_at_a_fixed_batch(catalog, p):
    """Scale to 16,384 H100 at Llama 3's 16M-token batch without growing it."""
    batch = 16 * 2**20
    job = JobSpec(model=_preset(catalog, "llama-3.1-405b"), global_batch_tokens=batch)
    e = evaluate(job, catalog.gpus["h100-sxm"], 16384, p)
    assert e.fits and e.layout["global_batch_tokens"] == batch
    lay = e.layout
    assert (
        lay["data_parallel"] * lay["tensor_parallel"] * lay["pipeline_parallel"] * lay["context_parallel"]
        + lay["idle_gpus"]
        == 16384
    )


def test_70b_qlora_fits_two_24gb_cards_and_bf16_lora_does_not(catalog, p):
    """QLoRA's 4-bit NF4 base with double quantization is 4.127 bits/param: 70.6B x 4.127 / 8 =
    36.4 GB, 18.2 GB per card over two; a bf16 base alone is 141 GB, 70.6 GB per card."""
    m = replace(_preset(catalog, "llama-3-70b"), seq_len=512)
    g = catalog.gpus["rtx-4090"]
    qlora = JobSpec(model=m, kind="qlora", micro_batch=1, checkpointing=True, global_batch_tokens=2**16)
    e = evaluate(qlora, g, 2, p)
    assert e.fits and e.memory_per_gpu_gb <= 24
    assert e.memory_breakdown["weights"] >= m.params * 4.127 / 8 / 2 / 1e9 * 0.99
    lora = replace(qlora, kind="lora")
    assert not evaluate(lora, g, 2, p).fits
    assert m.params * 2 / 2 / 1e9 > 24  # the bf16 base alone overflows each card


def test_goodput_is_below_one_and_falls_with_gpu_count(p):
    """Young's interval with Llama 3's 466 interruptions in 54 days on 16,384 H100, an 11-minute
    restart and a 10-second checkpoint stall: goodput 1 / (1 + C/tau + L (tau/2 + R)) = 0.90."""
    from advisor.perf.goodput import goodput

    days = 30 * 24.0
    values = [goodput(n, days, p) for n in (8, 64, 512, 4096, 16384)]
    assert all(v < 1 for v in values)
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    rate = 466 / (54 * 24 * 16384) * 16384
    c, r = 10 / 3600, 11 / 60
    tau = (2 * c / rate) ** 0.5
    assert goodput(16384, 54 * 24, p) == pytest.approx(1 / (1 + c / tau + rate * (tau / 2 + r)), rel=1e-3)
    assert goodput(16384, 54 * 24, p) == pytest.approx(0.90, abs=0.01)
    assert goodput(8, 1.0, p) > goodput(8, days, p)  # a short job risks less
    assert goodput(8, days, p, override=0.8) == 0.8


def test_no_measured_run_warning_for_mi250x_not_h100(catalog, p):
    job = JobSpec(model=_preset(catalog, "llama-3-8b"), global_batch_tokens=2**21)
    amd = evaluate(job, catalog.gpus["mi250x"], 8, p)  # CDNA 2: no run of its generation in the calibration set
    assert amd.speed_evidence == "datasheet" and amd.evidence_note.startswith("no measured training run on AMD")
    assert amd.evidence_note in amd.notes
    h100 = evaluate(job, catalog.gpus["h100-sxm"], 8, p)
    assert h100.speed_evidence == "measured" and h100.evidence_note is None
    assert not any("no measured" in n for n in h100.notes)


def test_predicted_mfu_never_above_the_generation_cap(catalog, p):
    from advisor.perf.published_mfu import mfu_cap

    for gid in ("a100-80gb-sxm", "h100-sxm", "gaudi2"):
        g = catalog.gpus[gid]
        for precision in ("bf16", "fp8"):
            if not g.dense_tflops(precision):
                continue
            e = evaluate(JobSpec(model=gpt(40, 5120), precision=precision, global_batch_tokens=2**21), g, 8, p)
            cap = mfu_cap(g, precision, p, 8)
            assert e.fits and cap is not None and e.mfu <= cap + 1e-9


def test_larger_model_slower_on_8_rtx_4090_known_counterexample(catalog, p):
    """Issue 13: 36 x 4608 got 9,271 tokens/s with PP8 while 34 x 4480 got 9,241 with ZeRO-3."""
    g = catalog.gpus["rtx-4090"]
    small = evaluate(JobSpec(model=gpt(34, 4480), global_batch_tokens=2**21), g, 8, p)
    large = evaluate(JobSpec(model=gpt(36, 4608), global_batch_tokens=2**21), g, 8, p)
    assert small.fits and large.fits
    assert large.tokens_per_s <= small.tokens_per_s


def test_estimate_json_shows_sequence_and_parallel_sizes(catalog):
    from advisor.perf.estimate import estimate

    out = estimate(gpu="rtx-4090", count=1, model="llama-3-8b", kind="qlora")
    assert out["model"]["seq_len"] == catalog.models["llama-3-8b"].seq_len
    assert out["layout"]["seq_len"] == out["model"]["seq_len"]
    for key in ("data_parallel", "tensor_parallel", "pipeline_parallel", "context_parallel"):
        assert key in out["layout"]


def test_blackwell_attention_runs_at_todays_kernels_rate_from_the_flashattention_4_paper(catalog, p):
    """Every B200 calibration row ran Transformer Engine's cuDNN attention (today's kernels), but Blackwell
    had no `attention_kernel_speedup`: its attention ran at the FA2-era share it takes from Hopper, about
    half of cuDNN's, so the attention-heavy 8B rows were slow against the 405B ones (Megatron-Bridge's
    stack: B200 8B -7% and 405B +9% in-sample, 6.9% leave-one-out). FlashAttention-4 (arXiv:2603.05451):
    "up to 1.3x speedup over cuDNN 9.13", "1613 TFLOPs/s" on B200: cuDNN at least 1613 / 1.3 TFLOPs,
    over FA2's 35% of the H100 (FlashAttention-3)."""
    from advisor.perf.training import seconds_per_token

    b200 = catalog.gpus["b200"]
    by_hand = 1613.0 / 1.3 / b200.dense_tflops("bf16") / 0.35
    assert p.attention_kernel_speedup["b200"] == pytest.approx(by_hand, abs=0.005)
    job = JobSpec(model=_preset(catalog, "llama-3-8b"), precision="fp8")
    _, today = seconds_per_token(job, b200, p, 1, False)
    _, fa2 = seconds_per_token(replace(job, attention_kernel="fa2"), b200, p, 1, False)
    assert fa2 / today == pytest.approx(by_hand, abs=0.005)
    # measured on the B200's kernels: the RTX 5090 (sm_120) keeps the FA2-era rate
    rtx = catalog.gpus["rtx-5090"]
    assert seconds_per_token(job, rtx, p, 1, False) == seconds_per_token(
        replace(job, attention_kernel="fa2"), rtx, p, 1, False
    )
