"""Fuzzing `advisor plan` with random workload documents and catalog overrides (hypothesis).

The documents come from tests/fuzz_documents.py (training jobs with measured speeds, serving jobs
in `jobs:` or as the one-job shorthand, economics and market fields, the decision basis; a third
with a --catalog override of rental offers, purchase quotes and lead times). Whatever comes in, the
CLI must exit 0, 2 or 3: a plan, a clear error naming the file, or a diagnosis; never a traceback
or an internal error. Sane documents go through the library at explanation level "none"
(check_light), a fifth as many through the CLI with every explanation (check). Every plan passes
the hard-constraint check inside plan() (solve/verify.py), and the fuzzer checks the printed plan
again from outside (`plan_breaks`): its cash, or its present value under `budget_basis:
present_value`, within `budget_usd`, and every training job done (start + planned wall time)
within its deadline and within the horizon.

The fuzzing tests are marked slow (`pytest -m "not slow"` skips them); their example counts follow
tests/conftest.py's ci_examples (derandomized under "ci"; HYPOTHESIS_PROFILE=long for thousands).
bench/fuzz.py runs 10,000 (results in docs/fuzz.md).
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import AS_OF, ci_examples
from fuzz_documents import documents, sane, wild
from hypothesis import HealthCheck, given, settings

from advisor.cli import main

HOURS_PER_MONTH = 730.0
CENT = 0.01  # constraints compare money at the cents it is printed with (issue 33 item 6)
exit_codes: collections.Counter = collections.Counter()
# what plan_breaks checked: plans, plans with a budget (by basis), training jobs against the horizon
# and against a deadline (bench/fuzz.py prints them)
plans_checked: collections.Counter = collections.Counter()


@contextmanager
def written(data: bytes | None, prefix: str) -> Iterator[str | None]:
    """`data` in a temporary file (its name), removed afterwards; None for no data."""
    if data is None:
        yield None
        return
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".yaml")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield name
    finally:
        Path(name).unlink()


def _job_limits(workload: Any) -> dict[str, float | None]:
    """Each training job's deadline in days, by the name the plan prints for it."""
    return {
        workload.job_name(i): (job.deadline / 24 if job.deadline is not None else None)
        for i, job in enumerate(workload.jobs)
        if job.kind != "serve"
    }


def plan_breaks(plan: dict[str, Any], workload: Any) -> list[str]:
    """What a feasible plan's JSON breaks of the workload, recomputed from the printed figures: the
    cash paid (or the present value, with budget_basis: present_value) above budget_usd; a training
    job done (its GPUs' ready day + its wall time at the workload's confidence) after its deadline or
    after the horizon. Empty when it holds."""
    out = []
    budget, basis = workload.budget_usd, workload.budget_basis
    cost = plan["present_value_usd"] if basis == "present_value" else plan["nominal_cost_usd"]
    plans_checked["plans"] += 1
    if budget is not None:
        plans_checked[f"budget ({basis})"] += 1
    if budget is not None and cost > budget + CENT:
        out.append(f"{basis} {cost:,.2f} above the budget {budget:,.2f}")
    horizon = workload.deployment.horizon_months * HOURS_PER_MONTH / 24
    deadlines = _job_limits(workload)
    for job in plan["jobs"]:
        ready = [
            r.get("ready_days") or 0.0
            for r in plan["purchase"]
            if r["gpu"] == job["gpu"] and r["ownership"] == job["ownership"]
        ]
        done = min(ready, default=0.0) + job["wall_days_planned"]
        name = job["name"].split(" (+")[0]  # "a (+2 identical)": the first of a class of identical jobs
        if name not in deadlines:
            out.append(f"job {job['name']} is not a training job of the workload")
        due = deadlines.get(name)
        plans_checked["jobs (horizon)"] += 1
        plans_checked["jobs (deadline)"] += due is not None
        for limit, what in ((due, "its deadline"), (horizon, "the horizon")):
            if limit is not None and done > limit * (1 + 1e-6) + 1e-6:
                out.append(f"job {job['name']} done on day {done:.6g}, after {what} (day {limit:.6g})")
    return out


