"""Issue 9's probes, one row each: every hang, traceback, silent wrong answer, code execution and lost file
the hostile-user session found, with the answer it must get now.

Command-line probes run ``tilebound.cli.main`` in-process.  A refusal is exit status 2 and exactly one line
on stderr, ``tilebound: <param>: <problem>``, naming the parameter; an answer is exit 0 and the value worked
out by hand in the row's comment.  API probes call the library: a refusal is :class:`BadInput` naming the
parameter, an answer the exact value.  No probe is bounded by a wall clock: each is cheap because the code
refuses runaway work up front or evaluates in closed form.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from base.errors import BadInput
from tilebound.cli import main

ROOT = Path(__file__).resolve().parents[2]
B = 10**30


def run(capsys, argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def one_line(err: str, param: str) -> None:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith(f"tilebound: {param}: "), err


def commas(n: int) -> str:
    return f"{n:,}"


# ----------------------------------------------------------------------------------------- hand values
# attention.fa2.fwd.causal with B_c = B_r = B dividing N = N_k (docs/conventions.md §1): key block j is met by
# T - j query blocks (T = N/B): reads = N d + 2 d B sum_{j<T} (T - j) = N d + d N (N/B + 1); flops = 2 d N (N + B)
def fa2_causal(n, d=64, b=128):
    return {"reads": n * d + d * n * (n // b + 1), "writes": n * d + n, "flops": 2 * d * n * (n + b)}


# ----------------------------------------------------------------------------------------- CLI: answers
ANSWERS = [
    # hang: ~12 minutes at the size the docs name; now closed form (3*10**9 / 128 = 23,437,500 blocks)
    ("show causal at N = 3e9",
     ["show", "attention.fa2.fwd.causal", "--at", "N=3000000000", "N_k=3000000000"],
     [commas(v) for v in fa2_causal(3 * 10**9).values()]),
    # hang: N = 10**30 never finished (128 divides 10**30)
    ("show causal at N = 10**30",
     ["show", "attention.fa2.fwd.causal", "--at", "N=10**30", "N_k=10**30"],
     [commas(v) for v in fa2_causal(B).values()]),
    # traceback: 4300-digit limit; flops = 4 N^2 d = 256 * 10**4400: 2.56e+4402, 4,403 digits
    ("show at N = 10**2200",
     ["show", "attention.fa1.fwd.paper", "--at", "N=10**2200", "d=64", "M=51200"], ["2.56e+4402 (4,403 digits)"]),
    ("table at N = 10**2200",
     ["table", "attention.fa1.fwd.paper", "--vary", "N=10**2200", "--at", "d=64", "M=51200", "-q", "flops"],
     ["2.56e+4402 (4,403 digits)"]),
    ("latex at N = 10**2200",
     ["latex", "attention.fa1.fwd.paper", "--vary", "N=10**2200", "--at", "d=64", "M=51200"], ["4,403 digits"]),
    # traceback: L = 1e400 is read as the exact 10**400 (beyond a float's range); the exact values print
    ("L = 1e400",
     ["show", "latency.pipeline", "--at", "n=10", "S=2", "L=1e400", "t_x=2e-7", "t_c=3e-7"], ["makespan"]),
    # traceback: 'N*1.5' is N times the exact 3/2: flops 4 N^2 d / (3 N / 2) = 8 N d / 3 = 174,762.67 at N = 1024
    ("--per 'N*1.5'",
     ["table", "attention.fa1.fwd.paper", "--vary", "N=1024", "--at", "d=64", "M=51200", "-q", "flops",
      "--per", "N*1.5"], ["174,763"]),
    # wrong: --per theta divided flops by the Θ of total; flops = 4 N^2 d, Θ(N^2 d): the column is 4 exactly
    ("--per theta of flops",
     ["table", "attention.fa1.fwd.paper", "--vary", "N=1024,2048", "--at", "d=64", "M=51200", "-q", "flops",
      "--per", "theta"], ["N²·d"]),
]


# hang: gemm.l2's wave sum looped over waves (issue 10 sums it in closed form); by hand, A and B read once
# when they fit: hbm_reads_fits = M K + K N = 2 * 10**9 * 4096
GEMM_L2 = pytest.param(["show", "gemm.l2", "--at", "M=10**9", "N=10**9"], [commas(2 * 10**9 * 4096)],
                       id="gemm.l2 at 10**9")


# refused: gemm.l2.lru visited every wave (10**54 here); by classes of waves it answers.  By hand (the model's
# defaults: 128 x 128 x 64 tiles, G_M = 8, P = 132, 25,000,000 elements): A read once (K M), B once per group of
# 8 x 128 rows (its reuse across groups is N x 64 > 25,000,000 elements away): K M + (M / 1024) K N
GEMM_L2_LRU = pytest.param(["show", "gemm.l2.lru", "--at", "M=10**30", "N=10**30"],
                           [commas(4096 * 10**30 + (10**30 // 1024) * 4096 * 10**30)], id="gemm.l2.lru at 10**30")


@pytest.mark.parametrize("argv,expected", [a[1:] for a in ANSWERS] + [GEMM_L2, GEMM_L2_LRU],
                         ids=[a[0] for a in ANSWERS] + [None, None])
def test_cli_probe_gets_its_answer(capsys, argv, expected):
    rc, out, err = run(capsys, argv)
    assert rc == 0, err
    assert "Traceback" not in err
    for text in expected:
        assert text in out, (text, out[-2000:])


def test_per_theta_of_flops_is_four(capsys):
    rc, out, _ = run(capsys, ["table", "attention.fa1.fwd.paper", "--vary", "N=1024,2048", "--at", "d=64",
                              "M=51200", "-q", "flops", "--per", "theta"])
    rows = [ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert rc == 0 and [r[-1] for r in rows] == ["4", "4"]


def test_latex_exact_name_is_that_model_alone(capsys):
    """The docs' example ``latex attention.fa1.fwd`` printed .causal and .paper too."""
    rc, out, _ = run(capsys, ["latex", "attention.fa1.fwd"])
    assert rc == 0 and [ln for ln in out.splitlines() if ln.startswith("% attention.")] == ["% attention.fa1.fwd"]


