"""Level indexes over one hierarchy, and fused passage + section search.

A :class:`HierarchicalIndex` holds one :class:`~hierret.index.VectorIndex` per
level (passages, sections, documents), each carrying the encoder's identity, and
searches any of them, or the two finest fused:

``"passages"``, ``"sections"``, ``"documents"``
    Cosine of the query with each unit's vector. Section and document vectors
    follow ``strategy`` (``"rawspan"`` or ``"centroid"``, see
    :mod:`hierret.levels`); sections are their own spans.
``"fused"``
    The passage search and the section search each return ``depth``
    candidates; the passage hits are lifted to their sections (each section
    scored by its best passage, :func:`~hierret.evaluation.lift`); each leg is
    min-max normalised within the query's own candidate pool and the two are
    blended, ``section_weight`` being the weight of the section leg
    (:func:`~hierret.rankers.fusion.minmax_fuse`); the union is ranked. Fused
    search returns sections. A section missing from one leg's pool scores 0 on
    that leg, exactly like the lowest candidate of that pool.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.hierarchy import build_hierarchy
>>> from hierret.units import Corpus, Document
>>> text = ("Cats\\n====\\n\\nCats purr and sleep.\\n\\n"
...         "Dogs\\n====\\n\\nDogs bark at the mail carrier.\\n")
>>> hi = HierarchicalIndex(build_hierarchy(Corpus("pets", [Document("d", "Pets", text)])),
...                        HashEncoder(dimension=32))
>>> top = hi.search("why do dogs bark?", level="fused", k=1)[0]
>>> top.unit_id, top.path, top.span
('d#s2', 'Dogs', (33, 75))
"""

from __future__ import annotations

import logging
import numbers
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from hierret._validate import (
    check_count,
    check_query_texts,
    empty_units_message,
    long_queries_message,
)
from hierret.encoders import Encoder, truncation_report
from hierret.hierarchy import Hierarchy
from hierret.index import VectorIndex
from hierret.levels import (
    STRATEGIES,
    PoolingReport,
    Strategy,
    empty_units,
    passage_unit_vectors,
    unit_vectors,
)
from hierret.lifting import lift
from hierret.rankers.fusion import minmax_fuse
from hierret.runs import Run
from hierret.units import Level, Query, Unit

__all__ = ["LEVELS", "SEARCH_LEVELS", "HierarchicalIndex", "Hit", "SearchLevel", "snippet"]

#: What a search ranks: one level's units, or sections by fused passage + section scores.
SearchLevel = Literal["passages", "sections", "documents", "fused"]
SEARCH_LEVELS: tuple[SearchLevel, ...] = ("passages", "sections", "documents", "fused")
LEVELS: tuple[Level, ...] = ("passages", "sections", "documents")

log = logging.getLogger(__name__)

_UNDERLINE = re.compile(r"^([=\-~*^\"#+`:.'_])\1{2,}$")


