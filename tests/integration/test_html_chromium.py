"""The HTML pages in a real browser: headless Chromium (Debian's ``chromium``) loads each page, the page's
own BigInt code evaluates every formula, and each ``result-<quantity>`` must equal the model's exact
evaluation in Python (``model.evaluate``, which is :mod:`symbolic.evaluate`: an independent implementation,
Python ints and Fractions).  Three points per model - the defaults, a ragged point where no block divides a
size, and one with a size at ``10**30`` - plus bad fragments whose one message must be the command line's.

One Chromium launch per model: a harness copy of the page sets each point's fragment in turn and calls the
page's own recompute (``window.tilebound.compute``: the path a reader's fragment takes), collecting the
results into one ``<pre>`` that ``--dump-dom`` prints.  A screenshot of one page is taken for a person to
look at, and its DOM is checked for ``<math>`` elements (what renders MathML) rather than formula text.

Skipped without Chromium, except under ``CI=true`` (``.ci/run`` installs it), where that is a failure.
The sweep over every model is ``slow``; the default run takes a representative subset.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from fractions import Fraction

import pytest

from base.errors import BadInput
from printing.content import model_printout
from printing.html import PageEntry, exact_text, model_page
from printing.javascript import NotExpressible, to_javascript
from symbolic import registry

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

if CHROMIUM is None:
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed (CI installs Debian's chromium; see .ci/run)", pytrace=False)
    pytest.skip("needs chromium (Debian's chromium package)", allow_module_level=True)

#: the default run: floor sums, windows (Min/Max), a Piecewise over real parameters, gcd and the Iverson
#: bracket, a model with an algorithm-computed quantity, and the two the docs show
SUBSET = ["gemm.tiled", "attention.fa1.fwd.paper", "attention.fa1.fwd.causal", "attention.fa2.fwd.window",
          "latency.pipeline", "decode.mla", "gemm.l2.lru"]

#: models without a default for every parameter: a point chosen by hand (reals as exact fractions)
HAND = {
    "latency.littles_law": {"BW": Fraction(2039), "L": Fraction(7, 10), "n_SM": 108, "w": 4},
    "latency.pipeline": {"n": 64, "S": 3, "L": Fraction(5, 4), "t_x": Fraction(3, 10), "t_c": Fraction(7, 10)},
    "latency.pipeline_sync": {"n": 64, "L": Fraction(5, 4), "t_x": Fraction(3, 10), "t_c": Fraction(7, 10)},
    "latency.pingpong": {"d": 128, "F_tc": Fraction(989, 1000), "R_exp": Fraction(39, 1000)},
}


def _text(v) -> str:
    """A value as a fragment writes it (an exact fraction as ``p/q``)."""
    return exact_text(Fraction(v))


def fragment(point) -> str:
    return "&".join(f"{k}={_text(v)}" for k, v in point.items())


def points(m) -> list[dict]:
    """Three valid points: the defaults (or :data:`HAND`), a ragged one, one with a size at ``10**30``."""
    base = m.check_point(HAND.get(m.name, {}))
    out = [base]
    ragged = dict(base)
    for p in m.params:
        if p.counts and isinstance(base[p.name], int) and base[p.name] >= 2:
            trial = {**ragged, p.name: base[p.name] * 3 // 2 + 1}
            try:
                ragged = m.check_point(trial)
            except BadInput:
                pass
    out.append(ragged)
    for p in m.params:                      # the first size that may be 10**30
        if not p.counts:
            continue
        try:
            out.append(m.check_point({**base, p.name: 10 ** 30}))
            break
        except BadInput:
            continue
    else:
        raise AssertionError(f"{m.name}: no parameter takes 10**30")
    return out


def bad_cases(m, base) -> list[tuple[str, str]]:
    """``(fragment, the command line's message)``: a value below a parameter's least, and a non-number."""
    from tilebound.numbers import parse_number
    count = next(p for p in m.params if p.counts)
    out = []
    with pytest.raises(BadInput) as below:
        m.check_point({**base, count.name: count.least - 1})
    out.append((fragment({**base, count.name: count.least - 1}), str(below.value)))
    with pytest.raises(BadInput) as word:
        parse_number(count.name, "abc")
    out.append(("&".join(f"{k}={'abc' if k == count.name else _text(v)}" for k, v in base.items()), str(word.value)))
    return out


HARNESS = """<script>
(() => {
  const got = [];
  for (const f of %s) {
    location.hash = f;
    window.tilebound.compute();
    const r = {};
    document.querySelectorAll("output[id^='result-']").forEach(o => { r[o.id] = o.textContent; });
    got.push({fragment: f, results: r, error: document.getElementById("error").textContent});
  }
  const pre = document.createElement("pre");
  pre.id = "harness";
  pre.textContent = JSON.stringify(got);
  document.body.appendChild(pre);
})();
</script>
"""


def chromium(tmp_path, url: str, *flags: str) -> str:
    profile = tmp_path / "profile"
    run = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={profile}", *flags, url], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def browser_results(tmp_path, m, fragments) -> list[dict]:
    page = model_page(PageEntry(m))
    page = page.replace("</body>", HARNESS % json.dumps(fragments) + "</body>")
    path = tmp_path / f"{m.name}.html"
    path.write_text(page, encoding="utf-8")
    dom = chromium(tmp_path, path.as_uri(), "--dump-dom")
    found = re.search(r'<pre id="harness">(.*?)</pre>', dom, re.S)
    assert found, f"{m.name}: the page's script did not run:\n{dom[-1500:]}"
    return json.loads(html.unescape(found.group(1)))


def check_model(tmp_path, name: str) -> None:
    m = registry.get(name)
    pts = points(m)
    bad = bad_cases(m, pts[0])
    got = browser_results(tmp_path, m, [fragment(p) for p in pts] + [f for f, _ in bad])
    browser_quantities = set()
    for q, e in m.all_quantities.items():
        try:
            to_javascript(e)
            browser_quantities.add(q)
        except NotExpressible:
            pass
    assert browser_quantities, f"{name}: no quantity evaluated in the browser"
    for p, res in zip(pts, got):
        assert res["error"] == "", (name, p, res["error"])
        want = {f"result-{q}": exact_text(m.evaluate(q, **p)) for q in browser_quantities}
        assert res["results"] == want, (name, p)
    for (f, message), res in zip(bad, got[len(pts):]):
        assert res["error"] == message, (name, f)
        assert all(v == "" for v in res["results"].values()), (name, f, "a result shown beside an error")


@pytest.mark.parametrize("name", SUBSET)
def test_browser_equals_exact_evaluation(tmp_path, name):
    check_model(tmp_path, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", registry.names())
def test_browser_equals_exact_evaluation_every_model(tmp_path, name):
    check_model(tmp_path, name)


def test_unknown_parameter_in_the_fragment_is_named(tmp_path):
    m = registry.get("gemm.tiled")
    (res,) = browser_results(tmp_path, m, ["M=64&Mx=3"])
    assert res["error"].startswith("Mx: not a parameter of gemm.tiled")
    assert all(v == "" for v in res["results"].values())


def test_a_root_is_exact_when_rational_and_else_a_labelled_approximation(tmp_path):
    # a bound of COSMA's shape (Kwasniewski et al. 2019, Theorem 1: 2 M N K / sqrt(S) + M N) in the model's own sizes
    import sympy as sp
    from symbolic.model import Model
    from symbolic.params import param
    n, s = param("N", "size"), param("S", "fast memory (elements)")
    m = Model("test.root", "a bound with a square root", {"reads": n * s}, (n, s),
              lower_bounds={"bound": 2 * n ** 3 / sp.sqrt(s) + n ** 2})
    page = model_page(PageEntry(m)).replace("</body>", """<script>
      const got = [];
      for (const f of ["N=10&S=16", "N=10&S=2"]) {
        location.hash = f; window.tilebound.compute();
        got.push(document.getElementById("bound-1").textContent);
      }
      const pre = document.createElement("pre"); pre.id = "harness"; pre.textContent = JSON.stringify(got);
      document.body.appendChild(pre);
    </script></body>""")
    path = tmp_path / "root.html"
    path.write_text(page, encoding="utf-8")
    dom = chromium(tmp_path, path.as_uri(), "--dump-dom")
    exact, approx = json.loads(html.unescape(re.search(r'<pre id="harness">(.*?)</pre>', dom, re.S).group(1)))
    assert exact == str(2 * 10 ** 3 // 4 + 10 ** 2)                  # sqrt(16) = 4: exact
    assert approx.startswith("not exact") and "approximation" in approx
    value = float(re.search(r"\u2248 ([0-9.e+-]+)", approx).group(1))
    assert value == pytest.approx(2 * 10 ** 3 / 2 ** 0.5 + 10 ** 2, rel=1e-5)


def test_screenshot_and_formulas_are_mathml(tmp_path, capsys):
    from tilebound.cli import main
    folder = tmp_path / "site"
    assert main(["html", "attention.fa1.fwd.paper", "-o", str(folder)]) == 0
    capsys.readouterr()
    page = folder / "attention.fa1.fwd.paper.html"
    shot = tmp_path / "page.png"
    chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1200,1800")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000
    dom = chromium(tmp_path, page.as_uri(), "--dump-dom")
    formulas = re.search(r'<section id="formulas">(.*?)</section>', dom, re.S).group(1)
    m = registry.get("attention.fa1.fwd.paper")
    lines = sum(len(s.lines) for s in model_printout(m).sections)
    assert formulas.count("<math") >= lines
    assert "<mfrac>" in formulas and "\u2308" in html.unescape(formulas)      # fractions and ⌈ as MathML
    assert "ceiling(" not in formulas and "\\lceil" not in formulas            # no formula as text
    assert re.search(r'<output id="result-total"[^>]*>\d+</output>', dom)    # the calculator ran


#: values typed as the command line reads them (tilebound.numbers); each either accepted with the same value or
#: refused with the same message
FORMS = ["2**12", "2^12", "4_096", "1e3", "+64", "7/10", "0.5", "-2**3", "abc", "2**5000", "1e5000", "0", "12/4"]


def test_typed_forms_read_as_the_command_line_reads_them(tmp_path):
    from tilebound.numbers import parse_number
    m = registry.get("gemm.tiled")
    base = m.check_point({})
    got = browser_results(tmp_path, m, ["&".join(f"{k}={form if k == 'M' else _text(v)}" for k, v in base.items())
                                        for form in FORMS])
    for form, res in zip(FORMS, got):
        try:
            pt = m.check_point({**base, "M": parse_number("M", form)})
        except BadInput as exc:
            assert res["error"] == str(exc), form
            continue
        assert res["error"] == "", form
        assert res["results"]["result-total"] == exact_text(m.evaluate("total", **pt)), form


#: pages opened as a reader opens them (no fragment): the latency models, whose inputs start at their verify
#: check's point (no default for every parameter), and models that start at their defaults
OPENING = ["latency.littles_law", "latency.pipeline", "latency.pipeline_sync", "latency.pingpong", "gemm.tiled",
           "gemm.l2.lru"]


def check_opening(tmp_path, names) -> None:
    """Each page written by ``tilebound html``, opened without a fragment, shows no error and every result,
    each equal to ``model.evaluate`` at the values its inputs start with (read back from the page's DOM)."""
    from tilebound.cli import main
    from tilebound.numbers import parse_number
    folder = tmp_path / "site"
    assert main(["html", *names, "-o", str(folder), "--no-figures", "--no-tables"]) == 0
    for name in names:
        m = registry.get(name)
        dom = chromium(tmp_path, (folder / f"{name}.html").as_uri(), "--dump-dom")
        error = re.search(r'<p id="error"[^>]*>(.*?)</p>', dom, re.S)
        assert error and error.group(1) == "", (name, error and html.unescape(error.group(1)))
        assert re.search(r'<body[^>]*data-state="ok"', dom), name
        start = {p.name: parse_number(p.name, html.unescape(re.search(
            rf'<input id="input-{re.escape(p.name)}"[^>]*value="([^"]*)"', dom).group(1))) for p in m.params}
        point = m.check_point(start)
        shown = {k: html.unescape(v) for k, v in re.findall(r'<output id="(result-[^"]+)"[^>]*>(.*?)</output>', dom)}
        assert shown, name
        for key, text in shown.items():
            assert text == exact_text(m.evaluate(key[len("result-"):], **point)), (name, key, text)


def test_pages_open_showing_results_not_an_error(tmp_path, capsys):
    check_opening(tmp_path, OPENING)


@pytest.mark.slow
@pytest.mark.parametrize("part", range(4))
def test_every_page_opens_showing_results_not_an_error(tmp_path, capsys, part):
    # every model's page, in four parts that the test workers share (a browser start a page)
    check_opening(tmp_path, registry.names()[part::4])


def test_cosmas_bound_is_evaluated_in_its_own_sizes(tmp_path, capsys):
    # gemm.cosma's bound 2 M N K / sqrt(S) + M N (Kwasniewski et al. 2019, Theorem 1) is in GEMM's sizes and the
    # fast memory S, not the model's tile parameters: the page has an input for each, M, N, K start at
    # gemm.tiled's defaults (4096), S empty (the bound says so); the references are computed here by hand
    import math

    from tilebound.cli import main
    folder = tmp_path / "site"
    assert main(["html", "gemm.cosma", "-o", str(folder), "--no-figures", "--no-tables"]) == 0
    page = folder / "gemm.cosma.html"
    fragments = ["", "S=16384", "M=1000&N=3000&K=77&S=40960", "S=0"]
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", """<script>
      const got = [];
      for (const f of %s) {
        location.hash = f; window.tilebound.compute();
        got.push([1, 2].map(k => document.getElementById("bound-" + k).textContent)
                 .concat([document.getElementById("error").textContent]));
      }
      const pre = document.createElement("pre"); pre.id = "harness"; pre.textContent = JSON.stringify(got);
      document.body.appendChild(pre);
    </script></body>""" % json.dumps(fragments)), encoding="utf-8")
    dom = chromium(tmp_path, page.as_uri(), "--dump-dom")
    opened, square, ragged, bad = json.loads(html.unescape(re.search(r'<pre id="harness">(.*?)</pre>', dom, re.S).group(1)))

    def gap(M, N, K, B_M=128, B_N=128, B_K=32, s=3):        # the tiled traffic over the bound at the tile's memory
        traffic = K * M * -(-N // B_N) + K * N * -(-M // B_M) + M * N
        return traffic / (2 * M * N * K / math.sqrt(B_M * B_N + s * (B_M + B_N) * B_K) + M * N)

    def approx(text):
        assert text.startswith("not exact") and "approximation" in text, text
        return float(re.search(r"\u2248 ([0-9.e+-]+)", text).group(1))

    assert opened[0] == "set S to evaluate this bound" and opened[2] == ""
    assert approx(opened[1]) == pytest.approx(gap(4096, 4096, 4096), rel=1e-5)
    assert square[0] == str(2 * 4096 ** 3 // 128 + 4096 ** 2) and square[2] == ""     # sqrt(16384) = 128: exact
    assert approx(ragged[0]) == pytest.approx(2 * 1000 * 3000 * 77 / math.sqrt(40960) + 1000 * 3000, rel=1e-5)
    assert approx(ragged[1]) == pytest.approx(gap(1000, 3000, 77), rel=1e-5)
    assert bad == ["", "", "S: must be >= 1, got 0"]
