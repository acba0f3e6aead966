"""The layout search's answers, dumped and compared (run by hand, never by the test suite): the
proof that a faster search (perf/layout.py) changes no answer. Every model preset x five GPUs x
counts 1 to 2,048 x bf16/fp8 pretraining, LoRA and QLoRA, searched afresh (no memo), with the
CPU seconds the searches took.

    GPU_ADVISOR_CACHE=off python bench/layout_search.py dump /tmp/layout-before.json
    (change the search)
    GPU_ADVISOR_CACHE=off python bench/layout_search.py dump /tmp/layout-after.json
    python bench/layout_search.py compare /tmp/layout-before.json /tmp/layout-after.json

Run it from the checkout under test (PYTHONPATH=. if the installed package points elsewhere).
`dump` loads numpy first, as a plan does (pulp loads it), so the search takes perf/layout_grid.py's
array path; `dump-scalar` leaves numpy out, as `advisor estimate` does (`fastest_scalar`).
`compare` wants identical layouts and every time and tokens/s equal to 1e-12 relative.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict

GPUS = ("a100-80gb-sxm", "h100-sxm", "rtx-4090", "mi300x", "b200")
COUNTS = (1, 2, 8, 64, 512, 2048)
KINDS = (("pretrain", ("bf16", "fp8")), ("lora", ("bf16",)), ("qlora", ("bf16",)))
REL = 1e-12


def dump(path: str, scalar: bool = False) -> None:
    if not scalar:
        import numpy  # noqa: F401 -- the array path, as on the plan path (perf/layout.py `_fastest`)
    from advisor.data.catalog import load_catalog
    from advisor.perf.estimate import params_from
    from advisor.perf.jobspec import spec_from_flags
    from advisor.perf.layout import _choose_layout

    cat = load_catalog(None)
    p = params_from(cat)
    out: dict = {}
    t0 = time.process_time()
    for model in sorted(cat.models):
        for kind, precisions in KINDS:
            for prec in precisions:
                spec = spec_from_flags(cat, model=model, precision=prec, kind=kind)
                for g in GPUS:
                    gpu = cat.gpu(g)
                    if not gpu.dense_tflops(prec):
                        continue
                    for n in COUNTS:
                        r = _choose_layout(spec, gpu, n, p)
                        out[f"{model}|{kind}|{prec}|{g}|{n}"] = (
                            None if r is None else {"layout": asdict(r[0]), "tps": r[2], "needs": r[3], "t": r[1]}
                        )
    cpu = time.process_time() - t0
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print(f"{len(out)} questions, {cpu:.2f} s CPU")


def _close(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return x == y or abs(x - y) <= REL * max(abs(x), abs(y))
    return x == y


def compare(before: str, after: str) -> int:
    with open(before) as f:
        a = json.load(f)
    with open(after) as f:
        b = json.load(f)
    if a.keys() != b.keys():
        print("different questions:", sorted(set(a) ^ set(b))[:10])
        return 1
    bad = [
        k
        for k in a
        if (a[k] is None) != (b[k] is None)
        or a[k] is not None
        and (
            a[k]["layout"] != b[k]["layout"]
            or a[k]["needs"] != b[k]["needs"]
            or not _close(a[k]["tps"], b[k]["tps"])
            or a[k]["t"].keys() != b[k]["t"].keys()
            or not all(_close(a[k]["t"][x], b[k]["t"][x]) for x in a[k]["t"])
        )
    ]
    for k in bad[:20]:
        print("DIFFERENT", k, a[k], b[k])
    print(f"{len(a)} questions, {len(bad)} different")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("dump", "dump-scalar"):
        dump(sys.argv[2], scalar=sys.argv[1] == "dump-scalar")
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
