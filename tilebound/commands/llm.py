"""``tilebound llm CONFIG``: one prefill or decode step of an LLM, one row per operation, every figure exact.

    tilebound llm llama-3.1-8b --gpu H100 --phase decode --batch 1 --context 32768
    tilebound llm deepseek-v3 --context 32768 --verify
    tilebound llm path/to/config.json --phase prefill --new-tokens 4096 --format json -o step.json

CONFIG is a Hugging Face ``config.json`` (or the folder holding one) or a shipped name
(:data:`tuning.llm.CONFIGS`).  One table per layer type: each operation's registered model and its parameters,
its runs per step, bytes, FLOPs, intensity, roofline time and bound (:mod:`tuning.llm.step`); then the totals
per layer type and for the step, the KV cache's size and tokens/s.  ``--explain`` says why each parameter was
chosen; ``--verify`` runs every operation's executor at those shapes (:mod:`verify.llm`) and adds a column.
``--format json`` is the data (:meth:`tuning.llm.Step.to_json`); ``--format latex`` the tables as booktabs
floats, ``--split DIR`` as ``\\input``-able fragments (the rules of ``tilebound latex --split``); ``--plot PATH``
draws the step's time by operation (the plot extra).  Bad input is one line naming the option, exit 2.
"""

from __future__ import annotations

import json

from base.errors import BadInput

from . import Command, IntOption

__all__ = ["COMMAND", "run", "tables"]

FORMATS = ("text", "json", "markdown", "latex")


def add_arguments(s) -> None:
    s.add_argument("config", help="a config.json (or its folder), or a shipped name: llama-3.1-8b, llama-3.1-70b, "
                                  "mistral-7b, qwen2.5-7b, gemma-2-9b, mixtral-8x7b, deepseek-v3")
    s.add_argument("--gpu", default="H100", help="A100, A100-80GB, H100, H200, B200 (default H100)")
    s.add_argument("--phase", default="decode", help="prefill or decode (default decode)")
    s.add_argument("--batch", action=IntOption, least=1, default=1, metavar="N",
                   help="sequences in the step (default 1; 64, 2**6 are read as --at reads them)")
    s.add_argument("--context", action=IntOption, least=0, default=0, metavar="N",
                   help="tokens already in each sequence's KV cache (default 0)")
    s.add_argument("--new-tokens", action=IntOption, least=1, default=1, dest="new_tokens", metavar="N",
                   help="new tokens a sequence: the prompt in prefill, 1 or more in decode (default 1)")
    s.add_argument("--dtype", default="bf16", help="activations and arithmetic: bf16, fp16, fp8 (default bf16)")
    s.add_argument("--kv-dtype", default=None, dest="kv_dtype", metavar="DTYPE",
                   help="the KV cache: bf16, fp16, fp8 (default --dtype)")
    s.add_argument("--weights", default="bf16", help="bf16, fp16, fp8 (block-scaled), mxfp8, mxfp4, nvfp4")
    s.add_argument("--tp", action=IntOption, least=1, default=1, metavar="T", help="tensor-parallel degree (default 1)")
    s.add_argument("--allow-long-context", action="store_true", dest="allow_long_context",
                   help="price a context beyond the config's max_position_embeddings")
    s.add_argument("--explain", action="store_true", help="say why each operation's parameters were chosen")
    s.add_argument("--verify", action="store_true",
                   help="run every operation's executor (count-only) at the step's shapes, row by row")
    s.add_argument("--jobs", action=IntOption, jobs=True, default=None, metavar="N",
                   help="--verify: executors in this many processes (1 to 256, or auto: one per usable CPU; "
                        "default: the usable CPUs, at most 16)")
    s.add_argument("--format", default="text", help="text, json, markdown, latex (default text)")
    s.add_argument("-o", "--output", default=None, metavar="PATH", help="write to PATH instead of standard output")
    s.add_argument("--split", default=None, metavar="DIR", help="LaTeX fragments into DIR, one per table")
    s.add_argument("--plot", default=None, metavar="PATH", help="an image of the step's time by operation")
    s.add_argument("--force", action="store_true", help="overwrite files tilebound did not write")


