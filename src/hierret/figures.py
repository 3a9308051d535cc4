"""Figures of comparisons, and saving figures where a build asks for them.

:meth:`hierret.experiment.Result.plot` draws one result's arms at each of its
targets. Two figures a study also needs:

- :func:`interval_panels`: several comparison tables (e.g. two results at two
  targets) as panels sharing their x axis, each arm's estimate with its
  interval;
- :func:`difference_figure`: one result's arms with their intervals beside
  the per-question differences of one pair of arms, sorted, so a reader sees
  whether a gain is broad or comes from a few questions;
- :func:`save`: a figure rendered once, written where the site build asks
  for it (a notebook's ``figures_dir``) and shown in the notebook.

Every figure is drawn :data:`hierret.plots.WIDTH` inches wide or a little
more, in fonts of at least 9 points, so that its text stays legible when the
site's article column (about 690 CSS pixels at a 1280-pixel window) scales
it down; panels go below one another rather than beside.

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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from hierret import timing
from hierret.plots import WIDTH, interval_plot, paired_difference_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hierret.experiment import Result

__all__ = [
    "DPI",
    "DPI_KEY",
    "FONT_KEY",
    "difference_figure",
    "interval_panels",
    "save",
    "smallest_font",
]

#: Resolution of saved figures. A figure :data:`hierret.plots.WIDTH` inches wide
#: is then wider than the site's article column and is shown scaled to it.
DPI = 150
#: PNG text keys :func:`save` writes: the smallest font size (points) and the resolution.
FONT_KEY, DPI_KEY = "hierret:min_font_pt", "hierret:dpi"


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


def difference_figure(result: Result, target: str, metric: str, pair: tuple[str, str]) -> Figure:
    """A result's arms with their intervals, above the per-question differences of one pair.

    Parameters
    ----------
    result : Result
        What :func:`hierret.experiment.run` returned.
    target, metric : str
        Which table: one of the result's targets and metrics.
    pair : (str, str)
        Arms ``(a, b)``; the lower panel shows ``a − b`` per question, sorted
        (green: ``a`` better, red: worse).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    table = result.table(target, metric)
    a, b = pair
    scores = result.scores[target][metric]
    level = f"{result.confidence:.0%} " + ("Wilson" if metric.startswith("hit@") else "bootstrap")
    top = 0.38 * len(table) + 1.2
    fig, axes = plt.subplots(
        2, 1, figsize=(WIDTH, top + 2.8), gridspec_kw={"height_ratios": [top, 2.8]}
    )
    interval_plot(
        table,
        "rate" if "rate" in table.columns else "mean",
        ax=axes[0],
        xlabel=f"{metric}, {target} target ({level} interval)",
        baseline=result.baseline,
    )
    paired_difference_plot(
        scores[a],
        scores[b],
        ax=axes[1],
        label=f"{a} − {b}",
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
    with timing.stage("figures"):
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
