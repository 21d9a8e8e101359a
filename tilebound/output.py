"""Files tilebound writes: whole or not at all, marked as its own, never over a file it did not write.

Every output file of the command line goes through this module::

    write_text(path, text, force=False)          # text (LaTeX notes): a marker line, then ``text``
    write_with(path, writer, force=False)        # anything else: ``writer(tmp_path)`` writes it (a plot)
    is_ours(path)                                # does ``path`` hold a file tilebound wrote, unedited?

The rules:

* **Atomic.** The content goes to a temporary file in the target's folder, is flushed to disk, and is
  renamed over the target (:func:`base.files.replace_atomically`), so a crash, a full disk or Ctrl-C leaves the
  old file or the new one, never half of one. A failure removes the temporary file and is
  :class:`~base.errors.BadInput` naming ``output``.
* **Marked.** A text file starts with one comment line (``%`` by default, LaTeX's comment)::

      % written by tilebound (sha256:0123456789abcdef); tilebound overwrites this file only while it is unedited

  The hash is the SHA-256 of everything after that line, so a file edited by hand stops being tilebound's
  own. An image carries :data:`MARKER` in its metadata (:func:`image_metadata`: the PNG ``Software`` text
  chunk, the PDF/SVG/PostScript ``Creator``); formats without metadata that tilebound reads
  (JPEG, TIFF, compressed SVG, raw) cannot be marked, so overwriting one takes ``--force``.
* **No lost file.** An existing file that is not tilebound's own (:func:`is_ours` false) is refused unless
  ``force=True`` (the commands' ``--force``). An empty file holds nothing to lose and is overwritten. A folder,
  or a path whose folder does not exist, is refused; where a folder of the path is a file (``-o notes.tex/x.png``),
  the refusal names that file as what it is (:func:`missing_folder`). A symbolic link is followed: its target is
  replaced.
  A device or pipe (``-o /dev/stdout``, ``/dev/null``) is written in place: no temporary file, no rename
  (which would replace the device node itself), no marker check.
* ``''`` (``-o ''``) is refused, not read as standard output.

A refusal names ``output`` (``-o``), or the option the path came from (``param``: ``plot`` for ``--plot``).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from typing import Callable

from base.errors import BadInput
from base.files import replace_atomically

__all__ = ["MARKER", "write_text", "write_with", "is_ours", "check_path", "check_image", "check_folder",
           "missing_folder", "blocking_file", "image_metadata", "marker_line"]

#: the words that mark a file as tilebound's own
MARKER = "written by tilebound"

_LINE = re.compile(rb"^\S{1,4} written by tilebound \(sha256:([0-9a-f]{16})\)[^\n]*\n")
_SCAN_LIMIT = 64 * 2**20          # an image larger than this is not searched for the marker (not ours)
_M = MARKER.encode()
#: (how the format starts, how its metadata holds the marker), as matplotlib writes them
_IMAGE_TAGS = (
    (b"\x89PNG", b"tEXtSoftware\x00" + _M),             # PNG text chunk
    (b"%PDF", b"/Creator (" + _M + b")"),                # PDF information dictionary
    (b"%!PS", b"%%Creator: " + _M + b"\n"),              # PostScript/EPS header comment
    (b"<?xml", b"<dc:title>" + _M + b"</dc:title>"),      # SVG's Dublin Core creator
)


def _digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def marker_line(text: str, comment: str = "%") -> str:
    """The first line :func:`write_text` puts before ``text`` (without its newline)."""
    return (f"{comment} {MARKER} (sha256:{_digest(text.encode('utf-8'))}); "
            "tilebound overwrites this file only while it is unedited")


def image_metadata(path: str) -> dict:
    """matplotlib ``savefig(metadata=...)`` that marks an image at ``path`` (format from its extension) as ours;
    empty for formats without metadata."""
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if ext == "png":
        return {"Software": MARKER}
    if ext in ("pdf", "svg", "ps", "eps"):
        return {"Creator": MARKER}
    return {}


def is_ours(path: str) -> bool:
    """True when ``path`` is a file tilebound wrote and nobody edited since: a text file whose first line is
    the marker with the hash of the rest, or an image with :data:`MARKER` in its metadata."""
    try:
        size = os.path.getsize(path)
        if not os.path.isfile(path) or size > _SCAN_LIMIT:
            return False
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    m = _LINE.match(data)
    if m:
        return m.group(1).decode() == _digest(data[m.end():])
    return any(data.startswith(magic) and tag in data for magic, tag in _IMAGE_TAGS)


def _refusal(path: str, param: str = "output") -> BadInput:
    return BadInput(param, f"{path!r} exists and was not written by tilebound (or was edited since); "
                           "give --force to overwrite it, or choose another name")


def blocking_file(folder: str) -> str | None:
    """The part of ``folder`` (itself or a folder above it) that exists and is not a folder - a file where a
    folder was meant (``/x/notes.tex`` of ``/x/notes.tex/figures``) - or ``None``."""
    here = os.path.abspath(folder)
    while not os.path.isdir(here):
        if os.path.exists(here):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return None


def missing_folder(folder: str) -> str:
    """Why ``folder`` (which is not an existing folder) cannot hold a file: ``'/x/notes.tex' exists and is not a
    folder`` where a part of it is a file (:func:`blocking_file`), else ``the folder '/x/new' does not exist``."""
    blocker = blocking_file(folder)
    if blocker is not None:
        return f"{blocker!r} exists and is not a folder"
    return f"the folder {folder!r} does not exist"


def check_folder(folder, param: str = "split", flag: str = "--split") -> str:
    """``folder`` when tilebound may write files into it (made if absent: its parent must be a folder); else
    :class:`~base.errors.BadInput` naming ``param`` (``split`` for ``latex --split``, ``output`` for ``html -o``):
    an empty name, a path that exists and is not a folder, a parent that is missing or a file, a folder that
    cannot be written."""
    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip():
        raise BadInput(param, f"an empty folder name; give {flag} DIR")
    folder = str(folder)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise BadInput(param, f"{folder!r} exists and is not a folder; give a folder (made if absent)")
    parent = os.path.dirname(os.path.abspath(folder))
    if not os.path.isdir(parent):
        raise BadInput(param, f"cannot make {folder!r}: {missing_folder(parent)}")
    where = folder if os.path.isdir(folder) else parent         # refused before any work when not writable
    if not os.access(where, os.W_OK | os.X_OK):
        raise BadInput(param, f"cannot write into {where!r}: permission denied")
    return folder


def check_path(path: str | None, force: bool = False, param: str = "output") -> str | None:
    """``path`` resolved (a link followed) when tilebound may write it, ``None`` for ``None`` (standard
    output); else :class:`~base.errors.BadInput` naming ``param`` (``output``: ``-o``; ``plot``: ``--plot``).
    Call it before any work, so a refused path costs nothing; the writers call it again just before the rename."""
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise BadInput(param, "an empty file name; give a path, or leave -o out for standard output"
                       if param == "output" else f"an empty file name; give a path, or leave --{param} out")
    if _special(path):
        return str(path)                          # a device or pipe (/dev/stdout, /dev/null): written in place
    real = os.path.realpath(path)
    if os.path.isdir(real):
        raise BadInput(param, f"{str(path)!r} is a folder; give a file name")
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise BadInput(param, f"cannot write {str(path)!r}: {missing_folder(folder)}")
    if os.path.lexists(real) and not force and os.path.getsize(real) > 0 and not is_ours(real):
        raise _refusal(str(path), param)
    return real


def check_image(path: str, force: bool = False, param: str = "output") -> str:
    """:func:`check_path`, then an image format matplotlib writes (:func:`printing.plot.check_image_path`: the plot
    extra, from the extension); refusals name ``param`` (``plot`` for ``--plot FILE``).  Returns ``path``."""
    from printing.plot import check_image_path

    check_path(path, force, param)
    try:
        check_image_path(str(path))
    except BadInput as exc:
        if exc.param != "output":
            raise                                    # the plot extra missing: named plot, as it is
        raise BadInput(param, exc.problem) from None
    return str(path)


def _special(path: str) -> bool:
    """Is ``path`` an existing file that is not a regular one (a character device, a FIFO, a socket)?
    Renaming over it would replace the device node itself (``-o /dev/null`` run as root)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISBLK(mode)


