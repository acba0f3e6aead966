"""`advisor calibrate` raises the MFU ceilings to what the user's runs reached, never below the value a
generation had (its own, its family's or `default`)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from advisor.cli import main
from advisor.perf import params_from

HOPPER_RUNS = (
    "gpu,count,tokens_per_s,model,precision\n"
    "h100-sxm,8,60000,llama-3-8b,bf16\n"
    "h100-sxm,16,118000,llama-3-8b,bf16\n"
    "h100-sxm,64,450000,llama-3-8b,bf16\n"
    "a100-80gb-sxm,8,22000,llama-3-8b,bf16\n"
)
AMD_RUNS = "gpu,count,tokens_per_s,model,precision\nmi300x,8,30000,llama-3-8b,bf16\nmi300x,16,58000,llama-3-8b,bf16\n"


def _override(tmp_path: Path, runs: str) -> Path:
    csv, out = tmp_path / "runs.csv", tmp_path / "mine.yaml"
    csv.write_text(runs, encoding="utf-8")
    r = CliRunner().invoke(main, ["calibrate", str(csv), "-o", str(out), "--force"])
    assert r.exit_code == 0, r.output
    return out


def test_a_ceiling_is_never_lowered_by_runs_below_the_one_it_falls_back_to(tmp_path, catalog):
    """Hopper publishes one MFU ceiling (49%, one server) that multi-server jobs fall back to. Runs across
    servers at a lower MFU wrote a multi-server ceiling of their own best (43%) before: a user's slower
    runs lowered the ceiling every multi-server estimate is held to. A generation with no ceiling of its
    own (CDNA 3 takes `default`) is not given the runs' best either."""
    published = params_from(catalog).mfu_cap
    assert "bf16_multiserver" not in published["hopper"] and "cdna3" not in published
    est = yaml.safe_load(_override(tmp_path, HOPPER_RUNS).read_text())["estimator"]
    hopper = est.get("mfu_cap", {}).get("hopper", {})
    assert hopper.get("bf16_multiserver", published["hopper"]["bf16"]) >= published["hopper"]["bf16"]
    est = yaml.safe_load(_override(tmp_path, AMD_RUNS).read_text())["estimator"]
    assert "cdna3" not in est.get("mfu_cap", {})
