"""What an encoder costs: texts embedded per second, and the latency of one typed query.

Two numbers an encoder decision weighs against quality. **Throughput** is the
number of texts the encoder embeds per second, in one batch, uncached (give
the encoder itself, not a :class:`~hierret.encoders.cache.CachedEncoder`, or the cache
is what gets timed). **Latency** is what one typed question costs, measured
one question at a time: embedding it and searching a dense index for the top
``k``. Both depend on the machine: compare encoders by their ratios, on the
same machine, never as benchmarks.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.search.vectors.index import VectorIndex
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

import hierret.publish.charts as charts
from hierret.encoders import Encoder
from hierret.publish.tables import styled
from hierret.search.vectors.index import VectorIndex
from hierret.search.vectors.late import LateChunker
from hierret.search.vectors.levels import text_units
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Corpus, Query
from hierret.study.measured import Measurements, text_digest

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

    from hierret.encoders.cache import CachedEncoder
    from hierret.publish.figures import Figure
    from hierret.study.testbed import Testbed

__all__ = ["Costs", "EncoderCost", "late_chunking_cost", "measure_cost", "tradeoff_figure"]


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
        :class:`~hierret.structure.units.Query` stands for its text.
    k : int, default 10
        Ranking length of each search.
    memo : Measurements, optional
        Keeps the result; a later call on this machine with the same code,
        encoder identity, texts, queries, index and ``k`` reuses it instead of
        timing again (see :mod:`hierret.study.measured`).

    Returns
    -------
    EncoderCost

    Raises
    ------
    ValueError
        ``texts`` is empty.
    hierret.search.vectors.index.IdentityMismatchError
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


def tradeoff_figure(
    per_second: pd.Series,
    tables: Mapping[tuple[str, str], pd.DataFrame],
    *,
    ylabel: str = "",
    xlabel: str = "passages per second (log scale, this machine)",
) -> Figure:
    """Quality against throughput per (corpus, ranker): corpora in rows, rankers in columns.

    Each panel draws every arm's estimate with its interval at its speed, one
    colour per arm, named once in a legend above the panels
    (:func:`hierret.publish.charts.cost_tradeoff_figure`).

    Parameters
    ----------
    per_second : Series
        Throughput indexed by (corpus, arm), e.g. the ``passages/s`` of
        :meth:`EncoderCost.row` per corpus and encoder.
    tables : mapping of (corpus, ranker) to DataFrame
        Each panel's table: one row per arm with ``mean``, ``low`` and ``high``
        (e.g. a :meth:`hierret.study.experiment.Result.table`).
    ylabel, xlabel : str
        Axis labels, once for the whole figure.
    """
    return charts.cost_tradeoff_figure(per_second, tables, ylabel=ylabel, xlabel=xlabel)


@dataclass(frozen=True)
class Costs:
    """What each encoder costs on each testbed, measured uncached: a table and a figure.

    Made by :meth:`measure`; :meth:`table` is the cost table as a page shows
    it, :meth:`plot` sets each encoder's quality against its throughput.

    Attributes
    ----------
    frame : pandas.DataFrame
        Indexed by (corpus, encoder): :meth:`EncoderCost.row`'s columns
        (``passages/s``, ``build s (est.)``, ``latency ms``, ``latency p90 ms``).
    memo : Measurements
        Where the measurements were kept (a later run on this machine reuses them).
    """

    frame: pd.DataFrame
    memo: Measurements

    @classmethod
    def measure(
        cls,
        beds: Mapping[str, Testbed],
        encoders: Mapping[str, CachedEncoder],
        texts: int,
        queries: int,
        *,
        skip: Iterable[tuple[str, str]] = (),
        memo: Measurements | None = None,
    ) -> Costs:
        """:func:`measure_cost` of every encoder on every testbed, the encoder itself timed.

        Parameters
        ----------
        beds : mapping of str to Testbed
            The corpora, by name (the table's first index level).
        encoders : mapping of str to CachedEncoder
            The encoders, by name; each is timed without its cache
            (``encoder.encoder``) over its dense index at the testbed's level.
        texts : int
            The testbed's first ``texts`` units are embedded for the throughput.
        queries : int
            Its first ``queries`` questions are timed one at a time for the latency.
        skip : iterable of (str, str)
            (corpus, encoder) pairs left out.
        memo : Measurements, optional
            Keeps and reuses the measurements (default: a new
            :class:`~hierret.study.measured.Measurements` at its default folder).

        Examples
        --------
        >>> import tempfile
        >>> from hierret.encoders.cache import VectorCache, cached_encoder
        >>> from hierret.study.testbed import Testbed
        >>> tmp = tempfile.TemporaryDirectory()
        >>> bed = Testbed.load("python-reference", max_queries=2, max_docs=3)
        >>> enc = cached_encoder("hash", VectorCache(tmp.name), dimension=8)
        >>> costs = Costs.measure({"pyref": bed}, {"hash": enc}, 4, 2, memo=Measurements(tmp.name))
        >>> costs.frame.index.tolist(), list(costs.frame.columns)[:1]
        ([('pyref', 'hash')], ['passages/s'])
        >>> tmp.cleanup()
        """
        memo = memo if memo is not None else Measurements()
        skipped = set(skip)
        rows = {
            (c, e): measure_cost(
                enc.encoder,
                bed.searcher(enc).dense_index(bed.level, "first-window"),
                bed.texts()[:texts],
                bed.queries[:queries],
                memo=memo,
            ).row(len(bed.units()))
            for c, bed in beds.items()
            for e, enc in encoders.items()
            if (c, e) not in skipped
        }
        return cls(pd.DataFrame(rows).T, memo)

    def table(self) -> Styler:
        """The cost table for the page, captioned with where its measurements came from."""
        return styled(
            self.frame,
            f"Cost on this machine ({self.memo.summary()}; HIERRET_REMEASURE=1 "
            "measures again): throughput, index build, query latency",
        )

    def plot(self, tables: Mapping[tuple[str, str], pd.DataFrame], ylabel: str = "") -> Figure:
        """Each encoder's quality against its throughput (:func:`tradeoff_figure`).

        Parameters
        ----------
        tables : mapping of (corpus, ranker) to DataFrame
            Each panel's table: one row per encoder with ``mean``, ``low`` and ``high``.
        ylabel : str
            The quality axis's label.
        """
        return tradeoff_figure(self.frame["passages/s"], tables, ylabel=ylabel)


def late_chunking_cost(
    encoder: Encoder,
    hierarchy: Hierarchy,
    max_passages: int = 64,
    overlap: int = 64,
    windows: Sequence[int | None] = (None, 512),
    *,
    memo: Measurements | None = None,
) -> pd.DataFrame:
    """Measured time per passage: plain passage vectors, and late chunking per window.

    The first documents of ``hierarchy`` holding at least ``max_passages``
    passages are embedded afresh (no cache): each passage as one text by the
    encoder (unwrapped from a ``CachedEncoder``), then late-chunked with each
    window length (``None``: the encoder's), after one untimed passage (a
    model loaded on first use, or a first call's set-up, is not counted).
    A window beyond the one the
    model was trained on costs what it would cost; its vectors are not the
    point. With ``memo``, a measurement made before on this machine with the
    same code, encoder identity, passages and settings is reused
    (:mod:`hierret.study.measured`).

    Returns
    -------
    DataFrame
        One row per method (index ``method``: ``plain``, then ``late-<window>``):
        ``passages``, ``windows``
        (forward windows), ``seconds``, ``ms_per_passage``.
    """
    if memo is not None:
        units = text_units(hierarchy, "passages")
        inputs = {
            "encoder": encoder.identity.key(),
            "passages": text_digest(hierarchy.text(u) for u in units),
            "documents": text_digest(d.id for d in hierarchy.corpus),
            "max_passages": max_passages,
            "overlap": overlap,
            "windows": list(windows),
        }
        return memo.recall_frame(
            "late-chunking-cost",
            inputs,
            lambda: late_chunking_cost(encoder, hierarchy, max_passages, overlap, windows),
        )
    docs, n = [], 0
    for doc in hierarchy.corpus:
        docs.append(doc)
        n += sum(p.doc_id == doc.id for p in hierarchy.passages)
        if n >= max_passages:
            break
    keep = {d.id for d in docs}
    sub = Hierarchy(
        Corpus(hierarchy.corpus.name, docs),
        {d: hierarchy.sections[d] for d in keep},
        [p for p in hierarchy.passages if p.doc_id in keep],
        dict(hierarchy.params),
    )
    plain = getattr(encoder, "encoder", encoder)
    texts = [sub.text(p) for p in text_units(sub, "passages")]
    plain.encode_passages(texts[:1])  # untimed warm-up: a lazy model loads here
    start = time.perf_counter()
    plain.encode_passages(texts)
    rows = [
        {
            "method": "plain",
            "passages": len(texts),
            "windows": len(texts),
            "seconds": time.perf_counter() - start,
        }
    ]
    for w in windows:
        late = LateChunker(encoder, overlap, w, use_cache=False)
        start = time.perf_counter()
        late.passage_vectors(sub)
        rows.append(
            {
                "method": f"late-{late.window}",
                "passages": len(texts),
                "windows": late.windows_encoded,
                "seconds": time.perf_counter() - start,
            }
        )
    frame = pd.DataFrame(rows).set_index("method")
    return frame.assign(ms_per_passage=1000 * frame["seconds"] / frame["passages"])
