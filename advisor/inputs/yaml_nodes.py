"""The checks on a composed YAML document, walked once without recursion before anything is built
from it: no alias inside its own anchor, a bounded size, text and depth once aliases are expanded,
keys that are text and given once, no merge keys, no control characters; and where each value was
written (`positions`), for messages that give a line and column.
"""

from __future__ import annotations

from typing import Protocol

import yaml

from advisor.errors import InputError, is_control, loc_text

MAX_EXPANDED_NODES = 200_000  # nodes after alias expansion
MAX_EXPANDED_CHARS = 4_000_000  # characters of text after alias expansion, 4 x loader.MAX_BYTES (a 1 MB
# file re-used 1,000 times through an alias would otherwise become gigabytes
# once copied or hashed)
MAX_DEPTH = 50  # levels of nesting (the built-in catalog and rules use fewer than 10)

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"


class Position(Protocol):
    """Where a parser is: PyYAML's Mark or libyaml's own Mark class."""

    line: int
    column: int


def mark_text(mark: Position) -> str:
    """A parser's position as a reader counts: 1-based line and column."""
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _where(parts: tuple[int | str, ...]) -> str:
    return f"`{loc_text(parts)}`" if parts else "at the top level"


_KEY_KINDS = {
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:bool": "true/false",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "a date",
}


def _bad_key(node: yaml.ScalarNode | yaml.SequenceNode | yaml.MappingNode) -> str:
    if not isinstance(node, yaml.ScalarNode):
        return f"a {node.id} is used as a key"
    return f"the key {node.value} is read as {_KEY_KINDS.get(node.tag, node.tag)}, not text"


def _check_text(node: yaml.ScalarNode, path: tuple[int | str, ...], name: str) -> None:
    """Text with terminal controls (an escape sequence, a right-to-left override) is refused: names
    and messages from input files end up on the user's terminal."""
    if node.value.isprintable():  # no Other or Separator character but a space: no control (the common case, fast)
        return
    bad = next((c for c in node.value if is_control(c) and c not in "\t\n\r"), None)
    if bad is not None:
        raise InputError(
            f"{name}: {_where(path)}: the text at {mark_text(node.start_mark)} holds the control "
            f"character U+{ord(bad):04X}; write plain text.",
            file=name,
            field=loc_text(path) or None,
        )


def _children(node: yaml.Node, path: tuple[int | str, ...], name: str) -> list[tuple[yaml.Node, tuple[int | str, ...]]]:
    """(child, path) of a node, refusing merge keys, keys that are not text, repeated keys and text
    with control characters."""
    if isinstance(node, yaml.ScalarNode):
        _check_text(node, path, name)
    if isinstance(node, yaml.SequenceNode):
        return [(child, path + (i,)) for i, child in enumerate(node.value)]
    if not isinstance(node, yaml.MappingNode):
        return []
    children: list[tuple[yaml.Node, tuple[int | str, ...]]] = []
    seen: dict[str, yaml.Mark] = {}
    for k, v in node.value:
        if k.tag == _MERGE:
            raise InputError(
                f"{name}: {_where(path)}: YAML merge keys (<<, {mark_text(k.start_mark)}) are not "
                "supported; write the fields out.",
                file=name,
                field=loc_text(path) or None,
            )
        if not isinstance(k, yaml.ScalarNode) or k.tag != _STR:
            raise InputError(
                f"{name}: {_where(path)}: {_bad_key(k)} ({mark_text(k.start_mark)}); field names "
                "and ids are text (quote a key such as '1' or 'yes' if you mean the text).",
                file=name,
                field=loc_text(path) or None,
            )
        _check_text(k, path, name)
        if k.value in seen:
            where = loc_text(path + (k.value,))
            raise InputError(
                f"{name}: `{where}` is given twice (lines {seen[k.value].line + 1} and "
                f"{k.start_mark.line + 1}); keep one.",
                file=name,
                field=where,
            )
        seen[k.value] = k.start_mark
        children.append((v, path + (k.value,)))
    return children


def check_nodes(root: yaml.Node, name: str) -> None:
    """Walk the composed document once, without recursion: refuse self-referencing aliases,
    more than MAX_EXPANDED_NODES values or MAX_DEPTH levels once aliases are expanded, and the
    keys _children refuses. Raises InputError naming the location."""
    size: dict[int, int] = {}  # id(node) -> values in its expansion (capped)
    chars: dict[int, int] = {}  # id(node) -> characters of text in its expansion (capped)
    depth: dict[int, int] = {}  # id(node) -> levels in its expansion
    open_: set[int] = set()  # the nodes on the path being walked
    stack: list[tuple[yaml.Node, tuple[int | str, ...], list[tuple[yaml.Node, tuple[int | str, ...]]] | None]]
    stack = [(root, (), None)]
    while stack:
        node, path, children = stack.pop()
        if children is not None:  # every child is done: this node is too
            open_.discard(id(node))
            size[id(node)] = min(1 + sum(size[id(c)] for c, _ in children), MAX_EXPANDED_NODES + 1)
            own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
            keys = sum(len(k.value) for k, _ in node.value) if isinstance(node, yaml.MappingNode) else 0
            chars[id(node)] = min(own + keys + sum(chars[id(c)] for c, _ in children), MAX_EXPANDED_CHARS + 1)
            depth[id(node)] = 1 + max((depth[id(c)] for c, _ in children), default=0)
            continue
        if id(node) in size:  # reached again through an alias
            continue
        children = _children(node, path, name)
        open_.add(id(node))
        stack.append((node, path, children))
        for child, child_path in reversed(children):
            if id(child) in open_:
                raise InputError(
                    f"{name}: `{loc_text(child_path)}`: an alias refers to the value that contains it "
                    f"({mark_text(child.start_mark)}); a value cannot include itself.",
                    file=name,
                    field=loc_text(child_path),
                )
            stack.append((child, child_path, None))
    if size[id(root)] > MAX_EXPANDED_NODES:
        raise InputError(
            f"{name}: the document expands to more than {MAX_EXPANDED_NODES:,} values through YAML "
            "aliases; write the values out instead of nesting anchors.",
            file=name,
        )
    if chars[id(root)] > MAX_EXPANDED_CHARS:
        raise InputError(
            f"{name}: the document expands to more than {MAX_EXPANDED_CHARS:,} characters of text "
            "through YAML aliases; write the values out instead of repeating a long one by alias.",
            file=name,
        )
    if depth[id(root)] > MAX_DEPTH:
        raise InputError(
            f"{name}: the document nests more than {MAX_DEPTH} levels deep once its YAML aliases "
            "are expanded; no file this tool reads needs that.",
            file=name,
        )


# where each value of a document was written: path -> (key line, key column, value line, value
# column), 1-based; a list item's key position is its value's
Marks = dict[tuple[int | str, ...], tuple[int, int, int, int]]


def positions(root: yaml.Node, marks: Marks) -> None:
    """Fill `marks` with where every value of the composed document `root` starts (a document
    check_nodes passed: aliases expanded at most once per path, no cycles)."""
    stack: list[tuple[yaml.Node, tuple[int | str, ...], yaml.Mark]] = [(root, (), root.start_mark)]
    while stack:
        node, path, key = stack.pop()
        if path in marks:
            continue
        marks[path] = (key.line + 1, key.column + 1, node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.SequenceNode):
            stack += [(child, path + (i,), child.start_mark) for i, child in enumerate(node.value)]
        elif isinstance(node, yaml.MappingNode):
            stack += [(v, path + (k.value,), k.start_mark) for k, v in node.value if isinstance(k, yaml.ScalarNode)]
