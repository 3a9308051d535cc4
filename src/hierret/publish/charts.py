"""Each study's own figures, drawn from data frames and arrays.

The studies in :mod:`hierret.study` compute; these functions draw what they
computed, from plain data only (tables, per-question scores, arrays of
numbers, labels), so the drawing lives on the publishing floor with the shared
look and primitives of :mod:`hierret.publish.figures`. Each study keeps its
own entry point (``Result.plot``, ``sweep.plot_sweep``, ...), which prepares
the data and calls one of these:

- :func:`arms_figure`: every arm's estimate with its interval, one panel per
  target (:meth:`hierret.study.experiment.Result.plot`);
- :func:`sweep_figure`: a metric against a swept setting, with interval
  bands (:func:`hierret.study.sweep.plot_sweep`);
- :func:`chunk_sizes_axes`: a metric against the passage size
  (:meth:`hierret.study.sweep.ChunkingSweep.plot`);
- :func:`threshold_scores_figure` and :func:`threshold_sweeps_figure`: a
  reranker's scores by relevance, and the returned set as its threshold moves
  (:func:`hierret.study.thresholds.plot_scores`,
  :func:`hierret.study.thresholds.plot_sweeps`);
- :func:`joint_matrix_figure`: first stages crossed with rerankers
  (:func:`hierret.study.joint.plot_matrix`);
- :func:`cost_tradeoff_axes` and :func:`cost_tradeoff_figure`: quality
  against throughput (:func:`hierret.study.cost.tradeoff_figure`);
- :func:`cosine_histogram`: the cosines between two encoders' vectors
  (:meth:`hierret.study.agreement.PrecisionAgreement.plot`);
- :func:`length_histogram`: unit lengths against a limit
  (:func:`hierret.study.structure.length_histogram`).

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import pandas as pd
>>> t = pd.DataFrame({"mean": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]},
...                  index=["dense", "bm25"])
>>> fig = arms_figure({"sections target": t, "documents target": t}, xlabel="nDCG@10")
>>> [ax.get_title() for ax in fig.axes]
['sections target', 'documents target']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from hierret.publish.figures import WIDTH, interval_plot, readable_span

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "arms_figure",
    "chunk_sizes_axes",
    "cosine_histogram",
    "cost_tradeoff_axes",
    "cost_tradeoff_figure",
    "joint_matrix_figure",
    "length_histogram",
    "sweep_figure",
    "threshold_scores_figure",
    "threshold_sweeps_figure",
]

#: Colours of the threshold figures: relevant and other candidates' scores,
#: the set's precision and recall.
_RELEVANT, _OTHER, _PRECISION, _RECALL = "#55A868", "#C44E52", "#4C72B0", "#DD8452"


def arms_figure(
    tables: Mapping[str, pd.DataFrame], *, xlabel: str = "", baseline: str | None = None
) -> Figure:
    """Each arm's estimate with its interval, one panel per table, stacked, titled by its key.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Per panel (e.g. ``"sections target"``), one row per arm with
        ``mean``, ``low`` and ``high``.
    xlabel : str
        Under every panel (the metric).
    baseline : str, optional
        The arm drawn in black with a dotted line at its value.

    Returns
    -------
    matplotlib.figure.Figure
        :data:`~hierret.publish.figures.WIDTH` wide, each panel as tall as
        the longest table needs.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> t = pd.DataFrame({"mean": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]},
    ...                  index=["dense", "bm25"])
    >>> fig = arms_figure({"passages target": t}, xlabel="mrr", baseline="dense")
    >>> fig.axes[0].get_xlabel(), fig.get_size_inches().tolist()
    ('mrr', [7.0, 2.06])
    """
    import matplotlib.pyplot as plt

    rows = max((len(t) for t in tables.values()), default=0)
    fig, axes = plt.subplots(
        len(tables), 1, figsize=(WIDTH, (0.38 * rows + 1.3) * len(tables)), squeeze=False
    )
    for ax, (title, table) in zip(axes[:, 0], tables.items(), strict=True):
        interval_plot(table, ax=ax, xlabel=xlabel, title=title, baseline=baseline)
    fig.tight_layout()
    return fig


def sweep_figure(
    table: pd.DataFrame,
    field: str,
    *,
    by: str | None = None,
    ylabel: str = "",
    marks: Sequence[float] = (),
    title: str = "",
) -> Figure:
    """One panel per target: the mean against ``field``, one line per ``by`` group.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per setting and target: ``target``, ``field``, ``mean``,
        ``low``, ``high``, and the column ``by`` when several sweeps are drawn
        together.
    field : str
        The swept field (the x axis).
    by : str, optional
        Column whose groups are drawn as separate lines.
    ylabel : str
        The metric, for the y axis.
    marks : sequence of float
        x values to mark with a dotted line (e.g. the default).
    title : str
        The figure's title, above the panels.

    Returns
    -------
    matplotlib.figure.Figure
        Shared y axis; each line's interval drawn as a band.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> rows = pd.DataFrame({"w": [0, 1, 0, 1], "target": ["sections"] * 2 + ["documents"] * 2,
    ...                      "mean": [.5, .6, .7, .6], "low": [.4, .5, .6, .5],
    ...                      "high": [.6, .7, .8, .7]})
    >>> [ax.get_title() for ax in sweep_figure(rows, "w", ylabel="nDCG@10").axes]
    ['sections target', 'documents target']
    """
    import matplotlib.pyplot as plt

    targets = list(dict.fromkeys(table["target"]))
    fig, axes = plt.subplots(
        1, len(targets), figsize=(4.0 * len(targets), 3.4), sharey=True, squeeze=False
    )
    for ax, target in zip(axes[0], targets, strict=True):
        rows = table[table["target"] == target]
        groups = rows.groupby(by, sort=False) if by else [("", rows)]
        for group, g in groups:
            (line,) = ax.plot(g[field], g["mean"], "-o", markersize=4, label=str(group) or None)
            ax.fill_between(g[field], g["low"], g["high"], color=line.get_color(), alpha=0.15)
        for x in marks:
            ax.axvline(x, color="grey", linestyle=":")
        ax.set_title(f"{target} target")
        ax.set_xlabel(field)
        ax.grid(alpha=0.3)
        if by:
            ax.legend(title=by, fontsize=9, title_fontsize=9)
    axes[0][0].set_ylabel(ylabel)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def chunk_sizes_axes(
    table: pd.DataFrame,
    names: Sequence[str],
    sizes: Sequence[int],
    *,
    ax: Axes | None = None,
    ylabel: str = "",
) -> Axes:
    """Each profile's estimate against the passage size, with its interval.

    Lines are shifted a little apart, so that their intervals do not overlap.
    The y axis spans at least 0.1 (:func:`~hierret.publish.figures.readable_span`),
    so that differences read at their size beside the intervals.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per arm ``"{name}-{size}"``: ``mean`` (or ``rate``), ``low``
        and ``high``; ``table.attrs["confidence"]``, when set, is named in the
        y label.
    names : sequence of str
        The profile names to draw, one line each.
    sizes : sequence of int
        The passage sizes (``max_chars``), the x axis.
    ax : Axes, optional
        Where to draw; a new figure otherwise.
    ylabel : str
        The y axis label (the metric and its target).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> t = pd.DataFrame({"mean": [0.5, 0.6], "low": [0.4, 0.5], "high": [0.6, 0.7]},
    ...                  index=["dense-300", "dense-600"])
    >>> ax = chunk_sizes_axes(t, ["dense"], [300, 600], ylabel="nDCG@10")
    >>> [int(x) for x in ax.get_xticks()], ax.get_legend().get_texts()[0].get_text()
    ([300, 600], 'dense')
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.4))
    value = "rate" if "rate" in table.columns else "mean"
    x0 = np.array(sizes, dtype=float)
    gap = float(np.diff(np.sort(x0)).min()) if len(x0) > 1 else float(x0[0])
    for i, name in enumerate(names):  # side by side, so that intervals do not overlap
        rows = table.loc[[f"{name}-{size}" for size in sizes]]
        est = rows[value].to_numpy(dtype=float)
        err = [
            est - rows["low"].to_numpy(dtype=float),
            rows["high"].to_numpy(dtype=float) - est,
        ]
        x = x0 + (i - (len(names) - 1) / 2) * 0.04 * gap
        ax.errorbar(x, est, yerr=err, marker="o", capsize=4, label=name)
    level = table.attrs.get("confidence")
    interval = f" ({level:.0%} intervals)" if level else ""
    ax.set_xlabel("passage size, max_chars (characters)")
    ax.set_ylabel(ylabel + interval)
    ax.set_xticks(list(sizes))
    ax.set_xlim(x0.min() - gap / 2, x0.max() + gap / 2)
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    return readable_span(ax, 0.1)  # a 0.005 difference should look like one


