"""Runs and qrels: the plain mappings rankers hand on and evaluation reads.

A **run** maps a query id to its ranking: a list of ``(unit_id, score)`` pairs
in rank order, best first. hierret owns that order: scores descending, ties
broken by unit id ascending (see :func:`rank`), so a run never depends on dict
order or on a sort's stability.

**Qrels** map a query id to the graded units judged for it:
``{query_id: {unit_id: grade}}``. A grade above 0 means relevant; hierret's
span-overlap qrels are binary (grade 1), TREC files may hold other grades.

This module sits on the package's ground floor: indexes, rankers, fusion,
reranking and search order their rankings with :func:`rank` and import these
types from here, without importing :mod:`hierret.evaluation` (which re-exports
them under the names users know).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["Qrels", "Ranking", "Run", "rank"]

#: One query's ranked ``(unit_id, score)`` pairs, best first.
Ranking = list[tuple[str, float]]

#: Query id to :data:`Ranking`.
Run = dict[str, Ranking]

#: Query id to ``{unit_id: grade}``; a grade above 0 means relevant.
Qrels = dict[str, dict[str, int]]


def rank(scores: Mapping[str, float]) -> Ranking:
    """Rank units by score, descending, breaking ties by unit id ascending.

    Parameters
    ----------
    scores : Mapping[str, float]
        Unit id to score.

    Returns
    -------
    Ranking
        ``(unit_id, score)`` pairs in rank order.

    Raises
    ------
    ValueError
        If a score is NaN (it has no place in an order).

    Examples
    --------
    >>> rank({"b": 1.0, "a": 1.0, "c": 2.5})
    [('c', 2.5), ('a', 1.0), ('b', 1.0)]
    """
    nan = [uid for uid, s in scores.items() if math.isnan(s)]
    if nan:
        raise ValueError(f"cannot rank NaN scores (units {sorted(nan)[:5]})")
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
