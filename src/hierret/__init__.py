"""hierret: retrieval over long structured documents, as reproducible research.

The package has three floors, and imports run only downward:

* ``hierret`` (this package) is **the core**: what a user needs to load a
  corpus, cut it into documents, sections and passages, embed and index it,
  search any level of it and judge the result. Its public face
  (``__all__``): ``load``, ``local_or_named``, ``Bundle``; ``Corpus``,
  ``Document``, ``Query``; ``build_hierarchy``, ``Hierarchy``; ``load_encoder``,
  ``Encoder``, ``cached_encoder``, ``VectorCache``, ``VectorIndex``,
  ``IdentityMismatchError``, ``LateChunker``; ``Profile``, ``RANKERS``,
  ``DEFAULT`` and ``SECTIONS`` (the profiles the records recommend),
  ``SHIPPED``, ``Selection``, ``Searcher``, ``Hit``; ``qrels_from_evidence``,
  ``check_coverage``, ``evaluate``; ``StatsSettings``. The packages behind it,
  one concept each, hold the rest: :mod:`hierret.datasets`,
  :mod:`hierret.structure` (documents, sections, passages), :mod:`hierret.encoders`
  (with the vector cache, :mod:`hierret.encoders.cache`, and the embedding runs,
  :mod:`hierret.encoders.embed`), :mod:`hierret.search` (profiles, the searcher,
  runs, lifting, hits; unit vectors and the exact index in
  :mod:`hierret.search.vectors`, :mod:`hierret.search.rankers`,
  :mod:`hierret.search.rerank`), :mod:`hierret.evaluation` (with
  :mod:`hierret.evaluation.stats`); :mod:`hierret.cli` is the command line.
* :mod:`hierret.publish`: what a reader sees (tables, figures, result records,
  the published-number checks). It uses the core, never the study machinery.
* :mod:`hierret.study`: what runs, compares and tunes arms for a decision
  record. It uses both floors below it.

The names below load on first use, so ``import hierret`` (what the command
line pays at every start) loads no model library and no statistics package
(every face is built by :func:`hierret._face.lazy`). The module paths issue 40
moved into those packages still import, with a :class:`DeprecationWarning`
naming the new path, until the next release (:mod:`hierret._moved`).

Examples
--------
>>> import hierret
>>> from hierret import Corpus, Document, Query, Searcher, build_hierarchy
>>> from hierret.encoders import HashEncoder
>>> text = "Cats\\n====\\n\\nCats purr softly.\\n\\nDogs\\n====\\n\\nDogs bark loudly.\\n"
>>> hierarchy = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]))
>>> searcher = Searcher(hierarchy, HashEncoder(dimension=32))
>>> [hit.unit_id for hit in searcher.search("dogs bark", hierret.Profile(level="sections"), k=1)]
['d#s2']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face
import hierret._moved as _moved

__version__ = "0.1.0"

if TYPE_CHECKING:
    from hierret.datasets import Bundle, load, local_or_named
    from hierret.encoders import Encoder, load_encoder
    from hierret.encoders.cache import VectorCache, cached_encoder
    from hierret.evaluation import check_coverage, evaluate, qrels_from_evidence
    from hierret.evaluation.stats import StatsSettings
    from hierret.search.hits import Hit
    from hierret.search.profile import DEFAULT, RANKERS, SECTIONS, SHIPPED, Profile
    from hierret.search.rerank import Selection
    from hierret.search.searcher import Searcher
    from hierret.search.vectors.index import IdentityMismatchError, VectorIndex
    from hierret.search.vectors.late import LateChunker
    from hierret.structure.hierarchy import Hierarchy, build_hierarchy
    from hierret.structure.units import Corpus, Document, Query

#: Each public name and the module that defines it, in the order of the flow.
_FACE = {
    "load": "hierret.datasets",
    "local_or_named": "hierret.datasets",
    "Bundle": "hierret.datasets",
    "Corpus": "hierret.structure.units",
    "Document": "hierret.structure.units",
    "Query": "hierret.structure.units",
    "build_hierarchy": "hierret.structure.hierarchy",
    "Hierarchy": "hierret.structure.hierarchy",
    "load_encoder": "hierret.encoders",
    "Encoder": "hierret.encoders",
    "cached_encoder": "hierret.encoders.cache",
    "VectorCache": "hierret.encoders.cache",
    "VectorIndex": "hierret.search.vectors.index",
    "IdentityMismatchError": "hierret.search.vectors.index",
    "LateChunker": "hierret.search.vectors.late",
    "Profile": "hierret.search.profile",
    "RANKERS": "hierret.search.profile",
    "DEFAULT": "hierret.search.profile",
    "SECTIONS": "hierret.search.profile",
    "SHIPPED": "hierret.search.profile",
    "Selection": "hierret.search.rerank",
    "Searcher": "hierret.search.searcher",
    "Hit": "hierret.search.hits",
    "qrels_from_evidence": "hierret.evaluation",
    "check_coverage": "hierret.evaluation",
    "evaluate": "hierret.evaluation",
    "StatsSettings": "hierret.evaluation.stats",
}

__all__ = [
    "DEFAULT",
    "RANKERS",
    "SECTIONS",
    "SHIPPED",
    "Bundle",
    "Corpus",
    "Document",
    "Encoder",
    "Hierarchy",
    "Hit",
    "IdentityMismatchError",
    "LateChunker",
    "Profile",
    "Query",
    "Searcher",
    "Selection",
    "StatsSettings",
    "VectorCache",
    "VectorIndex",
    "__version__",
    "build_hierarchy",
    "cached_encoder",
    "check_coverage",
    "evaluate",
    "load",
    "load_encoder",
    "local_or_named",
    "qrels_from_evidence",
]


_moved.install()  # the module paths issue 40 moved still import, with a warning

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
