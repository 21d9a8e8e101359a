"""Command-line care shared by the project's programs (``tilebound``, ``python -m verify``).

A program is a function ``main(argv) -> int`` that writes its output to ``sys.stdout`` and raises
:class:`~base.errors.BadInput` for bad input.  :func:`run` calls it and turns what can go wrong at the
edge of a process into an exit status, with at most one line on stderr and never a traceback:

======================================  ======  =============================================
what happened                            status  stderr
======================================  ======  =============================================
``main`` returned ``s``                  ``s``   (whatever ``main`` wrote)
:class:`~base.errors.BadInput`           2       ``prog: param: problem``
argparse exited (``--help``, an error)   its     (argparse's own; see :class:`ArgumentParser`)
the reader closed the pipe (``| head``)  141     nothing (128 + SIGPIPE, as a shell reports it)
the output cannot be written             1       ``prog: output: cannot write: <reason>``
Ctrl-C (SIGINT)                          130     ``prog: interrupted`` (128 + SIGINT)
======================================  ======  =============================================

Ctrl-C is kept as a flag as well as raised: Python drops an exception raised inside a ``__del__`` method or a
garbage collector's callback (hypothesis installs one) with an "Exception ignored in ..." traceback, so a
``KeyboardInterrupt`` that lands there would let the run go on to the end and exit 0; that traceback is left
out while the flag is set.  :func:`run` installs a SIGINT handler that sets the flag and raises
(only where SIGINT has Python's default handler: a background job that ignores it keeps ignoring it); every
:class:`Progress` step raises ``KeyboardInterrupt`` again once the flag is set (:func:`check_interrupt`), and a
``main`` that returns after a Ctrl-C still exits 130.

A program's first line calls :func:`guard_start`, so that a Ctrl-C while it still imports the rest (before
:func:`run`) is the same one line and 130 rather than a traceback from inside an import.

Any other exception is a bug and propagates with its traceback.  The output is checked to the end:
:func:`run` flushes ``sys.stdout`` before it returns, so ``prog --help > /dev/full`` says the write
failed instead of exiting 0.  While ``main`` runs, ``sys.stdout`` is an :class:`Output` around the real
stream, which is how a failed write of the output is told from any other ``OSError``.

:func:`progress` is the progress display for anything that can pass about two seconds: a `tqdm
<https://tqdm.github.io/>`_ bar on stderr when stderr is a terminal, shown only once two seconds have
passed, and nothing at all otherwise (logs and tests stay clean).

Typical use::

    def _main(argv):
        args = ArgumentParser(prog="mytool").parse_args(argv)
        ...
        return 0

    def main(argv=None) -> int:
        return console.run(_main, "mytool", argv)
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Callable, Optional, Sequence

from .errors import BadInput

__all__ = ["run", "guard_start", "ArgumentParser", "Output", "OutputError", "silence_stdout", "say", "one_line", "progress",
           "Progress", "check_interrupt", "EXIT_BAD_INPUT", "EXIT_OUTPUT", "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE",
           "SHOW_AFTER"]

EXIT_BAD_INPUT = 2
EXIT_OUTPUT = 1
EXIT_INTERRUPTED = 130     # 128 + SIGINT
EXIT_BROKEN_PIPE = 141     # 128 + SIGPIPE
#: seconds a task runs before its progress is shown (a short task shows none)
SHOW_AFTER = 2.0


class OutputError(Exception):
    """Writing the output stream failed (not bad input: a full disk, a closed descriptor); ``args[0]``
    is the ``OSError``."""


class Output:
    """A text stream whose failing writes (other than a closed pipe) raise :class:`OutputError`; every
    other attribute is the wrapped stream's (``encoding``, ``isatty``, ``fileno``, ``reconfigure`` ...)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc) from None

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc) from None

    def __getattr__(self, name):
        return getattr(self.stream, name)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: a usage error raises ``BadInput(where, message)`` instead of printing
    the usage block, so :func:`run` prints one line, exit 2.  ``where`` is ``error_name`` when given, else
    a subcommand's name (the last word of a ``prog`` like ``tilebound show``), else ``usage``."""

    def __init__(self, *args, error_name: Optional[str] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.error_name = error_name

    def error(self, message):
        where = self.error_name or (self.prog.split()[-1] if " " in self.prog else "usage")
        raise BadInput(where, message)


def one_line(text: str) -> str:
    """``text`` with every character that is not printable (a newline, ``\\r``, ``\\x85``, ``\\u2028``, a
    control character from the user's input) written as its Python escape, so it stays on one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def say(prog: str, message: str) -> None:
    """One line ``prog: message`` on stderr (see :func:`one_line`); a stderr that cannot be written is let be."""
    try:
        sys.stderr.write(f"{prog}: {one_line(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def silence_stdout() -> None:
    """Point the stdout descriptor at /dev/null so that the interpreter's final flush of what is still
    buffered stays quiet (after a closed pipe or a failed write)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def run(main: Callable[[Optional[Sequence[str]]], int], prog: str, argv: Optional[Sequence[str]] = None) -> int:
    """``main(argv)`` with the command-line care of the module docstring; returns the exit status.

    ``prog`` starts every line this function writes (``"verify"``, ``"tilebound"``).  ``main`` returns
    its status (``None`` reads as 0) or exits through ``SystemExit`` (argparse's ``--help``)."""
    real = sys.stdout
    out = Output(real)
    sys.stdout = out
    previous = _catch_sigint()
    hook = sys.unraisablehook
    if previous is not None:
        sys.unraisablehook = _quiet_interrupts(hook)
    try:
        try:
            status = main(argv)
        except SystemExit as exc:
            status = _status_of(exc, prog)
        check_interrupt()                       # a Ctrl-C that an ignored exception swallowed
        out.flush()
        return 0 if status is None else status
    except BadInput as exc:
        say(prog, str(exc))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        say(prog, "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except OutputError as exc:
        silence_stdout()
        err = exc.args[0]
        say(prog, f"output: cannot write: {getattr(err, 'strerror', None) or err}")
        return EXIT_OUTPUT
    finally:
        sys.stdout = real
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
            sys.unraisablehook = hook
        _interrupted.clear()


#: set by :func:`run`'s SIGINT handler; cleared when :func:`run` returns
_interrupted = threading.Event()


def _on_sigint(signum, frame):
    _interrupted.set()
    raise KeyboardInterrupt


def _catch_sigint():
    """Install :func:`_on_sigint` where SIGINT has Python's default handler (or :func:`guard_start`'s) and this
    is the main thread (only it may set handlers); return the handler it replaced, or ``None`` where it left
    SIGINT alone."""
    if threading.current_thread() is not threading.main_thread():
        return None
    current = signal.getsignal(signal.SIGINT)
    if current is not signal.default_int_handler and not isinstance(current, _StartGuard):
        return None
    return signal.signal(signal.SIGINT, _on_sigint)


class _StartGuard:
    """The SIGINT handler of a program's start-up (:func:`guard_start`): one line, then exit 130."""

    def __init__(self, prog: str):
        self.prog = prog

    def __call__(self, signum, frame):
        say(self.prog, "interrupted")
        raise SystemExit(EXIT_INTERRUPTED)      # leaves quietly from inside any import, with no traceback


def guard_start(prog: str) -> None:
    """The first line of a program (``python -m verify``, ``tilebound``): a Ctrl-C while it imports the rest
    exits 130 with ``prog: interrupted``, as one during :func:`run` does, instead of Python's traceback from
    inside an import.  Only where SIGINT has Python's default handler, in the main thread (a background job
    that ignores SIGINT keeps ignoring it).  What Python runs before the program's first line (the interpreter's
    own start and ``site``, some 30-50 ms) is before any of the program's code and is left to Python."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _StartGuard(prog))


def _quiet_interrupts(hook):
    """``sys.unraisablehook`` that leaves out the Ctrl-C Python could not raise (in a ``__del__``, in a
    garbage-collector callback such as hypothesis's): :func:`run` says ``interrupted`` itself, in one line."""
    def quiet(unraisable):
        if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _interrupted.is_set()):
            hook(unraisable)
    return quiet


def check_interrupt() -> None:
    """Raise ``KeyboardInterrupt`` if Ctrl-C came during :func:`run` (again, if the first was swallowed)."""
    if _interrupted.is_set():
        raise KeyboardInterrupt


def _status_of(exc: SystemExit, prog: str) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    say(prog, str(code))          # SystemExit("message"), as Python itself treats it: one line, 1
    return 1


def show_after() -> float:
    """Seconds before a bar is shown: :data:`SHOW_AFTER`, or ``TILEBOUND_PROGRESS_AFTER`` from the environment
    (a number ``>= 0``; ``0`` shows a bar at once, as the terminal test does whatever the machine's speed)."""
    text = os.environ.get("TILEBOUND_PROGRESS_AFTER")
    if text is None:
        return SHOW_AFTER
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise BadInput("TILEBOUND_PROGRESS_AFTER", f"seconds >= 0, got {text!r}")
    return value


class Progress:
    """The progress of ``total`` steps (checks, points): :meth:`advance` after each, :meth:`note` for the
    figures beside the bar (``points=9,974``); a context manager that clears the bar on exit.  Build it
    with :func:`progress`; when stderr is not a terminal it shows nothing and costs one call per step."""

    def __init__(self, bar=None):
        self._bar = bar

    def advance(self, n: int = 1, note: Optional[str] = None) -> None:
        """``n`` steps more done; ``note`` (when given) replaces the figures beside the bar.  The last step is
        drawn however soon it comes, once the bar is shown (a run shorter than the redraw interval still shows
        its figures; before :data:`SHOW_AFTER` nothing is).  Each step checks for Ctrl-C (:func:`check_interrupt`)."""
        check_interrupt()
        if self._bar is not None:
            if note is not None:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(n)
            bar = self._bar
            if bar.total is not None and bar.n >= bar.total and bar._time() >= bar.start_t + bar.delay:
                bar.refresh()

    def note(self, text: str) -> None:
        """The figures beside the bar; redrawn at most a few times a second."""
        check_interrupt()
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(0)           # redraws when its interval has passed

    def tick(self) -> None:
        """Redraw the clock (elapsed, estimate) while nothing else moves, e.g. while waiting on workers."""
        check_interrupt()
        if self._bar is not None:
            self._bar.update(0)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def progress(total: int, what: str, unit: str = "step", stream=None) -> Progress:
    """A :class:`Progress` of ``total`` ``unit``\\ s on ``stream`` (default stderr): a tqdm bar (done/total,
    elapsed, an estimate of what is left) when the stream is a terminal, shown after :data:`SHOW_AFTER`
    seconds; nothing otherwise."""
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, OSError, ValueError):
        tty = False
    if not tty:
        return Progress()
    from tqdm import tqdm                  # only where a bar is drawn: a non-terminal run never imports it

    class _Bar(tqdm):
        monitor_interval = 0               # no monitor thread: a process pool may fork while a bar is open

    return Progress(_Bar(total=total, desc=what, unit=unit, file=stream, delay=show_after(), leave=False,
                         dynamic_ncols=True, mininterval=0.25, miniters=0))   # miniters=0: update(0) redraws
