"""The returned set as a measure: what a reader receives after selection.

After a :class:`~hierret.search.rerank.Selection`, a profile returns a *set* of
units, not a ranking cut at 10: its precision, recall and size
(:func:`set_scores`) say more about it than nDCG does.
:func:`with_set_measures` adds them to an :func:`hierret.study.experiment.run`
result as three more metrics (``"set precision"``, ``"set recall"``,
``"set kept"``), so its tables and paired tests cover them too;
:func:`profile_record` writes one arm's record: the profile exactly as run,
its reranker, its latency and its mean metrics.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.study.experiment import run
>>> from hierret.structure.hierarchy import build_hierarchy
>>> from hierret.search.profile import Profile
>>> from hierret.search.rerank import Selection
>>> from hierret.search.searcher import Searcher
>>> from hierret.structure.units import Corpus, Document, Query
>>> docs = [Document("a", "A", "Cats purr."), Document("b", "B", "Dogs bark."),
...         Document("c", "C", "Birds sing.")]
>>> s = Searcher(build_hierarchy(Corpus("pets", docs)), HashEncoder(dimension=16))
>>> arms = {"all": Profile(ranker="bm25"),
...         "one": Profile(ranker="bm25", selection=Selection(top_k=1))}
>>> q = [Query("q", "dogs bark", (("b", 0, 10),))]
>>> from hierret.evaluation.stats import StatsSettings
>>> result = with_set_measures(run(arms, q, searcher=s, stats=StatsSettings(n_resamples=10)),
...                            {"passages": {"q": {"b#p0": 1}}})
>>> result.table("passages", "set precision")["mean"].to_dict()  # doctest: +ELLIPSIS
{'all': 0.333..., 'one': 1.0}
>>> profile_record(result, "one")["metrics"]["set kept"]
1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

import hierret.study.experiment as experiment
from hierret.evaluation.metrics import mean_scores
from hierret.publish.record import key
from hierret.search.profile import Profile
from hierret.search.rerank import Reranker, Selection
from hierret.search.runs import Qrels, Run
from hierret.search.searcher import ProfileRun, Searcher
from hierret.structure.units import Level, Query
from hierret.study.experiment import Arm, Result

__all__ = [
    "SET_MEASURES",
    "ProfileEvaluation",
    "SelectionFidelity",
    "paired_by_metric",
    "profile_record",
    "record_values",
    "summary",
    "with_set_measures",
    "without_selection",
]

#: The metric names :func:`with_set_measures` adds.
SET_MEASURES = ("set precision", "set recall", "set kept")


@dataclass
class ProfileEvaluation:
    """Per-query metrics of one profile, with the profile and runs that produced them.

    Nothing here rebuilds or patches a profile on the way: the source study's
    erratum (its harness replaced the reranker's selection block with
    ``top_k: None``, so published numbers described a reorder-without-selection
    stack that never shipped) is the failure this is shaped to prevent, and
    ``tests/study/test_rerank.py`` checks it.

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

    def means(self) -> dict[str, float]:
        """Each metric averaged over the queries."""
        return mean_scores(self.scores)

    def record(self) -> dict[str, Any]:
        """JSON-ready: :meth:`ProfileRun.record` plus the mean metrics."""
        return {**self.outcome.record(), "metrics": self.means()}


def with_set_measures(result: Result, qrels: Mapping[str, Qrels]) -> Result:
    """``result`` with each arm's set precision, recall and size as metrics, at every target.

    Parameters
    ----------
    result : Result
        Every arm ranks the level of each target (no lifting).
    qrels : mapping of target to Qrels
        The judgements at each target of ``result``; only the queries the
        result scored there are measured.

    Raises
    ------
    ValueError
        An arm ranks another level than a target (a set of passages is not
        a set of sections).
    """
    scores = {t: dict(by_metric) for t, by_metric in result.scores.items()}
    for target in result.targets:
        judged = set(next(iter(result.scores[target].values()))[result.arms[0]])
        for name in SET_MEASURES:
            scores[target][name] = {}
        for arm, trace in result.traces.items():
            level = "sections" if trace.profile.level == "fused" else trace.profile.level
            if level != target:
                raise ValueError(
                    f"arm {arm!r} ranks {level}, not the target {target!r}: "
                    "set measures are taken at the arm's own level"
                )
            kept = {q: g for q, g in qrels[target].items() if q in judged}
            sets = set_scores({q: r for q, r in trace.run.items() if q in judged}, kept)
            for measure, per_q in sets.items():
                scores[target][f"set {measure}"][arm] = per_q
    metrics = [*result.metrics, *(m for m in SET_MEASURES if m not in result.metrics)]
    return replace(result, scores=scores, metrics=metrics, _tables={})