@pytest.mark.extra("plot")
def test_plot_runs_no_executor_at_two_to_the_forty(capsys, tmp_path):
    """``plot --vary N=2**40..2**41`` ran the executor at 2**40; it now draws the formula and says so."""
    rc, out, err = run(capsys, ["plot", "attention.fa1.fwd", "--vary", "N,N_k=2**40..2**41",
                                "-o", str(tmp_path / "p.png")])
    assert rc == 0 and "executor not run at 1099511627776, 2199023255552" in err and "Traceback" not in err


# ----------------------------------------------------------------------------------------- CLI: refusals
REFUSED = [
    ("gemm.l2 with the old names", ["show", "gemm.l2", "--at", "M_g=10**9", "N_g=10**9"], "M_g",
     "not a parameter of gemm.l2; did you mean M?"),
    ("4 GB sweep", ["table", "attention.fa1.fwd", "--vary", "N=1..2**4096", "--vary", "d=1..2**4096"], "vary",
     "the most a sweep takes is 10,000"),
    ("--per sqrt", ["table", "attention.fa1.fwd.paper", "--vary", "N=1024", "-q", "total", "--per", "sqrt(N)"],
     "per", "unknown function sqrt"),
    ("--per makespan theta", ["table", "latency.pipeline", "--vary", "n=10,100", "--at", "S=2", "L=1e-6",
                              "t_x=2e-7", "t_c=3e-7", "-q", "makespan", "--per", "theta"], "per", "makespan"),
    ("--at twice", ["show", "attention.fa1.fwd", "--at", "N=1", "N=2"], "N", "given twice"),
    ("--vary twice", ["table", "attention.fa1.fwd", "--vary", "N=1,2", "--vary", "N=4"], "N", "varied twice"),
    ("--at beside --vary", ["table", "attention.fa1.fwd", "--vary", "N=1,2", "--at", "N=5"], "N",
     "given by both --at and --vary"),
    ("--at on latex without a table", ["latex", "attention.fa1.fwd.paper", "--at", "N=1024"], "at",
     "latex uses --at only for its sweep tables"),
    ("-o ''", ["latex", "attention.fa1.fwd", "-o", ""], "output", "an empty value"),
    ("plot -o ''", ["plot", "attention.fa1.fwd", "--vary", "N=64,128", "-o", ""], "output", "an empty value"),
    ("non-integral N", ["show", "attention.fa1.fwd.paper", "--at", "N=1.5"], "N", "integer"),
    ("N = inf", ["show", "attention.fa1.fwd.paper", "--at", "N=inf"], "N", ""),
    ("L = inf", ["show", "latency.pipeline", "--at", "n=10", "S=2", "L=inf", "t_x=2e-7", "t_c=3e-7"], "L", ""),
]


@pytest.mark.parametrize("argv,param,words", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_cli_probe_is_refused_in_one_line(capsys, argv, param, words):
    rc, out, err = run(capsys, argv)
    assert rc == 2
    one_line(err, param)
    assert words in err, err


def test_per_is_not_python(capsys, tmp_path, monkeypatch):
    """``--per "__import__('os').system(...)"`` ran the command; now one line, and nothing runs."""
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, ["table", "attention.fa1.fwd.paper", "--vary", "N=1024", "-q", "total",
                              "--per", "__import__('os').system('touch INJECTED')"])
    assert rc == 2
    one_line(err, "per")
    assert not (tmp_path / "INJECTED").exists() and list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------------- issue 18: parsing
# Each class of the hostile run, a few neighbours per class: a refusal is one line naming the parameter.
ISSUE18_REFUSED = [
    # signs bind as in Python: -2**12 is -(2**12) = -4096, refused as negative (it read 4096 and exited 0)
    ("-2**12", ["show", "gemm.tiled", "--at", "M=-2**12", "N=64", "K=64"], "M", "must be >= 1, got -4096"),
    ("-2^2", ["show", "gemm.tiled", "--at", "M=-2^2", "N=64", "K=64"], "M", "must be >= 1, got -4"),
    ("+-2", ["show", "gemm.tiled", "--at", "M=+-2", "N=64", "K=64"], "M", "expected a number"),
    ("--vary -2**3", ["table", "gemm.tiled", "--vary", "M=64,-2**3", "--at", "N=64", "K=64"], "M",
     "must be >= 1, got -8"),
    ("--per -2**2", ["table", "toy.halo", "--vary", "N=4", "--per=-2**2*N+16"], "per", "is 0 at N = 4"),
    ("4096**4096", ["show", "gemm.tiled", "--at", "M=4096**4096"], "M", "beyond the largest number"),
    # --per: the size of every intermediate value, not only the literal form
    ("power tower", ["table", "toy.halo", "--vary", "N=8", "--per", "(((2**64)**64)**64)**64"], "per", "beyond 10**4096"),
    ("tower of N", ["table", "toy.halo", "--vary", "N=8", "--per", "((N+1)**64+1)**64"], "per", "degree"),
    ("10**10**10", ["table", "toy.halo", "--vary", "N=8", "--per", "10**10**10"], "per", "out of range"),
    # --per nesting: RecursionError before
    ("200 parentheses", ["table", "toy.halo", "--vary", "N=8", "--per", "(" * 200 + "N" + ")" * 200], "per", "nested"),
    ("nested ceil", ["table", "toy.halo", "--vary", "N=8", "--per", "ceil(" * 100 + "N" + ")" * 100], "per", "nested"),
    ("nested min", ["table", "toy.halo", "--vary", "N=8", "--per", "min(N," * 100 + "N" + ")" * 100], "per", "nested"),
    ("exponent chain", ["table", "toy.halo", "--vary", "N=8", "--per", "2**" * 100 + "1"], "per", "nested"),
    ("signs", ["table", "toy.halo", "--vary", "N=8", "--per", "N*" + "-" * 200 + "1"], "per", "signs in a row"),
    # --per zero or undefined at a point: ZeroDivisionError before
    ("1/(d-64)", ["table", "attention.fa1.fwd.paper", "--vary", "d=32,64", "--at", "N=1024", "M=51200",
                  "--per", "1/(d-64)"], "per", "'1/(d-64)' is undefined at d = 64"),
    ("d-64", ["table", "attention.fa1.fwd.paper", "--vary", "d=32,64", "--at", "N=1024", "M=51200",
              "--per", "d-64"], "per", "'d-64' is 0 at d = 64"),
    ("ceil", ["table", "toy.halo", "--vary", "N=1,64", "--per", "ceil(N/64) - 1"], "per", "is 0 at N = 1"),
]


