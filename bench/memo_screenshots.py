"""Screenshots of every example's HTML memo as a reader first sees it (the top of the page in an
800-pixel window), for docs/memos/: what a memo looks like, without running the tool.

    python bench/memo_screenshots.py            # needs Chromium (Debian: apt-get install chromium) and Pillow

Each memo is made with --as-of 2026-12-01 and drawn by headless Chromium with a fresh profile;
the PNG is reduced to 64 colours (Pillow) to keep the repository small.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import advisor  # noqa: E402

AS_OF = "2026-12-01"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--window-size=800,1400",
]


def main() -> None:
    import datetime as dt

    from PIL import Image

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("Chromium is not installed (Debian/Ubuntu: apt-get install chromium)")
    target = ROOT / "docs" / "memos"
    target.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for example in sorted((ROOT / "examples").glob("*.yaml")):
            html = Path(tmp) / f"{example.stem}.html"
            plan = advisor.plan(example, as_of=dt.date.fromisoformat(AS_OF), charts=True)
            advisor.memo(plan, fmt="html").write(html, force=True)
            png = target / f"{example.stem}.png"
            subprocess.run(
                [
                    browser,
                    *FLAGS,
                    f"--user-data-dir={tmp}/profile-{example.stem}",
                    f"--screenshot={png}",
                    html.as_uri(),
                ],
                capture_output=True,
                timeout=180,
                check=True,
            )
            Image.open(png).convert("RGB").quantize(colors=64).save(png, optimize=True)
            print(f"wrote {png.relative_to(ROOT)} ({png.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
