"""``python -m verify``'s command line: the edges of a process (a closed pipe, a full disk, Ctrl-C, ``--help``
into a full disk, an empty ``--model``), ``--jobs`` against a serial run, the progress bar on a terminal's
stderr and none elsewhere, the L2 report's flags, and a hypothesis fuzz of the flags: exit 0, 1 or 2, with
exactly one stderr line for 2, never a traceback.

The expected statuses come from the shell's convention, not from the code: a process killed by signal
``S`` reports ``128 + S`` (``SIGPIPE`` 13 -> 141, ``SIGINT`` 2 -> 130).  ``--jobs`` is checked against a
serial run of the same checks, each report field by field (all but the seconds), and on a deliberately
wrong toy check the smallest failing point must be the one worked out by hand.
"""

from __future__ import annotations

import errno
import os
import select
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import verify
from base import console
from base.errors import BadInput
from symbolic.model import Model
from symbolic.registry import ModelRef
from verify import Check, registry, run_check, run_checks
from verify import __main__ as cli

from terminal import drain, pty_with_size
from toy_models import B, N, halo_brute_force, halo_check, register_toy_checks

ROOT = Path(__file__).resolve().parents[2]
PY = [sys.executable, "-m", "verify"]
SIGPIPE_STATUS = 128 + int(signal.SIGPIPE)
SIGINT_STATUS = 128 + int(signal.SIGINT)
#: cheap checks (each well under a second, --full too), for the runs these tests start
CHEAP = ["latency.littles_law", "latency.pipeline.jitter_limit", "gemm.launch", "decode.gqa_ratio",
         "attention.standard"]


def _verify(*args, **kw):
    return subprocess.run([*PY, *args], capture_output=True, text=True, cwd=ROOT, **kw)


def _fields(r):
    """Everything a report says but the seconds."""
    return (r.name, r.points, r.agreed, r.failed, r.largest,
            [(f.point, f.formula, f.executed, f.message) for f in r.failures])


# ----------------------------------------------------------------------------- base.console.run
class _Full:
    """A stream on a full disk: writes are buffered, the flush fails as /dev/full's does."""

    def __init__(self):
        self.buf = []

    def write(self, text):
        self.buf.append(text)
        return len(text)

    def flush(self):
        if self.buf:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fileno(self):
        raise OSError("no descriptor")


def _raises(exc):
    def main(argv):
        raise exc
    return main


@pytest.mark.parametrize("main, status, line", [
    (lambda argv: 0, 0, None),
    (lambda argv: None, 0, None),
    (lambda argv: 1, 1, None),
    (_raises(BadInput("seed", "must be an integer")), 2, "prog: seed: must be an integer"),
    (_raises(KeyboardInterrupt()), SIGINT_STATUS, "prog: interrupted"),
    (_raises(BrokenPipeError(errno.EPIPE, "Broken pipe")), SIGPIPE_STATUS, None),
    (_raises(SystemExit(0)), 0, None),
    (_raises(SystemExit(2)), 2, None),
    (_raises(SystemExit("gone")), 1, "prog: gone"),
])
def test_run_turns_the_edges_into_a_status(main, status, line, capsys):
    assert console.run(main, "prog", []) == status
    err = capsys.readouterr().err
    assert err == ("" if line is None else line + "\n")


def test_a_message_stays_on_one_line(capsys):
    """A user's value echoed in an error keeps its line breaks as escapes (newline, NEL, U+2028)."""
    assert console.run(_raises(BadInput("model", "unknown 'a\nb\x85c\u2028d'")), "prog", []) == 2
    assert capsys.readouterr().err == "prog: model: unknown 'a\\nb\\x85c\\u2028d'\n"


def test_run_lets_a_bug_show_its_traceback():
    with pytest.raises(ZeroDivisionError):
        console.run(_raises(ZeroDivisionError("a bug")), "prog", [])


def test_run_checks_the_output_to_the_end(monkeypatch, capsys):
    """The output is flushed before run returns: a full disk is one line and status 1, even when the
    program itself never flushed (``--help > /dev/full`` used to exit 0)."""
    full = _Full()
    monkeypatch.setattr(sys, "stdout", full)

    def main(argv):
        print("a table")
        return 0
    assert console.run(main, "prog", []) == 1
    assert sys.stdout is full                     # restored
    assert capsys.readouterr().err == f"prog: output: cannot write: {os.strerror(errno.ENOSPC)}\n"