@pytest.mark.parametrize("argv,param,words", [r[1:] for r in ISSUE18_REFUSED], ids=[r[0] for r in ISSUE18_REFUSED])
def test_issue18_parsing_is_refused_in_one_line(capsys, toys, argv, param, words):
    rc, out, err = run(capsys, argv)
    assert rc == 2, (rc, out[-500:])
    one_line(err, param)
    assert words in err, err


ISSUE18_PLOTS = [
    # huge values reaching floats: OverflowError before; now the varied parameter is named
    ("--vary N=10**2200", ["plot", "attention.fa1.fwd.paper", "--vary", "N=10**2200,10**2201", "--at", "d=64",
                           "M=51200"], "N", "the value 1.00e+2200 is beyond a float's range"),
    # N = 10**160: flops 4 N**2 d = 2.56e+322, beyond a float while N is not
    ("flops beyond a float", ["plot", "attention.fa1.fwd.paper", "--vary", "N=10**150,10**160", "--at", "d=64",
                              "M=51200", "-q", "flops", "--no-executed"], "N", "flops"),
    # a fixed L = 1e400 (exact): every period (the main quantity) is beyond a float
    ("L = 1e400", ["plot", "latency.pipeline", "--vary", "n=10,100", "--at", "S=2", "L=1e400", "t_x=2e-7",
                   "t_c=3e-7"], "n", "period 5.00e+399 at n = 10 is beyond"),
]


@pytest.mark.extra("plot")
@pytest.mark.parametrize("argv,param,words", [r[1:] for r in ISSUE18_PLOTS], ids=[r[0] for r in ISSUE18_PLOTS])
def test_issue18_plot_values_beyond_floats_name_the_parameter(capsys, tmp_path, argv, param, words):
    rc, out, err = run(capsys, argv + ["-o", str(tmp_path / "p.png")])
    assert rc == 2
    one_line(err, param)
    assert words in err and list(tmp_path.iterdir()) == [], err


def test_issue18_signed_values_are_read_as_python_reads_them(capsys):
    """``N=2**-0`` is 1 and ``M=+2**7`` is 128 (a plus sign is harmless): gemm.tiled at M = 128, N = K = 64 with
    128 x 128 x 32 tiles reads M K + K N = 8,192 + 4,096 = 12,288 elements (one tile each way)."""
    rc, out, err = run(capsys, ["show", "gemm.tiled", "--at", "M=+2**7", "N=64", "K=2**6"])
    assert rc == 0, err
    row = [ln.split() for ln in out.splitlines() if ln.split()[:1] == ["reads"] and "=" not in ln][-1]
    assert row[1] == "12,288"


def test_latex_split_into_a_folder_it_cannot_make(capsys, tmp_path, monkeypatch):
    """PermissionError before: ``os.makedirs`` under a read-only parent (simulated: the tests may run as root,
    who may write anywhere)."""
    import tilebound.commands.latex as latex

    def refused(path, exist_ok=False):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(latex.os, "makedirs", refused)
    rc, _, err = run(capsys, ["latex", "attention.fa1.fwd", "--split", str(tmp_path / "notes")])
    assert rc == 2
    one_line(err, "split")
    assert "Permission denied" in err


def test_latex_split_into_a_read_only_folder_is_refused_before_any_work(capsys, tmp_path, monkeypatch):
    import tilebound.commands.latex as latex
    monkeypatch.setattr(latex.os, "access", lambda path, mode: False)
    monkeypatch.setattr(latex, "_plan", lambda *a, **k: pytest.fail("work done before the refusal"))
    rc, _, err = run(capsys, ["latex", "attention.fa1.fwd", "--split", str(tmp_path)])
    assert rc == 2
    one_line(err, "split")
    assert "permission denied" in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["--help"], ["show", "--help"], ["tune", "--help"]], ids=" ".join)
