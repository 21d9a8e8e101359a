"""tilebound.output: atomic writes, the marker that says which files are tilebound's, no lost file."""

from __future__ import annotations

import hashlib
import os

import pytest

from base.errors import BadInput
from tilebound import output


def test_text_file_carries_a_marker_with_the_hash_of_the_rest(tmp_path):
    path = tmp_path / "notes.tex"
    output.write_text(str(path), "\\section{A}\n")
    first, rest = path.read_text().split("\n", 1)
    assert rest == "\\section{A}\n"
    # the hash is SHA-256 of the text after the marker line, computed here independently
    assert first.startswith(f"% written by tilebound (sha256:{hashlib.sha256(rest.encode()).hexdigest()[:16]})")
    assert output.is_ours(str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.tex"]       # no temporary file left


def test_own_file_is_rewritten_an_edited_or_foreign_one_is_refused(tmp_path):
    path = tmp_path / "notes.tex"
    output.write_text(str(path), "one\n")
    output.write_text(str(path), "two\n")                                       # ours: rewritten
    assert path.read_text().endswith("\ntwo\n")
    with open(path, "a") as f:
        f.write("% my own note\n")                                             # edited by hand
    assert not output.is_ours(str(path))
    with pytest.raises(BadInput) as exc:
        output.write_text(str(path), "three\n")
    assert exc.value.param == "output" and "--force" in str(exc.value)
    assert path.read_text().endswith("% my own note\n")                       # nothing lost
    output.write_text(str(path), "three\n", force=True)
    assert path.read_text().endswith("\nthree\n")


@pytest.mark.parametrize("content", ["hand-written notes\n", "% written by tilebound\nforged\n",
                                     "% written by tilebound (sha256:0000000000000000); x\nbody\n"])
def test_foreign_text_is_not_ours(tmp_path, content):
    path = tmp_path / "f.tex"
    path.write_text(content)
    assert not output.is_ours(str(path))
    with pytest.raises(BadInput):
        output.check_path(str(path))


def test_empty_file_holds_nothing_to_lose(tmp_path):
    path = tmp_path / "empty.tex"
    path.write_text("")
    output.write_text(str(path), "x\n")
    assert path.read_text().endswith("\nx\n")


@pytest.mark.parametrize("bad,message", [
    ("", "an empty file name"),
    ("   ", "an empty file name"),
])
def test_empty_name_is_refused(bad, message):
    with pytest.raises(BadInput, match=message):
        output.check_path(bad)


def test_folder_and_missing_folder_are_refused(tmp_path):
    with pytest.raises(BadInput, match="is a folder"):
        output.check_path(str(tmp_path))
    with pytest.raises(BadInput, match="does not exist"):
        output.check_path(str(tmp_path / "no" / "such.tex"))


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "notes.tex"
    output.write_text(str(path), "old\n")
    before = path.read_bytes()

    def writer(tmp):
        with open(tmp, "w") as f:
            f.write("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(BadInput, match="No space left on device"):
        output.write_with(str(path), writer)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.tex"]


def test_symbolic_link_is_followed(tmp_path):
    target = tmp_path / "real.tex"
    output.write_text(str(target), "a\n")
    link = tmp_path / "link.tex"
    link.symlink_to(target)
    output.write_text(str(link), "b\n")
    assert link.is_symlink() and target.read_text().endswith("\nb\n")


def test_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        output.write_text(str(tmp_path / "m.tex"), "x\n")
    finally:
        os.umask(old)
    assert (tmp_path / "m.tex").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("ext", ["png", "pdf", "svg", "eps"])
def test_images_are_marked_in_their_metadata(tmp_path, ext):
    plt = pytest.importorskip("matplotlib.pyplot")
    path = str(tmp_path / f"p.{ext}")

    def draw(tmp):
        fig, ax = plt.subplots()
        ax.plot([1, 2], [1, 4])
        fig.savefig(tmp, metadata=output.image_metadata(path))
        plt.close(fig)

    output.write_with(path, draw)
    assert output.is_ours(path)
    output.write_with(path, draw)                                              # ours: rewritten


def test_image_not_written_by_tilebound_is_refused(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    path = tmp_path / "p.png"
    fig, ax = plt.subplots()
    fig.savefig(path)                                                          # matplotlib's own Software tag
    plt.close(fig)
    assert not output.is_ours(str(path))
    with pytest.raises(BadInput, match="was not written by tilebound"):
        output.check_path(str(path))


def test_a_device_is_written_in_place_not_renamed_over(tmp_path):
    """``-o /dev/null`` must not replace the device node with a regular file (as root the rename would)."""
    before = os.stat("/dev/null")
    output.write_text("/dev/null", "x\n")
    output.write_with("/dev/null", lambda p: open(p, "w").write("y"))
    after = os.stat("/dev/null")
    assert (after.st_ino, after.st_rdev, after.st_mode) == (before.st_ino, before.st_rdev, before.st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    import threading
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    output.write_text(str(fifo), "through a pipe\n")
    reader.join(5)
    assert got and got[0].endswith("through a pipe\n") and fifo.is_fifo()
