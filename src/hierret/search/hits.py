"""Search results ready to print or cite: :class:`Hit` records and one-line snippets.

Examples
--------
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.structure.units import Corpus, Document
>>> text = "Cats\\n====\\n\\nCats purr and sleep.\\n"
>>> hits = Hits(build_hierarchy(Corpus("pets", [Document("d", "Pets", text)])))
>>> hits([("d#s1", 0.5)], "sections")[0]
Hit(rank=1, unit_id='d#s1', score=0.5, level='sections', doc_id='d', path='Cats', start=0, \
end=32, snippet='Cats purr and sleep.')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hierret.search.runs import Ranking
from hierret.structure.hierarchy import Hierarchy
from hierret.structure.units import Level, Unit

__all__ = ["Hit", "Hits", "snippet"]

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
        The final score of the profile searched: a cosine (dense), a BM25 score,
        an RRF score (hybrid), the blended min-max score in [0, 1] (fused), or
        the reranker's score.
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


class Hits:
    """Turns rankings of one hierarchy's units into :class:`Hit` records.

    Parameters
    ----------
    hierarchy : Hierarchy
        The hierarchy whose units are ranked.
    """

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy
        levels: tuple[Level, ...] = ("passages", "sections", "documents")
        self._units = {lvl: {u.id: u for u in hierarchy.units(lvl)} for lvl in levels}
        self._headings = {s.id: s.title for ss in hierarchy.sections.values() for s in ss}

    def __call__(self, ranking: Ranking, level: str) -> list[Hit]:
        """One :class:`Hit` per ranked unit, rank 1 first.

        Parameters
        ----------
        ranking : Ranking
            ``(unit_id, score)`` pairs in rank order.
        level : str
            The level searched (``"fused"`` ranks sections).
        """
        return [self.hit(uid, score, r, level) for r, (uid, score) in enumerate(ranking, 1)]

    def hit(self, unit_id: str, score: float, rank: int, level: str) -> Hit:
        """The :class:`Hit` for ``unit_id`` found at ``rank`` searching ``level``."""
        unit_level: Level = "sections" if level == "fused" else level  # type: ignore[assignment]
        unit: Unit = self._units[unit_level][unit_id]
        path = unit.title
        if unit.level == "passages":
            path = self._units["sections"][unit.parent or ""].title
        text = snippet(self.hierarchy.text(unit), 400)
        if unit.level == "sections":  # the heading is in the path already
            text = text.removeprefix(self._headings[unit_id]).lstrip()
        return Hit(
            rank, unit_id, score, level, unit.doc_id, path, unit.start, unit.end, snippet(text)
        )
