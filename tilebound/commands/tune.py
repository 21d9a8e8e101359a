"""``tilebound tune``: score search strategies on the schedule space, study buckets, rate the learned model.

Three reports (the time model is an analytic model, not a GPU: see ``docs/tuning.md``)::

    tilebound tune --gpu H100 --shape 4096,4096,4096 --strategy tpe --budget 100 --seeds 20
    tilebound tune --shapes course --strategy all --budget 100 --seeds 20 --plot course.png
    tilebound tune --buckets [--shapes llm-all] [--cache DIR]
    tilebound tune --learned [--shapes llm]

The score table gives, per strategy over every (shape, seed) run, the median and quartiles of
best-found / optimum at the budget, Kernel Tuner's methodology score (the share of the gap between random
search and the optimum a strategy closes), its mean over the budget, and the evaluations to get within 5 %
of the optimum (:mod:`tuning.scores`).  ``--plot FILE`` draws best-found / optimum against evaluations,
median and quartile band per strategy (the plot extra).  ``--cache DIR`` replays each shape's
measurements from a disk cache (:mod:`tuning.cache`), measuring only configs it lacks.  While the scores,
the bucket study or the learned model's report run past two seconds and stderr is a terminal, a progress bar
on stderr shows the shapes done of the total, the strategy or scheme at work, the time spent and an estimate
(:func:`base.console.progress`).

Bad input is one line and exit 2: an unknown strategy, GPU, shape set or bucket scheme; a budget < 1 or
beyond the space; a size that is not a positive integer; a shape beyond the time model's range (named
``shape``, before any work: :func:`tuning.schedule.model_shape`); a corrupt cache or one from another space
version; more runs than ``--max-runs`` (the work is refused up front, and the message says how to raise it).
Configs are printed in the models' parameter names (``B_M=256 B_N=128 B_K=32 warps=8 s=4 G_M=1``).
"""

from __future__ import annotations

import math
import sys

from base import console
from base.errors import BadInput

from . import Command, IntOption

FORMATS = ("text", "markdown")


def add_arguments(s) -> None:
    s.add_argument("--gpu", default="H100", help="GPU of the time model (H100, H200)")
    s.add_argument("--shape", action="append", default=[], metavar="M,N,K",
                   help="a GEMM shape C[M,N] = A[M,K] B[K,N]; repeat for several")
    s.add_argument("--shapes", default=None, metavar="SET",
                   help="a named shape set: course (lecture 13's four), llm (the LLM score set), llm-all "
                        "(default: course; llm-all with --buckets)")
    s.add_argument("--strategy", default="all",
                   help="strategies, comma-separated, or all (exhaustive, random, coordinate, annealing, genetic, "
                        "tpe, cmaes, triton, model, learned)")
    s.add_argument("--budget", action=IntOption, least=1, default=100, metavar="N",
                   help="unique evaluations per run (1..6000; 100, 10**3 and 1e3 are read as --at reads them)")
    s.add_argument("--seeds", action=IntOption, least=1, default=20, metavar="N",
                   help="runs per strategy and shape, seeds 0..SEEDS-1")
    s.add_argument("--max-runs", action=IntOption, least=1, default=20000, metavar="N",
                   help="refuse more strategy x shape x seed runs than this")
    s.add_argument("--per-shape", action="store_true", help="a score table per shape, not only the pooled one")
    s.add_argument("--cache", default=None, metavar="DIR", help="replay measurements from (and add them to) DIR")
    s.add_argument("--plot", default=None, metavar="FILE",
                   help="draw best-found / optimum vs evaluations (median, quartile band) to FILE")
    s.add_argument("--force", action="store_true", help="overwrite a --plot file tilebound did not write")
    s.add_argument("--buckets", action="store_true", help="tune per bucket of M (pow2, pow2up, vllm) and report "
                                                          "each shape's slowdown against its own optimum")
    s.add_argument("--learned", action="store_true", help="train the learned cost model and report its rank "
                                                          "quality on shapes it has not seen")
    s.add_argument("--space", choices=("gemm", "splitk"), default="gemm",
                   help="the schedule space: gemm (the six knobs, 6000 configs; the default) or splitk (those "
                        "times S_k in 1,2,3,4,6,8,16: the time model's best split-K config per shape against "
                        "the best data-parallel one; default shapes: decode GEMMs of Llama-3-8B)")
    s.add_argument("--format", choices=FORMATS, default="text")


