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

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

__all__ = ["WIDTH", "interval_plot", "paired_difference_plot", "readable_span"]

#: Width in inches of a one-column figure. Saved at 150 dpi it is about 1,000
#: pixels wide and is shown scaled to the site's article column (about 690 CSS
#: pixels at a 1280-pixel window), so a 10-point label reads at about 13 pixels.
WIDTH = 7.0


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
