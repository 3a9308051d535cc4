"""Relevance by span overlap: which units hold a query's evidence.

Gold evidence is a set of character spans, so one gold set judges every
target (documents, sections, passages) and every chunking alike.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from hierret.search.runs import Qrels
from hierret.structure.units import Query, Unit

__all__ = ["qrels_from_evidence"]


@dataclass(frozen=True)
class _Group:
    """Units of one document and level, sorted by start, with their longest length."""

    starts: list[int]
    units: list[Unit]
    max_len: int
    level: str


def _index(units: Sequence[Unit]) -> dict[str, list[_Group]]:
    by_key: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for u in units:
        by_key[(u.doc_id, u.level)].append(u)
    index: dict[str, list[_Group]] = defaultdict(list)
    for (doc_id, level), group in by_key.items():
        group.sort(key=lambda u: (u.start, u.end, u.id))
        starts = [u.start for u in group]
        index[doc_id].append(_Group(starts, group, max(len(u) for u in group), level))
    return index


def qrels_from_evidence(
    queries: Sequence[Query], units: Sequence[Unit], min_overlap: float = 0.5
) -> Qrels:
    """Judge units relevant to queries by overlap with the queries' evidence spans.

    A unit is relevant to an evidence span ``(doc, s, e)`` when it lies in the
    same document and shares at least ``min_overlap * min(len(evidence),
    len(unit))`` characters with it (and at least one). A unit holding the whole
    evidence, such as a document-level unit, is therefore always relevant, and
    so is a short unit lying mostly inside the evidence.

    Parameters
    ----------
    queries : Sequence[Query]
        Queries with their evidence spans.
    units : Sequence[Unit]
        Candidate units, of any levels and documents.
    min_overlap : float, default 0.5
        Fraction in ``(0, 1]`` of the shorter of the two spans that must overlap.

    Returns
    -------
    Qrels
        ``{query_id: {unit_id: 1}}`` in query order, unit ids sorted. Queries
        whose evidence matches no unit are left out; see
        :func:`hierret.evaluation.check_coverage`.

    Notes
    -----
    Units are indexed by document and level and sorted by start; each evidence
    span bisects to the units that can reach it (start within the group's
    longest unit length before the span), so the cost grows with the number of
    overlapping units, not with the corpus.

    Examples
    --------
    >>> units = [Unit("d", "d", "documents", 0, 100),
    ...          Unit("d#p0", "d", "passages", 0, 50, "d"),
    ...          Unit("d#p1", "d", "passages", 50, 100, "d")]
    >>> qrels_from_evidence([Query("q", "?", (("d", 40, 90),))], units)
    {'q': {'d': 1, 'd#p1': 1}}
    """
    if not 0.0 < min_overlap <= 1.0:
        raise ValueError(f"min_overlap must be in (0, 1], got {min_overlap}")
    index = _index(units)
    qrels: Qrels = {}
    for query in queries:
        relevant: set[str] = set()
        for doc_id, s, e in query.evidence:
            if e <= s:
                raise ValueError(f"query {query.id!r}: empty evidence span {(doc_id, s, e)}")
            for group in index.get(doc_id, ()):
                if not query.judged_at(group.level):  # named a coarser unit: not judged here
                    continue
                lo = bisect_right(group.starts, s - group.max_len)
                hi = bisect_left(group.starts, e)
                for u in group.units[lo:hi]:
                    overlap = min(e, u.end) - max(s, u.start)
                    if overlap > 0 and overlap >= min_overlap * min(e - s, u.end - u.start):
                        relevant.add(u.id)
        if relevant:
            qrels[query.id] = dict.fromkeys(sorted(relevant), 1)
    return qrels
