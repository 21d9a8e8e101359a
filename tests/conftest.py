"""Shared fixtures.  ``course_script`` lays a seed script into a temporary lecture tree beside a copy
of ``course/`` and runs it unchanged (skipped when ``../shared/seeds`` is absent, a failure under
``CI=true``).  ``toys`` puts the toy models of ``toy_models.py`` into the model registry for one test.

``@pytest.mark.extra("plot")`` marks a test that needs an optional extra of ``pyproject.toml``
(:data:`EXTRAS`: ``plot`` is matplotlib; ``tune`` is optuna, cmaes and scikit-learn): without it installed
the test is skipped, with a reason naming the extra and how to install it - never an error."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"

#: the optional extras (pyproject.toml's optional-dependencies) and the modules each brings
EXTRAS = {"plot": ("matplotlib",), "tune": ("optuna", "cmaes", "sklearn")}


def pytest_configure(config):
    config.addinivalue_line("markers", "extra(name, ...): needs the optional extra(s) of pyproject.toml; "
                                       "skipped with the reason when one is absent")


def missing_extra(*names: str) -> str | None:
    """The skip reason when a module of one of the extras ``names`` is not installed, else None."""
    for name in names:
        if name not in EXTRAS:
            raise ValueError(f"unknown extra {name!r}; the extras are {', '.join(EXTRAS)}")
        absent = [m for m in EXTRAS[name] if importlib.util.find_spec(m) is None]
        if absent:
            return (f"needs the {name} extra ({', '.join(absent)} not installed): "
                    f"pip install -e '.[{name}]'")
    return None


def pytest_runtest_setup(item):
    for mark in item.iter_markers(name="extra"):
        reason = missing_extra(*mark.args)
        if reason:
            pytest.skip(reason)


#: seed file -> (script name, lecture folder), from shared/seeds/README.md
COURSE_SCRIPTS = {
    "lecture11": ("000_079193a6ac0c0fca.txt", "02_flash_forward.py"),
    "lecture08": ("003_cd1affdb86493909.txt", "04_async_pipelines.py"),
    "lecture13": ("004_b1a68824c288e7cd.txt", "03_gpu_schedule_space.py"),
}


def run_course_script(lecture: str, tmp_path: Path) -> tuple[str, float]:
    """Run the lecture's seed script unchanged; returns (stdout, wall seconds).  Fails on non-zero exit."""
    seed, script = COURSE_SCRIPTS[lecture]
    src = SEEDS / seed
    if not src.exists():
        if os.environ.get("CI", "").lower() == "true":     # CI must run the course scripts, not skip them
            pytest.fail(f"course seed {src} not present under CI: the checkout needs ../shared/seeds")
        pytest.skip(f"course seed {src} not present")
    tree = tmp_path / "course"
    shutil.copytree(ROOT / "course", tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / lecture).mkdir(exist_ok=True)
    dst = tree / lecture / script
    shutil.copyfile(src, dst)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONIOENCODING"] = "utf-8"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, script], cwd=dst.parent, env=env, capture_output=True, text=True,
                          encoding="utf-8", timeout=600)
    wall = time.perf_counter() - t0
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout, wall


@pytest.fixture
def course_script(tmp_path):
    return lambda lecture: run_course_script(lecture, tmp_path)


@pytest.fixture
def toys(monkeypatch):
    """The toy models of ``toy_models.py`` in the model registry for one test (and out of it after)."""
    from toy_models import register_toys
    register_toys(monkeypatch)


#: the families the fast notes tests print (every group but the newest families; the slow tests take every model)
FAST_NOTES = ("attention.*", "decode.*", "gemm.*", "gemv.*", "latency.*")


@pytest.fixture(scope="session")
def fast_notes(tmp_path_factory) -> str:
    """``tilebound latex FAST_NOTES --standalone --no-figures -o notes.tex``, run once a test process: the
    text of the notes the scan, compile and lint tests each check (they built the same document three
    times).  The command must exit 0."""
    from tilebound.cli import main
    out = tmp_path_factory.mktemp("fast_notes") / "notes.tex"
    assert main(["latex", *FAST_NOTES, "--standalone", "--no-figures", "-o", str(out)]) == 0
    return out.read_text()
