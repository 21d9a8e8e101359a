"""Layering: which package of the project may import which, checked two ways, plus "one of each".

:data:`ALLOWED` is the one table of rules (issue 8, "Layers"); every other rule here is derived from
it.  A package may import itself and the packages its row lists, nothing else of ours - not even
lazily inside a function.  Nobody imports ``tilebound`` (the command line and its report glue) but
``tilebound`` itself; the console script ``tilebound = "tilebound.cli:main"`` is its entry point.

Each forbidden pair ``(P, Q)`` is checked

* **dynamically**: a fresh interpreter (one per package ``P``) imports ``P`` and every module
  :func:`pkgutil.walk_packages` finds in it (``__main__`` modules excepted: they run code) and
  fails if a module of ``Q`` was ever loaded; a recording meta-path finder says which module of ours,
  at which line, loaded it first;
* **statically**: every ``.py`` file under ``P`` is parsed and every ``import``/``from ... import``
  (at any depth: a lazy import inside a function counts) and every ``importlib.import_module`` /
  ``__import__`` with a literal name is checked against the table.

The checkers take the root and the table as arguments; ``test_checker_*`` run them on small
synthetic layouts in a temporary directory to show that they can fail and can pass.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: THE table: package -> the packages of ours it may import (besides itself).
ALLOWED: dict[str, frozenset[str]] = {
    "base": frozenset(),
    "symbolic": frozenset({"base"}),
    "numeric": frozenset({"base"}),
    "printing": frozenset({"base", "symbolic"}),
    "tuning": frozenset({"base", "symbolic"}),
    "verify": frozenset({"base", "symbolic", "numeric", "tuning"}),
    "tilebound": frozenset({"base", "symbolic", "numeric", "printing", "tuning", "verify"}),
}
PACKAGES = tuple(ALLOWED)

#: modules the restructure removes (issue 8); they must not come back
GONE = ("symbolic/cli.py", "symbolic/symbols.py", "symbolic/schedule.py", "symbolic/gemm_args.py",
        "numeric/_args.py", "numeric/blas.py", "symbolic/printing/__init__.py")

#: text no module of ours may contain: the project cites primary sources or docs/conventions.md
OUTSIDE_CITATIONS = ("REFERENCE.md", "REFERENCE §", "shared/")


def forbidden_pairs(allowed: dict[str, frozenset[str]]) -> list[tuple[str, str]]:
    """Every ``(P, Q)`` with ``P`` not allowed to import ``Q``, in table order."""
    return [(p, q) for p in allowed for q in allowed if q != p and q not in allowed[p]]


def rule_id(pair: tuple[str, str]) -> str:
    return f"{pair[0]} must not import {pair[1]}"


RULES = forbidden_pairs(ALLOWED)


# ------------------------------------------------------------------------------------------ files
_SKIP_DIRS = {"__pycache__", "build", "dist", "node_modules"}


def python_files(top: Path) -> list[Path]:
    """The ``.py`` files under ``top`` (hidden, build and cache folders pruned), sorted."""
    out = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in _SKIP_DIRS or d.endswith(".egg-info"))]
        out.extend(Path(folder) / f for f in files if f.endswith(".py"))
    return sorted(out)


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# ----------------------------------------------------------------------------------------- static
@dataclass(frozen=True)
class Import:
    """One import statement of a module of ours: the package that imports, the module it names."""

    importer: str        # the package (top-level) of the importing file
    target: str          # the absolute module name imported
    path: str            # the importing file, relative to the root
    line: int
    text: str            # the statement as written

    @property
    def target_package(self) -> str:
        return self.target.partition(".")[0]

    def where(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str | None:
    """``from <level dots><name> import ...`` inside ``module``; None when it climbs past the top."""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 > len(parts) - 1:
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([name] if name else []))


_DYNAMIC_IMPORTERS = {"import_module", "__import__"}


def imports_of(root: Path, path: Path) -> list[Import]:
    """Every import in one file, at any depth, with names made absolute."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    module = _module_name(root, path)
    importer = module.partition(".")[0]
    is_package = path.name == "__init__.py"
    rel = path.relative_to(root).as_posix()
    lines = source.splitlines()
    found = []

    def add(target: str, node: ast.AST):
        text = lines[node.lineno - 1].strip() if node.lineno - 1 < len(lines) else ""
        found.append(Import(importer, target, rel, node.lineno, text))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = _resolve_relative(module, is_package, node.level, node.module)
                add(target if target is not None else "<relative import beyond the top level>", node)
            else:
                add(node.module, node)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _DYNAMIC_IMPORTERS:
                add(node.args[0].value, node)
    return found


