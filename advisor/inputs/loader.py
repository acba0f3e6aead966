"""Reads the YAML files a user hands us (workloads, catalog and rules overrides) defensively.

Safe loading only (no object tags, no merge keys); duplicate keys refused; mapping keys must be
text; no control characters in text; nesting and alias expansion bounded (a "billion laughs" file
or a self-referencing alias fails fast, and deep nesting cannot exhaust Python's stack); a size
limit, also on devices and pipes; text that is not UTF-8 refused. Dates stay the text the user
wrote. Every failure is an InputError naming the file and, where it has one, the location.
When PyYAML has libyaml, a file is scanned and parsed by it (a 5,000-job workload in 0.6 s rather
than 3 s) and its nodes composed in Python, where the depth limit holds as they are built.
"""
from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any, Protocol

import yaml

from advisor.errors import InputError, is_control, loc_text

MAX_BYTES = 1_000_000          # a workload is a few hundred bytes; a catalog a few hundred KB
MAX_EXPANDED_NODES = 200_000   # nodes after alias expansion
MAX_EXPANDED_CHARS = 4 * MAX_BYTES   # characters of text after alias expansion (a 1 MB file re-used 1,000 times
                                     # through an alias would otherwise become gigabytes once copied or hashed)
MAX_DEPTH = 50                 # levels of nesting (the built-in catalog and rules use fewer than 10)
MAX_INT_DIGITS = 4000          # Python refuses to read longer integers (sys.get_int_max_str_digits)

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


class _Position(Protocol):
    """Where a parser is: PyYAML's Mark or libyaml's own Mark class."""

    line: int
    column: int


class _TooDeep(Exception):
    def __init__(self, mark: _Position) -> None:
        self.mark = mark


class _SafeLoader(yaml.SafeLoader):
    """SafeLoader whose composer stops at MAX_DEPTH before Python's stack does, which reads
    dates as the text written and absurdly long integers as text (rejected later, by field)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooDeep(self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int | str:  # type: ignore[override]
        if len(node.value) > MAX_INT_DIGITS:
            return node.value
        return super().construct_yaml_int(node)


# the stubs type a constructor's first argument as the loader's own class, which a SafeLoader method is not
_SafeLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)  # type: ignore[type-var]
_SafeLoader.add_constructor("tag:yaml.org,2002:int", _SafeLoader.construct_yaml_int)

_CLoader = getattr(yaml, "CSafeLoader", None)


if _CLoader is not None:
    class _ShippedLoader(_CLoader):  # type: ignore[valid-type,misc]
        """libyaml's parser (15x faster) for the files shipped with the package, which we wrote:
        the same constructors; depth, aliases, keys and text are checked by check_nodes after
        composition instead of during it."""

        def construct_yaml_int(self, node: yaml.ScalarNode) -> int | str:  # type: ignore[override]
            if len(node.value) > MAX_INT_DIGITS:
                return node.value
            return yaml.SafeLoader.construct_yaml_int(self, node)

    _ShippedLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
    _ShippedLoader.add_constructor("tag:yaml.org,2002:int", _ShippedLoader.construct_yaml_int)

    from yaml._yaml import CParser

    class _UserLoader(CParser, yaml.composer.Composer, yaml.constructor.SafeConstructor,  # type: ignore[misc]
                      yaml.resolver.Resolver):
        """A user's file: libyaml scans and parses it (3x faster: a 5,000-job file is read in well
        under a second), and the nodes are composed here in Python, with _SafeLoader's depth limit
        during composition -- libyaml's own composer recurses in C, where a deeply nested file could
        overflow the stack instead of raising."""

        _depth = 0

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    # composing a node means an event is pending, and a parsed event has its mark
                    raise _TooDeep(self.peek_event().start_mark)  # type: ignore[union-attr,arg-type]
                return yaml.composer.Composer.compose_node(self, parent, index)
            finally:
                self._depth -= 1

        compose_document = yaml.composer.Composer.compose_document
        get_single_node = yaml.composer.Composer.get_single_node

        def construct_yaml_int(self, node: yaml.ScalarNode) -> int | str:  # type: ignore[override]
            if len(node.value) > MAX_INT_DIGITS:
                return node.value
            return yaml.SafeLoader.construct_yaml_int(self, node)

    _UserLoader.add_constructor("tag:yaml.org,2002:timestamp",  # type: ignore[type-var]
                                yaml.SafeLoader.construct_yaml_str)
    _UserLoader.add_constructor("tag:yaml.org,2002:int", _UserLoader.construct_yaml_int)  # type: ignore[type-var]


def _at(mark: _Position) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _where(parts: tuple[int | str, ...]) -> str:
    return f"`{loc_text(parts)}`" if parts else "at the top level"


_KEY_KINDS = {"tag:yaml.org,2002:int": "a number", "tag:yaml.org,2002:float": "a number",
              "tag:yaml.org,2002:bool": "true/false", "tag:yaml.org,2002:null": "null",
              "tag:yaml.org,2002:timestamp": "a date"}


def _bad_key(node: yaml.ScalarNode | yaml.SequenceNode | yaml.MappingNode) -> str:
    if not isinstance(node, yaml.ScalarNode):
        return f"a {node.id} is used as a key"
    return f"the key {node.value} is read as {_KEY_KINDS.get(node.tag, node.tag)}, not text"


def _check_text(node: yaml.ScalarNode, path: tuple[int | str, ...], name: str) -> None:
    """Text with terminal controls (an escape sequence, a right-to-left override) is refused: names
    and messages from input files end up on the user's terminal."""
    bad = next((c for c in node.value if is_control(c) and c not in "\t\n\r"), None)
    if bad is not None:
        raise InputError(f"{name}: {_where(path)}: the text at {_at(node.start_mark)} holds the control character "
                         f"U+{ord(bad):04X}; write plain text.", file=name, field=loc_text(path) or None)


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
            raise InputError(f"{name}: {_where(path)}: YAML merge keys (<<, {_at(k.start_mark)}) are not "
                             "supported; write the fields out.", file=name, field=loc_text(path) or None)
        if not isinstance(k, yaml.ScalarNode) or k.tag != _STR:
            raise InputError(f"{name}: {_where(path)}: {_bad_key(k)} ({_at(k.start_mark)}); field names "
                             "and ids are text (quote a key such as '1' or 'yes' if you mean the text).",
                             file=name, field=loc_text(path) or None)
        _check_text(k, path, name)
        if k.value in seen:
            where = loc_text(path + (k.value,))
            raise InputError(f"{name}: `{where}` is given twice (lines {seen[k.value].line + 1} and "
                             f"{k.start_mark.line + 1}); keep one.", file=name, field=where)
        seen[k.value] = k.start_mark
        children.append((v, path + (k.value,)))
    return children


