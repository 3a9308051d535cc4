"""Late interaction without training: MaxSim over an encoder's token vectors.

ColBERT (Khattab & Zaharia, SIGIR 2020) scores a document by matching every
query token with its most similar document token and summing those cosines::

    score(q, d) = Σ_i max_j cos(q_i, d_j)

ColBERT trains its encoder for this. Here the token vectors are those of an
off-the-shelf bi-encoder's transformer (the output before pooling), so the
method costs no training, only one forward pass per candidate, once: the
matrices are kept in memory and, for an encoder in a
:class:`~hierret.encoders.cache.CachedEncoder`, in its vector cache on disk, so a rerun
reads them instead (:class:`~hierret.encoders.cache.TokenIdentity` says what they depend on).

Examples
--------
Token matrices can come from anything that implements :class:`TokenEncoder`:

>>> class Table(TokenEncoder):
...     name = "table"
...     def encode_tokens(self, texts, role):
...         return [np.array({"q": [[1.0, 0.0]], "d": [[0.6, 0.8], [0.0, 1.0]]}[t])
...                 for t in texts]
>>> MaxSimReranker(Table()).score("q", ["d"]).round(6).tolist()
[0.6]
"""

from __future__ import annotations

import logging
import string
import unicodedata
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._quiet import quiet_import
from hierret.encoders.base import Encoder, Role, l2_normalize
from hierret.encoders.cache import CachedEncoder, TokenIdentity, VectorCache, can_store, text_keys
from hierret.search.rerank.base import QueryClock, Reranker, RerankerIdentity

__all__ = [
    "MaxSimReranker",
    "SentenceTransformerTokens",
    "TokenCacheInfo",
    "TokenEncoder",
    "sentence_transformer",
]

#: How the per-query-token maxima are combined: ColBERT's sum, or their mean.
Reduce = Literal["sum", "mean"]

_PUNCT = frozenset(string.punctuation)

log = logging.getLogger(__name__)

#: Version of :class:`SentenceTransformerTokens`' rules (which tokens are kept, how
#: long texts are split): change it when they change, and cached matrices are
#: recomputed.
_TOKEN_RULES = "st-tokens-v1"


def _is_punctuation(text: str) -> bool:
    """Whether every character is ASCII punctuation or in a Unicode ``P*`` category."""
    return bool(text) and all(
        ch in _PUNCT or unicodedata.category(ch).startswith("P") for ch in text
    )


class TokenEncoder(ABC):
    """Turns texts into token-vector matrices for :class:`MaxSimReranker`.

    Implement :meth:`encode_tokens`; :class:`MaxSimReranker` L2-normalises
    the rows and caches them, so implementations need not.
    """

    #: Label recorded in the reranker's identity.
    name: str = "tokens"

    @property
    def settings(self) -> str:
        """Anything besides :attr:`name` that changes the vectors (for the identity)."""
        return ""

    @property
    def identity(self) -> TokenIdentity | None:
        """Everything that decides the matrices, for keeping them on disk.

        ``None`` (the default) keeps them in memory only: :attr:`name` and
        :attr:`settings` need not say everything that changes them.
        """
        return None

    @abstractmethod
    def encode_tokens(self, texts: Sequence[str], role: Role) -> list[NDArray[Any]]:
        """One ``(n_tokens, d)`` matrix per text, the tokens to match (none may be empty)."""


def sentence_transformer(encoder: Encoder) -> Any:
    """The ``SentenceTransformer`` behind ``encoder``, unwrapping ``CachedEncoder`` layers.

    What token vectors are taken from (:class:`SentenceTransformerTokens`,
    :class:`hierret.search.vectors.late.LateChunker`).

    Raises
    ------
    TypeError
        ``encoder`` exposes no sentence-transformers model.
    """
    with quiet_import():
        from sentence_transformers import SentenceTransformer

    current: Any = encoder
    for _ in range(8):
        for attr in ("model", "_model"):
            candidate = getattr(current, attr, None)
            if isinstance(candidate, SentenceTransformer):
                return candidate
        inner = getattr(current, "encoder", None)
        if not isinstance(inner, Encoder):
            break
        current = inner
    raise TypeError(
        f"{type(encoder).__name__} has no sentence-transformers model to take token vectors "
        "from; use a SentenceTransformerEncoder (optionally in a CachedEncoder) or pass a "
        "TokenEncoder"
    )


