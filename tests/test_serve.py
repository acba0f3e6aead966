"""The serving model (advisor/perf/serve.py, kv.py, serving.py): memory by hand, and the monotone
behaviour the optimizer relies on."""

from __future__ import annotations

import dataclasses

import pytest

from advisor.errors import InputError
from advisor.perf.kv import kv_bytes_per_token, load_model, memory, weight_bytes
from advisor.perf.serve import Hardware, Setup, decode_step, prefill
from advisor.perf.serving import load_params, replica_rate
from advisor.perf.serving_estimate import serve_estimate

# A plain H100-like GPU, stated here so the tests do not depend on catalog figures.
H100 = Hardware(
    name="test-h100",
    memory_gb=85.9,
    bandwidth_gbps=3350,
    tflops={"bf16": 989.4, "fp8": 1978.9},
    link_gbps=900,
    link_domain=8,
    pcie_gbps=128,
    vendor="NVIDIA",
    link_efficiency=0.8,
)
CARD24 = Hardware(
    name="test-24gb",
    memory_gb=25.8,
    bandwidth_gbps=1008,
    tflops={"bf16": 165.2, "fp8": 330.3},
    vendor="NVIDIA",
    link_efficiency=0.8,
)


def test_kv_cache_llama31_70b_at_8k_matches_hand_count():
    m = load_model("llama-3.1-70b")
    tokens = 8192
    by_hand = 80 * 8 * 128 * 2 * 2 * tokens  # layers x KV heads x head dim x (K, V) x bf16 bytes x tokens
    assert kv_bytes_per_token(m, "bf16") * tokens == by_hand
    assert by_hand / 2**30 == pytest.approx(2.5)  # 2.5 GiB per 8K-token sequence
    fp8 = 80 * 8 * 128 * 2 * 1 * tokens
    assert kv_bytes_per_token(m, "fp8") * tokens == fp8
    # tensor parallel 4 splits the 8 KV heads 2 per GPU; at TP 16 each GPU still keeps one (replicated)
    assert kv_bytes_per_token(m, "bf16", tp=4) * tokens == by_hand / 4
    assert kv_bytes_per_token(m, "bf16", tp=16) * tokens == by_hand / 8


def test_fp8_weights_take_half_the_bf16_memory():
    m = load_model("llama-3.1-70b")
    assert weight_bytes(m, "fp8") == pytest.approx(weight_bytes(m, "bf16") / 2)
    assert weight_bytes(m, "bf16") == 2 * 70553706496


def test_70b_bf16_does_not_fit_one_24gb_card():
    m = load_model("llama-3.1-70b")
    mem = memory(m, "bf16", 25.8, tp=1, pp=1, context=1300, usable_fraction=0.9, overhead_gb=2)
    assert not mem.fits and mem.weights_gb > 140
    assert replica_rate(m, CARD24, 1, "bf16", 1000, 300) is None
    est = serve_estimate("llama-3.1-70b", CARD24, 1, "bf16", 1000, 300)
    assert est["fits"] is False and est["output_tokens_per_s"] == 0


def test_moe_memory_uses_total_params_and_compute_active_params():
    mix = load_model("mixtral-8x7b")
    assert weight_bytes(mix, "bf16") == 2 * mix.params  # every expert resident
    assert mix.active_params < mix.params / 3
    # a dense model with Mixtral's total size but the same shape otherwise
    dense = dataclasses.replace(mix, active_params=mix.params, experts=0, experts_per_token=0, expert_params=0.0)
    p = load_params()
    s_moe, s_dense = (
        Setup(mix, H100, "bf16", 2, 1, "tensorrt-llm", p),
        Setup(dense, H100, "bf16", 2, 1, "tensorrt-llm", p),
    )
    ratio = prefill(s_moe, 1000)["compute_s"] / prefill(s_dense, 1000)["compute_s"]
    head = mix.vocab * mix.hidden  # the LM head runs on the prompt's last position only
    matmul_moe = mix.active_params - 2 * head
    matmul_dense = mix.params - 2 * head
    attn = 2 * mix.layers * 1000 * mix.heads * mix.head_dim
    assert ratio == pytest.approx(
        (2 * matmul_moe * 1000 + 2 * head + attn * 1000) / (2 * matmul_dense * 1000 + 2 * head + attn * 1000), rel=1e-9
    )
    # one token reads 2 of 8 experts per layer: the weight read of a batch-1 decode step is the active share
    read_moe = decode_step(s_moe, 1, 0)["memory_s"]
    read_dense = decode_step(s_dense, 1, 0)["memory_s"]
    dense_part = mix.params - mix.expert_params
    assert read_moe / read_dense == pytest.approx((dense_part + mix.expert_params * 2 / 8) / mix.params, rel=1e-9)


