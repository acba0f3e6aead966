"""How much of a speed error GPUs of one vendor and generation share (advisor/explain/draws.py
SHARED_SPEED), from the calibration residuals. Run by hand:

    pip install -e '.[bench]'
    python bench/joint_draws.py [--residuals FILE]    # FILE: bench/uncertainty.py's cached residuals

The residuals are bench/uncertainty.py's out-of-sample ones (each row predicted by the estimator
refitted without its own source; about 3 minutes on one core, or read from --residuals). A pair is
one job (model, sequence length, GPU count, precision) measured on two GPU types; the share is the
intraclass correlation of the pairs' residuals (pooled mean and variance: the pair's order does not
matter), with a Fisher-z 95% interval. Pairs within one vendor and generation give SHARED_SPEED;
pairs across generations are printed beside them (not modelled: the draws are independent across
groups).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.explain.draws import group_of  # noqa: E402


def residuals(cache: str | None) -> list[dict]:
    if cache and Path(cache).exists():
        return json.loads(Path(cache).read_text(encoding="utf-8"))
    import accuracy  # bench/accuracy.py
    from uncertainty_residuals import strict_residuals

    from advisor.perf import params_from

    catalog = load_catalog()
    res = strict_residuals(accuracy.load_rows(), catalog, params_from(catalog))
    if cache:
        Path(cache).write_text(json.dumps(res, indent=0, sort_keys=True), encoding="utf-8")
    return res


def pairs(res: list[dict]) -> tuple[list, list]:
    """(pairs within a group, pairs across groups): (e1, e2, job, gpu1, gpu2)."""
    catalog = load_catalog()
    lines = (line for line in (ROOT / "catalog" / "calibration.csv").open(encoding="utf-8") if not line.startswith("#"))
    rows = {r["id"]: r for r in csv.DictReader(lines)}
    jobs: dict[tuple, list] = {}
    for x in res:
        r = rows[x["id"]]
        jobs.setdefault((r["model"].lower(), r["seq_len"], r["gpu_count"], r["precision"]), []).append(
            (r["gpu"], x["outer"])
        )
    within, across = [], []
    for job, found in sorted(jobs.items()):
        for (g1, e1), (g2, e2) in combinations(found, 2):
            if g1 != g2:
                same = group_of(catalog.gpus[g1]) == group_of(catalog.gpus[g2])
                (within if same else across).append((e1, e2, job, g1, g2))
    return within, across


def icc(p: list) -> tuple[float, float, float]:
    """(intraclass correlation, 95% interval low, high) of pairs (e1, e2, ...)."""
    xs = [e for a, b, *_ in p for e in (a, b)]
    mu = sum(xs) / len(xs)
    var = sum((x - mu) ** 2 for x in xs) / len(xs)
    r = sum((a - mu) * (b - mu) for a, b, *_ in p) / len(p) / var
    half = 1.959964 / math.sqrt(max(len(p) - 3, 1))
    return r, math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--residuals", help="JSON file of bench/uncertainty.py's residuals (read, or written)")
    args = ap.parse_args(argv)
    within, across = pairs(residuals(args.residuals))
    for name, p in (("within a vendor and generation", within), ("across generations", across)):
        r, lo, hi = icc(p)
        kinds = sorted({f"{a}/{b}" for *_, a, b in p})
        print(
            f"{name}: {len(p)} pairs ({', '.join(kinds)}): intraclass correlation {r:.2f} "
            f"(95% interval {lo:.2f} to {hi:.2f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
