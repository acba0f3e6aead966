"""Every path that grades or draws a plan's rental rate does so as the plan's purchase rows do: at the
order and at the GPUs the plan holds at once on the provider (solve/constraints/gpu_count.held_counts,
RentalOffer.confidence_at; docs/model.md "Joint draws"). Each expected factor is re-computed here from
the grades' widths in catalog/uncertainty.yaml (data/uncertainty.price_dist), not through rate_dist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import advisor
from advisor.flow import prepare
from advisor.inputs.workload import parse_workload
from advisor.solve.constraints.gpu_count import held_counts
from advisor.solve.milp import solve

GPUS = Path(advisor.__file__).parent.parent / "catalog" / "gpus.yaml"

BRIDGE = (
    "name: bridge\ndeployment: {context: datacenter, ownership: any}\n"
    "kind: serve\nmodel: llama-3.1-8b\nprecision: fp8\nslo: {ttft_ms: 2000, tpot_ms: 100}\n"
    "traffic: {requests_per_s: 20, input_tokens: 1000, output_tokens: 300}\n"
)


@pytest.fixture(scope="module")
def bridged(rules: Any, tmp_path_factory: Any) -> tuple[Any, Any, Any]:
    """Bought RTX 6000 Ada serving once they arrive, 2 MI300X rented from TensorWave until then (the
    bridge, tests/test_serving_bridge.py), TensorWave's rate here medium and evidenced to one GPU held
    at once (max_gpus_per_provider: 1): the bridge's 2 GPUs are above it."""
    import datetime as dt

    doc = yaml.safe_load(GPUS.read_text(encoding="utf-8"))
    (entry,) = [g for g in (doc["gpus"] if isinstance(doc, dict) else doc) if g["id"] == "mi300x"]
    offers = [dict(o) for o in entry["prices"]["rent"]]
    for o in offers:
        if o["provider"] == "TensorWave":
            o.update(confidence="medium", max_gpus_per_provider=1)
    path = tmp_path_factory.mktemp("tw") / "tw.yaml"
    path.write_text(yaml.safe_dump({"gpus": [{"id": "mi300x", "prices": {"rent": offers}}]}), encoding="utf-8")
    catalog = advisor.load_catalog(path)
    problem = prepare(parse_workload(yaml.safe_load(BRIDGE)), catalog, rules, dt.date(2026, 6, 1))
    sol = solve(problem)
    assert held_counts(problem, sol) == {("mi300x", "TensorWave"): 2}
    assert sol.bridges and all(b.offer.offer.provider == "TensorWave" for b, _ in sol.bridges)
    return catalog, problem, sol


def test_the_bridge_row_is_graded_by_the_gpus_held_at_once(bridged: tuple[Any, Any, Any]) -> None:
    """The bridge's purchase row read 'medium' (its one-GPU orders are within the limit) while the bill
    (solve/ledger.py) graded the same rent low: two GPUs held at once are above the one evidenced."""
    from advisor.plan_rows import purchase_rows
    from advisor.solve.ledger import bill_of_materials

    _, problem, sol = bridged
    (row,) = [r for r in purchase_rows(problem, sol) if r.get("use") == "bridge"]
    (line,) = [x for x in bill_of_materials(problem, sol) if "until the bought serving GPUs arrive" in x["item"]]
    assert row["provider"] == "TensorWave" and row["count"] == 2
    assert row["confidence"] == line["confidence"] == "low", (row["confidence"], line["confidence"])
