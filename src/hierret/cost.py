"""What an encoder costs: texts embedded per second, and the latency of one typed query.

Two numbers an encoder decision weighs against quality. **Throughput** is the
number of texts the encoder embeds per second, in one batch, uncached (give
the encoder itself, not a :class:`~hierret.cache.CachedEncoder`, or the cache
is what gets timed). **Latency** is what one typed question costs, measured
one question at a time: embedding it and searching a dense index for the top
``k``. Both depend on the machine: compare encoders by their ratios, on the
same machine, never as benchmarks.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.index import VectorIndex
>>> enc = HashEncoder(dimension=16)
>>> texts = ["cats purr", "dogs bark", "birds sing"]
>>> index = VectorIndex(["a", "b", "c"], enc.encode_passages(texts), enc.identity.describe())
>>> cost = measure_cost(enc, index, texts, ["why do dogs bark", "do cats purr"])
>>> len(cost.latency_ms), cost.per_second > 0
(2, True)
>>> sorted(cost.row(n_units=300))
['build s (est.)', 'latency ms', 'latency p90 ms', 'passages/s']
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hierret.encoders import Encoder
from hierret.index import VectorIndex
from hierret.measured import Measurements, text_digest
from hierret.units import Query

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["EncoderCost", "measure_cost", "tradeoff_figure", "tradeoff_plot"]


@dataclass(frozen=True)
class EncoderCost:
    """Throughput and per-query latency of one encoder, as :func:`measure_cost` timed them.

    Attributes
    ----------
    per_second : float
        Texts embedded per second (one batch, uncached).
    latency_ms : tuple of float
        Per query, milliseconds to embed it alone and search the index.
    """

    per_second: float
    latency_ms: tuple[float, ...]

    @property
    def latency_mean_ms(self) -> float:
        """Mean latency (ms); NaN when no query was timed."""
        return float(np.mean(self.latency_ms)) if self.latency_ms else float("nan")

    @property
    def latency_p90_ms(self) -> float:
        """90th percentile of the latency (ms, linear interpolation); NaN without queries."""
        return float(np.percentile(self.latency_ms, 90)) if self.latency_ms else float("nan")

    def row(self, n_units: int) -> dict[str, float]:
        """One table row: throughput, ``build s (est.)`` (``n_units`` at this
        throughput), mean latency (``latency ms``) and its 90th percentile.

        Parameters
        ----------
        n_units : int
            Units an index of the whole level would embed.
        """
        return {
            "passages/s": self.per_second,
            "build s (est.)": n_units / self.per_second,
            "latency ms": self.latency_mean_ms,
            "latency p90 ms": self.latency_p90_ms,
        }


def measure_cost(
    encoder: Encoder,
    index: VectorIndex,
    texts: Sequence[str],
    queries: Sequence[str | Query],
    k: int = 10,
    *,
    memo: Measurements | None = None,
) -> EncoderCost:
    """Time ``encoder`` embedding ``texts`` in one batch, then each query alone plus a search.

    One text is embedded first, untimed, so that neither a model loaded on
    first use (:class:`~hierret.encoders.LazyEncoder`) nor a first call's
    set-up is counted as throughput.

    Parameters
    ----------
    encoder : Encoder
        The encoder timed, uncached (the one that wrote ``index``, or one of
        the same identity: the index refuses any other).
    index : VectorIndex
        Searched for each query's top ``k``.
    texts : sequence of str
        Embedded once, as passages, for the throughput; at least one.
    queries : sequence of str or Query
        Embedded and searched one at a time for the latency (may be empty); a
        :class:`~hierret.units.Query` stands for its text.
    k : int, default 10
        Ranking length of each search.
    memo : Measurements, optional
        Keeps the result; a later call on this machine with the same code,
        encoder identity, texts, queries, index and ``k`` reuses it instead of
        timing again (see :mod:`hierret.measured`).

    Returns
    -------
    EncoderCost

    Raises
    ------
    ValueError
        ``texts`` is empty.
    hierret.index.IdentityMismatchError
        ``encoder`` is not the encoder that wrote ``index``.
    """
    if not texts:
        raise ValueError("texts is empty: give at least one text to time the throughput")
    if memo is not None:
        index.check(encoder.identity.describe())
        words = [q.text if isinstance(q, Query) else q for q in queries]
        inputs = {
            "encoder": encoder.identity.key(),
            "texts": text_digest(texts),
            "queries": text_digest(words),
            "index": [len(index), text_digest(index.ids)],
            "k": k,
        }
        return memo.recall(
            "encoder-cost",
            inputs,
            lambda: measure_cost(encoder, index, texts, queries, k),
            dump=lambda c: {"per_second": c.per_second, "latency_ms": list(c.latency_ms)},
            load=lambda d: EncoderCost(float(d["per_second"]), tuple(map(float, d["latency_ms"]))),
        )
    encoder.encode_passages(list(texts[:1]))  # untimed warm-up: a lazy model loads here
    start = time.perf_counter()
    encoder.encode_passages(list(texts))
    per_second = len(texts) / (time.perf_counter() - start)
    identity = encoder.identity.describe()
    latency = []
    for query in queries:
        text = query.text if isinstance(query, Query) else query
        start = time.perf_counter()
        index.search(encoder.encode_queries([text]), k, identity)
        latency.append(1000 * (time.perf_counter() - start))
    return EncoderCost(per_second, tuple(latency))


def tradeoff_plot(
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
    per_second : mapping or Series
        Arm name to throughput (x, on a log scale).
    table : DataFrame
        One row per arm with ``mean``, ``low`` and ``high`` (e.g. a
        :meth:`hierret.experiment.Result.table`); arms missing from
        ``per_second`` are left out.
    ax : Axes, optional
        Where to draw; a new figure otherwise.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> table = pd.DataFrame({"mean": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]},
    ...                      index=["minilm", "wordllama"])
    >>> ax = tradeoff_plot({"minilm": 10.0, "wordllama": 3000.0}, table, ylabel="nDCG@10")
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


def tradeoff_figure(
    per_second: pd.Series,
    tables: Mapping[tuple[str, str], pd.DataFrame],
    *,
    ylabel: str = "",
    xlabel: str = "passages per second (log scale, this machine)",
) -> Figure:
    """:func:`tradeoff_plot` per (corpus, ranker): corpora in rows, rankers in columns.

    The arms (encoders) are the same in every panel, so one legend below the
    panels names them, instead of a legend in each panel.

    Parameters
    ----------
    per_second : Series
        Throughput indexed by (corpus, arm).
    tables : mapping of (corpus, ranker) to DataFrame
        Each panel's table: one row per arm with ``mean``, ``low`` and ``high``.
    ylabel, xlabel : str
        Axis labels, once for the whole figure.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> t = pd.DataFrame({"mean": [0.6, 0.4], "low": [0.5, 0.3], "high": [0.7, 0.5]},
    ...                  index=["minilm", "wordllama"])
    >>> speed = pd.Series({("a", "minilm"): 10.0, ("a", "wordllama"): 3000.0})
    >>> fig = tradeoff_figure(speed, {("a", "dense"): t, ("a", "hybrid"): t})
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
        tradeoff_plot(per_second.loc[corpus], table, ax=ax, xlabel="", title=f"{corpus}, {ranker}")
        if legend := ax.get_legend():
            legend.remove()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=max(len(labels), 1))
    fig.supxlabel(xlabel)
    fig.supylabel(ylabel)
    return fig