def test_doubled_rate_needs_at_least_as_many_gpus():
    def gpus_for(demand):  # smallest GPU count whose whole system sustains `demand` requests/s under the SLO
        for n in range(1, 65):
            est = serve_estimate("llama-3.1-70b", H100, n, "fp8", 1000, 300, ttft_ms=2000, tpot_ms=100)
            if est["requests_per_s"] >= demand:
                return n, est["replicas"]
        return None

    for demand in (2.0, 9.0, 25.0):
        (n1, r1), (n2, r2) = gpus_for(demand), gpus_for(2 * demand)
        assert n2 >= n1 and r2 >= r1


@pytest.mark.parametrize(
    "model,precision,tp", [("llama-3.1-70b", "fp8", 2), ("llama-3.1-8b", "bf16", 1), ("mixtral-8x7b", "fp8", 2)]
)
def test_tighter_tpot_never_raises_the_sustainable_rate(model, precision, tp):
    rates = [
        replica_rate(model, H100, tp, precision, 1000, 300, ttft_ms=2000, tpot_ms=t).requests_per_s
        for t in (400, 200, 100, 60, 40, 25, 15, 8)
    ]
    assert all(a >= b for a, b in zip(rates, rates[1:])), rates
    assert rates[-1] < rates[0]


def test_higher_rate_never_lowers_latency():
    from advisor.perf.serve_capacity import operating_point

    s = Setup(load_model("llama-3.1-70b"), H100, "fp8", 2, 1, "tensorrt-llm", load_params())
    pts = [operating_point(s, 1000, 300, b) for b in (1, 4, 16, 64, 128, 256)]
    for a, b in zip(pts, pts[1:]):
        assert b["requests_per_s"] > a["requests_per_s"]
        assert b["ttft_s"] >= a["ttft_s"] and b["tpot_s"] >= a["tpot_s"]


def test_offline_output_holds_the_contract_fields():
    est = serve_estimate("llama-3.1-70b", H100, 8, "fp8", 1000, 300, ttft_ms=2000, tpot_ms=100)
    for key in (
        "output_tokens_per_s",
        "requests_per_s",
        "ttft_ms",
        "tpot_ms",
        "max_batch",
        "kv_cache_gb_per_gpu",
        "step_breakdown",
        "fits",
        "limited_by",
        "tensor_parallel",
        "replicas",
    ):
        assert key in est
    assert est["limited_by"] in ("kv-memory", "memory-bandwidth", "compute", "ttft-queue")
    assert est["ttft_ms"] <= 2000 and est["tpot_ms"] <= 100 + 1e-6
    assert est["output_tokens_per_s"] == pytest.approx(est["requests_per_s"] * 300, rel=1e-4)
    assert est["replicas"] * est["tensor_parallel"] <= 8
    offline = serve_estimate("llama-3.1-70b", H100, 8, "fp8", 1000, 300)
    assert offline["output_tokens_per_s"] >= est["output_tokens_per_s"]