def check(data: bytes, override: bytes | None = None) -> int:
    """Run `advisor plan` (with --catalog `override`) on `data`; assert the exit contract and, on a
    plan, `plan_breaks`. Returns the exit code."""
    from advisor.inputs.workload import load_workload

    with written(data, "advisor-fuzz-") as name, written(override, "advisor-fuzz-catalog-") as catalog:
        assert name is not None
        args = ["plan", name, "--format", "json", "--as-of", str(AS_OF), "--time-limit", "10"]
        result = CliRunner().invoke(main, args + (["--catalog", catalog] if catalog else []))
        out, err = result.stdout, result.stderr
        exit_codes[result.exit_code] += 1
        assert result.exit_code in (0, 2, 3), f"exit {result.exit_code}: {err or result.exception!r}"
        assert "Traceback" not in out + err and "internal error" not in err
        if result.exit_code == 2:  # one line per mistake, each naming the file (the workload or the override)
            files = "|".join(re.escape(str(n)) for n in (name, catalog) if n)
            assert (
                err
                and out == ""
                and all(re.match(rf"error: ({files})(:\d+:\d+)?: ", line) for line in err.splitlines())
            ), err
            return 2
        plan = json.loads(out)
        assert (plan["status"] == "infeasible") == (result.exit_code == 3)
        if result.exit_code == 0:
            workload = load_workload(name)  # (its budget, deadlines and horizon need no catalog)
            assert not plan_breaks(plan, workload), plan_breaks(plan, workload)
    return result.exit_code


_LOADED: dict[str, Any] = {}  # the built-in catalog and rules, loaded once per process


def check_light(data: bytes, override: bytes | None = None) -> int:
    """The library path at explanation level "none" (bench/fuzz.py runs most examples so, since the
    explanations are not what is fuzzed): load the override and the workload, plan, JSON, and
    `plan_breaks` on a plan. InputError is exit 2, a plan without a feasible solution exit 3; anything
    else raises (a failure), including a plan refused by the hard-constraint check (solve/verify.py,
    ConstraintViolation). Returns the exit code."""
    from advisor.api import known_ids
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules
    from advisor.errors import InfeasibleError, InputError
    from advisor.flow import plan
    from advisor.inputs.workload import load_workload

    if not _LOADED:
        _LOADED.update(catalog=load_catalog(), rules=load_rules())
    code = 0
    with written(data, "advisor-fuzz-") as name, written(override, "advisor-fuzz-catalog-") as catalog_file:
        assert name is not None
        try:
            catalog = _LOADED["catalog"] if catalog_file is None else load_catalog(catalog_file)
            workload = load_workload(name, known_ids(catalog))
        except InputError as exc:  # names the file it found the mistake in
            assert exc.file in (name, catalog_file), str(exc)
            assert re.match(rf"{re.escape(str(exc.file))}(:\d+:\d+)?: ", str(exc)), str(exc)
            code = 2
        else:
            try:
                p = plan(workload, catalog=catalog, rules=_LOADED["rules"], as_of=AS_OF, explain="none", time_limit=10)
            except InputError as exc:  # found against the catalog (its size): names the field
                assert str(exc), repr(exc)
                code = 2
            except InfeasibleError:
                code = 3
            else:
                code = 0 if p.feasible else 3
                out = json.loads(p.to_json())
                assert out["status"] == p["status"]
                if p.feasible:
                    assert not plan_breaks(out, workload), plan_breaks(out, workload)
    exit_codes[code] += 1
    return code


_PASSED: set[tuple[str, str]] = set()  # (check, document digest): what passed its check in this process


def once(check_one: Any, data: bytes, override: bytes | None = None) -> None:
    """check_one(data, override), unless the same document (and override) already passed that check in
    this process: hypothesis gives some documents more than once (the first of `wild` and of `sane`,
    each ~4 s of CPU in full), and a plan is the same bytes every time (tests/test_determinism.py)."""
    digest = hashlib.sha256(repr((data, override)).encode()).hexdigest()
    if (check_one.__name__, digest) not in _PASSED:
        check_one(data, override)
        _PASSED.add((check_one.__name__, digest))


FUZZ = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
# CI's share of the fuzzing stays small (40 wild and 10 sane documents, 5 with every explanation;
# derandomized); the long runs are HYPOTHESIS_PROFILE=long and bench/fuzz.py (10,000).
WILD_EXAMPLES, SANE_EXAMPLES, FULL_EXAMPLES = ci_examples(40, 3200), ci_examples(10, 800), ci_examples(5, 400)


