"""The shared look of every figure, its primitives, and saving figures where a build asks.

The primitives every figure is drawn with:

- :func:`interval_plot`: one estimate per row with its interval, as dots and
  whiskers (a comparison table's arms);
- :func:`paired_difference_plot`: per-question differences of two arms,
  sorted, as bars (where a paired gain comes from);
- :func:`readable_span`: an axis widened to a span at which a difference
  reads at its size.

The comparison figures built from them:

- :func:`interval_panels`: several comparison tables (e.g. two results at two
  targets) as panels sharing their x axis, each arm's estimate with its
  interval;
- :func:`difference_figure`: a comparison table's arms with their intervals
  above the per-question differences of one pair of arms, sorted, so a reader
  sees whether a gain is broad or comes from a few questions
  (:meth:`hierret.study.experiment.Result.difference_figure` draws one for a
  result);
- :func:`save`: a figure rendered once, written where the site build asks
  for it (a notebook's ``figures_dir``) and shown in the notebook;
  :func:`smallest_font` is the size of its smallest text.

Each study's own figures are drawn from its data by :mod:`hierret.publish.charts`
with these primitives. Every figure is drawn :data:`WIDTH` inches wide or a
little more, in fonts of at least 9 points, so that its text stays legible
when the site's article column (about 690 CSS pixels at a 1280-pixel window)
scales it down; panels go below one another rather than beside. ``Axes`` and
``Figure`` are matplotlib's, named here for the type hints of the modules that
call these functions.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import pandas as pd
>>> t = pd.DataFrame({"rate": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]},
...                  index=["passages", "whole units"])
>>> fig = interval_panels({"SECTION target": t, "DOCUMENT target": t}, xlabel="hit@1")
>>> [ax.get_title() for ax in fig.axes]
['SECTION target', 'DOCUMENT target']
>>> ax = interval_plot(t, "rate", xlabel="hit@1")
>>> len(ax.get_yticklabels())
2
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

import hierret._clock as _clock

if TYPE_CHECKING:
    # Re-exported (``import X as X``) for the type hints of the floors above,
    # which import no matplotlib of their own.
    from matplotlib.axes import Axes as Axes
    from matplotlib.figure import Figure as Figure

__all__ = [
    "DPI",
    "DPI_KEY",
    "FONT_KEY",
    "WIDTH",
    "difference_figure",
    "interval_panels",
    "interval_plot",
    "paired_difference_plot",
    "readable_span",
    "save",
    "smallest_font",
]

#: Width in inches of a one-column figure. Saved at 150 dpi it is about 1,000
#: pixels wide and is shown scaled to the site's article column (about 690 CSS
#: pixels at a 1280-pixel window), so a 10-point label reads at about 13 pixels.
WIDTH = 7.0
#: Resolution of saved figures. A figure :data:`WIDTH` inches wide
#: is then wider than the site's article column and is shown scaled to it.
DPI = 150
#: PNG text keys :func:`save` writes: the smallest font size (points) and the resolution.
FONT_KEY, DPI_KEY = "hierret:min_font_pt", "hierret:dpi"


def interval_plot(
    table: pd.DataFrame,
    value: str = "mean",
    low: str = "low",
    high: str = "high",
    *,
    ax: Axes | None = None,
    xlabel: str = "",
    title: str = "",
    baseline: str | None = None,
) -> Axes:
    """Horizontal dot-and-whisker plot of one estimate per row with its interval.

    Parameters
    ----------
    table : DataFrame
        One row per arm, with columns ``value``, ``low`` and ``high``.
    ax : Axes, optional
        Where to draw; a new figure otherwise.
    baseline : str, optional
        Row drawn in black with a dotted reference line at its value.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH, 0.38 * len(table) + 1.2))
    y = np.arange(len(table))[::-1]
    est = table[value].to_numpy(dtype=float)
    err = np.vstack(
        [est - table[low].to_numpy(dtype=float), table[high].to_numpy(dtype=float) - est]
    )
    colors = ["black" if arm == baseline else "#4C72B0" for arm in table.index]
    for yi, e, lo_hi, c in zip(y, est, err.T, colors, strict=True):
        ax.errorbar(e, yi, xerr=lo_hi.reshape(2, 1), fmt="o", color=c, capsize=3)
    if baseline is not None:
        ref = table[value].to_numpy(dtype=float)[list(table.index).index(baseline)]
        ax.axvline(float(ref), color="grey", linestyle=":", zorder=0)
    ax.set_yticks(y, [str(i) for i in table.index])
    ax.set_ylim(-0.6, len(table) - 0.4)  # half a row of margin, however many rows
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return ax