# ------------------------------------------------------------------------------------------- helpers
def _shapes(args, default: str) -> tuple:
    """The shapes asked for, each within the time model's range (refused up front, naming ``shape``)."""
    from tuning.schedule import model_shape
    from tuning.shapes import parse_shape, shape_set
    if args.shape and args.shapes is not None:
        raise BadInput("shape", "give --shape or --shapes, not both")
    if args.shape:
        shapes = tuple(parse_shape(s) for s in args.shape)
        for sh in shapes:
            model_shape(*sh.mnk)
        return shapes
    return shape_set(default if args.shapes is None else args.shapes)


def _strategies(text: str) -> list[str]:
    from tuning.strategies import DEFAULT_STRATEGIES, get_strategy
    names = [n.strip() for n in str(text).split(",") if n.strip()]
    if not names:
        raise BadInput("strategy", "give a strategy name or all")
    if names == ["all"]:
        return list(DEFAULT_STRATEGIES)
    out = []
    for n in names:
        s = get_strategy(n).name
        if s in out:
            raise BadInput("strategy", f"{s} is given twice")
        out.append(s)
    return out


def _q(t: tuple, fmt: str = "{:.3f}") -> str:
    """``median (q1-q3)``."""
    q1, med, q3 = t
    if math.isnan(med):
        return "—"
    f = (lambda v: "∞" if math.isinf(v) and v > 0 else "-∞" if math.isinf(v) else fmt.format(v))
    return f"{f(med)} ({f(q1)}–{f(q3)})"


def _evals(t: tuple, budget: int) -> str:
    q1, med, q3 = t
    f = (lambda v: f">{budget}" if math.isinf(v) else f"{v:.0f}")
    return f"{f(med)} ({f(q1)}–{f(q3)})"


def _render(table, fmt: str, out) -> None:
    from printing.tables import render
    out.write(render(table, fmt) + "\n")


# ------------------------------------------------------------------------------------------- scores
def _score_tables(scores: list, title: str):
    from printing.tables import Table
    budget = scores[0].budget
    rows = [(s.strategy, s.runs, _q(s.ratio), _q(s.score, "{:.2f}"), _q(s.score_mean, "{:.2f}"),
             _evals(s.evals_to, budget), f"{s.reached:.0%}", f"{s.overhead_s * 1e3:.1f} ms") for s in scores]
    main = Table(("strategy", "runs", f"best/opt at {budget}", f"P at {budget}", "mean P", "evals to 5%",
                  "reached", "own time/run"), tuple(rows), caption=title)
    marks = list(scores[0].ratio_at)
    by_t = Table(("strategy",) + tuple(f"t={t}" for t in marks),
                 tuple((s.strategy,) + tuple("∞" if math.isinf(s.ratio_at[t]) else f"{s.ratio_at[t]:.3f}"
                                             for t in marks) for s in scores),
                 caption=f"{title}: median best-found / optimum after t evaluations (∞: no config launched yet)")
    return main, by_t


