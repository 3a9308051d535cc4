"""Fusing rankings: reciprocal rank fusion and min-max score blending.

Examples
--------
>>> dense = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
>>> bm25 = [("b", 12.0), ("c", 3.0)]
>>> [u for u, _ in rrf([dense, bm25], rrf_k=60)]
['b', 'c', 'a']
>>> minmax_fuse(dense, bm25, weight=0.5)[0]
('b', 0.9375)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hierret._validate import check_count
from hierret.search.runs import Ranking, rank

__all__ = ["minmax_fuse", "minmax_normalize", "rrf"]


def rrf(rankings: Sequence[Ranking], rrf_k: int = 60, pool: int = 100) -> Ranking:
    """Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

    Each unit scores ``sum(1 / (rrf_k + rank))`` over the rankings that hold it
    in their top ``pool`` (rank counted from 1); ties are broken by unit id.

    Parameters
    ----------
    rankings : sequence of Ranking
        Rankings of the same query, best first.
    rrf_k : int, default 60
        The smoothing constant, an int >= 0.
    pool : int, default 100
        How many of each ranking take part (the candidate pool), an int >= 1.

    Raises
    ------
    TypeError
        ``rrf_k`` or ``pool`` is not an int (``2.5``, ``"3"``, ``True``).
    ValueError
        ``rrf_k`` < 0 or ``pool`` < 1.

    Examples
    --------
    >>> rrf([[("a", 1.0)]], pool=-1)
    Traceback (most recent call last):
    ...
    ValueError: pool must be an int >= 1, got -1
    """
    rrf_k = check_count(rrf_k, "rrf_k", minimum=0)
    pool = check_count(pool, "pool")
    scores: dict[str, float] = {}
    for ranking in rankings:
        for r, (unit, _) in enumerate(ranking[:pool], start=1):
            scores[unit] = scores.get(unit, 0.0) + 1.0 / (rrf_k + r)
    return rank(scores)


def minmax_normalize(ranking: Ranking) -> dict[str, float]:
    """Scale a candidate pool's scores to [0, 1]; a constant pool scores 1.

    Examples
    --------
    >>> minmax_normalize([("a", 3.0), ("b", 1.0), ("c", 2.0)])
    {'a': 1.0, 'b': 0.0, 'c': 0.5}
    >>> minmax_normalize([("a", 0.4)])
    {'a': 1.0}
    """
    if not ranking:
        return {}
    values = [s for _, s in ranking]
    lo, hi = min(values), max(values)
    if hi == lo:
        return {u: 1.0 for u, _ in ranking}
    return {u: (s - lo) / (hi - lo) for u, s in ranking}


def minmax_fuse(a: Ranking, b: Ranking, weight: float) -> Ranking:
    """Blend two candidate pools after min-max normalising each within itself.

    A unit's fused score is ``(1 - weight) * a + weight * b`` with a missing
    leg counting 0, and the union is ranked (ties by id).

    Parameters
    ----------
    a, b : Ranking
        The two legs' candidates for one query (e.g. passages lifted to
        sections, and sections).
    weight : float
        Weight of ``b`` in [0, 1].
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight ({weight}) must lie in [0, 1]")
    na, nb = minmax_normalize(a), minmax_normalize(b)
    fused: Mapping[str, float] = {
        u: (1.0 - weight) * na.get(u, 0.0) + weight * nb.get(u, 0.0) for u in na.keys() | nb.keys()
    }
    return rank(fused)
