"""The command line: output of each subcommand on small models, and one-line exit 2 on bad input.

Expected figures are worked out by hand in the comments (toy models in ``toy_models.py``) or taken
from ``docs/conventions.md`` §1.1 (standard attention's closed form) and the FlashAttention paper.
"""

from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from base.errors import BadInput
from symbolic import registry
from tilebound.cli import main
from tilebound.numbers import parse_assignments, parse_vary

from toy_models import halo_brute_force, halo_check, register_toy_checks

ROOT = Path(__file__).resolve().parents[2]


def data_rows(out: str) -> list[list[str]]:
    """The table rows of a text table (lines starting with a digit), split into cells."""
    return [ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()]


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _env(**extra):
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", **extra}


# ------------------------------------------------------------------------------ argument values
@pytest.mark.parametrize("items,expected", [
    (["N=4096", "d=64"], {"N": 4096, "d": 64}),
    (["N=4_096,d=64"], {"N": 4096, "d": 64}),
    (["N=2**12"], {"N": 4096}),
    (["N=2^12"], {"N": 4096}),
    (["L=7/10"], {"L": Fraction(7, 10)}),
    (["L=1e-9"], {"L": Fraction(1, 10**9)}),
    (["L=0.5"], {"L": Fraction(1, 2)}),
    (["M=1e3"], {"M": 1000}),
    (["N=10**30"], {"N": 10**30}),
])
def test_parse_assignments(items, expected):
    got = parse_assignments(items)
    assert got == expected and all(type(got[k]) is type(v) for k, v in expected.items())


@pytest.mark.parametrize("items,expected", [
    (["N=512,1024,2048"], {"N": [512, 1024, 2048]}),
    (["N=512..4096"], {"N": [512, 1024, 2048, 4096]}),
    (["N=3..20"], {"N": [3, 6, 12]}),
    (["N=1,2", "d=64"], {"N": [1, 2], "d": [64]}),
    (["N, N_k=1,2"], {"N,N_k": [1, 2]}),
])
def test_parse_vary(items, expected):
    assert parse_vary(items) == expected


@pytest.mark.parametrize("call,message", [
    (lambda: parse_assignments(["N=1", "N=2"]), "N: given twice in --at (1 and 2)"),
    (lambda: parse_assignments(["N=1,d=2,N=1"]), "N: given twice in --at"),
    (lambda: parse_vary(["N=1,2", "N=4"]), "N: varied twice"),
    (lambda: parse_vary(["N,N_k=1,2", "N_k=4"]), "N_k: varied twice"),
    (lambda: parse_vary(["N=1..2**4096,1..2**4096,1..2**4096"]), "N: more than 10,000 values"),
    (lambda: parse_assignments(["N=2**5000"]), "N: exponent out of range"),
    (lambda: parse_assignments(["N=1e5000"]), "N: exponent out of range"),
])
def test_duplicates_and_runaway_values_are_refused(call, message):
    with pytest.raises(BadInput) as exc:
        call()
    assert message in str(exc.value)


# ------------------------------------------------------------------------------ list
def test_list_names_every_model(capsys, toys):
    rc, out, err = run(capsys, "list")
    assert rc == 0 and err == ""
    listed = [line.split()[0] for line in out.splitlines()]
    assert listed == registry.names()
    assert {"toy.halo", "toy.copy", "toy.pair"} <= set(listed)


def test_list_markdown(capsys, toys):
    rc, out, _ = run(capsys, "list", "--format", "markdown")
    assert rc == 0
    assert out.splitlines()[0].split("|")[1].strip() == "model"
    assert any(ln.startswith("| toy.halo ") for ln in out.splitlines())


# ------------------------------------------------------------------------------ show
def _value_rows(out: str) -> dict:
    """The rows of the values table (``quantity exact unit ...``), by quantity."""
    return {ln.split()[0]: ln.split() for ln in out.splitlines()
            if ln.split()[:1] in (["reads"], ["writes"], ["flops"], ["total"])
            and not any(r in ln for r in ("=", "~", "∈"))}


