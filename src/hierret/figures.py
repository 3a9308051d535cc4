"""Figures of comparisons, and saving figures where a build asks for them.

:meth:`hierret.experiment.Result.plot` draws one result's arms at each of its
targets. Two figures a study also needs:

- :func:`interval_panels`: several comparison tables (e.g. two results at two
  targets) as panels sharing their x axis, each arm's estimate with its
  interval;
- :func:`difference_figure`: one result's arms with their intervals beside
  the per-question differences of one pair of arms, sorted, so a reader sees
  whether a gain is broad or comes from a few questions;
- :func:`save`: a figure written where the site build asks for it (a
  notebook's ``figures_dir``), and nowhere when it does not.

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

from hierret.plots import interval_plot, paired_difference_plot

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hierret.experiment import Result

__all__ = ["difference_figure", "interval_panels", "save"]


def interval_panels(tables: Mapping[str, pd.DataFrame], *, xlabel: str = "",
                    baseline: str | None = None) -> Figure:
    """One panel per table, titled by its key: each row's estimate with its interval.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Tables with ``low`` and ``high`` and an estimate ``rate`` (hit rates)
        or ``mean``; rows are arms.
    xlabel : str
        The shared x axis label (the metric, its unit, the interval).
    baseline : str, optional
        The row drawn in black with a dotted line at its value, in every panel
        that has it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    rows = max((len(t) for t in tables.values()), default=1)
    fig, axes = plt.subplots(1, len(tables), figsize=(5 * len(tables), 0.45 * rows + 1.5),
                             sharex=True, squeeze=False)
    for ax, (title, table) in zip(axes[0], tables.items(), strict=True):
        value = "rate" if "rate" in table.columns else "mean"
        interval_plot(table, value, ax=ax, xlabel=xlabel, title=title,
                      baseline=baseline if baseline in table.index else None)
    fig.tight_layout()
    return fig


def difference_figure(result: Result, target: str, metric: str,
                      pair: tuple[str, str]) -> Figure:
    """A result's arms with their intervals, beside the per-question differences of one pair.

    Parameters
    ----------
    result : Result
        What :func:`hierret.experiment.run` returned.
    target, metric : str
        Which table: one of the result's targets and metrics.
    pair : (str, str)
        Arms ``(a, b)``; the right panel shows ``a − b`` per question, sorted
        (green: ``a`` better, red: worse).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    table = result.table(target, metric)
    a, b = pair
    scores = result.scores[target][metric]
    level = f"{result.confidence:.0%} " + ("Wilson" if metric.startswith("hit@") else
                                          "bootstrap")
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.45 * len(table) + 1.5),
                             gridspec_kw={"width_ratios": [1, 1.4]})
    interval_plot(table, "rate" if "rate" in table.columns else "mean", ax=axes[0],
                  xlabel=f"{metric}, {target} target ({level} interval)",
                  baseline=result.baseline)
    paired_difference_plot(scores[a], scores[b], ax=axes[1],
                           label=f"{a} − {b}", title=f"per-question {metric} difference")
    fig.tight_layout()
    return fig


def save(fig: Figure, folder: str | os.PathLike[str] | None, name: str,
         dpi: int = 150) -> None:
    """Save ``fig`` as ``folder/name`` (the folder made if needed), tightly cropped.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    folder : path-like or None
        Where the site build wants figures (a notebook's ``figures_dir``);
        ``None`` or ``""``: nothing is saved.
    name : str
        File name; its suffix chooses the format.
    dpi : int, default 150

    Notes
    -----
    Returns nothing, so a notebook cell ending with it shows no value.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> save(plt.figure(), None, "unsaved.png")  # no folder asked for: nothing saved
    """
    if not folder:
        return
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
