"""Late chunking: passage vectors pooled from token vectors that saw their context.

Günther et al. (2024, arXiv 2409.04701) run the encoder over a long text
first and pool each chunk's vector from the token vectors inside the chunk's
span, so a chunk's vector has read its neighbours. With a short-window encoder
(MiniLM reads 256 tokens) this module uses the paper's long-text variant:

1. **Contexts.** Each section's own span (heading to the next heading,
   :meth:`~hierret.structure.hierarchy.Section.unit`) is one context; the sections
   tile their document, so every token of a passage belongs to exactly one
   context (a passage that straddles two sections takes its tokens from both).
2. **Windows.** A context's tokens (the tokenizer's, no special tokens) are
   cut into overlapping windows of the model's length (:func:`plan_windows`:
   ``window`` minus the special and prefix tokens, consecutive windows
   sharing ``overlap`` tokens), each window run through the transformer
   with its ``[CLS]``/``[SEP]``.
3. **Each token's vector** is taken from the window where it has the most
   context: the one maximising the smaller of its distances to the window's
   two edges (:func:`best_windows`; ties: the earlier window).
4. **Passage vectors** are the mean of the token vectors whose character
   start lies in the passage's span (the tokenizer's offset mapping),
   L2-normalised as every vector of the package is
   (:func:`~hierret.encoders.l2_normalize`).

Same passages, same evidence, same targets as ordinary passages: only the
vectors differ. :class:`LateChunker` records for every passage how much
context it received (tokens before its first token and after its last one
within their windows) and caches the vectors through
:class:`~hierret.encoders.cache.VectorCache` under an identity that names the method
(:attr:`LateChunker.identity`), never mixed with ordinary passage vectors.
Token vectors come from the same sentence-transformers model the MaxSim
reranker reads (:func:`hierret.search.rerank.maxsim.sentence_transformer`).

Examples
--------
>>> plan_windows(10, budget=4, overlap=2)
[(0, 4), (2, 6), (4, 8), (6, 10)]
>>> chosen, before, after = best_windows(10, plan_windows(10, 4, 2))
>>> chosen.tolist(), before.tolist(), after.tolist()
([0, 0, 0, 1, 1, 2, 2, 3, 3, 3], [0, 1, 2, 1, 2, 1, 2, 1, 2, 3], [3, 2, 1, 2, 1, 2, 1, 2, 1, 0])
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._validate import check_count
from hierret.encoders.base import Encoder, EncoderIdentity, l2_normalize
from hierret.encoders.cache import VectorCache, text_keys
from hierret.search.rerank.maxsim import sentence_transformer
from hierret.search.vectors.levels import text_units
from hierret.structure.hierarchy import Hierarchy

__all__ = [
    "LateChunker",
    "LateVectors",
    "TokenVectors",
    "best_windows",
    "plan_windows",
]


def plan_windows(n: int, budget: int, overlap: int) -> list[tuple[int, int]]:
    """Token windows ``[start, end)`` of at most ``budget`` tokens over ``n`` tokens.

    One window when ``n <= budget``; else windows start every
    ``budget - overlap`` tokens and the last one ends at ``n`` (it may share
    more than ``overlap`` tokens with the one before).

    Raises
    ------
    ValueError
        ``overlap`` not below ``budget``.

    Examples
    --------
    >>> plan_windows(3, 4, 2), plan_windows(7, 4, 1)
    ([(0, 3)], [(0, 4), (3, 7)])
    """
    if not 0 <= overlap < budget:
        raise ValueError(
            f"overlap must be in [0, budget={budget}), got {overlap}: "
            "lower the overlap or use a longer window"
        )
    if n <= budget:
        return [(0, n)]
    starts = [*list(range(0, n - budget, budget - overlap)), n - budget]
    return [(s, s + budget) for s in dict.fromkeys(starts)]


def best_windows(
    n: int, windows: Sequence[tuple[int, int]]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """For each of ``n`` tokens, the window where it has the most context.

    Returns
    -------
    chosen : ndarray of int
        Index of the window maximising ``min(before, after)`` (ties: the earlier).
    before, after : ndarray of int
        Tokens of the chosen window before and after the token.
    """
    i = np.arange(n)[:, None]
    starts = np.array([s for s, _ in windows])[None, :]
    ends = np.array([e for _, e in windows])[None, :]
    inside = (i >= starts) & (i < ends)
    room = np.where(inside, np.minimum(i - starts, ends - 1 - i), -1)
    chosen = room.argmax(axis=1)
    pick = np.arange(n)
    return chosen, (i[:, 0] - starts[0, chosen]), (ends[0, chosen] - 1 - pick)


@dataclass(frozen=True)
class TokenVectors:
    """One context's tokens: character offsets, vectors, and the context each saw.

    Attributes
    ----------
    offsets : ndarray of int, shape (n, 2)
        Character span of each token within the context text.
    vectors : ndarray of float32, shape (n, d), or None
        Each token's vector from its chosen window (``None``: not computed).
    before, after : ndarray of int, shape (n,)
        Tokens before / after it within that window.
    n_windows : int
    """

    offsets: NDArray[np.int64]
    vectors: NDArray[np.float32] | None
    before: NDArray[np.int64]
    after: NDArray[np.int64]
    n_windows: int


@dataclass(frozen=True)
class LateVectors:
    """Late-chunked passage vectors of one hierarchy (:meth:`LateChunker.passage_vectors`).

    Attributes
    ----------
    ids : list of str
        Passages with text, in ``hierarchy.passages`` order.
    vectors : ndarray of float32, shape (len(ids), d)
    context : DataFrame
        One row per passage (index ``passage``): ``tokens`` pooled,
        ``before``/``after`` (context tokens before its first token and after
        its last one, within their windows), ``windows`` (of its contexts),
        ``cached`` (vector read from the cache).
    """

    ids: list[str]
    vectors: NDArray[np.float32]
    context: pd.DataFrame

    def summary(self) -> dict[str, float]:
        """Context received, over the passages: means, and the shares with none and pooled.

        ``alone`` is the share of passages that saw no token outside
        themselves (their window held nothing else); ``long`` the share whose
        section took more than one window.
        """
        c = self.context
        return {
            "passages": len(c),
            "tokens": float(c["tokens"].mean()),
            "before": float(c["before"].mean()),
            "after": float(c["after"].mean()),
            "alone": float(((c["before"] == 0) & (c["after"] == 0)).mean()),
            "long": float((c["windows"] > 1).mean()),
        }


def _file_tokenizer(encoder: Encoder) -> Any:
    """The tokenizer file of a lazily loaded encoder not loaded yet (under any cache), or None."""
    from hierret.encoders.lazy import LazyEncoder

    current: Any = encoder
    for _ in range(8):
        if isinstance(current, LazyEncoder):
            return current.file_tokenizer
        current = getattr(current, "encoder", None)
        if not isinstance(current, Encoder):
            return None
    return None


class LateChunker:
    """Late-chunked passage vectors from a sentence-transformers encoder's token vectors.

    Parameters
    ----------
    encoder : Encoder
        A ``SentenceTransformerEncoder`` of a BERT-style model (``[CLS]`` …
        ``[SEP]``), possibly inside a :class:`~hierret.encoders.cache.CachedEncoder`.
    overlap : int, default 64
        Tokens shared by consecutive windows of a long context.
    window : int, optional
        Tokens per window, special tokens included (default: the encoder's).
    cache : VectorCache, optional
        Where passage vectors are kept (default: the encoder's cache when it
        is a ``CachedEncoder``, else none).
    use_cache : bool, default True
        ``False``: compute every vector and store none (to time it).
    batch_size : int, default 16
        Windows per forward pass.

    Attributes
    ----------
    seconds : float
        Time spent in forward passes (tokenising and pooling excluded).
    windows_encoded : int
        Windows run through the model.

    Notes
    -----
    Over a :class:`~hierret.encoders.LazyEncoder` whose model is not loaded,
    texts are tokenized from its tokenizer file (the same ids and offsets) and
    the model is loaded for the first forward pass only: a run whose passage
    vectors are all cached never loads it. The model checks below then happen
    at that first pass.

    Raises
    ------
    TypeError
        The encoder has no sentence-transformers model, or no fast tokenizer.
    ValueError
        A window longer than the model's position embeddings, or an overlap
        that leaves no stride.
    """

    def __init__(
        self,
        encoder: Encoder,
        overlap: int = 64,
        window: int | None = None,
        cache: VectorCache | None = None,
        batch_size: int = 16,
        use_cache: bool = True,
    ) -> None:
        self.encoder = encoder
        self.window = check_count(window or encoder.identity.window, "window")
        # a lazily loaded encoder (hierret.encoders.LazyEncoder) tokenizes from its
        # tokenizer file: cached passage vectors then need no model at all
        self._file = _file_tokenizer(encoder)
        self._st: Any = None
        if self._file is None:
            self._load()
        self._prefix = self._ids(encoder.identity.passage_prefix)[0]
        self.budget = self.window - 2 - len(self._prefix)
        self.overlap = check_count(overlap, "overlap", minimum=0)
        plan_windows(self.budget + 1, self.budget, self.overlap)  # checks the overlap
        self.cache = cache if cache is not None else getattr(encoder, "cache", None)
        self.cache = self.cache if use_cache else None
        self.batch_size = check_count(batch_size, "batch_size")
        self.seconds, self.windows_encoded = 0.0, 0

    @property
    def identity(self) -> EncoderIdentity:
        """The encoder's identity, its name marked with the method, window and overlap."""
        base = self.encoder.identity
        method = f"+late-chunking(sections, window {self.window}, overlap {self.overlap})"
        return replace(base, name=base.name + method, window=self.window)

    def _load(self) -> Any:
        """The sentence-transformers model, loaded (and checked) on first need."""
        if self._st is None:
            with _clock.stage("models"):
                model = sentence_transformer(self.encoder)
            if not getattr(model.tokenizer, "is_fast", False):
                raise TypeError("late chunking needs a fast (Rust) tokenizer for character offsets")
            limit = int(model[0].auto_model.config.max_position_embeddings)
            if self.window > limit:
                raise ValueError(f"window {self.window} exceeds the model's {limit} positions")
            self._st = model
        return self._st

    @property
    def _model(self) -> Any:
        return self._load()

    @property
    def _tok(self) -> Any:
        return self._load().tokenizer

    def _ids(self, text: str) -> tuple[list[int], NDArray[np.int64]]:
        if self._st is None and self._file is not None:
            ids, pairs = self._file.ids(text)
        else:
            enc = self._tok(
                text,
                add_special_tokens=False,
                return_offsets_mapping=True,
                truncation=False,
                verbose=False,
            )
            ids, pairs = enc["input_ids"], enc["offset_mapping"]
        offsets = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        real = offsets[:, 1] > offsets[:, 0]
        return [t for t, r in zip(ids, real, strict=True) if r], offsets[real]

    def _forward(self, rows: list[list[int]]) -> list[NDArray[np.float32]]:
        cls, sep, pad = self._tok.cls_token_id, self._tok.sep_token_id, self._tok.pad_token_id
        if cls is None or sep is None:
            raise TypeError("late chunking expects a BERT-style tokenizer with [CLS] and [SEP]")
        label = f"{self.encoder.identity.label()} late"  # the stage clock's: windows encoded
        start = time.perf_counter()
        with _clock.stage(f"embed {label}"):
            _clock.count(label, embedded=len(rows))
            out = self._forward_batches(rows, cls, sep, pad)
        self.seconds += time.perf_counter() - start
        self.windows_encoded += len(rows)
        return out

    def _forward_batches(
        self, rows: list[list[int]], cls: int, sep: int, pad: int
    ) -> list[NDArray[np.float32]]:
        import torch

        out: list[NDArray[np.float32]] = []
        for b in range(0, len(rows), self.batch_size):
            batch = [[cls, *self._prefix, *r, sep] for r in rows[b : b + self.batch_size]]
            width = max(len(r) for r in batch)
            ids = torch.tensor([r + [pad] * (width - len(r)) for r in batch])
            mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in batch])
            with torch.no_grad():
                emb = self._model[0]({"input_ids": ids, "attention_mask": mask})
            hidden = emb["token_embeddings"].float().cpu().numpy()
            skip = 1 + len(self._prefix)
            out += [
                hidden[j, skip : skip + len(r)] for j, r in enumerate(rows[b : b + self.batch_size])
            ]
        return out

    def token_vectors(self, text: str, compute: bool = True) -> TokenVectors:
        """The tokens of one context text, each with its vector from its best window.

        Parameters
        ----------
        text : str
        compute : bool, default True
            ``False``: offsets and context only (no forward pass; ``vectors`` is None).
        """
        ids, offsets = self._ids(text)
        windows = plan_windows(len(ids), self.budget, self.overlap)
        chosen, before, after = best_windows(len(ids), windows)
        vectors = None
        if compute and ids:
            hidden = self._forward([ids[s:e] for s, e in windows])
            vectors = np.empty((len(ids), hidden[0].shape[1]), dtype=np.float32)
            for t, w in enumerate(chosen):
                vectors[t] = hidden[w][t - windows[w][0]]
        return TokenVectors(offsets, vectors, before, after, len(windows))

    def passage_vectors(self, hierarchy: Hierarchy) -> LateVectors:
        """Late-chunked vectors of every passage with text (see the module docstring).

        Raises
        ------
        ValueError
            A passage that holds no token of any context.
        """
        return self.passage_vectors_of([hierarchy])[0]

    def passage_vectors_of(self, hierarchies: Sequence[Hierarchy]) -> list[LateVectors]:
        """:meth:`passage_vectors` of several hierarchies of one corpus (e.g. two passage
        sizes), each section's tokens encoded once for all of them."""
        corpus = hierarchies[0].corpus
        if any(h.corpus.fingerprint != corpus.fingerprint for h in hierarchies):
            raise ValueError(
                "the hierarchies must share one corpus (build them from the same "
                "documents with different passage sizes)"
            )
        plans = [_Plan(h, self) for h in hierarchies]
        for doc in corpus:
            contexts = [(s.start, s.own_end) for s in hierarchies[0].sections[doc.id]]
            need = any(p.missing(doc.id) for p in plans)
            tokens = [self.token_vectors(doc.text[s:e], need) for s, e in contexts]
            for p in plans:
                p.pool(doc.id, contexts, tokens)
        return [p.finish() for p in plans]


