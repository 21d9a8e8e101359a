"""The LaTeX the toolkit writes compiles with a real ``pdflatex``: no error, no overfull box; a linter finds
nothing in it.

Skipped where ``pdflatex`` (or the linters) are absent - except under CI (``CI=true``), where ``.ci/run``
installs texlive-latex-base, texlive-latex-recommended, texlive-latex-extra, texlive-science, texlive-pictures,
chktex and lacheck, so a missing tool is a failure there.

The linter level: ``chktex -n1 -n13 -n35 -n36`` reports nothing, and ``lacheck`` reports nothing.  The four
warnings left out are false positives on generated LaTeX: 1 "command terminated with space" is
algpseudocode's own form (``\\State Load ...``); 13 "intersentence spacing" fires on an acronym before
``;`` or ``)`` (the notes put ``\\@`` before a full stop after one: ``HBM\\@.``); 35 "use \\exp" fires on the word
in units (``exp/s``); 36 "space before parenthesis" fires inside ``\\path`` code names, which chktex does not
parse as verbatim.  The figures are left out of the lint (notes built with ``--no-figures``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import sympy as sp

from symbolic.model import Model
from symbolic.params import param
from printing.document import DOCUMENT_HEAD as PREAMBLE
from printing.document import to_document
from tilebound.cli import main

from toy_models import halo_model

N = param("N")

PDFLATEX = shutil.which("pdflatex")
#: the apt packages the notes need (.ci/run installs them)
APT = "texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-science texlive-pictures"
# the fast run's families are conftest.FAST_NOTES (the fast_notes fixture); the slow one compiles every model
# with every figure and listing


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{name} is missing under CI: .ci/run must install {package}")
        pytest.skip(f"{name} not installed (apt-get install {package})")
    return path


@pytest.fixture
def pdflatex():
    return _tool("pdflatex", APT)


def compile_tex(engine: str, tex: str, folder: Path, name: str = "doc") -> str:
    """Compile ``tex`` in ``folder``; fail with the log's error lines on any LaTeX error."""
    src = folder / f"{name}.tex"
    src.write_text(tex, encoding="ascii")          # the printers promise pure ASCII
    proc = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", src.name],
                          cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    logf = folder / f"{name}.log"
    log = logf.read_text(errors="replace") if logf.exists() else proc.stdout
    errors = [ln for ln in log.splitlines() if ln.startswith("!")]
    assert proc.returncode == 0 and not errors, "LaTeX errors:\n" + "\n".join(errors or log.splitlines()[-30:])
    assert (folder / f"{name}.pdf").stat().st_size > 0
    return log


def overfull(log: str) -> list[str]:
    """The overfull-box lines of a pdflatex log (with the next line, which says where)."""
    lines = log.splitlines()
    return [f"{ln} {lines[i + 1] if i + 1 < len(lines) else ''}" for i, ln in enumerate(lines)
            if ln.startswith("Overfull")]


def pages(log: str) -> int:
    import re
    m = re.search(r"Output written on \S+ \((\d+) pages?", log)
    return int(m.group(1)) if m else 0


def test_standalone_notes_compile_without_overfull_boxes(pdflatex, tmp_path, fast_notes):
    """``tilebound latex --standalone`` (formulas, default sweep tables, listings) of four families."""
    log = compile_tex(pdflatex, fast_notes, tmp_path)      # tests/conftest.py: latex FAST --standalone --no-figures
    assert overfull(log) == []
    assert pages(log) > 10


@pytest.mark.slow
def test_standalone_notes_of_every_model_with_every_figure_and_listing(pdflatex, tmp_path, capsys):
    """What CI keeps at 0 errors and 0 overfull boxes: the complete notes, figures (pgfplots) and listings in."""
    out = tmp_path / "notes.tex"
    assert main(["latex", "--standalone", "-o", str(out)]) == 0
    tex = out.read_text()
    assert tex.count(r"\begin{tikzpicture}") >= 15 and tex.count(r"\begin{algorithmic}") >= 7
    log = compile_tex(pdflatex, tex, tmp_path)
    assert overfull(log) == []
    print(f"notes: {pages(log)} pages, 0 errors, 0 overfull boxes")


