"""A serving job's own measurements (issue 31 item 4): used exactly where measured, moving the other
GPUs by the stated rule (advisor/perf/serving_measured.py), and every estimate says what its speed rests on."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from advisor.data.catalog import load_catalog
from advisor.errors import InputError
from advisor.inputs.jobs import ServeJob
from advisor.perf.kv import load_model
from advisor.perf.serving import hardware, load_params, replica_rate
from advisor.perf.serving_estimate import serve_estimate, serving_model

CATALOG = load_catalog()
RUN = {
    "gpu": "h100-sxm",
    "count": 8,
    "tensor_parallel": 2,
    "input_len": 1000,
    "output_len": 300,
    "date": "2026-11-02",
    "note": "vLLM 0.11, max_num_seqs 512",
}


def _job(**run) -> ServeJob:
    return ServeJob.model_validate(
        {
            "kind": "serve",
            "model": "llama-3.1-70b",
            "precision": "fp8",
            "traffic": {"requests_per_s": 10, "input_tokens": 1000, "output_tokens": 300},
            "measured": [{**RUN, **run}],
        }
    )


def _offline(model, gpu, count=8, tp=2, i=1000, o=300):
    return serve_estimate(model, CATALOG.gpus[gpu], count, "fp8", i, o, tensor_parallel=tp, catalog=CATALOG)


def test_the_measured_shape_is_estimated_at_the_measured_speed_exactly():
    modelled = _offline(load_model("llama-3.1-70b"), "h100-sxm")
    for measured in (0.6 * modelled["output_tokens_per_s"], 1.3 * modelled["output_tokens_per_s"]):
        est = _offline(serving_model(_job(output_tokens_per_s=measured), CATALOG), "h100-sxm")
        assert est["output_tokens_per_s"] == pytest.approx(measured, abs=2e-3)
        assert est["speed_evidence"] == "measured" and "your run of 8 x h100-sxm" in est["speed_source"]


def test_other_shapes_and_gpus_move_by_the_stated_rule():
    base = load_model("llama-3.1-70b")
    modelled = _offline(base, "h100-sxm")["output_tokens_per_s"]
    slower = serving_model(_job(output_tokens_per_s=0.7 * modelled), CATALOG)
    f = 0.7
    share = load_params().measured_software_share
    # the same GPU at another count and shape: the whole factor, transferred
    other_shape = _offline(slower, "h100-sxm", count=4, tp=4, i=2000, o=200)
    assert other_shape["speed_evidence"] == "transferred"
    assert other_shape["output_tokens_per_s"] / _offline(base, "h100-sxm", count=4, tp=4, i=2000, o=200)[
        "output_tokens_per_s"
    ] == pytest.approx(f, rel=1e-6)
    # its generation (Hopper): the whole factor; another generation (Blackwell): the software share
    for gpu, expected in (("h200-sxm", f), ("b200", f**share)):
        moved, own = _offline(slower, gpu), _offline(base, gpu)
        assert moved["speed_evidence"] == "transferred"
        assert moved["output_tokens_per_s"] / own["output_tokens_per_s"] == pytest.approx(expected, rel=1e-6)
        assert moved["output_tokens_per_s"] < own["output_tokens_per_s"]  # the same direction as the measurement


def test_the_optimizer_unit_carries_the_measurement_through_the_model():
    """The serving candidate builder calls replica_rate(cls.model, ...): the measured model is enough."""
    model = serving_model(_job(output_tokens_per_s=5000.0), CATALOG)
    hw = hardware(CATALOG.gpus["h100-sxm"], CATALOG)
    r = replica_rate(model, hw, 2, "fp8", 1000, 300)
    assert r.speed_evidence == "measured" and r.requests_per_s * 4 * 300 == pytest.approx(5000.0, rel=1e-6)
    slo = replica_rate(model, hw, 2, "fp8", 1000, 300, ttft_ms=2000, tpot_ms=100)
    assert slo.requests_per_s <= r.requests_per_s and slo.speed_evidence == "measured"


def test_without_measurements_evidence_says_whether_the_generation_was_calibrated():
    assert _offline("llama-3.1-70b", "h100-sxm")["speed_evidence"] == "same_generation"
    assert _offline("llama-3.1-70b", "h100-nvl")["speed_evidence"] == "same_generation"  # Hopper runs are fitted
    est = serve_estimate(
        "llama-3.1-8b", CATALOG.gpus["rx-7900-xtx"], 1, "fp16", 500, 100, catalog=CATALOG
    )  # RDNA 3: no run
    assert est["speed_evidence"] == "datasheet" and est["speed_source"] is None


def test_bad_measurements_are_refused_by_name():
    with pytest.raises(ValidationError, match="not a multiple of tensor_parallel"):
        _job(output_tokens_per_s=100.0, count=6, tensor_parallel=4)
    with pytest.raises(InputError, match=r"jobs\[0\]\.measured\[0\]\.gpu: unknown GPU id 'h100-sxn'"):
        serving_model(_job(output_tokens_per_s=100.0, gpu="h100-sxn"), CATALOG)
    with pytest.raises(InputError, match=r"jobs\[0\]\.measured\[0\]: .*not a layout"):
        serving_model(_job(output_tokens_per_s=100.0, gpu="rtx-4090", count=1, tensor_parallel=1), CATALOG)


def test_a_run_beyond_what_the_gpus_peak_allows_is_refused_naming_the_bound():
    """review19 #4: a generated token multiplies through every active weight but the input embedding
    (a lookup) once, 2 FLOPs each, so 8 H100 at their dense fp8 peak make at most 8 x 1978.9e12 /
    (2 x (70,553,706,496 - 128,256 x 8,192)) = 113,889 output tokens/s of Llama 3.1 70B (catalog
    figures, by hand); a run beyond it is refused at its field, one within it is used."""
    most = 8 * 1978.9e12 / (2 * (70_553_706_496 - 128_256 * 8_192))
    with pytest.raises(InputError, match=r"jobs\[0\]\.measured\[0\]\.output_tokens_per_s: .*at most 113,889 output"):
        serving_model(_job(output_tokens_per_s=1.01 * most), CATALOG)
    within = serving_model(_job(output_tokens_per_s=0.99 * most), CATALOG).speed("h100-sxm")
    assert within is not None and within.evidence == "measured"


def test_a_serving_runs_date_is_a_date_and_doubted_after_the_plan_or_before_its_gpu(catalog, rules):
    """A serving `measured:` run's date was free text (review28 L3): `date: banana` passed and a run dated
    2099-11-01 was taken without a word, where a training run's is doubted. It is now YYYY-MM-DD, and
    the plan says to check a date after its day or before the GPU launched."""
    from conftest import AS_OF

    from advisor.flow import plan
    from advisor.inputs.workload import parse_workload

    for bad in ("banana", 0, 1785456000, 20261102, 1.5, True):  # a number is not a Unix time (review29 L8)
        with pytest.raises(ValidationError, match=f"{bad!r} is not a date: write YYYY-MM-DD"):
            _job(output_tokens_per_s=2000.0, date=bad)

    def doubts(date: str) -> list[str]:
        job = {**_job(output_tokens_per_s=2000.0).model_dump(exclude_none=True), "measured": [{**RUN, "date": date}]}
        job["measured"][0]["output_tokens_per_s"] = 2000.0
        doc = {"deployment": {"context": "datacenter", "ownership": "rent"}, "jobs": [job]}
        p = plan(parse_workload(doc), catalog=catalog, rules=rules, as_of=AS_OF, explain="none")
        return [w["message"] for w in p["warnings"] if w["code"] == "measurement-doubt"]

    assert any(
        "TP2, 1000 in / 300 out" in d and "dated after the plan's day (2026-12-01)" in d for d in doubts("2099-11-01")
    )
    assert any("dated before the NVIDIA H100 SXM5 80GB launched" in d for d in doubts("2001-01-01"))
    assert not [d for d in doubts("2026-11-02") if "dated" in d]