def test_show_formulas_and_values(capsys, toys):
    rc, out, err = run(capsys, "show", "toy.halo", "--at", "N=100", "B=32")
    assert rc == 0, err
    assert "reads  = N + 2·⌈N/B⌉" in out
    assert "total ∈ Θ(N)" in out
    # N = 100, B = 32: 4 tiles -> reads 100 + 8 = 108, writes 100, total 208, flops 300; fp16 doubles
    rows = _value_rows(out)
    assert rows["reads"][1:4] == ["108", "elements", "216"]
    assert rows["writes"][1:4] == ["100", "elements", "200"]
    assert rows["total"][1:4] == ["208", "elements", "416"]
    assert rows["flops"][1:3] == ["300", "FLOP"]
    assert halo_brute_force({"N": 100, "B": 32})["reads"] == 108       # the hand count, checked by brute force


def test_show_roofline(capsys, toys):
    # N = 100, B = 32, 8 copies: 300 x 8 = 2,400 FLOPs; 208 x 2 x 8 = 3,328 bytes.
    # A100: 2400 / 312e12 s = 7.69e-12 s compute; 3328 / 1.555e12 s = 2.14e-9 s memory -> memory-bound
    rc, out, _ = run(capsys, "show", "toy.halo", "--at", "N=100", "--copies", "8")
    assert rc == 0
    row = out.splitlines()[-1].split()
    assert row[:4] == ["A100", "2,400", "3.33", "KB"]
    assert row[-3:] == ["2.14", "ns", "memory"]
    assert "8 independent copies" in out


def test_show_uses_defaults_and_dtype(capsys, toys):
    rc, out, _ = run(capsys, "show", "toy.halo", "--at", "N=100", "--dtype", "fp32")   # B defaults to 32
    assert rc == 0
    assert "bytes (all at fp32)" in out
    assert _value_rows(out)["total"][1:4] == ["208", "elements", "832"]
    assert "no roofline: dtype: no fp32 tensor-core peak" in out


def test_show_at_any_size_is_exact(capsys, toys):
    # N = 10**30, B = 32: reads = 10**30 + 2 ceil(10**30 / 32) = 10**30 + 2 (31250000000000000000000000000 + 0)
    rc, out, err = run(capsys, "show", "toy.halo", "--at", "N=10**30")
    assert rc == 0, err
    assert _value_rows(out)["reads"][1] == f"{10**30 + 2 * (10**30 // 32):,}"


def test_show_values_beyond_4000_digits(capsys):
    """N = 10**2200, d = 64, M = 51200: B_c = M/(4d) = 200, so ceil(N/200) = 5·10**2197 key blocks and
    reads = 2 N d + N (2d + 2) ceil(N/B_c) = 1.28·10**2202 + 6.5·10**4399: printed in scientific form with
    its 4,400 digits, not a traceback (Python refuses str() of an int beyond 4,300 digits)."""
    rc, out, err = run(capsys, "show", "attention.fa1.fwd.paper", "--at", "N=10**2200", "d=64", "M=51200")
    assert rc == 0 and err == "", err
    assert _value_rows(out)["reads"][1:4] == ["6.50e+4399", "(4,400", "digits)"]


def test_show_times_beyond_a_floats_range(capsys):
    rc, out, err = run(capsys, "show", "latency.pipeline", "--at", "n=10", "S=2", "L=1e400", "t_x=2e-7", "t_c=3e-7")
    assert rc == 0 and err == "", err
    assert "e+400 s" in out


@pytest.mark.parametrize("fmt,marker", [("markdown", "$$\n\\begin{aligned}"), ("latex", "\\begin{align*}")])
def test_show_formats(capsys, toys, fmt, marker):
    rc, out, _ = run(capsys, "show", "toy.halo", "--at", "N=100", "--format", fmt)
    assert rc == 0 and marker in out
    if fmt == "latex":
        assert out.isascii()


def test_show_gemm_in_its_own_names(capsys):
    """GEMM's sizes are M, N, K and its blocks B_M, B_N, B_K, in show and in --at (no _g suffixes).
    M = N = K = 256, 128 x 128 x 32 tiles: reads = M K ceil(N/B_N) + K N ceil(M/B_M) = 2 x 256² x 2
    = 262,144; writes M N = 65,536; flops 2 M N K = 33,554,432."""
    rc, out, err = run(capsys, "show", "gemm.tiled", "--at", "M=256", "N=256", "K=256")
    assert rc == 0, err
    assert "M_g" not in out and "B_M" in out
    rows = _value_rows(out)
    assert rows["reads"][1] == "262,144" and rows["writes"][1] == "65,536" and rows["flops"][1] == "33,554,432"


