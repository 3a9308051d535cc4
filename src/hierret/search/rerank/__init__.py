"""Reranking: re-score a first stage's candidates, then select, under one named profile.

* :class:`Reranker` – scores candidate texts for a query; backends:
  :class:`CrossEncoderReranker` (a sentence-transformers cross-encoder),
  :class:`MaxSimReranker` (ColBERT-style late interaction over an untrained
  encoder's token vectors) and :class:`EncoderReranker` (a second bi-encoder).
* :func:`rerank` – re-orders one ranking by a reranker, keeping every candidate.
* :class:`Selection` – threshold / floor / ceiling, the same after every reranker
  (:data:`hierret.search.profile.SHIPPED` mirrors the source study's shipped 0.5 / 3 / 10).

How a selection's returned set is measured as the threshold moves, and a
profile's run judged, is study work: :mod:`hierret.study.sets` and
:mod:`hierret.study.thresholds`.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.search.rerank import EncoderReranker, Selection, rerank
>>> texts = {"a": "quantum flux", "b": "the cat sat on the mat", "c": "dogs bark"}
>>> ranking = rerank(EncoderReranker(HashEncoder(dimension=32)), "cat on the mat",
...                  [("a", 3.0), ("b", 2.0), ("c", 1.0)], texts)
>>> sorted(uid for uid, _ in ranking)  # the same candidates, re-ordered
['a', 'b', 'c']
>>> Selection(min_score=0.5, top_k=2).select(ranking)  # doctest: +ELLIPSIS
[('b', 0.88388...)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.search.rerank.base import (
        QueryClock,
        Reranker,
        RerankerIdentity,
        charged_seconds,
        rerank,
    )
    from hierret.search.rerank.cross_encoder import Activation, CrossEncoderReranker
    from hierret.search.rerank.dense import EncoderReranker
    from hierret.search.rerank.maxsim import (
        MaxSimReranker,
        SentenceTransformerTokens,
        TokenCacheInfo,
        TokenEncoder,
    )
    from hierret.search.rerank.selection import Selection

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "QueryClock": "hierret.search.rerank.base",
    "Reranker": "hierret.search.rerank.base",
    "RerankerIdentity": "hierret.search.rerank.base",
    "charged_seconds": "hierret.search.rerank.base",
    "rerank": "hierret.search.rerank.base",
    "Activation": "hierret.search.rerank.cross_encoder",
    "CrossEncoderReranker": "hierret.search.rerank.cross_encoder",
    "EncoderReranker": "hierret.search.rerank.dense",
    "MaxSimReranker": "hierret.search.rerank.maxsim",
    "SentenceTransformerTokens": "hierret.search.rerank.maxsim",
    "TokenCacheInfo": "hierret.search.rerank.maxsim",
    "TokenEncoder": "hierret.search.rerank.maxsim",
    "Selection": "hierret.search.rerank.selection",
}

__all__ = [
    "Activation",
    "CrossEncoderReranker",
    "EncoderReranker",
    "MaxSimReranker",
    "QueryClock",
    "Reranker",
    "RerankerIdentity",
    "Selection",
    "SentenceTransformerTokens",
    "TokenCacheInfo",
    "TokenEncoder",
    "charged_seconds",
    "rerank",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