def _grid(
    keys: Sequence[tuple[str, str]],
) -> tuple[Figure, NDArray[np.object_], list[str], list[str]]:
    """One panel per ``(row, column)`` key on a rows × columns grid; the missing ones off."""
    import matplotlib.pyplot as plt

    rows = list(dict.fromkeys(r for r, _ in keys))
    cols = list(dict.fromkeys(c for _, c in keys))
    fig, axes = plt.subplots(
        len(rows), len(cols), figsize=(4.0 * len(cols), 3.1 * len(rows)), squeeze=False
    )
    for row, col in {(r, c) for r in rows for c in cols} - set(keys):
        axes[rows.index(row)][cols.index(col)].set_axis_off()
    return fig, axes, rows, cols


def threshold_scores_figure(
    scores: Mapping[tuple[str, str], tuple[NDArray[np.float64], NDArray[np.float64]]],
    own: Mapping[str, float | None] | None = None,
    reference: float | None = 0.5,
    bins: int = 30,
) -> Figure:
    """Histograms (densities) of relevant and non-relevant candidates' scores, per case.

    Cases are laid out on a grid by their ``(row, column)`` keys (e.g.
    ``(corpus, reranker)``). A solid line marks the column's own threshold
    (``own[column]``), a dashed one ``reference`` when it lies on the case's
    scale (the title says when it does not).

    Parameters
    ----------
    scores : mapping of (str, str) to (array, array)
        Per case, the reranker's scores of the relevant candidates and of the
        others.
    own : mapping of str to float or None, optional
        Each column's own threshold.
    reference : float, optional
        A threshold drawn on every scale it lies on.
    bins : int, default 30
        Histogram bins, the same edges for both groups of a case.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> cases = {("toy", "rr"): (np.array([0.9, 0.6, 0.8]), np.array([0.2, 0.7]))}
    >>> threshold_scores_figure(cases, {"rr": 0.75}, reference=2.0).axes[0].get_title()
    'toy: rr (2.0 is off this scale)'
    """
    fig, axes, rows, cols = _grid(list(scores))
    for (row, col), (rel, non) in scores.items():
        ax: Axes = axes[rows.index(row)][cols.index(col)]
        both = np.concatenate([rel, non])
        edges = np.linspace(both.min(initial=0.0), both.max(initial=1.0), bins + 1)
        ax.hist(
            non,
            bins=edges.tolist(),
            density=True,
            alpha=0.55,
            color=_OTHER,
            label=f"not relevant ({len(non)})",
        )
        ax.hist(
            rel,
            bins=edges.tolist(),
            density=True,
            alpha=0.55,
            color=_RELEVANT,
            label=f"relevant ({len(rel)})",
        )
        if (own or {}).get(col) is not None:
            ax.axvline(float((own or {})[col] or 0.0), color="black", linewidth=1.2)
        on_scale = reference is not None and edges[0] <= reference <= edges[-1]
        if on_scale:
            ax.axvline(float(reference or 0.0), color="grey", linestyle="--")
        off = "" if on_scale or reference is None else f" ({reference} is off this scale)"
        ax.set_title(f"{row}: {col}{off}")
        ax.set_xlabel(f"{col} score")
        ax.set_ylabel("density")
        ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