def test_help_into_a_full_disk_says_so(argv):
    """``tilebound --help > /dev/full`` exited 0: argparse swallows the failing write."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "tilebound", *argv], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=env, cwd=ROOT)
    assert proc.returncode == 1 and proc.stderr == "tilebound: output: cannot write: No space left on device\n"


# ----------------------------------------------------------------------------------------- plugins
def _plugin_site(tmp_path: Path, module: str, source: str, value: str) -> Path:
    """A folder that holds an installed distribution (``dist-info`` with an entry point of the group
    ``tilebound.commands``) and its module: what ``pip install`` of a plugin leaves on ``sys.path``."""
    site = tmp_path / "site"
    info = site / "h4probe_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: h4probe-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[tilebound.commands]\nprobe = {value}\n")
    (site / f"{module}.py").write_text(source)
    return site


def _run_with(site: Path, *argv: str):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "tilebound", *argv], capture_output=True, text=True, env=env, cwd=ROOT)


def test_a_plugin_adds_a_subcommand(tmp_path):
    site = _plugin_site(tmp_path, "h4probe_cmd", (
        "from tilebound.commands import Command\n\n"
        "def add_arguments(s):\n    s.add_argument('--times', type=int, default=1)\n\n"
        "def run(args, out):\n    out.write('probe ' * args.times + '\\n')\n    return 0\n\n"
        "COMMAND = Command('probe', 'a plugin command', add_arguments, run)\n"), "h4probe_cmd:COMMAND")
    proc = _run_with(site, "probe", "--times", "3")
    assert proc.returncode == 0 and proc.stdout == "probe probe probe \n", proc.stderr
    assert "a plugin command" in _run_with(site, "--help").stdout


def test_a_plugin_that_fails_to_import_is_one_line_and_its_traceback_under_debug(tmp_path):
    site = _plugin_site(tmp_path, "h4probe_broken", "def helper():\n    return 1 / 0\n\nhelper()\n", "h4probe_broken")
    proc = _run_with(site, "list")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("tilebound: command: ") and "Traceback" not in proc.stderr
    assert "'h4probe_broken' failed to import: ZeroDivisionError" in proc.stderr and "--debug" in proc.stderr
    for argv in (["--debug", "list"], ["list", "--debug"]):
        proc = _run_with(site, *argv)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" in proc.stderr and "h4probe_broken.py\", line 2, in helper" in proc.stderr
        assert "ZeroDivisionError: division by zero" in proc.stderr
        assert proc.stderr.splitlines()[-1].startswith("tilebound: command: ")


def test_a_plugin_command_of_a_taken_name_is_refused(tmp_path):
    site = _plugin_site(tmp_path, "h4probe_dup", (
        "from tilebound.commands import Command\n\n"
        "COMMAND = Command('list', 'another list', lambda s: None, lambda a, o: 0)\n"), "h4probe_dup")
    proc = _run_with(site, "list")
    assert proc.returncode == 2 and "two commands are named 'list'" in proc.stderr and proc.stderr.count("\n") == 1


# ----------------------------------------------------------------------------------------- CLI: files
def test_latex_does_not_overwrite_a_file_it_did_not_write(capsys, tmp_path):
    notes = tmp_path / "notes.tex"
    notes.write_text("An instructor's hand-edited notes\n")
    rc, _, err = run(capsys, ["latex", "attention.fa1.fwd", "-o", str(notes)])
    assert rc == 2
    one_line(err, "output")
    assert "--force" in err and notes.read_text() == "An instructor's hand-edited notes\n"
    assert run(capsys, ["latex", "attention.fa1.fwd", "-o", str(notes), "--force"])[0] == 0
    assert "\\begin{align}" in notes.read_text()
    assert run(capsys, ["latex", "attention.fa1.fwd", "-o", str(notes)])[0] == 0     # its own: rewritten


@pytest.mark.extra("plot")
def test_plot_does_not_overwrite_an_image_it_did_not_write(capsys, tmp_path):
    img = tmp_path / "io.png"
    img.write_bytes(b"\x89PNG\r\n\x1a\n someone else's figure")
    argv = ["plot", "attention.standard.fwd", "--vary", "N,N_k=64,128", "--no-executed", "-o", str(img)]
    rc, _, err = run(capsys, argv)
    assert rc == 2
    one_line(err, "output")
    assert img.read_bytes().endswith(b"someone else's figure")
    assert run(capsys, argv + ["--force"])[0] == 0 and run(capsys, argv)[0] == 0


# ----------------------------------------------------------------------------------------- CLI: streams
class _Failing:
    encoding = "utf-8"

    def __init__(self, exc):
        self.exc = exc

    def write(self, text):
        raise self.exc

    def flush(self):
        pass


@pytest.mark.parametrize("exc,status,err_line", [
    (BrokenPipeError(errno.EPIPE, "Broken pipe"), 141, None),                 # `tilebound list | head`
    (OSError(errno.ENOSPC, "No space left on device"), 1, "tilebound: output: cannot write: No space left on device"),
], ids=["closed pipe", "full disk"])
def test_output_stream_errors_exit_quietly(monkeypatch, capsys, exc, status, err_line):
    from base import console
    monkeypatch.setattr(console, "silence_stdout", lambda: None)
    monkeypatch.setattr(sys, "stdout", _Failing(exc))
    rc = main(["list"])
    err = capsys.readouterr().err
    assert rc == status
    assert (err == "") if err_line is None else (err == err_line + "\n")


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    """Ctrl-C: 130 (128 + SIGINT) and one line, as python -m verify does (base.console.run, shared)."""
    from tilebound import commands

    def interrupted(args, out):
        raise KeyboardInterrupt
    monkeypatch.setattr(commands, "commands", lambda: {"list": commands.Command("list", "", lambda s: None, interrupted)})
    assert main(["list"]) == 130
    assert capsys.readouterr().err == "tilebound: interrupted\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_dev_full_in_a_real_process():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "tilebound", "list"], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=env, cwd=ROOT)
    assert proc.returncode == 1 and proc.stderr == "tilebound: output: cannot write: No space left on device\n"


# ----------------------------------------------------------------------------------------- API
def _api():
    from numeric import attention as ex
    from numeric import gemm, pipeline
    from symbolic import registry
    from verify import assert_agree
    import sympy as sp

    causal = registry.get("attention.fa2.fwd.causal")
    paper = registry.get("attention.fa1.fwd.paper")
    pipe = registry.get("latency.pipeline")
    cplx = np.ones((4, 2)) * 1j
    real = np.ones((4, 2))
    return [
        # (id, call, expected value or BadInput param as "!param")
        ("select is not iterated by character", lambda: registry.select("gemm.tiled"), ["gemm.tiled"]),
        ("select takes a list", lambda: registry.select(["gemm.tiled", "gemv.*"]), ["gemm.tiled", "gemv.tiled"]),
        ("N = 1e30 is not its binary value", lambda: paper.evaluate("total", N=1e30, d=64, M=51200), "!N"),
        ("L = inf", lambda: pipe.evaluate("makespan", n=10, S=2, L=float("inf"), t_x=2e-7, t_c=3e-7), "!L"),
        ("L = '1/0'", lambda: pipe.evaluate("makespan", n=10, S=2, L="1/0", t_x=2e-7, t_c=3e-7), "!L"),
        ("causal at 10**30 by closed form", lambda: causal.evaluate("flops", N=B, N_k=B, d=64, B_r=128, B_c=128),
         fa2_causal(B)["flops"]),
        ("count_flash_forward for hours", lambda: ex.count_flash_forward(10**9, 10**9, 64, 1, 1), "!Bc"),
        # ten blocks of 10**29 rows; by hand (non-causal fa2): reads N d + T_r 2 N_k d, T_r = 10
        ("count-only beyond int64", lambda: ex.count_flash_forward(B, B, 64, 10**29, 10**29).reads,
         B * 64 + 10 * 2 * B * 64),
        ("run_gemm launch list", lambda: gemm.run_gemm(10**9, 10**9, 10**9, 1, 1, 1), "!BM"),
        ("launch_tiles list", lambda: gemm.launch_tiles(10**6, 10**6), "!tiles_n"),
        # one tile: latency, transfer, compute
        ("pipeline 8 GB of buffers", lambda: pipeline.simulate(1, 3e-7, 2e-7, 1e-6, 10**9).makespan,
         pytest.approx(1e-6 + 2e-7 + 3e-7)),
        ("complex flash_forward", lambda: ex.flash_forward(cplx, cplx, cplx, 2, 2), "!Q"),
        ("complex standard_forward", lambda: ex.standard_forward(real, cplx, cplx), "!K"),
        ("complex run_gemm", lambda: gemm.run_gemm(4, 4, 4, 2, 2, 2, real=True, A=np.ones((4, 4)) * 1j), "!A"),
        ("object array", lambda: ex.flash_forward(real.astype(object), real, real, 2, 2), "!Q"),
        ("assert_agree with no points", lambda: assert_agree(lambda p: {"a": 1}, lambda p: {"a": 1}, []), "!points"),
        ("assert_agree formula {}", lambda: assert_agree(lambda p: {}, lambda p: {"a": 1}, [{"N": 1}]), "!formula"),
        ("assert_agree plain number", lambda: assert_agree(lambda p: 3, lambda p: 3, [{"N": 1}]), "!formula"),
        ("assert_agree executor list", lambda: assert_agree(lambda p: {"a": 1}, lambda p: [1], [{"N": 1}]),
         "!executor"),
        ("assert_agree agrees", lambda: assert_agree(lambda p: {"a": p["N"]}, lambda p: {"a": p["N"]},
                                                     [{"N": 1}, {"N": 2}]), 2),
        ("exact fraction", lambda: pipe.evaluate("busy", n=1, S=1, L=Fraction(1), t_x=Fraction(1), t_c=Fraction(1)),
         Fraction(1, 3)),
        # issue 18: a SymPy Float was TypeError ('NoneType' object is not callable); an integral one below 2**53
        # is its integer (as a float is), any other is refused naming the parameter
        ("sympy Float 4096", lambda: paper.evaluate("total", N=sp.Float(4096), d=64, M=51200),
         paper.evaluate("total", N=4096, d=64, M=51200)),
        ("sympy Float 4096.5", lambda: paper.evaluate("total", N=sp.Float("4096.5"), d=64, M=51200), "!N"),
        ("sympy Float 4096 + 1e-22", lambda: paper.evaluate("total", N=sp.Float("4096.0000000000000000001", 40),
                                                            d=64, M=51200), "!N"),
        ("sympy Float 1e30", lambda: paper.evaluate("total", N=sp.Float("1e30"), d=64, M=51200), "!N"),
        ("sympy Float inf", lambda: paper.evaluate("total", N=sp.Float("inf"), d=64, M=51200), "!N"),
        ("sympy I", lambda: paper.evaluate("total", N=sp.I, d=64, M=51200), "!N"),
        ("sympy Float time", lambda: pipe.evaluate("makespan", n=10, S=2, L=sp.Float(1e-6), t_x=2e-7, t_c=3e-7), "!L"),
        # issue 18: registry.select(5) was TypeError
        ("select(5)", lambda: registry.select(5), "!model"),
        ("select([5])", lambda: registry.select([5]), "!model"),
        ("select(b'gemm')", lambda: registry.select([b"gemm.tiled"]), "!model"),
    ]


API = _api()


@pytest.mark.parametrize("call,expected", [a[1:] for a in API], ids=[a[0] for a in API])
def test_api_probe(call, expected):
    if isinstance(expected, str) and expected.startswith("!"):
        with pytest.raises(BadInput) as exc:
            call()
        assert exc.value.param == expected[1:], str(exc.value)
        assert "\n" not in str(exc.value)
    else:
        assert call() == expected


# ----------------------------------------------------------------------------------- issue 19: one table per class
# The hostile-input audit after issue 18.  Each row ran to a wrong end before: exit 0 with part of the output
# silently gone, or a refusal naming the wrong option or saying the wrong thing.  "{tmp}" in a row is the test's
# own temporary folder, and "{file}" a regular file in it (where a folder is meant).
def _argv(argv, tmp_path):
    (tmp_path / "afile").write_text("a regular file\n")
    return [a.replace("{tmp}", str(tmp_path)).replace("{file}", str(tmp_path / "afile")) for a in argv]


def _written(tmp_path) -> list:
    return sorted(p.name for p in tmp_path.iterdir() if p.name != "afile")


# class 1: an --at value that html and latex dropped with their tables (exit 0, the page 35 KB against 88 KB);
# refused as show refuses it, naming the parameter, before anything is written
AT_VALUES = [
    ("html M=-2**12", ["html", "gemm.tiled", "-o", "{tmp}/site", "--at", "M=-2**12"], "M", "must be >= 1, got -4096"),
    ("html M=0", ["html", "gemm.tiled", "-o", "{tmp}/site", "--at", "M=0"], "M", "must be >= 1, got 0"),
    ("html B_M=-2**5", ["html", "gemm.tiled", "-o", "{tmp}/site", "--at", "B_M=-2**5"], "B_M", "must be >= 1, got -32"),
    ("html N_k=-2**12", ["html", "decode.packed", "-o", "{tmp}/site", "--at", "N_k=-2**12"], "N_k",
     "must be >= 1, got -4096"),
    # each value its parameter takes, the two together refused by the model (40 heads over 7 KV heads)
    ("html H_kv not dividing H", ["html", "decode.packed", "-o", "{tmp}/site", "--at", "H=40", "H_kv=7"], "H_kv",
     "must divide H"),
    ("html among several models", ["html", "attention.fa1.fwd", "gemm.tiled", "-o", "{tmp}/site", "--at",
                                   "M=-2**12"], "M", "must be >= 1"),
    ("latex --standalone", ["latex", "gemm.tiled", "--standalone", "--at", "M=-2**12", "-o", "{tmp}/notes.tex"],
     "M", "must be >= 1, got -4096"),
    ("latex --split", ["latex", "gemm.tiled", "--split", "{tmp}/frags", "--at", "M=0"], "M", "must be >= 1, got 0"),
    ("latex --split H_kv", ["latex", "decode.packed", "--split", "{tmp}/frags", "--at", "H=40", "H_kv=7"], "H_kv",
     "must divide H"),
]


@pytest.mark.parametrize("argv,param,words", [r[1:] for r in AT_VALUES], ids=[r[0] for r in AT_VALUES])
def test_an_at_value_a_document_would_drop_is_refused(capsys, tmp_path, argv, param, words):
    rc, out, err = run(capsys, _argv(argv, tmp_path))
    assert rc == 2, (out[-300:], err)
    one_line(err, param)
    assert words in err and _written(tmp_path) == [] and out == "", err


def test_an_at_value_a_page_takes_keeps_its_table(capsys, tmp_path):
    """The check refuses only what the page would lose: at M = 512 gemm.tiled's page has its sweep table."""
    rc, _, err = run(capsys, ["html", "gemm.tiled", "-o", str(tmp_path / "at"), "--at", "M=512"])
    assert rc == 0, err
    rc, _, err = run(capsys, ["html", "gemm.tiled", "-o", str(tmp_path / "plain")])
    assert rc == 0, err
    tables = [(tmp_path / d / "gemm.tiled.html").read_text().count("<table") for d in ("at", "plain")]
    assert tables[0] == tables[1] > 1


