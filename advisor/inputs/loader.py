"""Reads the YAML files a user hands us (workloads, catalog and rules overrides) defensively. Safe loading
only (no object tags, no merge keys); duplicate keys refused; mapping keys must be text; no control
characters in text; nesting and alias expansion bounded (a "billion laughs" file or a self-referencing
alias fails fast, and deep nesting cannot exhaust Python's stack); a size limit, also on devices and
pipes; text that is not UTF-8 refused. Dates stay the text the user wrote, and so do YAML 1.1's other
booleans (yes, no, on, off): only true and false are booleans, as in YAML 1.2, so Norway's NO is
the code NO, not false (a bool field still takes 'yes'). Every failure is an InputError naming the file
and, where it has one, the location. When PyYAML has libyaml, a file is scanned and parsed by it (a
5,000-job workload in 0.6 s rather than 3 s) and its nodes composed in Python, where the depth limit
holds as they are built.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import yaml

from advisor.errors import InputError
from advisor.inputs.yaml_nodes import MAX_DEPTH, Marks, Position, check_nodes, mark_text, positions

MAX_BYTES = 1_000_000  # a workload is a few hundred bytes; a catalog a few hundred KB
MAX_INT_DIGITS = 4000  # Python refuses to read longer integers (sys.get_int_max_str_digits)

_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class _TooDeep(Exception):
    def __init__(self, mark: Position) -> None:
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


def _construct_bool(loader: Any, node: yaml.ScalarNode) -> bool | str:
    """true and false (any case) as booleans; YAML 1.1's yes, no, on and off as the text written."""
    text = str(node.value)
    return text.lower() == "true" if text.lower() in ("true", "false") else text


# the stubs type a constructor's first argument as the loader's own class, which a SafeLoader method is not
_SafeLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)  # type: ignore[type-var]
_SafeLoader.add_constructor("tag:yaml.org,2002:int", _SafeLoader.construct_yaml_int)
_SafeLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)

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
    _ShippedLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)

    from yaml._yaml import CParser

    class _UserLoader(
        CParser,
        yaml.composer.Composer,
        yaml.constructor.SafeConstructor,  # type: ignore[misc]
        yaml.resolver.Resolver,
    ):
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

    _UserLoader.add_constructor(
        "tag:yaml.org,2002:timestamp",  # type: ignore[type-var]
        yaml.SafeLoader.construct_yaml_str,
    )
    _UserLoader.add_constructor("tag:yaml.org,2002:int", _UserLoader.construct_yaml_int)  # type: ignore[type-var]
    _UserLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)  # type: ignore[type-var]


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
        raise _too_deep(name, mark_text(exc.mark)) from None
    except yaml.YAMLError as exc:
        raise _not_yaml(exc, text, name, by_bytes=not isinstance(loader, _SafeLoader)) from None
    finally:
        if loader is not None:
            loader.dispose()


def _too_deep(name: str, where: str) -> InputError:
    return InputError(
        f"{name}: nested more than {MAX_DEPTH} levels deep at {where}; no file this tool reads needs that.", file=name
    )


def _not_yaml(exc: yaml.YAMLError, text: str, name: str, by_bytes: bool) -> InputError:
    """The parser's error in the user's terms, at its line and column. by_bytes: libyaml's reader
    counts a control character's position in UTF-8 bytes, Python's in characters."""
    if isinstance(exc, yaml.reader.ReaderError):
        at = len(text.encode("utf-8")[: exc.position].decode("utf-8", "ignore")) if by_bytes else exc.position
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        return InputError(
            f"{name}: not valid YAML at line {line}, column {column}: the control character "
            f"U+{exc.character:04X} is not allowed in a YAML file.",
            file=name,
        )
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f" at {mark_text(mark)}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc)
    if "could not determine a constructor" in str(exc):
        problem = (
            "it uses a YAML tag that names a Python object or custom type; only plain "
            "mappings, lists, strings and numbers are allowed"
        )
    elif "exceeded maximum nesting depth" in problem:  # libyaml's own limit (1,000), met before ours
        return _too_deep(name, mark_text(mark) if mark else "the start")
    elif problem == "found character that cannot start any token" and mark is not None:  # libyaml's words
        lines = text.splitlines()
        char = lines[mark.line][mark.column : mark.column + 1] if mark.line < len(lines) else ""
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
        except (OSError, AttributeError, ValueError) as exc:  # closed, not a byte stream, captured
            raise InputError(f"<stdin>: cannot read the {what} ({exc}).", file="<stdin>") from None
        if len(raw) > MAX_BYTES:
            raise InputError(
                f"<stdin>: the {what} is more than {MAX_BYTES:,} bytes; the limit is {MAX_BYTES:,} bytes.",
                file="<stdin>",
            )
        return "<stdin>", raw
    path = Path(path)
    try:
        if path.is_dir():
            raise InputError(f"{name}: is a folder, not a {what}.", file=name)
        size = path.stat().st_size
        with open(path, "rb") as f:  # at most the limit, whatever stat said: /dev/zero has size 0
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
        raise InputError(
            f"{name}: is not UTF-8 text (byte {exc.start}); save the {what} as UTF-8 YAML.", file=name
        ) from None
    return parse_yaml_text(text, name, shipped, marks)
