"""The catalog: accelerators, servers, prices, model presets and operating assumptions, every
figure sourced.

Loads catalog/*.yaml (shipped with the package), merges a user's override file over it
(`--catalog FILE`: a negotiated price, a GPU we lack; mappings merge key by key, lists replace)
and checks that every `source` id resolves to a URL. Unknown figures stay `null` with a note;
nothing is guessed. `Catalog.servers_for(gpu, context)` says which servers a bought GPU goes into.

This module is the public face (load_catalog, and the Catalog and GPU types it returns); the code
lives by concern in catalog_figures (sourced figures, dates), catalog_prices (purchases, rental
offers), catalog_parts (GPUs, servers, presets, sources, assumptions, the Catalog and its queries)
and catalog_load (shipped files, overrides, checks): import anything else from there.
"""
from __future__ import annotations

from advisor.data.catalog_load import load_catalog
from advisor.data.catalog_parts import GPU, Catalog

__all__ = ["GPU", "Catalog", "load_catalog"]