# class 2: --dtype that a table dropped without a word (no bytes column, no note); it is noted, as show notes a
# model's own bytes
_DECODE = ["table", "decode.packed", "--vary", "N_k=1222,2444", "--at", "B=2", "H=40", "H_kv=10", "L_q=7", "d=128",
           "d_v=128", "B_n=48", "S=32", "--dtype", "fp32"]
DTYPE_NOTED = [
    ("own bytes", _DECODE, "bytes: the model's own, each tensor at its own element type; elements are not re-priced "
                           "at --dtype fp32 (its bytes: -q bytes)"),
    ("own bytes, -q reads", _DECODE + ["-q", "reads"], "elements are not re-priced at --dtype fp32"),
    ("a quantity not in elements", ["table", "gemm.tiled", "--vary", "M=64,128", "-q", "flops", "--dtype", "fp16"],
     "--dtype fp16: flops is in FLOP, not elements, so no bytes column"),
    ("a time", ["table", "latency.pipeline", "--vary", "n=10,100", "--at", "S=2", "L=1e-6", "t_x=2e-7", "t_c=3e-7",
                "--dtype", "fp16"], "--dtype fp16: period is in s, not elements"),
]


@pytest.mark.parametrize("argv,note", [r[1:] for r in DTYPE_NOTED], ids=[r[0] for r in DTYPE_NOTED])
def test_a_dtype_a_table_cannot_use_is_noted(capsys, argv, note):
    rc, out, err = run(capsys, argv)
    assert rc == 0 and err == "", err
    assert note in out and "bytes (fp" not in out, out


