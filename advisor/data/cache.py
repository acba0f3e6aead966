"""The on-disk cache: where it lives, who may use it, and its sealed entries.

What is cached (the compiled shipped catalog and rules, data/compiled.py; layout searches,
perf/layout_cache.py) is data, never code: an entry is one file, a JSON header line then a JSON
payload, read back as plain values. An entry is used only if it is sealed: its header carries an
HMAC-SHA256 of its kind, its key and its payload under a secret key kept outside the cache folder.
A folder restored from elsewhere (a CI cache, a container image, a shared home directory) or a file
planted in it carries no valid seal, whatever it holds: such an entry, like a truncated, corrupt or
foreign one, is removed and rebuilt, and the command runs as it would with the cache off.

Where: `$GPU_ADVISOR_CACHE` (an absolute path; `off` turns the cache off), else
`$XDG_CACHE_HOME/gpu-advisor`, else `~/.cache/gpu-advisor`. The folder is created private to the
user (0700) and used only while it is the user's own and nobody else may write to it. The secret is
`$XDG_CONFIG_HOME/gpu-advisor/cache-key` (else `~/.config/gpu-advisor/cache-key`): 32 random bytes
made on first use, readable by the user only. Whenever one of these does not hold, nothing is read
or written (a note on stderr says why, once): the data is parsed and searched every time, which is
only slower.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
from pathlib import Path

FORMAT = "gpu-advisor cache entry 2"
MAX_ENTRY_BYTES = 16_000_000  # the compiled catalog is ~0.4 MB, a layout shard a few KB
_OFF = ("", "0", "off", "no", "false")
_SECRETS: dict[str, bytes | None] = {}  # key file -> its secret (None: unusable), read once per process
_FOLDERS: dict[str, bool] = {}  # folder -> whether it may be used, checked once per process
_SAID: set[str] = set()  # notes already printed


def note(message: str) -> None:
    """Say once per process, on stderr, why the cache is not used (it never changes a result)."""
    if message not in _SAID:
        from advisor.errors import printable

        _SAID.add(message)
        print(printable(f"gpu-advisor: {message}"), file=sys.stderr)


def cache_dir() -> Path | None:
    """The cache folder, or None when the cache is off. A relative GPU_ADVISOR_CACHE is refused
    (the cache is off, said once): it would put a folder wherever the command happens to run."""
    where = os.environ.get("GPU_ADVISOR_CACHE")
    if where is not None:
        if where.strip().lower() in _OFF:
            return None
        path = os.path.expanduser(where)
        if not os.path.isabs(path):
            note(
                f"GPU_ADVISOR_CACHE={where!r} is not an absolute path: the cache is off for this run "
                "(give an absolute folder, or off)"
            )
            return None
        return Path(path)
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpu-advisor"


def key_file() -> Path:
    """Where the secret that seals the entries lives: outside the cache folder, so that a copied or
    restored cache folder brings no valid seal with it."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gpu-advisor" / "cache-key"


def _owned_private(st: os.stat_result, mode_mask: int) -> bool:
    """The user's own (where the platform has owners) with none of `mode_mask`'s permission bits."""
    uid = getattr(os, "geteuid", None)
    return (uid is None or st.st_uid == uid()) and not (st.st_mode & mode_mask)


def usable_folder(folder: Path, create: bool = False) -> bool:
    """Whether entries may be read from (and written to) `folder`: a folder of the user's own that
    nobody else may write to. `create` makes it (0700) when missing."""
    name = str(folder)
    if _FOLDERS.get(name):
        return True
    try:
        if create and not folder.exists():
            folder.parent.mkdir(parents=True, exist_ok=True)  # (~/.cache, say: not ours to restrict)
            folder.mkdir(mode=0o700, exist_ok=True)
        st = folder.stat()
    except OSError:
        return False  # missing (not created yet) or unreachable: nothing to read, nothing written
    ok = stat.S_ISDIR(st.st_mode) and _owned_private(st, 0o022)
    if not ok and stat.S_ISDIR(st.st_mode) and _owned_private(st, 0) and _ours(folder):
        try:  # the default folder (or one inside it), made group-writable by an older version under umask 002
            os.chmod(folder, 0o700)
            ok = _owned_private(folder.stat(), 0o022)
        except OSError:
            ok = False
    if not ok:
        note(
            f"the cache folder {name} is not the user's own or others may write to it: the cache is off "
            "(give GPU_ADVISOR_CACHE a private folder)"
        )
    _FOLDERS[name] = ok
    return ok


