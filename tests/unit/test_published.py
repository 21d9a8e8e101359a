"""bench/published.py: every row cited, its figures numbers, its stated settings consistent with the figure where
the source gives both (FA3's Table 2: TFLOP/s and milliseconds), and docs/llm.md's tables equal to what the
scripts print."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from numbers import Real
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_llm_peers  # noqa: E402
import published  # noqa: E402

CITED = ("arXiv", "README", "@", "Table", "Fig.")


def _between(text: str, start: str, end: str) -> str:
    assert start in text and end in text, f"docs/llm.md lacks {start} ... {end}"
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def test_at_least_eight_rows_each_cited():
    assert len(published.ROWS) >= 8
    keys = [r.key for r in published.ROWS]
    assert len(set(keys)) == len(keys)
    for r in published.ROWS:
        assert any(c in r.citation for c in CITED), r.key
        assert r.why, r.key


def test_the_required_kinds_are_there():
    kinds = {r.settings["kind"] for r in published.ROWS}
    assert kinds == {"fa3", "mla", "llm"}
    units = {(r.settings["kind"], r.unit) for r in published.ROWS}
    assert ("mla", "GB/s") in units and ("mla", "TFLOP/s") in units and ("llm", "tokens/s") in units
    fa3 = [r for r in published.ROWS if r.settings["kind"] == "fa3"]
    assert {r.settings["e"] for r in fa3} == {1, 2} and {r.settings["d"] for r in fa3} >= {64, 128, 256}
    assert {r.settings["causal"] for r in fa3} == {True, False}


def test_figures_are_numbers():
    for r in published.ROWS:
        assert isinstance(r.figure, Real) and not isinstance(r.figure, bool) and math.isfinite(r.figure)
        assert r.figure > 0


def test_fa3_table_2_settings_reproduce_its_time():
    """Table 2: 661 TFLOP/s in 3.538 ms; 4 N^2 d FLOPs a head at N = 8448, d = 128, batch x heads = 64."""
    (r,) = [r for r in published.ROWS if r.key == "fa3-ablation"]
    s = r.settings
    flops = 4 * s["N"] ** 2 * s["d"] * s["copies"]
    assert flops / 3.538e-3 / 1e12 == pytest.approx(r.figure, rel=1e-3)


def test_predictions_are_exact_numbers_and_errors_signed():
    for x in published.rows():
        if x["predicted"] is None:
            assert x["row"].settings["kind"] == "llm"       # only before tuning.llm lands
            continue
        assert isinstance(x["predicted"], Fraction) and x["predicted"] > 0
        assert x["error"] == (x["predicted"] - Fraction(x["row"].figure).limit_denominator(1000)) / \
            Fraction(x["row"].figure).limit_denominator(1000)


def test_fa3_prediction_is_the_roofline_by_hand():
    """d = 128, not causal, 16 heads at 16k: FLOPs 4 N^2 d x 16 over max(those / 989e12, bytes / 3.35e12), the
    bytes 2 x (reads + writes) of the FA2 loop at FA3's 128 x 176 tiles: Q once, K, V once a query block, O + LSE."""
    N, d, H, Br, Bc = 16384, 128, 16, 128, 176
    reads = N * d + 2 * N * d * (-(-N // Br))
    writes = N * d + N
    t = max(Fraction(4 * N * N * d * H, 989 * 10**12), Fraction(2 * (reads + writes) * H, 3350 * 10**9))
    (r,) = [r for r in published.ROWS if r.key == "fa3-bf16-d128"]
    pred, _ = published.predict(r)
    assert pred == Fraction(4 * N * N * d * H) / t / 10**12
    from symbolic import registry                           # the tiles: hopper/tile_size.h:32-33 (128 x 176)
    v = registry.get("attention.fa3.fwd").evaluate(N=N, N_k=N, d=d, e=2)
    assert (v["B_r"], v["B_c"]) == (Br, Bc)


def test_docs_published_table_is_what_the_script_prints():
    text = (ROOT / "docs" / "llm.md").read_text(encoding="utf-8")
    assert _between(text, published.START, published.END) == published.table()


def test_docs_peers_section_is_what_the_script_prints():
    text = (ROOT / "docs" / "llm.md").read_text(encoding="utf-8")
    assert _between(text, bench_llm_peers.START, bench_llm_peers.END) == bench_llm_peers.report()


def test_write_refuses_a_page_without_markers(tmp_path):
    page = tmp_path / "llm.md"
    page.write_text("# no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        published.write(page)
    assert page.read_text(encoding="utf-8") == "# no markers\n"
