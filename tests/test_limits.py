"""docs/limits.md states the limits the code enforces, and the progress hook reports (issue 20)."""

from __future__ import annotations

import re
import time

import pytest
from conftest import ROOT

from advisor.data import bounds, cache
from advisor.errors import InputError
from advisor.inputs import loader, workload, yaml_nodes
from advisor.solve import candidates
from advisor.solve.run import progress

DOC = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")


def test_every_limit_in_the_code_is_on_the_page():
    for value in (
        loader.MAX_BYTES,
        yaml_nodes.MAX_EXPANDED_NODES,
        yaml_nodes.MAX_EXPANDED_CHARS,
        yaml_nodes.MAX_DEPTH,
        workload.MAX_JOBS,
        bounds.MAX_GPU_TYPES,
        bounds.MAX_RULES,
        candidates.MAX_CANDIDATES,
        cache.MAX_ENTRY_BYTES,
        bounds.MAX_JOB_GPU_PAIRS,
        bounds.MAX_RUNS,
    ):
        assert f"{value:,}" in DOC, value
    assert f"{bounds.MAX_SERVERS:,} / {bounds.MAX_MODELS:,} / {bounds.MAX_SOURCES:,}" in DOC
    for lo, hi, _ in list(bounds.GPU_RANGES.values()) + list(bounds.INTERCONNECT_RANGES.values()):
        assert f"{bounds.num(lo)} to {bounds.num(hi)}" in DOC, (lo, hi)


def test_progress_is_reported_only_while_work_runs_long():
    lines: list[str] = []
    with progress(lines.append, after=0.05, every=0.05):
        time.sleep(0.3)
    assert lines and lines[0].startswith("planning: building the options, ")
    quiet: list[str] = []
    with progress(quiet.append, after=5):
        pass
    assert quiet == []


EXTREMES = [  # figures at the edges of their ranges: valid, so a plan or a diagnosis, never a crash
    "gpus:\n  - id: rtx-4090\n    memory_bandwidth_gbps: {value: 1, source: [tomsguide_4090]}\n",
    "gpus:\n  - id: rtx-4090\n    memory_bandwidth_gbps: {value: 100000, source: [tomsguide_4090]}\n",
    "gpus:\n  - id: rtx-4090\n    tensor_tflops: {bf16: {value: 0.01, source: [tomsguide_4090]}}\n",
    "gpus:\n  - id: rtx-4090\n    tdp_w: {value: 20000, source: [tomsguide_4090]}\n",
    "gpus:\n  - id: rtx-4090\n    memory_gb: {value: 1, source: [tomsguide_4090]}\n",
    "assumptions:\n  pue_office: {value: 3.0, unit: ratio, source: [tomsguide_4090]}\n",
    "assumptions:\n  electricity_usd_per_kwh_office: {value: 0, unit: USD/kWh, source: [tomsguide_4090]}\n",
    "gpus:\n  - id: rtx-4090\n    interconnect: {pcie_gbps: {value: 0.1, source: [tomsguide_4090]}}\n",
]


def test_overrides_at_the_edges_of_their_ranges_plan_or_diagnose(run, write):
    from conftest import AS_OF, EXAMPLES

    for i, text in enumerate(EXTREMES):
        code, out, err = run(
            "plan",
            EXAMPLES / "article-office.yaml",
            "--catalog",
            write(text, f"c{i}.yaml"),
            "--as-of",
            AS_OF,
            "--format",
            "json",
            "--time-limit",
            "10",
        )
        assert code in (0, 3), (text, err)
        assert "internal error" not in err and "Traceback" not in err


def test_a_catalog_of_1000_gpu_types_is_refused_at_once(run, write, monkeypatch):
    """Refused when the catalog is read: no estimate runs (one would raise here), so the refusal does
    not wait for 1,000 GPU types' layout searches."""
    from conftest import EXAMPLES

    from advisor.solve import class_candidates

    def no_estimate(*args: object, **kwargs: object) -> None:
        raise AssertionError("an estimate ran before the oversized catalog was refused")

    monkeypatch.setattr(class_candidates, "evaluate", no_estimate)
    text = "gpus:\n" + "".join(f"  - {{id: clone-{i}}}\n" for i in range(1000))
    code, _, err = run("plan", EXAMPLES / "article-office.yaml", "--catalog", write(text, "big.yaml"))
    assert code == 2 and "the limit is 120" in err


