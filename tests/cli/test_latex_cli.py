"""``tilebound latex --split DIR`` and ``--preamble``: fragments on disk, and the bad input they refuse."""

from __future__ import annotations

import pytest

from printing.document import PREAMBLE
from tilebound import output
from tilebound.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_preamble_is_the_stated_packages(capsys):
    rc, out, _ = run(capsys, "latex", "--preamble")
    assert rc == 0 and out == PREAMBLE
    packages = [ln.split("{")[1].split("}")[0] for ln in out.splitlines() if ln.startswith(r"\usepackage")]
    assert packages == ["amsmath", "amssymb", "booktabs", "siunitx", "algorithm", "algpseudocode", "url",
                        "graphicx", "pgfplots"]


def test_preamble_takes_nothing_else(capsys):
    rc, _, err = run(capsys, "latex", "--preamble", "gemm.tiled")
    assert rc == 2 and err.startswith("tilebound: preamble: ")


def test_split_writes_one_fragment_per_model_table_and_listing(capsys, tmp_path):
    folder = tmp_path / "frag"
    rc, out, err = run(capsys, "latex", "attention.fa1.fwd.paper", "gemm.tiled", "--split", str(folder), "--no-figures")
    assert rc == 0, err
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["attention.fa1.fwd.paper.algorithm.tex", "attention.fa1.fwd.paper.sweep.tex",
                     "attention.fa1.fwd.paper.tex", "gemm.tiled.algorithm.tex", "gemm.tiled.sweep.tex",
                     "gemm.tiled.tex"]
    assert out.count("wrote ") == 6
    for p in folder.iterdir():
        text = p.read_text()
        assert output.is_ours(str(p)) and text.isascii()
        assert r"\documentclass" not in text and r"\begin{document}" not in text       # a fragment, to \input
    paper = (folder / "attention.fa1.fwd.paper.tex").read_text()
    assert r"\begin{align*}" in paper and r"\section" not in paper
    assert r"\begin{table}" in (folder / "attention.fa1.fwd.paper.sweep.tex").read_text()
    assert r"\begin{algorithmic}" in (folder / "gemm.tiled.algorithm.tex").read_text()
    # written again: tilebound's own files are replaced
    assert run(capsys, "latex", "gemm.tiled", "--split", str(folder), "--no-figures")[0] == 0


def test_split_into_a_file_is_refused(capsys, tmp_path):
    f = tmp_path / "notes"
    f.write_text("mine\n")
    rc, out, err = run(capsys, "latex", "gemm.tiled", "--split", str(f))
    assert rc == 2 and err.startswith("tilebound: split: ") and "not a folder" in err
    assert f.read_text() == "mine\n"


def test_split_unknown_model_is_refused(capsys, tmp_path):
    rc, _, err = run(capsys, "latex", "gemm.tiledd", "--split", str(tmp_path / "f"))
    assert rc == 2 and err.startswith("tilebound: model: ") and "gemm.tiled" in err
    assert not (tmp_path / "f").exists()


def test_a_fragment_name_that_would_leave_the_folder_is_refused(capsys, tmp_path, monkeypatch):
    """A plugin's model named with a path separator: refused before any file is written."""
    import dataclasses

    from symbolic import registry
    from toy_models import TOYS, halo_model

    evil = type(TOYS[0])("../evil", "a model whose name leaves the folder",
                         lambda: dataclasses.replace(halo_model(), name="../evil"))
    found = {**registry._refs(), evil.name: evil}
    monkeypatch.setattr(registry, "_refs", lambda: found)
    folder = tmp_path / "frag"
    rc, _, err = run(capsys, "latex", "../evil", "gemm.tiled", "--split", str(folder), "--no-figures")
    assert rc == 2 and err.startswith("tilebound: split: ") and "would leave" in err
    assert not (tmp_path / "evil.tex").exists()
    assert not folder.exists() or list(folder.iterdir()) == []


def test_a_file_tilebound_did_not_write_is_not_overwritten(capsys, tmp_path):
    folder = tmp_path / "frag"
    folder.mkdir()
    mine = folder / "gemm.tiled.tex"
    mine.write_text("% my own notes\n")
    rc, _, err = run(capsys, "latex", "gemm.tiled", "--split", str(folder), "--no-figures")
    assert rc == 2 and err.startswith("tilebound: split: ") and "--force" in err      # the option it came from
    assert mine.read_text() == "% my own notes\n"
    assert sorted(p.name for p in folder.iterdir()) == ["gemm.tiled.tex"]       # nothing else written either
    assert run(capsys, "latex", "gemm.tiled", "--split", str(folder), "--no-figures", "--force")[0] == 0
    assert output.is_ours(str(mine))


