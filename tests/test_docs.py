"""Docs that must not drift from the code: the README's layout section is the architecture
document's layer table, and every package on disk is in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def layer_rows() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| (.+?) \| (.+?) \|$", text, flags=re.M)
    return [(where, holds) for _, where, holds in rows]


def test_readme_layout_is_generated_from_the_architecture_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- layout:", 1)[1].split("<!-- /layout -->", 1)[0]
    listed = [line[2:] for line in block.splitlines() if line.startswith("* ")]
    assert listed == [f"{where} — {holds}" for where, holds in layer_rows()]


def test_every_package_and_top_module_is_in_the_architecture_table():
    documented = " ".join(where for where, _ in layer_rows())
    on_disk = [f"advisor/{p.name}/" for p in (ROOT / "advisor").iterdir() if (p / "__init__.py").is_file()]
    on_disk += [f"advisor/{p.name}" for p in (ROOT / "advisor").glob("*.py") if p.name != "__main__.py"]
    missing = [m for m in on_disk if f"`{m}`" not in documented]
    assert not missing, f"add these to docs/architecture.md's layer table: {missing}"


def test_readme_test_command_is_what_ci_runs():
    """README command 2 and .ci/run run the same pytest command; command 3 is the fast subset."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = [
        line.split("#")[0].strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.startswith("python -m pytest")
    ]
    command2 = re.search(r"^# 2\..*\n(.*)$", readme, flags=re.MULTILINE).group(1)
    assert len(ci) == 1 and command2.endswith("&& " + ci[0])
    command3 = re.search(r"^# 3\..*\n(.*)$", readme, flags=re.MULTILINE).group(1)
    assert command3 == ci[0].replace("python -m pytest", 'python -m pytest -m "not slow"', 1)
