"""Fragments ``\\input`` into a document of one's own: three of them in a minimal document that loads only
``tilebound latex --preamble``, compiled by pdflatex with no error and no overfull box (the fragments' target
page: A4 portrait, 2.5 cm margins).  Skipped without pdflatex, except under CI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tilebound.cli import main

APT = "texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-science texlive-pictures"


@pytest.fixture
def pdflatex():
    path = shutil.which("pdflatex")
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"pdflatex is missing under CI: .ci/run must install {APT}")
        pytest.skip(f"pdflatex not installed (apt-get install {APT})")
    return path


def _document(preamble: str, inputs: list[str]) -> str:
    body = "\n".join(rf"\input{{{p}}}" for p in inputs)
    return ("\\documentclass{article}\n\\usepackage[a4paper,margin=2.5cm]{geometry}\n" + preamble
            + "\\begin{document}\n\\section{My own notes}\nSome text of mine.\n\n" + body + "\n\\end{document}\n")


def _compile(engine: str, folder: Path) -> str:
    proc = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "mine.tex"],
                          cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    log = (folder / "mine.log").read_text(errors="replace")
    errors = [ln for ln in log.splitlines() if ln.startswith("!")]
    assert proc.returncode == 0 and not errors, "\n".join(errors or log.splitlines()[-30:])
    return log


def _split(tmp_path: Path, capsys, *models: str, figures: bool = False) -> tuple[str, Path]:
    folder = tmp_path / "frag"
    argv = ["latex", *models, "--split", str(folder)] + ([] if figures else ["--no-figures"])
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["latex", "--preamble"]) == 0
    return capsys.readouterr().out, folder


def test_three_fragments_in_a_document_of_ones_own(pdflatex, tmp_path, capsys):
    """A model's formulas, its sweep table and FlashAttention's annotated Algorithm 1."""
    preamble, folder = _split(tmp_path, capsys, "attention.fa1.fwd.paper", "attention.fa1.fwd")
    inputs = ["frag/attention.fa1.fwd.paper.tex", "frag/attention.fa1.fwd.paper.sweep.tex",
              "frag/attention.fa1.fwd.algorithm.tex"]
    assert all((tmp_path / p).exists() for p in inputs)
    (tmp_path / "mine.tex").write_text(_document(preamble, inputs))
    log = _compile(pdflatex, tmp_path)
    assert "Overfull" not in log
    assert "(./frag/attention.fa1.fwd.algorithm.tex" in log


def test_a_figure_fragment_in_a_document_of_ones_own(pdflatex, tmp_path, capsys):
    preamble, folder = _split(tmp_path, capsys, "gemm.tiled", figures=True)
    inputs = ["frag/gemm.tiled.tex", "frag/gemm.tiled.figure.tex", "frag/gemm.tiled.algorithm.tex"]
    (tmp_path / "mine.tex").write_text(_document(preamble, inputs))
    log = _compile(pdflatex, tmp_path)
    assert "Overfull" not in log


@pytest.mark.slow
def test_every_fragment_of_every_model_fits_the_page(pdflatex, tmp_path, capsys):
    """All fragments (no figures), one after another: no error and no overfull box on a portrait page."""
    preamble, folder = _split(tmp_path, capsys)
    inputs = [f"frag/{p.name}" for p in sorted(folder.iterdir())]
    (tmp_path / "mine.tex").write_text(_document(preamble, inputs).replace("\\input{", "\\clearpage\\input{"))
    log = _compile(pdflatex, tmp_path)
    bad = [ln for ln in log.splitlines() if ln.startswith("Overfull")]
    assert bad == []