def snippet(text: str, max_chars: int = 160) -> str:
    """``text`` on one line: heading underlines dropped, whitespace collapsed, cut at a word.

    Examples
    --------
    >>> snippet("Title\\n=====\\n\\nSome   words\\nhere.", 14)
    'Title Some…'
    """
    lines = [ln.strip() for ln in text.splitlines()]
    flat = " ".join(" ".join(ln for ln in lines if ln and not _UNDERLINE.match(ln)).split())
    if len(flat) <= max_chars:
        return flat
    cut = flat[: max_chars - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


@dataclass(frozen=True)
class Hit:
    """One ranked unit, ready to print or cite.

    Attributes
    ----------
    rank : int
        1 for the best.
    unit_id : str
    score : float
        Cosine for a single level; the blended min-max score in [0, 1] for ``"fused"``.
    level : str
        The level searched (``"fused"`` for fused search, whose units are sections).
    doc_id : str
    path : str
        Section path (" > " joined headings; a passage's is its section's), or
        the document title for documents.
    start, end : int
        Character span in the document (a section's own span).
    snippet : str
        The start of the unit's text on one line (after the heading, for sections).
    """

    rank: int
    unit_id: str
    score: float
    level: str
    doc_id: str
    path: str
    start: int
    end: int
    snippet: str

    @property
    def span(self) -> tuple[int, int]:
        """``(start, end)``."""
        return (self.start, self.end)


class HierarchicalIndex:
    """One vector index per level of a hierarchy, searched alone or fused.

    Indexes are built on first use (:meth:`build` builds all three); the time
    each took is in ``build_seconds`` and what pooling it needed in ``reports``.
    Units with no text (an empty document and its section) are left out of
    every level, never embedded nor ranked; one warning, logged when the index
    is made, counts them (:func:`hierret.levels.empty_units`).

    Parameters
    ----------
    hierarchy : Hierarchy
    encoder : Encoder
        Embeds units and queries; wrap it in a :class:`~hierret.cache.CachedEncoder`
        so that every text is embedded once across runs.
    strategy : {"rawspan", "centroid"}, default "rawspan"
        How section and document vectors are made (:mod:`hierret.levels`);
        ``centroid`` averages the passage level's own vectors.
    pool_passages : bool, default False
        Window-pool passages longer than the encoder's window instead of
        letting the model cut them (see :func:`hierret.levels.passage_unit_vectors`);
        by default the passage level equals :class:`~hierret.search.Searcher`'s.
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
                ids, vectors, report = passage_unit_vectors(self.hierarchy, self.encoder,
                                                     self.pool_passages)
                self._passage_vectors = vectors
            else:
                passages = None
                if self.strategy == "centroid":
                    passages = self._passage_vectors
                    if passages is None:
                        self.index("passages")
                        passages = self._passage_vectors
                ids, vectors, report = unit_vectors(self.hierarchy, self.encoder, level,
                                                    self.strategy, passages)
            self._indexes[level] = VectorIndex(ids, vectors, self.identity)
            self.reports[level] = report
            self.build_seconds[level] = time.perf_counter() - start
        return self._indexes[level]

    def build(self) -> HierarchicalIndex:
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
            encoder raises :class:`~hierret.index.IdentityMismatchError`.

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
        return {q: minmax_fuse(lifted[q], s, section_weight)[:k]
                for q, s in zip(ids, sections, strict=True)}

    def search(
        self,
        text: str,
        level: SearchLevel = "fused",
        k: int = 10,
        section_weight: float = 0.65,
        depth: int = 50,
        query_encoder: Encoder | None = None,
    ) -> list[Hit]:
        """Top ``k`` units for one typed question, as :class:`Hit` records.

        Parameters, errors and warnings are those of :meth:`run`.

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.hierarchy import build_hierarchy
        >>> from hierret.units import Corpus, Document
        >>> hi = HierarchicalIndex(build_hierarchy(Corpus("c", [Document("d", "D", "Cats.")])),
        ...                        HashEncoder(dimension=8))
        >>> hi.search("   ")
        Traceback (most recent call last):
        ...
        ValueError: query is empty: give a question with at least one word
        >>> hi.search("cats", k=-1)
        Traceback (most recent call last):
        ...
        ValueError: k must be an int >= 1, got -1
        """
        k = check_count(k, "k")
        check_query_texts([text])
        ranking = self.run([Query("q", text, ())], level, k, section_weight, depth,
                           query_encoder)["q"]
        return [self.hit(uid, score, r, level) for r, (uid, score) in enumerate(ranking, 1)]

    def hit(self, unit_id: str, score: float, rank: int, level: SearchLevel) -> Hit:
        """The :class:`Hit` for ``unit_id`` found at ``rank`` searching ``level``."""
        unit_level: Level = "sections" if level == "fused" else level
        unit: Unit = self._units[unit_level][unit_id]
        path = unit.title
        if unit.level == "passages":
            path = self._units["sections"][unit.parent or ""].title
        text = snippet(self.hierarchy.text(unit), 400)
        if unit.level == "sections":  # the heading is in the path already
            text = text.removeprefix(self._titles[unit_id]).lstrip()
        return Hit(rank, unit_id, score, level, unit.doc_id, path, unit.start, unit.end,
                   snippet(text))
