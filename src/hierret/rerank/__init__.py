"""Reranking: re-score a first stage's candidates, then select, under one named profile.

* :class:`Reranker` – scores candidate texts for a query; backends:
  :class:`CrossEncoderReranker` (a sentence-transformers cross-encoder),
  :class:`MaxSimReranker` (ColBERT-style late interaction over an untrained
  encoder's token vectors) and :class:`EncoderReranker` (a second bi-encoder).
* :func:`rerank` – re-orders one ranking by a reranker, keeping every candidate.
* :class:`Selection` – threshold / floor / ceiling, the same after every reranker;
  :func:`set_scores` and :func:`selection_sweep` measure the returned set as
  the threshold moves, :func:`scores_by_relevance` splits a run's scores by label.
* :class:`ProfileRun`, :func:`evaluate_profile` – the stages of a
  :class:`~hierret.profile.Profile` run by :meth:`hierret.search.Searcher.trace`,
  scored and recorded with the profile exactly as given
  (:data:`hierret.profile.SHIPPED` mirrors the source study's shipped 0.5 / 3 / 10).

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
from hierret.rerank.profiles import (
    LatencySummary,
    ProfileEvaluation,
    ProfileRun,
    evaluate_profile,
    latency_summary,
    score_distribution,
    scores_by_relevance,
)
from hierret.rerank.selection import Selection, selection_sweep, set_scores

__all__ = [
    "Activation",
    "CrossEncoderReranker",
    "EncoderReranker",
    "LatencySummary",
    "MaxSimReranker",
    "ProfileEvaluation",
    "ProfileRun",
    "QueryClock",
    "Reranker",
    "RerankerIdentity",
    "Selection",
    "SentenceTransformerTokens",
    "TokenCacheInfo",
    "TokenEncoder",
    "charged_seconds",
    "evaluate_profile",
    "latency_summary",
    "rerank",
    "score_distribution",
    "scores_by_relevance",
    "selection_sweep",
    "set_scores",
]