def _run_scores(args, out) -> int:
    from tuning.learned import gpu_constants
    from tuning.scores import run_many, summarize
    from tuning.strategies import N_CONFIGS

    k = gpu_constants(args.gpu)
    shapes = _shapes(args, "course")
    strategies = _strategies(args.strategy)
    from base.validate import integer
    budget = integer("budget", args.budget, 1, N_CONFIGS)          # read by IntOption; the space's size here
    seeds, max_runs = args.seeds, args.max_runs
    runs = len(strategies) * len(shapes) * seeds
    if runs > max_runs:
        raise BadInput("seeds", f"{len(strategies)} strategies x {len(shapes)} shapes x {seeds} seeds = {runs} runs "
                                f"of {budget} evaluations, more than --max-runs {max_runs}; "
                                "give fewer, or raise --max-runs")
    plot_path = None
    if args.plot is not None:
        from tilebound.output import check_image
        plot_path = check_image(args.plot, args.force, "plot")
    for name in strategies:                    # a missing extra is refused before any work
        _check_extra(name)
    measured = [0]
    replay = _replay(args.cache, k, measured) if args.cache is not None else None
    if replay is not None:
        for sh in shapes:                       # a corrupt or foreign file is refused before any search
            replay(sh)
    with console.progress(len(strategies) * len(shapes), "tune", unit="shape") as shown:
        groups = {}
        for name in strategies:                 # the bar: shapes done over strategies x shapes, and the strategy
            shown.note(name)
            groups[name] = run_many(name, shapes, budget, seeds, gpu=k.hw.name, times_of=replay,
                                    on_shape=shown.advance, max_runs=max_runs)
    if args.cache is not None:
        sys.stderr.write(f"note: cache {args.cache}: {measured[0]} config measurements added\n")
    label = f"{k.hw.name}, {len(shapes)} shape{'s' if len(shapes) > 1 else ''}, {seeds} seeds"
    if len(shapes) == 1:
        label = f"{k.hw.name}, {shapes[0]}, {seeds} seeds"
    if args.per_shape and len(shapes) > 1:
        for j, sh in enumerate(shapes):
            scores = [summarize([groups[n][j]]) for n in strategies]
            main, _ = _score_tables(scores, f"{sh} ({sh.name})" if sh.name else str(sh))
            _render(main, args.format, out)
            out.write("\n")
    phases = _phases(shapes) if len(shapes) > 4 else []
    if phases:                                     # decode and prefill pooled apart, then together
        for title, members in phases:
            scores = [summarize([groups[n][j] for j in members]) for n in strategies]
            main, _ = _score_tables(scores, f"{title}: {len(members)} shape{'s' if len(members) > 1 else ''}, "
                                            f"{seeds} seeds")
            _render(main, args.format, out)
            out.write("\n")
    scores = [summarize(groups[n]) for n in strategies]
    main, by_t = _score_tables(scores, label)
    _render(main, args.format, out)
    out.write("\n")
    _render(by_t, args.format, out)
    opt = groups[strategies[0]]
    if len(shapes) == 1:
        import numpy as np

        from tuning.schedule import all_configs, times_for_shape
        r = opt[0]
        times = replay(shapes[0]) if replay is not None else times_for_shape(*shapes[0].mnk, hw=k)
        best = all_configs()[int(np.argmin(times))]
        out.write(f"\noptimum {r.optimum * 1e6:.2f} us ({best}); random search is expected at "
                  f"{r.baseline[-1] / r.optimum:.3f} x after {budget} evaluations "
                  "(the analytic time model, not a GPU)\n")
    if plot_path is not None:
        _plot(args.plot, groups, shapes, label, args.force)
        out.write(f"wrote {args.plot}\n")
    return 0


def _cache(folder: str, k):
    """The :class:`tuning.cache.TuningCache` in ``folder``; a folder above it that is a file is refused naming
    ``cache`` before any work (it cannot be made: not an unreadable file later)."""
    import os

    from tuning.cache import TuningCache

    from tilebound.output import blocking_file
    blocker = blocking_file(folder)
    if blocker is not None and blocker != os.path.abspath(folder):
        raise BadInput("cache", f"cannot make {folder!r}: {blocker!r} exists and is not a folder")
    return TuningCache(folder, k)


def _replay(folder: str, k, measured: list):
    """``times_of(shape)`` through the cache in ``folder`` (each shape read once); counts new measurements."""
    cache = _cache(folder, k)
    memo = {}

    def times_of(sh):
        if sh.mnk not in memo:
            memo[sh.mnk], n = cache.times(sh)
            measured[0] += n
        return memo[sh.mnk]

    return times_of


#: decode batches are at most this many tokens (tuning.shapes: decode 1-256, prefill 512-8192)
DECODE_MAX_M = 256


def _phases(shapes: tuple) -> list[tuple[str, list[int]]]:
    """``[(title, shape indices)]`` for decode (M <= 256) and prefill shapes, when both are present."""
    decode = [j for j, s in enumerate(shapes) if s.M <= DECODE_MAX_M]
    prefill = [j for j, s in enumerate(shapes) if s.M > DECODE_MAX_M]
    return [("decode (M ≤ 256)", decode), ("prefill (M > 256)", prefill)] if decode and prefill else []