def paired_difference_plot(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    ax: Axes | None = None,
    label: str = "A − B",
    title: str = "",
) -> Axes:
    """Per-query differences ``a − b``, sorted, as bars: where a paired gain comes from.

    Parameters
    ----------
    a, b : mapping
        Per-query scores of two arms on the same queries.
    """
    import matplotlib.pyplot as plt

    qids = sorted(a)
    diff = np.sort(np.array([a[q] - b[q] for q in qids]))
    if ax is None:
        _, ax = plt.subplots(figsize=(WIDTH, 2.8))
    colors = np.where(diff > 0, "#55A868", np.where(diff < 0, "#C44E52", "#BBBBBB"))
    ax.bar(np.arange(len(diff)), diff, color=colors, width=1.0)
    ax.axhline(0, color="black", linewidth=0.8)
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    ax.set_xlabel(
        f"queries, sorted ({wins} better, {losses} worse, {len(diff) - wins - losses} tied)"
    )
    ax.set_ylabel(label)
    ax.set_xticks([])
    if title:
        ax.set_title(title)
    return ax


def readable_span(
    ax: Axes, span: float, *, axis: str = "y", bounds: tuple[float, float] = (0.0, 1.0)
) -> Axes:
    """Widen an axis to at least ``span`` around its centre, within ``bounds``.

    Matplotlib fits an axis to the data, so two means 0.005 apart fill the
    panel and look far apart. An axis at least ``span`` wide (e.g. 0.1 of a
    metric that runs from 0 to 1) lets a reader judge a difference by its
    size, next to the intervals drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [0.728, 0.742])
    >>> low, high = readable_span(ax, 0.1).get_ylim()
    >>> round(float(high - low), 3)
    0.1
    >>> plt.close(fig)
    """
    get, set_ = (ax.get_ylim, ax.set_ylim) if axis == "y" else (ax.get_xlim, ax.set_xlim)
    low, high = get()
    if high - low < span:
        centre = (low + high) / 2
        low, high = centre - span / 2, centre + span / 2
        if low < bounds[0]:
            low, high = bounds[0], bounds[0] + span
        if high > bounds[1]:
            low, high = max(bounds[0], bounds[1] - span), bounds[1]
        set_(low, high)
    return ax