def threshold_sweeps_figure(
    sweeps: Mapping[tuple[str, str], pd.DataFrame],
    marked: pd.DataFrame | None = None,
    *,
    top_k: int | None = None,
    filled: str | None = None,
) -> Figure:
    """Set precision and recall (left axis) and size (right axis) against the threshold.

    Cases are laid out on a grid by their ``(row, column)`` keys (e.g.
    ``(corpus, reranker)``).

    Parameters
    ----------
    sweeps : mapping of (str, str) to pandas.DataFrame
        Per case, the returned set at each threshold: ``min_score``,
        ``precision``, ``recall`` and ``kept`` (as
        :func:`hierret.study.sets.selection_sweep` makes them).
    marked : pandas.DataFrame, optional
        Points to mark on the curves: ``corpus`` (the row), ``reranker`` (the
        column), ``selection``, ``min_score``, ``precision`` and ``recall``;
        those with an infinite ``min_score`` are left out.
    top_k : int, optional
        The ceiling on the set's size: the top of the size axis (else the
        largest size swept).
    filled : str, optional
        The ``selection`` whose marks are filled; the others are open.

    Returns
    -------
    matplotlib.figure.Figure
        Each panel with a twin axis for the size.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> sw = pd.DataFrame({"min_score": [0.0, 0.5, 1.0], "precision": [0.5, 0.8, 1.0],
    ...                    "recall": [1.0, 0.7, 0.1], "kept": [4.0, 2.0, 0.5]})
    >>> fig = threshold_sweeps_figure({("toy", "rr"): sw, ("toy", "other"): sw})
    >>> [ax.get_title() for ax in fig.axes[:2]], len(fig.axes)  # and two twin axes
    (['toy: rr', 'toy: other'], 4)
    """
    fig, axes, rows, cols = _grid(list(sweeps))
    for (row, col), sw in sweeps.items():
        ax: Axes = axes[rows.index(row)][cols.index(col)]
        ax.plot(sw.min_score, sw.precision, color=_PRECISION, label="precision")
        ax.plot(sw.min_score, sw.recall, color=_RECALL, label="recall")
        here = (
            pd.DataFrame()
            if marked is None
            else marked[(marked.corpus == row) & (marked.reranker == col)]
        )
        for x in here[np.isfinite(here.min_score)].itertuples() if len(here) else []:
            for metric, color in (("precision", _PRECISION), ("recall", _RECALL)):
                face = color if x.selection == filled else "none"
                ax.plot(
                    x.min_score,
                    getattr(x, metric),
                    "o",
                    color=color,
                    markerfacecolor=face,
                    markersize=7,
                )
        size = ax.twinx()
        size.plot(sw.min_score, sw.kept, color="grey", linestyle=":")
        size.set_ylim(0, (top_k or float(sw.kept.max())) + 1)
        size.set_ylabel("units returned (dotted)", color="grey")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("share of the set / of the relevant")
        ax.set_xlabel(f"min_score ({col} scale)")
        ax.set_title(f"{row}: {col}")
        if cols.index(col) == 0:
            ax.legend(fontsize=9, loc="center left")
    fig.tight_layout()
    return fig


