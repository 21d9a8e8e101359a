"""The progress bars of the long commands besides ``python -m verify`` (whose own are tested in
``test_verify_cli.py``): ``tilebound latex --standalone`` in one process and with workers, ``tilebound
html`` with workers, ``llm --verify``'s executor runs, the tuning scores, the bucket study and the learned
model's report.  On a terminal's stderr each draws done / total with its unit and an estimate (``<``);
off a terminal stderr stays empty.  ``TILEBOUND_PROGRESS_AFTER=0`` asks for the bar at once, so a run's
length on this machine does not matter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from terminal import drain, pty_with_size

ROOT = Path(__file__).resolve().parents[2]
TILEBOUND = [sys.executable, "-m", "tilebound"]

RUNS = {
    "latex, one process": (["latex", "gemm.tiled", "latency.pipeline", "--standalone", "--jobs", "1"], "/2 [", "model"),
    "latex, two workers": (["latex", "gemm.tiled", "latency.pipeline", "--standalone", "--jobs", "2"], "/2 [", "model"),
    "html, two workers": (["html", "gemm.tiled", "latency.pipeline", "--jobs", "2", "--no-figures"], "/2 [", "model"),
    "llm --verify": (["llm", "llama-3.1-8b", "--verify", "--jobs", "2"], "[", "run"),
    "tune scores": (["tune", "--shape", "512,512,512", "--strategy", "random,annealing", "--budget", "10",
                     "--seeds", "2"], "/2 [", "shape"),
    "tune buckets": (["tune", "--buckets", "--shapes", "course"], "[", "shape"),
    "tune learned": (["tune", "--learned", "--shape", "100,5120,13824"], "/2 [", "step"),
}


def _output(command: str, tmp_path) -> list:
    return {"latex": ["-o", str(tmp_path / "notes.tex")], "html": ["-o", str(tmp_path / "site")]}.get(command, [])


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("run", list(RUNS))
def test_a_bar_on_a_terminal(run, tmp_path):
    argv, done, unit = RUNS[run]
    argv = argv + _output(argv[0], tmp_path)
    master, slave = pty_with_size()
    env = {**os.environ, "TILEBOUND_PROGRESS_AFTER": "0", "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([*TILEBOUND, *argv], stdout=subprocess.PIPE, stderr=slave, cwd=tmp_path, env=env)
    os.close(slave)
    shown = drain(master).decode("utf-8", "replace")
    p.stdout.read()
    assert p.wait() == 0, shown
    os.close(master)
    what = next((f"{argv[0]} {f}" for f in ("--buckets", "--learned", "--verify") if f in argv), argv[0])
    assert f"{what}:" in shown and done in shown and unit in shown and "<" in shown, shown


@pytest.mark.parametrize("run", list(RUNS))
def test_nothing_off_a_terminal(run, tmp_path):
    argv = RUNS[run][0]
    argv = argv + _output(argv[0], tmp_path)
    env = {**os.environ, "TILEBOUND_PROGRESS_AFTER": "0", "PYTHONPATH": str(ROOT)}
    p = subprocess.run([*TILEBOUND, *argv], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert p.returncode == 0 and p.stderr == ""          # html's "wrote ..." lines go to stdout