# ------------------------------------------------------------------------------ table
def test_table_ratio_and_per_columns(capsys, toys):
    rc, out, err = run(capsys, "table", "toy.halo", "--vary", "N=32,100", "--at", "B=32",
                       "--ratio", "toy.copy", "--per", "N", "--quantity", "total")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "toy.halo: total at B = 32"
    header = lines[1].split()
    assert header == ["N", "total", "toy.copy", "total", "toy.halo", "÷", "toy.copy", "total", "÷", "N"]
    # N = 32: total = 64 + 2 = 66, copy 64, 66/64 = 1.03, 66/32 = 2.06
    # N = 100: total = 200 + 8 = 208, copy 200, 208/200 = 1.04, 208/100 = 2.08
    assert data_rows(out) == [["32", "66", "64", "1.03", "2.06"], ["100", "208", "200", "1.04", "2.08"]]


def test_table_tied_parameters(capsys, toys):
    # N = B = 32: one tile, total = 64 + 2 = 66; N = B = 64: 128 + 2 = 130
    rc, out, _ = run(capsys, "table", "toy.halo", "--vary", "N,B=32,64", "-q", "total")
    assert rc == 0
    assert out.splitlines()[1].split() == ["N", "=", "B", "total"]
    assert data_rows(out) == [["32", "66"], ["64", "130"]]


@pytest.mark.parametrize("expr", ["2 N", "2N", "2*N", "N^2 * 2/N", "2**1 * N", "(N + N)", "4N/2", "N*2.0",
                                  "max(N, 2) * 2", "2 ceil(N/1)"])
def test_table_per_reads_its_grammar(capsys, toys, expr):
    # N = 100: total 208 / (2 N = 200) = 1.04
    rc, out, err = run(capsys, "table", "toy.halo", "--vary", "N=100", "-q", "total", "--per", expr)
    assert rc == 0, err
    assert data_rows(out) == [["100", "208", "1.04"]]


def test_table_per_theta_gives_the_constant(capsys, toys):
    # total / Θ-class N -> 2 + 2⌈N/B⌉/N: N = 1024, B = 32 -> 2 + 64/1024 = 2.0625 -> "2.06"
    rc, out, _ = run(capsys, "table", "toy.halo", "--vary", "N=1024", "--per", "theta", "-q", "total")
    assert rc == 0
    assert data_rows(out) == [["1,024", "2,112", "2.06"]]


def test_table_per_theta_is_of_the_quantity_shown(capsys, toys):
    # toy.copy: flops = 0 has no class; its reads = N have Θ(N): reads / N = 1 at every N
    rc, out, err = run(capsys, "table", "toy.copy", "--vary", "N=8,1000", "-q", "reads", "--per", "theta")
    assert rc == 0, err
    assert data_rows(out) == [["8", "8", "1"], ["1,000", "1,000", "1"]]
    # toy.halo: writes = N, Θ(N) -> 1 (not writes / Θ(total))
    rc, out, err = run(capsys, "table", "toy.halo", "--vary", "N=100", "-q", "writes", "--per", "theta")
    assert rc == 0, err
    assert data_rows(out) == [["100", "100", "1"]]


def test_per_runs_no_code(capsys, toys, tmp_path):
    """``--per`` is read by a grammar: an injection prints one error line and runs nothing."""
    marker = tmp_path / "INJECTED"
    for expr in (f"__import__('os').system('touch {marker}')", f"N.__class__ or open('{marker}', 'w')",
                 "lambda: 1", "N if 1 else 2"):
        rc, out, err = run(capsys, "table", "toy.halo", "--vary", "N=100", "--per", expr)
        assert rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("tilebound: per: "), err
    assert not marker.exists()


def test_table_dtype_adds_bytes(capsys, toys):
    rc, out, _ = run(capsys, "table", "toy.halo", "--vary", "N=100", "--dtype", "fp16", "-q", "total")
    assert rc == 0 and "416 B" in out


