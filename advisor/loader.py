"""Reads the YAML files a user hands us (workloads, catalog and rules overrides) defensively.

Safe loading only (no object tags), duplicate keys refused, alias expansion bounded (a
"billion laughs" file fails fast), a size limit, and text that is not UTF-8 refused. Every
failure is an InputError naming the file.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .errors import InputError

MAX_BYTES = 1_000_000          # a workload is a few hundred bytes; a catalog a few hundred KB
MAX_EXPANDED_NODES = 200_000   # nodes after alias expansion


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a mapping key must be a plain value, got {type(key).__name__}", key_node.start_mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None,
                    f"duplicate key {key!r} (first at line {seen[key].line + 1})", key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _expanded_size(node, memo: dict) -> int:
    """Number of nodes the document would have with every alias expanded."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # guards against recursive structures
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    else:
        size = 1
    size = min(size, MAX_EXPANDED_NODES + 1)
    memo[key] = size
    return size


def parse_yaml_text(text: str, name: str):
    """Parse YAML text from `name` (used in messages) under the rules above."""
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
            raise InputError(
                file=name, message=f"{name}: the document expands to more than {MAX_EXPANDED_NODES:,} nodes through "
                "YAML aliases; write the values out instead of nesting anchors.")
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        if "could not determine a constructor" in str(exc):
            problem = ("it uses a YAML tag that names a Python object or custom type; only plain "
                       "mappings, lists, strings and numbers are allowed")
        raise InputError(file=name, message=f"{name}: not valid YAML{where}: {problem}.") from None
    finally:
        loader.dispose()


def load_yaml_file(path: str | Path, what: str = "file"):
    """Read and parse one YAML file, refusing what a hand-written input file should never be."""
    path = Path(path)
    name = str(path)
    try:
        if path.is_dir():
            raise InputError(file=name, message=f"{name}: is a folder, not a {what}.")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise InputError(
                file=name, message=f"{name}: the {what} is {size:,} bytes; the limit is {MAX_BYTES:,} bytes.")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(file=name, message=f"{name}: no such {what}.") from None
    except PermissionError:
        raise InputError(file=name, message=f"{name}: cannot read the {what} (permission denied).") from None
    if b"\x00" in raw:
        raise InputError(file=name, message=f"{name}: looks like a binary file; a {what} is UTF-8 YAML text.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            file=name, message=f"{name}: is not UTF-8 text (byte {exc.start}); save the {what} as UTF-8 YAML.") from None
    return parse_yaml_text(text, name)
