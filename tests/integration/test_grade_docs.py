"""docs/teaching.md's grader examples run as written: every ``$ tilebound grade ...`` line of a ``text`` block is
run from the repository root, and its output must be the lines shown after it; a following ``$ echo $?`` shows
its exit status, which must be that (``tests/integration/test_docs_examples.py`` runs the other docs' commands,
which exit 0 or 2; a grade that disagrees exits 1).

Only the number of points hypothesis evaluated (``searched 101 points``) may differ, since it depends on
hypothesis' version; the point, the values and the leading terms may not.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tilebound.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "teaching.md"
_COUNT = re.compile(r"searched \d+ points?")


def _examples():
    """``(line, argv, shown output lines, shown exit status or None)`` of every grade command in a text block."""
    out, block, start = [], None, 0
    for no, line in enumerate(DOC.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            if block is None and line.strip() == "```text":
                block, start = [], no
            elif block is not None:
                out += _commands(block, start)
                block = None
        elif block is not None:
            block.append(line)
    return out


def _commands(lines, start):
    found, k = [], 0
    while k < len(lines):
        if not lines[k].startswith("$ tilebound grade "):
            k += 1
            continue
        argv = shlex.split(lines[k][2:])[1:]
        j = k + 1
        while j < len(lines) and not lines[j].startswith("$ "):
            j += 1
        status = int(lines[j + 1]) if j + 1 < len(lines) and lines[j] == "$ echo $?" else None
        found.append((start + k + 1, argv, lines[k + 1:j], status))
        k = j
    return found


EXAMPLES = _examples()


def test_the_page_has_grader_examples():
    assert len(EXAMPLES) >= 3 and {s for *_, s in EXAMPLES} >= {0, 1}


@pytest.mark.parametrize("line,argv,shown,status", EXAMPLES, ids=[f"teaching.md:{n}" for n, *_ in EXAMPLES])
def test_grader_example(line, argv, shown, status, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)                       # the examples name examples/grading/hw3.py from the root
    rc = main(argv)
    out, err = capsys.readouterr()
    assert err == "" and "Traceback" not in out
    if status is not None:
        assert rc == status, f"teaching.md:{line}: exit {rc}, the page shows {status}"
    got = [_COUNT.sub("searched N points", ln.rstrip()) for ln in out.splitlines()]
    assert got == [_COUNT.sub("searched N points", ln.rstrip()) for ln in shown], f"teaching.md:{line}"
