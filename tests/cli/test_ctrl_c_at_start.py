"""Ctrl-C while a program is still importing: ``python -m verify`` and ``tilebound`` say ``prog: interrupted``
in one line and exit 130 (:func:`base.console.guard_start`), as a Ctrl-C during the run does.

The signal is sent from inside the import system, at the import of a module the program loads after its guard,
so the test does not depend on timing: without the guard it is Python's ``KeyboardInterrupt`` traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: runs ``target`` as ``python -m`` does, sending SIGINT to itself when ``module`` is first imported
_DRIVER = """
import importlib.abc, os, runpy, signal, sys
module, target, argv = sys.argv[1], sys.argv[2], sys.argv[3:]

class Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == module:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = [target, *argv]
if target == "tilebound":
    from tilebound.start import main
    sys.exit(main())
runpy.run_module(target, run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("target, module, args", [
    ("verify", "base.pool", ["--help"]),            # verify.__main__'s imports, before console.run: the guard
    ("verify", "sympy", ["--list"]),                # the checks' registry, under console.run: its own handler
    ("tilebound", "tilebound.commands", ["--help"]),
    ("tilebound", "sympy", ["list"]),
])
def test_a_ctrl_c_while_importing_is_one_line_and_130(target, module, args):
    p = subprocess.run([sys.executable, "-c", _DRIVER, module, target, *args], capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
    assert p.returncode == 130, p.stderr
    assert p.stderr == f"{target}: interrupted\n"


def test_importing_verify_loads_nothing_heavy():
    """``python -m verify`` imports the package before its ``__main__``: the package must leave the checks, the
    runner and their imports to first use, or a Ctrl-C there is outside the guard."""
    code = ("import sys, verify; heavy = [m for m in ('verify.core', 'verify.runner', 'concurrent.futures', "
            "'sympy', 'numpy') if m in sys.modules]; print(heavy)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr


def test_the_package_still_exports_its_names():
    import verify
    from verify import assert_agree, estimated_cost, registry, run_checks
    from verify.core import assert_agree as core_agree
    from verify.runner import run_checks as runner_checks
    assert assert_agree is core_agree and run_checks is runner_checks and callable(estimated_cost)
    assert verify.registry is registry and "run_checks" in dir(verify)
    with pytest.raises(AttributeError):
        verify.no_such_name
