"""One model list (issue 32 item 3): every preset of catalog/models.yaml trains and serves, other names
of a checkpoint are aliases, and the figures agree with a count from the published shapes."""

from __future__ import annotations

import pytest

from advisor.api import estimate
from advisor.data.catalog import load_catalog
from advisor.errors import InputError
from advisor.perf.jobspec import spec_from_flags
from advisor.perf.kv import load_model
from advisor.perf.serving_estimate import serve_estimate

CATALOG = load_catalog()


def _llama_params(m) -> int:
    """Parameters of a Llama-architecture checkpoint from its config.json shape: untied input and
    output embeddings; per layer the q and o projections (h x h), k and v (h x kv_heads x head_dim),
    a gated MLP of 3 x h x ffn per expert plus the router (h x experts), two RMSNorms; a final norm."""
    h, kv = m.hidden, (m.kv_heads or m.heads) * (m.head_dim or m.hidden // m.heads)
    experts = max(m.experts, 1)
    layer = 2 * h * h + 2 * h * kv + experts * 3 * h * m.ffn + (h * m.experts if m.experts else 0) + 2 * h
    return 2 * m.vocab * h + m.layers * layer + h


@pytest.mark.parametrize(
    "mid",
    [
        "llama-2-7b",
        "llama-2-13b",
        "llama-2-70b",
        "llama-3-8b",
        "llama-3-70b",
        "llama-3.1-8b",
        "llama-3.1-70b",
        "llama-3.1-405b",
        "llama-3.3-70b",
        "mixtral-8x7b",
    ],
)
def test_preset_parameter_counts_match_the_published_shapes(mid):
    m = CATALOG.models[mid]
    assert m.params == _llama_params(m)
    if m.experts:  # all routed experts; a token multiplies through k of E of them
        assert m.expert_params == m.layers * m.experts * 3 * m.hidden * m.ffn
        assert m.active_params == m.params - m.expert_params * (m.experts - m.experts_per_token) // m.experts


def test_every_preset_trains_and_serves():
    for mid in CATALOG.models:
        spec = spec_from_flags(CATALOG, model=mid)
        assert spec.model.name == mid and spec.model.params == CATALOG.models[mid].params
        served = load_model(mid)
        assert served.name == mid and served.params == CATALOG.models[mid].params
        assert served.max_context >= CATALOG.models[mid].seq_len


def test_a_former_serving_preset_trains_as_its_shape_twin():
    """Llama 3.1 8B (once serving-only) has Llama 3 8B's shape and pre-training context: the same
    training estimate."""
    a = estimate(model="llama-3.1-8b", gpu="h100-sxm", count=8, kind="finetune")
    b = estimate(model="llama-3-8b", gpu="h100-sxm", count=8, kind="finetune")
    assert a["fits"] and a["tokens_per_s"] == b["tokens_per_s"] and a["layout"] == b["layout"]


def test_a_former_training_preset_serves_within_its_context():
    """Llama 3 8B (once training-only) serves like Llama 3.1 8B, but only to its 8,192-token window."""
    a = serve_estimate("llama-3-8b", "h100-sxm", 1, "fp8", 1000, 300, ttft_ms=2000, tpot_ms=100)
    b = serve_estimate("llama-3.1-8b", "h100-sxm", 1, "fp8", 1000, 300, ttft_ms=2000, tpot_ms=100)
    assert a["fits"] and a["output_tokens_per_s"] == b["output_tokens_per_s"]
    with pytest.raises(InputError, match="8192 tokens"):
        serve_estimate("llama-3-8b", "h100-sxm", 1, "fp8", 12000, 300)
    assert serve_estimate("llama-3.1-8b", "h100-sxm", 1, "fp8", 12000, 300)["fits"]
    gpt2 = load_model("gpt2-124m")
    assert (gpt2.head_dim, gpt2.kv_heads, gpt2.max_context) == (64, 12, 1024)
    assert serve_estimate("gpt2-124m", "rtx-4090", 1, "bf16", 500, 200)["fits"]


def test_a_mixture_of_experts_trains_on_its_active_parameters():
    spec = spec_from_flags(CATALOG, model="mixtral-8x7b").model
    m = CATALOG.models["mixtral-8x7b"]
    assert spec.matmul_params == m.active_params - m.vocab * m.hidden  # untied: the input lookup is no matmul
    out = estimate(model="mixtral-8x7b", gpu="h100-sxm", count=16, kind="finetune")
    assert any("mixture of experts" in n for n in out["notes"])


def test_aliases_name_their_preset_everywhere():
    assert CATALOG.model_id("llama-2-70b-chat") == "llama-2-70b"
    assert load_model("llama-3.1-70b-instruct") == load_model("llama-3.1-70b")
    spec = spec_from_flags(CATALOG, model="llama-3.1-8b-instruct")
    assert spec.model.name == "llama-3.1-8b"
    a = serve_estimate("llama-2-70b-chat", "h100-sxm", 8, "fp8", 600, 290)
    b = serve_estimate("llama-2-70b", "h100-sxm", 8, "fp8", 600, 290)
    assert a == b and a["model"] == "llama-2-70b"
    with pytest.raises(InputError, match="did you mean llama-2-70b-chat"):
        CATALOG.model_id("llama-2-70b-chta")


def test_models_lists_every_preset_and_shows_one_by_id_or_alias(run_json):
    _, listing = run_json("models", "list")
    assert [m["id"] for m in listing["models"]] == sorted(CATALOG.models, key=lambda k: (CATALOG.models[k].params, k))
    mixtral = next(m for m in listing["models"] if m["id"] == "mixtral-8x7b")
    assert (mixtral["experts"], mixtral["experts_per_token"], mixtral["kv_heads"]) == (8, 2, 8)
    assert all(m["sources"] and all(s["url"] for s in m["sources"]) for m in listing["models"])
    _, shown = run_json("models", "show", "llama-3.1-70b")
    assert shown["id"] == "llama-3.1-70b" and shown["max_context"] == 131072
    _, alias = run_json("models", "show", "llama-2-70b-chat")
    assert alias["id"] == "llama-2-70b" and alias["alias"]["id"] == "llama-2-70b-chat"
    assert {"id": "llama-2-70b-chat", "note": alias["alias"]["note"]} in alias["aliases"]


def test_a_catalog_alias_must_name_a_preset_and_not_shadow_one(write):
    bad = write("model_aliases:\n  my-model: {model: llama-3.1-8c, note: ours}\n", "bad.yaml")
    with pytest.raises(InputError, match=r"model_aliases\[my-model\].model: unknown model preset 'llama-3.1-8c'"):
        load_catalog(bad)
    shadow = write("model_aliases:\n  llama-3-8b: {model: llama-3.1-8b, note: ours}\n", "shadow.yaml")
    with pytest.raises(InputError, match="is a preset's id"):
        load_catalog(shadow)
    ok = write("model_aliases:\n  my-model: {model: llama-3.1-8b, note: our fine-tune}\n", "ok.yaml")
    assert load_model("my-model", load_catalog(ok)).name == "llama-3.1-8b"
