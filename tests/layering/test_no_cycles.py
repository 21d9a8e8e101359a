"""No import circles: the module import graph of our packages, built statically, has no cycle.

Every ``.py`` file of :data:`test_layering.PACKAGES` is parsed (:func:`test_layering.python_files`) and every
``import`` / ``from ... import`` at any depth - a lazy import inside a function is an edge too - becomes an edge
from the importing module to the module of ours it names: ``from pkg import name`` names the submodule
``pkg.name`` when there is one, else ``pkg`` itself; ``importlib.import_module`` with a literal name counts as an
import, as in the layering checker.  Discovery by a computed name (:func:`base.discovery.discover`, a package
scan) is not an import and adds no edge.  A package's ``__init__`` is not made an implicit dependency of its
submodules: an edge is only what a file writes.

A cycle is a strongly connected component of more than one module, or a module importing itself (Tarjan's
algorithm, iterative).  ``test_checker_*`` run the same code on synthetic layouts to show it can fail and pass.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from test_layering import PACKAGES, ROOT, _module_name, _resolve_relative, python_files


def module_files(root: Path, packages) -> dict[str, Path]:
    """``{module name: file}`` for every ``.py`` file of ``packages`` under ``root``."""
    out = {}
    for pkg in packages:
        if (root / pkg).is_dir():
            for path in python_files(root / pkg):
                out[_module_name(root, path)] = path
    return out


def import_graph(root: Path, packages) -> dict[str, dict[str, int]]:
    """``{module: {module it imports: first line}}`` over the modules of ours (see the module docstring)."""
    files = module_files(root, packages)
    graph: dict[str, dict[str, int]] = {m: {} for m in files}
    for module, path in files.items():
        is_package = path.name == "__init__.py"

        def edge(target: str | None, line: int, _module=module):
            if target in files:
                graph[_module].setdefault(target, line)

        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    edge(alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = (_resolve_relative(module, is_package, node.level, node.module) if node.level
                        else node.module)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    edge(sub if sub in files else base, node.lineno)
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name in ("import_module", "__import__"):
                    edge(node.args[0].value, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with a cycle (two or more modules, or one importing itself),
    each sorted; iterative Tarjan, so a deep graph cannot overflow the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1 or v in graph[v]:
                    found.append(sorted(comp))
    return sorted(found)


def describe(graph, comp: list[str]) -> str:
    """One cycle's edges inside its component, ``a -> b (line n)``."""
    inside = set(comp)
    return "; ".join(f"{a} -> {b} (line {line})" for a in comp for b, line in sorted(graph[a].items()) if b in inside)


def test_no_import_cycle():
    """No module of ours imports itself around a loop (printing.latex <-> printing.prose went with prose.py;
    symbolic.gemm_lru <-> symbolic.models.gemm_l2 went with symbolic/gemm_waves.py)."""
    graph = import_graph(ROOT, PACKAGES)
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(describe(graph, c) for c in found)


def test_the_cycle_finder_finds_a_cycle():
    """The oracle itself: a three-module loop and a self-import are found, a chain is not."""
    assert cycles({"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}})
    assert cycles({"a": {"a": 1}})
    assert not cycles({"a": {"b": 1}, "b": {"c": 2}, "c": {}})


def test_the_gemm_modules_do_not_import_each_other():
    graph = import_graph(ROOT, PACKAGES)
    assert "symbolic.models.gemm_l2" not in graph["symbolic.gemm_lru"]
    assert "symbolic.gemm_lru" in graph["symbolic.models.gemm_l2"]        # the model calls the count


# ------------------------------------------------------------------------------------------ the checker
def _layout(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_checker_finds_a_lazy_circle_and_a_loop(tmp_path):
    root = _layout(tmp_path, {
        "pa/__init__.py": "",
        "pa/one.py": "from . import two\n",
        "pa/two.py": "def f():\n    from .one import x   # lazy: still an edge\n    return x\n",
        "pa/three.py": "import pa.four\n",
        "pa/four.py": "from pa import five\n",
        "pa/five.py": "from importlib import import_module\nimport_module('pa.three')\n",
        "pa/six.py": "from . import six\n",
    })
    assert cycles(import_graph(root, ["pa"])) == [["pa.five", "pa.four", "pa.three"], ["pa.one", "pa.two"],
                                                  ["pa.six"]]


def test_checker_passes_a_tree_and_ignores_discovery(tmp_path):
    root = _layout(tmp_path, {
        "pa/__init__.py": "from .one import f\n",                 # the package re-exports a submodule
        "pa/one.py": "import pa.two\n\ndef f():\n    return pa.two\n",
        "pa/two.py": "import importlib\n\ndef scan(n):\n    return importlib.import_module(f'pa.{n}')\n",
        "pb/__init__.py": "",
        "pb/x.py": "from pa import one\n",
    })
    graph = import_graph(root, ["pa", "pb"])
    assert graph["pb.x"] == {"pa.one": 1} and graph["pa"] == {"pa.one": 1}
    assert cycles(graph) == []
