"""Numbered references for a memo, and the digests its footer prints."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from advisor.errors import InputError
from advisor.present.words import day


class Refs:
    """Numbered references: every source the memo cites, in order of first appearance in the
    plan's own source list, then in the memo."""

    def __init__(self, catalog: Any, rules: Any, plan_sources: list[dict[str, Any]]) -> None:
        self.catalog, self.rules = catalog, rules
        self.entries: dict[str, dict] = {}
        for s in plan_sources:
            self._add(s["id"], s.get("as_of"), s.get("url"))

    def _add(self, sid: str, as_of: Any = None, url: str | None = None) -> int | None:
        if sid not in self.entries:
            src = self.catalog.sources.get(sid)
            if src is not None:
                if src.kind in ("derived", "assumption"):
                    return None
                title, url = src.title, src.url
                if title:  # the catalog's bookkeeping note, not part of the source's title
                    title = re.sub(r"\s+-\s+added for gpu-advisor\s*$", "", title)
            else:
                try:
                    rule = self.rules.get(sid)
                except InputError:
                    if url is None:
                        return None
                    title = None
                else:
                    title, url = f"{rule.id}: {rule.source.title}", rule.source.url
            self.entries[sid] = {"n": len(self.entries) + 1, "id": sid, "title": title, "url": url, "as_of": as_of}
        entry = self.entries[sid]
        if as_of and (entry["as_of"] is None or str(as_of) > str(entry["as_of"])):
            entry["as_of"] = as_of
        return entry["n"]

    def cite(self, ids: Iterable[str], as_of: Any = None) -> list[int]:
        return sorted({n for n in (self._add(sid, as_of) for sid in ids) if n is not None})

    def listing(self) -> list[dict]:
        return [
            dict(e, as_of=day(e["as_of"]) if e["as_of"] else None)
            for e in sorted(self.entries.values(), key=lambda e: e["n"])
        ]


def rules_digest(rules: Any) -> str:
    data = json.dumps([r.model_dump(mode="json", by_alias=True) for r in rules.rules], sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:16]