@pytest.mark.slow
@pytest.mark.xdist_group("fuzz")  # one worker: a document both tests draw is checked once (once)
@settings(FUZZ, max_examples=WILD_EXAMPLES)
@given(case=wild)
def test_random_workloads_exit_0_2_or_3_never_a_traceback(case: tuple) -> None:
    once(check, *documents(case))


@pytest.mark.slow
@pytest.mark.xdist_group("fuzz")  # one worker: a document both tests draw is checked once (once)
@settings(FUZZ, max_examples=SANE_EXAMPLES)
@given(case=sane)
def test_well_formed_random_workloads_reach_the_solver(case: tuple) -> None:
    once(check_light, *documents(case))  # the library at explanation level "none": the plan path, not the explanations


@pytest.mark.slow
@pytest.mark.xdist_group("fuzz")  # one worker: a document both tests draw is checked once (once)
@settings(FUZZ, max_examples=FULL_EXAMPLES)
@given(case=sane)
def test_well_formed_random_workloads_with_every_explanation(case: tuple) -> None:
    once(check, *documents(case))


CORPUS = Path(__file__).parent / "fuzz-corpus"  # bench/fuzz.py --save: failures/ found, seed/ kept


def saved(folder: str) -> list[Path]:
    return sorted(p for p in (CORPUS / folder).glob("*.yaml") if not p.name.endswith(".catalog.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("path", saved("seed") + saved("failures"), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_saved_fuzz_corpus_still_holds(path: Path) -> None:
    """Every document the long fuzz kept replays: the seed corpus with the exit code it had, each
    failure found (fixed since) as a plan, an input error or a diagnosis that pass every check."""
    override = path.with_name(f"{path.stem}.catalog.yaml")
    trace = path.with_suffix(".txt")  # a failure found through the CLI is replayed through it
    full = trace.exists() and trace.read_text(encoding="utf-8").startswith("level full")
    code = (check if full else check_light)(path.read_bytes(), override.read_bytes() if override.exists() else None)
    if path.parent.name == "seed":
        assert f"-exit{code}-" in path.name


def test_the_plan_check_finds_cash_above_the_budget_and_a_job_past_its_deadline_or_the_horizon() -> None:
    """plan_breaks can fail: cash a cent over a cash budget, present value over a present-value
    budget, a job whose GPUs' ready day plus its wall time passes its deadline or the horizon."""
    from advisor.inputs.workload import parse_workload

    workload = parse_workload(
        {
            "deployment": {"context": "cloud", "horizon_months": 1},
            "model": "gpt2-124m",
            "tokens": "1B",
            "deadline": "10d",
            "budget_usd": 1000,
        }
    )
    job = {"name": "job", "gpu": "h100-sxm", "ownership": "rent", "wall_days_planned": 9.0}
    plan = {
        "nominal_cost_usd": 1000.0,
        "present_value_usd": 990.0,
        "jobs": [job],
        "purchase": [{"gpu": "h100-sxm", "ownership": "rent", "ready_days": 0.5}],
    }
    assert plan_breaks(plan, workload) == []
    assert plan_breaks({**plan, "nominal_cost_usd": 1000.02}, workload) == ["cash 1,000.02 above the budget 1,000.00"]
    pv = workload.model_copy(update={"budget_basis": "present_value"})
    assert plan_breaks({**plan, "nominal_cost_usd": 5000.0}, pv) == []
    assert plan_breaks({**plan, "present_value_usd": 1000.5}, pv) == [
        "present_value 1,000.50 above the budget 1,000.00"
    ]
    late = {**plan, "purchase": [{"gpu": "h100-sxm", "ownership": "rent", "ready_days": 1.5}]}
    assert plan_breaks(late, workload) == ["job job done on day 10.5, after its deadline (day 10)"]
    long = {**plan, "jobs": [{**job, "wall_days_planned": 31.0}]}
    assert plan_breaks(long, workload) == [
        "job job done on day 31.5, after its deadline (day 10)",
        "job job done on day 31.5, after the horizon (day 30.4167)",
    ]
