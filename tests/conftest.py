"""Shared fixtures: the built-in catalog and rules are loaded once per session, and so are the
slow outputs many tests only read (a shipped example's plan, the article's crossover sweep)."""

from __future__ import annotations

import datetime as dt
import inspect
import json
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from advisor.cli import main

try:
    import fcntl  # POSIX: xdist workers share the example plans; elsewhere each worker plans its own
except ImportError:
    fcntl = None  # type: ignore[assignment]  # Windows

# pytest-xdist workers inherit COLUMNS=80: tables written off a terminal have no width limit
# (present/grid.width), and the tests that fit a width set COLUMNS themselves
os.environ.pop("COLUMNS", None)
# every plan the tests make is validated against its pydantic contract (the tool itself builds it
# unvalidated, contract/base.Out.build; tests/test_contract.py checks that both give the same plan)
os.environ["GPU_ADVISOR_CHECK_PLANS"] = "1"
import advisor.data.catalog as catalog_module
import advisor.data.catalog_load as catalog_load
import advisor.data.rules as rules_module


def _where() -> tuple[str | None, ...]:
    """What names the cache folder the built-in catalog and rules are read from (advisor.data.cache.cache_dir)."""
    return tuple(os.environ.get(k) for k in ("GPU_ADVISOR_CACHE", "XDG_CACHE_HOME", "HOME"))


def _builtin_catalog_loaded_once() -> None:
    """Every CLI command the tests run in-process (click's CliRunner) loads the built-in catalog, as a
    fresh process does: ~10 ms of CPU each to read the compiled catalog back from the cache folder,
    some 1,300 times in the fast subset. Within the session it is read once and the same Catalog (a
    frozen model) returned, unless a test points the cache folder elsewhere (GPU_ADVISOR_CACHE, or with
    it unset XDG_CACHE_HOME or HOME; tests/test_cache.py: planted, forged and cold caches, read for
    real). A --catalog file (some 400 loads, 80 ms of CPU each, of a few dozen distinct files) is merged
    over a fresh copy of the built-in documents as read once and validated as the CLI does, once per
    name, working folder and content: the same bytes under the same name give the same frozen Catalog
    (the merge reads nothing else); a refused file is not kept, so each load of it raises afresh. The
    loading itself: tests/test_cache.py and the tests that run `advisor` as a process."""
    load = catalog_module.load_catalog
    cache_folder = _where()
    made: list[Any] = []  # [(the built-in raw documents, pickled; the built-in Catalog)]
    compiled = catalog_load._builtin

    def read_once() -> tuple[bytes, Any]:
        if not made:
            raw, catalog = compiled()
            made.append((pickle.dumps(raw), catalog))
        return made[0]

    def builtin_from_memory() -> tuple[Any, Any]:
        """catalog_load._builtin() as read once: a fresh copy of the raw documents (a --catalog file is
        merged into them), unpickled in ~3 ms rather than read back and rebuilt in ~20 ms."""
        raw, catalog = read_once()
        return pickle.loads(raw), catalog

    merged: dict[tuple[str, str, bytes], Any] = {}  # a --catalog file's Catalog, by its name, folder and bytes

    def merged_over_builtin(override: str | Path) -> Any:
        catalog_load._builtin = builtin_from_memory  # the --catalog file merged over the built-in as read once
        try:
            return load(override)
        finally:
            catalog_load._builtin = compiled

    def builtin_once(override: str | Path | None = None) -> Any:
        if _where() != cache_folder:
            return load(override)
        if override is None:
            return read_once()[1]  # (no copy of the raw documents: nothing is merged into them)
        try:
            key = (str(override), os.getcwd(), Path(override).read_bytes())
        except (OSError, TypeError):  # no such file, a folder, not a path: loaded for its error
            return merged_over_builtin(override)
        if key not in merged:
            merged[key] = merged_over_builtin(override)  # a refused file raises here, and is read again next time
        return merged[key]

    catalog_module.load_catalog = builtin_once  # type: ignore[assignment]  # (read at each call: cli/base.load)


_builtin_catalog_loaded_once()