# ------------------------------------------------------------------------------------------ tables
def _params(p: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in p.items())


def tables(st, checks=None, explain: bool = False) -> list:
    """The :class:`printing.tables.Table` s of a step: one per layer type, then the totals."""
    from printing.human import fmt_si
    from printing.tables import Measure, Table

    by_op = {id(o): r for o, r in zip(st.ops, checks or [])}
    out = []
    order = []
    for o in st.ops:
        if o.layer_type not in order:
            order.append(o.layer_type)
    heads = ["operation", "model", "parameters", "runs", "bytes", "FLOPs", "FLOP/B", "time", "bound"]
    if checks is not None:
        heads.append("executed")
    for lt in order:
        rows, whys = [], []
        for o in (o for o in st.ops if o.layer_type == lt):
            if o.pending:
                row = [o.name, o.model, _params(o.params), o.count, "-", "-", "-", "-", o.why.split(". ")[0]]
            else:
                inten = o.intensity
                row = [o.name, o.model or "(ring all-reduce)", _params(o.params), o.count, Measure(o.bytes, "B"),
                       fmt_si(o.flops, "FLOP") if o.flops else "0", fmt_si(inten) if inten else "-",
                       Measure(o.time_s, "s"), o.bound]
            if checks is not None:
                r = by_op.get(id(o))
                row.append(r.status if r is None or r.status != "refused" else f"refused ({r.detail[:60]})")
            rows.append(tuple(row))
            whys.append(f"{o.name}: {o.why}")
        n = st.layer_totals[lt]["layers"]
        cap = f"{st.config.name}, {lt}: {n} layer{'s' if n != 1 else ''}" if lt != "head" else \
            f"{st.config.name}, after the layers (count 1)"
        out.append(Table(tuple(heads), tuple(rows), caption=cap,
                         notes=tuple(whys) if explain else ("bytes, FLOPs and time are per run",)))
    s = st.settings
    rows = []
    for lt in order:
        t = st.layer_totals[lt]
        rows.append((lt, t["layers"], Measure(t["bytes"], "B"), fmt_si(t["flops"], "FLOP"), Measure(t["time_s"], "s")))
    T = st.totals
    rows.append(("step", st.config.layers, Measure(T["bytes"], "B"), fmt_si(T["flops"], "FLOP"), Measure(T["time_s"], "s")))
    seqs, toks = s["batch"], s["batch"] * s["new_tokens"]
    notes = [f"KV cache at {s['N_k']:,} token{'s' if s['N_k'] != 1 else ''} x {seqs} sequence{'s' if seqs != 1 else ''} ({s['kv_dtype']}): "
             f"{T['kv_cache_bytes']:,} B per GPU",
             f"tokens/s: {T['tokens_per_s']:.1f} ({toks:,} token{'s' if toks != 1 else ''} in the step)"
             if T["tokens_per_s"] else "tokens/s: -"]
    if checks is not None:
        counts: dict = {}
        for r in checks:
            counts[r.status] = counts.get(r.status, 0) + 1
        notes.append("executed: " + ", ".join(f"{n} {k}" for k, n in counts.items())
                     + f" of {len(checks)} rows ({sum(r.seconds for r in checks):.1f} s of executors)")
    notes.extend(st.notes)
    out.append(Table(("layer type", "layers", "bytes", "FLOPs", "time"), tuple(rows),
                     caption=f"{st.config.name} {s['phase']} on {s['gpu']}: batch {s['batch']}, context {s['context']:,}, "
                             f"{s['new_tokens']} new token{'s' if s['new_tokens'] != 1 else ''}, {s['dtype']}, "
                             f"weights {s['weights']}, KV {s['kv_dtype']}, TP {s['tp']}", notes=tuple(notes)))
    return out