# class 8: an empty or blank value (an unset shell variable) read as the option left out - tune --shapes '' ran the
# default set, table --dtype '' dropped the bytes column, plot -q '' drew the main quantity - or refused as an
# unknown name; now every option and argument of every subcommand refuses it, naming itself
EMPTY = [
    ("tune --shapes", ["tune", "--shapes", "{v}"], "shapes"),
    ("tune --shape", ["tune", "--shape", "{v}"], "shape"),
    ("tune --gpu", ["tune", "--gpu", "{v}", "--shape", "16,16,16"], "gpu"),
    ("tune --strategy", ["tune", "--strategy", "{v}", "--shape", "16,16,16"], "strategy"),
    ("tune --budget", ["tune", "--budget", "{v}"], "budget"),
    ("tune --seeds", ["tune", "--seeds", "{v}"], "seeds"),
    ("tune --max-runs", ["tune", "--max-runs", "{v}"], "max-runs"),
    ("tune --cache", ["tune", "--cache", "{v}"], "cache"),
    ("tune --plot", ["tune", "--plot", "{v}"], "plot"),
    ("table --dtype", ["table", "gemm.tiled", "--vary", "M=64", "--dtype", "{v}"], "dtype"),
    ("table -q", ["table", "gemm.tiled", "--vary", "M=64", "-q", "{v}"], "quantity"),
    ("table --ratio", ["table", "gemm.tiled", "--vary", "M=64", "--ratio", "{v}"], "ratio"),
    ("table --per", ["table", "gemm.tiled", "--vary", "M=64", "--per", "{v}"], "per"),
    ("table --vary", ["table", "gemm.tiled", "--vary", "{v}"], "vary"),
    ("table MODEL", ["table", "{v}", "--vary", "M=64"], "model"),
    ("show MODEL", ["show", "{v}"], "model"),
    ("show --at", ["show", "gemm.tiled", "--at", "{v}"], "at"),
    ("show --dtype", ["show", "gemm.tiled", "--dtype", "{v}"], "dtype"),
    ("show --hw", ["show", "gemm.tiled", "--hw", "{v}"], "hw"),
    ("show --counts", ["show", "moe.grouped", "--counts", "{v}"], "counts"),
    ("show --copies", ["show", "gemm.tiled", "--copies", "{v}"], "copies"),
    ("plot -q", ["plot", "gemm.tiled", "--vary", "M=64,128", "-q", "{v}", "-o", "{tmp}/p.png"], "quantity"),
    ("plot -o", ["plot", "gemm.tiled", "--vary", "M=64,128", "-o", "{v}"], "output"),
    ("plot MODEL", ["plot", "{v}", "--vary", "M=64,128", "-o", "{tmp}/p.png"], "model"),
    ("latex --title", ["latex", "gemm.tiled", "--standalone", "--title", "{v}", "-o", "{tmp}/n.tex"], "title"),
    ("latex --split", ["latex", "gemm.tiled", "--split", "{v}"], "split"),
    ("latex --jobs", ["latex", "gemm.tiled", "--standalone", "--jobs", "{v}"], "jobs"),
    ("latex MODEL", ["latex", "{v}"], "model"),
    ("html --title", ["html", "gemm.tiled", "-o", "{tmp}/site", "--title", "{v}"], "title"),
    ("html -o", ["html", "gemm.tiled", "-o", "{v}"], "output"),
    ("splits --gpu", ["splits", "--gpu", "{v}"], "gpu"),
    ("llm CONFIG", ["llm", "{v}"], "config"),
    ("llm --phase", ["llm", "llama-3.1-8b", "--phase", "{v}"], "phase"),
    ("llm --batch", ["llm", "llama-3.1-8b", "--batch", "{v}"], "batch"),
    ("llm --kv-dtype", ["llm", "llama-3.1-8b", "--kv-dtype", "{v}"], "kv-dtype"),
    ("llm --weights", ["llm", "llama-3.1-8b", "--weights", "{v}"], "weights"),
    ("llm --format", ["llm", "llama-3.1-8b", "--format", "{v}"], "format"),
    ("llm -o", ["llm", "llama-3.1-8b", "-o", "{v}"], "output"),
    ("llm --plot", ["llm", "llama-3.1-8b", "--plot", "{v}"], "plot"),
    ("grade FILE.py:FUNC", ["grade", "{v}", "--against", "gemm.tiled", "-q", "reads"], "function"),
    ("grade --formula", ["grade", "--formula", "{v}", "--against", "gemm.tiled", "-q", "reads"], "formula"),
    ("grade --against", ["grade", "--formula", "M", "--against", "{v}", "-q", "reads"], "against"),
]