def joint_matrix_figure(
    tables: Mapping[str, pd.DataFrame],
    differences: Mapping[str, pd.DataFrame],
    metric: str,
    confidence: Mapping[str, float],
) -> Figure:
    """Per corpus (a row): every arm's mean, and each reranked arm minus its first stage.

    Dots are means over the questions, bars their intervals; the right
    panel's zero line is "no change".

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Per corpus, one row per arm with ``mean``, ``low`` and ``high``.
    differences : mapping of str to pandas.DataFrame
        Per corpus, one row per reranked arm with ``diff``, ``diff_low`` and
        ``diff_high`` (paired against its own first stage); an empty or
        missing one leaves the right panel blank.
    metric : str
        For the x labels.
    confidence : mapping of str to float
        Per corpus, the intervals' confidence (``0.95``).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> t = pd.DataFrame({"mean": [0.5, 0.6], "low": [0.4, 0.5], "high": [0.6, 0.7]},
    ...                  index=["bm25+none", "bm25+rr"])
    >>> d = pd.DataFrame({"diff": [0.1], "diff_low": [0.0], "diff_high": [0.2]},
    ...                  index=["bm25+rr"])
    >>> fig = joint_matrix_figure({"pets": t}, {"pets": d}, "ndcg@10", {"pets": 0.95})
    >>> [ax.get_title() for ax in fig.axes]
    ['pets: every arm', 'pets: reranked − own first stage']
    """
    import matplotlib.pyplot as plt

    n = max((len(t) for t in tables.values()), default=1)
    fig, axes = plt.subplots(
        len(tables), 2, figsize=(8.5, (0.32 * n + 1.3) * len(tables)), squeeze=False
    )
    for (name, table), row in zip(tables.items(), axes, strict=True):
        level = f"{confidence[name]:.0%} interval"
        interval_plot(
            table,
            ax=row[0],
            xlabel=f"{metric} (mean over questions, {level})",
            title=f"{name}: every arm",
        )
        tests = differences.get(name, pd.DataFrame())
        if len(tests):
            interval_plot(
                tests,
                value="diff",
                low="diff_low",
                high="diff_high",
                ax=row[1],
                xlabel=f"{metric} difference (paired, {level})",
                title=f"{name}: reranked − own first stage",
            )
            row[1].axvline(0, color="black", linewidth=0.8)
        else:
            row[1].set_axis_off()
    fig.tight_layout()
    return fig