def _check_extra(name: str) -> None:
    from tuning.learned import require
    from tuning.strategies import get_strategy
    needs = get_strategy(name).needs
    if "optuna" in needs:
        require("optuna", f"the {name} strategy (Optuna)")
    if "sklearn" in needs:
        require("sklearn.ensemble", f"the {name} strategy (scikit-learn)")
    if "cmaes" in needs:
        try:
            import cmaes  # noqa: F401
        except ImportError:
            raise BadInput("strategy", "the cmaes strategy needs the cmaes package (Optuna's CMA-ES sampler uses it), "
                                       "which the tune extra does not install: pip install cmaes") from None


def _plot(path: str, groups: dict, shapes: tuple, label: str, force: bool) -> None:
    import numpy as np

    from printing.plot import require_matplotlib

    from tilebound.output import image_metadata, write_with

    plt = require_matplotlib()
    if 1 < len(shapes) <= 4:
        panels = [(None, [j]) for j in range(len(shapes))]
    else:
        panels = _phases(shapes) or [(f"{len(shapes)} shapes pooled", list(range(len(shapes))))]
    cols = 2 if len(panels) > 1 else 1
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.4 * rows), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (heading, members) in zip(axes.flat, panels):
        for c, (name, runs) in enumerate(groups.items()):
            ratio = np.vstack([runs[j].ratio() for j in members])        # inf until a config launched
            q = np.percentile(ratio, [25, 50, 75], axis=0, method="inverted_cdf")   # a step quantile keeps inf
            q1, med, q3 = np.where(np.isfinite(q), q, np.nan)             # drawn only where finite
            x = np.arange(1, ratio.shape[1] + 1)
            color = colors[c % len(colors)]
            ax.plot(x, med, color=color, linewidth=1.6, label=name)
            ax.fill_between(x, q1, q3, color=color, alpha=0.15, linewidth=0)
        ax.axhline(1.05, color="0.4", linestyle=":", linewidth=1)
        ax.set_yscale("log")
        ax.set_ylim(0.97, 12)
        ticks = [1, 1.25, 1.5, 2, 3, 5, 10]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlim(1, max(r[0].budget for r in groups.values()))
        ax.set_xlabel("unique evaluations")
        ax.set_ylabel("best found / optimum")
        if heading is None:
            title = str(shapes[members[0]]) + (f"\n{shapes[members[0]].name}" if shapes[members[0]].name else "")
        else:
            title = f"{heading}: {len(members)} shapes pooled" if "pooled" not in heading else heading
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8, frameon=False)
    fig.suptitle(f"best found / optimum: median and quartiles\n({label}; analytic model, not a GPU; "
                 "dotted: within 5 %)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05 if len(labels) <= 6 else 0.08, 1, 1))

    def writer(tmp):
        fig.savefig(tmp, dpi=110, metadata=image_metadata(path))

    try:
        write_with(path, writer, force, "plot")
    finally:
        plt.close(fig)


# ------------------------------------------------------------------------------------------- buckets
def _run_buckets(args, out) -> int:
    from printing.tables import Table
    from tuning.buckets import SCHEMES, bucket_study, summarize_buckets
    from tuning.learned import gpu_constants

    k = gpu_constants(args.gpu)
    shapes = _shapes(args, "llm-all")
    cache = None
    if args.cache is not None:
        cache = _cache(args.cache, k)
    rows = []
    with console.progress(len(SCHEMES) * len(shapes), "tune --buckets", unit="shape") as shown:
        for scheme in SCHEMES:
            shown.note(scheme)
            for s in summarize_buckets(bucket_study(shapes, scheme, k.hw.name, cache, on_shape=shown.advance)):
                rows.append((scheme, s.phase, s.shapes, s.tuned, f"{s.mean:.3f}", f"{s.median:.3f}", f"{s.p90:.3f}",
                             f"{s.worst:.3f}", str(s.worst_shape), f"{s.within_5pct:.0%}"))
    n_nk = len({(s.N, s.K) for s in shapes})
    rows.append(("per shape", "all", len(shapes), len(shapes), "1.000", "1.000", "1.000", "1.000", "—", "100%"))
    table = Table(("scheme", "phase", "shapes", "tuned", "mean", "median", "p90", "worst", "worst shape", "within 5%"),
                  tuple(rows), caption=f"{k.hw.name}: slowdown of the bucket's config against each shape's own optimum "
                                       f"({len(shapes)} shapes, {n_nk} weight shape{'s' if n_nk != 1 else ''})")
    _render(table, args.format, out)
    return 0


# ------------------------------------------------------------------------------------------- learned model
def _run_learned(args, out) -> int:
    import numpy as np

    from printing.tables import Table
    from tuning.learned import gpu_constants, rank_quality, train
    from tuning.shapes import COURSE_SHAPES, LLM_SCORE_SHAPES

    k = gpu_constants(args.gpu)
    sets = ({"given": _shapes(args, "course")} if (args.shape or args.shapes is not None)
            else {"course": COURSE_SHAPES, "llm": LLM_SCORE_SHAPES})
    rows = []
    with console.progress(1 + sum(len(v) for v in sets.values()), "tune --learned", unit="step") as shown:
        shown.note("training")                  # one step, then one a held-out shape
        model = train(gpu=k.hw.name)
        shown.advance()
        for name, shapes in sets.items():
            shown.note(f"{name} shapes")
            rq = rank_quality(model, shapes, on_shape=shown.advance)
            rows.append((name, len(rq), f"{np.median([r.spearman for r in rq]):.3f}",
                         f"{np.mean([r.top1_within_5pct for r in rq]):.0%}",
                         f"{np.median([r.top1_ratio for r in rq]):.3f}",
                         f"{np.median([r.top10_recall for r in rq]):.2f}",
                         f"{np.median([r.mse for r in rq]):.4f}", f"{np.median([r.mse_constant for r in rq]):.4f}"))
    table = Table(("held-out set", "shapes", "Spearman ρ", "top-1 within 5%", "top-1 / opt", "top-10 recall",
                   "MSE log t", "MSE constant"), tuple(rows),
                  caption=f"{k.hw.name}: learned cost model ({model.rows} rows from {len(model.train_shapes)} training "
                          "shapes) on shapes it has not seen (medians over shapes)")
    _render(table, args.format, out)
    return 0


def _run_splitk(args, out) -> int:
    """``--space splitk``: per shape, the split-K space's fastest config and the data-parallel optimum."""
    from printing.tables import Measure, Table
    from tuning.learned import gpu_constants
    from tuning.splitk_space import DECODE_SHAPES, splitk_table

    k = gpu_constants(args.gpu)
    given = args.shape or args.shapes is not None
    shapes = [sh.mnk for sh in _shapes(args, "course")] if given else list(DECODE_SHAPES)
    rows = []
    for c in splitk_table(shapes, k.hw.name):
        rows.append(("x".join(map(str, c.shape)), c.S_k, str(c.best.config), Measure(c.time, "s"), str(c.dp_best),
                     Measure(c.dp_time, "s"), f"{c.dp_time / c.time:.2f}x"))
    table = Table(("shape M x N x K", "S_k", "best split-K config", "time", "best data-parallel config", "time",
                   "speed-up"), tuple(rows),
                  caption=f"{k.hw.name}: the split-K space's choice by the time model (tuning.splitk_space; S_k = 1 "
                          "is data-parallel)")
    _render(table, args.format, out)
    return 0


def run(args, out) -> int:
    if args.space == "splitk":
        for flag, given in (("buckets", args.buckets), ("learned", args.learned), ("plot", args.plot is not None),
                            ("per-shape", args.per_shape), ("cache", args.cache is not None)):
            if given:
                raise BadInput(flag, "applies to the gemm space's strategy scores, not to --space splitk")
        return _run_splitk(args, out)
    if args.buckets and args.learned:
        raise BadInput("buckets", "give --buckets or --learned, not both")
    if args.buckets or args.learned:
        for flag, given in (("plot", args.plot is not None), ("per-shape", args.per_shape)):
            if given:
                raise BadInput(flag, "applies to the score table, not to --buckets or --learned")
        from tuning.learned import gpu_constants
        gpu_constants(args.gpu)
        return _run_buckets(args, out) if args.buckets else _run_learned(args, out)
    return _run_scores(args, out)


COMMAND = Command("tune", "score search strategies over the GEMM schedule space (the tune extra)", add_arguments, run,
                  description="Score search strategies on the GEMM schedule space's analytic time model: "
                              "best-found / optimum, Kernel Tuner's methodology score, evaluations to 5 %%. "
                              "--buckets studies tuning per bucket of M; --learned rates the learned cost model.")