@pytest.mark.parametrize("blank", ["", "  "], ids=["empty", "blank"])
@pytest.mark.parametrize("argv,param", [r[1:] for r in EMPTY], ids=[r[0] for r in EMPTY])
def test_an_empty_value_is_refused_naming_its_option(capsys, tmp_path, argv, param, blank):
    rc, out, err = run(capsys, _argv([a.replace("{v}", blank) for a in argv], tmp_path))
    assert rc == 2 and out == "", (out[-300:], err)
    one_line(err, param)
    assert "an empty value (an unset shell variable?)" in err and _written(tmp_path) == [], err


# class 13: an executor that states its work runs wherever the work is within the plot's budget, not only up to its
# default sweep's largest size: the LRU simulation of gemm.l2.lru (2 x 8 x 8 x 16 = 2,048 tile requests at
# M = N = K = 1024) and the tiled GEMM (64 programs x 2 K-steps at M = 8192, N = K = 64: 128 iterations)
EXECUTED = [
    ("gemm.l2.lru", ["plot", "gemm.l2.lru", "--vary", "M=256..1024", "--at", "N=1024", "K=1024", "-q",
                     "hbm_reads_lru"], "hbm_reads_lru", [256, 512, 1024]),
    ("gemm.tiled at M = 8192", ["plot", "gemm.tiled", "--vary", "M=4096,8192", "--at", "N=64", "K=64", "-q", "reads"],
     "reads", [4096, 8192]),
]


@pytest.mark.extra("plot")
@pytest.mark.parametrize("argv,quantity,xs", [r[1:] for r in EXECUTED], ids=[r[0] for r in EXECUTED])
def test_a_plot_runs_an_executor_within_its_stated_work(capsys, tmp_path, monkeypatch, argv, quantity, xs):
    from printing import plot
    from symbolic import registry
    from tilebound.report import point

    drawn: dict = {}
    monkeypatch.setattr(plot, "plot_series", lambda series, **kw: drawn.update({s.label: s for s in series}))
    rc, _, err = run(capsys, argv + ["-o", str(tmp_path / "p.png")])
    assert rc == 0 and err == "", err
    m = registry.get(argv[1])
    ex = drawn[f"{m.name}: executed"]
    at = dict(a.split("=") for a in argv[argv.index("--at") + 1:argv.index("-q")])
    key = argv[argv.index("--vary") + 1].split("=")[0]
    assert list(ex.xs) == xs
    assert list(ex.ys) == [m.evaluate(quantity, **point(m, {**{k: int(v) for k, v in at.items()}, key: x})) for x in xs]


def test_the_lru_and_tiled_checks_state_their_work():
    """By hand: 2 t_m t_n t_k tile requests (128-square tiles, K-steps of 64: 2 x 32 x 32 x 64 at 4096^3) and
    t_m t_n t_k program x K-step iterations (128 x 128 x 32 tiles at 4096^3: 32 x 32 x 128)."""
    from verify.checks.gemm import l2_lru_check, tiled_check
    p = dict(M=4096, N=4096, K=4096, B_M=128, B_N=128, B_K=64, G_M=8, P=132, capacity=25_000_000)
    assert l2_lru_check.work(p) == 131_072 and l2_lru_check.work_unit == "tile requests"
    assert tiled_check.work({**p, "B_K": 32}) == 131_072 and tiled_check.work_unit == "program x K-step iterations"


# class 15: a refusal names the option the path came from (html's folder check is latex --split's; --plot is not -o)
# class 16: a folder of the path that is a regular file is said to be one, not "does not exist"
PATHS = [
    ("html -o FILE", ["html", "gemm.tiled", "-o", "{file}"], "output", "afile' exists and is not a folder"),
    ("html -o FILE/sub", ["html", "gemm.tiled", "-o", "{file}/site"], "output", "afile' exists and is not a folder"),
    ("latex --split FILE/sub", ["latex", "gemm.tiled", "--split", "{file}/sub"], "split",
     "afile' exists and is not a folder"),
    ("latex --split FILE/a/b", ["latex", "gemm.tiled", "--split", "{file}/a/b"], "split",
     "afile' exists and is not a folder"),
    ("latex -o FILE/x.tex", ["latex", "gemm.tiled", "-o", "{file}/x.tex"], "output",
     "afile' exists and is not a folder"),
    ("plot -o FILE/x.png", ["plot", "gemm.tiled", "--vary", "M=64,128", "-o", "{file}/x.png"], "output",
     "afile' exists and is not a folder"),
    ("llm -o FILE/x.txt", ["llm", "llama-3.1-8b", "-o", "{file}/x.txt"], "output", "afile' exists and is not a folder"),
    ("llm --split FILE/d", ["llm", "llama-3.1-8b", "--split", "{file}/d"], "split",
     "afile' exists and is not a folder"),
    ("llm --plot FILE/x.png", ["llm", "llama-3.1-8b", "--plot", "{file}/x.png"], "plot",
     "afile' exists and is not a folder"),
    ("llm --plot x.nope", ["llm", "llama-3.1-8b", "--plot", "{tmp}/x.nope"], "plot", "cannot tell an image format"),
    ("tune --plot FILE/x.png", ["tune", "--shape", "16,16,16", "--strategy", "random", "--plot", "{file}/x.png"],
     "plot", "afile' exists and is not a folder"),
    ("tune --plot x.nope", ["tune", "--shape", "16,16,16", "--strategy", "random", "--plot", "{tmp}/x.nope"],
     "plot", "cannot tell an image format"),
    ("tune --cache FILE/c", ["tune", "--shape", "16,16,16", "--strategy", "random", "--budget", "5", "--seeds", "1",
                             "--cache", "{file}/c"], "cache", "afile' exists and is not a folder"),
]