def profile_record(result: Result, arm: str, target: str | None = None) -> dict[str, Any]:
    """One arm's record: profile as run, reranker, latency, sets kept, mean metrics.

    The metrics are averaged as :meth:`ProfileEvaluation.means`
    does (``math.fsum``), the set measures as plain means.
    """
    at = target if target is not None else result.targets[0]
    scores = {m: result.scores[at][m][arm] for m in result.metrics}
    ranked = {m: v for m, v in scores.items() if m not in SET_MEASURES}
    record = ProfileEvaluation(result.traces[arm], ranked).record()
    record["metrics"].update(
        {m: float(np.mean(list(v.values()))) for m, v in scores.items() if m in SET_MEASURES}
    )
    return record


def without_selection(
    profile: Profile,
    searcher: Searcher,
    queries: list[Query] | tuple[Query, ...],
    *,
    target: Level,
    qrels: Qrels,
    names: tuple[str, str] = ("as given", "reorder-only"),
    rerankers: Mapping[str, Reranker] | None = None,
    k: int | None = None,
    **options: Any,
) -> Result:
    """A profile against its twin without selection, with the returned sets measured.

    The twin is ``profile`` with ``Selection()`` (it keeps every candidate
    in the reranker's order), named ``"<name> without selection"``; both run
    through :func:`hierret.study.experiment.run` at ``target`` (the profile's own
    level) with the family ``(names[0], names[1])`` declared, and
    :func:`with_set_measures` adds the sets' precision, recall and size.

    Parameters
    ----------
    profile : Profile
    searcher : Searcher
    queries : sequence of Query
    target : {"passages", "sections", "documents"}
    qrels : Qrels
        Judgements at ``target``.
    names : (str, str)
        Arm names of the profile and of its twin.
    rerankers : mapping of str to Reranker, optional
    k : int, optional
        Ranking length; default ``profile.candidates`` (the twin then returns
        every candidate).
    **options
        ``metrics``, ``stats`` (a :class:`~hierret.evaluation.stats.StatsSettings`) for
        :func:`hierret.study.experiment.run`.
    """
    twin = replace(profile, name=f"{profile.name} without selection".strip(), selection=Selection())
    arms = {names[0]: Arm(profile, searcher), names[1]: Arm(twin, searcher)}
    result = experiment.run(
        arms,
        queries,
        targets=[target],
        baseline=names[1],
        family=[names],
        qrels={target: qrels},
        rerankers=rerankers,
        k=k if k is not None else profile.candidates,
        **options,
    )
    return with_set_measures(result, {target: qrels})


def summary(result: Result, target: str | None = None) -> pd.DataFrame:
    """One row per arm: its selection and its mean metrics (:func:`profile_record`)."""
    return pd.DataFrame.from_dict(
        {
            arm: {
                "selection": t.profile.selection.describe(),
                **profile_record(result, arm, target)["metrics"],
            }
            for arm, t in result.traces.items()
        },
        orient="index",
    )


def paired_by_metric(result: Result, metrics: list[str] | tuple[str, ...]) -> pd.DataFrame:
    """:meth:`Result.tests <hierret.study.experiment.Result.tests>` of each metric, in one table.

    Each metric is its own family (Holm within it). Rows are indexed by
    metric and ``arm_a`` (the arm tested); columns ``arm_b`` (what it is
    compared with), ``mean_a``, ``mean_b``, ``diff``, ``diff_low``,
    ``diff_high``, ``p``, ``p_holm``.
    """
    columns = ["arm_b", "mean_a", "mean_b", "diff", "diff_low", "diff_high", "p", "p_holm"]
    return pd.concat(
        {m: result.tests(m).set_index("arm_a")[columns] for m in metrics}, names=["metric", "arm_a"]
    )


