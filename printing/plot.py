"""Plots of values already computed: a formula as a curve, executed counts as points, log-log.

matplotlib is optional (the ``plot`` extra: ``pip install 'tilebound[plot]'``) and imported only when a
plot is drawn.  Like every printer this module computes nothing: it receives :class:`Series` of
numbers (exact ints or Fractions, converted to floats only to place them on the page).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from base.errors import BadInput

__all__ = ["Series", "plot_series", "plot_bars", "require_matplotlib", "check_image_path", "STYLES"]

#: series kind -> matplotlib keyword arguments
STYLES = MappingProxyType({
    "line": MappingProxyType({"linestyle": "-", "linewidth": 1.8}),
    "dashed": MappingProxyType({"linestyle": "--", "linewidth": 1.0, "alpha": 0.8}),
    "points": MappingProxyType({"linestyle": "none", "marker": "o", "markersize": 6, "markerfacecolor": "none"}),
})


@dataclass(frozen=True)
class Series:
    label: str
    xs: tuple
    ys: tuple
    kind: str = "line"      # a key of STYLES


def require_matplotlib():
    """The ``matplotlib.pyplot`` module (non-interactive backend), or :class:`~base.errors.BadInput` naming ``plot``."""
    try:
        import matplotlib
    except ImportError:
        raise BadInput("plot", "matplotlib is not installed; install the plot extra: "
                               "pip install 'tilebound[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def check_image_path(path: str) -> str:
    """``path`` when matplotlib can write its format (from the extension), else :class:`~base.errors.BadInput` naming ``output``."""
    require_matplotlib()
    from pathlib import Path

    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    ext = Path(path).suffix.lstrip(".").lower()
    if ext not in formats:
        raise BadInput("output", f"cannot tell an image format from {path!r}; "
                                 f"end it with one of .{', .'.join(sorted(formats))}")
    return path


def _floats(values, label: str) -> list[float]:
    """Exact values as floats, only to place them on the page; a value beyond a float's range is refused."""
    out = []
    for v in values:
        try:
            out.append(float(v))
        except OverflowError:
            raise BadInput("plot", f"{label}: a value beyond a float's range (about 1.8e308) cannot be "
                                   "drawn; plot smaller sizes or use tilebound table") from None
    return out


def plot_series(series, xlabel: str, ylabel: str, title: str, path: str, loglog: bool = True,
                metadata: dict | None = None) -> str:
    """Draw the series into ``path`` (format from its extension) and return ``path``; ``metadata`` goes to
    matplotlib's ``savefig`` (the command line marks its images as its own there)."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7, 4.8))
    colors = {}
    for s in series:
        if s.kind not in STYLES:
            raise BadInput("kind", f"must be one of {', '.join(STYLES)}, got {s.kind!r}")
        group = s.label.split(":")[0]
        kw = dict(STYLES[s.kind])
        if group in colors:
            kw["color"] = colors[group]
        (line,) = ax.plot(_floats(s.xs, s.label), _floats(s.ys, s.label), label=s.label, **kw)
        colors.setdefault(group, line.get_color())
    if loglog:
        integral = all(float(x).is_integer() for s in series for x in s.xs)
        ax.set_xscale("log", base=2 if integral else 10)   # sizes in powers of two, times in decades
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    # PGF takes no metadata argument at all (matplotlib's pgf backend): pass it only when there is some
    fig.savefig(path, dpi=120, **({"metadata": metadata} if metadata else {}))
    plt.close(fig)
    return path


def plot_bars(labels, values, xlabel: str, title: str, path: str, metadata: dict | None = None) -> str:
    """Horizontal bars, one per label (the first on top), into ``path``; returns ``path``.  The values are
    computed by the caller (``tilebound llm --plot``: each operation's time in the step)."""
    plt = require_matplotlib()
    vals = _floats(values, xlabel)
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.32 * len(labels) + 1.2)))
    ax.barh(range(len(labels)), vals, color="#4477aa")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120, **({"metadata": metadata} if metadata else {}))
    plt.close(fig)
    return path
