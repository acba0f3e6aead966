"""Regenerate the generated tables of docs/article.md from the tool (tests/test_article.py checks
they match what `advisor compare` and `advisor crossover` print now).

    python bench/article_docs.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.cli import main  # noqa: E402

PATTERN = re.compile(
    r"(<!-- generated: advisor (.+?) \(tests/test_article\.py checks it\) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL
)


def regenerate(text: str) -> str:
    def block(m: re.Match) -> str:
        result = CliRunner().invoke(main, m.group(2).split() + ["--format", "markdown"])
        if result.exit_code != 0:
            raise SystemExit(f"`advisor {m.group(2)}` exited {result.exit_code}: {result.stderr}")
        table = "\n".join(line for line in result.stdout.splitlines() if line.startswith("|"))
        return f"{m.group(1)}{table}\n{m.group(4)}"

    return PATTERN.sub(block, text)


if __name__ == "__main__":
    path = ROOT / "docs" / "article.md"
    path.write_text(regenerate(path.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {path}")
