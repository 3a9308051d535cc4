"""FROZEN reference copy of the search code before the one front door (issue 9).

Used ONLY by ``tests/core/test_search_frontdoor.py``, which checks that the new
:class:`hierret.search.searcher.Searcher` gives exactly (same ids, same scores, same
order) what these old implementations gave: the old flat ``Searcher``
(first-window units, ``depth`` = ranking length, ``top_n`` = RRF legs), the
old ``HierarchicalIndex`` (rawspan/centroid levels and dense fused search,
``k`` = ranking length, ``depth`` = candidates per leg) and the old
``run_profile`` (``Profile.depth`` = first-stage candidates). The code is
copied from ``src/hierret/search.py``, ``src/hierret/hierarchical.py`` and
``src/hierret/search/rerank/profiles.py`` (since moved) at commit 9610a78, with only these
changes: ``run_profile`` takes the old profile's fields as arguments (the old
``Profile`` class is gone) and ``HierarchicalIndex`` keeps no ``Hit``
decoration. Do not edit it to follow the package: it is the reference the
package is held to.
"""

# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

import logging
import numbers
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from hierret._validate import check_count, check_query_texts, empty_units_message, has_text
from hierret.encoders.base import long_queries_message
from hierret.encoders import Encoder, truncation_report
from hierret.search.lifting import lift
from hierret.search.runs import Run, tie_keys
from hierret.structure.hierarchy import Hierarchy
from hierret.search.vectors.index import VectorIndex
from hierret.search.vectors.levels import PoolingReport, empty_units, unit_vectors
from hierret.search.rankers.analyzer import get_analyzer
from hierret.search.rankers.bm25 import BM25
from hierret.search.rankers.fusion import minmax_fuse, rrf
from hierret.search.rerank.base import Reranker, rerank
from hierret.search.rerank.selection import Selection
from hierret.structure.units import Level, Query, Unit

log = logging.getLogger(__name__)

