"""Per-query ranking metrics, with trec_eval's definitions, computed on the run's own order.

A unit is relevant when its grade is above 0. trec_eval (and pytrec_eval)
re-sort each ranking by score, equal scores by document id descending, before
scoring; these metrics take the run's order as given. hierret's runs are
ranked by :func:`~hierret.search.runs.rank`, which is that same order, so on any run
the package makes the two agree query by query.
"""

from __future__ import annotations

import logging
import math
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Literal

from hierret.search.runs import Qrels, Run

__all__ = [
    "KINDS",
    "MetricKind",
    "average_precision",
    "evaluate",
    "hit_at",
    "is_binary",
    "kind",
    "mean_scores",
    "mrr",
    "ndcg_at",
    "precision_at",
    "r_precision",
    "recall_at",
]

logger = logging.getLogger(__name__)

#: Metrics that take no cutoff, or an optional one.
_NO_CUTOFF = {"mrr": True, "map": True, "rprec": False}
_DISCOUNTS: list[float] = []

#: What a metric's per-question value is: ``"binary"`` (0 or 1, a question answered or
#: not) or ``"graded"`` (any value in ``[0, 1]``).
MetricKind = Literal["binary", "graded"]
#: Each metric's kind, by the name before its ``@``. The kind decides how arms are
#: compared on it (:func:`hierret.evaluation.stats.comparison.compare_metric`): a binary metric's
#: rate gets a Wilson interval and a paired difference Newcombe's interval and McNemar's
#: exact test; a graded metric's mean a bootstrap interval and a paired difference the
#: paired bootstrap and randomisation test. ``p@1`` is 0 or 1 per question too, but is
#: declared graded, as every record has compared it so far.
KINDS: Mapping[str, MetricKind] = {
    "hit": "binary",
    "ndcg": "graded",
    "recall": "graded",
    "mrr": "graded",
    "map": "graded",
    "p": "graded",
    "rprec": "graded",
}
_NAME = re.compile(rf"({'|'.join(KINDS)})(?:@([1-9][0-9]*))?")


def _discount(i: int) -> float:
    """``1 / log2(rank + 1)`` for the 0-based position ``i`` (rank ``i + 1``)."""
    while len(_DISCOUNTS) <= i:
        _DISCOUNTS.append(1.0 / math.log2(len(_DISCOUNTS) + 2))
    return _DISCOUNTS[i]


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"cutoff k must be at least 1, got {k}")


def ndcg_at(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """Normalised discounted cumulative gain of the top ``k`` (trec_eval's ``ndcg_cut_k``).

    Gain is the grade, the discount ``log2(rank + 1)``; the ideal ranking sorts
    all judged grades, and both are cut at ``k``. 0 when nothing is relevant.

    Parameters
    ----------
    ranked : Sequence[str]
        Unit ids in rank order.
    grades : Mapping[str, int]
        Judged unit ids to grades (one query's qrels).
    k : int
        Cutoff, at least 1.

    Returns
    -------
    float
        nDCG@k in ``[0, 1]``.

    Examples
    --------
    >>> round(ndcg_at(["x", "a"], {"a": 1}, 10), 4)
    0.6309
    """
    _check_k(k)
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g * _discount(i) for i, g in enumerate(ideal))
    if idcg == 0.0:
        return 0.0
    dcg = sum(max(grades.get(u, 0), 0) * _discount(i) for i, u in enumerate(ranked[:k]))
    return dcg / idcg