def _ours(folder: Path) -> bool:
    """Whether `folder` is the default cache folder or inside it (GPU_ADVISOR_CACHE unset): a folder
    only this tool uses, whose permissions it may tighten; a folder the user named is left as it is."""
    if os.environ.get("GPU_ADVISOR_CACHE") is not None:
        return False
    root = cache_dir()
    return root is not None and (folder == root or root in folder.parents)


def _read_secret(path: Path) -> bytes | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        text = os.read(fd, 65)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode) or not _owned_private(st, 0o077) or len(text) != 64:
        note(
            f"the cache key {path} is not a private file of the user's own (64 hex digits, mode 600): "
            "the cache is off until it is (delete it to make a new one)"
        )
        return None
    try:
        return bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        note(f"the cache key {path} is not 64 hex digits: the cache is off (delete it to make a new one)")
        return None


def _make_secret(path: Path) -> None:
    """Write a new random key, atomically: linked into place only if no other process made one first."""
    import tempfile  # (writing only: a run that reads the cache does without it)

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-key-")  # mode 0600
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: use theirs
    finally:
        Path(tmp).unlink(missing_ok=True)


def secret() -> bytes | None:
    """The key that seals entries, made on first use; None when it cannot be read or made."""
    path = key_file()
    name = str(path)
    if name not in _SECRETS:
        value = None
        try:
            try:
                value = _read_secret(path)
            except FileNotFoundError:
                _make_secret(path)
                value = _read_secret(path)
        except OSError as exc:
            note(f"the cache key {name} cannot be read or made ({exc.strerror or exc}): the cache is off")
        _SECRETS[name] = value
    return _SECRETS[name]


def _seal(key_bytes: bytes, kind: str, key: str, payload: bytes) -> str:
    return hmac.new(key_bytes, f"{FORMAT}\0{kind}\0{key}\0".encode() + payload, hashlib.sha256).hexdigest()


def remove(path: Path) -> None:
    """Delete an entry that cannot be used (never what it points to: unlink removes a link itself)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # a folder planted under an entry's name, a read-only disk: it is ignored all the same


def _read_file(path: Path) -> bytes | None:
    """The file's bytes if it is a regular file of the user's own of a sane size, else None (removed).
    Never follows a link, never blocks on a pipe."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError:  # a link (ELOOP), a folder, no permission
        remove(path)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES or not _owned_private(st, 0o022):
            remove(path)
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_sealed(path: Path, kind: str, key: str) -> bytes | None:
    """The payload of the entry at `path` if it is sealed with this user's secret for exactly this
    kind and key; otherwise None, and an entry that exists but is not so is removed."""
    key_bytes = secret()
    if key_bytes is None or not usable_folder(path.parent):
        return None
    data = _read_file(path)
    if data is None:
        return None
    head, _, payload = data.partition(b"\n")
    try:
        header = json.loads(head)
        ok = (
            isinstance(header, dict)
            and header.get("format") == FORMAT
            and header.get("kind") == kind
            and header.get("key") == key
            and isinstance(header.get("seal"), str)
            and hmac.compare_digest(header["seal"], _seal(key_bytes, kind, key, payload))
        )
    except ValueError:  # not JSON, not UTF-8
        ok = False
    if not ok:
        remove(path)
        return None
    return payload


def write_sealed(path: Path, kind: str, key: str, payload: bytes) -> None:
    """Write an entry atomically (a temporary file renamed into place); failures are ignored (a
    read-only or full disk: the data is rebuilt next time)."""
    key_bytes = secret()
    if key_bytes is None or not usable_folder(path.parent, create=True):
        return
    header = json.dumps({"format": FORMAT, "kind": kind, "key": key, "seal": _seal(key_bytes, kind, key, payload)})
    import tempfile  # (writing only: a run that reads the cache does without it)

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "wb") as f:
            f.write(header.encode() + b"\n" + payload)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
