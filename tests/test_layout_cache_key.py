"""The layout cache shares one search between GPUs with the same figures (a --catalog copy of a GPU
at another price or under another name) and never between GPUs whose search could differ: every
remembered answer equals the search run afresh on that GPU."""

from __future__ import annotations

import pytest

from advisor.data.catalog import load_catalog
from advisor.perf import layout_cache
from advisor.perf.estimate import params_from
from advisor.perf.jobspec import spec_from_flags
from advisor.perf.layout import _choose_layout, choose_layout

COUNTS = (1, 8, 64)


@pytest.fixture
def no_disk(monkeypatch):
    monkeypatch.setattr(layout_cache, "_FOLDER", [None])  # this process only: nothing read or written on disk
    layout_cache.forget()
    yield
    layout_cache.forget()


def _copy(gpu, suffix="-copy"):
    prices = gpu.prices.model_copy(update={"purchase": None})
    return gpu.model_copy(update={"id": gpu.id + suffix, "name": gpu.name + " (copy)", "prices": prices})


def test_a_copy_shares_its_originals_search_unless_a_table_names_the_original(no_disk):
    cat = load_catalog(None)
    p = params_from(cat)
    spec = spec_from_flags(cat, model="llama-3-8b", precision="bf16", kind="pretrain")
    named = {
        k
        for f in (
            "architecture_efficiency",
            "framework_efficiency",
            "attention_efficiency",
            "software_factor",
            "attention_kernel_speedup",
            "network_gbps_per_gpu",
        )
        if isinstance(getattr(p, f), dict)
        for k in getattr(p, f)
    }
    plain = cat.gpu("rtx-4090")
    tabled = cat.gpu("h100-sxm")
    assert plain.id not in named and tabled.id in named  # the premise: one GPU of each kind
    # ... and the table matters: under another id, h100-sxm falls back to its generation's figures
    assert _choose_layout(spec, _copy(tabled), 8, p) != _choose_layout(spec, tabled, 8, p)
    for n in COUNTS:
        assert choose_layout(spec, _copy(plain), n, p) is choose_layout(spec, plain, n, p)  # one search
        for gpu in (plain, tabled):
            copy = _copy(gpu, "-other")
            assert choose_layout(spec, copy, n, p) == _choose_layout(spec, copy, n, p)  # never a wrong answer
            assert choose_layout(spec, gpu, n, p) == _choose_layout(spec, gpu, n, p)