def static_breaks(root: Path, allowed: dict[str, frozenset[str]]) -> dict[tuple[str, str], list[str]]:
    """For each forbidden pair ``(P, Q)``: where a file under ``P`` imports ``Q`` (file:line: statement)."""
    breaks: dict[tuple[str, str], list[str]] = {pair: [] for pair in forbidden_pairs(allowed)}
    for pkg in allowed:
        for path in python_files(root / pkg):
            for imp in imports_of(root, path):
                q = imp.target_package
                if (pkg, q) in breaks:
                    breaks[(pkg, q)].append(imp.where())
                elif imp.target.startswith("<"):
                    breaks.setdefault((pkg, "?"), []).append(imp.where())
    return breaks


# ---------------------------------------------------------------------------------------- dynamic
_PROBE = r'''
import importlib, json, os, pkgutil, sys, traceback

package, packages, marker = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
ours = set(packages) - {package}
at_start = sorted(m for m in sys.modules if m.partition(".")[0] in packages)
first_load = {}          # other package of ours -> (module loaded, importer, file:line, while importing)
current = [package]


class Recorder:
    """Defers to the real finders; notes who first loads a module of another package of ours."""

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in ours and top not in first_load:
            frame, where, importer = sys._getframe(1), "?", "?"
            while frame is not None:
                name = frame.f_globals.get("__name__", "")
                fn = frame.f_code.co_filename
                if not fn.startswith("<frozen") and not name.startswith("importlib") and name != __name__:
                    importer, where = name, f"{os.path.relpath(fn)}:{frame.f_lineno}"
                    break
                frame = frame.f_back
            first_load[top] = (fullname, importer, where, current[0])
        return None


sys.meta_path.insert(0, Recorder())
modules, errors = [], {}


def load(name):
    current[0] = name
    modules.append(name)
    try:
        importlib.import_module(name)
    except BaseException as exc:      # SystemExit too: a module that runs code on import
        errors[name] = "".join(traceback.format_exception_only(type(exc), exc)).strip()


def unwalkable(name):
    errors.setdefault(name, "walk_packages could not import it")


load(package)
if package in sys.modules:
    for info in pkgutil.walk_packages(getattr(sys.modules[package], "__path__", []), package + ".", unwalkable):
        if info.name.rpartition(".")[2] == "__main__":
            continue
        load(info.name)        # before the walk imports a subpackage itself, so the load is attributed here
loaded = sorted({m.partition(".")[0] for m in sys.modules} & ours)
print(marker + json.dumps({"modules": modules, "errors": errors, "at_start": at_start,
                           "loaded": loaded, "first_load": first_load}))
'''

_MARKER = "@@layering-report@@"


@dataclass(frozen=True)
class Report:
    package: str
    modules: tuple[str, ...]             # what was imported, in order
    errors: dict                         # module -> the exception, one line
    loaded: frozenset                    # other packages of ours that ended up in sys.modules
    first_load: dict                     # package -> [module, importer, file:line, while importing]
    at_start: tuple[str, ...]            # modules of ours already loaded when the interpreter started

    def why(self, q: str) -> str:
        if q in self.first_load:
            mod, importer, where, during = self.first_load[q]
            return f"{importer} ({where}) loads {mod}, while importing {during}"
        return f"{q} was loaded (at start-up: {', '.join(self.at_start) or 'no'})"


