"""docs/limits.md states the limits the code enforces, and the progress hook reports (issue 20)."""
from __future__ import annotations

import time

from conftest import ROOT

from advisor.data import bounds
from advisor.inputs import loader, workload
from advisor.solve import candidates
from advisor.solve.run import progress

DOC = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")


def test_every_limit_in_the_code_is_on_the_page():
    for value in (loader.MAX_BYTES, loader.MAX_EXPANDED_NODES, loader.MAX_EXPANDED_CHARS, loader.MAX_DEPTH,
                  workload.MAX_JOBS, bounds.MAX_GPU_TYPES, bounds.MAX_RULES, candidates.MAX_CANDIDATES):
        assert f"{value:,}" in DOC, value
    assert f"{bounds.MAX_SERVERS:,} / {bounds.MAX_MODELS:,} / {bounds.MAX_SOURCES:,}" in DOC
    for lo, hi, _ in list(bounds.GPU_RANGES.values()) + list(bounds.INTERCONNECT_RANGES.values()):
        assert f"{bounds.num(lo)} to {bounds.num(hi)}" in DOC, (lo, hi)


def test_progress_is_reported_only_while_work_runs_long():
    lines: list[str] = []
    with progress(lines.append, after=0.05, every=0.05):
        time.sleep(0.3)
    assert lines and lines[0].startswith("still planning: ")
    quiet: list[str] = []
    with progress(quiet.append, after=5):
        pass
    assert quiet == []
