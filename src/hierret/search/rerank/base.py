"""The reranker interface and :func:`rerank`, which re-orders one ranking."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from hierret.search.runs import Ranking, rank

__all__ = ["QueryClock", "Reranker", "RerankerIdentity", "charged_seconds", "rerank"]

T = TypeVar("T")


@dataclass(frozen=True)
class RerankerIdentity:
    """What produced a reranker's scores.

    Parameters
    ----------
    name : str
        Short label for tables, e.g. ``"maxsim-minilm"``.
    kind : str
        ``"cross-encoder"``, ``"maxsim"``, ``"encoder"`` or a user's own kind.
    model : str
        The model, e.g. a hub id, a folder or an encoder's identity line.
    settings : str
        Anything else that changes the scores (activation, reduction, ...).

    Examples
    --------
    >>> RerankerIdentity("ce", "cross-encoder", "tiny", "activation=sigmoid").describe()
    'ce (cross-encoder: tiny; activation=sigmoid)'
    """

    name: str
    kind: str
    model: str
    settings: str = ""

    def describe(self) -> str:
        """One line for logs and tables."""
        tail = f"; {self.settings}" if self.settings else ""
        return f"{self.name} ({self.kind}: {self.model}{tail})"


class Reranker(ABC):
    """Scores candidate texts for a query; higher is better.

    Subclasses implement :attr:`identity` and :meth:`score`. Scores are on the
    reranker's own scale, so a :class:`~hierret.search.rerank.Selection` threshold
    chosen for one reranker does not transfer to another.
    """

    @property
    @abstractmethod
    def identity(self) -> RerankerIdentity:
        """What produced the scores (see :class:`RerankerIdentity`)."""

    @abstractmethod
    def score(self, query: str, candidates: Sequence[str]) -> NDArray[np.float64]:
        """One score per candidate, in input order, higher = better.

        Parameters
        ----------
        query : str
        candidates : sequence of str

        Returns
        -------
        ndarray of float64, shape (len(candidates),)
        """

    def prepare(self, candidates: Sequence[str]) -> None:  # noqa: B027 - a no-op by default
        """Do, before any query, the work that depends on the candidates alone.

        A deployment does this at index time: e.g. :class:`~hierret.search.rerank.MaxSimReranker`
        computes the candidates' token vectors, :class:`~hierret.search.rerank.EncoderReranker`
        their passage vectors. Afterwards the per-query time that
        :meth:`~hierret.search.searcher.Searcher.trace` records is the query-time work only.
        A cross-encoder reads query and candidate together, so it has nothing to
        prepare: the default does nothing.

        Parameters
        ----------
        candidates : sequence of str
            Texts that will be scored later.
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.identity.describe()})"


def _check_scores(scores: NDArray[np.float64], n: int, who: RerankerIdentity) -> None:
    if scores.shape != (n,):
        raise RuntimeError(f"{who.describe()} returned shape {scores.shape}, expected ({n},)")
    if not np.isfinite(scores).all():
        raise ValueError(f"{who.describe()} returned NaN or infinite scores")


