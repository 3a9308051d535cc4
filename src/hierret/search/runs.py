"""Runs and qrels: the plain mappings rankers hand on and evaluation reads.

A **run** maps a query id to its ranking: a list of ``(unit_id, score)`` pairs
in rank order, best first. hierret owns that order, and it is trec_eval's:
scores descending, equal scores by unit id **descending** (see :func:`rank`;
trec_eval and pytrec_eval sort a run file that way before scoring it), so a
run never depends on dict order or on a sort's stability, and hierret's
metrics on a run equal trec_eval's on the same run file.

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
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["Qrels", "Ranking", "Run", "rank", "tie_keys"]

#: One query's ranked ``(unit_id, score)`` pairs, best first.
Ranking = list[tuple[str, float]]

#: Query id to :data:`Ranking`.
Run = dict[str, Ranking]

#: Query id to ``{unit_id: grade}``; a grade above 0 means relevant.
Qrels = dict[str, dict[str, int]]


def rank(scores: Mapping[str, float], tolerance: float = 0.0) -> Ranking:
    """Rank units by score, descending, breaking ties by unit id descending (trec_eval's rule).

    Parameters
    ----------
    scores : Mapping[str, float]
        Unit id to score.
    tolerance : float, default 0.0
        Scores closer than this count as tied. Float32 scores move in their
        last bits with the CPU's kernels (another CPU model, another code
        path), so two units whose scores differ by less than that variation
        are ordered by chance of hardware unless they are tied: with a
        tolerance, units are grouped by walking the scores downwards, a unit
        joining the group above when its score is within ``tolerance`` of
        the next higher one (so a group may span more than ``tolerance``),
        every unit takes its group's highest score, and each group is
        ordered by id, as exact ties are. The ranking then changes with the
        CPU only when a gap between two scores lies within the variation of
        ``tolerance`` itself, instead of whenever two scores are that close.

    Returns
    -------
    Ranking
        ``(unit_id, score)`` pairs in rank order (with a tolerance, each
        unit's score is its group's).

    Raises
    ------
    ValueError
        If a score is NaN (it has no place in an order), or the tolerance is
        negative or not finite.

    Examples
    --------
    >>> rank({"b": 1.0, "a": 1.0, "c": 2.5})
    [('c', 2.5), ('b', 1.0), ('a', 1.0)]

    Two scores 3e-7 apart are a tie at a tolerance of 1e-5, ordered by id:

    >>> rank({"a": 0.5000003, "b": 0.5, "c": 0.4}, tolerance=1e-5)
    [('b', 0.5000003), ('a', 0.5000003), ('c', 0.4)]
    """
    nan = [uid for uid, s in scores.items() if math.isnan(s)]
    if nan:
        raise ValueError(f"cannot rank NaN scores (units {sorted(nan)[:5]})")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    by_id = sorted(scores.items(), key=lambda item: item[0], reverse=True)
    ranked = sorted(by_id, key=lambda item: -item[1])  # stable: equal scores keep id order
    if tolerance == 0 or len(ranked) < 2:
        return ranked
    grouped, leader, previous = [], ranked[0][1], ranked[0][1]
    for uid, score in ranked:
        if previous - score > tolerance:
            leader = score
        grouped.append((uid, leader))
        previous = score
    return rank(dict(grouped))  # each group now shares one score: ordered by id


def tie_keys(ids: Sequence[str]) -> NDArray[np.int64]:
    """Each unit's place in :func:`rank`'s tie order, for rankers that sort arrays.

    Sorting by ``(-score, tie_keys(ids)[i])`` orders positions ``i`` exactly as
    :func:`rank` orders the ids (so BM25 over a matrix of documents follows
    the one rule without building dicts).

    Examples
    --------
    >>> tie_keys(["a", "c", "b"]).tolist()  # c first, then b, then a
    [2, 0, 1]
    """
    order = sorted(range(len(ids)), key=lambda i: ids[i], reverse=True)
    keys = np.empty(len(ids), dtype=np.int64)
    keys[order] = np.arange(len(ids))
    return keys