class SentenceTransformerTokens(TokenEncoder):
    """Token vectors of a :class:`~hierret.encoders.SentenceTransformerEncoder`'s transformer.

    Each text gets the encoder's prefix for its role (e.g. ``"query: "``), goes
    through the transformer, and the last hidden state of every token is taken
    (sentence-transformers' ``token_embeddings``: before pooling and
    normalisation). Then these tokens are **dropped**:

    * special tokens the tokenizer adds (``[CLS]``, ``[SEP]``) and padding;
    * the prefix's tokens (any token starting inside the prefix);
    * with ``skip_punctuation`` (default), tokens made only of punctuation, on
      both sides. (ColBERT masks punctuation on the document side only and
      keeps trained ``[Q]``/``[D]`` markers and ``[MASK]`` query augmentation;
      none of those mean anything to an untrained encoder.)

    A text longer than the encoder's window is not cut: it is split with
    :meth:`~hierret.encoders.Encoder.token_window_spans`, each piece encoded
    on its own, and the pieces' tokens are joined (MaxSim over the union).

    Parameters
    ----------
    encoder : Encoder
        A ``SentenceTransformerEncoder``, possibly inside ``CachedEncoder``
        (its vector cache is not used: it holds pooled vectors only).
    skip_punctuation : bool, default True
    batch_size : int, optional
        Pieces per forward pass; the encoder's ``batch_size`` (else 32).

    Raises
    ------
    TypeError
        ``encoder`` exposes no sentence-transformers model.
    """

    def __init__(
        self, encoder: Encoder, skip_punctuation: bool = True, batch_size: int | None = None
    ) -> None:
        self.encoder = encoder
        with _clock.stage("models"):
            self._model = sentence_transformer(encoder)
        self._tokenizer = self._model.tokenizer
        if not getattr(self._tokenizer, "is_fast", False):
            raise TypeError("token vectors need a fast (Rust) tokenizer for character offsets")
        self.skip_punctuation = skip_punctuation
        self.batch_size = batch_size or int(getattr(encoder, "batch_size", 32))
        self.name = encoder.identity.describe()

    @property
    def settings(self) -> str:
        return f"skip_punctuation={self.skip_punctuation}"

    @property
    def identity(self) -> TokenIdentity:
        """The encoder's identity (weights, window, prefixes, engine) and these rules."""
        rules = f"{_TOKEN_RULES}: {self.settings}, windows joined, specials and prefix dropped"
        return TokenIdentity(self.encoder.identity, rules)

    def _keep(self, text: str, prefix_len: int) -> tuple[list[int], list[bool]]:
        enc = self._tokenizer(
            text,
            add_special_tokens=True,
            return_offsets_mapping=True,
            truncation=False,
            verbose=False,
        )
        keep = []
        for s, e in enc["offset_mapping"]:
            real = e > s and s >= prefix_len  # added special tokens have empty spans
            keep.append(real and not (self.skip_punctuation and _is_punctuation(text[s:e])))
        return list(enc["input_ids"]), keep

    def encode_tokens(self, texts: Sequence[str], role: Role) -> list[NDArray[np.float32]]:
        prefix = self.encoder.identity.prefix(role)
        pieces: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(texts):
            for s, e in self.encoder.token_window_spans(text, role=role):
                pieces.append(prefix + text[s:e])
                owner.append(i)
        dim = self.encoder.identity.dimension
        parts: list[list[NDArray[np.float32]]] = [[] for _ in texts]
        group = 8 * self.batch_size  # bounds the padded outputs held at once
        for g in range(0, len(pieces), group):
            outputs = self._model.encode(
                pieces[g : g + group],
                output_value=None,
                batch_size=self.batch_size,
                show_progress_bar=False,
            )
            for piece, i, out in zip(
                pieces[g : g + group], owner[g : g + group], outputs, strict=True
            ):
                ids, keep = self._keep(piece, len(prefix))
                mask = out["attention_mask"].bool()
                model_ids = out["input_ids"][mask].tolist()
                if model_ids != ids:
                    raise RuntimeError(
                        f"token mismatch for a {len(piece)}-character text: the model read "
                        f"{len(model_ids)} tokens, the tokenizer gives {len(ids)} "
                        "(truncated or differently tokenised)"
                    )
                vectors = out["token_embeddings"][mask].float().cpu().numpy()
                parts[i].append(vectors[np.asarray(keep, dtype=bool)])
        return [
            np.concatenate(p).astype(np.float32) if p else np.zeros((0, dim), np.float32)
            for p in parts
        ]


