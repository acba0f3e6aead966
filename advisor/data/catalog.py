"""The catalog: accelerators, servers, prices, model presets and operating assumptions, every
figure sourced.

Loads catalog/*.yaml (shipped with the package), merges a user's override file over it
(`--catalog FILE`: a negotiated price, a GPU we lack; mappings merge key by key, lists replace)
and checks that every `source` id resolves to a URL. Unknown figures stay `null` with a note;
nothing is guessed. `Catalog.servers_for(gpu, context)` says which servers a bought GPU goes into.

This module is the public face (load_catalog, and the Catalog and GPU types it returns); the code
lives by concern, each module importing only those before it: catalog_figures (sourced figures,
dates), source_grades (source kinds and the tertiary-price check), catalog_prices (purchases,
rental offers), catalog_entries (GPUs, servers, presets, sources, assumptions), catalog_model (the
Catalog, its queries and its as-of view), overrides (a --catalog file's quote records) and
catalog_load (shipped files, overrides, checks). Import anything else from there.
"""

from __future__ import annotations

from advisor.data.catalog_entries import GPU
from advisor.data.catalog_load import load_catalog
from advisor.data.catalog_model import Catalog

__all__ = ["GPU", "Catalog", "load_catalog"]