def test_table_markdown_and_latex(capsys, toys):
    rc, md, _ = run(capsys, "table", "toy.halo", "--vary", "N=100", "--format", "markdown")
    assert rc == 0 and md.splitlines()[2].startswith("|")
    rc, tex, _ = run(capsys, "table", "toy.halo", "--vary", "N=100", "--format", "latex")
    assert rc == 0 and r"\toprule" in tex and r"\bottomrule" in tex


def test_table_standard_attention_matches_the_closed_form(capsys):
    """docs/conventions.md §1.1 (FlashAttention, arXiv 2205.14135, Algorithm 0): standard forward reads
    N d + N_k d + 2 N N_k + N_k d, writes 2 N N_k + N d."""
    rc, out, err = run(capsys, "table", "attention.standard.fwd", "--vary", "N=512,1024", "--at", "N_k=1024", "d=64",
                       "-q", "total")
    assert rc == 0, err
    rows = data_rows(out)
    assert len(rows) == 2
    for row, n in zip(rows, (512, 1024)):
        nk, d = 1024, 64
        total = n * d + nk * d + 2 * n * nk + nk * d + 2 * n * nk + n * d
        assert row == [f"{n:,}", f"{total:,}"]


def test_table_gemm_in_its_own_names(capsys):
    # B_M = B_N = 128, K = 256: reads = M K ceil(N/128) + K N ceil(M/128); M = N = 128: 2 x 128 x 256 = 65,536;
    # M = N = 256: 2 x 256 x 256 x 2 = 262,144
    rc, out, err = run(capsys, "table", "gemm.tiled", "--vary", "M,N=128,256", "--at", "K=256", "-q", "reads")
    assert rc == 0, err
    assert data_rows(out) == [["128", "65,536"], ["256", "262,144"]]


# ------------------------------------------------------------------------------ latex
def test_latex_fragment(capsys, toys):
    rc, out, _ = run(capsys, "latex", "toy.halo")
    assert rc == 0
    assert out.startswith("% toy.halo\n\\begin{align}")
    assert r"\left\lceil \frac{N}{B} \right\rceil" in out
    assert r"\Theta\left(N\right)" in out
    assert out.count("\\begin{align}") == 1


def test_latex_exact_name_selects_that_model_alone(capsys):
    """``latex attention.fa1.fwd`` prints that model, not also ``.causal`` and ``.paper``."""
    rc, out, err = run(capsys, "latex", "attention.fa1.fwd")
    assert rc == 0, err
    assert [ln for ln in out.splitlines() if ln.startswith("% ")] == ["% attention.fa1.fwd"]


def test_latex_fragment_with_sweep_table(capsys, toys):
    rc, out, _ = run(capsys, "latex", "toy.halo", "--vary", "N=64,128")
    assert rc == 0 and r"\begin{tabular}" in out and r"\toprule" in out


def test_latex_standalone_to_file(capsys, toys, tmp_path):
    path = tmp_path / "notes.tex"
    rc, out, _ = run(capsys, "latex", "toy.*", "--standalone", "--vary", "N=64,128", "-o", str(path))
    assert rc == 0 and out == ""
    marker, tex = path.read_text().split("\n", 1)                     # tilebound's marker line, then the document
    assert marker.startswith("% written by tilebound (sha256:")
    assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    assert tex.isascii()
    assert tex.count("\\section{") == 3                              # toy.halo, toy.copy, toy.pair
    assert tex.count("\\begin{tabular}") == 3                       # one sweep table per model
    assert [p.name for p in tmp_path.iterdir()] == ["notes.tex"]    # no temporary file left behind


def test_latex_standalone_default_sweeps_keep_the_at_values(capsys, toys, tmp_path):
    """With N = 64 fixed by --at, toy.pair's default sweep varies its first other parameter, R, at
    8/4 .. 8·4 = 2, 4, 8, 16, 32, keeping N = 64 in every row: reads = N ceil(N/C) + N ceil(N/R) =
    64·8 + 64·32, 64·16, 64·8, 64·4, 64·2 (C = 8, its default)."""
    path = tmp_path / "notes.tex"
    rc, _, err = run(capsys, "latex", "toy.pair", "--standalone", "--at", "N=64", "-o", str(path))
    assert rc == 0, err
    tex = path.read_text()
    assert r"\caption{\texttt{\detokenize{toy.pair}}: $\text{reads}$, $\text{writes}$, $\text{flops}$, $\text{total}$ at $N = 64$, $C = 8$}" in tex
    rows = [ln.split("&")[:2] for ln in tex.splitlines() if ln.strip()[:1].isdigit()]
    assert [(int(r.strip()), int(v.strip().replace(",", ""))) for r, v in rows] == [
        (2, 64 * 8 + 64 * 32), (4, 64 * 8 + 64 * 16), (8, 64 * 8 + 64 * 8), (16, 64 * 8 + 64 * 4), (32, 64 * 8 + 64 * 2)]


