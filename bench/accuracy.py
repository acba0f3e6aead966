"""Accuracy of the training estimator against measured training runs (run by hand).

    pip install -e '.[bench]'                 # scipy and numpy, for the fit only
    python bench/accuracy.py                  # report with the parameters in catalog/estimator.yaml
    python bench/accuracy.py --fit            # refit the free parameters, print them, report with them
    python bench/accuracy.py --fit --out docs/accuracy.md --band catalog/accuracy.yaml

The rows, predictions, fit and cross-validation are bench/calibration.py's; the report and the
band file are bench/accuracy_report.py's. `--fit` also prints the values computed from the rows
that catalog/estimator.yaml holds (the MFU medians, the datasheet derating): copy them there
(tests/test_speed_evidence.py checks that the file and the rows agree).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy_report import END, MARKER, report, write_band  # noqa: E402
from calibration import *  # noqa: E402,F401,F403  (the names tests and bench/uncertainty*.py use)
from calibration import (  # noqa: E402
    FREE,
    cross_validate,
    deratings,
    direct_deratings,
    evidence_table,
    fit,
    fit_eras,
    get,
    load_rows,
    mfu_floor,
    mfu_medians,
    pair_deratings,
    predict,
    software_share,
    today_kernel_runs,
    with_deratings,
)

from advisor.data.catalog import load_catalog  # noqa: E402
from advisor.data.evidence import use_table  # noqa: E402
from advisor.perf import params_from  # noqa: E402


def computed(rows: list[dict], catalog, p) -> dict:
    """The estimator.yaml values computed from the rows, not fitted: MFU medians and the datasheet
    derating (`datasheet_derating.cdna` and its `vendor_tuned` part) with the pairs and runs behind it."""
    pairs = pair_deratings(rows, catalog, p)
    rounded = [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in x.items()} for x in pairs]
    return {
        "mfu_median": mfu_medians(rows, catalog, p),
        "measured_mfu_floor": mfu_floor(rows, catalog),
        "today_kernel_runs": today_kernel_runs(rows, catalog),
        "datasheet_derating": deratings(rows, catalog, p),
        "pairs": rounded,
        "vendor_tuned_runs": [dict(x, derating=round(x["derating"], 3)) for x in direct_deratings(rows, catalog, p)],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="refit the free parameters on the fit=yes rows and use them")
    ap.add_argument("--out", help="write the report (Markdown) to this file")
    ap.add_argument("--band", help="write the error band memos quote (YAML), e.g. catalog/accuracy.yaml")
    args = ap.parse_args(argv)
    catalog = load_catalog()
    p = params_from(catalog)
    rows = load_rows()
    with use_table(evidence_table(rows, catalog)["gpus"]):  # evidence from these rows, not the shipped file
        return run(args, rows, catalog, p)


def run(args: argparse.Namespace, rows: list[dict], catalog, p) -> int:
    if args.fit:  # the values computed from the rows first: the fit's predictions use them
        p = replace(p, mfu_median=mfu_medians(rows, catalog, p), today_kernel_runs=today_kernel_runs(rows, catalog))
        p = fit_eras(rows, catalog, fit([r for r in rows if r["fit"] == "yes"], catalog, p))
        p = with_deratings(rows, catalog, p)
        print(
            "fitted:",
            {k: round(get(p, k), 4) for k in FREE},
            "software_era_factor",
            p.software_era_factor,
            "fp8_framework_ratio",
            round(p.fp8_framework_ratio, 4),
            "default",
            p.framework_efficiency["default"],
        )
        print("computed from the rows:", computed(rows, catalog, p))
    preds = {r["id"]: predict(r, catalog, p) for r in rows}
    held, fitted = cross_validate(rows, catalog, p)
    if args.fit:  # on the out-of-sample offsets: what a user's run off the model looks like
        print(
            "software share of a run's offset (catalog/estimator.yaml measured_software_share):",
            software_share(rows, catalog, held),
        )
    text = report(rows, catalog, p, preds, held, fitted)
    if args.out:  # the hand-written part above MARKER and everything after END (the serving section) are kept
        out = Path(args.out)
        old = out.read_text(encoding="utf-8") if out.exists() else ""
        head = old.split(MARKER)[0] if MARKER in old else "# Accuracy of the performance model\n\n"
        tail = old.split(END, 1)[1] if END in old else "\n"
        out.write_text(head + MARKER + "\n\n" + text.rstrip("\n") + "\n\n" + END + tail, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text)
    if args.band:
        write_band(args.band, rows, held, catalog)
        print(f"wrote {args.band}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
