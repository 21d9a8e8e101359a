"""Math is math: the LaTeX the toolkit writes has no parameter, value or relation set as text.

A small scanner keeps the text-mode parts of a LaTeX file (outside ``$...$``, ``\\(...\\)``, the math
environments; inside ``\\text{}``/``\\intertext{}`` again), drops comments, verbatim code names (``\\path``,
``\\texttt{\\detokenize{}}``) and package options, and looks there for what a reader should never see:
text-mode ``\\_`` (``N\\_k``), ``\\textgreater``/``\\textless`` (``>=`` escaped as text), ASCII relations
(``<=``, ``>=``, ``!=``, a lone ``=``, ``<``, ``>``), ``x`` as a times sign between symbols (``N x N_k``) or
numbers (``128 x 64``), a function written out (``ceil(``, ``sqrt(``, ``Omega(``) and a power written out
(``^``, ``**``).  It runs over the complete notes of every model (the document of every registered model,
and the command line's), every fragment and the ``show``/``table`` LaTeX, and is shown to catch each of
them in the text the notes used to print (the decode notes' ``ceil(nb/nbps)`` and ``total_S - total_1``
among them).
"""

from __future__ import annotations

import re

import pytest

from tilebound.cli import main

MATH_ENVS = {"align", "align*", "aligned", "equation", "equation*", "cases", "gather", "gather*", "multline",
             "multline*", "split"}
TEXT_IN_MATH = {"text", "intertext", "textrm", "mbox", "operatorname", "mathrm", "emph", "textit"}


def _strip(tex: str) -> str:
    tex = re.sub(r"(?<!\\)%.*", "", tex)                                  # comments
    tex = re.sub(r"\\path(.)(.*?)\1", "", tex)                            # verbatim code names
    tex = re.sub(r"\\texttt\{\\detokenize\{[^{}]*\}\}", "", tex)
    tex = re.sub(r"\\sisetup\{(?:[^{}]|\{[^{}]*\})*\}", "", tex)          # siunitx options
    tex = re.sub(r"\\begin\{tabular\}\{(?:[^{}]|\{[^{}]*\})*\}", "", tex)   # column specs (table-format=...)
    tex = re.sub(r"\\(?:usepackage|documentclass)(\[[^\]]*\])?\{[^}]*\}", "", tex)
    tex = re.sub(r"\\(?:setlength|floatplacement|providecommand)\{[^}]*\}(\[[^\]]*\])?\{[^}]*\}", "", tex)
    tex = re.sub(r"\\(?:begin\{axis\}\[|addplot\[).*?\]", "", tex, flags=re.S)   # pgfplots' options
    return tex


def text_mode(tex: str) -> str:
    """The text-mode characters of ``tex`` (see the module docstring)."""
    tex = _strip(tex)
    out, stack, depth, i = [], [("text", None)], 0, 0
    while i < len(tex):
        c, mode = tex[i], stack[-1][0]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+\*?|.)", tex[i:])
            word = m.group(1)
            j = i + len(m.group(0))
            if word in ("begin", "end"):
                env = re.match(r"\{([^}]*)\}", tex[j:])
                name = env.group(1)
                if name in MATH_ENVS:
                    if word == "begin":
                        stack.append(("math", name))
                    elif stack[-1] == ("math", name):
                        stack.pop()
                i = j + len(env.group(0))
                continue
            if mode == "math" and word in TEXT_IN_MATH and tex[j:j + 1] == "{":
                depth += 1
                stack.append(("text", depth))
                i = j + 1
                continue
            if mode == "text" and word in ("(", "["):
                stack.append(("math", word))
            elif mode == "math" and word in (")", "]") and stack[-1][1] in ("(", "["):
                stack.pop()
            elif mode == "text":
                out.append(m.group(0))
            i = j
            continue
        if c == "$":
            if mode == "math" and stack[-1][1] == "$":
                stack.pop()
            elif mode == "text":
                stack.append(("math", "$"))
            i += 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if mode == "text" and stack[-1][1] == depth:
                stack.pop()
            depth -= 1
            i += 1
            continue
        if mode == "text":
            out.append(c)
        i += 1
    return "".join(out)


FORBIDDEN = {
    "text-mode \\_": re.compile(r"\\_"),
    "\\textgreater/\\textless": re.compile(r"\\text(greater|less)"),
    "ASCII relation": re.compile(r"<=|>=|!=|(?<=\s)[=<>](?=\s)"),
    "x between symbols": re.compile(r"(?<![A-Za-z])[A-Za-z](_\{?\w+\}?)? x [A-Za-z](?![a-z])"),
    "x between numbers": re.compile(r"\d ?x ?\d"),
    "a function written out": re.compile(r"(?<![A-Za-z\\])(ceil|floor|sqrt|min|max|log|exp|Theta|Omega)\("),
    "a power written out": re.compile(r"\\textasciicircum|\*\*|\^"),
}


