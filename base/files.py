"""Files replaced whole: the one atomic write of every layer (the command line's outputs, the tuning cache).

:func:`replace_atomically` writes the new content to a temporary file in the target's folder, flushes it
to disk (``fsync``) and renames it over the target (``os.replace``), so a reader sees the old file or the
new one, never a mix, and a crash, a full disk or Ctrl-C leaves one of the two.  What a caller refuses
(a file it did not write, a corrupt one) and how it reports a failure stay with the caller.
"""

from __future__ import annotations

import os
import secrets
from typing import Callable

__all__ = ["replace_atomically"]


def replace_atomically(path, data: bytes | str | Callable[[str], object], *,
                       before_replace: Callable[[], object] | None = None) -> bool:
    """Replace the file ``path`` whole with ``data``; ``True`` when it was replaced.

    ``data`` is bytes, a str (written as UTF-8), or a callable ``data(tmp)`` that writes the file at the path
    it is given (a plot's ``savefig``); the temporary file keeps ``path``'s extension for such a writer, which
    may read the format from it.  A writer that writes nothing leaves ``path`` as it was (``False``).
    ``before_replace()``, when given, runs after the content is on disk and just before the rename (a caller
    checks the target once more there; what it raises stops the write).

    A new file gets the mode ``0o666`` less the umask, as :func:`open` gives; a replaced one gets that of the
    temporary file, the same.  ``path`` is the file itself (a caller resolves a symbolic link first, or the
    link is replaced).  Errors propagate (``OSError``, whatever ``data`` or ``before_replace`` raises); the
    temporary file never survives a failure."""
    folder, name = os.path.split(os.fspath(path))
    ext = os.path.splitext(name)[1] if callable(data) else ""
    tmp = os.path.join(folder, f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp{ext}")
    try:
        if callable(data):
            data(tmp)
            if not os.path.exists(tmp):
                return False
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        else:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)   # the umask applies, as for open()
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
                f.flush()
                os.fsync(f.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
        return True
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