def record_values(
    result: Result, prefix: str, metrics: list[str] | tuple[str, ...], target: str | None = None
) -> dict[str, float]:
    """``{prefix}_{arm}_{metric}``: mean metrics by arm (:func:`hierret.publish.record.key`)."""
    out: dict[str, float] = {}
    for arm in result.arms:
        means = profile_record(result, arm, target)["metrics"]
        out |= {key(prefix, arm, m): float(means[m]) for m in metrics}
    return out


def set_scores(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    """Precision, recall and size of each query's returned set (its whole ranking).

    What a reader (or a language model) receives after selection is a set, not
    a ranking cut at 10: these are the set's own measures, with trec_eval's
    ``set_P`` / ``set_recall`` conventions. Only queries of ``run`` that have
    judgements in ``qrels`` are scored, as in :func:`~hierret.evaluation.evaluate`.

    Parameters
    ----------
    run : Run
        Final rankings, e.g. after :meth:`Selection.select`.
    qrels : Qrels
        A grade above 0 marks a relevant unit.

    Returns
    -------
    dict
        ``{"precision": {qid: ...}, "recall": {qid: ...}, "kept": {qid: ...}}``.
        Precision is 0 for an empty set; recall is 0 for a query without a
        relevant unit (as :func:`~hierret.evaluation.recall_at`).

    Examples
    --------
    >>> run = {"q1": [("a", 0.9), ("x", 0.8)], "q2": [], "q3": [("b", 1.0)]}
    >>> scores = set_scores(run, {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}})
    >>> scores["precision"], scores["recall"], scores["kept"]
    ({'q1': 0.5, 'q2': 0.0}, {'q1': 0.5, 'q2': 0.0}, {'q1': 2.0, 'q2': 0.0})
    """
    out: dict[str, dict[str, float]] = {"precision": {}, "recall": {}, "kept": {}}
    for qid in sorted(run):
        if qid not in qrels:
            continue
        ids = [uid for uid, _ in run[qid]]
        if len(set(ids)) != len(ids):
            raise ValueError(f"query {qid!r}: the ranking lists a unit more than once")
        relevant = {uid for uid, grade in qrels[qid].items() if grade > 0}
        hits = sum(uid in relevant for uid in ids)
        out["precision"][qid] = hits / len(ids) if ids else 0.0
        out["recall"][qid] = hits / len(relevant) if relevant else 0.0
        out["kept"][qid] = float(len(ids))
    return out


def selection_sweep(
    reranked: Run,
    qrels: Qrels,
    thresholds: Sequence[float],
    *,
    min_keep: int = 0,
    top_k: int | None = None,
) -> pd.DataFrame:
    """Set precision, recall and size as ``min_score`` varies, floor and ceiling fixed.

    Each threshold ``t`` applies ``Selection(t, min_keep, top_k)`` to every
    ranking of ``reranked`` (the reranker's order and scores of all candidates)
    and averages :func:`set_scores` over the judged queries. Thresholds are on
    the reranker's own score scale, so a sweep is only read against that
    reranker's score distribution.

    Parameters
    ----------
    reranked : Run
        All candidates with the reranker's scores (``ProfileRun.reranked``).
    qrels : Qrels
    thresholds : sequence of float
        Values of ``min_score``, in any order (rows come back in this order).
    min_keep, top_k
        The floor and the ceiling (see :class:`Selection`).

    Returns
    -------
    pandas.DataFrame
        One row per threshold: ``min_score``, mean ``precision``, ``recall``
        and ``kept`` (returned set size), and ``floored``: the share of
        queries whose set holds a candidate below the threshold, kept by the
        floor.

    Examples
    --------
    >>> reranked = {"q1": [("a", 0.9), ("b", 0.6), ("x", 0.2)]}
    >>> table = selection_sweep(reranked, {"q1": {"a": 1, "b": 1}}, [0.1, 0.5, 0.95], min_keep=1)
    >>> table.round(3).values.tolist()  # min_score, precision, recall, kept, floored
    [[0.1, 0.667, 1.0, 3.0, 0.0], [0.5, 1.0, 1.0, 2.0, 0.0], [0.95, 1.0, 0.5, 1.0, 1.0]]
    """
    judged = {qid: ranking for qid, ranking in reranked.items() if qid in qrels}
    if not judged:
        raise ValueError("no query of the run has judgements in qrels")
    rows = []
    for t in thresholds:
        sel = Selection(min_score=float(t), min_keep=min_keep, top_k=top_k)
        final = {qid: sel.select(ranking) for qid, ranking in judged.items()}
        scores = set_scores(final, qrels)
        floored = [any(s < t for _, s in ranking) for ranking in final.values()]
        rows.append(
            {
                "min_score": float(t),
                **{name: float(np.mean(list(per_q.values()))) for name, per_q in scores.items()},
                "floored": float(np.mean(floored)),
            }
        )
    return pd.DataFrame(rows, columns=["min_score", "precision", "recall", "kept", "floored"])


class SelectionFidelity:
    """One profile against its twin without selection, the returned sets measured.

    Runs :func:`without_selection` once; its views are this module's functions
    of that result: :meth:`table` (:func:`summary`), :meth:`paired`
    (:func:`paired_by_metric`), :meth:`record` (:func:`profile_record`) and
    :meth:`values` (:func:`record_values`).

    Parameters
    ----------
    profile, searcher, queries, target, qrels, names, rerankers, k, **options
        As :func:`without_selection` takes them.

    Attributes
    ----------
    result : Result
        The two arms' run, with :data:`SET_MEASURES` among its metrics.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> from hierret.structure.hierarchy import build_hierarchy
    >>> from hierret.evaluation.stats import StatsSettings
    >>> from hierret.structure.units import Corpus, Document
    >>> docs = [Document("a", "A", "Cats purr."), Document("b", "B", "Dogs bark.")]
    >>> s = Searcher(build_hierarchy(Corpus("pets", docs)), HashEncoder(dimension=16))
    >>> shipped = Profile(name="top one", ranker="bm25", selection=Selection(top_k=1))
    >>> f = SelectionFidelity(shipped, s, [Query("q", "dogs bark", (("b", 0, 10),))],
    ...                       target="passages", qrels={"q": {"b#p0": 1}},
    ...                       stats=StatsSettings(n_resamples=10))
    >>> f.table()["set kept"].to_dict()
    {'as given': 1.0, 'reorder-only': 2.0}
    >>> f.values("toy", ["set precision"])
    {'toy_as_given_set_precision': 1.0, 'toy_reorder_only_set_precision': 0.5}
    """

    #: The metric names of the returned set (:func:`with_set_measures`).
    MEASURES = SET_MEASURES

    def __init__(
        self,
        profile: Profile,
        searcher: Searcher,
        queries: list[Query] | tuple[Query, ...],
        *,
        target: Level,
        qrels: Qrels,
        names: tuple[str, str] = ("as given", "reorder-only"),
        rerankers: Mapping[str, Reranker] | None = None,
        k: int | None = None,
        **options: Any,
    ) -> None:
        self.result = without_selection(
            profile, searcher, queries, target=target, qrels=qrels, names=names,
            rerankers=rerankers, k=k, **options,
        )  # fmt: skip

    def table(self) -> pd.DataFrame:
        """One row per arm: its selection and its mean metrics (:func:`summary`)."""
        return summary(self.result)

    def paired(self, metrics: list[str] | tuple[str, ...]) -> pd.DataFrame:
        """The profile against its twin, metric by metric (:func:`paired_by_metric`)."""
        return paired_by_metric(self.result, metrics)

    def record(self, arm: str) -> dict[str, Any]:
        """One arm's record as written with its numbers (:func:`profile_record`)."""
        return profile_record(self.result, arm)

    def values(self, prefix: str, metrics: list[str] | tuple[str, ...]) -> dict[str, float]:
        """``{prefix}_{arm}_{metric}``: each arm's mean metrics (:func:`record_values`)."""
        return record_values(self.result, prefix, metrics)