def test_linters_report_nothing(tmp_path, fast_notes):
    """chktex at the stated level (module docstring) and lacheck find nothing in the notes."""
    chktex = _tool("chktex", "chktex")
    lacheck = _tool("lacheck", "lacheck")
    out = tmp_path / "notes.tex"
    out.write_text(fast_notes)                           # tests/conftest.py: latex FAST --standalone --no-figures
    proc = subprocess.run([chktex, "-q", "-n1", "-n13", "-n35", "-n36", out.name], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.stdout.strip() == "" and proc.returncode == 0, proc.stdout[-3000:]
    proc = subprocess.run([lacheck, out.name], cwd=tmp_path, capture_output=True, text=True)
    assert proc.stdout.strip() == "", proc.stdout[-3000:]


def test_the_linter_finds_what_the_notes_used_to_print(tmp_path):
    """The same chktex call fails on text set the old way (a hyphen for a dash, a parenthesis sub-scripted)."""
    chktex = _tool("chktex", "chktex")
    (tmp_path / "old.tex").write_text("pages 383-387 and $(0)_N$\n")
    proc = subprocess.run([chktex, "-q", "-n1", "-n13", "-n35", "-n36", "old.tex"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert "Warning 8" in proc.stdout and "Warning 3" in proc.stdout


def test_awkward_text_compiles(pdflatex, tmp_path):
    """Underscores, per cent, dollars, braces, carets, µ, ×, Θ, ≲, superscript runs and an unknown character
    in names and notes; a term too wide for the page (set as wrapped text)."""
    m = Model(name="toy.weird_name%", summary="cost in $ & µs, N×N {braces} ^caret ~tilde #hash ≲ N⁻¹ 漢",
              quantities={"t_compute": N / 7, "max_bytes": 3 * N + sp.ceiling(N / 3),
                          "too_wide": sp.Mul(*[N + i for i in range(1, 51)])}, params=(N,),
              lower_bounds={"a very long lower bound name: Omega(N^2) with 100% of {it}": N},
              source="Some paper, §2 (≈ 3×)", notes=("NOTE: 50% of it_is here",))
    compile_tex(pdflatex, to_document([m, halo_model()], title="t_i_t_l_e & 100%"), tmp_path)


def test_every_glyph_compiles_in_text_and_math(pdflatex, tmp_path):
    """Each character of the one glyph table, escaped as text and as a math label, compiles."""
    from printing.glyphs import GLYPHS
    from printing.latex import escape, math_text

    chars = "".join(sorted(GLYPHS))
    body = f"{escape(chars)}\n\n$${math_text(chars)}$$\n"
    compile_tex(pdflatex, PREAMBLE + "\\begin{document}\n" + body + "\\end{document}\n", tmp_path)


def test_cli_fragments_compile_in_a_document(pdflatex, tmp_path, capsys, toys):
    """``latex MODEL --vary``, ``show --format latex`` and ``table --format latex`` pasted into a document."""
    parts = []
    for argv in (["latex", "toy.halo", "--vary", "N=64,100"],
                 ["show", "toy.halo", "--at", "N=100", "--format", "latex"],
                 ["table", "toy.halo", "--vary", "N=32..256", "--ratio", "toy.copy", "--per", "theta",
                  "--dtype", "fp16", "--format", "latex"]):
        assert main(argv) == 0
        parts.append(capsys.readouterr().out)
    tex = PREAMBLE + "\\begin{document}\n" + "\n".join(parts) + "\n\\end{document}\n"
    compile_tex(pdflatex, tex, tmp_path)


def test_the_compile_check_catches_errors(pdflatex, tmp_path):
    with pytest.raises(AssertionError, match="Undefined control sequence"):
        compile_tex(pdflatex, PREAMBLE + "\\begin{document}\n\\nosuchmacro\n\\end{document}\n", tmp_path)
