"""One front door: search any level of a hierarchy with any first-stage ranker.

A :class:`Searcher` holds one hierarchy and one encoder and runs a
:class:`~hierret.search.profile.Profile` over it, for one typed question
(:meth:`Searcher.search`) or for a whole set of queries (:meth:`Searcher.run`),
through the same code:

1. **First stage** at the profile's ``level``:

   ``"passages"``, ``"sections"``, ``"documents"``
       The profile's ``ranker`` over that level's units: ``"dense"`` (cosine
       with unit vectors made as ``vectors`` says, :mod:`hierret.search.vectors.levels`;
       passages are always embedded as the encoder embeds them), ``"bm25"``,
       or ``"hybrid"`` (reciprocal rank fusion of the dense and BM25 top
       ``pool``).
   ``"fused"``
       The passage and the section rankings, each by the profile's ranker to
       ``pool`` candidates; the passages are lifted to sections (each
       section scored by its best passage, a passage that straddles a
       heading counting for every section it overlaps:
       :meth:`~hierret.structure.hierarchy.Hierarchy.overlapped_sections`,
       :func:`~hierret.search.lifting.lift_overlapping`);
       each leg is min-max normalised within the query's own pool and the two
       are blended with ``section_weight`` the weight of the section leg
       (:func:`~hierret.search.rankers.fusion.minmax_fuse`). A section missing from
       one leg's pool scores 0 on that leg. Fused search ranks sections.

   A ranker's non-matches are never candidates: BM25 takes part in a fusion
   (the hybrid's, or either leg of fused search) only with the units it
   scores above 0, those sharing a term with the query. A query BM25 matches
   nowhere (stop words, punctuation) gets the dense ranking itself from the
   hybrid (reciprocal rank fusion of one ranking keeps its order), and
   nothing from fused BM25 search. A pure ``"bm25"`` ranking at one level
   still fills its ``k`` with score-0 units, in the tie order, after its
   matches (its scores say so).

   Hybrid and fused rankings hold at most the union of each leg's top
   ``pool``: a ``k`` past that logs one warning per run naming the cap and
   the fix (a larger ``pool``), as does a ``k`` past a reranker's
   ``candidates``.

2. **Reranker** (when the profile names one): re-scores the first
   ``candidates`` units of the first stage.
3. **Selection**: the profile's :class:`~hierret.search.rerank.Selection`
   (``Selection()`` keeps the ranking as it is), then the first ``k``.

Indexes are built on first use and kept: one FAISS index per level and vector
strategy (carrying the encoder's identity; the time each took is in
``build_seconds``, what pooling it needed in ``reports``), one BM25 index per
level and analyzer. Every text goes through the encoder given (wrap it in a
:class:`~hierret.encoders.cache.CachedEncoder` so nothing is embedded twice across
runs).

Bad input is refused before anything is embedded: an empty query (nothing but
whitespace or control characters), a ``k`` that is not an int >= 1. Units with
no text are never embedded nor ranked (one warning, logged when the searcher
is made, counts them); BM25 still counts them in its corpus statistics, so
the other units score as over the whole corpus. Queries longer than the
encoder's window are embedded as the encoder embeds any text, with one logged
warning per run saying how many and by how much.

Examples
--------
>>> from hierret.encoders import load_encoder
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.search.profile import Profile
>>> from hierret.structure.units import Corpus, Document
>>> docs = [Document("a", "A", "Cats purr. Cats sleep."), Document("b", "B", "Dogs bark loudly."),
...         Document("c", "C", "Birds sing at dawn.")]
>>> s = Searcher(build_hierarchy(Corpus("toy", docs)), load_encoder("hash", dimension=16))
>>> s.run([Query("q", "dogs barking", ())], Profile(ranker="bm25"), k=1)
{'q': [('b#p0', 1.06979...)]}
>>> s.search("dogs barking", Profile(ranker="bm25"), k=1)[0].unit_id
'b#p0'
>>> s.search(" ", Profile(ranker="hybrid"))
Traceback (most recent call last):
...
ValueError: query is empty: give a question with at least one word
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._validate import check_count, empty_units_message, has_text
from hierret.encoders.base import Encoder, check_queries
from hierret.search.hits import Hit, Hits
from hierret.search.lifting import lift_overlapping
from hierret.search.profile import DEFAULT, Profile
from hierret.search.rankers.analyzer import get_analyzer
from hierret.search.rankers.bm25 import BM25, IDFS
from hierret.search.rankers.fusion import minmax_fuse, rrf
from hierret.search.rerank.base import Reranker, RerankerIdentity, charged_seconds, rerank
from hierret.search.rerank.dense import EncoderReranker
from hierret.search.runs import Ranking, Run, tie_keys
from hierret.search.vectors.index import VectorIndex
from hierret.search.vectors.levels import (
    PoolingReport,
    Strategy,
    empty_units,
    text_units,
    unit_vectors,
)
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Level, Query, Unit

__all__ = ["LatencySummary", "ProfileRun", "Searcher", "latency_summary"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LatencySummary:
    """Per-query time: count, mean and 90th percentile (ms), total (s).

    Examples
    --------
    >>> latency_summary([0.010, 0.020, 0.030])
    LatencySummary(n=3, mean_ms=20.0, p90_ms=28.0, total_s=0.06)
    """

    n: int
    mean_ms: float
    p90_ms: float
    total_s: float


def latency_summary(seconds: Iterable[float] | Mapping[str, float]) -> LatencySummary:
    """Mean and 90th percentile of per-query times (linear interpolation, NumPy's default).

    Parameters
    ----------
    seconds : iterable of float, or mapping of query id to float
        Seconds per query.

    Returns
    -------
    LatencySummary
        All zeros for no queries.
    """
    values = np.fromiter(
        (seconds.values() if isinstance(seconds, Mapping) else seconds), dtype=np.float64
    )
    if values.size == 0:
        return LatencySummary(0, 0.0, 0.0, 0.0)
    return LatencySummary(
        n=int(values.size),
        mean_ms=round(1000.0 * float(values.mean()), 6),
        p90_ms=round(1000.0 * float(np.percentile(values, 90)), 6),
        total_s=round(float(values.sum()), 9),
    )


@dataclass
class ProfileRun:
    """The stages of one profile's run (:meth:`~hierret.search.searcher.Searcher.trace`).

    Attributes
    ----------
    profile : Profile
        Exactly the profile that was run.
    run : Run
        The final run: first stage, reranked, selected.
    first_stage : Run
        The first stage's units with its scores: the ``candidates`` the
        reranker reads, or the top ``k`` without a reranker.
    reranked : Run
        The reranker's order and scores of all candidates, before selection
        (the first stage itself when the profile has no reranker).
    rerank_seconds : dict[str, float]
        Reranking time per query (scoring and re-ordering; empty without a
        reranker). Whether candidate representations were cached before
        (by :meth:`Reranker.prepare`, earlier queries or a ``CachedEncoder``)
        changes it.
    reranker : RerankerIdentity or None
    """

    profile: Profile
    run: Run
    first_stage: Run
    reranked: Run
    rerank_seconds: dict[str, float]
    reranker: RerankerIdentity | None

    def latency(self) -> LatencySummary:
        """Added reranking latency per query (:func:`latency_summary`)."""
        return latency_summary(self.rerank_seconds)

    def record(self) -> dict[str, Any]:
        """JSON-ready summary: the profile as given, the reranker, latency, candidates kept."""
        kept = [len(r) for r in self.run.values()]
        return {
            "profile": self.profile.as_dict(),
            "reranker": asdict(self.reranker) if self.reranker is not None else None,
            "rerank_latency": asdict(self.latency()),
            "n_queries": len(self.run),
            "mean_kept": float(np.mean(kept)) if kept else 0.0,
        }


#: Index key: a level and how its vectors are made (passages: always first-window).
IndexKey = tuple[Level, Strategy]


class Searcher:
    """Dense, BM25, hybrid and fused search over one hierarchy, reranked and selected.

    Parameters
    ----------
    hierarchy : Hierarchy
        Documents, sections and passages.
    encoder : Encoder
        Embeds units and queries (wrap it in a
        :class:`~hierret.encoders.cache.CachedEncoder` to embed each text once across
        runs).
    bm25_idf : {"okapi", "lucene"}, default "okapi"
        The idf of every BM25 index (:class:`~hierret.search.rankers.bm25.BM25`):
        Okapi's, as ``rank_bm25`` and every published figure, or Lucene's,
        always positive, for corpora of a few documents where Okapi's idf of
        every common term is <= 0 (BM25 then logs a warning naming this).

    Attributes
    ----------
    reports : dict[(level, vectors), PoolingReport]
        What building each dense index took (windows pooled, cut units).
    build_seconds : dict[(level, vectors), float]
        Time to build each dense index.
    latency : dict[str, list[float]]
        Seconds per query by ``"level/ranker"`` step (query encoding
        excluded).
    """

    def __init__(self, hierarchy: Hierarchy, encoder: Encoder, bm25_idf: str = "okapi") -> None:
        if bm25_idf not in IDFS:
            raise ValueError(f"bm25_idf must be one of {IDFS}, got {bm25_idf!r}")
        self.hierarchy = hierarchy
        self.encoder = encoder
        self.bm25_idf = bm25_idf
        self.reports: dict[IndexKey, PoolingReport] = {}
        self.build_seconds: dict[IndexKey, float] = {}
        self.latency: dict[str, list[float]] = {}
        self._dense: dict[IndexKey, VectorIndex] = {}
        self._bm25: dict[tuple[Level, str], BM25] = {}
        self._units: dict[Level, list[Unit]] = {}
        self._has_text: dict[Level, list[bool]] = {}
        self._tie_keys: dict[Level, NDArray[np.int64]] = {}  # rank()'s order, per level
        self._unit_texts: dict[Level, dict[str, str]] = {}
        self._passage_vectors: NDArray[np.float32] | None = None
        self._hits: Hits | None = None
        self._overlapped: dict[str, tuple[str, ...]] | None = None  # fused search's lifting
        notice = empty_units_message(empty_units(hierarchy))
        if notice:
            log.warning("%s", notice)

    @property
    def identity(self) -> str:
        """The encoder identity every dense index carries."""
        return self.encoder.identity.describe()

    def units(self, level: Level) -> list[Unit]:
        """The units of ``level`` (cached), those without text included."""
        if level not in self._units:
            self._units[level] = self.hierarchy.units(level)
        return self._units[level]

    def texts(self, level: Level) -> list[str]:
        """The text of every unit of ``level``."""
        return [self.hierarchy.text(u) for u in self.units(level)]

    def dense_index(self, level: Level, vectors: Strategy = "rawspan") -> VectorIndex:
        """The FAISS index of ``level``'s units with text, built on first use.

        Parameters
        ----------
        level : {"passages", "sections", "documents"}
        vectors : {"rawspan", "centroid", "first-window"}, default "rawspan"
            How section and document vectors are made; passages are always
            embedded as the encoder embeds them (``"first-window"``), whatever
            is asked.
        """
        key = _index_key(level, vectors)
        if key not in self._dense:
            start = time.perf_counter()
            passages = self._centroid_input() if key[1] == "centroid" else None
            with _clock.stage("index"):
                ids, matrix, report = unit_vectors(self.hierarchy, self.encoder, *key, passages)
                if level == "passages":
                    self._passage_vectors = matrix
                self._dense[key] = VectorIndex(ids, matrix, self.identity)
            self.reports[key] = report
            self.build_seconds[key] = time.perf_counter() - start
        return self._dense[key]

    def use_passage_vectors(
        self, ids: Sequence[str], vectors: NDArray[np.float32], method: str
    ) -> None:
        """Serve the passages level from vectors made another way (e.g. late chunking).

        Every passage search, fused search and centroid of this searcher then
        uses these vectors; queries are still embedded by the encoder.

        Parameters
        ----------
        ids : sequence of str
            The passages with text, in hierarchy order
            (:func:`~hierret.search.vectors.levels.text_units`).
        vectors : ndarray of float32, shape (len(ids), dimension)
            Unit rows.
        method : str
            How they were made, for :attr:`reports`.

        Raises
        ------
        ValueError
            Ids that are not this hierarchy's passages in order, a wrong shape,
            or an index of passages already built.

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.structure.hierarchy import build_hierarchy
        >>> from hierret.structure.units import Corpus, Document
        >>> s = Searcher(build_hierarchy(Corpus("c", [Document("d", "D", "Cats.")])),
        ...              HashEncoder(dimension=4))
        >>> s.use_passage_vectors(["d#p0"], np.eye(1, 4, dtype=np.float32), "given")
        >>> s.run([Query("q", "cats", ())])["q"][0][0]
        'd#p0'
        >>> s.reports["passages", "first-window"].strategy
        'given'
        """
        expected = [u.id for u in text_units(self.hierarchy, "passages")]
        if list(ids) != expected:
            raise ValueError(
                "ids must be the hierarchy's passages with text, in order "
                f"({len(expected)} passages; got {len(ids)} ids)"
            )
        dim = self.encoder.identity.dimension
        if vectors.shape != (len(expected), dim):
            raise ValueError(f"vectors have shape {vectors.shape}, expected {(len(expected), dim)}")
        key: IndexKey = ("passages", "first-window")
        if key in self._dense:
            raise ValueError(
                "the passage index is already built: give the vectors to a new "
                "Searcher before any search"
            )
        self._passage_vectors = np.asarray(vectors, dtype=np.float32)
        self._dense[key] = VectorIndex(list(ids), self._passage_vectors, self.identity)
        self.reports[key] = PoolingReport(
            "passages",
            method,
            self.encoder.identity.window,
            len(expected),
            dict.fromkeys(expected, 1),
        )
        self.build_seconds[key] = 0.0

    def _centroid_input(self) -> NDArray[np.float32]:
        """The passage vectors centroids average (those of the passage index)."""
        if self._passage_vectors is None:
            self.dense_index("passages")
        assert self._passage_vectors is not None
        return self._passage_vectors

    def bm25_index(self, level: Level, analyzer: str = "english") -> BM25:
        """The BM25 index of ``level`` with ``analyzer``, built on first use.

        It holds every unit, those without text included (as empty documents),
        so that its statistics are those of the whole level; no search ranks
        the units without text.
        """
        if (level, analyzer) not in self._bm25:
            with _clock.stage("index"):
                self._bm25[(level, analyzer)] = BM25.from_texts(
                    self.texts(level), analyzer, idf=self.bm25_idf
                )
        return self._bm25[(level, analyzer)]

    def _timed(self, key: str, n: int, seconds: float) -> None:
        self.latency.setdefault(key, []).extend([seconds / max(n, 1)] * n)

    def _dense_rankings(
        self, level: Level, vectors: Strategy, queries: NDArray[np.float32], n: int
    ) -> list[Ranking]:
        index = self.dense_index(level, vectors)
        start = time.perf_counter()
        rankings = index.search(queries, n, self.identity)
        self._timed(f"{level}/dense", len(queries), time.perf_counter() - start)
        return rankings

    def _bm25_rankings(
        self, level: Level, analyzer: str, texts: list[str], n: int, matches_only: bool = False
    ) -> list[Ranking]:
        """BM25's top ``n``; with ``matches_only``, only units it scores above 0.

        A fusion (hybrid or fused) reads only BM25's matches: a unit no query
        term reaches scores 0 and has no rank to give (its place among the
        zeros is the tie order, nothing BM25 measured).
        """
        bm25 = self.bm25_index(level, analyzer)
        analyze = get_analyzer(analyzer)
        if level not in self._has_text:
            self._has_text[level] = [has_text(t) for t in self.texts(level)]
        keep = self._has_text[level]
        unit_ids = [u.id for u in self.units(level)]
        if level not in self._tie_keys:  # the one tie rule, as rank() orders ids
            self._tie_keys[level] = tie_keys(unit_ids)
        ties = self._tie_keys[level]
        n_empty = keep.count(False)  # ask for as many more as may be left out
        start = time.perf_counter()
        rankings = [
            [
                (unit_ids[i], s)
                for i, s in bm25.search(analyze(t), n + n_empty, ties)
                if keep[i] and (s > 0.0 or not matches_only)
            ][:n]
            for t in texts
        ]
        self._timed(f"{level}/bm25", len(texts), time.perf_counter() - start)
        return rankings

    def _lucene_ranking(
        self, level: Level, analyzer: str, tokens: list[str], k: int
    ) -> list[tuple[str, float]]:
        """The top ``k`` units holding a word of ``tokens`` by BM25 with Lucene's idf
        (:meth:`search`'s ranking where Okapi's idf cannot rank)."""
        key = (level, analyzer + "/lucene")
        if key not in self._bm25:
            self._bm25[key] = BM25.from_texts(self.texts(level), analyzer, idf="lucene")
        _lucene_note(self._bm25[key].n_docs)
        unit_ids = [u.id for u in self.units(level)]
        ties = self._tie_keys.setdefault(level, tie_keys(unit_ids))
        keep = self._has_text.setdefault(level, [has_text(t) for t in self.texts(level)])
        found = self._bm25[key].search(tokens, k + keep.count(False), ties)
        return [(unit_ids[i], s) for i, s in found if keep[i] and s > 0][:k]

    def _rank(
        self,
        level: Level,
        profile: Profile,
        texts: list[str],
        queries: NDArray[np.float32] | None,
        n: int,
        fusing: bool = False,
    ) -> list[Ranking]:
        """The top ``n`` of one level by the profile's ranker.

        BM25 feeds a fusion (the hybrid's, or fused search's when ``fusing``)
        only the units it scores above 0.
        """
        if profile.ranker == "bm25":
            return self._bm25_rankings(level, profile.analyzer, texts, n, matches_only=fusing)
        assert queries is not None
        if profile.ranker == "dense":
            return self._dense_rankings(level, profile.vectors, queries, n)
        dense = self._dense_rankings(level, profile.vectors, queries, profile.pool)
        lexical = self._bm25_rankings(
            level, profile.analyzer, texts, profile.pool, matches_only=True
        )
        start = time.perf_counter()
        fused = [
            rrf([d, b], profile.rrf_k, profile.pool)[:n]
            for d, b in zip(dense, lexical, strict=True)
        ]
        self._timed(f"{level}/hybrid-fusion", len(texts), time.perf_counter() - start)
        return fused

    def _first_stage(
        self,
        profile: Profile,
        ids: list[str],
        texts: list[str],
        queries: NDArray[np.float32] | None,
        n: int,
    ) -> Run:
        if profile.level != "fused":
            return dict(
                zip(ids, self._rank(profile.level, profile, texts, queries, n), strict=True)
            )
        passages = self._rank("passages", profile, texts, queries, profile.pool, fusing=True)
        sections = self._rank("sections", profile, texts, queries, profile.pool, fusing=True)
        if self._overlapped is None:
            self._overlapped = self.hierarchy.overlapped_sections()
        lifted = lift_overlapping(dict(zip(ids, passages, strict=True)), self._overlapped)
        start = time.perf_counter()
        fused = {
            q: minmax_fuse(lifted[q], s, profile.section_weight)[:n]
            for q, s in zip(ids, sections, strict=True)
        }
        self._timed(f"fused/{profile.ranker}-fusion", len(ids), time.perf_counter() - start)
        return fused

    def _note_cap(self, profile: Profile, n: int, k: int, first: Run) -> None:
        """Warn once per run when a pool or the candidates, not the level, cut rankings short.

        Hybrid and fused rankings hold the union of each leg's top ``pool``;
        a reranked ranking holds the ``candidates`` first-stage units.
        """
        longest = max((len(r) for r in first.values()), default=0)
        if longest >= k:
            return
        level: Level = "sections" if profile.level == "fused" else profile.level
        held = len(text_units(self.hierarchy, level))
        if longest >= held:
            return
        pooled = profile.level == "fused" or profile.ranker == "hybrid"
        if pooled and n > profile.pool and longest >= profile.pool:
            cap = f"each leg holds its top pool={profile.pool} units"
            fix = "raise the pool (Profile(pool=...); --pool on the command line)"
        elif n < k:
            cap = f"the reranker reads only the first candidates={n} units"
            fix = "raise Profile(candidates=...)"
        else:
            return  # fewer units matched (BM25 matches only)
        log.warning(
            "k=%d asks for more than this profile can rank: %s, so its rankings hold at "
            "most %d of the %d %s with text; %s to get more",
            k,
            cap,
            longest,
            held,
            level,
            fix,
        )

    def _reranker(
        self, profile: Profile, rerankers: Mapping[str, Reranker] | None
    ) -> Reranker | None:
        if profile.reranker is None:
            return None
        available = dict(rerankers or {})
        if profile.reranker not in available:
            raise KeyError(
                f"profile {profile.name!r} needs reranker {profile.reranker!r}; "
                f"given: {sorted(available)}"
            )
        reranker = available[profile.reranker]
        if (
            isinstance(reranker, EncoderReranker)
            and profile.ranker == "dense"
            and reranker.encoder.identity.key() == self.encoder.identity.key()
        ):
            log.warning(
                "profile %r re-scores a dense first stage with the same encoder (%s): "
                "the reranker can only reproduce the first-stage order",
                profile.name,
                self.encoder.identity.name,
            )
        return reranker

    def _texts_by_id(self, level: Level) -> dict[str, str]:
        if level not in self._unit_texts:
            self._unit_texts[level] = {u.id: self.hierarchy.text(u) for u in self.units(level)}
        return self._unit_texts[level]

    def trace(
        self,
        queries: Sequence[Query],
        profile: Profile = DEFAULT,
        k: int = 10,
        rerankers: Mapping[str, Reranker] | None = None,
    ) -> ProfileRun:
        """Run a profile and keep every stage: first stage, reranked, final.

        :meth:`run` returns this trace's ``run``; parameters and errors are
        those of :meth:`run`.

        Returns
        -------
        ProfileRun
            ``profile`` (the very object passed in), ``first_stage`` (the
            first stage's ``candidates`` units with its scores when the profile
            has a reranker, else its top ``k``), ``reranked`` (the reranker's
            order and scores of all of them, or the first stage), ``run`` (the
            final rankings), ``rerank_seconds`` (reranking time per query,
            including the encoding time a reranker's
            :class:`~hierret.search.rerank.QueryClock` charges for a query it kept).
        """
        if not isinstance(profile, Profile):
            raise TypeError(f"profile must be a Profile, got {type(profile).__name__}")
        with _clock.stage("rank"):
            return self._trace(queries, profile, check_count(k, "k"), rerankers)

    def _trace(
        self,
        queries: Sequence[Query],
        profile: Profile,
        k: int,
        rerankers: Mapping[str, Reranker] | None,
    ) -> ProfileRun:
        reranker = self._reranker(profile, rerankers)
        ids = [q.id for q in queries]
        embeds = profile.ranker != "bm25"
        texts = check_queries([q.text for q in queries], ids, self.encoder if embeds else None)
        vectors = self.encoder.encode_queries(texts) if embeds else None
        n = profile.candidates if reranker is not None else k
        first = self._first_stage(profile, ids, texts, vectors, n)
        self._note_cap(profile, n, k, first)
        reranked = first
        seconds: dict[str, float] = {}
        if reranker is not None:
            unit_texts = self._texts_by_id(
                "sections" if profile.level == "fused" else profile.level
            )
            reranked = {}
            charged_seconds(reranker)  # whatever was charged before this trace is not ours
            for q in queries:
                start = time.perf_counter()
                with _clock.stage("rerank"):
                    reranked[q.id] = rerank(reranker, q.text, first[q.id], unit_texts)
                # a query encoding kept from an earlier profile: the time it took counts
                seconds[q.id] = time.perf_counter() - start + charged_seconds(reranker)
        keep = profile.selection
        final = {q: (r if keep.keeps_all else keep.select(r))[:k] for q, r in reranked.items()}
        return ProfileRun(
            profile=profile,
            run=final,
            first_stage=first,
            reranked=reranked,
            rerank_seconds=seconds,
            reranker=reranker.identity if reranker is not None else None,
        )

    def run(
        self,
        queries: Sequence[Query],
        profile: Profile = DEFAULT,
        k: int = 10,
        rerankers: Mapping[str, Reranker] | None = None,
    ) -> Run:
        """Rank units for every query as ``profile`` says; the top ``k`` of each.

        Parameters
        ----------
        queries : sequence of Query
            Questions (their ``text`` is what is searched).
        profile : Profile, default :data:`~hierret.search.profile.DEFAULT`
            Level, ranker, vectors, pool, fusion, reranker and selection.
        k : int, default 10
            Length of each returned ranking, an int >= 1 (fewer when the level
            holds fewer units, or the selection keeps fewer).
        rerankers : Mapping[str, Reranker], optional
            Rerankers by name; must hold ``profile.reranker`` when it is set.

        Returns
        -------
        Run
            Query id to ranking, ties broken by unit id.

        Raises
        ------
        TypeError
            ``k`` is not an int, ``profile`` is not a Profile, or a query text
            is not a str.
        ValueError
            ``k`` < 1; a query with no text (empty, whitespace or control
            characters only). All checked before any query is embedded.
        KeyError
            ``profile.reranker`` is not in ``rerankers``.

        Notes
        -----
        Dense, hybrid and fused runs log one warning when queries exceed the
        encoder's token window, saying how many and by how much; their vectors
        are what the encoder returns.
        """
        return self.trace(queries, profile, k, rerankers).run

    def search(
        self,
        text: str,
        profile: Profile = DEFAULT,
        k: int = 10,
        rerankers: Mapping[str, Reranker] | None = None,
    ) -> list[Hit]:
        """Top ``k`` units for one typed question, as :class:`~hierret.search.hits.Hit` records.

        Runs :meth:`run` on the one question (parameters, errors and warnings
        are its own) and decorates the ranking with each unit's span, section
        path and snippet. A BM25 ranking (not fused: fusion reads BM25's
        matches only) keeps only the units holding a word of the question with
        a score above 0: a unit that matches nothing is no hit, whatever its
        place among the zeros (an evaluation's :meth:`run` keeps them, as
        ranked lists do). On a corpus of a few documents, where Okapi's idf of
        every word of the question is <= 0 (so its scores would rank a unit
        lower the more of them it holds), the hits are ranked with Lucene's
        always-positive idf instead, and a warning says so (``run`` keeps
        Okapi's: every published figure is an evaluation run).

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
        ranking = self.run([Query("q", text, ())], profile, k, rerankers)["q"]
        if profile.ranker == "bm25" and profile.level != "fused":
            level: Level = profile.level
            tokens = get_analyzer(profile.analyzer)(text)
            bm25 = self.bm25_index(level, profile.analyzer)
            if profile.reranker is None and bm25.cannot_rank(tokens):
                ranking = self._lucene_ranking(level, profile.analyzer, tokens, k)
            matched = bm25.matches(tokens)
            where = {u.id: i for i, u in enumerate(self.units(level))}
            ranking = [(u, s) for u, s in ranking if matched[where[u]] and s > 0]
        if self._hits is None:
            self._hits = Hits(self.hierarchy)
        return self._hits(ranking, profile.level)


def _lucene_note(n: int) -> None:
    log.warning(
        "BM25: every word of the question found here has an Okapi idf <= 0 (a corpus of "
        "%d units, each word in half of them or more): its hits are ranked with Lucene's "
        "always-positive idf instead (bm25_idf='lucene'; hierret search --bm25-idf lucene "
        "ranks every question so)",
        n,
    )


def _index_key(level: Level, vectors: Strategy) -> IndexKey:
    """The dense index that serves ``level`` with ``vectors`` (passages: always first-window)."""
    levels: tuple[Level, ...] = ("passages", "sections", "documents")
    if level not in levels:
        raise ValueError(f"unknown level {level!r} for an index: use one of {levels}")
    return (level, "first-window" if level == "passages" else vectors)
