"""base.files.replace_atomically: a file replaced whole or not at all, never a temporary file left behind."""

from __future__ import annotations

import os
import stat

import pytest

from base.files import replace_atomically


def _names(folder):
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("data,want", [(b"\x00bytes\xff", b"\x00bytes\xff"), ("text \u00e9\n", "text \u00e9\n".encode())])
def test_a_new_file_holds_the_data_and_nothing_else_is_left(tmp_path, data, want):
    path = tmp_path / "new.json"
    assert replace_atomically(path, data) is True
    assert path.read_bytes() == want
    assert _names(tmp_path) == ["new.json"]


def test_an_existing_file_is_replaced_whole(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"a much longer old content, " * 100)
    before = os.stat(path).st_ino
    replace_atomically(str(path), b"short")
    assert path.read_bytes() == b"short"                                # no tail of the old file
    assert os.stat(path).st_ino != before                               # a new file renamed over, not rewritten
    assert _names(tmp_path) == ["f.txt"]


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_usual_mode_less_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        replace_atomically(tmp_path / "m.bin", b"x")
        replace_atomically(tmp_path / "w.png", lambda tmp: open(tmp, "wb").write(b"x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "m.bin").st_mode) == mode
    assert stat.S_IMODE(os.stat(tmp_path / "w.png").st_mode) == mode


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "p.png"
    path.write_bytes(b"old")

    def writer(tmp):
        with open(tmp, "wb") as f:
            f.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        replace_atomically(path, writer)
    assert path.read_bytes() == b"old"
    assert _names(tmp_path) == ["p.png"]


def test_a_refusal_before_the_rename_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "f.tex"
    path.write_bytes(b"old")
    seen = []

    def refuse():
        seen.append(_names(tmp_path))                                   # the new content is on disk by now
        raise ValueError("not ours")

    with pytest.raises(ValueError, match="not ours"):
        replace_atomically(path, b"new", before_replace=refuse)
    assert len(seen[0]) == 2 and seen[0][1] == "f.tex"
    assert path.read_bytes() == b"old"
    assert _names(tmp_path) == ["f.tex"]


def test_a_failed_rename_leaves_no_temporary(tmp_path):
    folder = tmp_path / "target"
    folder.mkdir()                                                      # os.replace cannot put a file over it
    with pytest.raises(OSError):
        replace_atomically(folder, b"x")
    assert _names(tmp_path) == ["target"] and _names(folder) == []


def test_a_missing_folder_is_an_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        replace_atomically(tmp_path / "no" / "f.txt", b"x")
    assert _names(tmp_path) == []


def test_a_writer_sees_the_extension_and_one_that_writes_nothing_changes_nothing(tmp_path):
    path = tmp_path / "plot.pdf"
    path.write_bytes(b"old")
    given = []
    assert replace_atomically(path, given.append) is False              # wrote nothing
    assert given[0].endswith(".pdf") and os.path.dirname(given[0]) == str(tmp_path)
    assert path.read_bytes() == b"old" and _names(tmp_path) == ["plot.pdf"]