def cost_tradeoff_axes(
    per_second: Mapping[str, float] | pd.Series,
    table: pd.DataFrame,
    *,
    ax: Axes | None = None,
    xlabel: str = "passages per second (log scale, this machine)",
    ylabel: str = "",
    title: str = "",
) -> Axes:
    """Quality against throughput: each arm's estimate with its interval, at its speed.

    One colour per arm, named in the legend (arms of similar speed and quality
    would hide each other's labels on the points).

    Parameters
    ----------
    per_second : mapping or pandas.Series
        Arm name to throughput (x, on a log scale).
    table : pandas.DataFrame
        One row per arm with ``mean``, ``low`` and ``high`` (e.g. a
        :meth:`hierret.study.experiment.Result.table`); arms missing from
        ``per_second`` are left out.
    ax : Axes, optional
        Where to draw; a new figure otherwise.
    xlabel, ylabel, title : str

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> table = pd.DataFrame({"mean": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]},
    ...                      index=["minilm", "wordllama"])
    >>> ax = cost_tradeoff_axes({"minilm": 10.0, "wordllama": 3000.0}, table, ylabel="nDCG@10")
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['minilm', 'wordllama']
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.6))
    speed = {str(arm): float(x) for arm, x in dict(per_second).items()}
    arms = [arm for arm in table.index if str(arm) in speed]
    for i, arm in enumerate(arms):
        y, low, high = table.loc[arm, ["mean", "low", "high"]].to_numpy(dtype=float)
        ax.errorbar(
            speed[str(arm)],
            y,
            yerr=[[y - low], [high - y]],
            fmt="o",
            capsize=3,
            color=f"C{i}",
            label=str(arm),
        )
    ax.set(xscale="log", xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3)
    return ax


def cost_tradeoff_figure(
    per_second: pd.Series,
    tables: Mapping[tuple[str, str], pd.DataFrame],
    *,
    ylabel: str = "",
    xlabel: str = "passages per second (log scale, this machine)",
) -> Figure:
    """:func:`cost_tradeoff_axes` per (corpus, ranker): corpora in rows, rankers in columns.

    The arms (encoders) are the same in every panel, so one legend above the
    panels names them, instead of a legend in each panel.

    Parameters
    ----------
    per_second : pandas.Series
        Throughput indexed by (corpus, arm).
    tables : mapping of (corpus, ranker) to pandas.DataFrame
        Each panel's table: one row per arm with ``mean``, ``low`` and ``high``.
    ylabel, xlabel : str
        Axis labels, once for the whole figure.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> t = pd.DataFrame({"mean": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]},
    ...                  index=["minilm", "wordllama"])
    >>> speed = pd.Series({("a", "minilm"): 10.0, ("a", "wordllama"): 3000.0})
    >>> fig = cost_tradeoff_figure(speed, {("a", "dense"): t, ("a", "hybrid"): t})
    >>> [ax.get_title() for ax in fig.axes]
    ['a, dense', 'a, hybrid']
    """
    import matplotlib.pyplot as plt

    corpora = list(dict.fromkeys(c for c, _ in tables))
    rankers = list(dict.fromkeys(r for _, r in tables))
    fig, axes = plt.subplots(
        len(corpora),
        len(rankers),
        squeeze=False,
        sharex=True,
        figsize=(7.5, 2.6 * len(corpora) + 0.8),
        layout="constrained",
    )
    for (corpus, ranker), table in tables.items():
        ax = axes[corpora.index(corpus)][rankers.index(ranker)]
        cost_tradeoff_axes(
            per_second.loc[corpus], table, ax=ax, xlabel="", title=f"{corpus}, {ranker}"
        )
        if legend := ax.get_legend():
            legend.remove()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=max(len(labels), 1))
    fig.supxlabel(xlabel)
    fig.supylabel(ylabel)
    return fig


def cosine_histogram(
    cosines: NDArray[Any],
    long: NDArray[np.bool_],
    *,
    names: tuple[str, str] = ("reference", "other"),
    ax: Axes | None = None,
    xlabel: str | None = None,
) -> Figure:
    """Histogram of per-unit cosines between two encoders, within the window and beyond it.

    Parameters
    ----------
    cosines : array
        One cosine per unit.
    long : array of bool
        The units longer than the reference encoder's token window.
    names : (str, str)
        Labels of the reference and the other encoder, for the x label.
    ax : Axes, optional
        Where to draw; a new figure otherwise.
    xlabel : str, optional
        Instead of ``"cosine({other}, {reference}) per unit"``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = cosine_histogram(np.array([0.99, 0.98, 0.9]), np.array([False, False, True]),
    ...                        names=("fp32", "int8"))
    >>> fig.axes[0].get_xlabel()
    'cosine(int8, fp32) per unit'
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 2.8))
    ax.hist(cosines[~long], bins=40, alpha=0.7, label="within the window")
    ax.hist(cosines[long], bins=40, alpha=0.7, label="longer than the window")
    other, reference = names[1], names[0]
    ax.set(xlabel=xlabel or f"cosine({other}, {reference}) per unit", ylabel="units")
    ax.legend()
    return ax.get_figure()  # type: ignore[return-value]


