"""``tilebound tune``: the score table, the plot, buckets, the cache, and one-line exit 2 on bad input.

Figures are checked against the schedule space's own answers (``landscape``'s optimum) or against what the
command was asked (runs = seeds x shapes)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilebound.cli import main
from tilebound.output import is_ours
from tuning import schedule

ROOT = Path(__file__).resolve().parents[2]


def needs(module: str, extra: str, what: str):
    """Skip (saying why) when ``module`` of an extra is not installed: the command then refuses, as tested below."""
    return pytest.mark.skipif(importlib.util.find_spec(module) is None,
                              reason=f"{what} needs {module}: the {extra} extra (pip install 'tilebound[{extra}]')")


def run(capsys, *argv):
    rc = main(["tune", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def rows(out: str, name: str) -> list[list[str]]:
    """Table rows whose first cell is ``name``, split on two or more spaces."""
    import re
    return [re.split(r"\s{2,}", ln.strip()) for ln in out.splitlines() if ln.split()[:1] == [name]]


@needs("optuna", "tune", "the tpe strategy")
def test_the_issue_command_prints_the_score_table(capsys):
    rc, out, err = run(capsys, "--gpu", "H100", "--shape", "4096,4096,4096", "--strategy", "tpe", "--budget", "30",
                       "--seeds", "3")
    assert rc == 0, err
    assert "best/opt at 30" in out and "P at 30" in out and "evals to 5%" in out
    (row, by_t) = rows(out, "tpe")
    assert row[1] == "3"                                                 # 3 seeds x 1 shape
    assert by_t[0] == "tpe" and len(by_t) == 4                           # t = 10, 25, 30
    opt = schedule.landscape(4096, 4096, 4096).best_time
    assert f"optimum {opt * 1e6:.2f} us" in out


def test_exhaustive_over_the_whole_space_finds_the_optimum(capsys):
    rc, out, _ = run(capsys, "--shape", "16,4096,4096", "--strategy", "exhaustive,random", "--budget", "6000",
                     "--seeds", "1")
    assert rc == 0
    ex, rnd = rows(out, "exhaustive")[0], rows(out, "random")[0]
    assert ex[2].startswith("1.000") and rnd[2].startswith("1.000")     # every config measured: the optimum


def test_pooled_and_per_shape_tables_for_the_course(capsys):
    rc, out, _ = run(capsys, "--shapes", "course", "--strategy", "random,triton", "--budget", "20", "--seeds", "2",
                     "--per-shape", "--format", "markdown")
    assert rc == 0
    assert out.count("| random") == 4 + 2                                # 4 per-shape tables + pooled + by-t
    runs = [ln.split("|")[2].strip() for ln in out.splitlines() if ln.startswith("| random") and "%" in ln]
    assert runs == ["2"] * 4 + ["8"]                                     # 2 seeds a shape; pooled 4 x 2


@needs("matplotlib", "plot", "the plot")
def test_plot_draws_a_marked_image(capsys, tmp_path):
    path = tmp_path / "scores.png"
    rc, out, err = run(capsys, "--shape", "2048,2048,512", "--strategy", "random,genetic", "--budget", "15",
                       "--seeds", "3", "--plot", str(path))
    assert rc == 0, err
    assert path.read_bytes()[:4] == b"\x89PNG" and is_ours(str(path))
    assert f"wrote {path}" in out


def test_plot_refuses_a_file_it_did_not_write(capsys, tmp_path):
    path = tmp_path / "mine.png"
    path.write_bytes(b"precious")
    rc, _, err = run(capsys, "--shape", "16,16,16", "--strategy", "random", "--budget", "5", "--seeds", "1",
                     "--plot", str(path))
    assert rc == 2 and err.startswith("tilebound: plot:") and path.read_bytes() == b"precious"


@needs("filelock", "tune", "writing the cache")
def test_cache_replays_and_refuses_a_corrupt_file(capsys, tmp_path):
    args = ("--shape", "16,4096,4096", "--strategy", "random", "--budget", "10", "--seeds", "2",
            "--cache", str(tmp_path))
    rc, out1, err = run(capsys, *args)
    assert rc == 0 and "6000 config measurements added" in err
    rc, out2, err = run(capsys, *args)
    assert rc == 0 and "0 config measurements added" in err
    # every score replays exactly; the last column is the strategy's own wall-clock overhead, which varies
    assert [r[:-1] for r in rows(out1, "random") if r[-1].endswith("s")] == \
        [r[:-1] for r in rows(out2, "random") if r[-1].endswith("s")]
    assert [r for r in rows(out1, "random") if not r[-1].endswith("s")] == \
        [r for r in rows(out2, "random") if not r[-1].endswith("s")]
    path = tmp_path / "H100" / "M16_N4096_K4096.json"
    doc = json.loads(path.read_text())
    doc["space_version"] = "ffffffffffffffff"
    path.write_text(json.dumps(doc))
    rc, out, err = run(capsys, *args)
    assert rc == 2 and out == "" and err.startswith("tilebound: cache:") and err.count("\n") == 1
    path.write_text("{not json")
    rc, _, err = run(capsys, *args)
    assert rc == 2 and err.startswith("tilebound: cache:") and "corrupt" in err


def _hand_written_cache(folder: Path, entries_json: str, fmt: str = "1") -> None:
    """A cache file for 64,64,64 written by hand (the right space, GPU and key) with ``entries_json`` as its
    entries and ``fmt`` as its format (JSON text: a huge int, a long key)."""
    from tuning.cache import space_version
    path = folder / "H100" / "M64_N64_K64.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {"format": "@F", "gpu": "H100", "space_version": space_version("H100"), "key": "M64_N64_K64",
            "knobs": list(schedule.SPACE), "entries": "@E"}
    path.write_text(json.dumps(head).replace('"@F"', fmt).replace('"@E"', entries_json))


@needs("filelock", "tune", "writing the cache")
@pytest.mark.parametrize("entries,fmt", [
    ('{"16,16,16,1,1,1": 1' + "0" * 400 + "}", "1"),                # 10**400 s: was an OverflowError traceback
    ('{"' + "1," * 5000 + '1": 1e-05}', "1"),                       # a 10k-character key: was printed in full
    ('{"16,16,16,1,1,1": 1e-05}', "true"),                          # format true: was read as format 1
    ('{" 16,16,16,1,1,1": 1e-05}', "1"),                            # stray spaces: was read as the config
], ids=["time-10**400", "key-10k-chars", "format-true", "key-spaces"])
def test_a_hostile_cache_file_is_one_short_line_and_exit_2(capsys, tmp_path, entries, fmt):
    _hand_written_cache(tmp_path, entries, fmt)
    rc, out, err = run(capsys, "--shape", "64,64,64", "--strategy", "random", "--budget", "10", "--seeds", "2",
                       "--cache", str(tmp_path))
    assert rc == 2 and out == "", err
    assert err.startswith("tilebound: cache:") and err.count("\n") == 1 and len(err) < 400, err
    assert "corrupt" in err and "delete it" in err


def test_buckets_table(capsys):
    rc, out, err = run(capsys, "--buckets", "--shape", "100,4096,4096", "--shape", "128,4096,4096")
    assert rc == 0, err
    for scheme in ("pow2", "pow2up", "vllm"):
        assert [r[1] for r in rows(out, scheme)] == ["decode", "all"]     # both M <= 256: no prefill row
    (vllm, _) = rows(out, "vllm")
    assert vllm[3] == "2" and float(vllm[7]) >= 1.0   # buckets 96 and 128: M = 128 is its own; 100 -> 96
    (pow2, _) = rows(out, "pow2")
    assert pow2[3] == "1" and float(pow2[7]) >= 1.0   # both in bucket 128


@pytest.mark.parametrize("argv,param", [
    (["--strategy", "bogus"], "strategy"),
    (["--strategy", "tpe,tpe"], "strategy"),
    (["--gpu", "TPU"], "gpu"),
    (["--budget", "0"], "budget"),
    (["--budget", "-5"], "budget"),
    (["--budget", "6001"], "budget"),
    (["--budget", "ten"], "budget"),
    (["--seeds", "0"], "seeds"),
    (["--shape", "0,4096,4096"], "M"),
    (["--shape", "16,-1,4096"], "N"),
    (["--shape", "16,4096"], "shape"),
    (["--shapes", "llama"], "shapes"),
    (["--shape", "1,2,3", "--shapes", "course"], "shape"),
    (["--seeds", "100", "--max-runs", "50"], "seeds"),
    (["--buckets", "--learned"], "buckets"),
    (["--buckets", "--plot", "x.png"], "plot"),
    (["--cache", ""], "cache"),
    (["--shape", f"{10**30},4096,4096"], "shape"),                    # beyond the time model's int64 counts
    (["--shape", f"{2**40},{2**40},4096"], "shape"),
    (["--buckets", "--shape", f"{10**30},4096,4096"], "shape"),
    (["--learned", "--shape", f"{2**62},16,16"], "shape"),
    (["--shape", "10**30,4096,4096"], "shape"),                       # read as --at reads it: beyond the model
    (["--shape", "1" * 5000 + ",4096,4096"], "M"),                   # more digits than a number may have
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, param):
    base = [] if {"--shape", "--shapes", "--buckets"} & set(argv) else ["--shape", "16,16,16"]
    if "--strategy" not in argv:
        base += ["--strategy", "random"]                  # no extra needed before the refusal under test
    rc, out, err = run(capsys, *base, *argv)
    assert rc == 2, (out, err)
    assert err.startswith(f"tilebound: {param}:") and err.count("\n") == 1, err
    assert out == ""


@pytest.mark.parametrize("shape", [f"{2**40},{2**40},4096", f"{10**30},4096,4096"])
def test_a_huge_shape_is_one_line_on_stderr_with_no_numpy_warning(shape):
    """Run as a user does (a fresh process, warnings shown): one line naming shape, exit 2, nothing else."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", "PYTHONWARNINGS": "default"}
    proc = subprocess.run([sys.executable, "-m", "tilebound", "tune", "--shape", shape, "--strategy", "random",
                           "--budget", "10", "--seeds", "1"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("tilebound: shape:") and proc.stderr.count("\n") == 1, proc.stderr


def test_the_single_shape_report_names_the_optimum_in_the_models_names(capsys):
    rc, out, err = run(capsys, "--shape", "4096,4096,4096", "--strategy", "random", "--budget", "10", "--seeds", "1")
    assert rc == 0, err
    best = schedule.landscape(4096, 4096, 4096).best(1)[0][0]
    assert f"({best})" in out and "B_M=256 B_N=128" in out and "G_M=" in out


def test_without_the_tune_extra_the_command_names_it(capsys, monkeypatch):
    for mod in list(sys.modules):
        if mod == "optuna" or mod.startswith("optuna."):
            monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "optuna", None)
    rc, out, err = run(capsys, "--shape", "16,16,16", "--strategy", "random,tpe", "--budget", "5", "--seeds", "1")
    assert rc == 2 and out == ""
    assert err.startswith("tilebound: strategy:") and "pip install 'tilebound[tune]'" in err


def test_without_matplotlib_the_plot_names_the_plot_extra(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    rc, out, err = run(capsys, "--shape", "16,16,16", "--strategy", "random", "--budget", "5", "--seeds", "1",
                       "--plot", str(tmp_path / "x.png"))
    assert rc == 2 and err.startswith("tilebound: plot:") and "tilebound[plot]" in err


def test_tune_is_found_by_discovery():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "tilebound", "--help"], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0 and "tune" in proc.stdout


@pytest.mark.slow
@needs("sklearn", "tune", "the learned model")
def test_learned_report(capsys):
    rc, out, err = run(capsys, "--learned")
    assert rc == 0, err
    (course,) = rows(out, "course")
    assert float(course[2]) > 0.9                                         # Spearman rho on the course's four
    assert float(course[6]) < float(course[7])                            # beats the constant predictor


def test_the_docs_commands_draw_into_scratch_and_make_figures_redraws_the_tracked_ones():
    """docs/tuning.md's tune commands write their plots under /tmp (running them leaves the checkout clean);
    docs/make_figures.py runs the same commands into the tracked figures the page shows."""
    import importlib.util as iu
    import re
    import shlex
    page = (ROOT / "docs" / "tuning.md").read_text(encoding="utf-8")
    commands = [shlex.split(c.replace("\\\n", " ")) for c in re.findall(r"^(tilebound tune [^`]*?)\n(?=```)", page, re.M)
                if "--plot " in c and "[" not in c]                       # the examples, not the synopsis
    assert len(commands) == 2
    spec = iu.spec_from_file_location("make_figures", ROOT / "docs" / "make_figures.py")
    mf = iu.module_from_spec(spec)
    spec.loader.exec_module(mf)
    for argv in commands:
        plot = argv[argv.index("--plot") + 1]
        assert plot.startswith("/tmp/"), plot
        tracked = f"docs/{Path(plot).name}"
        assert (ROOT / tracked).exists() and f"]({Path(plot).name})" in page          # the page shows it
        want = [a if a != plot else tracked for a in argv[1:]]
        assert mf.FIGURES[tracked] == want


# ------------------------------------------------------------------------ --space splitk (issue 20)
def test_space_splitk_prints_the_split_k_spaces_choice_per_shape(capsys):
    """The CLI's wiring: one row per shape with the API's choice (tuning.splitk_space.best_splitk, whose time
    model tests/unit/test_gemm_splitk_space.py checks); the data-parallel space is untouched by the option."""
    from tilebound.cli import main
    from tuning.splitk_space import best_splitk
    assert main(["tune", "--space", "splitk", "--shape", "1,1024,4096", "--shape", "16,28672,4096"]) == 0
    out = capsys.readouterr().out
    for shape in ((1, 1024, 4096), (16, 28672, 4096)):
        row = next(ln for ln in out.splitlines() if ln.startswith("x".join(map(str, shape)) + " "))
        assert row.split()[1] == str(best_splitk(*shape, "H100").S_k)
        assert str(best_splitk(*shape, "H100").best.config) in row


@pytest.mark.parametrize("flag", [["--buckets"], ["--learned"], ["--per-shape"], ["--plot", "/tmp/x.png"]])
def test_space_splitk_refuses_the_score_tables_options(capsys, flag):
    from tilebound.cli import main
    assert main(["tune", "--space", "splitk", *flag]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--space splitk" in err


def test_max_runs_reaches_the_scores(capsys, monkeypatch):
    """``--max-runs`` raises the scores' own cap too (``tuning.scores.run_many``'s ``max_runs``, 20,000 by
    default): 20,001 seeds under ``--max-runs 30000`` are planned, not refused by the library's default."""
    import tuning.scores

    seen = []

    def fake(name, shapes, budget, seeds, **kw):
        seen.append((seeds, kw.get("max_runs")))
        raise KeyboardInterrupt                          # stop before any work: the call is what is checked
    monkeypatch.setattr(tuning.scores, "run_many", fake)
    rc, _, err = run(capsys, "--shape", "16,16,16", "--strategy", "random", "--seeds", "20001",
                     "--max-runs", "30000")
    assert rc == 130 and seen == [(20001, 30000)], err
