"""The layout search's bound, computed the fast way (`floor_function`, per-search constants kept),
equals `compute_floor` (through `_core` and `_bubble`) to the bit, for every layout option of
several jobs, GPUs and counts: pretraining, LoRA and QLoRA, with and without pipelining."""
from __future__ import annotations

from advisor.data.catalog import load_catalog
from advisor.perf.estimate import params_from
from advisor.perf.jobspec import spec_from_flags
from advisor.perf.layout import _micro_batch_options, _options
from advisor.perf.memory import Layout, default_batch_tokens
from advisor.perf.training import _per_token, compute_floor, floor_function


def test_floor_function_equals_compute_floor_to_the_bit():
    cat = load_catalog(None)
    p = params_from(cat)
    checked = 0
    for model, kind in (("llama-3-8b", "pretrain"), ("gpt2-124m", "pretrain"), ("llama-3-8b", "qlora"),
                        ("llama-3-70b", "lora")):
        spec = spec_from_flags(cat, model=model, precision="bf16", kind=kind)
        base = spec.global_batch_tokens or default_batch_tokens(spec.model, p)
        for gid in ("h100-sxm", "rtx-4090", "mi300x"):
            gpu = cat.gpu(gid)
            floor = floor_function(spec, gpu, p)
            for n in (1, 8, 64, 512):
                for s, t, q, dp, c in _options(spec, gpu, n, p):
                    for ckpt in (False, True):
                        rates = _per_token(spec, gpu, p, t, ckpt)
                        for mb in _micro_batch_options(spec, dp, base):
                            batch = max(base, dp * mb * spec.model.seq_len)
                            lay = Layout(s, dp, t, q, mb, ckpt, c)
                            assert floor(rates, t, q, dp, c, ckpt, mb, batch) == compute_floor(rates, spec, gpu, lay,
                                                                                               batch, p)
                            checked += 1
    assert checked > 1000