def length_histogram(
    lengths: Sequence[int] | NDArray[Any],
    limit: int,
    *,
    unit: str,
    limit_name: str,
    what: str = "passage",
    title: str = "",
    color: str = "#4C72B0",
    bins: int = 40,
    ax: Axes | None = None,
) -> Axes:
    """Histogram of unit lengths with a dashed line at a limit, axes labelled with the unit.

    Parameters
    ----------
    lengths : sequence of int
        One length per unit.
    limit : int
        Drawn as a dashed vertical line, labelled ``"{limit_name} = {limit} {unit}"``.
    unit : str
        What a length counts (``"characters"``, ``"tokens"``): the x label.
    limit_name : str
        What the limit is (``"max_chars"``, ``"window"``).
    what : str, default "passage"
        What the units are, singular: the x label is ``"{what} length ({unit})"``
        and the y label ``"{what}s"``.
    title : str, optional
    color : str
    bins : int
    ax : Axes, optional
        Where to draw; a new 7 x 3.2 inch figure otherwise.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = length_histogram([3, 5, 9], 8, unit="tokens", limit_name="window")
    >>> ax.get_xlabel(), ax.get_legend().get_texts()[0].get_text()
    ('passage length (tokens)', 'window = 8 tokens')
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.2))
    ax.hist(np.asarray(lengths), bins=bins, color=color)
    ax.axvline(limit, color="black", linestyle="--", label=f"{limit_name} = {limit} {unit}")
    ax.set_xlabel(f"{what} length ({unit})")
    ax.set_ylabel(f"{what}s")
    if title:
        ax.set_title(title)
    ax.legend()
    return ax
