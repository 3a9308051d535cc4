"""Profiles: a whole retrieval stack as one frozen value, run and evaluated as given.

A :class:`Profile` names everything that decides a final ranking: the level,
the first-stage ranker and its depth, the reranker, and the
:class:`~hierret.rerank.Selection`. :func:`run_profile` runs exactly that
profile and returns it with the run (:class:`ProfileRun`);
:func:`evaluate_profile` scores it and records ``dataclasses.asdict(profile)``
next to the metrics. Nothing here rebuilds or patches a profile on the way:
the source study's erratum (its harness replaced the reranker's selection
block with ``top_k: None``, so published numbers described a
reorder-without-selection stack that never shipped) is the failure this
module is shaped to prevent, and ``tests/test_rerank.py`` checks it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, get_args

import numpy as np
from numpy.typing import NDArray

from hierret.evaluation.metrics import evaluate, mean_scores
from hierret.rerank.base import Reranker, RerankerIdentity, rerank
from hierret.rerank.dense import EncoderReranker
from hierret.rerank.selection import Selection
from hierret.runs import Qrels, Run
from hierret.search import RANKERS, Ranker, Searcher
from hierret.units import Level, Query

__all__ = [
    "REORDER_ONLY",
    "SHIPPED",
    "LatencySummary",
    "Profile",
    "ProfileEvaluation",
    "ProfileRun",
    "evaluate_profile",
    "latency_summary",
    "run_profile",
    "score_distribution",
    "scores_by_relevance",
]

log = logging.getLogger(__name__)

_LEVELS: tuple[str, ...] = get_args(Level)
_DEFAULT_METRICS = ("ndcg@10", "recall@10", "mrr", "hit@1")


@dataclass(frozen=True)
class Profile:
    """One retrieval stack: first stage, reranker and selection.

    Parameters
    ----------
    name : str
        Label for tables.
    level : {"passages", "sections", "documents"}, default "passages"
        The unit the first stage ranks (and the reranker reads).
    ranker : {"dense", "bm25", "hybrid"}, default "hybrid"
        First-stage ranker of :class:`~hierret.search.Searcher`.
    depth : int, default 20
        Candidates the first stage hands on.
    reranker : str, optional
        Key of the reranker in the mapping given to :func:`run_profile`;
        ``None`` keeps the first-stage order and scores.
    selection : Selection, default ``Selection()``
        Applied after the reranker (or to first-stage scores without one).
        The default keeps every candidate.

    Examples
    --------
    >>> p = Profile("maxsim-sel", reranker="maxsim", selection=Selection(0.5, 3, 10))
    >>> p.describe()
    'maxsim-sel: passages, hybrid@20 -> maxsim, min_score=0.5, min_keep=3, top_k=10'
    >>> Profile.from_dict(p.as_dict()) == p
    True
    """

    name: str
    level: Level = "passages"
    ranker: Ranker = "hybrid"
    depth: int = 20
    reranker: str | None = None
    selection: Selection = field(default_factory=Selection)

    def __post_init__(self) -> None:
        if self.level not in _LEVELS:
            raise ValueError(f"unknown level {self.level!r}: use one of {_LEVELS}")
        if self.ranker not in RANKERS:
            raise ValueError(f"unknown ranker {self.ranker!r}: use one of {RANKERS}")
        if self.depth < 1:
            raise ValueError(f"depth must be at least 1, got {self.depth}")
        if not isinstance(self.selection, Selection):
            raise TypeError(f"selection must be a Selection, got {type(self.selection).__name__}")

    def as_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``: plain values, JSON-ready."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Profile:
        """The profile :meth:`as_dict` described."""
        fields = dict(data)
        fields["selection"] = Selection(**dict(fields.get("selection") or {}))
        return cls(**fields)

    def describe(self) -> str:
        """One line for tables and logs."""
        stage = f"{self.level}, {self.ranker}@{self.depth}"
        rr = self.reranker or "no reranker"
        return f"{self.name}: {stage} -> {rr}, {self.selection.describe()}"


#: The source study's shipped stack, for illustration: hybrid RRF first stage of 20
#: candidates, a cross-encoder (looked up under the key ``"cross-encoder"``), then
#: threshold selection min_score 0.5 / min_keep 3 / top_k 10. The 0.5 is on the
#: study's rerankers' probability scale (sigmoid); it means nothing for MaxSim or
#: cosine scores.
SHIPPED = Profile(
    name="shipped-0.5/3/10",
    level="passages",
    ranker="hybrid",
    depth=20,
    reranker="cross-encoder",
    selection=Selection(min_score=0.5, min_keep=3, top_k=10),
)

#: What the source study's eval harness measured instead of :data:`SHIPPED` before
#: its erratum: the same reranker reordering all 20 candidates, with no selection.
REORDER_ONLY = replace(SHIPPED, name="reorder-only (as the harness ran it)",
                       selection=Selection())


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
    """The outcome of :func:`run_profile`: the profile that ran, and its runs.

    Attributes
    ----------
    profile : Profile
        Exactly the profile that was run.
    run : Run
        The final run: first stage, reranked, selected.
    first_stage : Run
        The first stage's ``depth`` candidates with its scores.
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


