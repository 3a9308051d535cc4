"""Re-score candidates with a second bi-encoder: cosine of its query and passage vectors."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import cast

import numpy as np
from numpy.typing import NDArray

from hierret.encoders.base import Encoder
from hierret.search.rerank.base import QueryClock, Reranker, RerankerIdentity

__all__ = ["EncoderReranker"]

log = logging.getLogger(__name__)


class EncoderReranker(Reranker):
    """Cosine between a query and each candidate under another encoder.

    Meant for a second, different encoder over a first stage (e.g. E5 over
    MiniLM): with the first stage's own encoder on a dense first stage it only
    reproduces the first-stage order. Query and passage prefixes are the
    encoder's (its :class:`~hierret.encoders.EncoderIdentity`). Pass a
    :class:`~hierret.encoders.cache.CachedEncoder` to embed each candidate once across
    queries and runs; this class keeps no cache of its own. Texts longer than
    the encoder's window are cut by the model, as in the dense first stage.

    Parameters
    ----------
    encoder : Encoder
        Any hierret encoder (unit vectors, so the dot product is the cosine).
    name : str, optional
        Label; defaults to ``"encoder:<model name>"``.
    cache_queries : bool, default True
        With ``False``, queries bypass a :class:`~hierret.encoders.cache.CachedEncoder`
        while candidates still come from the cache. Use it when timing: a query
        arrives once in a deployment, so a cached query vector would hide the
        query-time encoding from :meth:`~hierret.search.searcher.Searcher.trace`'s
        latency. Each distinct query is then embedded once and the time it took
        is charged to every later use (:class:`~hierret.search.rerank.QueryClock`).

    Examples
    --------
    >>> from hierret.encoders import HashEncoder
    >>> rr = EncoderReranker(HashEncoder(dimension=32))
    >>> s = rr.score("cat on a mat", ["quantum flux", "the cat sat on the mat"])
    >>> s.shape, bool(s[1] > s[0])
    ((2,), True)
    >>> rr.identity.kind
    'encoder'
    """

    def __init__(
        self, encoder: Encoder, name: str | None = None, *, cache_queries: bool = True
    ) -> None:
        from hierret.encoders.cache import CachedEncoder

        self.encoder = encoder
        self.cache_queries = cache_queries
        query_encoder = encoder
        while not cache_queries and isinstance(query_encoder, CachedEncoder):
            query_encoder = query_encoder.encoder
        self._query_encoder = query_encoder
        self.query_clock: QueryClock[NDArray[np.float32]] | None = (
            None if cache_queries else QueryClock()
        )
        ident = encoder.identity
        self._identity = RerankerIdentity(
            name=name or f"encoder:{ident.name}",
            kind="encoder",
            model=ident.describe(),
            settings=f"identity key {ident.key()}",
        )

    @property
    def identity(self) -> RerankerIdentity:
        return self._identity

    def prepare(self, candidates: Sequence[str]) -> None:
        """Embed ``candidates`` as passages ahead of queries, when the encoder can keep them.

        Only a :class:`~hierret.encoders.cache.CachedEncoder` keeps vectors between
        calls; with any other encoder there is nowhere to put them, and nothing
        is done (a message is logged).
        """
        from hierret.encoders.cache import CachedEncoder

        if isinstance(candidates, str):
            raise TypeError("candidates must be a sequence of strings, not a single str")
        if not isinstance(self.encoder, CachedEncoder):
            log.info("%s: the encoder keeps no vectors; nothing to prepare", self._identity.name)
            return
        if candidates:
            self.encoder.encode_passages(list(candidates))

    def encode_query(self, query: str) -> NDArray[np.float32]:
        """``query``'s vector as :meth:`score` uses it: embedded alone, past the vector
        cache when ``cache_queries`` is ``False``."""
        return cast(NDArray[np.float32], self._query_encoder.encode_queries([query])[0])

    def score(self, query: str, candidates: Sequence[str]) -> NDArray[np.float64]:
        """Cosine of the query vector with each candidate's passage vector."""
        if isinstance(candidates, str):
            raise TypeError("candidates must be a sequence of strings, not a single str")
        if len(candidates) == 0:
            return np.zeros(0, dtype=np.float64)
        if self.query_clock is None:
            q = self._query_encoder.encode_queries([query])[0].astype(np.float64)
        else:  # timed once per distinct query, charged on reuse (see QueryClock)
            q = self.query_clock.encode(query, lambda: self.encode_query(query)).astype(np.float64)
        passages = self.encoder.encode_passages(list(candidates)).astype(np.float64)
        return np.asarray(passages @ q, dtype=np.float64)
