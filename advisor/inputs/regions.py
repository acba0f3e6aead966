"""`deployment.region`: one ISO 3166-1 alpha-2 country code, checked against the code list shipped
beside this module (iso3166_1.json, from Debian's iso-codes package; no network at run time). A
code the list lacks (ZZ) or one spelt with look-alike letters (Cyrillic УЅ, fullwidth ＵＳ) is
refused with a suggestion: a region the export rules cannot recognise would silently skip them."""

from __future__ import annotations

import functools
import json
import unicodedata
from pathlib import Path

# The code lists rules/export.yaml matches a region against (tests/test_regions.py keeps this in
# step with the file). A region is one country's code; these groups are for rules, not workloads.
EXPORT_GROUPS = (
    "country_group_d1",
    "country_group_d4",
    "country_group_d5",
    "country_group_a5_a6_in_d",
    "eccn_3a090_destinations",
    "china_macau",
    "h20_letter_destinations",
)
# codes people write that ISO 3166-1 reserves for the country under another code: UK is the
# United Kingdom, whose alpha-2 code is GB ("exceptionally reserved" at the UK's request)
ALIASES = {"UK": "GB"}
# Cyrillic and Greek capitals that look like Latin ones
_LOOKALIKE = dict(zip("АВЕЅІЈКМНОРСТХУΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABESIJKMHOPCTXUABEZHIKMNOPTYX"))


@functools.lru_cache(maxsize=1)
def codes() -> dict[str, str]:
    """ISO 3166-1 alpha-2 code -> country name."""
    data = json.loads((Path(__file__).parent / "iso3166_1.json").read_text(encoding="utf-8"))
    return data["codes"]


def _latin(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).upper()
    return "".join(_LOOKALIKE.get(c, c) for c in folded)


def check_region(value: object) -> str:
    """The region as an upper-case ISO code; ValueError with what is allowed otherwise."""
    known = codes()
    groups = ", ".join(EXPORT_GROUPS)
    tail = (
        f"; the export rules match it against code lists ({groups}: rules/export.yaml), which are "
        "not regions themselves"
    )
    if not isinstance(value, str):
        raise ValueError(f"a region is a two-letter ISO 3166-1 country code such as US, DE or CN{tail}")
    text = value.strip()
    if any(ord(c) > 127 for c in text):
        latin = _latin(text)
        odd = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in text if ord(c) > 127)
        hint = f" (did you mean {latin}, {known[latin]}?)" if latin in known else ""
        raise ValueError(
            f"{text!r} is not an ISO 3166-1 code: it holds letters that only look Latin ({odd}); "
            f"write the code in ASCII letters{hint}"
        )
    code = ALIASES.get(text.upper(), text.upper())
    if code in known:
        return code
    from advisor.errors import suggest

    prefix = next((c for c in known if len(code) == 3 and code.startswith(c)), None)  # USA, DEU: alpha-3
    hint = f" (did you mean {prefix}?)" if prefix else suggest(code, known)
    raise ValueError(
        f"{text!r} is not a two-letter ISO 3166-1 (alpha-2) country code{hint}; write e.g. US, DE or CN{tail}"
    )
