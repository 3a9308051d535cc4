"""Search one level of a hierarchy with a dense, BM25 or hybrid ranker.

A :class:`Searcher` holds one hierarchy and one encoder, builds each level's
index when first asked (one FAISS index per level, carrying the encoder's
identity; one BM25 index per level and analyzer) and answers queries with a
:data:`~hierret.evaluation.Run`. The indexing unit is a parameter (``level``),
so comparing passages with whole sections or documents changes nothing else.

Bad input is refused before anything is embedded: an empty query (nothing but
whitespace or control characters), a depth that is not an int >= 1. Units with
no text are never embedded nor ranked (one warning, logged when the searcher
is made, counts them); BM25 still counts them in its corpus statistics, so
the other units score as over the whole corpus. Queries longer than the
encoder's window are embedded as the encoder embeds any text, with one logged
warning per run saying how many and by how much.

Examples
--------
>>> from hierret.encoders import load_encoder
>>> from hierret.hierarchy import build_hierarchy
>>> from hierret.units import Corpus, Document
>>> docs = [Document("a", "A", "Cats purr. Cats sleep."), Document("b", "B", "Dogs bark loudly."),
...         Document("c", "C", "Birds sing at dawn.")]
>>> s = Searcher(build_hierarchy(Corpus("toy", docs)), load_encoder("hash", dimension=16))
>>> s.search("dogs barking", level="passages", ranker="bm25", k=1)
[('b#p0', 1.06979...)]
>>> s.search(" ", level="passages", ranker="hybrid")
Traceback (most recent call last):
...
ValueError: query is empty: give a question with at least one word
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from hierret._validate import (
    check_count,
    check_query_texts,
    empty_units_message,
    has_text,
    long_queries_message,
)
from hierret.encoders import Encoder, truncation_report
from hierret.hierarchy import Hierarchy
from hierret.index import VectorIndex
from hierret.levels import empty_units
from hierret.rankers.analyzer import get_analyzer
from hierret.rankers.bm25 import BM25
from hierret.rankers.fusion import rrf
from hierret.runs import Ranking, Run
from hierret.units import Level, Query, Unit

__all__ = ["RANKERS", "Ranker", "Searcher"]

log = logging.getLogger(__name__)

Ranker = Literal["dense", "bm25", "hybrid"]
RANKERS: tuple[Ranker, ...] = ("dense", "bm25", "hybrid")


@dataclass
class Searcher:
    """Dense, BM25 and hybrid search over any level of one hierarchy.

    Parameters
    ----------
    hierarchy : Hierarchy
        Documents, sections and passages.
    encoder : Encoder
        Encodes units and queries (wrap it in a ``CachedEncoder`` to embed each
        text once across runs).
    analyzer : str, default "english"
        BM25 analyzer: ``"english"`` (lower-case, stop words, stemming) or
        ``"whitespace"``.
    rrf_k, top_n : int
        Reciprocal rank fusion constant (an int >= 0) and the depth of each leg
        it fuses (an int >= 1).
    """

    hierarchy: Hierarchy
    encoder: Encoder
    analyzer: str = "english"
    rrf_k: int = 60
    top_n: int = 100
    latency: dict[str, list[float]] = field(default_factory=dict, repr=False)
    _dense: dict[str, VectorIndex] = field(default_factory=dict, repr=False)
    _bm25: dict[tuple[str, str], BM25] = field(default_factory=dict, repr=False)
    _units: dict[str, list[Unit]] = field(default_factory=dict, repr=False)
    _has_text: dict[str, list[bool]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        """Check the fusion settings; log one warning counting units without text."""
        self._check_fusion()
        notice = empty_units_message(empty_units(self.hierarchy))
        if notice:
            log.warning("%s", notice)

    def _check_fusion(self) -> None:
        check_count(self.rrf_k, "rrf_k", minimum=0)
        check_count(self.top_n, "top_n")

    def units(self, level: Level) -> list[Unit]:
        """The units of ``level`` (cached), those without text included."""
        if level not in self._units:
            self._units[level] = self.hierarchy.units(level)
        return self._units[level]

    def _with_text(self, level: Level) -> list[bool]:
        """For each unit of ``level``, whether it holds text (only those are ranked)."""
        if level not in self._has_text:
            self._has_text[level] = [has_text(t) for t in self.texts(level)]
        return self._has_text[level]

    def texts(self, level: Level) -> list[str]:
        """The text of every unit of ``level``."""
        return [self.hierarchy.text(u) for u in self.units(level)]

    def dense_index(self, level: Level) -> VectorIndex:
        """The FAISS index of ``level``'s units with text, built on first use."""
        if level not in self._dense:
            keep = self._with_text(level)
            units = [u for u, k in zip(self.units(level), keep, strict=True) if k]
            vectors = self.encoder.encode_passages([self.hierarchy.text(u) for u in units])
            self._dense[level] = VectorIndex([u.id for u in units], vectors,
                                             self.encoder.identity.describe())
        return self._dense[level]

    def bm25_index(self, level: Level, analyzer: str | None = None) -> BM25:
        """The BM25 index of ``level`` with ``analyzer`` (default: the searcher's).

        It holds every unit, those without text included (as empty documents),
        so that its statistics are those of the whole level; :meth:`run` never
        ranks the units without text.
        """
        name = analyzer or self.analyzer
        if (level, name) not in self._bm25:
            self._bm25[(level, name)] = BM25.from_texts(self.texts(level), name)
        return self._bm25[(level, name)]

    def _timed(self, key: str, n: int, seconds: float) -> None:
        self.latency.setdefault(key, []).extend([seconds / max(n, 1)] * n)

    def run(
        self,
        queries: Sequence[Query],
        level: Level = "passages",
        ranker: Ranker = "dense",
        depth: int = 100,
        analyzer: str | None = None,
    ) -> Run:
        """Rank the units of ``level`` for every query.

        Parameters
        ----------
        queries : sequence of Query
            Questions (their ``text`` is what is searched).
        level : {"passages", "sections", "documents"}
            The indexing unit.
        ranker : {"dense", "bm25", "hybrid"}
            Cosine of unit vectors; BM25; or reciprocal rank fusion of the
            dense and BM25 top ``top_n``.
        depth : int, default 100
            How many units each ranking keeps, an int >= 1.
        analyzer : str, optional
            BM25 analyzer for this run.

        Returns
        -------
        Run
            Query id to ranking, ties broken by unit id.

        Raises
        ------
        TypeError
            ``depth`` (or ``rrf_k``, ``top_n``) is not an int, or a query text
            is not a str.
        ValueError
            Unknown ranker; ``depth`` < 1; a query with no text (empty,
            whitespace or control characters only). All checked before any
            query is embedded.

        Notes
        -----
        Dense (and hybrid) runs log one warning when queries exceed the
        encoder's token window, saying how many and by how much; their vectors
        are what the encoder returns.
        """
        if ranker not in RANKERS:
            raise ValueError(f"unknown ranker {ranker!r}: use one of {RANKERS}")
        depth = check_count(depth, "depth")
        self._check_fusion()
        ids = [q.id for q in queries]
        texts = check_query_texts([q.text for q in queries], ids)
        if ranker == "hybrid":
            dense = self.run(queries, level, "dense", max(depth, self.top_n), analyzer)
            lexical = self.run(queries, level, "bm25", max(depth, self.top_n), analyzer)
            start = time.perf_counter()
            fused = {q: rrf([dense[q], lexical[q]], self.rrf_k, self.top_n)[:depth] for q in ids}
            self._timed(f"{level}/hybrid-fusion", len(ids), time.perf_counter() - start)
            return fused
        start = time.perf_counter()
        if ranker == "dense":
            index = self.dense_index(level)
            notice = long_queries_message(truncation_report(self.encoder, texts, "query"))
            if notice:
                log.warning("%s", notice)
            vectors = self.encoder.encode_queries(texts)
            start = time.perf_counter()
            rankings = index.search(vectors, depth, self.encoder.identity.describe())
        else:
            bm25 = self.bm25_index(level, analyzer)
            analyze = get_analyzer(analyzer or self.analyzer)
            start = time.perf_counter()
            unit_ids = [u.id for u in self.units(level)]
            keep = self._with_text(level)
            n_empty = keep.count(False)  # ask for as many more as may be left out
            rankings = [[(unit_ids[i], s) for i, s in bm25.search(analyze(t), depth + n_empty)
                         if keep[i]][:depth] for t in texts]
        self._timed(f"{level}/{ranker}", len(ids), time.perf_counter() - start)
        return dict(zip(ids, rankings, strict=True))

    def search(self, text: str, level: Level = "passages", ranker: Ranker = "dense",
               k: int = 10) -> Ranking:
        """Top ``k`` units of ``level`` for one typed question.

        ``k`` is an int >= 1; errors and warnings are those of :meth:`run`.

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.hierarchy import build_hierarchy
        >>> from hierret.units import Corpus, Document
        >>> s = Searcher(build_hierarchy(Corpus("c", [Document("d", "D", "Cats.")])),
        ...              HashEncoder(dimension=8))
        >>> s.search("cats", k="3")
        Traceback (most recent call last):
        ...
        TypeError: k must be an int >= 1, got '3' (str)
        """
        k = check_count(k, "k")
        check_query_texts([text])
        return self.run([Query("q", text, ())], level, ranker, k)["q"]

    def mean_latency_ms(self) -> dict[str, float]:
        """Mean search time per query (ms) by ``level/ranker``, query encoding excluded."""
        return {k: 1000.0 * float(np.mean(v)) for k, v in sorted(self.latency.items())}
