"""Writes advisor/present/fonts/dejavu_widths.json: the advance widths of DejaVu Sans and DejaVu
Sans Bold, read with fontTools from the TrueType files matplotlib ships (mpl-data/fonts/ttf), so
that the SVG charts (advisor/present/svg.py) can size their margins without matplotlib at run time.
Development only: `python bench/font_widths.py` (needs matplotlib and fontTools installed)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
from fontTools.ttLib import TTFont

OUT = Path(__file__).resolve().parent.parent / "advisor" / "present" / "fonts" / "dejavu_widths.json"
# Latin, Latin-1, Latin Extended A/B, Greek, Cyrillic, general punctuation, super/subscripts,
# currency, letterlike symbols, arrows, mathematical operators: what names and numbers use.
RANGES = [(0x20, 0x250), (0x370, 0x530), (0x2000, 0x20C0), (0x2100, 0x2200), (0x2200, 0x2300)]


def widths(path: Path) -> dict:
    font = TTFont(str(path))
    cmap, hmtx = font.getBestCmap(), font["hmtx"]
    runs = []
    for lo, hi in RANGES:
        run_start, run = None, []
        for cp in range(lo, hi):
            if cp in cmap:
                if run_start is None:
                    run_start = cp
                run.append(hmtx[cmap[cp]][0])
            elif run_start is not None:
                runs.append([run_start, run])
                run_start, run = None, []
        if run_start is not None:
            runs.append([run_start, run])
    hhea = font["hhea"]
    return {
        "file": path.name,
        "units_per_em": font["head"].unitsPerEm,
        "ascent": hhea.ascent,
        "descent": -hhea.descent,
        "runs": runs,
    }


def main() -> None:
    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    data = {
        "source": f"DejaVu Sans {TTFont(str(ttf / 'DejaVuSans.ttf'))['name'].getDebugName(5)} as shipped in matplotlib {matplotlib.__version__} (mpl-data/fonts/ttf); "
        "DejaVu fonts licence (Bitstream Vera derivative), https://dejavu-fonts.github.io/",
        "produced_by": "python bench/font_widths.py (fontTools: hmtx advance widths by cmap code point, "
        "hhea ascent/descent; runs of consecutive code points, in font units)",
        "regular": widths(ttf / "DejaVuSans.ttf"),
        "bold": widths(ttf / "DejaVuSans-Bold.ttf"),
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
