"""docs/gemm-variants.md (its MoE and block-scaled sections) runs as written: every ``python`` block runs,
and where the lines right after a block are a table, they are what that block prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "gemm-variants.md"


def _python_blocks(text: str):
    """``(code, the lines after the block up to the first blank line after a table)`` of each python block."""
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```\n", text, flags=re.S | re.M):
        after = text[m.end():].lstrip("\n").splitlines()
        table = []
        for line in after:
            if not line.startswith("|"):
                break
            table.append(line)
        out.append((m.group(1), table))
    return out


BLOCKS = _python_blocks(DOC.read_text(encoding="utf-8"))


def test_the_page_has_its_sections_and_tables():
    text = DOC.read_text(encoding="utf-8")
    assert "## MoE grouped GEMM: `moe.grouped`" in text and "## Block-scaled GEMM: `gemm.scaled.*`" in text
    assert sum(1 for _, table in BLOCKS if table) == 2


@pytest.mark.parametrize("code,table", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_block_runs_and_prints_the_table_shown(code, table):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_example__"})
    if table:
        assert buf.getvalue().rstrip("\n").splitlines() == table
