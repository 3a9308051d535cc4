"""Search one level of a hierarchy with a dense, BM25 or hybrid ranker.

A :class:`Searcher` holds one hierarchy and one encoder, builds each level's
index when first asked (one FAISS index per level, carrying the encoder's
identity; one BM25 index per level and analyzer) and answers queries with a
:data:`~hierret.evaluation.Run`. The indexing unit is a parameter (``level``),
so comparing passages with whole sections or documents changes nothing else.

Examples
--------
>>> from hierret.encoders import load_encoder
>>> from hierret.hierarchy import build_hierarchy
>>> from hierret.units import Corpus, Document
>>> docs = [Document("a", "A", "Cats purr. Cats sleep."), Document("b", "B", "Dogs bark loudly."),
...         Document("c", "C", "Birds sing at dawn.")]
>>> s = Searcher(build_hierarchy(Corpus("toy", docs)), load_encoder("hash", dimension=16))
>>> s.search("dogs barking", level="chunks", ranker="bm25", k=1)
[('b#p0', 1.06979...)]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from hierret.encoders import Encoder
from hierret.evaluation.runs import Ranking, Run
from hierret.hierarchy import Hierarchy
from hierret.index import VectorIndex
from hierret.rankers.analyzer import get_analyzer
from hierret.rankers.bm25 import BM25
from hierret.rankers.fusion import rrf
from hierret.units import Level, Query, Unit

__all__ = ["RANKERS", "Ranker", "Searcher"]

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
        Reciprocal rank fusion constant and the depth of each leg it fuses.
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

    def units(self, level: Level) -> list[Unit]:
        """The units of ``level`` (cached)."""
        if level not in self._units:
            self._units[level] = self.hierarchy.units(level)
        return self._units[level]

    def texts(self, level: Level) -> list[str]:
        """The text of every unit of ``level``."""
        return [self.hierarchy.text(u) for u in self.units(level)]

    def dense_index(self, level: Level) -> VectorIndex:
        """The FAISS index of ``level``, built on first use."""
        if level not in self._dense:
            vectors = self.encoder.encode_passages(self.texts(level))
            self._dense[level] = VectorIndex([u.id for u in self.units(level)], vectors,
                                             self.encoder.identity.describe())
        return self._dense[level]

    def bm25_index(self, level: Level, analyzer: str | None = None) -> BM25:
        """The BM25 index of ``level`` with ``analyzer`` (default: the searcher's)."""
        name = analyzer or self.analyzer
        if (level, name) not in self._bm25:
            self._bm25[(level, name)] = BM25.from_texts(self.texts(level), name)
        return self._bm25[(level, name)]

    def _timed(self, key: str, n: int, seconds: float) -> None:
        self.latency.setdefault(key, []).extend([seconds / max(n, 1)] * n)

    def run(
        self,
        queries: Sequence[Query],
        level: Level = "chunks",
        ranker: Ranker = "dense",
        depth: int = 100,
        analyzer: str | None = None,
    ) -> Run:
        """Rank the units of ``level`` for every query.

        Parameters
        ----------
        queries : sequence of Query
            Questions (their ``text`` is what is searched).
        level : {"chunks", "sections", "documents"}
            The indexing unit.
        ranker : {"dense", "bm25", "hybrid"}
            Cosine of unit vectors; BM25; or reciprocal rank fusion of the
            dense and BM25 top ``top_n``.
        depth : int, default 100
            How many units each ranking keeps.
        analyzer : str, optional
            BM25 analyzer for this run.

        Returns
        -------
        Run
            Query id to ranking, ties broken by unit id.
        """
        if ranker not in RANKERS:
            raise ValueError(f"unknown ranker {ranker!r}: use one of {RANKERS}")
        ids = [q.id for q in queries]
        texts = [q.text for q in queries]
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
            vectors = self.encoder.encode_queries(texts)
            start = time.perf_counter()
            rankings = index.search(vectors, depth, self.encoder.identity.describe())
        else:
            bm25 = self.bm25_index(level, analyzer)
            analyze = get_analyzer(analyzer or self.analyzer)
            start = time.perf_counter()
            unit_ids = [u.id for u in self.units(level)]
            rankings = [[(unit_ids[i], s) for i, s in bm25.search(analyze(t), depth)]
                        for t in texts]
        self._timed(f"{level}/{ranker}", len(ids), time.perf_counter() - start)
        return dict(zip(ids, rankings, strict=True))

    def search(self, text: str, level: Level = "chunks", ranker: Ranker = "dense",
               k: int = 10) -> Ranking:
        """Top ``k`` units of ``level`` for one typed question."""
        return self.run([Query("q", text, ())], level, ranker, k)["q"]

    def mean_latency_ms(self) -> dict[str, float]:
        """Mean search time per query (ms) by ``level/ranker``, query encoding excluded."""
        return {k: 1000.0 * float(np.mean(v)) for k, v in sorted(self.latency.items())}
