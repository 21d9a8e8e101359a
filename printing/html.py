r"""A model as one self-contained HTML page: MathML formulas and an exact calculator in the browser.

:func:`model_page` renders a :class:`PageEntry` - a model with the tables, figure and listing the command
line chose for it - as one HTML file that needs no network when viewed: its CSS and script are inline, its
formulas are MathML (:mod:`printing.mathml`, rendered natively by the browser), its figure an inline SVG.
The page shows, from the content tree of :func:`printing.content.model_printout`, the header (summary,
source, parameters), every section of labelled formulas (exact counts, the divisible form, the leading term
and Θ class, the lower bounds) and the notes; then the annotated listing when the model has one, and the tables.

**The calculator.** An input per parameter, with its meaning and least value; the URL fragment sets them
(``#N=4096&d=64&M=51200``) and the page keeps the fragment up to date, so a point can be linked.  Each
quantity that is a SymPy expression is evaluated in the browser by the code :class:`printing.javascript.
JavaScriptPrinter` prints from that expression, exactly, with ``BigInt`` rationals (no number of it is
baked into the page); its result is the text of the element ``result-<quantity>``: the integer's digits, or
``num/den``.  A quantity the printer cannot express (a count computed by an algorithm, such as
``gemm.l2.lru``'s LRU misses) says so and is shown in a table at stated points, computed in Python by
``model.evaluate``.  A lower bound in the model's own parameters is evaluated too (``bound-<k>``, in the order
of ``Model.lower_bounds``); one with an irrational root shows an approximation of the whole expression
(:func:`printing.javascript.RUNTIME`'s ``Q.approximately``), labelled as one.  A bound stated in sizes that
are not the model's parameters (``gemm.cosma``'s COSMA bound, in GEMM's ``M, N, K`` and the fast memory ``S``:
:func:`bound_sizes`) gets an input per size beside the bounds, set by the fragment too; while one it needs is
empty the bound says which, and the quantities are shown regardless.  Bad input shows one message naming the parameter, worded as the command line words it
(:mod:`base.validate`): an integer parameter takes an integer ``>= least`` (``4096``, ``4_096``, ``2**12``,
``2^12``), a real one a number ``> 0`` (``7/10``, ``0.5``, ``1e-9``, read exactly).  A model's own checks
across parameters (``Model.validate``, e.g. ``H_kv`` divides ``H``) run only on the command line; the page
says so where a model has them.

``window.tilebound.compute()`` recomputes from the current fragment, the path a reader's link takes: the
browser test (``tests/integration/test_html_chromium.py``) sets each point's fragment and calls it, so one page
load checks many points.

:func:`index_page` lists the pages.  Nothing here computes a cost: the model derives, this module arranges.
"""

from __future__ import annotations

import html as _html
import json
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Integral
from typing import Mapping

import sympy as sp

from symbolic.listings import Line, Loop
from symbolic.notes import Note, as_note

from .content import model_printout
from .javascript import RUNTIME, NotExpressible, to_javascript
from .mathml import note_to_html, relation_mathml, to_mathml

__all__ = ["PageEntry", "model_page", "index_page", "index_row", "index_of_rows", "page_name", "calculator_parts",
           "bound_sizes", "exact_text", "STYLE"]


@dataclass(frozen=True)
class PageEntry:
    """A model with what its page shows beyond the model itself: ``tables`` (:class:`printing.tables.Table`),
    an inline ``figure`` (SVG markup, ``""`` for none) with its ``caption`` (a note), the ``listing``
    (:class:`symbolic.listings.Listing` or ``None``), the ``points`` at which a quantity the browser cannot
    evaluate is tabulated, ``figure_note`` (why there is no figure, when there is none), and ``start``: the
    inputs' first values for parameters without a default (``{name: value}``; the command line takes them from
    the model's verify check, :func:`tilebound.commands.html.start_point`), with ``start_note`` saying so."""

    model: object
    tables: tuple = ()
    figure: str = ""
    caption: object = ""
    listing: object = None
    points: tuple = ()
    figure_note: str = ""
    start: Mapping = field(default_factory=dict)
    start_note: str = ""


def page_name(model) -> str:
    """The page's file name: ``<model>.html``."""
    return f"{model.name}.html"


def exact_text(value) -> str:
    """An exact value as the calculator writes it: an integer's digits, a fraction as ``num/den``."""
    v = Fraction(value) if not isinstance(value, Fraction) else value
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


