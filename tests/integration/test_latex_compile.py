"""The LaTeX the toolkit writes compiles with a real ``pdflatex`` and no error.

Skipped where ``pdflatex`` is absent - except under CI (``CI=true``), where ``.ci/run`` installs
texlive-latex-base and texlive-latex-recommended, so a missing engine is a failure there.
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
from symbolic.printing.document import DOCUMENT_HEAD as PREAMBLE, to_document
from tilebound.cli import main

from toy_models import halo_model

N = param("N")

PDFLATEX = shutil.which("pdflatex")


@pytest.fixture
def pdflatex():
    if PDFLATEX is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("pdflatex is missing under CI: .ci/run must install texlive-latex-base and "
                        "texlive-latex-recommended")
        pytest.skip("pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    return PDFLATEX


def compile_tex(engine: str, tex: str, folder: Path) -> str:
    """Compile ``tex`` in ``folder``; fail with the log's error lines on any LaTeX error."""
    src = folder / "doc.tex"
    src.write_text(tex, encoding="ascii")          # the printers promise pure ASCII
    proc = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", src.name],
                          cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    log = (folder / "doc.log").read_text(errors="replace") if (folder / "doc.log").exists() else proc.stdout
    errors = [ln for ln in log.splitlines() if ln.startswith("!")]
    assert proc.returncode == 0 and not errors, "LaTeX errors:\n" + "\n".join(errors or log.splitlines()[-30:])
    assert (folder / "doc.pdf").stat().st_size > 0
    return log


def test_standalone_document_of_every_model_compiles(pdflatex, tmp_path, capsys):
    """``tilebound latex --standalone`` (all models, with their default sweep tables)."""
    out = tmp_path / "notes.tex"
    assert main(["latex", "--standalone", "--no-figures", "-o", str(out)]) == 0
    compile_tex(pdflatex, out.read_text(), tmp_path)


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
    from symbolic.printing.glyphs import GLYPHS
    from symbolic.printing.latex import escape, math_text

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