Ranker = Literal["dense", "bm25", "hybrid"]
RANKERS = ("dense", "bm25", "hybrid")
SEARCH_LEVELS = ("passages", "sections", "documents", "fused")
LEVELS = ("passages", "sections", "documents")
STRATEGIES = ("rawspan", "centroid")
Strategy = str
SearchLevel = str


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
            self._dense[level] = VectorIndex(
                [u.id for u in units], vectors, self.encoder.identity.describe()
            )
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
            # The one change to the frozen code (issue 28): BM25 gives the fusion only
            # its matches; score-0 units had entered it in tie order.
            lexical = {q: [(u, s) for u, s in r if s > 0] for q, r in lexical.items()}
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
            rankings = [
                [
                    (unit_ids[i], s)
                    for i, s in bm25.search(analyze(t), depth + n_empty, tie_keys(unit_ids))
                    if keep[i]
                ][:depth]
                for t in texts
            ]
        self._timed(f"{level}/{ranker}", len(ids), time.perf_counter() - start)
        return dict(zip(ids, rankings, strict=True))

    def search(
        self, text: str, level: Level = "passages", ranker: Ranker = "dense", k: int = 10
    ) -> Ranking:
        """Top ``k`` units of ``level`` for one typed question.

        ``k`` is an int >= 1; errors and warnings are those of :meth:`run`.

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.structure.hierarchy import build_hierarchy
        >>> from hierret.structure.units import Corpus, Document
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


class HierarchicalIndex:
    """One vector index per level of a hierarchy, searched alone or fused.

    Indexes are built on first use (:meth:`build` builds all three); the time
    each took is in ``build_seconds`` and what pooling it needed in ``reports``.
    Units with no text (an empty document and its section) are left out of
    every level, never embedded nor ranked; one warning, logged when the index
    is made, counts them (:func:`hierret.search.vectors.levels.empty_units`).

    Parameters
    ----------
    hierarchy : Hierarchy
    encoder : Encoder
        Embeds units and queries; wrap it in a :class:`~hierret.encoders.cache.CachedEncoder`
        so that every text is embedded once across runs.
    strategy : {"rawspan", "centroid"}, default "rawspan"
        How section and document vectors are made (:mod:`hierret.search.vectors.levels`);
        ``centroid`` averages the passage level's own vectors.
    pool_passages : bool, default False
        Window-pool passages longer than the encoder's window instead of
        letting the model cut them (``unit_vectors(..., "passages", "rawspan")``);
        by default the passage level equals :class:`~hierret.search.searcher.Searcher`'s.
    """

    def __init__(
        self,
        hierarchy: Hierarchy,
        encoder: Encoder,
        strategy: Strategy = "rawspan",
        pool_passages: bool = False,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}: use one of {STRATEGIES}")
        self.hierarchy = hierarchy
        self.encoder = encoder
        self.strategy: Strategy = strategy
        self.pool_passages = pool_passages
        self.reports: dict[Level, PoolingReport] = {}
        self.build_seconds: dict[Level, float] = {}
        self._indexes: dict[Level, VectorIndex] = {}
        self._passage_vectors: NDArray[np.float32] | None = None
        self._units = {lvl: {u.id: u for u in hierarchy.units(lvl)} for lvl in LEVELS}
        self._to_section = hierarchy.parents("passages", "sections")
        self._titles = {s.id: s.title for ss in hierarchy.sections.values() for s in ss}
        notice = empty_units_message(empty_units(hierarchy))
        if notice:
            log.warning("%s", notice)

    @property
    def identity(self) -> str:
        """The encoder identity every level index carries."""
        return self.encoder.identity.describe()

    def index(self, level: Level) -> VectorIndex:
        """The index of ``level`` (``"passages"``, ``"sections"`` or ``"documents"``)."""
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}: use one of {LEVELS}")
        if level not in self._indexes:
            start = time.perf_counter()
            if level == "passages":
                passage_strategy = "rawspan" if self.pool_passages else "first-window"
                ids, vectors, report = unit_vectors(
                    self.hierarchy, self.encoder, "passages", passage_strategy
                )
                self._passage_vectors = vectors
            else:
                passages = None
                if self.strategy == "centroid":
                    passages = self._passage_vectors
                    if passages is None:
                        self.index("passages")
                        passages = self._passage_vectors
                ids, vectors, report = unit_vectors(
                    self.hierarchy, self.encoder, level, self.strategy, passages
                )
            self._indexes[level] = VectorIndex(ids, vectors, self.identity)
            self.reports[level] = report
            self.build_seconds[level] = time.perf_counter() - start
        return self._indexes[level]

    def build(self):
        """Build the three level indexes (passages first); returns ``self``."""
        for level in LEVELS:
            self.index(level)
        return self

    def run(
        self,
        queries: Sequence[Query],
        level: SearchLevel = "fused",
        k: int = 10,
        section_weight: float = 0.65,
        depth: int = 50,
        query_encoder: Encoder | None = None,
    ) -> Run:
        """Rank units of ``level`` for every query, for evaluation.

        Parameters
        ----------
        queries : sequence of Query
            Their ``text`` is searched.
        level : {"passages", "sections", "documents", "fused"}, default "fused"
            A level's units, or sections by fused passage + section scores.
        k : int, default 10
            Units per ranking, an int >= 1 (fewer when the level holds fewer).
        section_weight : float, default 0.65
            Fused only: weight of the section leg in [0, 1] (0: passages lifted
            to sections alone; 1: sections alone).
        depth : int, default 50
            Fused only (checked at every level): the candidate depth, an int
            >= 1, how many passages and how many sections each leg retrieves
            before lifting and fusion. Each leg's min-max scale is set by its
            own pool, so fused scores depend on it; the fused ranking holds at
            most the union of the two pools.
        query_encoder : Encoder, optional
            Encodes the queries (default: the index's encoder). Another
            encoder raises :class:`~hierret.search.vectors.index.IdentityMismatchError`.

        Returns
        -------
        Run
            Query id to its top ``k`` ``(unit_id, score)``, ties by unit id.

        Raises
        ------
        TypeError
            ``k`` or ``depth`` is not an int (``2.5``, ``"3"``, ``True``,
            ``None``), or a query text is not a str.
        ValueError
            Unknown level; ``k`` or ``depth`` < 1; ``section_weight`` outside
            [0, 1]; a query with no text (empty, whitespace or control
            characters only). All checked before any query is embedded.

        Notes
        -----
        Queries longer than the encoder's token window are embedded as the
        encoder embeds any text (most models cut the rest); one warning per
        call, logged, says how many and by how much.
        """
        if level not in SEARCH_LEVELS:
            raise ValueError(f"unknown level {level!r}: use one of {SEARCH_LEVELS}")
        k = check_count(k, "k")
        depth = check_count(depth, "depth")
        weight: object = section_weight
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
            raise TypeError(
                f"section_weight must be a number in [0, 1], got {weight!r} "
                f"({type(weight).__name__})"
            )
        if not 0.0 <= section_weight <= 1.0:
            raise ValueError(f"section_weight ({section_weight}) must lie in [0, 1]")
        encoder = query_encoder or self.encoder
        ids = [q.id for q in queries]
        texts = check_query_texts([q.text for q in queries], ids)
        notice = long_queries_message(truncation_report(encoder, texts, "query"))
        if notice:
            log.warning("%s", notice)
        vectors = encoder.encode_queries(texts)
        ident = encoder.identity.describe()
        if level != "fused":
            return dict(zip(ids, self.index(level).search(vectors, k, ident), strict=True))
        passages = dict(zip(ids, self.index("passages").search(vectors, depth, ident), strict=True))
        sections = self.index("sections").search(vectors, depth, ident)
        lifted = lift(passages, self._to_section)
        return {
            q: minmax_fuse(lifted[q], s, section_weight)[:k]
            for q, s in zip(ids, sections, strict=True)
        }


def run_profile(searcher, queries, level, ranker, depth, reranker=None, selection=Selection()):
    """The old ``run_profile``: first stage of ``depth``, reranker, selection; returns
    ``(final, first_stage, reranked)``."""
    first = searcher.run(queries, level, ranker, depth)
    reranked: Run = first
    if reranker is not None:
        texts = {u.id: searcher.hierarchy.text(u) for u in searcher.units(level)}
        reranked = {}
        for q in queries:
            reranked[q.id] = rerank(reranker, q.text, first[q.id], texts)
    final = {qid: selection.select(ranking) for qid, ranking in reranked.items()}
    return final, first, reranked
