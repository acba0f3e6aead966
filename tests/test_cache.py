"""The cache is data, not code (issue 33): whatever is planted in the cache folder -- a pickle that
would run code, random bytes, a truncated entry, a well-formed entry with other figures sealed by
someone without this user's key, a sealed entry of the wrong shape, a link, a pipe -- the plan is
byte-identical to a cache-off plan, the command exits 0, nothing runs, and the entry is rebuilt."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import main
from advisor.data import cache, compiled, evidence, uncertainty
from advisor.perf import layout_cache

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "article-office.yaml"
PLAN = ("plan", EXAMPLE, "--as-of", "2026-12-01", "--format", "json")
LIST = ("catalog", "list", "h100", "--format", "json", "--as-of", "2026-12-01")


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A cache folder and key of this test's own, nothing remembered in this process."""
    where = tmp_path / "cache"
    monkeypatch.setenv("GPU_ADVISOR_CACHE", str(where))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(layout_cache, "_FOLDER", [])
    monkeypatch.setattr(cache, "_SAID", set())
    layout_cache.forget()
    yield where
    layout_cache.forget()


def invoke(*args) -> tuple[int, str, str]:
    """One command as a fresh process would run it: nothing remembered before, its searches written after."""
    layout_cache.forget()
    uncertainty._doc.cache_clear()  # the shipped documents a process reads once
    evidence._shipped.cache_clear()
    result = CliRunner().invoke(main, [str(a) for a in args])
    layout_cache.save()  # (what the process does at exit)
    layout_cache.forget()
    return result.exit_code, result.stdout, result.stderr


_OFF: dict[tuple, str] = {}


def cache_off(monkeypatch, *args) -> str:
    """What the command prints with the cache off (once per test run)."""
    if args in _OFF:
        return _OFF[args]
    with monkeypatch.context() as m:
        m.setenv("GPU_ADVISOR_CACHE", "off")
        m.setattr(layout_cache, "_FOLDER", [])
        code, out, err = invoke(*args)
    layout_cache._FOLDER.clear()
    assert code == 0, err
    _OFF[args] = out
    return out


def entries(folder: Path) -> list[Path]:
    found = sorted(folder.glob("*.json")) + sorted(folder.glob("layouts-*/*.json"))
    assert {p.name.split("-")[0] for p in folder.glob("*.json")} == {"catalog", "rules", "uncertainty", "accuracy"}
    assert any(p.parent != folder for p in found), "no layout search was stored"
    return found


def split(path: Path) -> tuple[dict, bytes]:
    head, _, payload = path.read_bytes().partition(b"\n")
    return json.loads(head), payload


def reseal(path: Path, payload: bytes, key: bytes) -> None:
    """Write `payload` under `path`'s header, sealed with `key` (an attacker's, or this user's)."""
    header, _ = split(path)
    header["seal"] = cache._seal(key, header["kind"], header["key"], payload)
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)


class _Runs:
    """A pickle that, once loaded, creates the file `marker`."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').close()",)


def _cheap(node) -> None:
    """Every price inside `node` set to $1."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "usd" and isinstance(v, (int, float)):
                node[k] = 1.0
            else:
                _cheap(v)
    elif isinstance(node, list):
        for v in node:
            _cheap(v)