# ------------------------------------------------------------------------------ plot
def _capture_plot(monkeypatch) -> dict:
    from printing import plot
    drawn: dict = {}
    monkeypatch.setattr(plot, "plot_series", lambda series, **kw: drawn.update({s.label: s for s in series}))
    return drawn


@pytest.mark.extra("plot")
def test_plot_writes_png_with_executed_points(capsys, toys, tmp_path, monkeypatch):
    register_toy_checks(monkeypatch)
    out_png = tmp_path / "halo.png"
    rc, out, err = run(capsys, "plot", "toy.halo", "toy.copy", "--vary", "N=32..1024", "-o", str(out_png))
    assert rc == 0, err
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert err == "note: no executor check for toy.copy; plotting the formula only\n"


@pytest.mark.extra("plot")
def test_plot_executed_points_are_the_executor_at_the_models_own_point(capsys, toys, tmp_path, monkeypatch):
    """The executor gets the model's full point: its parameter names, --at values and defaults (B = 32)."""
    from verify.core import Check
    import toy_models

    seen = []

    def execute(p):
        seen.append(dict(p))
        return halo_brute_force(p)
    register_toy_checks(monkeypatch, Check(model=toy_models.halo, execute=execute, grid=halo_check().grid))
    drawn = _capture_plot(monkeypatch)
    rc, _, err = run(capsys, "plot", "toy.halo", "--vary", "N=32,100", "-q", "total", "-o", str(tmp_path / "p.png"))
    assert rc == 0, err
    assert seen == [{"N": 32, "B": 32}, {"N": 100, "B": 32}]
    ex = drawn["toy.halo: executed"]
    assert (list(ex.xs), list(ex.ys)) == ([32, 100], [66, 208])      # total = 2N + 2 ceil(N/32), by hand


@pytest.mark.extra("plot")
def test_plot_runs_executors_only_as_far_as_their_default_sweep(capsys, toys, tmp_path, monkeypatch):
    """The halo check's grid reaches N = 1024: N = 4096 is drawn as formula only, with a note."""
    register_toy_checks(monkeypatch)
    drawn = _capture_plot(monkeypatch)
    rc, _, err = run(capsys, "plot", "toy.halo", "--vary", "N=512..4096", "-o", str(tmp_path / "p.png"))
    assert rc == 0, err
    assert list(drawn["toy.halo: executed"].xs) == [512, 1024]
    assert err == ("note: toy.halo: executor not run at 2048, 4096: the toy.halo check sizes those points beyond "
                   "1,024, the largest of its default sweep; formula only there\n")


@pytest.mark.extra("plot")
def test_plot_gemm_draws_executed_points(capsys, tmp_path, monkeypatch):
    """GEMM's check names its points M, N, K, B_M, ... like the model, so plot draws executed counts.
    M = N = K, 128 x 128 x 32 tiles: reads = 2 M² ceil(M/128): M = 128 -> 32,768; 256 -> 262,144."""
    drawn = _capture_plot(monkeypatch)
    rc, _, err = run(capsys, "plot", "gemm.tiled", "--vary", "M,N,K=128,256", "-q", "reads", "-o", str(tmp_path / "g.png"))
    assert rc == 0, err
    ex = drawn["gemm.tiled: executed"]
    assert (list(ex.xs), list(ex.ys)) == ([128, 256], [32768, 262144])