def dynamic_report(root: Path, package: str, packages) -> Report:
    """Import ``package`` and all its modules in a fresh interpreter rooted at ``root``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("MPLBACKEND", "Agg")
    proc = subprocess.run([sys.executable, "-c", _PROBE, package, json.dumps(list(packages)), _MARKER],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_MARKER)]
    if proc.returncode != 0 or not lines:
        raise AssertionError(f"the import probe for {package} did not finish (exit {proc.returncode}):\n"
                             f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    data = json.loads(lines[-1][len(_MARKER):])
    return Report(package, tuple(data["modules"]), data["errors"], frozenset(data["loaded"]),
                  data["first_load"], tuple(data["at_start"]))


@functools.lru_cache(maxsize=None)
def _real_report(package: str) -> Report:
    if not (ROOT / package).is_dir():
        raise AssertionError(f"package folder {package}/ is missing")
    return dynamic_report(ROOT, package, PACKAGES)


# ---------------------------------------------------------------------------------- the real tree
@pytest.mark.parametrize("pair", RULES, ids=rule_id)
def test_layer_rule_static(pair):
    breaks = static_breaks(ROOT, ALLOWED)[pair]
    if breaks:
        pytest.fail(f"{rule_id(pair)}, but:\n  " + "\n  ".join(breaks), pytrace=False)


def test_no_relative_import_past_the_top():
    bad = [w for pair, where in static_breaks(ROOT, ALLOWED).items() if pair[1] == "?" for w in where]
    if bad:
        pytest.fail("relative import past the top-level package:\n  " + "\n  ".join(bad), pytrace=False)


@pytest.mark.parametrize("pair", RULES, ids=rule_id)
def test_layer_rule_in_fresh_interpreter(pair):
    p, q = pair
    report = _real_report(p)
    if q in report.loaded:
        pytest.fail(f"{rule_id(pair)}, but importing {p}'s modules loads {q}: {report.why(q)}", pytrace=False)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: f"every module of {p} imports")
def test_every_module_imports(package):
    report = _real_report(package)
    if report.errors:
        pytest.fail("\n".join(f"{m}: {e}" for m, e in report.errors.items()), pytrace=False)


@pytest.mark.parametrize("path", GONE, ids=lambda p: f"{p} is gone")
def test_old_module_gone(path):
    if (ROOT / path).exists():
        pytest.fail(f"{path} still exists", pytrace=False)


def citation_hits(root: Path, packages) -> list[str]:
    hits = []
    for pkg in packages:
        for path in python_files(root / pkg):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for needle in OUTSIDE_CITATIONS:
                    if needle in line:
                        hits.append(f"{path.relative_to(root).as_posix()}:{n}: {needle!r}: {line.strip()}")
    return hits


def test_no_citation_outside_the_repository():
    hits = citation_hits(ROOT, PACKAGES)
    if hits:
        pytest.fail("cite the primary source or docs/conventions.md instead of:\n  " + "\n  ".join(hits),
                    pytrace=False)


# ------------------------------------------------------------------------------------- one of each
def project_files(root: Path) -> list[Path]:
    """Every ``.py`` of the project: the packages, tests, bench, course, examples (not the venv)."""
    return python_files(root)


def definitions(root: Path, files=None) -> dict[str, list[str]]:
    """``class X`` / ``def f`` / ``NAME =`` definitions at any depth: name -> ["path:line", ...]."""
    out: dict[str, list[str]] = {}
    for path in files if files is not None else project_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                out.setdefault(f"class {node.name}", []).append(f"{rel}:{node.lineno}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(f"def {node.name}", []).append(f"{rel}:{node.lineno}")
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for leaf in ast.walk(t):
                        name = leaf.id if isinstance(leaf, ast.Name) else \
                            leaf.attr if isinstance(leaf, ast.Attribute) else None
                        if name and isinstance(getattr(leaf, "ctx", None), ast.Store):
                            out.setdefault(f"{name} =", []).append(f"{rel}:{node.lineno}")
    return out


ONE_OF_EACH = ("one class BadInput", "one ELEMENT_BYTES", "no DTYPE_BYTES", "positive_int only in base")


def one_of_each_problems(root: Path) -> dict[str, str]:
    """Rule (one of :data:`ONE_OF_EACH`) -> what breaks it; empty when all hold."""
    defs = definitions(root)
    problems = {}

    def at(key):
        return [w.rpartition(":")[0] for w in defs.get(key, [])]

    if at("class BadInput") != ["base/errors.py"]:
        problems["one class BadInput"] = (f"one `class BadInput`, in base/errors.py; found: "
                                          f"{defs.get('class BadInput', [])}")
    if at("ELEMENT_BYTES =") != ["base/dtypes.py"]:
        problems["one ELEMENT_BYTES"] = (f"one element-size table `ELEMENT_BYTES`, in base/dtypes.py; found: "
                                         f"{defs.get('ELEMENT_BYTES =', [])}")
    if defs.get("DTYPE_BYTES ="):
        problems["no DTYPE_BYTES"] = (f"no `DTYPE_BYTES =` (use base.dtypes.element_bytes); found: "
                                      f"{defs['DTYPE_BYTES =']}")
    stray = [w for w in defs.get("def positive_int", []) if w.rpartition(":")[0] != "base/validate.py"]
    if stray:
        problems["positive_int only in base"] = f"`def positive_int` only in base/validate.py; also found: {stray}"
    return problems


@pytest.mark.parametrize("rule", ONE_OF_EACH)
def test_one_of_each(rule):
    problem = one_of_each_problems(ROOT).get(rule)
    if problem:
        pytest.fail(problem, pytrace=False)


# ------------------------------------------------------------------------ the checkers themselves
def _layout(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


#: a three-layer toy: lo < mid < top (names no real package uses, so nothing installed shadows them)
TOY = {"lolayer": frozenset(), "midlayer": frozenset({"lolayer"}),
       "toplayer": frozenset({"lolayer", "midlayer"})}

_CLEAN = {
    "lolayer/__init__.py": "X = 1\n",
    "lolayer/errors.py": "class Oops(ValueError):\n    pass\n",
    "midlayer/__init__.py": "from lolayer import X\n",
    "midlayer/sub/__init__.py": "from ..core import f\n",
    "midlayer/core.py": "import lolayer.errors\n\ndef f():\n    from . import helper\n    return helper\n",
    "midlayer/helper.py": "from .core import f\n",
    "midlayer/__main__.py": "import toplayer\nraise SystemExit(0)\n",   # never imported by the probe
    "toplayer/__init__.py": "import midlayer\nfrom lolayer.errors import Oops\n",
}


def test_checker_rules_from_the_table():
    assert forbidden_pairs(TOY) == [("lolayer", "midlayer"), ("lolayer", "toplayer"), ("midlayer", "toplayer")]
    assert rule_id(("symbolic", "numeric")) == "symbolic must not import numeric"
    # the real table: 26 forbidden pairs; tilebound imported by nobody; printing (issue 17) sits above
    # symbolic beside tuning and verify, none of which imports it (the listing checks use listings, not printers)
    assert len(RULES) == 26
    assert [p for p, q in RULES if q == "tilebound"] == ["base", "symbolic", "numeric", "printing", "tuning", "verify"]
    assert [p for p, q in RULES if q == "printing"] == ["base", "symbolic", "numeric", "tuning", "verify"]
    assert [q for p, q in RULES if p == "printing"] == ["numeric", "tuning", "verify", "tilebound"]
    assert [q for p, q in RULES if p == "verify"] == ["printing", "tilebound"]
    assert not [q for p, q in RULES if p == "tilebound"]


def test_checker_passes_a_clean_layout(tmp_path):
    root = _layout(tmp_path, _CLEAN)
    breaks = static_breaks(root, TOY)
    # midlayer/__main__.py imports toplayer: the static scan sees it (a __main__ is no exemption) ...
    assert breaks[("midlayer", "toplayer")] == ["midlayer/__main__.py:1: import toplayer"]
    assert breaks[("lolayer", "midlayer")] == breaks[("lolayer", "toplayer")] == []
    # ... the dynamic probe never imports a __main__
    for pkg in TOY:
        report = dynamic_report(root, pkg, TOY)
        assert not report.errors, report.errors
        assert report.loaded <= TOY[pkg], (pkg, report.loaded)
    assert set(dynamic_report(root, "midlayer", TOY).modules) == {
        "midlayer", "midlayer.core", "midlayer.helper", "midlayer.sub"}


def test_checker_finds_a_lazy_upward_import(tmp_path):
    root = _layout(tmp_path, {**_CLEAN,
                              "lolayer/late.py": "def g():\n    import midlayer.core  # lazy\n    return 1\n",
                              "lolayer/dyn.py": "import importlib\nM = importlib.import_module('toplayer')\n"})
    breaks = static_breaks(root, TOY)
    assert breaks[("lolayer", "midlayer")] == ["lolayer/late.py:2: import midlayer.core  # lazy"]
    assert breaks[("lolayer", "toplayer")] == ["lolayer/dyn.py:2: M = importlib.import_module('toplayer')"]
    report = dynamic_report(root, "lolayer", TOY)
    # the lazy import is invisible at import time; the module-level one is caught and placed
    assert report.loaded == {"midlayer", "toplayer"}      # toplayer imports midlayer in turn
    assert report.first_load["toplayer"][:3] == ["toplayer", "lolayer.dyn", "lolayer/dyn.py:2"]
    assert report.why("midlayer").startswith("toplayer (toplayer/__init__.py:1) loads midlayer")


def test_checker_finds_relative_and_from_imports(tmp_path):
    root = _layout(tmp_path, {**_CLEAN,
                              "midlayer/deep/__init__.py": "",
                              "midlayer/deep/x.py": "from ... import toplayer_thing\n",   # past the top
                              "midlayer/y.py": "from toplayer import anything\n"})
    breaks = static_breaks(root, TOY)
    assert breaks[("midlayer", "toplayer")] == ["midlayer/__main__.py:1: import toplayer",
                                               "midlayer/y.py:1: from toplayer import anything"]
    assert breaks[("midlayer", "?")] == ["midlayer/deep/x.py:1: from ... import toplayer_thing"]
    report = dynamic_report(root, "midlayer", TOY)
    assert "midlayer.deep.x" in report.errors and "toplayer" in report.loaded


def test_checker_one_of_each_and_citations(tmp_path):
    root = _layout(tmp_path, {
        "base/errors.py": "class BadInput(ValueError):\n    pass\n",
        "base/dtypes.py": "ELEMENT_BYTES = {'fp16': 2}\n",
        "base/validate.py": "def positive_int(name, v):\n    return v\n",
        "symbolic/a.py": "# see docs/conventions.md §3\n",
    })
    assert one_of_each_problems(root) == {}
    assert citation_hits(root, ["base", "symbolic"]) == []
    _layout(root, {"symbolic/b.py": "class BadInput(Exception):\n    pass\n"
                                    "DTYPE_BYTES = 2\n"
                                    "def f():\n    def positive_int(n, v):\n        return v\n"
                                    "# shared/REFERENCE.md §3\n",
                   "numeric/c.py": "class T:\n    ELEMENT_BYTES = {}\n"})
    problems = one_of_each_problems(root)
    assert set(problems) == set(ONE_OF_EACH), problems
    assert "symbolic/b.py:1" in problems["one class BadInput"]
    assert "numeric/c.py:2" in problems["one ELEMENT_BYTES"]
    assert "symbolic/b.py:3" in problems["no DTYPE_BYTES"]
    assert "symbolic/b.py:5" in problems["positive_int only in base"]
    hits = citation_hits(root, ["base", "symbolic"])
    assert [h.split(": ")[1] for h in hits] == ["'REFERENCE.md'", "'shared/'"]