@pytest.mark.parametrize("argv,param,words", [r[1:] for r in PATHS], ids=[r[0] for r in PATHS])
def test_a_path_refusal_names_its_option_and_the_file_in_the_way(capsys, tmp_path, argv, param, words):
    if "--plot" in argv or argv[0] == "plot":
        pytest.importorskip("matplotlib")
    rc, out, err = run(capsys, _argv(argv, tmp_path))
    assert rc == 2 and out == "", (out[-300:], err)
    one_line(err, param)
    assert words in err and "does not exist" not in err and _written(tmp_path) == [], err
    assert (tmp_path / "afile").read_text() == "a regular file\n"


def test_a_missing_folder_is_still_said_to_be_missing(capsys, tmp_path):
    rc, _, err = run(capsys, ["latex", "gemm.tiled", "--split", str(tmp_path / "none" / "sub")])
    assert rc == 2
    one_line(err, "split")
    assert f"the folder '{tmp_path / 'none'}' does not exist" in err


# class 17: integer options read as --at reads numbers (10**9 said "must be an integer, got '10**9'"), then
# refused by their own limits - or taken
INTEGERS_REFUSED = [
    ("tune --budget 10**9", ["tune", "--budget", "10**9"], "budget", "must be <= 6000, got 1000000000"),
    ("tune --budget 7/2", ["tune", "--budget", "7/2"], "budget", "must be an integer, got 7/2"),
    ("tune --seeds 10**9", ["tune", "--shape", "16,16,16", "--strategy", "random", "--seeds", "10**9"], "seeds",
     "1000000000 seeds = 1000000000 runs of 100 evaluations, more than --max-runs 20000"),
    ("tune --max-runs 2**-1", ["tune", "--max-runs", "2**-1"], "max-runs", "must be an integer, got 1/2"),
    ("llm --batch 10**9", ["llm", "llama-3.1-8b", "--batch", "10**9"], "batch", "exceeds the kernel's 32-bit int"),
    ("llm --context 10**30", ["llm", "llama-3.1-8b", "--context", "10**30"], "context",
     "exceeds llama-3.1-8b's max_position_embeddings 131,072"),
    ("llm --context -2**3", ["llm", "llama-3.1-8b", "--context=-2**3"], "context", "must be >= 0, got -8"),
    ("llm --jobs 10**9", ["llm", "llama-3.1-8b", "--verify", "--jobs", "10**9"], "jobs",
     "an integer from 1 to 256 or auto, got 1,000,000,000"),
    ("html --jobs 2**9", ["html", "gemm.tiled", "-o", "{tmp}/site", "--jobs", "2**9"], "jobs",
     "an integer from 1 to 256 or auto, got 512"),
    ("latex --jobs 10**9", ["latex", "gemm.tiled", "--standalone", "--jobs", "10**9"], "jobs",
     "an integer from 1 to 256 or auto, got 1,000,000,000"),
    ("show --copies 0.5", ["show", "gemm.tiled", "--copies", "0.5"], "copies", "must be an integer, got 1/2"),
    ("show --copies x", ["show", "gemm.tiled", "--copies", "x"], "copies", "must be an integer (e.g. 100"),
    ("grade --max-examples 10**9", ["grade", "--against", "gemm.tiled", "-q", "reads", "--formula", "M",
                                    "--max-examples", "10**9"], "max-examples", "from 1 to 100,000, got 1000000000"),
]


@pytest.mark.parametrize("argv,param,words", [r[1:] for r in INTEGERS_REFUSED], ids=[r[0] for r in INTEGERS_REFUSED])
def test_an_integer_option_is_read_as_at_reads_it_and_refused_by_its_own_limit(capsys, tmp_path, argv, param, words):
    rc, out, err = run(capsys, _argv(argv, tmp_path))
    assert rc == 2 and out == "", (out[-300:], err)
    one_line(err, param)
    assert words in err and _written(tmp_path) == [], err


INTEGERS_TAKEN = [
    ("tune --max-runs 10**12", ["tune", "--shape", "16,16,16", "--strategy", "random", "--budget", "5", "--seeds", "1",
                                "--max-runs", "10**12"], "random"),
    ("tune --budget 1e1 --seeds 2**1", ["tune", "--shape", "16,16,16", "--strategy", "random", "--budget", "1e1",
                                        "--seeds", "2**1"], "H100, 16x16x16, 2 seeds"),
    ("tune --shape 2**4,16,16", ["tune", "--shape", "2**4,2**4,16", "--strategy", "random", "--budget", "5",
                                 "--seeds", "1"], "16x16x16"),
    ("llm --batch 2**3 --context 2**10", ["llm", "llama-3.1-8b", "--batch", "2**3", "--context", "2**10"],
     "batch 8, context 1,024"),
    ("show --copies 2**10", ["show", "gemm.tiled", "--at", "M=64", "--copies", "2**10"], "1,024 independent copies"),
]


@pytest.mark.parametrize("argv,words", [r[1:] for r in INTEGERS_TAKEN], ids=[r[0] for r in INTEGERS_TAKEN])
def test_an_integer_option_takes_the_at_syntax(capsys, argv, words):
    rc, out, err = run(capsys, argv)
    assert rc == 0 and "Traceback" not in err, err
    assert words in out, out[-1500:]
