"""The docs run: every ``tilebound`` command the README and ``docs/cli.md`` show is run, and where the docs
show its output, the output must be that (a line ``...`` stands for any number of lines); the README's
Python snippets run as written.

Which lines are commands: in a ``sh``/``bash``/``console`` block, every line (``\\`` continuations joined,
``# comments`` dropped) whose command is ``tilebound``, ``.venv/bin/tilebound`` or ``python -m tilebound`` -
also after ``&&`` (``pip install ... && tilebound plot ...``); in an untagged block, only lines after a
``$`` prompt (the synopsis tables are not commands).  The lines after a ``$`` command, up to the next ``$``
or the block's end, are its output: stderr then stdout, as a terminal shows them for these commands
(notes and errors come first).  Everything else (``pip``, ``pdflatex``, ``python -m verify``, which has
its own tests) is not run.  Commands run in-process, in a temporary folder, so ``-o notes.tex`` lands there.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tilebound.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/cli.md", "docs/decoding.md", "docs/gemm-variants.md", "docs/mla-decoding.md", "docs/llm.md",
        "docs/attention-variants.md", "docs/teaching.md")
SHELL = {"sh", "bash", "console", "shell", "zsh"}
_PREFIXES = (("tilebound",), (".venv/bin/tilebound",), ("python", "-m", "tilebound"),
             (".venv/bin/python", "-m", "tilebound"), ("python3", "-m", "tilebound"))


def _blocks(text: str):
    """``(language, [lines], first line number)`` of every fenced code block."""
    out, lang, lines, start = [], None, [], 0
    for no, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*```\s*([\w+-]*)\s*$", line)
        if m and lang is None:
            lang, lines, start = m.group(1).lower(), [], no + 1
        elif m:
            out.append((lang, lines, start))
            lang = None
        elif lang is not None:
            lines.append(line)
    return out


def _joined(lines):
    """Lines with their ``\\`` continuations joined: ``(text, index of its first line)``."""
    out, buf, first = [], "", None
    for i, ln in enumerate(lines):
        if first is None:
            first = i
        if ln.rstrip().endswith("\\"):
            buf += ln.rstrip()[:-1] + " "
            continue
        out.append((buf + ln, first))
        buf, first = "", None
    if buf:
        out.append((buf, first))
    return out


def _tilebound_argvs(command: str):
    """The tilebound argument lists in one shell line (split at ``&&`` and ``;``), comments dropped."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return []
    argvs, cur = [], []
    for w in words + ["&&"]:
        if w in ("&&", ";", "||"):
            for pre in _PREFIXES:
                if tuple(cur[:len(pre)]) == pre:
                    argvs.append(cur[len(pre):])
            cur = []
        else:
            cur.append(w)
    return argvs


def examples():
    """``(doc, line, argv, expected output lines or None)`` of every command the docs show."""
    found = []
    for doc in DOCS:
        path = ROOT / doc
        if not path.exists():
            continue
        for lang, lines, start in _blocks(path.read_text(encoding="utf-8")):
            if lang in SHELL:
                for text, i in _joined(lines):
                    for argv in _tilebound_argvs(text):
                        found.append((doc, start + i, argv, None))
            elif lang == "" and doc not in ("README.md", "docs/cli.md") and lines and \
                    _tilebound_argvs(_joined(lines)[0][0]) and not lines[0].startswith("$ "):
                # a worked page's block: the command alone, its markdown table (if any) after the block
                text = path.read_text(encoding="utf-8").splitlines()
                after = start + len(lines)              # the closing fence's index (0-based)
                table = []
                for ln in text[after + 1:]:
                    if not table and not ln.strip():
                        continue
                    if not ln.startswith("|"):
                        break
                    table.append(ln)
                for text_, i in _joined(lines):
                    argvs = _tilebound_argvs(text_)
                    for n, argv in enumerate(argvs):
                        shown = ["..."] + table + ["..."] if (n == len(argvs) - 1 and table and "markdown" in argv) else None
                        found.append((doc, start + i, argv, shown))
            elif lang == "":
                joined = _joined(lines)
                for k, (text, i) in enumerate(joined):
                    if not text.startswith("$ "):
                        continue
                    output = []
                    for nxt, _ in joined[k + 1:]:
                        if nxt.startswith("$ "):
                            break
                        output.append(nxt)
                    argvs = _tilebound_argvs(text[2:])
                    for n, argv in enumerate(argvs):
                        found.append((doc, start + i, argv, output if n == len(argvs) - 1 else None))
    return found


def _matches(expected, actual) -> str | None:
    """``None`` when ``actual`` is ``expected`` with each ``...`` line standing for any lines, else why not."""
    exp = [ln.rstrip() for ln in expected]
    while exp and not exp[-1]:
        exp.pop()
    act = [ln.rstrip() for ln in actual]
    while act and not act[-1]:
        act.pop()
    segments, seg = [], []
    for ln in exp:
        if ln.strip() == "...":
            segments.append(seg)
            seg = []
        else:
            seg.append(ln)
    segments.append(seg)
    pos = 0
    for k, seg in enumerate(segments):
        if not seg:
            continue
        anchored_start, anchored_end = k == 0, k == len(segments) - 1
        if anchored_start:
            where = 0 if act[:len(seg)] == seg else None
        else:
            where = next((p for p in range(pos, len(act) - len(seg) + 1) if act[p:p + len(seg)] == seg), None)
        if where is None:
            near = next((ln for ln in act if seg[0].split()[:1] and ln.split()[:1] == seg[0].split()[:1]), None)
            return f"the docs show\n  {seg[0]!r}\nbut the output has\n  {near!r}" if near else \
                f"the docs show {seg[0]!r}, which the output does not have"
        if anchored_end and where + len(seg) != len(act):
            return f"the output goes on after {seg[-1]!r}: {act[where + len(seg)]!r}"
        pos = where + len(seg)
    return None


