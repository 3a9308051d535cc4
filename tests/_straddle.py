"""Fused search's passage leg, computed here from raw spans: a reference for the tests.

A passage counts for every section whose own span (heading to the next heading)
shares at least one character with it; each section scores its best passage.
Written from the spans alone, not with :mod:`hierret.search.lifting`.
"""

from __future__ import annotations

from hierret.search.runs import Run, rank
from hierret.structure.hierarchy import Hierarchy


def overlapped(hierarchy: Hierarchy) -> dict[str, list[str]]:
    """Passage id to the ids of the sections its span overlaps."""
    sections = hierarchy.units("sections")
    return {
        p.id: [
            s.id
            for s in sections
            if s.doc_id == p.doc_id and min(p.end, s.end) - max(p.start, s.start) > 0
        ]
        for p in hierarchy.passages
    }


def lift_straddling(run: Run, hierarchy: Hierarchy) -> Run:
    """Each section scored by the best passage overlapping it, best first."""
    holders = overlapped(hierarchy)
    out: Run = {}
    for q, ranking in run.items():
        best: dict[str, float] = {}
        for uid, score in ranking:
            for s in holders[uid]:
                best[s] = max(best.get(s, score), score)
        out[q] = rank(best)  # the package's one order: ties by id, as trec_eval
    return out