@pytest.mark.parametrize("extra", [["-o", "x.tex"], ["--standalone"]])
def test_split_with_another_destination_is_refused(capsys, tmp_path, extra):
    rc, _, err = run(capsys, "latex", "gemm.tiled", "--split", str(tmp_path / "f"), *extra)
    assert rc == 2 and err.startswith("tilebound: split: ")


def test_figures_need_no_plotting_library(capsys, tmp_path, monkeypatch):
    """The notes' figures are pgfplots code that TeX typesets: written without matplotlib or a TeX run."""
    import builtins
    import shutil
    real_import = builtins.__import__

    def no_matplotlib(name, *a, **kw):
        if name.split(".")[0] == "matplotlib":
            raise ImportError(f"no module named {name!r} (hidden by the test)")
        return real_import(name, *a, **kw)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    monkeypatch.setattr(shutil, "which", lambda *a, **kw: None)
    out = tmp_path / "n.tex"
    assert run(capsys, "latex", "gemm.tiled", "--standalone", "-o", str(out))[0] == 0
    tex = out.read_text()
    assert tex.count(r"\begin{figure}") == 1 and tex.count(r"\begin{axis}") == 1


def test_each_swept_model_has_a_vector_figure(capsys, tmp_path):
    folder = tmp_path / "f"
    assert run(capsys, "latex", "gemm.tiled", "--split", str(folder))[0] == 0
    fig = (folder / "gemm.tiled.figure.tex").read_text()
    assert r"\begin{tikzpicture}" in fig and r"\begin{figure}" in fig     # pgfplots: vector, no bitmap
    assert "includegraphics" not in fig and ".png" not in fig
    assert "the formula (solid)" in fig and "leading term (dashed)" in fig and "circles" in fig


# ----------------------------------------------------------------------------------- --jobs
MIXED = ("attention.fa1.fwd.paper", "gemm.tiled", "decode.packed", "latency.pipeline")   # listings, figures, tables


def test_the_models_drawn_in_processes_give_the_text_of_one_process(capsys, tmp_path):
    """``--jobs 2`` draws each model in a worker; the document and the fragments are byte for byte those of
    ``--jobs 1``, in the registry's order of the models selected."""
    docs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"n{jobs}.tex"
        rc, _, err = run(capsys, "latex", *MIXED, "--standalone", "--jobs", jobs, "-o", str(out))
        assert rc == 0, err
        docs[jobs] = out.read_text()
        rc, _, err = run(capsys, "latex", *MIXED, "--split", str(tmp_path / jobs), "--jobs", jobs)
        assert rc == 0, err
    assert docs["1"] == docs["2"]
    sections = [line for line in docs["2"].splitlines() if line.startswith(r"\section")]
    from symbolic import registry
    assert [s.split("{")[-1].rstrip("}") for s in sections] == registry.select(list(MIXED))
    split = {j: {p.name: p.read_text() for p in (tmp_path / j).iterdir()} for j in ("1", "2")}
    assert split["1"] == split["2"] and len(split["1"]) >= 3 * len(MIXED)


@pytest.mark.parametrize("jobs", ["0", "257", "two", "", "2.5", "-1"])
def test_a_bad_jobs_is_refused_in_one_line(capsys, tmp_path, jobs):
    rc, _, err = run(capsys, "latex", "gemm.tiled", "--standalone", "--jobs", jobs, "-o", str(tmp_path / "n.tex"))
    assert rc == 2 and err.startswith("tilebound: jobs: ") and len(err.splitlines()) == 1
    assert not (tmp_path / "n.tex").exists()


def test_jobs_without_a_document_or_fragments_is_refused(capsys):
    rc, _, err = run(capsys, "latex", "gemm.tiled", "--jobs", "2")
    assert rc == 2 and err.startswith("tilebound: jobs: ") and "--standalone" in err


def test_ctrl_c_while_the_workers_draw_stops_them_and_writes_nothing(tmp_path):
    """SIGINT to the whole process group (a terminal's Ctrl-C) once the worker processes are up: status 130 and
    one line, no worker left behind, and no notes file (the document is written whole or not at all)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    notes = tmp_path / "notes.tex"
    p = subprocess.Popen([sys.executable, "-m", "tilebound", "latex", "--standalone", "--jobs", "2", "-o", str(notes)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root, start_new_session=True)

    def group():
        got = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
        return [int(x) for x in got]
    while p.poll() is None and len(group()) < 3:      # the command and its two workers
        time.sleep(0.05)
    assert p.poll() is None, "the notes were done before the workers were seen"
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate()
    assert p.returncode == 128 + int(signal.SIGINT)
    assert err == "tilebound: interrupted\n" and out == ""
    assert group() == [] and not notes.exists()
