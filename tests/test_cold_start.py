"""What a cold `advisor plan` of a training workload leaves out (bench/cold_start.py measures the
time): the importlib.metadata import of pydantic's plugin loader when every plugin is off, the
serving explanations, and OpenBLAS's worker threads. Each run in a fresh process, as a user's."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import pytest
from conftest import AS_OF, ROOT

PROBE = (
    "import os, sys\nfrom advisor.cli import main\n"
    "try:\n    main(['plan', 'examples/article-office.yaml', '--as-of', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
    "print(sorted(m for m in ('importlib.metadata', 'email', 'advisor.explain.serving', 'advisor.perf.serve')"
    " if m in sys.modules), file=sys.stderr)\n"
    "threads = len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else None\n"
    "print(threads, os.environ.get('OPENBLAS_NUM_THREADS'), file=sys.stderr)\n"
    "import pydantic\nclass M(pydantic.BaseModel):\n    x: int\nprint(M(x='3').x, file=sys.stderr)\n"
)


@functools.lru_cache(maxsize=None)
def _probe(**env: str) -> tuple[str, ...]:
    """A fresh `advisor plan` of the article's office example: the modules it imported of those
    above, its threads at the end and the OpenBLAS setting, and a pydantic model validating after it."""
    keep = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "PYDANTIC_DISABLE_PLUGINS")}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(AS_OF)], capture_output=True, text=True, cwd=ROOT, env={**keep, **env}
    )
    assert run.returncode == 0 and "Decision" in run.stdout, run.stdout + run.stderr
    return tuple(run.stderr.strip().splitlines()[-3:])


def test_a_training_plan_imports_neither_the_plugin_scan_nor_the_serving_explanations():
    imported, _, validated = _probe()
    assert imported == "[]" and validated == "3"


def test_the_plugin_loader_is_pydantics_own_when_plugins_are_not_all_off():
    """PYDANTIC_DISABLE_PLUGINS set otherwise by the user: pydantic scans for plugins, as it would."""
    imported, _, validated = _probe(PYDANTIC_DISABLE_PLUGINS="some-plugin")
    assert "'importlib.metadata'" in imported and validated == "3"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc (Linux)")
def test_numpy_starts_no_blas_thread_unless_asked():
    """OpenBLAS's worker thread spins for work the plan never gives it; a user's own setting stands."""
    assert _probe()[1] == "1 1"
    assert _probe(OPENBLAS_NUM_THREADS="2")[1].split()[1] == "2"
