"""Finding the listings and their ``<model>.listing`` properties builds no model: ``python -m verify --list``
builds none, ``--model X`` only X's (each run in a fresh interpreter, the built models read off the
registry's :class:`~symbolic.registry.ModelRef` objects afterwards).  The attention listings name their value
width (``d`` or ``d_v``) instead of asking their model at import; checked here against each model's own
parameters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from symbolic.listings import Loop, discovered, listing_for

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import contextlib, io, json, sys
from verify.__main__ import _main
from symbolic import registry
with contextlib.redirect_stdout(io.StringIO()) as out:
    status = _main(sys.argv[1:])
print(json.dumps({"status": status, "out": out.getvalue(),
                  "built": sorted(r.name for r in registry.refs() if r._model is not None)}))
"""


def _verify(*argv) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, env=env,
                          cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_listing_the_checks_builds_no_model():
    got = _verify("--list")
    assert got["status"] == 0 and got["built"] == []
    listed = {line.split()[0] for line in got["out"].splitlines() if line.strip()}
    # every listing's property is listed, by its model's name, with its title
    assert {f"{name}.listing" for name in discovered()} <= listed
    assert "gemv.tiled.listing" in listed and "attention.fa2.fwd.window.listing" in listed


@pytest.mark.parametrize("pattern, model", [("gemv.tiled*", "gemv.tiled"), ("gemm.tiled.listing", "gemm.tiled")])
def test_running_one_models_checks_builds_that_model_only(pattern, model):
    got = _verify("--model", pattern)
    assert got["status"] == 0, got["out"]
    assert got["built"] == [model]
    assert f"| {model}.listing " in got["out"] and " 0 failed" in got["out"]


def _symbols(listing) -> set:
    out = set()
    for item, _, _ in listing.walk():
        exprs = (item.lo, item.hi) if isinstance(item, Loop) else (item.reads, item.writes)
        for e in exprs:
            out |= {s.name for s in sp.sympify(e).free_symbols}
    return out


@pytest.mark.parametrize("name", sorted(n for n in discovered() if n.startswith("attention.")))
def test_an_attention_listing_uses_d_v_exactly_when_its_model_has_it(name):
    listing = listing_for(name)
    has = any(p.name == "d_v" for p in listing.model.params)
    assert ("d_v" in _symbols(listing)) is has
