"""The few figures every notebook draws: estimates with intervals, paired differences.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import pandas as pd
>>> table = pd.DataFrame({"mean": [0.7, 0.8], "low": [0.6, 0.7], "high": [0.8, 0.9]},
...                      index=["dense", "bm25"])
>>> ax = interval_plot(table, xlabel="nDCG@10")
>>> len(ax.get_yticklabels())
2
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["interval_grid", "interval_plot", "paired_difference_plot"]


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
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 0.45 * len(table) + 1.2))
    y = np.arange(len(table))[::-1]
    est = table[value].to_numpy(dtype=float)
    err = np.vstack([est - table[low].to_numpy(dtype=float),
                     table[high].to_numpy(dtype=float) - est])
    colors = ["black" if arm == baseline else "#4C72B0" for arm in table.index]
    for yi, e, lo_hi, c in zip(y, est, err.T, colors, strict=True):
        ax.errorbar(e, yi, xerr=lo_hi.reshape(2, 1), fmt="o", color=c, capsize=3)
    if baseline is not None:
        ref = table[value].to_numpy(dtype=float)[list(table.index).index(baseline)]
        ax.axvline(float(ref), color="grey", linestyle=":", zorder=0)
    ax.set_yticks(y, [str(i) for i in table.index])
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
    qids = sorted(a)
    diff = np.sort(np.array([a[q] - b[q] for q in qids]))
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 2.8))
    colors = np.where(diff > 0, "#55A868", np.where(diff < 0, "#C44E52", "#BBBBBB"))
    ax.bar(np.arange(len(diff)), diff, color=colors, width=1.0)
    ax.axhline(0, color="black", linewidth=0.8)
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    ax.set_xlabel(f"queries, sorted ({wins} better, {losses} worse, "
                  f"{len(diff) - wins - losses} tied)")
    ax.set_ylabel(label)
    ax.set_xticks([])
    if title:
        ax.set_title(title)
    return ax


def interval_grid(
    tables: Mapping[str, pd.DataFrame],
    *,
    columns: int = 2,
    baseline: str | None = None,
    xlabel: str = "",
) -> Figure:
    """One :func:`interval_plot` panel per table, titled by its key, in a grid.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        Panel title to a table of one row per arm (``mean``, ``low``, ``high``).
    columns : int, default 2
        Panels per row.
    baseline : str, optional
        The row drawn as the reference in every panel that has it.
    xlabel : str
        The estimate, under every panel.

    Returns
    -------
    Figure
        Panels share their x axis, so estimates can be compared across panels.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> t = pd.DataFrame({"mean": [0.7, 0.8], "low": [0.6, 0.7], "high": [0.8, 0.9]},
    ...                  index=["dense", "bm25"])
    >>> [ax.get_title() for ax in interval_grid({"a": t, "b": t, "c": t}).axes]
    ['a', 'b', 'c']
    """
    rows = -(-len(tables) // columns)
    height = max(len(t) for t in tables.values()) * 0.38 + 1.1
    fig, axes = plt.subplots(rows, columns, figsize=(5.6 * columns, height * rows),
                             sharex=True, squeeze=False)
    for ax, (title, table) in zip(axes.flat, tables.items(), strict=False):
        interval_plot(table, ax=ax, xlabel=xlabel, title=title,
                      baseline=baseline if baseline in table.index else None)
    for ax in axes.flat[len(tables):]:
        ax.remove()
    fig.tight_layout()
    return fig
