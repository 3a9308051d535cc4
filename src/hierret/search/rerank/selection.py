"""Which reranked candidates survive: a score threshold with a floor and a ceiling.

One :class:`Selection` is applied, unchanged, after every reranker, so arms
that differ in their reranker differ in nothing else. Its threshold is on the
reranker's own score scale: a cross-encoder's sigmoid probability, a MaxSim
sum of cosines and a bi-encoder cosine are not comparable, so each reranker
needs its own ``min_score``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hierret.search.runs import Ranking, rank

__all__ = ["Selection"]


@dataclass(frozen=True)
class Selection:
    """Keep candidates scoring ``>= min_score``, never fewer than ``min_keep``, at most ``top_k``.

    The ranking is first put in hierret's order (score descending, ties by unit
    id descending, as :func:`~hierret.search.runs.rank` and trec_eval do); the result is
    always a prefix of that order, so it is decided by the scores alone, never
    by the order the candidates came in.

    Parameters
    ----------
    min_score : float, optional
        Candidates with ``score >= min_score`` pass (equality passes). ``None``:
        no threshold, every candidate passes.
    min_keep : int, default 0
        Floor: the best ``min_keep`` candidates are kept even when they score
        below ``min_score``. Only matters with a threshold.
    top_k : int, optional
        Ceiling: at most ``top_k`` candidates are kept. ``None``: no ceiling.

    Raises
    ------
    ValueError
        ``min_keep < 0``, ``top_k < 1``, ``min_keep > top_k`` (the floor above
        the ceiling contradicts itself), or a NaN ``min_score``.

    Notes
    -----
    With ``n`` candidates of which ``p`` pass the threshold, the selection keeps
    the first ``min(max(p, min(min_keep, n)), top_k)`` of them in rank order:

    * fewer candidates than ``min_keep``: all of them are returned;
    * all below ``min_score``: the best ``min_keep`` are returned (none when
      ``min_keep`` is 0, which gives an empty ranking);
    * ties at a cut (``top_k`` or ``min_keep``): the candidate with the larger
      unit id is kept, since ties are ordered by id descending;
    * ``Selection()`` (no threshold, no ceiling) keeps everything and only
      re-orders; a ranking that lists a unit twice or holds a NaN score raises
      :class:`ValueError`.

    Examples
    --------
    The source study's shipped profile (0.5 / 3 / 10):

    >>> sel = Selection(min_score=0.5, min_keep=3, top_k=10)
    >>> sel.select([("a", 0.9), ("b", 0.7), ("c", 0.2), ("d", 0.1)])
    [('a', 0.9), ('b', 0.7), ('c', 0.2)]
    >>> sel.select([("a", 0.3), ("b", 0.2)])  # fewer than min_keep: all of them
    [('a', 0.3), ('b', 0.2)]
    >>> Selection(top_k=2).select([("b", 1.0), ("a", 1.0), ("c", 1.0)])  # tie: by id
    [('c', 1.0), ('b', 1.0)]
    >>> sel.describe()
    'min_score=0.5, min_keep=3, top_k=10'
    """

    min_score: float | None = None
    min_keep: int = 0
    top_k: int | None = None

    def __post_init__(self) -> None:
        if self.min_keep < 0:
            raise ValueError(f"min_keep must be at least 0, got {self.min_keep}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be at least 1 or None, got {self.top_k}")
        if self.top_k is not None and self.min_keep > self.top_k:
            raise ValueError(
                f"min_keep ({self.min_keep}) cannot exceed top_k ({self.top_k}): "
                "the floor would be above the ceiling"
            )
        if self.min_score is not None and math.isnan(self.min_score):
            raise ValueError("min_score must be a number or None, not NaN")

    @property
    def keeps_all(self) -> bool:
        """Whether this selection only re-orders (no threshold, no ceiling)."""
        return self.min_score is None and self.top_k is None

    def cutoff(self, scores: list[float]) -> int:
        """How many of ``scores`` (sorted descending) are kept.

        Examples
        --------
        >>> Selection(min_score=0.5, min_keep=1, top_k=3).cutoff([0.9, 0.8, 0.6, 0.55])
        3
        >>> Selection(min_score=0.5, min_keep=1).cutoff([0.4, 0.3])
        1
        """
        n = len(scores)
        passing = n if self.min_score is None else sum(s >= self.min_score for s in scores)
        keep = max(passing, min(self.min_keep, n))
        return keep if self.top_k is None else min(keep, self.top_k)

    def select(self, ranking: Ranking) -> Ranking:
        """The kept candidates, best first (see the class notes for edge cases).

        Parameters
        ----------
        ranking : Ranking
            ``(unit_id, score)`` pairs, in any order.

        Returns
        -------
        Ranking
            A prefix of the ranking in hierret's order.
        """
        scores = dict(ranking)
        if len(scores) != len(ranking):
            raise ValueError("the ranking lists a unit more than once")
        ordered = rank(scores)
        return ordered[: self.cutoff([s for _, s in ordered])]

    def describe(self) -> str:
        """One line for tables and logs."""
        return f"min_score={self.min_score}, min_keep={self.min_keep}, top_k={self.top_k}"
