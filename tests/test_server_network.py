"""A server the catalog sources no network for (the workstation: network_usd_per_server and
network_gbps_per_server null) holds no job that spans servers: such a job is not priced and timed
on another server's network. A job within one workstation still uses it. Each plan is checked
against the same workload re-solved with the workstation taken out of datacenters by a catalog
override (an independent solve that never sees the new rows)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

import advisor

DATA = Path(__file__).parent / "data" / "server_network"
NO_DC_WORKSTATION = Path(__file__).parent / "data" / "review16" / "no_datacenter_workstations.yaml"
AS_OF = "2026-12-01"


def _plan(name: str, **options):
    return json.loads(advisor.plan(str(DATA / name), as_of=AS_OF, **options).to_json())


@pytest.fixture(scope="module")
def ada16():
    return _plan("ada_16_datacenter.yaml")


def test_a_16_gpu_datacenter_job_is_not_built_of_networked_workstations(ada16):
    """main bought 4 workstation-4x-pcie, '4 networked', for 16 RTX 6000 Ada ($88,630 PV), priced
    and timed on a network the catalog says it has no source for."""
    catalog = advisor.load_catalog().servers
    assert ada16["status"] == "optimal"
    held = {s["server"]: s for s in ada16["servers"]}
    assert "workstation-4x-pcie" not in held, held
    assert sum(s["count"] * catalog[s["server"]].gpu_slots for s in held.values()) >= 16
    assert all(catalog[sid].sources_network for sid in held)


def _without_workstations(path: Path) -> dict:
    """The plan re-solved without workstations in datacenters; without explanations (its readers
    compare what is bought and what it costs)."""
    return json.loads(advisor.plan(str(path), as_of=AS_OF, catalog=str(NO_DC_WORKSTATION), explain="none").to_json())


HARDWARE = ("purchase_usd", "servers_usd", "network_usd", "storage_usd")


def test_the_16_gpu_plan_buys_what_it_buys_without_workstations(ada16):
    """The same job re-solved with no workstation in a datacenter at all (catalog override) buys the
    same GPUs, servers and network to the cent, and is charged the same to the cent: the two 8-GPU
    servers pay their own support, hosting, burn-in and electricity, not the workstation's least
    share per slot the GPUs pay (solve/server_terms.py; main: $154,743.59, $357.59 under, support on $1,750 and
    31 W a slot, not $5,625 and 45 W)."""
    other = _without_workstations(DATA / "ada_16_datacenter.yaml")
    assert ada16["servers"] == other["servers"]
    for key in (*HARDWARE, "support_usd", "hosting_usd", "burn_in_usd", "energy_usd"):
        assert ada16["cost_breakdown"][key] == pytest.approx(other["cost_breakdown"][key], abs=0.01), key
    assert ada16["present_value_usd"] == pytest.approx(other["present_value_usd"], abs=0.01)
    assert ada16["present_value_usd"] > 150_000  # two $45,000 8-GPU servers, not four $7,000 workstations


def test_a_1024_gpu_plan_with_no_job_fitting_a_workstation_costs_what_it_costs_without_one():
    """CN, 70B: no job fits one 4-card workstation, so it is not offered at all (candidates._unjoined)
    and every term is charged at the 8-GPU server's share: the plan is the override's to the cent
    ($11,726,478.66 PV; main: $7,675,099 in 256 networked workstations)."""
    path = Path(__file__).parent / "data" / "review16" / "cn_workstations.yaml"
    mine = json.loads(advisor.plan(str(path), as_of=AS_OF, explain="none").to_json())
    other = _without_workstations(path)
    assert mine["servers"] == other["servers"]
    assert mine["servers"][0]["server"] == "pcie-server-8gpu"
    assert mine["present_value_usd"] == pytest.approx(other["present_value_usd"], abs=0.01)


def test_the_plan_says_why_the_workstation_was_left_out(ada16):
    notes = [w["message"] for w in ada16["warnings"] if w["code"] == "no-network"]
    assert notes and "workstation-4x-pcie" in notes[0] and "no sourced network" in notes[0], notes


def test_a_job_within_one_workstation_still_uses_it():
    """4 RTX 6000 Ada fit one 4-card workstation: no network, so it stays the cheapest host."""
    d = _plan("ada_4_datacenter.yaml")
    assert d["status"] == "optimal"
    assert d["servers"] == [
        {"server": "workstation-4x-pcie", "gpu": "rtx-6000-ada", "count": 1, "unit_price_usd": 7000.0, "networked": 0}
    ]
    assert not [w for w in d["warnings"] if w["code"] in ("no-network", "fabric")]


def test_an_office_job_wider_than_a_workstation_says_the_network_is_unsourced():
    """In an office the workstation is the only platform: a 70B job needs more than its 4 A6000, so
    the A6000 cannot be bought, and the reason names the missing network (main: 'no plan meets every
    limit', with 2 networked workstations priced on an unsourced network as the only way)."""
    d = _plan("a6000_70b_office.yaml")
    assert d["status"] == "infeasible"
    (rejected,) = [r for r in d["rejected"] if r["gpu"] == "rtx-a6000"]
    primary = next(r for r in rejected["reasons"] if r["primary"])
    assert primary["code"] == "slots"
    assert "workstation-4x-pcie" in primary["message"] and "no network" in primary["message"]


def test_a_gpu_with_no_priced_platform_is_told_apart_from_one_no_machine_holds():
    """review17 #3: the "slots" code meant for a job no unnetworked machine holds was also given to a GPU
    with no priced platform at all (Gaudi 3 in a datacenter), whose crossover factor then read "it needs
    several cards to hold the model" for a one-card job. It is `no-server` again."""
    doc = {
        "deployment": {"context": "datacenter", "ownership": "buy", "lead_time_days": 0},
        "model": "gpt2-124m",
        "tokens": "1B",
        "gpus": {"allow": ["gaudi3", "h100-sxm"]},
    }
    d = json.loads(advisor.plan(doc, as_of="2026-12-01", explain="alternatives").to_json())
    (gaudi,) = [r for r in d["rejected"] if r["gpu"] == "gaudi3"]
    codes = {r["code"] for r in gaudi["reasons"]}
    assert "no-server" in codes and "slots" not in codes, gaudi["reasons"]


def test_a_bought_serving_replica_does_not_span_workstations_joined_by_no_network():
    """review17 #1: 405B served in an office on RTX 6000 Ada bought 32 GPUs in 8 four-card workstations as
    replicas of tensor-parallel 8 x pipeline 2, each replica across four workstations on no network (no
    NIC line, no warning). The office's only platform is the workstation: no plan, and the reason says
    why."""
    doc = {
        "name": "probe",
        "deployment": {"context": "office", "ownership": "buy", "horizon_months": 12, "power_limit_kw": 20},
        "gpus": {"allow": ["rtx-6000-ada"]},
        "jobs": [
            {
                "name": "assistant",
                "kind": "serve",
                "model": "llama-3.1-405b",
                "precision": "fp8",
                "traffic": {"requests_per_s": 0.5, "input_tokens": 800, "output_tokens": 250, "peak_factor": 1},
                "slo": {"ttft_ms": 5000, "tpot_ms": 200, "percentile": 99},
            }
        ],
    }
    d = json.loads(advisor.plan(doc, as_of="2026-12-01", explain="alternatives").to_json())
    assert d["status"] == "infeasible" and not d["servers"]
    (ada,) = [r for r in d["rejected"] if r["gpu"] == "rtx-6000-ada"]
    assert any(r["code"] == "slots" and "no network" in r["message"] for r in ada["reasons"]), ada["reasons"]


def test_a_bought_serving_replica_is_not_held_in_two_workstations():
    """review21a #2: 70B served at a 60 ms TPOT needs tensor-parallel 8 replicas of RTX 6000 Ada. The
    candidate check passes them (the 8-GPU PCIe server holds one), but the MILP counted slots only: main
    bought 8 workstation-4x-pcie for the 4 replicas, each across two boxes joined by no network
    ($396,345.11 PV). Now each replica is in an 8-GPU server, the servers, GPUs and network the same to
    the cent as the workload re-solved with no workstation in a datacenter at all (catalog override)."""
    path = DATA / "ada_70b_serving_datacenter.yaml"
    mine = json.loads(advisor.plan(str(path), as_of=AS_OF).to_json())
    other = _without_workstations(path)
    catalog = advisor.load_catalog().servers
    (served,) = mine["serving"]
    assert served["ownership"] == "buy" and served["tensor_parallel"] * served["pipeline_parallel"] == 8
    assert all(catalog[s["server"]].gpu_slots >= 8 for s in mine["servers"]), mine["servers"]
    assert mine["servers"] == other["servers"]
    for key in HARDWARE:
        assert mine["cost_breakdown"][key] == pytest.approx(other["cost_breakdown"][key], abs=0.01), key


def test_the_invariant_check_refuses_a_replica_held_in_two_workstations(catalog, rules):
    """Every plan is checked against the constraints before it is printed (solve/verify.py): the plan
    main made for this workload (its 32 GPUs in 8 workstation-4x-pcie) now names the replica that spans
    them; the plan the MILP makes passes."""
    import dataclasses

    from advisor.flow import prepare
    from advisor.inputs.workload import load_workload
    from advisor.solve.milp import solve
    from advisor.solve.verify import violations

    problem = prepare(
        load_workload(DATA / "ada_70b_serving_datacenter.yaml"), catalog, rules, date.fromisoformat(AS_OF)
    )
    sol = solve(problem)
    assert violations(problem, sol) == []
    boxes = dataclasses.replace(sol, servers={"rtx-6000-ada": {"workstation-4x-pcie": 8}})
    assert any("a serving replica of 8 rtx-6000-ada spans servers" in v for v in violations(problem, boxes))