class _Plan:
    """One hierarchy's passages: cache keys, cached rows, and the rows to pool."""

    def __init__(self, hierarchy: Hierarchy, chunker: LateChunker) -> None:
        self.h, self.c = hierarchy, chunker
        self.units = text_units(hierarchy, "passages")
        self.keys = text_keys(chunker.identity, "passage", [self._key(u) for u in self.units])
        dim = chunker.encoder.identity.dimension
        self.vectors: NDArray[np.float32]
        self.found: NDArray[np.bool_]
        if chunker.cache is not None:
            self.vectors, self.found = chunker.cache.get(chunker.identity, self.keys)
        else:
            self.vectors = np.zeros((len(self.units), dim), np.float32)
            self.found = np.zeros(len(self.units), bool)
        self.rows: dict[str, list[int]] = {}
        for i, u in enumerate(self.units):
            self.rows.setdefault(u.doc_id, []).append(i)
        self.context: list[dict[str, Any]] = [{} for _ in self.units]

    def _key(self, unit: Any) -> str:
        doc = self.h.corpus[unit.doc_id]
        spans = [
            (s.start, s.own_end)
            for s in self.h.sections[unit.doc_id]
            if s.start < unit.end and s.own_end > unit.start
        ]
        lo, hi = (spans[0][0], spans[-1][1]) if spans else (unit.start, unit.end)
        return json.dumps(
            [unit.start - lo, unit.end - lo, [b - lo for _, b in spans], doc.text[lo:hi]]
        )

    def missing(self, doc_id: str) -> bool:
        return not all(self.found[i] for i in self.rows.get(doc_id, []))

    def pool(
        self, doc_id: str, contexts: list[tuple[int, int]], tokens: list[TokenVectors]
    ) -> None:
        starts = np.concatenate(
            [t.offsets[:, 0] + s for (s, _), t in zip(contexts, tokens, strict=True)]
        )
        before = np.concatenate([t.before for t in tokens])
        after = np.concatenate([t.after for t in tokens])
        windows = np.concatenate([np.full(len(t.offsets), t.n_windows) for t in tokens])
        computed = [t.vectors for t in tokens if t.vectors is not None]
        flat = np.concatenate(computed) if len(computed) == len(tokens) else None
        for i in self.rows.get(doc_id, []):
            u = self.units[i]
            inside = np.flatnonzero((starts >= u.start) & (starts < u.end))
            if not len(inside):
                raise ValueError(f"passage {u.id!r} holds no token of its document's sections")
            self.context[i] = {
                "passage": u.id,
                "tokens": len(inside),
                "before": int(before[inside[0]]),
                "after": int(after[inside[-1]]),
                "windows": int(windows[inside].max()),
                "cached": bool(self.found[i]),
            }
            if not self.found[i]:
                assert flat is not None  # computed whenever a passage of the document misses
                self.vectors[i] = l2_normalize(flat[inside].astype(np.float64).mean(axis=0))[0]

    def finish(self) -> LateVectors:
        new = np.flatnonzero(~self.found)
        if self.c.cache is not None and len(new):
            self.c.cache.put(self.c.identity, [self.keys[i] for i in new], self.vectors[new])
        frame = pd.DataFrame(self.context).set_index("passage")
        return LateVectors([u.id for u in self.units], self.vectors, frame)