#: the page's style: readable on a phone and a projector, formulas scroll sideways rather than overflow
STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 1.5rem auto; padding: 0 1rem;
       line-height: 1.45; color: #1d1d1f; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h1 code { font-size: inherit; }
h2 { margin-top: 2rem; border-bottom: 1px solid #ccc; } h3 { margin-bottom: .3rem; }
code { font-family: ui-monospace, monospace; background: #f3f3f3; padding: 0 .2em; }
table { border-collapse: collapse; } td, th { padding: .25rem .6rem; vertical-align: top; text-align: left; }
table.data th { border-bottom: 1px solid #999; } table.data td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.formulas td.f div { overflow-x: auto; overflow-y: hidden; max-width: 56rem; padding: .15rem 0; }
table.formulas math, .calc math, table.data math { math-style: normal; }
.calc { background: #f7f9fc; border: 1px solid #d5dde8; padding: .8rem 1rem; border-radius: .4rem; }
.calc label { display: grid; grid-template-columns: 7rem 12rem 1fr; gap: .6rem; align-items: center; margin: .2rem 0; }
.calc input { font: inherit; padding: .1rem .3rem; }
.calc .meaning { color: #555; font-size: .9rem; }
output { font-family: ui-monospace, monospace; word-break: break-all; }
#error { color: #a00; font-weight: 600; min-height: 1.4em; }
.approx { color: #735c00; }
.note { color: #333; } .muted { color: #666; font-size: .9rem; }
ol.listing { font-family: ui-monospace, monospace; font-size: .92rem; } ol.listing .moves { color: #245; }
ol.listing .ind1 { padding-left: 1.5rem; } ol.listing .ind2 { padding-left: 3rem; } ol.listing .ind3 { padding-left: 4.5rem; }
ol.listing .ind4 { padding-left: 6rem; }
figure svg { max-width: 100%; height: auto; }
"""

#: the calculator's script, after :data:`printing.javascript.RUNTIME` and the model's ``MODEL`` record
_CALCULATOR = r"""
(() => {
  "use strict";
  const MAX_EXPONENT = 4096;
  class Bad extends Error { constructor(param, problem) { super(param + ": " + problem); } }
  const quoted = t => (t.length <= 40 ? "'" + t + "'" : "'" + t.slice(0, 20) + "'...");
  // a number as the command line reads one (tilebound.numbers): exact, never a float
  const parse = (name, text) => {
    const t = text.trim();
    let m;
    if ((m = /^([+-]?)(\d[\d_]*)$/.exec(t))) return Q.int(BigInt((m[1] === "-" ? "-" : "") + m[2].replace(/_/g, "")));
    if ((m = /^([+-]?)(\d+)(?:\*\*|\^)([+-]?\d+)$/.exec(t))) {
      const e = Number(m[3]);
      if (Math.abs(e) > MAX_EXPONENT) throw new Bad(name, "exponent out of range (-" + MAX_EXPONENT + " to " + MAX_EXPONENT + ") in " + quoted(t));
      const p = Q.pow(Q.int(BigInt(m[2])), e);
      return m[1] === "-" ? Q.mul(Q.int(-1n), p) : p;
    }
    if ((m = /^([+-]?)(\d+)\/(\d+)$/.exec(t))) {
      if (BigInt(m[3]) === 0n) throw new Bad(name, "division by zero in " + quoted(t));
      return Q.rat(BigInt((m[1] === "-" ? "-" : "") + m[2]), BigInt(m[3]));
    }
    if ((m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(t)) && (m[2] || m[3])) {
      const frac = m[3] || "", e = Number(m[4] || 0) - frac.length;
      if (Math.abs(e) > MAX_EXPONENT) throw new Bad(name, "exponent out of range (-" + MAX_EXPONENT + " to " + MAX_EXPONENT + ") in " + quoted(t));
      const digits = Q.int(BigInt((m[1] === "-" ? "-" : "") + ((m[2] || "") + frac || "0")));
      return Q.mul(digits, Q.pow(Q.int(10n), e));
    }
    throw new Bad(name, "expected a number, got " + quoted(t));
  };
  const LARGEST = 10n ** BigInt(MAX_EXPONENT);
  const bounded = (name, text, x) => {            // tilebound.numbers.MAX_MAGNITUDE, as the command line bounds it
    if ((x[0] < 0n ? -x[0] : x[0]) > LARGEST || x[1] > LARGEST) {
      throw new Bad(name, quoted(text.trim()) + " is beyond the largest number a value may be, 10**" + MAX_EXPONENT);
    }
    return x;
  };
  // a parameter's value checked as base.validate checks it
  const check = (p, x) => {
    if (p.integer) {
      if (x[1] !== 1n) throw new Bad(p.name, "must be an integer, got " + Q.show(x));
      if (x[0] < BigInt(p.least)) throw new Bad(p.name, "must be >= " + p.least + ", got " + Q.show(x));
    } else if (x[0] <= 0n) {
      throw new Bad(p.name, "must be > 0, got " + Q.show(x));
    }
    return x;
  };
  const byName = Object.fromEntries(MODEL.params.map(p => [p.name, p]));
  const input = name => document.getElementById("input-" + name);
  const fromFragment = () => {
    const frag = decodeURIComponent(location.hash.replace(/^#/, ""));
    if (!frag) return null;
    for (const item of frag.split("&")) {
      if (!item) continue;
      const eq = item.indexOf("=");
      const name = eq < 0 ? item : item.slice(0, eq);
      if (!(name in byName)) {
        return new Bad(name, "not a parameter of " + MODEL.name + "; parameters: " + MODEL.params.map(p => p.name).join(", "));
      }
      input(name).value = eq < 0 ? "" : item.slice(eq + 1);
    }
    return null;
  };
  const results = () => document.querySelectorAll("output[id^='result-'], output[id^='bound-']");
  const clear = () => results().forEach(o => { o.textContent = ""; o.classList.remove("approx"); });
  const compute = (fragmentError) => {
    const error = document.getElementById("error");
    clear();
    try {
      if (fragmentError) throw fragmentError;
      const v = {};
      for (const p of MODEL.params) {
        const text = input(p.name).value;
        if (!text.trim()) {
          if (p.bound) continue;                  // a bound's size: only the bounds that need it wait for it
          throw new Bad(p.name, "value missing for " + MODEL.name);
        }
        v[p.name] = check(p, bounded(p.name, text, parse(p.name, text)));
      }
      for (const [q, f] of Object.entries(MODEL.quantities)) {
        document.getElementById("result-" + q).textContent = Q.show(f(v));
      }
      for (const [k, f, needs] of MODEL.bounds) {
        const out = document.getElementById("bound-" + k);
        const unset = needs.filter(n => !(n in v));
        if (unset.length) { out.textContent = "set " + unset.join(", ") + " to evaluate this bound"; continue; }
        try { out.textContent = Q.show(f(v)); } catch (e) {
          if (!(e instanceof Q.NotExact)) throw e;
          out.textContent = "not exact (an irrational root): \u2248 " + Q.approximately(() => f(v)) + " (an approximation)";
          out.classList.add("approx");
        }
      }
      error.textContent = "";
      document.body.dataset.state = "ok";
    } catch (e) {
      clear();
      error.textContent = e instanceof Bad ? e.message : "cannot evaluate at this point: " + e.message;
      document.body.dataset.state = "error";
    }
  };
  const toFragment = () => {
    const parts = MODEL.params.map(p => p.name + "=" + input(p.name).value.trim()).filter(s => !s.endsWith("="));
    history.replaceState(null, "", "#" + parts.join("&"));
  };
  window.addEventListener("hashchange", () => compute(fromFragment()));
  for (const p of MODEL.params) input(p.name).addEventListener("input", () => { toFragment(); compute(null); });
  // what a test harness calls after setting location.hash: the same path as a reader's fragment
  window.tilebound = { compute: () => compute(fromFragment()) };
  compute(fromFragment());
})();
"""


def _e(text) -> str:
    return _html.escape(str(text))


def calculator_parts(model) -> tuple[dict, dict]:
    """``({quantity: JavaScript}, {quantity: reason})``: each quantity's exact JavaScript, or why the
    printer cannot express it (:class:`~printing.javascript.NotExpressible`)."""
    js, reasons = {}, {}
    for q, e in model.all_quantities.items():
        try:
            js[q] = to_javascript(e)
        except NotExpressible as exc:
            reasons[q] = str(exc)
    return js, reasons


def bound_sizes(model) -> list:
    """The sizes ``model``'s lower bounds are stated in that are not its parameters (``gemm.cosma``: COSMA's
    ``M, N, K`` and ``S``), by name: each a :class:`~symbolic.params.Param`, so the page reads and checks it as
    it does a parameter.  A bound in any other symbol is not evaluated."""
    own = set(model.params)
    found = set()
    for expr in model.lower_bounds.values():
        found |= sp.sympify(expr).free_symbols - own
    return sorted((s for s in found if hasattr(s, "counts") and hasattr(s, "least")), key=lambda s: s.name)


def _bounds_js(model) -> list:
    """``(k, JavaScript or None, the bound sizes it needs)`` per lower bound, ``k`` from 1."""
    out = []
    sizes = set(bound_sizes(model))
    own = set(model.params) | sizes
    for k, (name, expr) in enumerate(model.lower_bounds.items(), 1):
        free = sp.sympify(expr).free_symbols
        needs = sorted(s.name for s in free & sizes)
        if not free <= own:                                 # a symbol the page has no input for
            out.append((k, None, needs))
            continue
        try:
            out.append((k, to_javascript(expr), needs))
        except NotExpressible:
            out.append((k, None, needs))
    return out


def _bound_reason(expr, model) -> str:
    expr = sp.sympify(expr)
    stray = sorted(str(s) for s in expr.free_symbols - set(model.params))
    if stray:
        return f"in sizes that are not this model's parameters ({_e(', '.join(stray))})"
    return "a class, not a number (its constant is unknown)" if expr.has(sp.Function) else "no exact form"


def _model_record(model, js: dict, bounds: list) -> str:
    params = [{"name": p.name, "least": str(p.least) if p.counts else "0", "integer": bool(p.counts)}
              for p in model.params]
    params += [{"name": p.name, "least": str(p.least) if p.counts else "0", "integer": bool(p.counts), "bound": True}
               for p in bound_sizes(model)]
    quantities = ",\n    ".join(f"{json.dumps(q)}: (v) => {src}" for q, src in js.items())
    bound_fns = ",\n    ".join(f"[{k}, (v) => {src}, {json.dumps(needs)}]" for k, src, needs in bounds
                               if src is not None)
    return (f"const MODEL = {{\n  name: {json.dumps(model.name)},\n  params: {json.dumps(params)},\n"
            f"  quantities: {{\n    {quantities}\n  }},\n  bounds: [\n    {bound_fns}\n  ]\n}};\n")


def _default_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (Integral, Fraction)) or (isinstance(value, sp.Basic) and value.is_Rational):
        return exact_text(Fraction(int(value.p), int(value.q)) if isinstance(value, sp.Basic) else value)
    return str(value)


def _start(model, start) -> dict:
    """Each parameter's first value on the page: its default, else ``start``'s (``None`` for neither)."""
    return {p.name: model.defaults.get(p.name, start.get(p.name)) for p in model.params}


def _calculator_html(model, js: dict, reasons: dict, bounds: list, start=None, start_note: str = "") -> str:
    first = _start(model, start or {})
    rows = [_input_row(p, first[p.name]) for p in model.params]
    out = ['<section class="calc" id="calculator"><h2>Calculator</h2>',
           '<p class="muted">Every value below is computed in this page, exactly (integers and fractions of any '
           'size, with JavaScript <code>BigInt</code>), by code printed from the formulas above. The URL fragment '
           f'sets the inputs, e.g. <code>#{_e(_example_fragment(model, first))}</code>. Integers may be typed as '
           '<code>4096</code>, <code>4_096</code>, <code>2**12</code> or <code>2^12</code>; reals as '
           '<code>7/10</code>, <code>0.5</code> or <code>1e-9</code>.</p>',
           *rows, '<p id="error" role="alert"></p>']
    if start_note:
        out.insert(2, f'<p class="muted" id="start-note">{_e(start_note)}</p>')
    if model.validate is not None:
        out.append('<p class="muted">This model also checks its parameters against each other (its own '
                   '<code>validate</code>); the page checks each parameter alone, the command line '
                   f'(<code>tilebound show {_e(model.name)} --at ...</code>) checks both.</p>')
    out.append('<table class="data results"><tr><th>quantity</th><th>exact value</th><th>unit</th></tr>')
    for q in model.all_quantities:
        unit = model.unit(q)
        if q in js:
            cell = f'<output id="result-{_e(q)}"></output>'
        else:
            cell = (f'<span class="muted">not evaluated in the browser: {_e(reasons[q])}; '
                    f'see <a href="#table-{_e(q)}">its table at stated points</a></span>')
        out.append(f'<tr><td><code>{_e(q)}</code></td><td>{cell}</td><td>{_e(unit)}</td></tr>')
    out.append("</table>")
    if model.lower_bounds:
        out.append('<h3>Lower bounds at this point</h3>')
        sizes = bound_sizes(model)
        if sizes:
            out.append('<p class="muted">The bounds are stated in sizes that are not parameters of this model; '
                       'set them here or in the URL fragment (a bound whose sizes are empty says which).</p>')
            out += [_input_row(p, (start or {}).get(p.name)) for p in sizes]
        out.append('<table class="data results">')
        for (k, src, _), name in zip(bounds, model.lower_bounds):
            cell = (f'<output id="bound-{k}"></output>' if src is not None else
                    '<span class="muted">not evaluated here: ' + _bound_reason(model.lower_bounds[name], model)
                    + "</span>")
            out.append(f"<tr><td>{note_to_html(name)}</td><td>{cell}</td></tr>")
        out.append("</table>")
    out.append("</section>")
    return "\n".join(out)


def _input_row(p, value) -> str:
    """The labelled input of a parameter (or a bound's size) ``p``, starting at ``value`` (``None``: empty)."""
    least = (f"integer &ge; {_e(p.least)}" if p.counts else "real &gt; 0")
    return (f'<label for="input-{_e(p.name)}"><span>{to_mathml(p)} <code>{_e(p.name)}</code></span>'
            f'<input id="input-{_e(p.name)}" name="{_e(p.name)}" value="{_e(_default_text(value))}" '
            f'inputmode="numeric" autocomplete="off" spellcheck="false">'
            f'<span class="meaning">{note_to_html(as_note(getattr(p, "meaning", "") or ""))} ({least})</span>'
            f'</label>')


def _example_fragment(model, first) -> str:
    parts = [f"{p.name}={_default_text(first[p.name]) or '...'}" for p in model.params]
    return "&".join(parts)


def _algorithm_tables(model, reasons: dict, points) -> str:
    """A table per quantity the browser cannot evaluate: its exact values at ``points``, from ``model.evaluate``."""
    if not reasons:
        return ""
    out = ['<section id="computed"><h2>Quantities computed by an algorithm</h2>']
    good = []
    for pt in points:
        try:
            good.append(model.check_point(pt))
        except ValueError:
            continue
    for q, why in reasons.items():
        out.append(f'<h3 id="table-{_e(q)}"><code>{_e(q)}</code></h3>')
        out.append(f"<p>{_e(why)}: this page cannot evaluate it, so here are its exact values at stated points, "
                   "computed in Python by the model's own exact evaluation (<code>model.evaluate</code>) when the "
                   "page was written. For another point, run "
                   f"<code>tilebound show {_e(model.name)} --at ...</code>.</p>")
        if not good:
            out.append('<p class="muted">No point to show: the model has no default for every parameter.</p>')
            continue
        names = [p.name for p in model.params]
        out.append('<table class="data"><tr>' + "".join(f"<th>{to_mathml(p)}</th>" for p in model.params)
                   + f"<th><code>{_e(q)}</code> ({_e(model.unit(q))})</th></tr>")
        for pt in good:
            value = model.evaluate(q, **pt)
            out.append("<tr>" + "".join(f'<td class="num">{_e(_default_text(pt[n]))}</td>' for n in names)
                       + f'<td class="num">{_e(exact_text(value))}</td></tr>')
        out.append("</table>")
    out.append("</section>")
    return "\n".join(out)


def _sections_html(printout) -> str:
    out = []
    for sec in printout.sections:
        cond = ", ".join(f"<math>{_inner(a)}{relation_mathml(r)}{_inner(b)}</math>" for a, r, b in sec.assumptions)
        out.append(f"<h3>{note_to_html(sec.heading)}" + (f", when {cond}" if cond else "") + "</h3>")
        out.append('<table class="formulas">')
        for ln in sec.lines:
            unit = _e(ln.unit) if ln.unit and ln.unit != "1" else ""
            formula = f'<div><math>{_inner(ln.expr)}</math></div>'
            if ln.own_line:
                out.append(f'<tr><td colspan="4">{note_to_html(ln.label)}:</td></tr>')
                out.append(f'<tr><td></td><td>{relation_mathml(ln.relation).join(("<math>", "</math>"))}</td>'
                           f'<td class="f">{formula}</td><td>{unit}</td></tr>')
            else:
                out.append(f"<tr><td>{note_to_html(ln.label)}</td>"
                           f'<td>{relation_mathml(ln.relation).join(("<math>", "</math>"))}</td>'
                           f'<td class="f">{formula}</td><td>{unit}</td></tr>')
        out.append("</table>")
    return "\n".join(out)


def _inner(expr) -> str:
    """The MathML of ``expr`` without its ``<math>`` element, to combine several in one."""
    return to_mathml(expr)[len("<math>"):-len("</math>")]


def _listing_text(text) -> str:
    """A listing's text: a note piece by piece; a ``str`` of LaTeX markup shown as its author wrote it."""
    if isinstance(text, Note):
        return note_to_html(text)
    return f'<span class="tex">{_e(text)}</span>'


def _listing_html(listing) -> str:
    if listing is None:
        return ""
    out = ['<section id="listing"><h2>The algorithm, annotated</h2>',
           f"<p>{_listing_text(listing.title)} ({_listing_text(listing.source)}): each load and store with the "
           "elements one run moves and how many times it runs; the lines sum to the model's reads and writes "
           "(<code>python -m verify</code> checks it exactly over the model's sweep).</p>",
           f'<p><b>Require</b> {_listing_text(listing.require)}</p>']
    if listing.defs:
        out.append("<p><i>where</i> " + "; ".join(f"<math>{_inner(s)}<mo>=</mo>{_inner(v)}</math> {_listing_text(m)}"
                                                  for s, v, m in listing.defs) + "</p>")
    out.append('<ol class="listing">')

    def emit(items, loops, depth):
        for it in items:
            if isinstance(it, Loop):
                head = _listing_text(it.text) if it.text else \
                    f"<math>{_inner(it.lo)}<mo>≤</mo>{_inner(it.index)}<mo>≤</mo>{_inner(it.hi)}</math>"
                out.append(f'<li class="ind{min(depth, 4)}"><b>for</b> {head} <b>do</b></li>')
                emit(it.body, loops + (it,), depth + 1)
                out.append(f'<li class="ind{min(depth, 4)}"><b>end for</b></li>')
            elif isinstance(it, Line):
                note = ""
                if it.moves:
                    parts = []
                    for q, word in (("reads", "load"), ("writes", "store")):
                        e = sp.sympify(getattr(it, q))
                        if e != 0:
                            parts.append(f"{word} {to_mathml(e)}")
                    times = listing.times(loops)
                    runs = "once" if times == 1 else f"× {to_mathml(times)}"
                    note = f' <span class="moves">▷ {", ".join(parts)} {runs}</span>'
                word = "<b>return</b> " if it.command == "Return" else ""
                out.append(f'<li class="ind{min(depth, 4)}">{word}{_listing_text(it.text)}{note}</li>')
    emit(listing.body, (), 0)
    out.append("</ol>")
    out.append('<table class="data"><tr><th>line</th><th>moves</th><th>in all</th></tr>')
    sums = {"reads": sp.Integer(0), "writes": sp.Integer(0)}
    for n, _, q, _, _, tot in listing.rows():
        out.append(f"<tr><td>{n}</td><td>{'loads' if q == 'reads' else 'stores'}</td><td>{to_mathml(tot)}</td></tr>")
        sums[q] += tot
    for q in ("reads", "writes"):
        if sums[q] != 0:
            total = sums[q] if sums[q].has(sp.Sum) else sp.factor_terms(sp.expand(sums[q]))
            out.append(f'<tr><td colspan="2">{q}, the lines\' sum</td><td>{to_mathml(total)}</td></tr>')
    out.append("</table></section>")
    return "\n".join(out)


def _cell(value, params) -> str:
    """A table cell or header: a note piece by piece, a parameter's name as that parameter, an expression as
    MathML, anything else (a number, a measure, text) as the terminal tables write it."""
    from .tables import format_cell
    if isinstance(value, (tuple, list)):
        return "".join(_cell(v, params) for v in value)
    if isinstance(value, Note):
        return note_to_html(value)
    if isinstance(value, str) and value in params:
        return to_mathml(params[value])
    if isinstance(value, sp.Basic) and not value.is_Number:
        return to_mathml(value)
    return _e(format_cell(value, "text"))


def _table_html(table, model) -> str:
    from .tables import Exact, Measure
    params = {p.name: p for p in model.params}
    units = tuple(table.units) + ("",) * (len(table.headers) - len(table.units))
    out = ['<table class="data">']
    if table.caption:
        out.append(f"<caption>{note_to_html(as_note(table.caption))}</caption>")
    out.append("<tr>" + "".join(f"<th>{_cell(h, params)}" + (f" ({_e(u)})" if u else "") + "</th>"
                                for h, u in zip(table.headers, units)) + "</tr>")
    for row in table.rows:
        cells = []
        for v in row:
            num = isinstance(v, (Integral, Fraction, float, Measure, Exact)) and not isinstance(v, bool)
            cells.append(f'<td class="num">{_cell(v, params)}</td>' if num else f"<td>{_cell(v, params)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    for n in table.notes:
        out.append(f'<p class="muted">{note_to_html(as_note(n))}</p>')
    return "\n".join(out)


def _head(title: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="tilebound">\n<title>{_e(title)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n")


def model_page(entry: PageEntry, index: str = "index.html") -> str:
    """The model's page (see the module docstring) as one HTML document."""
    model = entry.model
    printout = model_printout(model)
    js, reasons = calculator_parts(model)
    bounds = _bounds_js(model)
    body = [f'<p class="muted"><a href="{_e(index)}">all models</a></p>',
            f"<h1><code>{_e(model.name)}</code></h1>",
            f"<p>{note_to_html(printout.summary)}</p>"]
    if printout.source:
        body.append(f'<p class="muted">Source: {note_to_html(printout.source)}</p>')
    body.append('<h2>Parameters</h2><table class="data">')
    for p in printout.params:
        default = f" (default {_e(_default_text(p.default))})" if p.default is not None else ""
        body.append(f"<tr><td>{to_mathml(p.symbol)}</td><td>{note_to_html(p.meaning)}{default}</td></tr>")
    body.append("</table>")
    body.append(_calculator_html(model, js, reasons, bounds, entry.start, entry.start_note))
    body.append('<section id="formulas"><h2>Formulas</h2>')
    body.append(_sections_html(printout))
    body.append("</section>")
    if printout.notes:
        body.append('<section id="notes"><h2>Notes</h2><ul>'
                    + "".join(f'<li class="note">{note_to_html(n)}</li>' for n in printout.notes) + "</ul></section>")
    body.append(_listing_html(entry.listing))
    body.append(_algorithm_tables(model, reasons, entry.points))
    if entry.tables or entry.figure or entry.figure_note:
        body.append('<section id="tables"><h2>Tables and figures</h2>')
        for t in entry.tables:
            body.append(_table_html(t, model))
        if entry.figure:
            body.append(f"<figure>{entry.figure}<figcaption>{note_to_html(as_note(entry.caption))}</figcaption></figure>")
        elif entry.figure_note:
            body.append(f'<p class="muted">{_e(entry.figure_note)}</p>')
        body.append("</section>")
    script = RUNTIME + _model_record(model, js, bounds) + _CALCULATOR
    return (_head(f"{model.name} - tilebound") + "<body>\n" + "\n".join(b for b in body if b)
            + f"\n<script>{script}</script>\n</body>\n</html>\n")


def index_row(model) -> str:
    """A model's row of the index: its name (a link to its page) and its summary."""
    return (f'<tr><td><a href="{_e(page_name(model))}"><code>{_e(model.name)}</code></a></td>'
            f"<td>{note_to_html(as_note(model.summary))}</td></tr>")


def index_page(entries, title: str = "tilebound: cost formulas of tiled GPU algorithms") -> str:
    """The index of the pages: each model's name (a link to its page) and summary."""
    return index_of_rows([index_row(e.model) for e in entries], title)


def index_of_rows(rows, title: str = "tilebound: cost formulas of tiled GPU algorithms") -> str:
    """The index around its rows (:func:`index_row`, one per model: what ``tilebound html`` makes in worker
    processes and joins here)."""
    rows = "\n".join(rows)
    return (_head(title) + f"<body>\n<h1>{_e(title)}</h1>\n<p>Each page shows a model's exact formulas (MathML), "
            "its leading term and Θ class, lower bounds, notes, listing and tables, and a calculator that evaluates "
            "the formulas exactly in the browser. No network is needed: the pages can be copied to any static "
            f'web host.</p>\n<table class="data">\n{rows}\n</table>\n</body>\n</html>\n')