def check_nodes(root: yaml.Node, name: str) -> None:
    """Walk the composed document once, without recursion: refuse self-referencing aliases,
    more than MAX_EXPANDED_NODES values or MAX_DEPTH levels once aliases are expanded, and the
    keys _children refuses. Raises InputError naming the location."""
    size: dict[int, int] = {}     # id(node) -> values in its expansion (capped)
    chars: dict[int, int] = {}    # id(node) -> characters of text in its expansion (capped)
    depth: dict[int, int] = {}    # id(node) -> levels in its expansion
    open_: set[int] = set()       # the nodes on the path being walked
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
        if id(node) in size:      # reached again through an alias
            continue
        children = _children(node, path, name)
        open_.add(id(node))
        stack.append((node, path, children))
        for child, child_path in reversed(children):
            if id(child) in open_:
                raise InputError(f"{name}: `{loc_text(child_path)}`: an alias refers to the value that contains it "
                                 f"({_at(child.start_mark)}); a value cannot include itself.", file=name,
                                 field=loc_text(child_path))
            stack.append((child, child_path, None))
    if size[id(root)] > MAX_EXPANDED_NODES:
        raise InputError(f"{name}: the document expands to more than {MAX_EXPANDED_NODES:,} values through YAML "
                         "aliases; write the values out instead of nesting anchors.", file=name)
    if chars[id(root)] > MAX_EXPANDED_CHARS:
        raise InputError(f"{name}: the document expands to more than {MAX_EXPANDED_CHARS:,} characters of text "
                         "through YAML aliases; write the values out instead of repeating a long one by alias.",
                         file=name)
    if depth[id(root)] > MAX_DEPTH:
        raise InputError(f"{name}: the document nests more than {MAX_DEPTH} levels deep once its YAML aliases "
                         "are expanded; no file this tool reads needs that.", file=name)


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


def parse_yaml_text(text: str, name: str, shipped: bool = False, marks: Marks | None = None) -> Any:
    """Parse YAML text from `name` (used in messages) under the rules above. shipped: a file of
    the package itself (catalog/, rules/), parsed with libyaml when PyYAML has it; the same
    checks apply, the nesting depth after composition rather than during it. A user's file is
    scanned by libyaml too when PyYAML has it, and composed in Python (_UserLoader). `marks`, when
    given, is filled with where each value was written (for messages that give a line and column)."""
    loader: Any = None
    try:
        if _CLoader is None:
            loader = _SafeLoader(text)
        else:
            loader = _ShippedLoader(text) if shipped else _UserLoader(text)
        node = loader.get_single_node()
        if node is None:
            return None
        check_nodes(node, name)
        if marks is not None:
            positions(node, marks)
        return loader.construct_document(node)
    except _TooDeep as exc:
        raise _too_deep(name, _at(exc.mark)) from None
    except yaml.YAMLError as exc:
        raise _not_yaml(exc, text, name, by_bytes=not isinstance(loader, _SafeLoader)) from None
    finally:
        if loader is not None:
            loader.dispose()