def _builtin_rules_loaded_once() -> None:
    """As the catalog: every CLI command loads the built-in rules (~4 ms of CPU to read them back from the
    cache folder, some 900 times in the fast subset); within the session, without a --rules file and
    with the cache folder unchanged, they are read once and the same RuleSet returned, as the session's
    `rules` fixture is. A --rules file is read and checked for real each time."""
    load, cache_folder, made = rules_module.load_rules, _where(), []

    def rules_once(extra: list[str | Path] | None = None) -> Any:
        if extra or _where() != cache_folder:
            return load(extra)
        if not made:
            made.append(load())
        return made[0]

    rules_module.load_rules = rules_once  # type: ignore[assignment]  # (read at each call: cli/base.load)


_builtin_rules_loaded_once()

# Property tests run a fixed, derandomized set of examples, so CI takes a bounded time and fails the
# same way twice; HYPOTHESIS_PROFILE=long runs many more (bench/, or by hand before a release).
settings.register_profile(
    "ci", derandomize=True, max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "long", derandomize=False, max_examples=2_000, deadline=None, suppress_health_check=list(HealthCheck)
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def ci_examples(ci: int, other: int) -> int:
    """A property test's example count: `ci` under the default "ci" profile (CI's time budget; still
    derandomized, the same examples every run), `other` under any other profile."""
    return ci if PROFILE == "ci" else other


ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def bench_module(name: str) -> Any:
    """bench/<name>.py as a module (its fleets, constructed cases and scorers are what some tests check)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


AS_OF = dt.date(2026, 12, 1)

# The shipped examples whose plan with every explanation costs most (serve-70b-datacenter and
# train-and-serve: some 15-20 s of CPU each, robustness draws and break-evens, against under 4 s for
# any other): the tests reading their whole plan are `slow` (README "Tests"). The other serving and
# training examples take the same paths in the fast subset.
HEAVY_EXAMPLES = ("serve-70b-datacenter", "train-and-serve")


def example_params(names: Any) -> list[Any]:
    """Shipped examples' names (or paths) as pytest parameters, the HEAVY_EXAMPLES marked `slow`."""
    return [
        pytest.param(n, marks=pytest.mark.slow) if Path(str(n)).stem in HEAVY_EXAMPLES else pytest.param(n)
        for n in names
    ]


# Tests reading one of these run on one pytest-xdist worker (`-n 2 --dist loadgroup`), and first, so
# that a group never starts late and leaves the other worker idle at the end. A shipped example's plan
# (`example_plan`) is instead shared between the workers through a file (`_shared`): its readers spread.
GROUPED = ("crossover_json", "memos", "data_plan")


def _module_fixture_reader(item: Any) -> bool:
    """Whether the test reads a module-scoped fixture of its own file (a plan, a filled cache, a fitted
    table): made once per worker that runs one of its readers, so its readers share one worker."""
    info = getattr(item, "_fixtureinfo", None)
    module = item.nodeid.split("::")[0]
    for defs in getattr(info, "name2fixturedefs", {}).values():
        if any(d.scope == "module" and d.baseid == module for d in defs):
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Mark the tests reading a GROUPED fixture with its `xdist_group`, the readers of a module-scoped
    fixture of their file with the file's, and run the groups first."""
    for item in items:
        group = next((name for name in GROUPED if name in getattr(item, "fixturenames", ())), None)
        if group is None and item.get_closest_marker("xdist_group") is None and _module_fixture_reader(item):
            group = item.nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)  # stable: files stay in order