def rerank(reranker: Reranker, query: str, ranking: Ranking, texts: Mapping[str, str]) -> Ranking:
    """Re-order the candidates of ``ranking`` by ``reranker``'s scores.

    The result holds exactly the same unit ids, each with its reranker score,
    ordered by :func:`~hierret.search.runs.rank` (score descending, ties by unit
    id). Nothing is dropped: dropping is :class:`~hierret.search.rerank.Selection`'s job.

    Parameters
    ----------
    reranker : Reranker
    query : str
        The query text.
    ranking : Ranking
        First-stage ``(unit_id, score)`` pairs; their scores are ignored.
    texts : Mapping[str, str]
        Unit id to the text the reranker reads.

    Returns
    -------
    Ranking

    Raises
    ------
    KeyError
        A candidate has no text in ``texts``.
    ValueError
        A unit is listed twice, or the reranker returns NaN or infinite scores.

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> from hierret.search.rerank import EncoderReranker
    >>> texts = {"a": "quantum flux", "b": "the cat sat on the mat"}
    >>> rr = EncoderReranker(HashEncoder(dimension=32))
    >>> [uid for uid, _ in rerank(rr, "cat on a mat", [("a", 2.0), ("b", 1.0)], texts)]
    ['b', 'a']
    """
    ids = [uid for uid, _ in ranking]
    if len(set(ids)) != len(ids):
        raise ValueError("the ranking lists a unit more than once")
    if not ids:
        return []
    missing = [uid for uid in ids if uid not in texts]
    if missing:
        raise KeyError(f"no text for {len(missing)} candidates, e.g. {missing[:3]}")
    scores = np.asarray(reranker.score(query, [texts[uid] for uid in ids]), dtype=np.float64)
    _check_scores(scores, len(ids), reranker.identity)
    return rank(dict(zip(ids, scores.tolist(), strict=True)))


class QueryClock(Generic[T]):
    """Query encodings kept in memory with the time each took, that time charged on reuse.

    A timed reranker must not hide a query's encoding behind a cache: in a
    deployment a question arrives once. But an experiment asks the same
    question of several first stages, and encoding it again for each only
    measures the same thing again (the encoders are deterministic). The clock
    encodes each distinct query once, timing it, and on every later use returns
    the same encoding and adds the time it took to :meth:`take`, which
    :meth:`hierret.search.searcher.Searcher.trace` adds to that query's latency
    (through :func:`charged_seconds`).

    Examples
    --------
    >>> clock = QueryClock()
    >>> clock.encode("why?", lambda: [1.0, 2.0])
    [1.0, 2.0]
    >>> clock.take()  # a first encoding is in the measured wall time itself
    0.0
    >>> clock.encode("why?", lambda: None)  # reused: its first time is charged
    [1.0, 2.0]
    >>> clock.take() >= 0.0, clock.take()
    (True, 0.0)

    An encoding measured before (:meth:`kept`, then :meth:`keep` on another
    clock) is charged on every use, its first included: its time is in no
    wall time measured now.

    >>> fresh = QueryClock()
    >>> fresh.keep("why?", [1.0, 2.0], 0.25)
    >>> fresh.encode("why?", lambda: None), fresh.take()
    ([1.0, 2.0], 0.25)
    >>> fresh.kept()
    {'why?': ([1.0, 2.0], 0.25)}
    """

    def __init__(self) -> None:
        self._kept: dict[str, tuple[T, float]] = {}
        self._charged = 0.0

    def keep(self, query: str, value: T, seconds: float) -> None:
        """Keep ``value`` as ``query``'s encoding, measured before in ``seconds``."""
        self._kept[query] = (value, float(seconds))

    def kept(self) -> dict[str, tuple[T, float]]:
        """Every kept encoding with the seconds it took, by query."""
        return dict(self._kept)

    def encode(self, query: str, compute: Callable[[], T]) -> T:
        """``compute()`` for ``query``: timed the first time, then kept and charged."""
        kept = self._kept.get(query)
        if kept is None:
            start = time.perf_counter()
            kept = self._kept[query] = (compute(), time.perf_counter() - start)
        else:
            self._charged += kept[1]
        return kept[0]

    def clear(self) -> None:
        """Forget every kept encoding (say, after an untimed warm-up call)."""
        self._kept.clear()
        self._charged = 0.0

    def take(self) -> float:
        """Seconds charged since the last call (and reset to zero)."""
        charged, self._charged = self._charged, 0.0
        return charged


def charged_seconds(reranker: Reranker) -> float:
    """Seconds ``reranker``'s :class:`QueryClock` charged since last asked (0 without one)."""
    clock = getattr(reranker, "query_clock", None)
    return clock.take() if isinstance(clock, QueryClock) else 0.0