def interval_panels(
    tables: Mapping[str, pd.DataFrame],
    *,
    xlabel: str = "",
    baseline: str | None = None,
    ncols: int = 1,
    sharex: bool = True,
) -> Figure:
    """One panel per table, titled by its key: each row's estimate with its interval.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Tables with ``low`` and ``high`` and an estimate ``rate`` (hit rates)
        or ``mean``; rows are arms.
    xlabel : str
        The x axis label (the metric, its unit, the interval), under the
        bottom panel of each column.
    baseline : str, optional
        The row drawn in black with a dotted line at its value, in every panel
        that has it.
    ncols : int, default 1
        Panels per row: one (panels below one another, the legible default)
        or two (a grid, e.g. corpora by targets).
    sharex : bool, default True
        One x scale for every panel (the same metric on the same questions).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    n = max(len(tables), 1)
    nrows = -(-n // ncols)
    rows = max((len(t) for t in tables.values()), default=1)
    width = WIDTH if ncols == 1 else WIDTH + 1.5
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(width, nrows * (0.34 * rows + 1.0)), sharex=sharex, squeeze=False
    )
    for i, (ax, (title, table)) in enumerate(zip(axes.flat, tables.items(), strict=False)):
        value = "rate" if "rate" in table.columns else "mean"
        last = i + ncols >= n  # the bottom panel of its column
        interval_plot(
            table,
            value,
            ax=ax,
            xlabel=xlabel if last or not sharex else "",
            title=title,
            baseline=baseline if baseline in table.index else None,
        )
    for ax in axes.flat[n:]:
        ax.set_axis_off()
    fig.tight_layout()
    return fig


def difference_figure(
    table: pd.DataFrame,
    a: pd.Series,
    b: pd.Series,
    *,
    metric: str,
    target: str,
    level: str,
    baseline: str | None = None,
) -> Figure:
    """A table's arms with their intervals, above the per-question differences of one pair.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per arm with ``low``, ``high`` and an estimate ``rate`` (hit
        rates) or ``mean`` (e.g. :meth:`hierret.study.experiment.Result.table`).
    a, b : pandas.Series
        The two arms' per-question scores on the same questions, indexed by
        question and named by arm; the lower panel shows ``a − b`` per
        question, sorted (green: ``a`` better, red: worse), labelled
        ``"{a.name} − {b.name}"``.
    metric, target : str
        What the table measures, for the labels.
    level : str
        The interval, for the x label: its confidence and kind (``"95% bootstrap"``).
    baseline : str, optional
        The arm drawn in black with a dotted line at its value.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> t = pd.DataFrame({"mean": [0.5, 0.6], "low": [0.4, 0.5], "high": [0.6, 0.7]},
    ...                  index=["dense", "bm25"])
    >>> a = pd.Series({"q1": 1.0, "q2": 0.2}, name="bm25")
    >>> b = pd.Series({"q1": 0.5, "q2": 0.4}, name="dense")
    >>> fig = difference_figure(t, a, b, metric="mrr", target="passages",
    ...                         level="95% bootstrap", baseline="dense")
    >>> fig.axes[0].get_xlabel(), fig.axes[1].get_ylabel()
    ('mrr, passages target (95% bootstrap interval)', 'bm25 − dense')
    """
    import matplotlib.pyplot as plt

    top = 0.38 * len(table) + 1.2
    fig, axes = plt.subplots(
        2, 1, figsize=(WIDTH, top + 2.8), gridspec_kw={"height_ratios": [top, 2.8]}
    )
    interval_plot(
        table,
        "rate" if "rate" in table.columns else "mean",
        ax=axes[0],
        xlabel=f"{metric}, {target} target ({level} interval)",
        baseline=baseline,
    )
    paired_difference_plot(
        {str(q): float(v) for q, v in a.items()},
        {str(q): float(v) for q, v in b.items()},
        ax=axes[1],
        label=f"{a.name} − {b.name}",
        title=f"per-question {metric} difference",
    )
    fig.tight_layout()
    return fig


def smallest_font(fig: Figure) -> float:
    """The smallest font size, in points, of any visible, non-empty text in ``fig``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set_title("title", fontsize=14)
    >>> _ = ax.text(0.5, 0.5, "note", fontsize=7)
    >>> smallest_font(fig)
    7.0
    >>> plt.close(fig)
    """
    from matplotlib.text import Text

    fig.canvas.draw()  # tick labels exist once drawn
    sizes = [
        float(t.get_fontsize())
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip()
    ]
    return min(sizes, default=float("nan"))


def save(
    fig: Figure,
    folder: str | os.PathLike[str] | None,
    name: str,
    dpi: int = DPI,
    *,
    show: bool = True,
) -> None:
    """Render ``fig`` once: saved as ``folder/name`` when asked, shown in the notebook, closed.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    folder : path-like or None
        Where the site build wants figures (a notebook's ``figures_dir``);
        ``None`` or ``""``: nothing is saved.
    name : str
        File name; its suffix chooses the format.
    dpi : int, default :data:`DPI`
    show : bool, default True
        In a notebook, display the saved image (the page shows exactly the
        file the site links); the figure is closed either way, so the
        notebook does not show it a second time.

    Notes
    -----
    A PNG records, as text entries, the smallest font size of its text
    (:data:`FONT_KEY`, in points, :func:`smallest_font`) and its resolution
    (:data:`DPI_KEY`), so a browser check can tell how large that text is
    as displayed. The file is written atomically, with the mode ``open()``
    gives under the umask. Returns nothing, so a notebook cell ending with
    it shows no value.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> save(plt.figure(), None, "unsaved.png")  # no folder asked for: nothing saved
    """
    with _clock.stage("figures"):
        _save(fig, folder, name, dpi, show)


def _save(
    fig: Figure, folder: str | os.PathLike[str] | None, name: str, dpi: int, show: bool
) -> None:
    import io

    import matplotlib.pyplot as plt

    from hierret._files import atomic_write

    png = Path(name).suffix.lower() == ".png"
    data = b""
    if png or show:
        buffer = io.BytesIO()
        fig.savefig(
            buffer,
            format="png",
            dpi=dpi,
            bbox_inches="tight",
            metadata={FONT_KEY: f"{smallest_font(fig):g}", DPI_KEY: str(dpi)},
        )
        data = buffer.getvalue()
    if folder:
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if png:
            atomic_write(path, data)
        else:
            fig.savefig(path, dpi=dpi, bbox_inches="tight")
    if show and data:
        _display_png(data)
    plt.close(fig)


def _display_png(data: bytes) -> None:
    """Show PNG bytes in a running Jupyter kernel; nothing elsewhere (a terminal, a test)."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:  # pragma: no cover - IPython comes with the notebooks extra
        return
    if getattr(get_ipython(), "kernel", None) is not None:  # a kernel's shell has one
        display(Image(data=data, format="png"))  # type: ignore[no-untyped-call]