def test_catalog_gpu_by_id_and_bad_input():
    est = serve_estimate("llama-3.1-8b", "h100-sxm", 1, "bf16", 1000, 1000)
    assert est["fits"] and est["output_tokens_per_s"] > 0
    with pytest.raises(InputError, match="precision"):
        serve_estimate("llama-3.1-8b", "h100-sxm", 1, "fp7", 1000, 1000)
    with pytest.raises(InputError, match="did you mean llama-3.1-8b"):
        serve_estimate("llama-3.1-8", "h100-sxm", 1, "bf16", 1000, 1000)
    with pytest.raises(InputError, match="tensor_parallel"):
        serve_estimate("llama-3.1-8b", "h100-sxm", 2, "bf16", 1000, 1000, tensor_parallel=4)
    with pytest.raises(InputError, match="input_len"):
        serve_estimate("llama-3.1-8b", "h100-sxm", 1, "bf16", 0, 1000)


def test_deterministic():
    a = serve_estimate("deepseek-v3", "h200-sxm", 8, "fp8", 2000, 500, ttft_ms=3000, tpot_ms=80)
    b = serve_estimate("deepseek-v3", "h200-sxm", 8, "fp8", 2000, 500, ttft_ms=3000, tpot_ms=80)
    assert a == b


def test_slot_wait_matches_the_halfin_whitt_formula_by_hand():
    """100 sequences busy on average of 120 slots, each held 10 s: beta = 20 / sqrt(100) = 2,
    P(wait) = 1 / (1 + beta Phi(beta) / phi(beta)), p99 wait = hold / (c - a) ln(P(wait) / 0.01)."""
    import math

    from advisor.perf.serve_capacity import slot_wait_quantile

    phi = math.exp(-2.0) / math.sqrt(2 * math.pi)
    big_phi = 0.5 * (1 + math.erf(2 / math.sqrt(2)))
    p_wait = 1 / (1 + 2 * big_phi / phi)
    assert p_wait == pytest.approx(0.0269, abs=5e-4)  # phi(2) = 0.0540, Phi(2) = 0.9772
    assert slot_wait_quantile(100, 120, 10.0, 99) == pytest.approx(10.0 / 20 * math.log(p_wait / 0.01), rel=1e-9)
    assert slot_wait_quantile(100, 120, 10.0, 90) == 0.0  # P(wait) 2.7% < 10%: the p90 does not wait
    assert slot_wait_quantile(120, 120, 10.0, 99) == math.inf  # every slot busy: the queue grows without bound


def test_a_ttft_limit_keeps_slots_free_that_offline_fills():
    """Offline fills every sequence slot; with a TTFT limit Poisson bursts need spare slots, so the
    mean concurrency stays below the cap and the rate below the offline peak."""
    off = replica_rate("llama-3.1-8b", H100, 1, "fp8", 1000, 300, max_batch=64)
    on = replica_rate("llama-3.1-8b", H100, 1, "fp8", 1000, 300, ttft_ms=2000, max_batch=64)
    assert off.batch == 64 and on.batch < 64
    assert on.requests_per_s < off.requests_per_s


def test_compute_runs_at_the_measured_matmul_fraction():
    """The GEMM rate is the dense peak x the GPU's measured best-GEMM share (MAMF): a GPU that reaches
    half its peak computes a prefill twice as long."""
    half = dataclasses.replace(H100, matmul_fraction={"bf16": 0.4, "fp8": 0.35})
    full = dataclasses.replace(H100, matmul_fraction={"bf16": 0.8, "fp8": 0.7})
    p = load_params()
    m = load_model("llama-3.1-8b")
    slow = prefill(Setup(m, half, "fp8", 1, 1, "tensorrt-llm", p), 2000)["compute_s"]
    fast = prefill(Setup(m, full, "fp8", 1, 1, "tensorrt-llm", p), 2000)["compute_s"]
    assert slow == pytest.approx(2 * fast, rel=1e-12)