def _disk_cache(
    tokens: TokenEncoder, cache: VectorCache | Literal["encoder"] | None
) -> tuple[VectorCache | None, TokenIdentity | None]:
    """The disk cache :class:`MaxSimReranker` keeps ``tokens``' matrices in, and their identity."""
    ident = tokens.identity
    if isinstance(cache, VectorCache):
        if ident is None:
            raise ValueError(
                f"{type(tokens).__name__} declares no identity, so its token matrices "
                "cannot be kept on disk; give it an `identity` (a TokenIdentity), or pass "
                "cache=None"
            )
        return cache, ident
    if cache is None or ident is None:
        return None, ident
    if cache != "encoder":
        raise ValueError(f"cache must be a VectorCache, 'encoder' or None, got {cache!r}")
    current = getattr(tokens, "encoder", None)
    for _ in range(8):  # the CachedEncoder among the encoder's layers
        if isinstance(current, CachedEncoder):
            return current.cache, ident
        current = getattr(current, "encoder", None)
    return None, ident


@dataclass(frozen=True)
class TokenCacheInfo:
    """Hits, misses and size of a :class:`MaxSimReranker`'s token cache."""

    hits: int
    misses: int
    size: int
    max_size: int | None


class MaxSimReranker(Reranker):
    """ColBERT-style late interaction over an untrained encoder's token vectors.

    For query token vectors ``q_1..q_m`` and candidate token vectors
    ``d_1..d_n``, each L2-normalised::

        score = Σ_i max_j q_i · d_j        (reduce="sum", ColBERT's)
        score = (1/m) Σ_i max_j q_i · d_j  (reduce="mean")

    The sum grows with the query's length, so a fixed ``min_score`` means
    different things for short and long queries; ``"mean"`` (in [-1, 1])
    does not, and orders one query's candidates identically. A candidate with
    no tokens left (empty, or only punctuation) scores 0, as does every
    candidate of a query with no tokens.

    Token matrices are kept in memory per (role, text), least recently used
    first out, so a candidate shared by several queries is encoded once (a
    new reranker starts with it empty). Behind that, ``cache`` keeps them on disk
    across runs, keyed by the token encoder's
    :attr:`~TokenEncoder.identity`, role and text: with the default, an
    encoder in a :class:`~hierret.encoders.cache.CachedEncoder` (as
    :func:`hierret.study.available.encoders` gives) has its token matrices kept in
    that encoder's vector cache, so a rerun reads them instead of running the
    model. Each lookup that misses in memory is an ``embed <model> tokens``
    stage of :mod:`hierret.publish.timing`, which counts the texts encoded
    (``embedded``) and read from disk (``cached``). At 384 float32 dimensions
    a 900-character candidate takes about 0.3 MB, in memory and on disk.

    Scoring is one small matrix product per candidate. On a machine with few,
    busy cores, a multi-threaded BLAS under NumPy can make these products a
    hundred times slower than one thread (measured: 150 ms against 1.5 ms for
    ten candidates on 2 loaded cores); set ``OPENBLAS_NUM_THREADS=1`` (or the
    variable of your BLAS) before NumPy loads when timing.

    Parameters
    ----------
    encoder : Encoder or TokenEncoder
        An encoder is wrapped in :class:`SentenceTransformerTokens` with its
        defaults; pass a ``SentenceTransformerTokens`` (or any
        :class:`TokenEncoder`) for other settings.
    reduce : {"sum", "mean"}, default "sum"
    cache_size : int or None, default 8192
        Most texts kept in memory; ``None`` for no limit, 0 for none.
    cache_queries : bool, default True
        Whether query token matrices are cached too. Pass ``False`` when timing:
        a query arrives once in a deployment, so a cached query would hide the
        query-time encoding from :meth:`~hierret.search.searcher.Searcher.trace`'s latency
        (e.g. when several profiles run the same questions). Without the cache
        each distinct query is encoded once and the time it took is charged to
        every later use (:class:`~hierret.search.rerank.QueryClock`).
    name : str, optional
        Label; defaults to ``"maxsim:<model name>"``.
    cache : VectorCache, "encoder" or None, default "encoder"
        Where token matrices are kept on disk: ``"encoder"``, the vector cache
        of the :class:`~hierret.encoders.cache.CachedEncoder` that ``encoder`` is (or
        wraps), none when it is in none or its token encoder declares no
        :attr:`~TokenEncoder.identity`; a :class:`~hierret.encoders.cache.VectorCache`;
        or ``None``, memory only (to time a cold start). A cache that cannot be
        written is read, and what is computed is returned unstored, with one
        :class:`~hierret.encoders.cache.CacheNotWritableWarning`.

    Raises
    ------
    ValueError
        A bad ``reduce`` or ``cache_size``, or a ``VectorCache`` given for a
        token encoder without an identity.

    Examples
    --------
    See the module docstring for a hand-checkable example; with a real model:

    >>> from hierret.encoders import load_encoder
    >>> rr = MaxSimReranker(load_encoder("minilm"))
    >>> scores = rr.score("what do cats do?", ["Cats purr.", "Dogs bark."])
    >>> scores.shape, bool(scores[0] > scores[1])  # the cat passage first
    ((2,), True)
    """

    def __init__(
        self,
        encoder: Encoder | TokenEncoder,
        *,
        reduce: Reduce = "sum",
        cache_size: int | None = 8192,
        cache_queries: bool = True,
        name: str | None = None,
        cache: VectorCache | Literal["encoder"] | None = "encoder",
    ) -> None:
        if reduce not in ("sum", "mean"):
            raise ValueError(f"reduce must be 'sum' or 'mean', got {reduce!r}")
        if cache_size is not None and cache_size < 0:
            raise ValueError(f"cache_size must be at least 0 or None, got {cache_size}")
        tokens = (
            encoder if isinstance(encoder, TokenEncoder) else SentenceTransformerTokens(encoder)
        )
        self.tokens = tokens
        self.reduce = reduce
        self.cache_size = cache_size
        self.cache_queries = cache_queries
        self.query_clock: QueryClock[NDArray[np.float32]] = QueryClock()
        self._cache: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        self._hits = 0
        self._misses = 0
        self.disk, self._token_identity = _disk_cache(tokens, cache)
        ident = self._token_identity
        self._label = ident.label() if ident else f"{tokens.name.split(' (')[0]} tokens"
        self._warned = False
        settings = ", ".join(s for s in (f"reduce={reduce}", tokens.settings) if s)
        self._identity = RerankerIdentity(
            name=name or f"maxsim:{tokens.name.split(' (')[0]}",
            kind="maxsim",
            model=tokens.name,
            settings=settings,
        )

    @property
    def identity(self) -> RerankerIdentity:
        return self._identity

    def prepare(self, candidates: Sequence[str]) -> None:
        """Compute and cache the token vectors of ``candidates`` (their passage role).

        With a bounded ``cache_size`` smaller than the number of texts, the
        least recently used ones are dropped again; use ``cache_size=None`` to
        keep them all.
        """
        if isinstance(candidates, str):
            raise TypeError("candidates must be a sequence of strings, not a single str")
        self.token_vectors(list(dict.fromkeys(candidates)), "passage")

    def _cache_info(self) -> TokenCacheInfo:
        """Hits, misses and current size of the in-memory token cache."""
        return TokenCacheInfo(self._hits, self._misses, len(self._cache), self.cache_size)

    def token_vectors(
        self, texts: Sequence[str], role: Role = "passage"
    ) -> list[NDArray[np.float32]]:
        """L2-normalised token matrices, one per text, from the cache when there.

        Parameters
        ----------
        texts : sequence of str
            Queries or candidate texts, one matrix each.
        role : {"passage", "query"}
            Which prefix the model puts before each text.

        Returns
        -------
        list of ndarray of float32, shape (n_tokens_i, d)
        """
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not a single str")
        found: dict[str, NDArray[np.float32]] = {}
        for text in texts:
            hit = self._cache.get((role, text))
            if hit is not None:
                self._cache.move_to_end((role, text))
                found[text] = hit
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        self._hits += len(texts) - len(missing)
        self._misses += len(missing)
        if missing:
            for text, normed in zip(missing, self._fetch(missing, role), strict=True):
                found[text] = normed
                self._store((role, text), normed)
        return [found[t] for t in texts]

    def _fetch(self, texts: list[str], role: Role) -> list[NDArray[np.float32]]:
        """The matrices of ``texts`` from the disk cache, encoding (and storing) the rest."""
        if self.disk is None or self._token_identity is None:
            return self._encode(texts, role)
        ident, disk = self._token_identity, self.disk
        with _clock.stage(f"embed {self._label}"):
            keys = text_keys(ident, role, texts)
            stored = disk.get_matrices(ident, keys)
            todo = [i for i, m in enumerate(stored) if m is None]
            _clock.count(self._label, cached=len(texts) - len(todo))
            if not todo:  # a damaged shard may have been skipped: repair it, if we may
                try:
                    disk.repair(ident)
                except OSError as err:  # a read-only cache: the damage is skipped each time
                    log.debug("token cache: could not repair %s (%s)", disk, err)
                return cast(list[NDArray[np.float32]], stored)
            store = can_store(disk, ident, warn=not self._warned, what="Token matrices")
            self._warned |= not store
            fresh = self._encode([texts[i] for i in todo], role)
            if store:
                disk.put_matrices(ident, [keys[i] for i in todo], fresh)
            for i, matrix in zip(todo, fresh, strict=True):
                stored[i] = matrix
            return cast(list[NDArray[np.float32]], stored)

    def _encode(self, texts: list[str], role: Role) -> list[NDArray[np.float32]]:
        """Fresh L2-normalised token matrices (read-only), bypassing every cache."""
        with _clock.stage(f"embed {self._label}"):
            _clock.count(self._label, embedded=len(texts))
            fresh = self.tokens.encode_tokens(texts, role)
        if len(fresh) != len(texts):
            raise RuntimeError(
                f"{type(self.tokens).__name__} returned {len(fresh)} matrices "
                f"for {len(texts)} texts"
            )
        out = []
        for raw in fresh:
            matrix = np.asarray(raw)
            if matrix.ndim != 2:
                raise ValueError(f"token matrices must be 2-d, got shape {matrix.shape}")
            normed = l2_normalize(matrix) if len(matrix) else matrix.astype(np.float32)
            normed.setflags(write=False)
            out.append(normed)
        return out

    def _store(self, key: tuple[str, str], value: NDArray[np.float32]) -> None:
        if self.cache_size == 0:
            return
        self._cache[key] = value
        self._cache.move_to_end(key)
        while self.cache_size is not None and len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def encode_query(self, query: str) -> NDArray[np.float32]:
        """``query``'s token matrix, fresh (past every cache), as an uncached
        :meth:`score` uses it."""
        return self._encode([query], "query")[0]

    @property
    def token_identity(self) -> TokenIdentity | None:
        """What names the token matrices in the vector cache (``None``: not cacheable)."""
        return self._token_identity

    def score(self, query: str, candidates: Sequence[str]) -> NDArray[np.float64]:
        """MaxSim of the query's token vectors against each candidate's."""
        if isinstance(candidates, str):
            raise TypeError("candidates must be a sequence of strings, not a single str")
        if len(candidates) == 0:
            return np.zeros(0, dtype=np.float64)
        if self.cache_queries:
            q = self.token_vectors([query], "query")[0].astype(np.float64)
        else:  # timed once per distinct query, charged on reuse (see QueryClock)
            kept = self.query_clock.encode(query, lambda: self.encode_query(query))
            q = kept.astype(np.float64)
        out = np.zeros(len(candidates), dtype=np.float64)
        if len(q) == 0:
            return out
        for i, d in enumerate(self.token_vectors(candidates, "passage")):
            if len(d):
                if d.shape[1] != q.shape[1]:
                    raise ValueError(
                        f"query tokens have {q.shape[1]} dimensions, candidate tokens {d.shape[1]}"
                    )
                out[i] = float((q @ d.T.astype(np.float64)).max(axis=1).sum())
        if self.reduce == "mean":
            out /= len(q)
        return out