class _GroupSuffix:
    """pytest-xdist 3.8 groups a test by the `@group` it appends to the node id, through a field that
    pytest 9.2's structured node ids no longer read (pytest-xdist issue #1386): the groups were silently
    ignored and both workers planned every shared input. Append the suffix where xdist's did not take."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        for item in items:
            mark = item.get_closest_marker("xdist_group")
            node_id = getattr(item, "_id", None)
            if mark is None or node_id is None or item.nodeid.rfind("@") > item.nodeid.rfind("]"):
                continue
            try:
                item._id = type(node_id).parse(f"{item.nodeid}@{mark.args[0]}")
            except (AttributeError, TypeError):  # another pytest: the tests run, ungrouped
                return


def pytest_runtest_logfinish(nodeid, location):
    """Under pytest-xdist, write the layout searches a test added to the on-disk store at once, not at
    the worker's exit (perf/layout_cache.py), so that the other worker reads them instead of searching again
    (with an empty store, as on a fresh machine, the two workers otherwise ask many of the same)."""
    layout_cache = sys.modules.get("advisor.perf.layout_cache")
    if layout_cache is not None and os.environ.get("PYTEST_XDIST_WORKER"):
        layout_cache.save()


def pytest_configure(config):
    if getattr(config.option, "loadgroup", False):  # set on an xdist worker under --dist loadgroup
        config.pluginmanager.register(_GroupSuffix(), "gpu-advisor-group-suffix")


@pytest.fixture(scope="session")
def catalog():
    return catalog_module.load_catalog()  # the one the CLI commands read (_builtin_catalog_loaded_once)


@pytest.fixture(scope="session")
def rules():
    return rules_module.load_rules()  # the one the CLI commands read (_builtin_rules_loaded_once)


@pytest.fixture(scope="session")
def plan_validator():
    """A validator for `advisor schema --output plan` (the JSON Schema of `plan --format json`)."""
    import jsonschema

    out = CliRunner().invoke(main, ["schema", "--output", "plan"])
    assert out.exit_code == 0, out.stderr
    schema = json.loads(out.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture
def run():
    """Invoke the CLI; returns (exit code, stdout, stderr)."""

    def invoke(*args):
        result = CliRunner().invoke(main, [str(a) for a in args])
        return result.exit_code, result.stdout, result.stderr

    return invoke


@pytest.fixture
def run_json(run):
    def invoke(*args):
        code, out, err = run(*args, "--format", "json")
        assert code in (0, 3), err
        return code, json.loads(out)

    return invoke


@pytest.fixture
def write(tmp_path):
    """Write a YAML (or any text) file and return its path."""

    def make(text: str, name: str = "workload.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return make


def _cli_once(*args) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code in (0, 3), result.stderr
    return result.exit_code, result.stdout


def _shared(folder: Path | None, key: str, compute: Callable[[], tuple[int, str]]) -> tuple[int, str]:
    """compute() once per test run: under pytest-xdist, the first worker to ask computes and writes it
    under the run's common temporary folder while holding a lock, and the other reads that file."""
    if folder is None or fcntl is None:
        return compute()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.json"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, even if compute() fails
        if path.exists():
            code, out = json.loads(path.read_text(encoding="utf-8"))
            return code, out
        code, out = compute()
        path.write_text(json.dumps([code, out]), encoding="utf-8")
        return code, out


@pytest.fixture(scope="session")
def shared_folder(tmp_path_factory) -> Path | None:
    """The folder every pytest-xdist worker of this run sees (None without xdist: one process)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    return tmp_path_factory.getbasetemp().parent / "shared"


# Plans the example_plan fixture made in this process, by plan_key: a test printing a shipped example another
# way through the CLI (`example_plans_reused`) reads the Plan the example's JSON came from instead of re-planning
EXAMPLE_PLANS: dict[str, tuple[Any, str]] = {}


def plan_key(workload: Any, options: dict[str, Any]) -> str:
    """advisor.flow.plan's inputs as text: the workload, the catalog's digest, the rules and the options."""
    catalog, rules = options.get("catalog"), options.get("rules")
    others = {k: v for k, v in options.items() if k not in ("catalog", "rules")}
    return json.dumps(
        [workload.model_dump_json(), getattr(catalog, "digest", id(catalog)), repr(rules), others],
        sort_keys=True,
        default=str,
    )


def memoized_plan(real: Callable[..., Any], made: dict[str, tuple[Any, str]], asked: list[str]) -> Callable[..., Any]:
    """advisor.flow.plan that makes each plan once into `made` (and records each key asked in `asked`).
    Each reuse checks that printing left the plan's JSON as it was made, so a renderer that changed its
    plan fails the test rather than passing on a changed plan."""

    defaults = {name: p.default for name, p in inspect.signature(real).parameters.items() if p.default is not p.empty}

    def once(workload: Any, **options: Any) -> Any:
        key = plan_key(workload, {**defaults, **options})  # `rfq` and `plan` ask the same plan in other words
        asked.append(key)
        if key not in made:
            result = real(workload, **options)
            made[key] = (result, result.to_json())
        result, as_made = made[key]
        assert result.to_json() == as_made, "printing the plan changed it"
        return result

    return once


def _example_cli_once(name: str) -> tuple[int, str]:
    """`advisor plan examples/NAME.yaml --as-of AS_OF --format json`, its Plan kept in EXAMPLE_PLANS."""
    import advisor.flow as flow

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(flow, "plan", memoized_plan(flow.plan, EXAMPLE_PLANS, []))
        return _cli_once("plan", EXAMPLES / f"{name}.yaml", "--as-of", AS_OF, "--format", "json")


@pytest.fixture(scope="session")
def example_plan(shared_folder):
    """example_plan("article-office") -> (exit code, plan): `advisor plan examples/NAME.yaml --as-of
    AS_OF --format json`, run once per test run (shared by the xdist workers) and decoded afresh for
    each test, so a test may change its copy. For tests that only read a shipped example's plan."""
    cache: dict[str, tuple[int, str]] = {}

    def get(name: str) -> tuple[int, dict]:
        if name not in cache:
            cache[name] = _shared(shared_folder, f"plan-{name}", lambda: _example_cli_once(name))
        code, out = cache[name]
        return code, json.loads(out)

    return get