def offences(tex: str) -> list[str]:
    text = text_mode(tex)
    found = []
    for what, rx in FORBIDDEN.items():
        for m in rx.finditer(text):
            found.append(f"{what}: ...{text[max(0, m.start() - 30):m.end() + 30]}...")
    return found


# ------------------------------------------------------------------------------ the scanner works
OLD = [
    r"\caption{attention.fa1.fwd: total at N\_k = 4096, d = 64, B\_r = 128}",
    r"\emph{Note:} a causal mask changes no count: the standard kernels move whole N x N\_k matrices",
    r"\intertext{asymptotics of total (all sizes \textgreater{}= 1):}",
    r"regime B_r <= N",
    r"\begin{align*} \text{reads} &= N \intertext{when d = 64:} \end{align*}",
    # the decode notes before they were records (issue 17): a function, names and a difference as text
    r"\emph{Note:} S\_ne = ceil(nb/nbps) splits load Q; an empty split writes only its partials",
    r"\emph{Note:} $\text{split}\_\text{overhead}$ $=$ total\_S - total\_1 (the total at S splits)",
    r"\emph{Note:} x is re-read once per tile row: ceil(M / B\_M) K elements",
    r"COSMA Q \textgreater{}= 2 M N K /\allowbreak{} sqrt(S) + M N",
    r"Proposition 3: Omega(N\textasciicircum{}2 d\textasciicircum{}2 / M)",
    r"a 128 x 64 tile, N**2",
]


@pytest.mark.parametrize("tex", OLD)
def test_the_scanner_finds_text_mode_math(tex):
    assert offences(tex), tex


@pytest.mark.parametrize("tex", [
    r"at $N_k = 4096$, $d = 64$, whole $N \times N_k$ matrices, all sizes $\ge 1$",
    r"\begin{align*}\text{t}\_\text{compute} &= N \intertext{when $B \le N$:} x &\le y\end{align*}",
    r"a path \path|csrc/flash_attn/api.cpp| and \texttt{\detokenize{a_b}} and \sisetup{group-minimum-digits=4}",
])
def test_the_scanner_passes_math_as_math(tex):
    assert offences(tex) == []


# ------------------------------------------------------------------------------ what the toolkit writes
# the fast run's families are conftest.FAST_NOTES (the fast_notes fixture); the slow one takes every model,
# the user plugin's included


def _notes(tmp_path, patterns) -> str:
    out = tmp_path / "notes.tex"
    assert main(["latex", *patterns, "--standalone", "--no-figures", "-o", str(out)]) == 0
    return out.read_text()


def test_standalone_notes(fast_notes):
    notes = fast_notes                                   # tests/conftest.py: latex FAST --standalone --no-figures
    assert "tabular" in notes and "algorithmic" in notes and r"\intertext" in notes
    assert offences(notes) == []


def test_the_document_of_every_registered_model():
    """printing.document.to_document over every model the registry finds (the user plugin's included): the
    notes, bounds, sources, regimes and parameters of every model print their math as math."""
    from printing.document import to_document
    from symbolic import registry

    tex = to_document([ref.model for ref in registry.refs()])
    assert all(rf"\section{{\texttt{{\detokenize{{{n}}}}}}}" in tex for n in registry.names())
    assert offences(tex) == []


@pytest.mark.slow
def test_standalone_notes_of_every_model(tmp_path, capsys):
    assert offences(_notes(tmp_path, [])) == []


def test_fragments(tmp_path, capsys):
    assert main(["latex", "attention.*", "gemm.*", "--split", str(tmp_path / "f"), "--no-figures"]) == 0
    files = sorted((tmp_path / "f").iterdir())
    assert len(files) > 20
    bad = {f.name: offences(f.read_text()) for f in files}
    assert {k: v for k, v in bad.items() if v} == {}


@pytest.mark.parametrize("argv", [
    ["show", "attention.fa1.fwd.paper", "--at", "N=4096", "--format", "latex"],
    ["table", "attention.fa1.fwd", "--vary", "N=1024..4096", "--at", "N_k=2048", "--format", "latex"],
    ["latex", "gemm.tiled", "attention.standard.fwd", "--vary", "M,N=512,1024"],
])
def test_cli_latex(argv, capsys):
    assert main(argv) == 0
    assert offences(capsys.readouterr().out) == []