def write_with(path: str, writer: Callable[[str], object], force: bool = False, param: str = "output") -> str:
    """Call ``writer(tmp)`` to write a temporary file beside ``path`` (same extension), then rename it over
    ``path``; returns ``path``.  Refuses a path :func:`check_path` refuses (naming ``param``)."""
    return _write(path, writer, force, param)


def write_text(path: str, text: str, force: bool = False, comment: str = "%", param: str = "output") -> str:
    """Write the marker line (with ``comment``, ``%`` for LaTeX) and ``text`` to ``path``, atomically;
    returns ``path``.  Refuses a path :func:`check_path` refuses (naming ``param``)."""
    return _write(path, (marker_line(text, comment) + "\n" + text).encode("utf-8"), force, param)


def _write(path: str, content, force: bool, param: str = "output") -> str:
    """``content`` (bytes, or a writer of a path) to ``path``: through :func:`base.files.replace_atomically`,
    checking the target again just before the rename (it may have appeared meanwhile); a device or pipe
    straight through, with no temporary file, no rename and no fsync."""
    real = check_path(path, force, param)
    try:
        if not _special(real):
            replace_atomically(real, content, before_replace=lambda: check_path(path, force, param))
        elif callable(content):
            content(real)
        else:
            with open(real, "wb") as f:
                f.write(content)
    except OSError as exc:
        raise BadInput(param, f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    return str(path)