def recall_at(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """Fraction of the relevant units found in the top ``k`` (0 when none is relevant).

    Examples
    --------
    >>> recall_at(["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, 2)
    0.3333333333333333
    """
    _check_k(k)
    n_relevant = sum(1 for g in grades.values() if g > 0)
    if n_relevant == 0:
        return 0.0
    return sum(1 for u in ranked[:k] if grades.get(u, 0) > 0) / n_relevant


def mrr(ranked: Sequence[str], grades: Mapping[str, int], k: int | None = None) -> float:
    """Reciprocal rank of the first relevant unit (within the top ``k`` if given), else 0.

    Examples
    --------
    >>> mrr(["x", "y", "a"], {"a": 1})
    0.3333333333333333
    >>> mrr(["x", "y", "a"], {"a": 1}, k=2)
    0.0
    """
    if k is not None:
        _check_k(k)
    for i, u in enumerate(ranked if k is None else ranked[:k]):
        if grades.get(u, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def hit_at(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """1.0 if a relevant unit is in the top ``k``, else 0.0.

    Examples
    --------
    >>> hit_at(["x", "a"], {"a": 1}, 1), hit_at(["x", "a"], {"a": 1}, 2)
    (0.0, 1.0)
    """
    _check_k(k)
    return 1.0 if any(grades.get(u, 0) > 0 for u in ranked[:k]) else 0.0


def precision_at(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """Relevant units in the top ``k``, divided by ``k`` (trec_eval's ``P_k``).

    A ranking shorter than ``k`` counts its missing ranks as not relevant, as
    trec_eval does.

    Examples
    --------
    >>> precision_at(["a", "x", "b"], {"a": 1, "b": 1}, 2)
    0.5
    >>> precision_at(["a"], {"a": 1}, 5)
    0.2
    """
    _check_k(k)
    return sum(1 for u in ranked[:k] if grades.get(u, 0) > 0) / k


def average_precision(
    ranked: Sequence[str], grades: Mapping[str, int], k: int | None = None
) -> float:
    """Average precision (trec_eval's ``map`` per query; ``map_cut_k`` with ``k``).

    The precision at the rank of each relevant unit retrieved (within the top
    ``k`` if given), summed and divided by the number of relevant units
    judged; 0 when none is relevant.

    Examples
    --------
    >>> average_precision(["a", "x", "b"], {"a": 1, "b": 1, "c": 1})  # (1 + 2/3) / 3
    0.5555555555555555
    >>> average_precision(["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, k=2)
    0.3333333333333333
    """
    if k is not None:
        _check_k(k)
    n_relevant = sum(1 for g in grades.values() if g > 0)
    if n_relevant == 0:
        return 0.0
    found, total = 0, 0.0
    for i, u in enumerate(ranked if k is None else ranked[:k]):
        if grades.get(u, 0) > 0:
            found += 1
            total += found / (i + 1)
    return total / n_relevant


def r_precision(ranked: Sequence[str], grades: Mapping[str, int]) -> float:
    """Precision at rank R, R being the number of relevant units (trec_eval's ``Rprec``).

    Examples
    --------
    >>> r_precision(["a", "x", "b"], {"a": 1, "b": 1})
    0.5
    """
    n_relevant = sum(1 for g in grades.values() if g > 0)
    if n_relevant == 0:
        return 0.0
    return sum(1 for u in ranked[:n_relevant] if grades.get(u, 0) > 0) / n_relevant


#: A parsed metric name: (name, kind, cutoff or None).
_Spec = tuple[str, str, int | None]


def kind(metric: str) -> MetricKind:
    """The kind of ``metric`` (:data:`KINDS`): ``"binary"`` or ``"graded"``.

    Parameters
    ----------
    metric : str
        A metric name :func:`evaluate` knows (``"hit@1"``, ``"ndcg@10"``,
        ``"mrr"``...). A name it does not know is a study's own per-question
        measure (``"set precision"``, :mod:`hierret.study.sets`), compared as
        a graded one.

    Examples
    --------
    >>> kind("hit@1"), kind("ndcg@10"), kind("mrr"), kind("set precision")
    ('binary', 'graded', 'graded', 'graded')
    """
    try:
        return KINDS[_parse(metric)[1]]
    except ValueError:  # not evaluate's: a study's own measure
        return "graded"


def is_binary(metric: str) -> bool:
    """Whether ``metric``'s per-question values are 0 or 1 (:func:`kind` is ``"binary"``).

    Examples
    --------
    >>> is_binary("hit@5"), is_binary("recall@5")
    (True, False)
    """
    return kind(metric) == "binary"


def _parse(name: str) -> _Spec:
    match = _NAME.fullmatch(name)
    optional = _NO_CUTOFF.get(match[1]) if match else None
    if (
        match is None
        or (match[2] is None and optional is None)
        or (match[2] is not None and optional is False)
    ):
        raise ValueError(
            f"unknown metric {name!r}; use 'ndcg@K', 'recall@K', 'hit@K', 'p@K', 'mrr', "
            "'mrr@K', 'map', 'map@K' or 'rprec'"
        )
    return name, match[1], None if match[2] is None else int(match[2])


def _score_query(
    ranking: Sequence[tuple[str, float]],
    grades: Mapping[str, int],
    specs: Sequence[_Spec],
    ideal_dcg: dict[tuple[int, ...], float],
) -> list[float] | None:
    """Every metric of ``specs`` for one query, from one pass over its ranking.

    The ranking is read once, into the ranks of its relevant units; each
    metric is then a few operations on those ranks, with the same float
    operations in the same order as the single-metric functions above, so
    the values are bit-identical to theirs. None when the ranking lists a
    unit twice. ``_DISCOUNTS`` must already cover the largest nDCG cutoff;
    ``ideal_dcg`` caches the ideal DCG of each top of ideal grades seen.
    """
    position = {u: i for i, (u, _) in enumerate(ranking)}
    if len(position) != len(ranking):
        return None
    relevant = [g for g in grades.values() if g > 0]
    n_relevant = len(relevant)
    # (0-based rank, grade) of each relevant unit retrieved, best first
    found = sorted((position[u], g) for u, g in grades.items() if g > 0 and u in position)
    ranks = [i for i, _ in found]
    ideal: tuple[int, ...] | None = None  # the relevant grades, best first, once nDCG asks
    discount = _DISCOUNTS
    values: list[float] = []
    for _, kind, k in specs:
        depth = n_relevant if kind == "rprec" else len(ranking) if k is None else k
        n_found = bisect_left(ranks, depth)  # relevant units retrieved above ``depth``
        if kind == "ndcg":
            if ideal is None:
                ideal = tuple(sorted(relevant, reverse=True))
            top = ideal[:depth]
            idcg = ideal_dcg.get(top)
            if idcg is None:
                idcg = ideal_dcg[top] = sum([g * discount[i] for i, g in enumerate(top)])
            if idcg == 0.0 or n_found == 0:  # 0 / idcg is 0.0 too
                values.append(0.0)
            else:
                values.append(sum([g * discount[i] for i, g in found[:n_found]]) / idcg)
        elif kind == "mrr":
            values.append(1.0 / (ranks[0] + 1) if n_found else 0.0)
        elif kind == "hit":
            values.append(1.0 if n_found else 0.0)
        elif kind == "p":
            values.append(n_found / depth)
        elif n_relevant == 0:  # recall, map and rprec are 0 with nothing relevant
            values.append(0.0)
        elif kind == "map":
            total = 0.0
            for j, i in enumerate(ranks[:n_found]):
                total += (j + 1) / (i + 1)
            values.append(total / n_relevant)
        else:  # recall@k, rprec
            values.append(n_found / n_relevant)
    return values


def evaluate(
    run: Run,
    qrels: Qrels,
    metrics: Sequence[str] = ("ndcg@10", "recall@10", "mrr", "hit@1"),
) -> dict[str, dict[str, float]]:
    """Score every judged query of a run.

    Every query in ``qrels`` is scored, a query missing from the run as 0.
    Queries in the run but not in ``qrels`` are left out, with a warning on the
    ``hierret.evaluation.metrics`` logger giving their number. Each value is
    bit-identical to the single-metric function of its name (:func:`ndcg_at`,
    :func:`recall_at`, ...) on the same ranking; all of a query's metrics come
    from one pass over its ranking.

    Parameters
    ----------
    run : Run
        Rankings in rank order.
    qrels : Qrels
        Graded judgements; a grade above 0 means relevant.
    metrics : Sequence[str]
        Metric names: ``"ndcg@K"``, ``"recall@K"``, ``"hit@K"``, ``"p@K"``
        (precision), ``"mrr"``, ``"mrr@K"``, ``"map"``, ``"map@K"`` (average
        precision) and ``"rprec"`` (R-precision); each equals trec_eval's
        measure of that name on the same ranking.

    Returns
    -------
    dict[str, dict[str, float]]
        Metric name to query id (sorted) to value. ``pandas.DataFrame(result)``
        gives a table indexed by query; :func:`mean_scores` the averages.

    Raises
    ------
    ValueError
        On an unknown metric name, or a ranking listing a unit twice.

    Examples
    --------
    >>> run = {"q1": [("a", 2.0), ("b", 1.0)], "q2": [("c", 1.0)]}
    >>> evaluate(run, {"q1": {"b": 1}, "q2": {"d": 1}}, ["mrr", "hit@1"])
    {'mrr': {'q1': 0.5, 'q2': 0.0}, 'hit@1': {'q1': 0.0, 'q2': 0.0}}
    """
    specs = [_parse(name) for name in metrics]
    unjudged = [qid for qid in run if qid not in qrels]
    if unjudged:
        logger.warning(
            "evaluate: %d run queries have no qrels and are left out (e.g. %s)",
            len(unjudged),
            ", ".join(map(repr, unjudged[:5])),
        )
    _discount(max((k or 1 for _, kind, k in specs if kind == "ndcg"), default=1) - 1)
    qids = sorted(qrels)
    rows = []
    ideal_dcg: dict[tuple[int, ...], float] = {}
    for qid in qids:
        values = _score_query(run.get(qid, ()), qrels[qid], specs, ideal_dcg)
        if values is None:
            raise ValueError(f"query {qid!r}: the ranking lists a unit more than once")
        rows.append(values)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(specs)
    # a name given twice keeps its first place and, like every column, the same values
    return {
        name: dict(zip(qids, column, strict=True))
        for (name, _, _), column in zip(specs, columns, strict=True)
    }


def mean_scores(scores: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Average each metric of :func:`evaluate` over its queries.

    Examples
    --------
    >>> mean_scores({"mrr": {"q1": 0.5, "q2": 0.0}})
    {'mrr': 0.25}
    """
    empty = [name for name, per_query in scores.items() if not per_query]
    if empty:
        raise ValueError(f"no queries to average for {empty}")
    return {name: math.fsum(v.values()) / len(v) for name, v in scores.items()}