class _SignalsOnCollection:
    """An object whose ``__del__`` sends this process SIGINT: the handler's ``KeyboardInterrupt`` is raised
    inside ``__del__``, where Python prints "Exception ignored" and goes on (what let ``verify --jobs 2`` run
    to the end and exit 0 after a Ctrl-C, on a loaded machine)."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)                           # the handler runs here, inside __del__


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")   # its traceback is left out too
def test_a_ctrl_c_swallowed_inside_a_destructor_still_stops_the_run(capsys):
    steps = []

    def main(argv):                               # a run of 5 steps that reports its progress
        with console.progress(5, "task") as shown:
            for k in range(5):
                if k == 1:
                    obj = _SignalsOnCollection()
                    del obj                           # Ctrl-C lands in __del__, and is swallowed there
                steps.append(k)
                shown.advance()
        return 0
    assert console.run(main, "prog", []) == console.EXIT_INTERRUPTED
    assert steps == [0, 1]                         # the next progress step raised it again
    assert capsys.readouterr().err == "prog: interrupted\n"           # one line: no "Exception ignored"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler      # the handler is put back

    def no_progress(argv):                         # a run with no progress step after the Ctrl-C
        obj = _SignalsOnCollection()
        del obj
        return 0
    assert console.run(no_progress, "prog", []) == console.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "prog: interrupted\n"
    assert console.run(lambda argv: 0, "prog", []) == 0          # the flag does not outlive its run


def test_a_run_that_ignores_sigint_keeps_ignoring_it():
    """A background job (``cmd &`` in a script) starts with SIGINT ignored: run leaves it so."""
    def main(argv):
        return 0 if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else 3
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert console.run(main, "prog", []) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)

def test_argument_parser_errors_are_one_bad_input():
    p = console.ArgumentParser(prog="python -m verify", error_name="usage")
    p.add_argument("--n", type=int)
    with pytest.raises(BadInput) as e:
        p.parse_args(["--n", "x"])
    assert e.value.param == "usage" and "--n" in e.value.problem
    sub = console.ArgumentParser(prog="tilebound show")
    with pytest.raises(BadInput) as e:
        sub.parse_args(["--bogus"])
    assert e.value.param == "show"


# ----------------------------------------------------------------------------- the process's edges
def test_closed_pipe_is_141_and_quiet():
    """``python -m verify --list | head -c1``: the reader is gone before the first write."""
    p = subprocess.Popen([*PY, "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    p.stdout.close()                              # closed before verify has written anything
    err = p.stderr.read().decode()
    assert p.wait() == SIGPIPE_STATUS and err == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [[], ["--help"], ["--list"]])
def test_full_disk_is_one_line_naming_the_output(args):
    with open("/dev/full", "w") as full:
        p = subprocess.run([*PY, *args], stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert p.returncode == 1
    assert p.stderr == f"verify: output: cannot write: {os.strerror(errno.ENOSPC)}\n"


@pytest.mark.parametrize("jobs, after", [("1", 1.0), ("2", 1.0), ("2", 3.0)])
def test_ctrl_c(jobs, after):
    """SIGINT to verify (a run of many seconds) 1 s after it has started checking (its first line is out),
    and 3 s after (the workers are running by then): status 130, one line.  The whole process group gets it, as
    a terminal's Ctrl-C does, and no worker is left behind.  Waiting for the first line, not a fixed time,
    keeps the signal out of the interpreter's start-up on a loaded machine."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([*PY, "--jobs", jobs], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT, start_new_session=True, env=env)
    first = p.stdout.readline()
    assert first.startswith("verify: "), first
    time.sleep(after)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate()
    assert p.returncode == SIGINT_STATUS
    assert err == "verify: interrupted\n"
    left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert left == []


