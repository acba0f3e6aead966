"""Issue 29, item 6: a tensor precision a GPU lacks is null with a note and a source (`supported:
false`), told apart from a rate no source gives, so no job is planned at a format the part lacks."""

from __future__ import annotations

import pytest

from advisor.data.catalog_figures import TensorFigure


def test_the_rx_7900_xtx_lacks_fp8_and_says_why(catalog):
    g = catalog.gpus["rx-7900-xtx"]
    fp8 = g.tensor_tflops["fp8"]
    assert fp8.value is None and fp8.supported is False and fp8.note and fp8.source
    assert g.has_precision("fp8") is False and g.has_precision("fp4") is False
    assert g.has_precision("fp16") is True
    assert g.has_precision("bf16") is True and g.dense_tflops("bf16") is None  # the format exists, no rate


@pytest.mark.parametrize(
    "gpu, lacks",
    [
        ("a100-80gb-sxm", "fp8"),
        ("rtx-3090", "fp8"),
        ("t4", "bf16"),
        ("v100-32gb-sxm2", "bf16"),
        ("mi250x", "fp8"),
        ("h100-sxm", "fp4"),
        ("rtx-4090", "fp4"),
        ("mi300x", "fp4"),
    ],
)
def test_a_format_a_part_lacks_is_marked_unsupported_with_a_source(catalog, gpu, lacks):
    fig = catalog.gpus[gpu].tensor_tflops[lacks]
    assert fig.value is None and fig.supported is False and fig.source and fig.note
    assert set(fig.source) <= set(catalog.sources)


def test_every_gpu_says_for_fp8_and_fp4_whether_it_has_them(catalog):
    for g in catalog.gpus.values():
        for prec in ("bf16", "fp16", "fp8"):
            assert prec in g.tensor_tflops, (g.id, prec)
        for prec in ("fp8", "fp4"):
            has = g.has_precision(prec)
            if has is None:  # only a rate no source gives, never a silent gap
                assert g.tensor_tflops[prec].note, (g.id, prec)
    assert catalog.gpus["b200"].has_precision("fp4") and catalog.gpus["rtx-5090"].has_precision("fp4")


def test_a_rate_cannot_be_marked_unsupported():
    with pytest.raises(ValueError, match="supported: false"):
        TensorFigure(value=100.0, supported=False, source=["x"])
    with pytest.raises(ValueError, match="cite the source"):
        TensorFigure(value=None, supported=False, note="no FP8")
