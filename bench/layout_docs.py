"""Writes the README's layout section from docs/architecture.md's layer table (tests/test_docs.py
keeps the two equal):  python bench/layout_docs.py"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    table = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| (.+?) \| (.+?) \|$", table, flags=re.M)
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    head, rest = readme.split("<!-- layout:", 1)
    marker, rest = rest.split("\n", 1)
    _, tail = rest.split("<!-- /layout -->", 1)
    block = "".join(f"* {where} — {holds}\n" for _, where, holds in rows)
    readme_path.write_text(f"{head}<!-- layout:{marker}\n{block}<!-- /layout -->{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
