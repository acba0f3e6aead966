"""The catalog: accelerators, servers, prices, model presets and operating assumptions, every
figure sourced.

Loads catalog/*.yaml (shipped with the package), merges a user's override file over it
(`--catalog FILE`: a negotiated price, a GPU we lack; mappings merge key by key, lists replace)
and checks that every `source` id resolves to a URL. Unknown figures stay `null` with a note;
nothing is guessed. `Catalog.servers_for(gpu, context)` says which servers a bought GPU goes into.

This module is the public face; the code lives by concern in catalog_figures (sourced figures,
dates), catalog_prices (purchases, rental offers), catalog_parts (GPUs, servers, presets, sources,
assumptions, the Catalog and its queries) and catalog_load (shipped files, overrides, checks).
"""
from __future__ import annotations

from advisor.data.catalog_figures import (
    MAX_FIGURE,
    MAX_USD,
    STALE_MONTHS,
    Confidence,
    CoolingFigure,
    DateFigure,
    Figure,
    FlagFigure,
    _Sourced,
    age_months,
    parse_as_of,
)
from advisor.data.catalog_load import (
    _builtin,
    _deep_merge,
    _merge_document,
    _validate,
    load_catalog,
)
from advisor.data.catalog_parts import (
    GPU,
    SOURCE_KINDS,
    Assumption,
    Catalog,
    Interconnect,
    ModelPreset,
    Server,
    Source,
)
from advisor.data.catalog_prices import (
    EndOfLife,
    Interruption,
    Prices,
    Purchase,
    RentalOffer,
)

__all__ = ["GPU", "MAX_FIGURE", "MAX_USD", "SOURCE_KINDS", "STALE_MONTHS",
           "Assumption", "Catalog", "Confidence", "CoolingFigure", "DateFigure", "EndOfLife", "Figure", "FlagFigure",
           "Interconnect", "Interruption", "ModelPreset", "Prices", "Purchase", "RentalOffer", "Server", "Source",
           "_Sourced", "_builtin", "_deep_merge", "_merge_document", "_validate", "age_months", "load_catalog",
           "parse_as_of"]
