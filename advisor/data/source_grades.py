"""How far a catalog figure may be trusted: the grades of sources (primary, secondary, tertiary,
derived, assumption), the finer kinds used before issue 14 and the grade each maps onto, and the
check that a price resting only on tertiary sources says `confidence: low`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from advisor.errors import InputError

SOURCE_KINDS = ("primary", "secondary", "tertiary", "derived", "assumption")

# The finer source kinds used before issue 14, and the grade each maps onto (catalog/README.md).
LEGACY_KINDS = {
    **dict.fromkeys(
        (
            "vendor",
            "vendor_copy",
            "vendor_via_transcription",
            "vendor_via_quote",
            "vendor_via_quotes",
            "vendor_sec_filing",
            "vendor_sec_filing_via_quote",
            "vendor_licence_text",
            "vendor_submission",
            "provider_page",
            "provider_api",
            "provider_page_copy",
            "provider_price_list",
            "cloud_provider_doc",
            "government",
            "government_via_transcription",
            "oem_document",
            "model_config",
            "paper",
            "industry_survey",
            "official_statistics",
            "filing",
            "quote",
        ),
        "primary",
    ),
    **dict.fromkeys(
        (
            "secondary_dataset",
            "secondary_via_dataset",
            "secondary_vendor_table",
            "reseller",
            "measurement",
            "trade_press",
            "analyst",
        ),
        "secondary",
    ),
    **dict.fromkeys(
        (
            "secondary_aggregator",
            "secondary_low_quality",
            "secondary_llm_generated",
            "secondary_code",
            "third_party_snapshot",
            "third_party_quotes",
            "claim",
            "aggregator",
            "forum",
        ),
        "tertiary",
    ),
    "derived_convention": "derived",
}


def price_records(sections: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(path, record) for every price in validated GPU and server sections."""
    for gid, g in sorted(sections["gpus"].items()):
        for i, p in enumerate([g.prices.purchase] + list(g.prices.other_purchases)):
            if p is not None and p.usd is not None:
                yield (f"gpus[{gid}].prices.purchase" if i == 0 else f"gpus[{gid}].prices.other_purchases[{i - 1}]"), p
        for i, o in enumerate(g.prices.rent):
            yield f"gpus[{gid}].prices.rent[{i}]", o
    for sid, s in sorted(sections["servers"].items()):
        for i, p in enumerate([s.purchase] + list(s.other_purchases)):
            if p.usd is not None:
                yield (f"servers[{sid}].purchase" if i == 0 else f"servers[{sid}].other_purchases[{i - 1}]"), p


def tertiary_only(record: Any, sources: dict[str, Any]) -> bool:
    """Whether a price rests only on tertiary sources (derived/assumption ids do not count)."""
    kinds = [sources[s].kind for s in record.source if s in sources]
    graded = [k for k in kinds if k in ("primary", "secondary", "tertiary")]
    return bool(graded) and all(k == "tertiary" for k in graded)


def check_price_sources(sections: dict[str, Any], name: str) -> None:
    """A price read only on aggregators, forums or pages that merely mention it must say so:
    `confidence: low`. Anything else is refused (exit 2) so a finance reader is never misled."""
    for path, rec in price_records(sections):
        if rec.confidence != "low" and tertiary_only(rec, sections["sources"]):
            raise InputError(
                f"{name}: {path} rests only on tertiary sources ({', '.join(rec.source)}) but has "
                f"confidence: {rec.confidence}; cite a primary or secondary source, or set "
                "confidence: low",
                file=name,
                field=f"{path}.confidence",
            )