def _scaled(node):
    """`node` with every number in it x 1,000."""
    if isinstance(node, dict):
        return {k: _scaled(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_scaled(v) for v in node]
    return node * 1000 if isinstance(node, (int, float)) and not isinstance(node, bool) else node


def _forged(path: Path) -> bytes:
    """The entry's payload with other figures, well formed: the H100 at $1, every layout 1,000 times faster."""
    _, payload = split(path)
    value = json.loads(payload)
    if path.name.startswith("catalog-"):
        raw, catalog = value["d"]
        _cheap(raw["gpus"]["h100-sxm"])
        _cheap(catalog["d"]["gpus"]["h100-sxm"])
    elif path.name.startswith("rules-"):
        value = json.loads(payload.replace(b'"forbid"', b'"warn"'))  # every forbidding rule a mere warning
    elif path.name.startswith(("uncertainty-", "accuracy-")):  # a shipped document: every figure x 1,000
        value = _scaled(value)
    else:
        for pair in value:
            if isinstance(pair[1], list):
                pair[1][2] *= 1000.0
            elif isinstance(pair[1], int):
                pair[1] = 1
    return json.dumps(value, separators=(",", ":")).encode()


def plant(kind: str, path: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    if kind == "pickle":
        path.write_bytes(pickle.dumps(_Runs(marker)))
    elif kind == "pickle-after-header":  # a header of the right form, then a pickle
        reseal(path, pickle.dumps(_Runs(marker)), b"attacker" * 4)
    elif kind == "random":
        path.write_bytes(os.urandom(4096))
    elif kind == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "forged":  # well formed, other figures, sealed without this user's key
        reseal(path, _forged(path), b"attacker" * 4)
    elif kind == "forged-unsealed":  # well formed, other figures, the old seal kept
        header, _ = split(path)
        path.write_bytes(json.dumps(header).encode() + b"\n" + _forged(path))
    elif kind == "sealed-wrong-shape":  # sealed by this user's key, yet not what the code reads
        reseal(
            path,
            b'{"$":"tuple","d":[{}, {"$":"advisor.data.catalog_entries.GPU","d":{},"s":[]}]}'
            if path.parent.name.startswith("cache")
            else b'[[1, "x"], [2, {"a": 1}]]',
            cache.secret(),
        )
    elif kind == "link":
        target = tmp_path / f"target-{path.name}"
        target.write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(target)
    elif kind == "pipe":
        path.unlink()
        os.mkfifo(path)


ATTACKS = (
    "pickle",
    "pickle-after-header",
    "random",
    "truncated",
    "forged",
    "forged-unsealed",
    "sealed-wrong-shape",
    "link",
    "pipe",
)


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """A cache folder (`cache`) and its key (under `config`) as one `advisor plan` leaves them, starting
    from none; made once, each attack below plants into a copy of it."""
    base = tmp_path_factory.mktemp("filled")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_ADVISOR_CACHE", str(base / "cache"))
        patch.setenv("XDG_CONFIG_HOME", str(base / "config"))
        patch.setattr(layout_cache, "_FOLDER", [])
        patch.setattr(cache, "_SAID", set())
        layout_cache.forget()
        expected = cache_off(patch, *PLAN)
        code, out, _ = invoke(*PLAN)  # fills the cache
        assert (code, out) == (0, expected)
    layout_cache.forget()
    return base


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_planted_entry_changes_nothing_and_is_rebuilt(attack, filled, folder, tmp_path, monkeypatch):
    expected = cache_off(monkeypatch, *PLAN)
    # the filled cache and its key, copied with their modes (the folder 0700, the files 0600)
    shutil.copytree(filled / "cache", folder)
    shutil.copytree(filled / "config", tmp_path / "config")
    planted = entries(folder)
    for path in planted:
        plant(attack, path, tmp_path)
    code, out, err = invoke(*PLAN)
    assert code == 0, err
    assert out == expected
    assert not (tmp_path / "marker").exists()
    for path in planted:  # removed, and written anew as a sealed entry of this user
        assert stat.S_ISREG(path.lstat().st_mode)
        header, _ = split(path)
        assert header["format"] == cache.FORMAT and cache.read_sealed(path, header["kind"], header["key"])
    for target in tmp_path.glob("target-*"):  # a link is replaced, never followed
        assert not target.is_symlink() and target.stat().st_size > 0


def test_a_forged_price_is_not_listed(folder, tmp_path, monkeypatch):
    """The issue's case: an entry keeping its valid key (and, here, a digest recomputed over the forged
    payload) once made `catalog list` print the H100 at $1."""
    expected = cache_off(monkeypatch, *LIST)
    assert invoke(*LIST)[:2] == (0, expected)
    (path,) = folder.glob("catalog-*.json")
    reseal(path, _forged(path), b"attacker" * 4)
    code, out, err = invoke(*LIST)
    assert (code, out) == (0, expected), err


@pytest.mark.slow
def test_the_pickle_payload_never_runs_in_a_fresh_process(filled, folder, tmp_path, monkeypatch):
    """`advisor plan` as a user runs it, every cache file a pickle that would create a file."""
    expected = cache_off(monkeypatch, *PLAN)
    shutil.copytree(filled / "cache", folder)
    shutil.copytree(filled / "config", tmp_path / "config")
    for path in entries(folder):
        plant("pickle", path, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "advisor", *map(str, PLAN)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, expected, "")
    assert not (tmp_path / "marker").exists()


def test_a_warm_cache_is_read_not_rebuilt(folder, monkeypatch):
    """Stored once, the catalog, the rules and the layout searches come back from the cache, equal in
    every field (and in which fields were set) to what parsing and searching make."""
    from advisor.data import catalog_load, rules
    from advisor.perf import layout

    made = (catalog_load._builtin(), rules._builtin_files(sorted(rules.data_dir("rules").glob("*.yaml"))))
    invoke(*PLAN)

    def never(*args, **kwargs):
        raise AssertionError("rebuilt although the cache holds it")

    monkeypatch.setattr(catalog_load, "_builtin_raw", never)
    monkeypatch.setattr(rules, "_validate_file", never)
    monkeypatch.setattr(layout, "_choose_layout", never)
    monkeypatch.setattr(layout, "_min_gpus", never)
    read = (catalog_load._builtin(), rules._builtin_files(sorted(rules.data_dir("rules").glob("*.yaml"))))
    assert_same(made, read)
    assert invoke(*PLAN)[0] == 0


def assert_same(a, b, where="value") -> None:
    """Equal, of the same types, models with the same fields set and private attributes (what pickle kept)."""
    assert type(a) is type(b), where
    if hasattr(a, "__pydantic_fields_set__"):
        assert a.__pydantic_fields_set__ == b.__pydantic_fields_set__, where
        assert a.__pydantic_private__ == b.__pydantic_private__, where
        a, b = a.__dict__, b.__dict__
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def test_stored_values_name_only_data_models():
    """A tag naming anything but a data model of this package, or a model with other fields, is refused."""
    models = compiled.data_models()
    assert "advisor.data.catalog_entries.GPU" in models and all(t.startswith("advisor.") for t in models)
    for payload in (
        b'{"$":"os.system","d":{},"s":[]}',
        b'{"$":"builtins.eval","d":"1"}',
        b'{"$":"advisor.data.catalog_entries.Source","d":{"x":1},"s":[]}',
        b'{"$":"dict","d":{},"z":1}',
    ):
        with pytest.raises(ValueError):
            compiled.from_json(payload, models)
    with pytest.raises(compiled.Unsupported):
        compiled.to_plain({1: "a mapping with a number for a key"})


def test_a_layout_answer_read_back_is_checked():
    good = [[8, [["zero1", 8, 1, 1, 4, False, 1], {"compute_s": 0.5, "tier": "nvlink"}, 1234.5, False]], [9, None]]
    answers = layout_cache._read("layout", json.dumps(good).encode())
    assert answers[9] is None and answers[8][0] == layout_cache.Layout("zero1", 8, 1, 1, 4, False, 1)
    assert layout_cache._stored("layout", answers) == json.dumps(good, separators=(",", ":")).encode()
    for bad in (
        [[8, [["zero9", 8, 1, 1, 4, False, 1], {}, 1.0, False]]],
        [[8, [["ddp", 0, 1, 1, 4, False, 1], {}, 1.0, False]]],
        [[8, [["ddp", 8, 1, 1, 4, False, 1], {"comm_s": -1.0}, 1.0, False]]],
        [[8, [["ddp", 8, 1, 1, 4, False, 1], {}, -1.0, False]]],
        [[True, None]],
        [[0, None]],
        {"8": None},
    ):
        with pytest.raises((ValueError, TypeError)):
            layout_cache._read("layout", json.dumps(bad).encode())
    assert layout_cache._read("min_gpus", b"[[100000, 4], [8, null]]") == {100000: 4, 8: None}
    with pytest.raises(ValueError):
        layout_cache._read("min_gpus", b"[[100000, 0]]")
    assert dataclasses.astuple(answers[8][0]) == tuple(good[0][1][0])


def test_the_folder_and_key_are_private(folder, tmp_path):
    assert invoke(*LIST)[0] == 0
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    key = cache.key_file()
    assert key.parent == tmp_path / "config" / "gpu-advisor" and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.glob("*.json"))


def test_a_folder_others_may_write_to_is_not_used(folder, monkeypatch):
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)
    code, _, err = invoke(*LIST)
    assert code == 0 and "others may write to it: the cache is off" in err
    assert list(folder.iterdir()) == []


