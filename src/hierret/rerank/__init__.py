"""Reranking: re-score a first stage's candidates, then select, under one named profile.

* :class:`Reranker` – scores candidate texts for a query; backends:
  :class:`CrossEncoderReranker` (a sentence-transformers cross-encoder),
  :class:`MaxSimReranker` (ColBERT-style late interaction over an untrained
  encoder's token vectors) and :class:`EncoderReranker` (a second bi-encoder).
* :func:`rerank` – re-orders one ranking by a reranker, keeping every candidate.
* :class:`Selection` – threshold / floor / ceiling, the same after every reranker
  (:data:`hierret.profile.SHIPPED` mirrors the source study's shipped 0.5 / 3 / 10).

How a selection's returned set is measured as the threshold moves, and a
profile's run judged, is study work: :mod:`hierret.study.sets` and
:mod:`hierret.study.thresholds`.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> texts = {"a": "quantum flux", "b": "the cat sat on the mat", "c": "dogs bark"}
>>> ranking = rerank(EncoderReranker(HashEncoder(dimension=32)), "cat on the mat",
...                  [("a", 3.0), ("b", 2.0), ("c", 1.0)], texts)
>>> sorted(uid for uid, _ in ranking)  # the same candidates, re-ordered
['a', 'b', 'c']
>>> Selection(min_score=0.5, top_k=2).select(ranking)  # doctest: +ELLIPSIS
[('b', 0.88388...)]
"""

from hierret.rerank.base import QueryClock, Reranker, RerankerIdentity, charged_seconds, rerank
from hierret.rerank.cross_encoder import Activation, CrossEncoderReranker
from hierret.rerank.dense import EncoderReranker
from hierret.rerank.maxsim import (
    MaxSimReranker,
    SentenceTransformerTokens,
    TokenCacheInfo,
    TokenEncoder,
)
from hierret.rerank.selection import Selection

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
