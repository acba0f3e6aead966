"""Memo.write never surprises: no folder made up from a mistyped path, no file replaced without
force, no file named '-', charts in a folder named after the memo, and nothing half-written (a
temporary file renamed into place) (issue 20)."""

from __future__ import annotations

import os

import pytest
from conftest import EXAMPLES

from advisor.errors import InputError
from advisor.present.memo import Memo


def md_memo(name="memo"):
    return Memo("md", b"# memo\n", {f"{name}_files/chart.svg": b"<svg/>"})


def test_a_missing_folder_is_refused_naming_it(tmp_path):
    with pytest.raises(InputError) as exc:
        md_memo().write(tmp_path / "nope" / "memo.md")
    assert "nope" in str(exc.value) and "does not exist" in str(exc.value)
    assert not (tmp_path / "nope").exists()


def test_an_existing_file_is_replaced_only_with_force(tmp_path):
    path = tmp_path / "memo.md"
    path.write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        md_memo().write(path)
    assert "already exists" in str(exc.value) and "pass `force`" in str(exc.value)  # the CLI says --force
    assert path.read_text(encoding="utf-8") == "keep me"
    assert not (tmp_path / "memo_files").exists()  # nothing written before the refusal
    written = md_memo().write(path, force=True)
    assert path.read_bytes() == b"# memo\n" and (tmp_path / "memo_files" / "chart.svg").read_bytes() == b"<svg/>"
    assert written == [path, tmp_path / "memo_files" / "chart.svg"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.md", "memo_files"]  # no temporary file left


def test_dash_and_folders_are_not_file_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError):
        Memo("html", b"<p>x</p>").write("-")
    assert not (tmp_path / "-").exists()
    (tmp_path / "d.html").mkdir()
    with pytest.raises(InputError):
        Memo("html", b"<p>x</p>").write(tmp_path / "d.html")


def test_two_memos_in_one_folder_never_share_their_charts(tmp_path):
    md_memo("a").write(tmp_path / "a.md")
    md_memo("b").write(tmp_path / "b.md")
    assert (tmp_path / "a_files" / "chart.svg").exists() and (tmp_path / "b_files" / "chart.svg").exists()
    with pytest.raises(InputError) as exc:
        md_memo("a").write(tmp_path / "c.md")  # charts linked as a_files/ cannot go beside c.md
    assert "name='c'" in str(exc.value)


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "memo.html"
    path.write_bytes(b"old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        Memo("html", b"new" * 1000).write(path, force=True)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["memo.html"]


def test_the_cli_refuses_to_overwrite_without_force(run, tmp_path):
    path = tmp_path / "memo.md"
    path.write_text("mine", encoding="utf-8")
    code, out, err = run("memo", EXAMPLES / "article-office.yaml", "-o", path, "--as-of", "2026-12-01")
    assert code == 2 and "already exists" in err and path.read_text(encoding="utf-8") == "mine"
    code, _, err = run(
        "memo", EXAMPLES / "article-office.yaml", "-o", tmp_path / "missing" / "m.md", "--as-of", "2026-12-01"
    )
    assert code == 2 and "does not exist" in err and not (tmp_path / "missing").exists()
