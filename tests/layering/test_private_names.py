"""No package imports another package's private name (``from symbolic.evaluate import _x``): what one layer
uses of another is that layer's documented, public API (issue 22's follow-up: the JavaScript printer used
``symbolic.evaluate._affine_floor``; it is now :func:`symbolic.evaluate.affine_floor_sum`)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("base", "symbolic", "numeric", "tuning", "verify", "printing", "tilebound")


def _private_imports(package: str, root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                top = node.module.split(".")[0]
                if top in PACKAGES and top != package:
                    found += [f"{path.relative_to(root).as_posix()}:{node.lineno}: from {node.module} import {a.name}"
                              for a in node.names if a.name.startswith("_")]
    return found


def test_no_package_imports_a_private_name_of_another():
    bad = [line for p in PACKAGES for line in _private_imports(p)]
    assert not bad, "\n".join(bad)


def test_the_scan_finds_a_private_import(tmp_path):
    # the scan itself can fail: a module importing a private name of another package is found
    pkg = tmp_path / "printing"
    pkg.mkdir()
    (pkg / "bad.py").write_text("from symbolic.evaluate import _compile\n", encoding="utf-8")
    assert _private_imports("printing", tmp_path) == ["printing/bad.py:1: from symbolic.evaluate import _compile"]