@pytest.mark.extra("plot")
def test_plot_legend_names_the_class_and_the_leading_term(capsys, toys, tmp_path, monkeypatch):
    """toy.halo total = 2N + 2⌈N/B⌉ over B <= N: class Θ(N), leading term 2N (by hand); toy.copy's
    total 2N is its own leading term, so it gets no dashed guide."""
    drawn = _capture_plot(monkeypatch)
    rc, _, err = run(capsys, "plot", "toy.halo", "toy.copy", "--vary", "N=32,64", "--no-executed",
                     "-o", str(tmp_path / "p.png"))
    assert rc == 0, err
    assert sorted(drawn) == ["toy.copy: formula ∈ Θ(N)", "toy.halo: formula ∈ Θ(N)", "toy.halo: leading term ~ 2·N"]
    assert list(drawn["toy.halo: leading term ~ 2·N"].ys)[-1] == 128


@pytest.mark.extra("plot")
def test_plot_without_a_guide_when_the_leading_term_is_not_in_the_parameters(capsys, toys, tmp_path, monkeypatch):
    """toy.pair's leading term 2N²/P is in its divisible form's P: the formula is drawn, the guide is not."""
    drawn = _capture_plot(monkeypatch)
    rc, _, err = run(capsys, "plot", "toy.pair", "--vary", "N=32,64", "--no-executed", "-o", str(tmp_path / "p.png"))
    assert rc == 0, err
    assert list(drawn) == ["toy.pair: formula ∈ Θ(N²/P)"]
    assert err == "note: the leading term of toy.pair is in P, not its parameters; no dashed guide\n"