EXAMPLES = examples()


def test_the_docs_have_examples():
    docs = {doc for doc, *_ in EXAMPLES}
    assert docs == {d for d in DOCS if (ROOT / d).exists()}, docs
    assert any(out for *_, out in EXAMPLES), "no example shows its output"


@pytest.mark.parametrize("doc,line,argv,expected", EXAMPLES,
                         ids=[f"{d}:{n} {' '.join(a)[:60]}" for d, n, a, _ in EXAMPLES])
def test_doc_example(doc, line, argv, expected, tmp_path, monkeypatch, capsys):
    if argv[:1] == ["plot"]:
        pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()          # a page's figure command writes to a scratch docs/, never the tracked one
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    shown = err.splitlines() + out.splitlines()
    if expected is None:
        assert rc == 0, f"{doc}:{line}: tilebound {' '.join(argv)} exits {rc}: {err}"
        return
    expects_error = any(ln.startswith("tilebound: ") for ln in expected)
    assert rc == (2 if expects_error else 0), f"{doc}:{line}: exit {rc}: {err}"
    problem = _matches(expected, shown)
    assert problem is None, f"{doc}:{line}: tilebound {' '.join(argv)}: {problem}"


def _python_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [("\n".join(lines), start) for lang, lines, start in _blocks(text) if lang in ("python", "py")]


@pytest.mark.parametrize("code,line", _python_blocks(), ids=[f"README.md:{n}" for _, n in _python_blocks()])
def test_readme_python_snippet_runs(code, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scope: dict = {"__name__": "readme_snippet"}
    exec(compile(code, f"README.md:{line}", "exec"), scope)
    for name, fn in list(scope.items()):          # a snippet that defines tests: run them
        if name.startswith("test_") and callable(fn):
            fn()


def test_readme_snippet_defines_q_k_v():
    """The snippet that calls flash_forward(Q, K, V, ...) defines Q, K and V first (issue 9)."""
    for code, _ in _python_blocks():
        if "flash_forward(Q, K, V" in code:
            head = code[:code.index("flash_forward(Q, K, V")]
            assert re.search(r"^\s*Q\s*,\s*K\s*,\s*V\s*=", head, re.M), code


# ------------------------------------------------------------------------------ the reader itself
def test_reader_on_a_made_up_doc():
    doc = ("```sh\n.venv/bin/tilebound list   # every model\npip install x && tilebound show a.b \\\n  --at N=1\n```\n"
           "```\ntilebound synopsis MODEL   not a command\n$ tilebound show x\nline 1\n...\nlast\n$ pip install y\n```\n")
    blocks = _blocks(doc)
    assert [b[0] for b in blocks] == ["sh", ""]
    assert [_tilebound_argvs(t) for t, _ in _joined(blocks[0][1])] == [[["list"]], [["show", "a.b", "--at", "N=1"]]]
    assert _matches(["line 1", "...", "last"], ["line 1", "x", "y", "last"]) is None
    assert _matches(["line 1", "...", "last"], ["line 1", "last", "more"]) is not None
    assert _matches(["a", "b"], ["a", "c"]) is not None
    assert _matches(["...", "b", "..."], ["a", "b", "c"]) is None


# --------------------------------------------------------------- verify tables the docs show (issue 18)
def _verify_tables(doc: str):
    """``(line, patterns, {model: (points, agreed, failed, largest)})`` for every ``python -m verify`` command
    a doc shows in a fenced block followed by its GitHub table (the seconds column differs run to run)."""
    text = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    found = []
    for k, ln in enumerate(text):
        m = re.match(r"^(?:\.venv/bin/)?python3? -m verify((?: --model \S+)+)\s*$", ln.strip())
        if not m:
            continue
        rows, j = {}, k + 1
        while j < len(text) and not text[j].startswith("| model"):
            j += 1
        for row in text[j + 2:]:
            if not row.startswith("|"):
                break
            cells = [c.strip() for c in row.strip("|").split("|")]
            rows[cells[0]] = tuple(cells[1:5])
        found.append((k + 1, [w.strip("'\"") for w in m.group(1).split()[1::2]], rows))
    return found


@pytest.mark.parametrize("doc", ["docs/decoding.md"])
def test_the_verify_tables_the_docs_show_are_what_verify_runs(doc):
    from verify.core import run_check
    from verify.registry import select

    tables = _verify_tables(doc)
    assert tables, f"{doc} shows no python -m verify table"
    for line, patterns, rows in tables:
        run = {c.name: run_check(c) for c in select(patterns)}
        assert list(rows) == list(run), f"{doc}:{line}: the table lists {list(rows)}, verify runs {list(run)}"
        for name, r in run.items():
            assert rows[name] == (str(r.points), str(r.agreed), str(r.failed), f"{r.largest:,}"), (doc, line, name)
