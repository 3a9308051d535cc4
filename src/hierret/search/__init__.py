"""A search: the profile that decides it, the runs it makes, lifted to a target, printed as hits.

:class:`Profile` is a search configuration as a value (the level searched, the
ranker, the fusion, the reranker and its selection; :data:`DEFAULT` and
:data:`SECTIONS` are the ones the decision records recommend, :data:`SHIPPED`
every named one); :class:`Searcher` is the one front door that runs a profile
over a hierarchy (:meth:`Searcher.search`, :meth:`Searcher.run` for a run of
many questions, :class:`ProfileRun`). A run is rankings (:data:`Run`,
:data:`Ranking`) ordered by one tie rule, trec_eval's (:func:`rank`);
:func:`lift` carries a ranking of units to a coarser target level, and
:class:`Hit` is what a person reads of one result. Where its parts live:
``profile``, ``searcher``, ``runs`` (rankings and the tie rule), ``lifting``,
``hits``. Each name loads its module on first use (PEP 562).

Examples
--------
>>> from hierret.search import Profile, Searcher
>>> from hierret.encoders import HashEncoder
>>> from hierret.structure import Corpus, Document, build_hierarchy
>>> text = "Cats\\n====\\n\\nCats purr softly.\\n\\nDogs\\n====\\n\\nDogs bark loudly.\\n"
>>> searcher = Searcher(build_hierarchy(Corpus("pets", [Document("d", "Pets", text)])),
...                     HashEncoder(dimension=32))
>>> [hit.unit_id for hit in searcher.search("dogs bark", Profile(level="sections"), k=1)]
['d#s2']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.search.hits import Hit, Hits, snippet
    from hierret.search.lifting import ancestors_at, lift, lift_overlapping
    from hierret.search.profile import (
        DEFAULT,
        RANKERS,
        REORDER_ONLY,
        SEARCH_LEVELS,
        SECTIONS,
        SHIPPED,
        STRATEGIES,
        Profile,
        Ranker,
        SearchLevel,
        Strategy,
    )
    from hierret.search.runs import Qrels, Ranking, Run, rank, tie_keys
    from hierret.search.searcher import LatencySummary, ProfileRun, Searcher, latency_summary

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "DEFAULT": "hierret.search.profile",
    "RANKERS": "hierret.search.profile",
    "REORDER_ONLY": "hierret.search.profile",
    "SEARCH_LEVELS": "hierret.search.profile",
    "SECTIONS": "hierret.search.profile",
    "SHIPPED": "hierret.search.profile",
    "STRATEGIES": "hierret.search.profile",
    "Profile": "hierret.search.profile",
    "Ranker": "hierret.search.profile",
    "SearchLevel": "hierret.search.profile",
    "Strategy": "hierret.search.profile",
    "LatencySummary": "hierret.search.searcher",
    "ProfileRun": "hierret.search.searcher",
    "Searcher": "hierret.search.searcher",
    "latency_summary": "hierret.search.searcher",
    "Qrels": "hierret.search.runs",
    "Ranking": "hierret.search.runs",
    "Run": "hierret.search.runs",
    "rank": "hierret.search.runs",
    "tie_keys": "hierret.search.runs",
    "ancestors_at": "hierret.search.lifting",
    "lift": "hierret.search.lifting",
    "lift_overlapping": "hierret.search.lifting",
    "Hit": "hierret.search.hits",
    "Hits": "hierret.search.hits",
    "snippet": "hierret.search.hits",
}

__all__ = [
    "DEFAULT",
    "RANKERS",
    "REORDER_ONLY",
    "SEARCH_LEVELS",
    "SECTIONS",
    "SHIPPED",
    "STRATEGIES",
    "Hit",
    "Hits",
    "LatencySummary",
    "Profile",
    "ProfileRun",
    "Qrels",
    "Ranker",
    "Ranking",
    "Run",
    "SearchLevel",
    "Searcher",
    "Strategy",
    "ancestors_at",
    "latency_summary",
    "lift",
    "lift_overlapping",
    "rank",
    "snippet",
    "tie_keys",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