def _too_deep(name: str, where: str) -> InputError:
    return InputError(f"{name}: nested more than {MAX_DEPTH} levels deep at {where}; no file this tool reads "
                      "needs that.", file=name)


def _not_yaml(exc: yaml.YAMLError, text: str, name: str, by_bytes: bool) -> InputError:
    """The parser's error in the user's terms, at its line and column. by_bytes: libyaml's reader
    counts a control character's position in UTF-8 bytes, Python's in characters."""
    if isinstance(exc, yaml.reader.ReaderError):
        at = len(text.encode("utf-8")[:exc.position].decode("utf-8", "ignore")) if by_bytes else exc.position
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        return InputError(f"{name}: not valid YAML at line {line}, column {column}: the control character "
                          f"U+{exc.character:04X} is not allowed in a YAML file.", file=name)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f" at {_at(mark)}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc)
    if "could not determine a constructor" in str(exc):
        problem = ("it uses a YAML tag that names a Python object or custom type; only plain "
                   "mappings, lists, strings and numbers are allowed")
    elif "exceeded maximum nesting depth" in problem:   # libyaml's own limit (1,000), met before ours
        return _too_deep(name, _at(mark) if mark else "the start")
    elif problem == "found character that cannot start any token" and mark is not None:   # libyaml's words
        lines = text.splitlines()
        char = lines[mark.line][mark.column:mark.column + 1] if mark.line < len(lines) else ""
        problem = f"found character {char!r} that cannot start any token" if char else problem
    return InputError(f"{name}: not valid YAML{where}: {problem}.", file=name)


def load_yaml_file(path: str | Path, what: str = "file", shipped: bool = False, marks: Marks | None = None) -> Any:
    """Read and parse one YAML file, refusing what a hand-written input file should never be.
    `-` reads standard input (named `<stdin>` in messages). shipped: one of the package's own data
    files (see parse_yaml_text); marks: filled with where each value was written."""
    name, raw = read_bytes(path, what)
    return parse_bytes(raw, name, what, shipped, marks)


def read_bytes(path: str | Path, what: str = "file") -> tuple[str, bytes]:
    """(name for messages, bytes) of a file, or of standard input for `-` (`<stdin>`), at most
    MAX_BYTES: what a memo quotes and hashes, and parse_bytes reads."""
    name = str(path)
    if name == "-":
        import sys

        try:
            raw = sys.stdin.buffer.read(MAX_BYTES + 1)
        except (OSError, AttributeError, ValueError) as exc:   # closed, not a byte stream, captured
            raise InputError(f"<stdin>: cannot read the {what} ({exc}).", file="<stdin>") from None
        if len(raw) > MAX_BYTES:
            raise InputError(f"<stdin>: the {what} is more than {MAX_BYTES:,} bytes; the limit is {MAX_BYTES:,} "
                             "bytes.", file="<stdin>")
        return "<stdin>", raw
    path = Path(path)
    try:
        if path.is_dir():
            raise InputError(f"{name}: is a folder, not a {what}.", file=name)
        size = path.stat().st_size
        with open(path, "rb") as f:   # at most the limit, whatever stat said: /dev/zero has size 0
            raw = f.read(MAX_BYTES + 1) if size <= MAX_BYTES else b""
        if size > MAX_BYTES or len(raw) > MAX_BYTES:
            how = f"{size:,} bytes" if size > MAX_BYTES else f"more than {MAX_BYTES:,} bytes"
            raise InputError(f"{name}: the {what} is {how}; the limit is {MAX_BYTES:,} bytes.", file=name)
    except FileNotFoundError:
        raise InputError(f"{name}: no such {what}.", file=name) from None
    except PermissionError:
        raise InputError(f"{name}: cannot read the {what} (permission denied).", file=name) from None
    except OSError as exc:  # a name too long, a broken device, a FIFO that fails to read
        raise InputError(f"{name}: cannot read the {what} ({exc.strerror or exc}).", file=name) from None
    return name, raw


def parse_bytes(raw: bytes, name: str, what: str, shipped: bool = False, marks: Marks | None = None) -> Any:
    """The YAML document in `raw` (UTF-8 text; BOMs of other encodings, NUL bytes refused)."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            raise InputError(f"{name}: is {encoding} text; save the {what} as UTF-8 YAML.", file=name)
    if b"\x00" in raw:
        raise InputError(f"{name}: looks like a binary file; a {what} is UTF-8 YAML text.", file=name)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: is not UTF-8 text (byte {exc.start}); save the {what} as UTF-8 YAML.",
                         file=name) from None
    return parse_yaml_text(text, name, shipped, marks)
