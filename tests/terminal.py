"""A pseudo-terminal for the progress-bar tests: a slave end of a stated size to give a child as its stderr,
and reading the master end until the child has closed it."""

from __future__ import annotations

import os


def pty_with_size(rows: int = 24, columns: int = 120) -> tuple[int, int]:
    """``(master, slave)`` of a new pseudo-terminal whose window is ``rows x columns``."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    return master, slave


def drain(master: int) -> bytes:
    """Everything written to the terminal, read until the slave side is closed."""
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:                                   # the slave side is closed: all read
            return got
        if not chunk:
            return got
        got += chunk