@pytest.mark.parametrize("args, names", [
    (["--model", ""], "model"),
    (["--model", "latency.littles_law", "--model", ""], "model"),
    (["--model", "no.such.check"], "model"),
    (["--jobs", "0"], "usage"),
    (["--jobs", "257"], "usage"),
    (["--jobs", "two"], "usage"),
    (["--l2-draws", "-1"], "usage"),
    (["--l2-draws", "100001"], "usage"),
    (["--l2-draws", "5", "--model", "gemm"], "l2-draws"),
    (["--l2-shapes", "--jobs", "2"], "l2-shapes"),
    (["--l2-shapes", "--jobs", "1"], "l2-shapes"),
    (["--l2-shapes", "--model", "x"], "l2-shapes"),          # the flag given, not its sibling
    (["--l2-shapes", "--l2-draws", "5", "--list"], "l2-draws"),
    (["--jobs", "Auto"], "usage"),
    (["--l2-draws", "5", "--full"], "l2-draws"),
])
def test_bad_usage_is_one_line_naming_what(args, names, capsys):
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"verify: {names}: ")


def test_an_empty_model_is_refused_from_the_shell():
    p = _verify("--model", "")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("verify: model: ") and len(p.stderr.splitlines()) == 1


def test_help_names_the_new_flags(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--jobs", "--l2-draws", "--l2-shapes", "130", "141"):
        assert flag in out


# ----------------------------------------------------------------------------- --jobs
def test_jobs_two_gives_a_serial_runs_reports(capsys):
    """The table of ``--jobs 2`` is the serial table, column by column but the seconds."""
    args = ["--model", "latency", "--model", "gemm.tiled", "--model", "decode.gqa_ratio"]
    assert cli.main(args + ["--jobs", "1"]) == 0
    serial = capsys.readouterr().out.splitlines()
    assert cli.main(args + ["--jobs", "2"]) == 0
    parallel = capsys.readouterr().out.splitlines()
    assert parallel[0] == serial[0] + ", 2 jobs"

    def table(lines):
        return [line.split("|")[1:6] for line in lines if line.startswith("|")]
    assert table(parallel) == table(serial) and len(table(serial)) == 2 + 8
    assert parallel[-1] == serial[-1]


@pytest.mark.parametrize("given", [[], ["--jobs", "auto"]])
def test_the_default_is_one_job_per_usable_cpu(capsys, monkeypatch, given):
    """No ``--jobs`` (or ``--jobs auto``) starts one worker per CPU the process may use, capped by the checks."""
    import base.pool
    monkeypatch.setattr(cli, "usable_cpus", lambda: 3)           # the default's
    monkeypatch.setattr(base.pool, "usable_cpus", lambda: 3)     # --jobs auto's (base.pool.jobs_from)
    assert cli.main(["--model", "latency.pipeline", "--model", "gemm.tiled", *given]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(", 2 jobs")     # two checks: two workers
    assert cli.main(["--model", "latency", *given]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(", 3 jobs")
    assert cli.main(["--model", "gemm.tiled", *given]) == 0                 # one check runs here
    assert capsys.readouterr().out.splitlines()[0].endswith("hypothesis seed 0")


def test_run_checks_on_a_process_pool_equals_serial():
    checks = registry.select(["latency", "gemm.l2.lru", "decode.packed.ragged"])
    serial = run_checks(checks, seed=3)
    with ProcessPoolExecutor(2, mp_context=get_context("fork")) as pool:
        parallel = run_checks(checks, seed=3, executor=pool)
    assert [_fields(r) for r in parallel] == [_fields(r) for r in serial]
    assert [r.name for r in parallel] == [c.name for c in checks]


def test_an_executor_gets_the_costliest_checks_first():
    """The submission order is by estimated points (the grid's, plus the draws; a listing's twice), counted
    here by hand from each check's grid; the reports still come back in the order asked for."""
    from concurrent.futures import Executor, Future

    from verify import estimated_cost

    class Recording(Executor):
        def __init__(self):
            self.names = []

        def submit(self, fn, *args):
            self.names.append(args[0])
            f = Future()
            f.set_result(fn(*args))
            return f

    checks = registry.select(["latency.littles_law", "gemv.tiled.listing", "decode.gqa_ratio", "gemm.launch"])
    by_hand = {c.name: (len(list(c.grid(False))) + (c.draws if c.strategy is not None else 0))
               * (2 if c.name.endswith(".listing") else 1) for c in checks}
    assert {c.name: estimated_cost(c) for c in checks} == by_hand
    pool = Recording()
    reports = run_checks(checks, executor=pool)
    assert pool.names == [[n] for n in sorted(by_hand, key=lambda n: -by_hand[n])]    # four models: four tasks
    assert [r.name for r in reports] == [c.name for c in checks]


def test_the_checks_of_one_model_are_one_task():
    """A model's checks (the executor's, the listing's) go to one worker together, so the model is built once;
    the tasks are ordered by the sum of their checks' estimates, and the reports by the checks asked for."""
    from concurrent.futures import Executor, Future

    from verify import estimated_cost

    class Recording(Executor):
        def __init__(self):
            self.tasks = []

        def submit(self, fn, *args):
            self.tasks.append(list(args[0]))
            f = Future()
            f.set_result(fn(*args))
            return f

    checks = registry.select(["gemv.tiled.listing", "latency.littles_law", "gemv.tiled"])
    pool = Recording()
    reports = run_checks(checks, executor=pool)
    gemv = [c.name for c in checks if c.name.startswith("gemv.")]         # in the order asked for
    assert sorted(gemv) == ["gemv.tiled", "gemv.tiled.listing"]
    cost = {c.name: estimated_cost(c) for c in checks}
    assert cost[gemv[0]] + cost[gemv[1]] > cost["latency.littles_law"]
    assert pool.tasks == [gemv, ["latency.littles_law"]]
    assert [r.name for r in reports] == [c.name for c in checks]
    assert [_fields(r) for r in reports] == [_fields(run_check(c)) for c in checks]


def test_a_listings_estimate_builds_no_model():
    """The parent counts a listing property's points from its check's grid (``grid_points``), not by running the
    property's grid, which checks the listing against its model (a SymPy build): the workers build it."""
    from verify import estimated_cost
    from verify.checks.listings import LISTING_PROPERTIES
    prop = next(p for p in LISTING_PROPERTIES if p.name == "attention.fa2.fwd.window.listing")
    assert prop.grid_points(False) == len(list(prop.grid(False)))
    assert estimated_cost(prop) == 2 * (prop.grid_points(False) + prop.draws)
    code = ("from verify import estimated_cost, registry\n"
            "from symbolic import registry as models\n"
            "[estimated_cost(c, full) for c in registry.all_checks() for full in (False, True)]\n"
            "print([r.name for r in models.refs() if r._model is not None])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"            # a fresh process: estimating every check built no model


@pytest.mark.skipif("spawn" not in get_all_start_methods(), reason="no spawn start method")
def test_run_checks_finds_checks_by_name_in_a_fresh_interpreter():
    """A spawned worker inherits nothing: it finds the check by name in its own registry (what a Dask
    worker does)."""
    checks = registry.select(["latency.littles_law", "decode.gqa_ratio"])
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        parallel = run_checks(checks, executor=pool)
    assert [_fields(r) for r in parallel] == [_fields(r) for r in run_checks(checks)]


def _wrong_model():
    return Model(name="toy.wrong", summary="toy.halo without the last partial tile's halo",
                 quantities={"reads": N + 2 * sp.floor(N / B), "writes": N, "flops": 3 * N},
                 params=(N, B), defaults={"B": 32})


WRONG = Check(model=ModelRef("toy.wrong", "toy.halo without the last partial tile's halo", _wrong_model),
              execute=halo_brute_force, grid=lambda full: [dict(N=50, B=8), dict(N=3, B=2), dict(N=4, B=2)])


def test_a_disagreement_in_a_worker_is_the_serial_one(monkeypatch):
    """N = 3, B = 2: formula 3 + 2 floor(3/2) = 5, the brute force 3 + 2 ceil(3/2) = 7 (by hand); the
    worker reports that smallest failure and the serial counts: 3 points, 1 agreed."""
    register_toy_checks(monkeypatch, halo_check(), WRONG)
    checks = registry.select(["toy.halo", "toy.wrong"])
    with ProcessPoolExecutor(2, mp_context=get_context("fork")) as pool:
        halo_rep, wrong_rep = run_checks(checks, executor=pool)
    assert (halo_rep.points, halo_rep.failed) == (18, 0)
    assert (wrong_rep.points, wrong_rep.agreed, wrong_rep.failed) == (3, 1, 2)
    bad = wrong_rep.smallest_failure()
    assert bad.point == {"N": 3, "B": 2} and (bad.formula["reads"], bad.executed["reads"]) == (5, 7)
    assert [_fields(r) for r in run_checks(checks)] == [_fields(halo_rep), _fields(wrong_rep)]


def test_run_checks_refuses_what_it_cannot_send():
    pts = [dict(N=4, B=2)]
    ad_hoc = Check(model=WRONG.model, execute=halo_brute_force, grid=lambda full: pts, name="toy.adhoc")
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(BadInput) as e:
            run_checks([ad_hoc], executor=pool)
    assert e.value.param == "checks" and "toy.adhoc" in e.value.problem
    assert run_checks([ad_hoc])[0].agreed == 1            # serially it runs
    for kw, param in (({"executor": "two processes"}, "executor"), ({"full": "yes"}, "full"),
                      ({"seed": 1.5}, "seed")):
        with pytest.raises(BadInput) as e:
            run_checks(registry.select("latency.littles_law"), **kw)
        assert e.value.param == param
    with pytest.raises(BadInput) as e:
        run_checks(["latency.littles_law"])
    assert e.value.param == "checks"
    with pytest.raises(BadInput) as e:
        verify.run_named("no.such.check")
    assert e.value.param == "check"


def test_run_checks_reports_each_check_and_point():
    checks = registry.select(["latency.littles_law", "decode.gqa_ratio"])
    done, points = [], []
    reports = run_checks(checks, on_report=done.append, on_point=lambda r: points.append((r.name, r.points)))
    assert done == reports
    for r in reports:                                     # every point of a serial run, one by one
        assert [n for name, n in points if name == r.name] == list(range(1, r.points + 1))


# ----------------------------------------------------------------------------- progress
@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_on_a_terminal_only():
    """With stderr on a terminal, a run (the GEMV listing's walk; the bar is asked for at once, so its
    length does not matter) draws a bar: checks done
    of the total, the points, elapsed and an estimate ('<').  Off a terminal nothing: the fuzz below and
    every run of these tests with stderr on a pipe find stderr empty."""
    master, slave = pty_with_size()
    env = {**os.environ, "TILEBOUND_PROGRESS_AFTER": "0"}         # at once: the run's length is the machine's
    p = subprocess.Popen([*PY, "--model", "gemv.tiled.listing"], stdout=subprocess.PIPE, stderr=slave, cwd=ROOT,
                         env=env)
    os.close(slave)
    shown = drain(master).decode("utf-8", "replace")
    p.stdout.read()
    assert p.wait() == 0
    os.close(master)
    assert "verify:" in shown and "/1 [" in shown and "points" in shown and "check" in shown and "<" in shown


def test_progress_waits_before_it_shows(monkeypatch):
    """Nothing before SHOW_AFTER seconds; then done/total and the note."""
    master, slave = pty_with_size()
    stream = os.fdopen(slave, "w")
    monkeypatch.setattr(console, "SHOW_AFTER", 0.6)
    os.set_blocking(master, False)

    def read():
        try:
            return os.read(master, 65536).decode("utf-8", "replace")
        except BlockingIOError:
            return ""
    with console.progress(3, "task", unit="check", stream=stream) as shown:
        shown.advance(note="5 points")
        assert read() == ""                               # too early to show
        time.sleep(0.9)
        shown.advance(note="9 points")
        text = read()
    stream.close()
    os.close(master)
    assert "task:" in text and "2/3" in text and "9 points" in text


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("after,drawn", [(0.0, True), (30.0, False)])
def test_the_last_step_is_drawn_at_once_once_the_bar_shows(monkeypatch, after, drawn):
    """A run that ends within tqdm's redraw interval still shows its last figures; before SHOW_AFTER nothing."""
    master, slave = pty_with_size()
    stream = os.fdopen(slave, "w")
    monkeypatch.setattr(console, "SHOW_AFTER", after)
    os.set_blocking(master, False)
    with console.progress(1, "task", unit="check", stream=stream) as shown:
        shown.advance(note="7 points")
        text = ""
        while select.select([master], [], [], 0.5)[0]:       # a pty passes its output on a moment later
            text += os.read(master, 65536).decode("utf-8", "replace")
    stream.close()
    os.close(master)
    assert ("1/1" in text and "7 points" in text) is drawn
    assert drawn or text == ""


def test_no_progress_off_a_terminal(tmp_path):
    with open(tmp_path / "log", "w") as log:
        with console.progress(2, "task", stream=log) as shown:
            shown.advance(note="1 point")
            shown.tick()
    assert (tmp_path / "log").read_text() == ""


# ----------------------------------------------------------------------------- the L2 report
def test_l2_report_from_the_command_line(capsys):
    assert cli.main(["--l2-draws", "5", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "5 adversarial points (seed 3): exact LRU count == simulation at 5 of 5 points" in out
    assert out.rstrip().endswith("no disagreement")


def test_the_old_program_says_where_it_went():
    p = subprocess.run([sys.executable, "-m", "verify.gemm", "--draws", "5"], capture_output=True, text=True,
                       cwd=ROOT)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == "verify.gemm: moved: run python -m verify --l2-draws N [--seed S] [--l2-shapes]\n"


# ----------------------------------------------------------------------------- the fuzz
PATTERNS = CHEAP + ["attention.standard.*", "decode.gqa*", "", "no.such", "gemm.launh", "*nomatch*", "-1",
                    "latency.littles_law,gemm.launch"]
INTS = ["0", "1", "2", "3", "-1", "-0", "257", "1_0", "0x10", "1e3", "1.5", "", "x", "2**64", "10**30",
        str(2**64), str(10**30), "9" * 5000, " 2 ", "nan"]
FLAGS = ["--full", "--list", "--l2-shapes", "--seed", "--jobs", "--l2-draws", "--model", "--bogus", "-x", "--",
         "--jobs=2", "--seed=-7", "--model=", "--full=1", "--l2", "--list-all", "-h"]
TAKES = {"--seed": INTS, "--jobs": ["1", "2", "auto"] + INTS, "--l2-draws": INTS, "--model": PATTERNS}


@st.composite
def verify_argvs(draw):
    """A cheap ``--model`` first (so that a run that gets through stays short), then flags with values
    from the pools and plain junk; the L2 report is refused beside --model, so it never runs long here."""
    argv = ["--model", draw(st.sampled_from(CHEAP))]
    for _ in range(draw(st.integers(0, 6))):
        flag = draw(st.sampled_from(FLAGS + ["JUNK"]))
        if flag == "JUNK":
            argv.append(draw(st.text(max_size=6)))
            continue
        argv.append(flag)
        if flag in TAKES and draw(st.integers(0, 9)) > 0:      # mostly with its value, sometimes without
            argv.append(draw(st.sampled_from(TAKES[flag])))
    return argv


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(verify_argvs())
@example(["--model", "gemm.launch", "--model", ""])
@example(["--model", "gemm.launch", "--jobs", "2", "--full"])
@example(["--model", "gemm.launch", "--seed", str(10**30), "--full"])
@example(["--model", "gemm.launch", "--seed", "9" * 5000])
@example(["--model", "gemm.launch", "--l2-draws", "5"])
@example(["--model", "gemm.launch", "--jobs", str(2**64)])
@example(["--model", "gemm.launch", "--", "--full"])
@example(["--model", "gemm.launch", "--list", "--jobs", "0"])
@example(["--model", "latency.littles_law", "\x85"])                 # NEL: a line break to str.splitlines
@example(["--model", "no\nsuch\u2028check"])
def test_fuzz_verify_flags(argv):
    import io
    from contextlib import redirect_stderr, redirect_stdout
    err, out = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli.main(argv)                # any exception but the handled ones fails here, as a traceback would
    lines = err.getvalue().splitlines()
    assert status in (0, 1, 2), (argv, status, lines)
    if status == 2:
        assert len(lines) == 1 and lines[0].startswith("verify: "), (argv, lines)
    else:
        assert lines == [], (argv, lines)      # stderr is no terminal here: no progress either
    assert "Traceback" not in err.getvalue()
