"""docs/tuning.md's commands run as written, and print the tables the page shows.

Each fenced block that is a ``tilebound tune`` command (not the synopsis, whose options sit in brackets) is run
in-process; the markdown tables its standard output holds must be the tables the page shows after the block (up
to the next block, in any order), cell for cell, except the ``own time/run`` column: that is each strategy's wall-clock
overhead, measured on the machine that ran it.  ``--plot`` draws into the test's own folder instead of the
page's ``/tmp`` path.  The page's Python block runs as written.

The 40-shape LLM run (every strategy, 20 seeds: 800 runs of TPE and of CMA-ES, about a quarter of an hour on a
2-core machine) is parsed and planned here, not run: its options are the course run's, whose tables are checked.
(``tests/integration/test_docs_examples.py`` runs the other pages' commands.)
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tilebound.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tuning.md"
#: the column of each strategy's own wall-clock time a run: the only cells that differ from machine to machine
TIMED = "own time/run"
#: commands too long to run in every CI run, with why
NOT_RUN = {"--shapes llm": "800 runs each of TPE and CMA-ES: about 15 minutes on 2 cores"}


def _blocks():
    """``(language, lines, line number of the first line, lines after the block up to the next fence)``."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    fences = [i for i, ln in enumerate(lines) if ln.startswith("```")]
    out = []
    for k in range(0, len(fences) - 1, 2):
        start, end = fences[k], fences[k + 1]
        after = lines[end + 1:fences[k + 2]] if k + 2 < len(fences) else lines[end + 1:]
        out.append((lines[start][3:].strip(), lines[start + 1:end], start + 2, after))
    return out


def _tables(lines):
    """The markdown tables in ``lines``: each a list of rows, each row a list of stripped cells (the header
    first; the ``|---|`` rule left out)."""
    tables, cur = [], []
    for ln in list(lines) + [""]:
        if ln.startswith("|"):
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                cur.append(cells)
        elif cur:
            tables.append(cur)
            cur = []
    return tables


def _untimed(table):
    """``table`` with the wall-clock column's cells blanked."""
    if TIMED not in table[0]:
        return table
    j = table[0].index(TIMED)
    return [row if i == 0 else row[:j] + ["(timed)"] + row[j + 1:] for i, row in enumerate(table)]


def _commands():
    found = []
    for lang, lines, line, after in _blocks():
        text = " ".join(ln.rstrip("\\").strip() for ln in lines)
        if lang or not text.startswith("tilebound tune ") or "[" in text:
            continue
        found.append((line, shlex.split(text)[1:], _tables(after)))
    return found


COMMANDS = _commands()


def test_the_page_has_its_commands():
    assert len(COMMANDS) == 4, [argv for _, argv, _ in COMMANDS]
    assert all(tables for _, _, tables in COMMANDS), "each command's tables follow it on the page"


@pytest.mark.slow
@pytest.mark.extra("tune")
@pytest.mark.parametrize("line, argv, shown", COMMANDS, ids=[f"tuning.md:{n}" for n, _, _ in COMMANDS])
def test_a_command_prints_the_tables_the_page_shows(line, argv, shown, tmp_path, monkeypatch, capsys):
    if "--plot" in argv:
        k = argv.index("--plot") + 1
        argv = argv[:k] + [str(tmp_path / Path(argv[k]).name)] + argv[k + 1:]
    skip = next((why for flag, why in NOT_RUN.items() if flag in " ".join(argv)), None)
    if skip:
        build_parser().parse_args(argv)            # the options are still the command line's
        pytest.skip(f"tuning.md:{line} is parsed, not run: {skip}")
    monkeypatch.chdir(tmp_path)
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, f"tuning.md:{line}: exit {rc}: {err}"
    printed = _tables(out.splitlines())
    assert len(printed) == len(shown), f"tuning.md:{line}: {len(printed)} tables printed, the page shows {len(shown)}"
    # the page may order them otherwise (the run prints each shape's table before the totals; the page puts those
    # in a <details> after them): every table shown must be printed, and no other
    missing = [page for page in map(_untimed, shown) if page not in map(_untimed, printed)]
    assert not missing, f"tuning.md:{line}: the page shows a table the run does not print:\n{missing[0]}"
    assert sorted(map(repr, map(_untimed, printed))) == sorted(map(repr, map(_untimed, shown)))


@pytest.mark.extra("tune")
def test_the_page_python_runs():
    code = [(lines, line) for lang, lines, line, _ in _blocks() if lang == "python"]
    assert code, "the page shows its Python use"
    for lines, line in code:
        exec(compile("\n".join(lines), f"tuning.md:{line}", "exec"), {"__name__": "tuning_docs"})


def test_untimed_blanks_only_the_timed_column():
    table = [["strategy", "runs", TIMED], ["tpe", "80", "161.6 ms"]]
    assert _untimed(table) == [["strategy", "runs", TIMED], ["tpe", "80", "(timed)"]]
    assert _tables(["| a | b |", "|---|---|", "| 1 | 2 |", "", "| c |", "|:-:|", "| 3 |"]) == \
        [[["a", "b"], ["1", "2"]], [["c"], ["3"]]]