def test_the_default_folder_left_group_writable_is_made_private(tmp_path, monkeypatch):
    """An older version under umask 002 left ~/.cache/gpu-advisor group-writable: the default folder is
    this tool's own, so it is tightened to 0700 and used (a folder the user named is only refused)."""
    monkeypatch.delenv("GPU_ADVISOR_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    default = tmp_path / "xdg" / "gpu-advisor"
    default.mkdir(parents=True)
    default.chmod(0o775)
    code, _, err = invoke(*LIST)
    assert code == 0 and err == ""
    assert stat.S_IMODE(default.stat().st_mode) == 0o700 and list(default.glob("catalog-*.json"))


def test_pruning_old_layout_stores_never_follows_a_link(folder, tmp_path):
    """Stores of older estimator versions are removed (the newest few kept); a link planted among them
    is not followed into the folder it points to."""
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep")
    invoke(*PLAN)
    (folder / "layouts-0000").symlink_to(precious, target_is_directory=True)
    os.utime(precious, (0, 0))  # through the link, the oldest store of all
    for i in range(layout_cache.KEEP_FOLDERS + 2):
        old = folder / f"layouts-old{i}"
        old.mkdir()
        (old / "x.json").write_text("{}")
        os.utime(old, (i, i))  # the oldest first
    layout_cache._prune(next(p for p in folder.glob("layouts-*") if not p.is_symlink() and "old" not in p.name))
    assert (precious / "thesis.tex").read_text() == "keep"
    assert len(list(folder.glob("layouts-old*"))) == layout_cache.KEEP_FOLDERS


def test_a_relative_cache_path_is_refused_and_said(folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPU_ADVISOR_CACHE", "relative/x")
    code, out, err = invoke(*LIST)
    assert code == 0 and json.loads(out)
    assert "GPU_ADVISOR_CACHE='relative/x' is not an absolute path: the cache is off" in err
    assert not (tmp_path / "relative").exists()


def test_a_key_readable_by_others_turns_the_cache_off(folder):
    assert invoke(*LIST)[0] == 0
    cache._SECRETS.clear()
    cache.key_file().chmod(0o644)
    stored = {p: p.read_bytes() for p in folder.glob("*.json")}
    code, _, err = invoke(*LIST)
    assert code == 0 and "is not a private file" in err
    assert {p: p.read_bytes() for p in folder.glob("*.json")} == stored  # neither read nor rewritten
    cache._SECRETS.clear()