# ------------------------------------------------------------------------------ bad input: exit 2, one line
BAD = [
    (("show", "attention.fa1.fwd.papr"), "model: unknown model 'attention.fa1.fwd.papr'; did you mean attention.fa1.fwd.paper"),
    (("show", "toy.hallo"), "did you mean toy.halo"),
    (("show", "toy.halo", "--hw", "Z80"), "hw: unknown hardware 'Z80'"),
    (("show", "toy.halo", "--at", "N4096"), "at: expected NAME=VALUE, got 'N4096'"),
    (("show", "toy.halo", "--at", "N=abc"), "N: expected a number, got 'abc'"),
    (("show", "toy.halo", "--at", "X=3"), "X: not a parameter of toy.halo; known: N, B"),
    (("show", "toy.halo", "--at", "Bb=3"), "Bb: not a parameter of toy.halo; did you mean B?"),
    (("show", "gemm.tiled", "--at", "M_g=4096"), "M_g: not a parameter of gemm.tiled; did you mean M"),
    (("show", "toy.halo", "--at", "N=0"), "N: must be >= 1, got 0"),
    (("show", "toy.halo", "--at", "N=4", "N=5"), "N: given twice in --at (4 and 5)"),
    (("show", "toy.halo", "--at", "B=8"), "N: value missing for toy.halo, which has no default for N; give them"),
    (("table", "toy.halo", "--vary", "B=8"), "N: value missing for toy.halo"),
    (("show", "toy.halo", "--at", "N=1/2"), "N: must be an integer"),
    (("show", "toy.halo", "--dtype", "fp12"), "dtype: unknown element type 'fp12'"),
    (("show", "toy.halo", "--copies", "0"), "copies: must be >= 1, got 0"),
    (("show", "toy.halo", "--copies", "x"), "copies: must be an integer (e.g. 100, 4_096, 2**20, 10**9), got 'x'"),
    (("table", "toy.halo", "--vary", "N"), "vary: expected NAME=V1,V2"),
    (("table", "toy.halo", "--vary", "N=8..4"), "N: range '8..4'"),
    (("table", "toy.halo", "--vary", "N=8", "--at", "N=4"), "N: given by both --at and --vary"),
    (("table", "toy.halo", "--vary", "N=8", "--vary", "N=4"), "N: varied twice"),
    (("table", "toy.halo", "--vary", "Nn=8"), "Nn: not a parameter of toy.halo; did you mean N?"),
    (("table", "toy.halo", "--vary", "N=1..2**4000", "B=1..2**4000"), "vary: 4001 x 4001 = 16,008,001 points"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "x**2"), "per: x is not a parameter of toy.halo"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "Bb"), "per: Bb is not a parameter of toy.halo; did you mean B?"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "N+("), "per: cannot read 'N+(': it ends too early"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "sqrt(N)"), "per: cannot read 'sqrt(N)': unknown function sqrt"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "N**0.5"), "per: cannot read 'N**0.5': an exponent must be an integer"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "N**N"), "an exponent must be an integer"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "N**2**99"), "exponent 99 out of range (-64 to 64)"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "N/0"), "per: cannot read 'N/0': division by zero"),
    (("table", "toy.halo", "--vary", "N=8", "--per", "N-N"), "per: 'N-N' is 0"),
    (("table", "toy.halo", "--vary", "N=8", "--per", ""), "per: an empty value (an unset shell variable?)"),
    (("table", "toy.halo", "--vary", "N=8", "-q", "bytes"), "quantity: toy.halo has no quantity 'bytes'"),
    (("table", "toy.halo", "--vary", "N=8", "-q", "read"), "quantity: toy.halo has no quantity 'read'; did you mean reads"),
    (("table", "toy.halo", "--vary", "N=8", "--ratio", "toy.cpy"), "model: unknown model 'toy.cpy'; did you mean toy.copy"),
    (("table", "toy.halo"), "table: the following arguments are required: --vary"),
    (("frobnicate",), "invalid choice: 'frobnicate'"),
    (("latex", "nothing.like.this"), "model: unknown model"),
    (("latex", "toy.halo", "--vary", "Q=1,2"), "Q: not a parameter of toy.halo"),
    (("latex", "toy.*", "--vary", "N=64,128", "--at", "X=3"), "X: not a parameter of toy.halo, toy.copy, toy.pair"),
    (("table", "toy.pair", "--vary", "N=64", "--per", "theta"),
     "per: the theta of toy.pair's total, N²/P, is in P, not its parameters; give --per as an expression in N, R, C"),
    (("latex", "toy.halo", "-o", "/no/such/folder/notes.tex"), "output: cannot write '/no/such/folder/notes.tex'"),
    (("latex", "toy.halo", "-o", ""), "output: an empty value (an unset shell variable?)"),
    (("latex", "toy.halo", "--at", "N=64"), "at: latex uses --at only for its sweep tables"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(capsys, toys, argv, message):
    rc, out, err = run(capsys, *argv)
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("tilebound: "), err
    assert message in err, err
    assert "Traceback" not in err


PLOT_BAD = [
    (("-o", "halo.xyz"), "output: cannot tell an image format from 'halo.xyz'"),
    (("-o", "/no/such/folder/halo.png"), "output: cannot write '/no/such/folder/halo.png'"),
    (("-o", ""), "output: an empty value (an unset shell variable?)"),
]


@pytest.mark.parametrize("argv,message", PLOT_BAD, ids=[" ".join(a) for a, _ in PLOT_BAD])
@pytest.mark.extra("plot")
def test_plot_bad_output_exits_2_with_one_line(capsys, toys, argv, message):
    rc, out, err = run(capsys, "plot", "toy.halo", "--vary", "N=32,64", "--no-executed", *argv)
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("tilebound: "), err
    assert message in err


def test_a_bug_is_not_bad_input(capsys, toys, monkeypatch):
    """Only BadInput is one line and exit 2; any other exception (here a ValueError with a message that
    looks like ``name: problem``) is a bug and propagates with its traceback."""
    from tilebound import report

    def broken(*a, **k):
        raise ValueError("N: looks like bad input but is a bug")
    monkeypatch.setattr(report, "values_table", broken)
    with pytest.raises(ValueError, match="is a bug"):
        main(["show", "toy.halo", "--at", "N=8"])


def test_python_dash_m_subprocess():
    ok = subprocess.run([sys.executable, "-m", "tilebound", "list"], cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.strip() and ok.stderr == ""
    bad = subprocess.run([sys.executable, "-m", "tilebound", "show", "no.such.model"], cwd=ROOT, env=_env(),
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_closed_pipe_and_full_disk_exit_quietly():
    """``tilebound list | head -1`` exits 141 with nothing on stderr; ``> /dev/full`` one line and 1."""
    proc = subprocess.run(f"'{sys.executable}' -m tilebound list | head -c 1 > /dev/null; echo ${{PIPESTATUS[0]}}",
                          shell=True, executable="/bin/bash", cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert proc.stdout.strip() in ("0", "141") and proc.stderr == ""   # 0 when the output fit the pipe first
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "tilebound", "list"], cwd=ROOT, env=_env(), stdout=full,
                                  stderr=subprocess.PIPE, text=True)
        assert proc.returncode == 1
        assert proc.stderr == "tilebound: output: cannot write: No space left on device\n"


def test_help_exits_0(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0 and "show" in out and "table" in out


@pytest.mark.parametrize("command", ["list", "show", "table", "latex", "plot"])
def test_subcommand_help(capsys, command):
    rc, out, _ = run(capsys, command, "--help")
    assert rc == 0 and out.startswith(f"usage: tilebound {command}")


# ------------------------------------------------------------------------------ every registered model
@pytest.mark.parametrize("name", registry.names())
def test_every_model_shows_without_printer_code(capsys, name):
    """Any registered model prints: every quantity is named, every section derived (no "not derived"
    placeholder), and with complete defaults its values too."""
    model = registry.get(name)
    argv = ["show", name]
    if all(p.name in model.defaults for p in model.params):
        argv += ["--at"] + [f"{k}={v}" for k, v in model.defaults.items() if k in {p.name for p in model.params}]
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    assert "not derived" not in out
    for q in model.all_quantities:
        assert f"  {q} " in out
    if "--at" in argv:
        assert "exact" in out.split("\nat ")[-1]


def test_ascii_terminal_gets_ascii_formulas():
    env = _env(PYTHONIOENCODING="ascii")
    proc = subprocess.run([sys.executable, "-m", "tilebound", "show", "attention.fa1.fwd", "--at", "N=1024"],
                          cwd=ROOT, env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode("ascii")
    assert "ceil(N_k/B_c)" in out
    assert "?" not in out                     # nothing was replaced: tables spell ≈ and µs in ASCII too
    # N 1024, N_k 4096, d 64, B_c 128 -> 32 key blocks: reads 1024·130·32 + 2·4096·64 = 4,784,128, writes
    # 1024·64 + 1024·66·32 + 2·1024 = 2,230,272; 2 bytes each over 1.555 TB/s = 9.02 µs, memory-bound
    assert out.splitlines()[-1].split()[-3:] == ["9.02", "us", "memory"]


# ------------------------------------------------------------------ --counts: an MoE routing (issue 20)
def test_counts_on_show_and_table(capsys):
    """Routing 7, 0, 13, 4 pairs over 4 experts with B_M = 64 (the default): by hand, each non-empty expert pads
    to one 64-row block, so padded_rows = 3 x 64 = 192 and the weights are read once per M-block,
    reads_W = 3 K N = 3 x 14,336 x 4,096 = 176,160,768 at N = 4096 (44,040,192 at N = 1024)."""
    rc, out, err = run(capsys, "show", "moe.grouped", "--counts", "7,0,13,4", "--at", "T=24", "k=1")
    assert rc == 0 and err == ""
    vals = {ln.split()[0]: ln.split()[1] for ln in out.splitlines()
            if ln.split()[:1] in (["padded_rows"], ["reads_W"]) and "=" not in ln}
    assert vals == {"padded_rows": "192", "reads_W": "176,160,768"}
    rc, out, err = run(capsys, "table", "moe.grouped", "--counts", "7,0,13,4", "--vary", "N=1024,4096",
                       "--at", "T=24", "k=1", "-q", "padded_rows", "-q", "reads_W")
    assert rc == 0
    assert [ln.split() for ln in out.splitlines() if ln.startswith(("1,024", "4,096"))] == \
        [["1,024", "192", "44,040,192"], ["4,096", "192", "176,160,768"]]


@pytest.mark.parametrize("argv,line", [
    (["show", "gemm.tiled", "--counts", "1,2"], "tilebound: counts: gemm.tiled takes no --counts (models that do: moe.grouped)"),
    (["show", "moe.grouped", "--counts", "7,x"], "tilebound: counts: comma-separated integers"),
    (["show", "moe.grouped", "--counts", "7,-1", "--at", "T=6"], "tilebound: counts: "),
    (["show", "moe.grouped", "--counts", "7,0,13,4", "--at", "T=12", "k=2"], "tilebound: counts: an expert gets 13"),
])
def test_counts_refused_in_one_line(capsys, argv, line):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and err.count("\n") == 1 and err.startswith(line)
