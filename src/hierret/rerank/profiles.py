"""What running a profile produced: its stages, their latency, and its evaluation.

:meth:`hierret.search.Searcher.trace` runs a :class:`~hierret.profile.Profile`
and returns a :class:`ProfileRun` (first stage, reranked, final run, rerank
latency); :meth:`~hierret.search.Searcher.run` and
:meth:`~hierret.search.Searcher.search` return its final run, so searching and
evaluating run the same code. :func:`evaluate_profile` scores the final run
and records ``dataclasses.asdict(profile)`` next to the metrics. Nothing here
rebuilds or patches a profile on the way: the source study's erratum (its
harness replaced the reranker's selection block with ``top_k: None``, so
published numbers described a reorder-without-selection stack that never
shipped) is the failure this module is shaped to prevent, and
``tests/test_rerank.py`` checks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hierret.evaluation.metrics import evaluate, mean_scores
from hierret.rerank.base import Reranker, RerankerIdentity
from hierret.runs import Qrels, Run
from hierret.units import Query

if TYPE_CHECKING:  # hierret.profile imports this package (its Selection); no cycle at run time
    from hierret.profile import Profile
    from hierret.search import Searcher

__all__ = [
    "LatencySummary",
    "ProfileEvaluation",
    "ProfileRun",
    "evaluate_profile",
    "latency_summary",
    "score_distribution",
    "scores_by_relevance",
]

_DEFAULT_METRICS = ("ndcg@10", "recall@10", "mrr", "hit@1")


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


def score_distribution(run: Run, rank_limit: int | None = None) -> NDArray[np.float64]:
    """Every score of a run in one array (queries sorted by id), for plots and thresholds.

    Parameters
    ----------
    run : Run
    rank_limit : int, optional
        Only the first ``rank_limit`` candidates of each query (e.g. 1 for the
        top score's distribution).

    Examples
    --------
    >>> score_distribution({"q2": [("a", 0.9)], "q1": [("b", 0.5), ("c", 0.1)]}).tolist()
    [0.5, 0.1, 0.9]
    """
    values = [s for q in sorted(run) for _, s in run[q][:rank_limit]]
    return np.asarray(values, dtype=np.float64)


def scores_by_relevance(
    run: Run, qrels: Qrels, rank_limit: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The scores of relevant and of non-relevant candidates, in two arrays.

    Only queries with judgements in ``qrels`` count; a candidate is relevant
    when its grade is above 0, and unjudged candidates count as non-relevant.
    Queries are taken in id order, candidates in rank order.

    Parameters
    ----------
    run : Run
    qrels : Qrels
    rank_limit : int, optional
        Only the first ``rank_limit`` candidates of each query.

    Returns
    -------
    relevant, non_relevant : ndarray of float64

    Examples
    --------
    >>> run = {"q1": [("a", 0.9), ("b", 0.4)], "q2": [("c", 0.7)], "q3": [("d", 0.1)]}
    >>> rel, non = scores_by_relevance(run, {"q1": {"a": 1, "b": 0}, "q2": {"x": 1}})
    >>> rel.tolist(), non.tolist()
    ([0.9], [0.4, 0.7])
    """
    rel: list[float] = []
    non: list[float] = []
    for qid in sorted(run):
        if qid not in qrels:
            continue
        grades = qrels[qid]
        for uid, s in run[qid][:rank_limit]:
            (rel if grades.get(uid, 0) > 0 else non).append(s)
    return np.asarray(rel, dtype=np.float64), np.asarray(non, dtype=np.float64)


@dataclass
class ProfileRun:
    """The stages of one profile's run (:meth:`~hierret.search.Searcher.trace`).

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
        (by :meth:`Reranker.clear_cache` or a ``CachedEncoder``) changes it.
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


@dataclass
class ProfileEvaluation:
    """Per-query metrics of one profile, with the profile and runs that produced them.

    Attributes
    ----------
    outcome : ProfileRun
        The runs; ``outcome.profile`` is the profile evaluated.
    scores : dict[str, dict[str, float]]
        Metric name to query id to value (as :func:`~hierret.evaluation.evaluate`).
    """

    outcome: ProfileRun
    scores: dict[str, dict[str, float]]

    @property
    def profile(self) -> Profile:
        """The profile evaluated."""
        return self.outcome.profile

    @property
    def profile_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict`` of the profile evaluated."""
        return self.outcome.profile.as_dict()

    def means(self) -> dict[str, float]:
        """Each metric averaged over the queries."""
        return mean_scores(self.scores)

    def record(self) -> dict[str, Any]:
        """JSON-ready: :meth:`ProfileRun.record` plus the mean metrics."""
        return {**self.outcome.record(), "metrics": self.means()}


def evaluate_profile(
    profile: Profile,
    searcher: Searcher,
    queries: Sequence[Query],
    qrels: Qrels,
    rerankers: Mapping[str, Reranker] | None = None,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    k: int = 10,
) -> ProfileEvaluation:
    """Run a profile with :meth:`Searcher.trace <hierret.search.Searcher.trace>` and score it.

    The run scored is exactly what ``searcher.run(queries, profile, k,
    rerankers)`` returns. Only the given queries are scored: judgements of
    other queries in ``qrels`` are ignored.

    Parameters
    ----------
    profile : Profile
    searcher : Searcher
    queries : sequence of Query
    qrels : Qrels
    rerankers : Mapping[str, Reranker], optional
    metrics : sequence of str
        Metric names (see :func:`~hierret.evaluation.evaluate`).
    k : int, default 10
        Length of each final ranking.

    Returns
    -------
    ProfileEvaluation
        ``.profile`` is the object passed in; ``.profile_dict`` its ``asdict``.

    Examples
    --------
    >>> from hierret.encoders import load_encoder
    >>> from hierret.hierarchy import build_hierarchy
    >>> from hierret.profile import Profile
    >>> from hierret.rerank import Selection
    >>> from hierret.search import Searcher
    >>> from hierret.units import Corpus, Document
    >>> docs = [Document("a", "A", "Cats purr. Cats sleep."), Document("b", "B", "Dogs bark."),
    ...         Document("c", "C", "Birds sing at dawn.")]
    >>> s = Searcher(build_hierarchy(Corpus("toy", docs)), load_encoder("hash", dimension=16))
    >>> p = Profile("bm25-top1", ranker="bm25", selection=Selection(top_k=1))
    >>> ev = evaluate_profile(p, s, [Query("q", "do dogs bark", ())], {"q": {"b#p0": 1}})
    >>> ev.outcome.run, ev.profile is p, ev.means()["hit@1"]  # doctest: +ELLIPSIS
    ({'q': [('b#p0', 1.20...)]}, True, 1.0)
    """
    outcome = searcher.trace(queries, profile, k, rerankers)
    wanted = {q.id for q in queries}
    judged = {qid: grades for qid, grades in qrels.items() if qid in wanted}
    return ProfileEvaluation(outcome, evaluate(outcome.run, judged, metrics))