def _plot(st, path: str, force: bool) -> str:
    from printing.plot import plot_bars

    from .. import output
    items: dict = {}
    for o in st.ops:
        if not o.pending:
            items[o.name] = items.get(o.name, 0.0) + o.step_time_s
    labels = sorted(items, key=items.get, reverse=True)
    s = st.settings
    title = (f"{st.config.name} {s['phase']} on {s['gpu']}, batch {s['batch']}, context {s['context']:,}: "
             f"{st.totals['time_s'] * 1e3:.3g} ms a step")
    return output.write_with(path, lambda tmp: plot_bars(labels, [items[k] for k in labels], "time in the step (s)",
                                                          title, tmp, metadata=output.image_metadata(path)),
                             force=force, param="plot")


def run(args, out) -> int:
    import os

    from base.pool import usable_cpus
    from tuning.llm import step

    from .. import output
    from .latex import _fragment_path, _split_folder

    fmt = str(args.format).lower()
    if fmt not in FORMATS:
        raise BadInput("format", f"must be one of {', '.join(FORMATS)}, got {args.format!r}")
    kw = dict(batch=args.batch, context=args.context, new_tokens=args.new_tokens, tp=args.tp)   # read by IntOption
    jobs = args.jobs if args.jobs is not None else min(usable_cpus(), 16)
    if args.split is not None:
        if args.output is not None:
            raise BadInput("split", "--split writes its own files into DIR; drop -o")
        folder = _split_folder(args.split)
    path = output.check_path(args.output, args.force)           # refused before any work
    if args.plot is not None:
        output.check_image(args.plot, args.force, "plot")
    st = step(args.config, gpu=args.gpu, phase=args.phase, dtype=args.dtype, kv_dtype=args.kv_dtype,
              weights=args.weights, allow_long_context=args.allow_long_context, **kw)
    checks = None
    if args.verify:
        from verify.llm import verify_step
        checks = verify_step(st, jobs=jobs)
    if args.plot is not None:
        _plot(st, args.plot, args.force)
    if fmt == "json" and args.split is None:
        data = st.to_json()
        if checks is not None:
            data["verify"] = [r.to_json() for r in checks]
        text = json.dumps(data, indent=2)
        if path is None:
            out.write(text + "\n")
        else:
            _write_plain(path, text + "\n", args.force)
        return 1 if checks and any(not r.ok for r in checks) else 0
    from printing.tables import render

    from . import target
    tabs = tables(st, checks, args.explain)
    if args.split is not None:
        name = st.config.name.replace(os.sep, "_")
        slugs = [o for o in dict.fromkeys(o.layer_type for o in st.ops)] + ["totals"]
        files = [(_fragment_path(folder, f"{name}.{st.settings['phase']}.{slug}.tex"), render(t, "latex"))
                 for slug, t in zip(slugs, tabs)]
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:                   # a read-only parent, a full disk
            raise BadInput("split", f"cannot make {folder!r}: {exc.strerror or exc}") from None
        for p, _ in files:
            output.check_path(p, args.force, "split")
        for p, tex in files:
            output.write_text(p, "% tilebound llm: \\input this after the packages of `tilebound latex --preamble`\n"
                              + tex + "\n", force=args.force, param="split")
            out.write(f"wrote {p}\n")
        return 1 if checks and any(not r.ok for r in checks) else 0
    tgt = target(fmt, out) if path is None else fmt
    text = "\n\n".join(render(t, tgt) for t in tabs) + "\n"
    if path is None:
        out.write(text)
    elif fmt == "latex":
        output.write_text(path, text, force=args.force)
    elif fmt == "text":
        output.write_text(path, text, force=args.force, comment="#")
    else:                                      # Markdown: the marker as an HTML comment, so it renders as nothing
        _write_plain(path, output.marker_line(text, "<!--") + " -->\n" + text, args.force)
    return 1 if checks and any(not r.ok for r in checks) else 0


def _write_plain(path: str, text: str, force: bool) -> None:
    """``text`` written atomically as it is.  JSON has no comment to hold the marker, so a JSON file is never
    known to be tilebound's: writing over one takes ``--force`` (``tilebound.output.check_path``)."""
    from .. import output
    output.write_with(path, lambda tmp: open(tmp, "w", encoding="utf-8").write(text), force=force)


COMMAND = Command("llm", "one LLM step from its config.json: every operation a registered model, exact bytes",
                  add_arguments, run, description=__doc__)