def _distinct(n: int, allow: list[str] | None = None) -> dict:
    jobs = [{"name": f"j{i}", "model": "gpt2-124m", "tokens": f"{1 + i / 10_000:.4f}B"} for i in range(n)]
    return {"deployment": "datacenter", "jobs": jobs, **({"gpus": {"allow": allow}} if allow else {})}


def test_too_many_distinct_jobs_are_refused_before_any_estimate(run, write, monkeypatch):
    """Distinct jobs x GPU types past the limit: exit 2 naming it, from plan, validate, memo and the
    library alike, and the estimator never runs (issue 33: 5,000 distinct jobs once worked for 60 s
    before the candidate limit refused them; bench/limits.py times the refusal)."""
    import importlib

    import yaml

    import advisor

    flow = importlib.import_module("advisor.flow")  # (advisor.plan is its function)

    def never(*args, **kwargs):
        raise AssertionError("estimated before the size limit refused the workload")

    monkeypatch.setattr(flow, "build_problem", never)
    doc = _distinct(1_000)  # 1,000 x the built-in GPU types (30): more than 25,000 pairs
    types = len(advisor.load_catalog().gpus)
    path = write(yaml.safe_dump(doc), "many.yaml")
    for args in (("plan", path), ("validate", path), ("memo", path, "-o", path.with_suffix(".md"))):
        code, out, err = run(*args)
        assert code == 2 and out == "" and f"1,000 distinct jobs x {types} GPU types = {1000 * types:,}" in err, err
        assert f"the limit is {bounds.MAX_JOB_GPU_PAIRS:,}" in err
        assert re.match(rf"error: {re.escape(str(path))}:\d+:1: `jobs`", err)  # the line `jobs:` is written on
    with pytest.raises(advisor.InputError, match="distinct jobs"):
        advisor.plan(doc)
    with pytest.raises(advisor.InputError, match="distinct jobs"):  # bench code's path: prepare itself
        flow.prepare(advisor.load_workload(path))


def test_the_size_is_checked_once_per_plan(run, write, monkeypatch):
    """flow.prepare checks the workload's size for every path; the library and the CLI do not check it
    again before calling it (the check hashes every job: 5,000 of them are not read twice)."""
    import importlib

    import yaml

    import advisor

    flow = importlib.import_module("advisor.flow")
    calls = []

    class Stop(Exception):
        pass

    def counted(workload, gpu_ids):
        calls.append(len(workload.jobs))

    def stop(*args, **kwargs):
        raise Stop

    monkeypatch.setattr(flow, "check_workload_size", counted)
    monkeypatch.setattr(flow, "build_problem", stop)
    doc = _distinct(3)
    with pytest.raises(Stop):
        advisor.plan(doc)
    assert calls == [3]
    calls.clear()
    code, _, _ = run("plan", write(yaml.safe_dump(doc), "three.yaml"))
    assert code == 1 and calls == [3]  # (Stop is an internal error to the CLI)


def test_distinct_jobs_are_counted_as_the_planner_groups_them(catalog):
    """Identical jobs but for their names and repeat counts are one; the limit takes gpus.allow and
    gpus.deny into account, and holds at exactly MAX_JOB_GPU_PAIRS."""
    from advisor.inputs.workload import parse_workload

    same = parse_workload(
        {
            "deployment": "office",
            "jobs": [
                {"name": "a", "model": "gpt2-124m", "tokens": "1B"},
                {"name": "b", "model": "gpt2-124m", "tokens": "1B", "repeat": 4},
            ],
        }
    )
    assert bounds.distinct_jobs(same) == 1
    five = ["rtx-4090", "h100-sxm", "a100-80gb-sxm", "l40s", "b200"]
    at_limit = parse_workload(_distinct(5_000, five))  # exactly 25,000 pairs
    bounds.check_workload_size(at_limit, catalog.gpus)
    denied = at_limit.model_copy(update={"gpus": at_limit.gpus.model_copy(update={"deny": ["b200"]})})
    assert bounds.gpu_types_considered(denied, catalog.gpus) == 4
    past = at_limit.model_copy(update={"gpus": at_limit.gpus.model_copy(update={"allow": five + ["h200-sxm"]})})
    with pytest.raises(InputError, match="30,000"):
        bounds.check_workload_size(past, catalog.gpus)