@pytest.fixture(scope="session")
def data_plan(catalog, rules):
    """data_plan(path) -> (Plan, its JSON as made): `advisor.plan` of a test workload file at AS_OF with every
    explanation, made once per process for the test files that read it whole (by the file's bytes: the 70B
    pretrain bought in DE is tests/data/review10/buy_70b_de.yaml and sens10/buy_70b_de.yaml, ~2 s of CPU
    each; its readers share a worker, GROUPED). Each read checks that printing left the plan as it was made."""
    import advisor

    made: dict[bytes, tuple[Any, str]] = {}

    def get(path: Path) -> tuple[Any, str]:
        key = path.read_bytes()
        if key not in made:
            result = advisor.plan(advisor.load_workload(path), catalog=catalog, rules=rules, as_of=AS_OF)
            made[key] = (result, result.to_json())
        result, as_made = made[key]
        assert result.to_json() == as_made, "printing the plan changed it"
        return result, as_made

    return get


CROSSOVER_ARGS = ("crossover", "--as-of", AS_OF.isoformat())  # docs/article.md's sweep: 10B tokens, 8 GPUs


@pytest.fixture(scope="session")
def crossover_json() -> str:
    """`advisor crossover --as-of AS_OF --format json`, run once (about 30 s of CPU: a plan per model
    preset); docs/article.md's sweep, read by test_article.py and test_compare.py."""
    code, out = _cli_once(*CROSSOVER_ARGS, "--format", "json")
    assert code == 0
    return out


@pytest.fixture
def plan_once(monkeypatch) -> dict[str, Any]:
    """Within the test, advisor.flow.plan makes each plan once: the same workload with the same catalog,
    rules and options gets the Plan already made. For a test that prints one plan several ways through
    the CLI (widths, --full) and asserts only on what is printed. Each reuse checks that printing left the
    plan's JSON as it was made (memoized_plan). Returns the plans made, by key."""
    import advisor.flow as flow

    made: dict[str, Any] = {}
    monkeypatch.setattr(flow, "plan", memoized_plan(flow.plan, made, []))
    return made


@pytest.fixture
def example_plans_reused(monkeypatch) -> list[str]:
    """As plan_once, and a shipped example's plan that example_plan made in this process (EXAMPLE_PLANS) is
    that Plan, printed again rather than planned again (under pytest-xdist, the other worker may have made
    it: then the test plans it once itself). For a test that prints an example several ways through the CLI
    and asserts only on what is printed. Returns the keys the test asked for, in order."""
    import advisor.flow as flow

    asked: list[str] = []
    monkeypatch.setattr(flow, "plan", memoized_plan(flow.plan, EXAMPLE_PLANS, asked))
    return asked


@pytest.fixture
def plan_json(catalog, rules):
    """plan_json(path, explain=False) -> (exit code, plan): what `advisor plan PATH --as-of AS_OF
    --format json` prints (as_of=None: no --as-of), planned in-process with the session's catalog and
    rules at the given explain level, for tests that read no explanation (purchase, jobs, serving, costs, status)."""
    from advisor.flow import plan
    from advisor.inputs.workload import load_workload

    def get(path: Path, explain: bool | str = False, as_of: dt.date | None = AS_OF) -> tuple[int, dict]:
        result = plan(load_workload(path), catalog=catalog, rules=rules, as_of=as_of, explain=explain)
        return (0 if result.feasible else 3), json.loads(result.to_json())

    return get