def run_profile(
    profile: Profile,
    searcher: Searcher,
    queries: Sequence[Query],
    rerankers: Mapping[str, Reranker] | None = None,
) -> ProfileRun:
    """Run a profile: first stage, reranker, selection, exactly as the profile says.

    Parameters
    ----------
    profile : Profile
    searcher : Searcher
        Runs the first stage and supplies unit texts for the reranker.
    queries : sequence of Query
    rerankers : Mapping[str, Reranker], optional
        Rerankers by name; must hold ``profile.reranker`` when it is set.

    Returns
    -------
    ProfileRun
        With ``profile`` the very object passed in.

    Raises
    ------
    KeyError
        ``profile.reranker`` is not in ``rerankers``.

    Examples
    --------
    >>> from hierret.encoders import load_encoder
    >>> from hierret.hierarchy import build_hierarchy
    >>> from hierret.units import Corpus, Document
    >>> docs = [Document("a", "A", "Cats purr. Cats sleep."), Document("b", "B", "Dogs bark."),
    ...         Document("c", "C", "Birds sing at dawn.")]
    >>> s = Searcher(build_hierarchy(Corpus("toy", docs)), load_encoder("hash", dimension=16))
    >>> p = Profile("bm25-top1", ranker="bm25", depth=5, selection=Selection(top_k=1))
    >>> out = run_profile(p, s, [Query("q", "do dogs bark", ())])
    >>> out.run, out.profile is p  # doctest: +ELLIPSIS
    ({'q': [('b#p0', 1.20...)]}, True)
    """
    reranker: Reranker | None = None
    if profile.reranker is not None:
        available = dict(rerankers or {})
        if profile.reranker not in available:
            raise KeyError(
                f"profile {profile.name!r} needs reranker {profile.reranker!r}; "
                f"given: {sorted(available)}"
            )
        reranker = available[profile.reranker]
        if (
            isinstance(reranker, EncoderReranker)
            and profile.ranker == "dense"
            and reranker.encoder.identity.key() == searcher.encoder.identity.key()
        ):
            log.warning(
                "profile %r re-scores a dense first stage with the same encoder (%s): "
                "the reranker can only reproduce the first-stage order",
                profile.name,
                searcher.encoder.identity.name,
            )
    first = searcher.run(queries, profile.level, profile.ranker, profile.depth)
    reranked: Run = first
    seconds: dict[str, float] = {}
    if reranker is not None:
        texts = {u.id: searcher.hierarchy.text(u) for u in searcher.units(profile.level)}
        reranked = {}
        for q in queries:
            start = time.perf_counter()
            reranked[q.id] = rerank(reranker, q.text, first[q.id], texts)
            seconds[q.id] = time.perf_counter() - start
    final = {qid: profile.selection.select(ranking) for qid, ranking in reranked.items()}
    return ProfileRun(
        profile=profile,
        run=final,
        first_stage=first,
        reranked=reranked,
        rerank_seconds=seconds,
        reranker=reranker.identity if reranker is not None else None,
    )


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
) -> ProfileEvaluation:
    """Run a profile (:func:`run_profile`) and score its final run.

    Only the given queries are scored: judgements of other queries in
    ``qrels`` are ignored.

    Parameters
    ----------
    profile : Profile
    searcher : Searcher
    queries : sequence of Query
    qrels : Qrels
    rerankers : Mapping[str, Reranker], optional
    metrics : sequence of str
        Metric names (see :func:`~hierret.evaluation.evaluate`).

    Returns
    -------
    ProfileEvaluation
        ``.profile`` is the object passed in; ``.profile_dict`` its ``asdict``.
    """
    outcome = run_profile(profile, searcher, queries, rerankers)
    wanted = {q.id for q in queries}
    judged = {qid: grades for qid, grades in qrels.items() if qid in wanted}
    return ProfileEvaluation(outcome, evaluate(outcome.run, judged, metrics))