def test_kv_held_per_sequence_by_engine_scheduler():
    """TensorRT-LLM (GUARANTEED_NO_EVICT) holds prompt + whole output, vLLM the mean I + O/2, TGI on Gaudi
    the padded total: max_batch by hand from the same free memory."""
    m, params = load_model("llama-3.1-8b"), load_params()
    I, O = 1000, 1000
    free = (
        H100.memory_gb - params.overhead_gb - m.params * 1 / 1e9
    ) * params.usable_memory_fraction  # fp8 weights: 1 byte each
    per_token = 32 * 8 * 128 * 2 * 1 / 1e9  # fp8 KV: layers x KV heads x head dim x (K, V) x 1 byte
    for engine, tokens in (("tensorrt-llm", I + O), ("vllm", I + O / 2), ("tgi-gaudi", I + O)):
        r = replica_rate(m, H100, 1, "fp8", I, O, engine=engine)
        assert r.max_batch == int(free // (per_token * tokens)), engine
    # a run that states its maximum total pads to it
    padded = dataclasses.replace(params, kv_static={"tgi-gaudi": 2048})
    r = replica_rate(m, H100, 1, "fp8", I, O, engine="tgi-gaudi", params=padded)
    assert r.max_batch == int(free // (per_token * 2048))


def test_l40s_memory_is_what_cuda_reports_with_ecc():
    """An L40S with ECC on shows 46,068 MiB (1/16 of its 48 GiB of GDDR6 holds ECC); the KV cache is sized on that."""
    from advisor.data.catalog import load_catalog
    from advisor.perf.serving import hardware

    hw = hardware(load_catalog().gpu("l40s"))
    assert hw.memory_gb == pytest.approx(46068 * 2**20 / 1e9)
    assert hw.memory_gb == pytest.approx(48 * 2**30 / 1e9 * 15 / 16, rel=1e-3)


def test_decode_step_pays_a_fixed_time_per_layer():
    """The fixed part of a decode step is step_overhead + layers x layer_overhead: with everything else
    equal, an 80-layer model (Llama 3.1 70B) pays 80 x 100 us = 8 ms and a 32-layer one (8B) 3.2 ms more
    than with no per-layer time; two pipeline stages each pay their own 40 layers."""
    p0 = dataclasses.replace(load_params(), layer_overhead_us=0.0)
    p1 = dataclasses.replace(p0, layer_overhead_us=100.0)
    for name, layers in (("llama-3.1-70b", 80), ("llama-3.1-8b", 32)):
        m = load_model(name)
        assert m.layers == layers
        extra = (
            decode_step(Setup(m, H100, "fp8", 8, 1, "tensorrt-llm", p1), 16, 1500)["step_s"]
            - decode_step(Setup(m, H100, "fp8", 8, 1, "tensorrt-llm", p0), 16, 1500)["step_s"]
        )
        assert extra == pytest.approx(layers * 100e-6, rel=1e-9)
    m = load_model("llama-3.1-70b")
    extra = (
        decode_step(Setup(m, H100, "fp8", 4, 2, "tensorrt-llm", p1), 16, 1500)["step_s"]
        - decode_step(Setup(m, H100, "fp8", 4, 2, "tensorrt-llm", p0), 16, 1500)["step_s"]
    )
    assert extra == pytest.approx(40 * 100e-6, rel=1e-9)


def test_prefill_flops_by_hand_with_the_lm_head_on_the_last_position():
    """Llama 3.1 8B, a 1,000-token prompt: 2 x (matmul parameters less the LM head) x 1,000 + the LM head
    once (no prompt logits are computed unless asked) + causal attention 2 L I^2 n_heads d_head; alone it
    runs at R x prefill_compute_efficiency (the non-GEMM kernels at zero traffic to isolate the GEMMs)."""
    m = load_model("llama-3.1-8b")
    p = dataclasses.replace(load_params(), activation_bytes_per_layer_element=0.0)
    s = Setup(m, H100, "fp8", 1, 1, "tensorrt-llm", p)
    head = 128256 * 4096
    flops = 2 * (m.active_params - 2 * head) * 1000 + 2 * head + 2 * 32 * 1000**2 * 32 * 128
    assert prefill(s, 1000)["compute_s"] == pytest.approx(flops / (s.rate * p.prefill_compute_efficiency), rel=1e-9)


def test_a_replica_computes_its_rates_once_outside_its_fields():
    """Setup.rate and Setup.bandwidth are functools.cached_property, not a hand-made dict field: each is
    computed on first read and kept in the instance (the capacity search reads both ~100 times), and
    two replicas of the same fields stay equal whichever has been read."""
    m, p = load_model("llama-3.1-8b"), load_params()
    s, t = Setup(m, H100, "fp8", 1, 1, "tensorrt-llm", p), Setup(m, H100, "fp8", 1, 1, "tensorrt-llm", p)
    assert "rate" not in vars(s)
    first = s.rate
    assert vars(s)["rate"] is first and s.rate is first and s.bandwidth is vars(s)["bandwidth"]
    assert s == t


def test_a_tied_model_multiplies_its_one_table_as_the_head():
    """GPT-2 124M ties its output head to its input embedding: its 124,439,808 parameters hold the
    50,257 x 768 table once. The matrix multiplies are the body (parameters less the table) per prompt
    token plus the head (the table) once; a decode token runs through body and head alike."""
    m = load_model("gpt2-124m")
    p = dataclasses.replace(load_params(), activation_bytes_per_layer_element=0.0)
    s = Setup(m, H100, "bf16", 1, 1, "tensorrt-llm", p)
    head = 50257 * 768
    body = 124439808 - head
    flops = 2 * body * 500 + 2 * head + 2 * 12 * 500**2 * 12 * 64
    assert prefill(s, 500)["compute_s"] == pytest.approx(flops / (s.rate * p.prefill_compute_efficiency), rel=1e-9)
    assert m.matmul_active == 124439808  # body + head: the table is read as the head once per token


def test_non_gemm_kernels_move_activation_bytes_at_the_memory_bandwidth():
    """With a_b bytes per element, B sequences of Llama 3.1 8B on one H100 add a_b x B x (4096 + 14336)
    x 32 layers / (bandwidth x eta_bw) to a decode step; at tensor parallelism 2 each GPU holds half the
    MLP width; a prompt of I tokens adds the same for I tokens to its prefill time, alone and in a batch.
    The time scales with memory bandwidth, so an H200 pays 3.35 / 4.8 of an H100's."""
    m = load_model("llama-3.1-8b")
    p0 = dataclasses.replace(load_params(), activation_bytes_per_layer_element=0.0)
    p1 = dataclasses.replace(p0, activation_bytes_per_layer_element=20.0)
    bw = H100.bandwidth_gbps * 1e9 * p0.decode_bandwidth_efficiency

    def extra(tp: int, batch: int, hw: Hardware = H100) -> float:
        return (
            decode_step(Setup(m, hw, "fp8", tp, 1, "tensorrt-llm", p1), batch, 1500)["step_s"]
            - decode_step(Setup(m, hw, "fp8", tp, 1, "tensorrt-llm", p0), batch, 1500)["step_s"]
        )

    assert extra(1, 256) == pytest.approx(20 * 256 * (4096 + 14336) * 32 / bw, rel=1e-9)
    assert extra(2, 256) == pytest.approx(20 * 256 * (4096 + 14336 / 2) * 32 / bw, rel=1e-9)
    h200 = dataclasses.replace(H100, bandwidth_gbps=H100.bandwidth_gbps * 4.8 / 3.35)
    assert extra(1, 256, h200) == pytest.approx(extra(1, 256) * 3.35 / 4.8, rel=1e-9)
    for key in ("busy_s", "latency_s"):
        pre = (
            prefill(Setup(m, H100, "fp8", 1, 1, "tensorrt-llm", p1), 1000)[key]
            - prefill(Setup(m, H100, "fp8", 1, 1, "tensorrt-llm", p0), 1000)[key]
        )
        assert pre == pytest.approx(20 * 1000 * (4096 + 14336) * 32 / bw, rel=1e-9)


def test_tail_tpot_decodes_at_the_poisson_high_batch():
    """p99 TPOT = D(B + z sqrt(2B/3)) + (B + z sqrt(B)) c / O: the sequences in flight are Poisson with
    mean B, and a request's life-long average of them has variance 2B/3 (triangular autocorrelation
    over its life); the prefills it meets are Poisson with mean B. Recomputed from the step functions."""
    import math

    from advisor.perf.serve_capacity import operating_point

    s = Setup(load_model("llama-3.1-8b"), H100, "fp8", 1, 1, "tensorrt-llm", load_params())
    B, I, O, z = 200.0, 1000.0, 300.0, 2.3263478740408408
    context = I + O / 2
    c = prefill(s, I)["busy_s"]
    hand_p99 = decode_step(s, B + z * math.sqrt(2 * B / 3), context)["step_s"] + (B + z * math.sqrt(B)) * c / O
    hand_mean = decode_step(s, B, context)["step_s"] + B * c / O
    pt = operating_point(s, I, O, B, 99)
    assert pt["tpot_s"] == pytest.approx(hand_p99, rel=1e-9)
    assert pt["tpot_mean_s"] == pytest.approx(hand_mean, rel=1e-9)
    assert pt["tpot_s"] > pt["tpot_mean_s"] + z * math.sqrt(B) * c / O  # wider than the prefill count alone


def test_first_token_waits_for_the_running_step_and_then_rides_a_batched_step():
    """In-flight batching admits a new prompt at the next iteration, together with the batch's decode:
    its p99 TTFT is the step under way, the M/D/1 prefill queue, then a step of D(B) + c (the prompt's
    batched time); alone (B -> 0) the prompt runs at the prefill rate."""
    import math

    from advisor.perf.serve_capacity import mdl_wait_quantile, operating_point

    s = Setup(load_model("llama-3.1-70b"), H100, "fp8", 4, 1, "tensorrt-llm", load_params())
    pre = prefill(s, 1000)
    for b in (64.0, 512.0):
        d = decode_step(s, b, 1000 + 300 / 2)["step_s"]
        c = pre["busy_s"]
        lam = b / (300 * d + b * c)
        by_hand = d + mdl_wait_quantile(lam * c, c, 99) + max(pre["latency_s"], d + c)
        pt = operating_point(s, 1000, 300, b)
        assert pt["ttft_s"] == pytest.approx(by_hand, rel=1e-12)
        assert pt["ttft_s"] >= 2 * d  # two decode steps at least: a prompt never skips the batch
        mean_by_hand = d / 2 + lam * c * c / (2 * (1 - lam * c)) + max(pre["latency_s"], d + c)
        assert pt["ttft_mean_s"] == pytest.approx(mean_by_hand, rel=1e-12)
    d0 = decode_step(s, 1e-6, 1075)["step_s"]  # an idle replica: no queue, a step of fixed time only
    idle = operating_point(s, 1000, 300, 1e-6)
    assert idle["ttft_s"] == pytest.approx(d0 + max(pre["latency_s"], d0 + pre["busy_s"]), rel=1e-6)
    assert math.isfinite(idle["ttft_s"])


def test_vllm_default_cap_rises_on_large_memory_gpus():
    """vLLM's EngineArgs.get_batch_defaults: max_num_seqs 1024 from 70 GiB (A100s excepted), else 256."""
    from advisor.data.catalog import load_catalog
    from advisor.perf.serving import hardware

    c, p = load_catalog(), load_params()
    caps = {g: p.batch_cap("vllm", hardware(c.gpus[g], c)) for g in ("mi300x", "h100-sxm", "a100-80gb-sxm", "l40s")}
    assert caps == {"mi300x": 1024, "h100-sxm": 1024, "a100-80gb-sxm": 256, "l40s": 256}
    assert p.batch_cap("tensorrt-llm", hardware(c.gpus["mi300x"], c)) == 2048
