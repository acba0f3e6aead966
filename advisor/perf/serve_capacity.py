"""A serving replica under load: its operating point at a batch (requests/s, p-th percentile TTFT and
TPOT, from the step times of advisor/perf/serve.py and the queueing waits here), and the largest
rate whose latencies meet the SLO (`replica_capacity`).

Operating point of one replica at mean concurrency B (sequences decoding at once):
    D(B)    = pp * stage decode step for B/pp sequences      time for every sequence to gain a token
    c_pre   = stage prefill compute + communication           replica time one prompt displaces
    lambda  = B / (O D(B) + B c_pre)                          requests/s (Little's law with chunked prefill)
    TPOT_p  = D(B + z_p sqrt(2B/3)) + (B + z_p sqrt(B)) c_pre / O   the tail request's batch (Poisson sequences
              in flight, variance 2B/3 over its life) and the prefills landing in its lifetime
    TTFT_p  = D(B) + W_p + S_p + max(pp * prefill latency, D(B) + pp c_pre): the step under way, then the
              step its prompt rides with the batch's decode;   W_p from M/D/1 with service c_pre, rho = lambda c_pre,
              S_p the wait for a free sequence slot (M/M/c, c = the batch cap, each held O TPOT_mean)
Every quantity rises with B and lambda rises with B, so the sustainable rate is the largest B whose
latencies meet the SLO: higher rates never lower latency, tighter SLOs never raise the rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist

from advisor.perf.kv import memory
from advisor.perf.serve import Setup, decode_steps, prefill


def z_score(percentile: float) -> float:
    return NormalDist().inv_cdf(min(max(percentile / 100.0, 0.5), 0.99999))


def mdl_wait_quantile(rho: float, service_s: float, percentile: float) -> float:
    """p-th percentile wait in an M/D/1 queue: P(W > w) ~ rho exp(-w / w1), w1 = service / (2 (1 - rho))
    (exponential tail with the M/D/1 mean wait rho service / (2 (1 - rho)) among all arrivals)."""
    if rho <= 0:
        return 0.0
    if rho >= 1:
        return math.inf
    tail = 1 - percentile / 100.0
    if rho <= tail:
        return 0.0
    return service_s / (2 * (1 - rho)) * math.log(rho / tail)


def slot_wait_quantile(load: float, slots: float, hold_s: float, percentile: float) -> float:
    """p-th percentile wait for one of `slots` batch slots (KV memory or the engine's sequence cap),
    each held `hold_s` by a request, at a mean of `load` busy slots: M/M/c with the Halfin-Whitt
    probability of waiting, P(W > t) = P_wait exp(-(c - a) t / hold). Offline runs fill every slot;
    a latency limit keeps a margin of order sqrt(c) free for Poisson bursts."""
    if load <= 0 or slots <= 0:
        return 0.0
    if load >= slots:
        return math.inf
    beta = (slots - load) / math.sqrt(load)
    nd = NormalDist()
    p_wait = 1.0 / (1.0 + beta * nd.cdf(beta) / nd.pdf(beta)) if beta < 30 else 0.0
    tail = 1 - percentile / 100.0
    if p_wait <= tail:
        return 0.0
    return hold_s / (slots - load) * math.log(p_wait / tail)


def operating_point(
    s: Setup, input_len: float, output_len: float, batch: float, percentile: float = 99, slots: float | None = None
) -> dict:
    """Rate, latencies and step breakdown of one replica at mean concurrency `batch` (formulas above);
    `slots`: the sequences it can hold, whose queue adds to the TTFT (None: unbounded)."""
    return operating_points(s, input_len, output_len, percentile)(batch, slots)


def operating_points(s: Setup, input_len: float, output_len: float, percentile: float = 99) -> Callable[..., dict]:
    """operating_point at any batch (and slots) of one replica and request shape: what does not depend on
    the batch (the context, the prompt's prefill, z) computed once for the bisection's ~50 points."""
    context = s.params.kv_tokens(s.engine, input_len, output_len)[1]
    pre = prefill(s, input_len)
    c = pre["busy_s"]
    z = z_score(percentile)
    decode = decode_steps(s, context)

    def at(batch: float, slots: float | None = None) -> dict:
        dec = decode(batch / s.pp)
        d = s.pp * dec["step_s"]
        lam = batch / (output_len * d + batch * c)
        rho = lam * c
        tpot_mean = d + batch * c / output_len
        # the sequences in flight are Poisson with mean B (M/G/infinity occupancy); averaged over a
        # request's life (autocorrelation 1 - |t|/T) their variance is 2B/3: the tail request decodes at
        # that batch, and also meets B + z sqrt(B) prefills (both rise with the same arrivals: added)
        hi = batch + z * math.sqrt(2 * batch / 3)
        d_hi = s.pp * decode(hi / s.pp)["step_s"]
        tpot_p = d_hi + (batch + z * math.sqrt(batch)) * c / output_len
        slot_p = slot_wait_quantile(batch, slots, output_len * tpot_mean, percentile) if slots else 0.0
        # in-flight batching admits a new request at the next iteration, where its prompt runs together with
        # the B sequences' decode (TensorRT-LLM docs, "Paged Attention, IFB, and Request Scheduling"): its
        # first token comes at the end of that step (d + its prompt), after the residual of the step under
        # way (uniform: mean d/2, p-th percentile ~d); alone (B -> 0) the prompt runs at the prefill rate
        own = max(s.pp * pre["latency_s"], d + s.pp * c)
        ttft_mean = d / 2 + rho * c / (2 * (1 - rho)) + own
        ttft_p = d + mdl_wait_quantile(rho, c, percentile) + slot_p + own
        return {
            "requests_per_s": lam,
            "batch": batch,
            "rho_prefill": rho,
            "tpot_s": tpot_p,
            "ttft_s": ttft_p,
            "tpot_mean_s": tpot_mean,
            "ttft_mean_s": ttft_mean,
            "decode": dec,
            "prefill": pre,
        }

    return at


@dataclass(frozen=True)
class ReplicaResult:
    """What one replica sustains: the optimizer's unit (requests/s per replica of `gpus` GPUs)."""

    requests_per_s: float
    gpus: int
    tp: int
    pp: int
    batch: float
    max_batch: int
    ttft_ms: float
    tpot_ms: float
    limited_by: str
    point: dict
    kv_cache_gb_per_gpu: float
    weights_gb_per_gpu: float
    engine: str
    slots: int  # sequences in flight the engine admits: KV room and the engine's batch cap
    precision: str = ""  # the precision weights and KV cache are served at (the job's, or a wider one)
    warnings: list = field(default_factory=list)  # [{code, message}] the plan shows beside this replica
    speed_evidence: str = "datasheet"  # measured | transferred | same_generation | datasheet
    speed_source: str | None = None  # the user's measurement the speed rests on (measured, transferred)
    speed_spread: float | None = None  # the P10-P90 half-width the measurement states (measured; None: default)


def _limit_of_step(dec: dict) -> str:
    return "compute" if dec["compute_s"] >= dec["memory_s"] else "memory-bandwidth"


def replica_capacity(
    s: Setup,
    input_len: float,
    output_len: float,
    ttft_ms: float | None = None,
    tpot_ms: float | None = None,
    percentile: float = 99,
    max_batch: int | None = None,
) -> ReplicaResult | None:
    """Largest request rate one replica sustains with p-th percentile TTFT <= ttft_ms and TPOT <=
    tpot_ms (None: no limit; both None: offline peak). None when the model does not fit, the GPU
    lacks a rate for the precision or the catalog lacks its memory size or bandwidth. A zero rate
    means the SLO cannot be met even when idle."""
    if s.rate <= 0 or s.bandwidth <= 0 or s.hw.memory_gb <= 0:
        return None
    p = s.params
    mem = memory(
        s.model,
        s.served,
        s.hw.memory_gb,
        s.tp,
        s.pp,
        p.kv_tokens(s.engine, input_len, output_len)[0],
        p.usable_memory_fraction,
        p.overhead_gb,
    )
    if not mem.fits:
        return None
    engine_cap = max_batch or p.batch_cap(s.engine, s.hw)
    cap = min(mem.max_batch, engine_cap)
    kv_bound = mem.max_batch <= engine_cap

    best, limit = _largest_batch(s, input_len, output_len, ttft_ms, tpot_ms, percentile, cap, kv_bound)
    if best <= 0:
        pt = operating_point(s, input_len, output_len, 1e-6, percentile)
        lam = 0.0
    else:
        pt = operating_point(s, input_len, output_len, best, percentile, cap if ttft_ms is not None else None)
        lam = pt["requests_per_s"]
    limit = limit or _limit_of_step(pt["decode"])
    kv_gb = best * mem.kv_per_seq_gb  # each stage caches its own layers for every sequence
    warnings = [{"rule": None, "code": "precision-not-on-gpu", "message": s.plan.warning}] if s.plan.warning else []
    evidence, source, spread = s.evidence()
    return ReplicaResult(
        lam,
        s.gpus,
        s.tp,
        s.pp,
        best,
        mem.max_batch,
        pt["ttft_s"] * 1e3,
        pt["tpot_s"] * 1e3,
        limit,
        pt,
        kv_gb,
        mem.weights_gb,
        s.engine,
        cap,
        s.served,
        warnings,
        evidence,
        source,
        spread,
    )


def _largest_batch(
    s: Setup,
    input_len: float,
    output_len: float,
    ttft_ms: float | None,
    tpot_ms: float | None,
    percentile: float,
    cap: int,
    kv_bound: bool,
) -> tuple[float, str | None]:
    """(batch, limit): the largest mean batch up to `cap` at which both latency limits hold, by
    bisection (50 halvings), and what stops it there when it is the KV cache or the TTFT queue
    (None: the step itself, read from the operating point by the caller). Batch 0 when the limits
    fail even when idle."""

    point = operating_points(s, input_len, output_len, percentile)

    def ok(b: float) -> tuple[bool, bool]:  # (TPOT within its limit, TTFT within its limit) at batch b
        pt = point(b, cap if ttft_ms is not None else None)
        t_ok = tpot_ms is None or pt["tpot_s"] * 1e3 <= tpot_ms
        f_ok = ttft_ms is None or pt["ttft_s"] * 1e3 <= ttft_ms
        return t_ok, f_ok

    if all(ok(cap)):
        best, limit = float(cap), ("kv-memory" if kv_bound else None)
    else:
        lo, hi = 0.0, float(cap)
        t_ok, f_ok = ok(1e-6)
        if not (t_ok and f_ok):
            best = 0.0
            limit = "ttft-queue" if not f_ok else None
        else:
            for _ in range(50):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if all(ok(mid)) else (lo, mid)
            best = lo
            t_ok, f_ok = ok(min(hi * 1.001, cap))
            limit = "ttft-queue" if not f_ok and t_ok else None
    return best, limit
