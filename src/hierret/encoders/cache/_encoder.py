"""The cached encoder users meet: :class:`CachedEncoder` looks every text up in a
:class:`~hierret.encoders.cache.VectorCache` first and embeds (and stores) only the rest.

Private to :mod:`hierret.encoders.cache`, whose face lists every public name here.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._validate import check_texts
from hierret.encoders.base import Encoder, EncoderIdentity, Role
from hierret.encoders.cache._errors import (
    FIX,
    CacheNotWritableError,
    CacheNotWritableWarning,
    CacheWriteError,
)
from hierret.encoders.cache._keys import Batches, Identity, text_keys
from hierret.encoders.cache._plan import Source, active_plan, stand_ins
from hierret.encoders.cache._shelf import CacheStats
from hierret.encoders.cache._store import VectorCache

log = logging.getLogger(
    "hierret.encoders.cache"
)  # one logger for the whole cache, as before the split


class CachedEncoder(Encoder):
    """An encoder that looks every text up in a :class:`VectorCache` first.

    Only the missing texts are encoded, deduplicated, in one call of the
    wrapped encoder (:meth:`~hierret.encoders.Encoder.encode_batches`, so its
    own batching, and the vectors, are those of one plain call); each batch is
    stored as one shard as soon as it is made, so an interrupted call (Ctrl-C,
    SIGTERM, kill -9) keeps every batch finished before it and the next call
    embeds only the rest. All rows come back in input order. Identity, token
    counts and windows are those of the wrapped encoder.

    Before embedding anything it checks that the cache can be written. When it
    cannot (a read-only shared cache, ``$HIERRET_CACHE`` naming a file), the
    vectors are still computed and returned, not stored, and one
    :class:`CacheNotWritableWarning` per encoder says so and how to fix it.
    A write that fails later (a full disk, ``ENOSPC``; a folder made read-only
    meanwhile) degrades the same way: the batches stored before it stay, the
    vectors of the call are all returned, and one warning names the fix.
    A cache folder that cannot be read raises :class:`CacheNotReadableError`
    before any embedding.
    When every vector was found but a shard was found damaged on the way (say,
    padded), the shard is repaired there and then if the cache can be written.
    Each call is an ``embed <model>`` stage of :mod:`hierret.publish.timing` and counts
    the distinct texts found in the cache there as ``cached``; the wrapped
    encoder counts the texts it embeds.

    Parameters
    ----------
    encoder : Encoder
    cache : VectorCache, optional
        Defaults to ``VectorCache()`` at :func:`default_cache_dir`.
    source : (str, dict), optional
        The registered name and options that made ``encoder``
        (:func:`cached_encoder` sets it), so that a plan
        (``$HIERRET_PLAN``, :mod:`hierret.encoders.cache._plan`) can name the encoder
        to make again; without it the texts are embedded even while planning.

    Attributes
    ----------
    stats : CacheStats
        Hits, misses and duplicates of this encoder's requests.
    """

    def __init__(
        self, encoder: Encoder, cache: VectorCache | None = None, source: Source | None = None
    ) -> None:
        self.encoder = encoder
        self.source = source
        self.cache = cache if cache is not None else VectorCache()
        self.stats = CacheStats()
        self._warned = False
        self._counts: dict[tuple[Role, str], int] = {}

    @property
    def identity(self) -> EncoderIdentity:
        return self.encoder.identity

    @property
    def n_special_tokens(self) -> int:
        return self.encoder.n_special_tokens

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        return self.encoder._embed(texts)

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        return self.encoder._embed_batches(texts)

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        return self.encoder._token_offsets(text)

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        """The wrapped encoder's token counts, each distinct text counted once per process.

        Searches ask for the counts of the same units again and again (every
        dense index checks its units against the window); tokenising is the
        cost, so the counts are kept in memory.
        """
        items = check_texts(texts)
        missing = list(dict.fromkeys(t for t in items if (role, t) not in self._counts))
        if missing:
            counts = self.encoder.count_tokens(missing, role)
            self._counts.update(zip(((role, t) for t in missing), counts, strict=True))
        return [self._counts[role, t] for t in items]

    def encode(self, texts: Sequence[str], role: Role = "passage") -> NDArray[np.float32]:
        with _clock.stage(f"embed {self.identity.label()}"):
            return self._encode(texts, role)

    def encode_unnormalized(
        self, texts: Sequence[str], role: Role = "passage"
    ) -> NDArray[np.float32]:
        """The model's own vectors (before L2 normalisation), cached under their own identity.

        The identity is the encoder's with ``normalized=False``, so raw rows
        never mix with the unit vectors indexes read.

        Examples
        --------
        >>> import tempfile
        >>> from hierret.encoders import HashEncoder
        >>> tmp = tempfile.TemporaryDirectory()
        >>> enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp.name))
        >>> raw = enc.encode_unnormalized(["a cat sat"])
        >>> again = enc.encode_unnormalized(["a cat sat"])
        >>> bool((raw == again).all()), enc.stats.hits, enc.stats.misses
        (True, 1, 1)
        >>> bool((raw == enc.encoder.encode_unnormalized(["a cat sat"])).all())
        True
        >>> tmp.cleanup()
        """
        with _clock.stage(f"embed {self.identity.label()}"):
            return self._encode(texts, role, raw=True)

    def _encode(self, texts: Sequence[str], role: Role, raw: bool = False) -> NDArray[np.float32]:
        items = check_texts(texts)
        ident = replace(self.identity, normalized=False) if raw else self.identity
        keys = text_keys(ident, role, items)
        first: dict[bytes, int] = {}
        positions = np.empty(len(items), dtype=np.intp)
        unique_texts: list[str] = []
        for i, (key, text) in enumerate(zip(keys, items, strict=True)):
            j = first.get(key)
            if j is None:
                j = first[key] = len(unique_texts)
                unique_texts.append(text)
            positions[i] = j
        unique_keys = list(first)
        vectors, found = self.cache.get(ident, unique_keys)
        missing = np.flatnonzero(~found)
        self.stats.hits += len(unique_keys) - len(missing)
        self.stats.misses += len(missing)
        self.stats.duplicates += len(items) - len(unique_keys)
        _clock.count(ident.label(), cached=len(unique_keys) - len(missing))
        source = self.source if len(missing) else None
        plan = active_plan() if source is not None else None
        if plan is not None and source is not None:  # planning: list, stand in, keep none
            plan.add(source, self.identity, role, raw, [unique_texts[j] for j in missing])
            vectors[missing] = stand_ins([unique_keys[j] for j in missing], ident.dimension)
        elif len(missing):
            store = can_store(self.cache, ident, warn=not self._warned, what="Vectors")
            self._warned |= not store  # checked before the (expensive) embedding
            todo = [unique_texts[j] for j in missing]
            for idx, fresh in self.encoder.encode_batches(todo, role, normalized=not raw):
                rows = missing[idx]
                vectors[rows] = fresh
                if store:  # each batch as it is made: an interrupted call keeps it
                    store = self._store(ident, [unique_keys[j] for j in rows], fresh)
        else:  # a padded shard served every vector: repair it now, if we may
            try:
                self.cache.repair(ident)
            except OSError as err:  # a read-only cache: the damage is skipped each time
                log.debug("vector cache: could not repair %s (%s)", self.cache, err)
        return vectors[positions]

    def fill(
        self,
        texts: Sequence[str],
        role: Role = "passage",
        progress: Callable[[int], object] | None = None,
        embed: Batches | None = None,
        *,
        strict: bool = False,
    ) -> tuple[int, int, int]:
        """Embed the texts of ``texts`` not yet in the cache and store them, batch by
        batch, without keeping their vectors (for corpora larger than memory).

        Parameters
        ----------
        texts : sequence of str
        role : {"passage", "query"}
        progress : callable, optional
            Called with the number of texts of each batch stored (or computed,
            when the cache cannot be written).
        embed : callable, optional
            ``embed(texts, role)`` yields ``(positions, unit vectors)`` batch by
            batch, each text once, in any order (default: the wrapped encoder's
            :meth:`~hierret.encoders.Encoder.encode_batches`); called only
            when a text is missing. Another engine plugs in here
            (:mod:`hierret.encoders.embed.ray`) while this process stays the only writer.
        strict : bool, default False
            Storing is the point of the call (``hierret embed``): a cache that
            cannot be written raises :class:`CacheNotWritableError` before
            anything is embedded (``embed`` is not called), and a write that
            fails part way raises :class:`CacheWriteError` at once (the batches
            stored before it are kept), instead of warning and going on
            computing vectors nobody keeps.

        Returns
        -------
        tuple of int
            Distinct texts, those found in the cache, those embedded now.

        Raises
        ------
        CacheNotWritableError, CacheWriteError
            With ``strict``: nothing could be stored, or a write failed.

        Examples
        --------
        >>> import tempfile
        >>> from hierret.encoders import HashEncoder
        >>> tmp = tempfile.TemporaryDirectory()
        >>> enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp.name))
        >>> enc.fill(["a", "b", "a"]), enc.fill(["a", "b", "c"])
        ((2, 0, 2), (3, 2, 1))
        >>> tmp.cleanup()
        """
        items = list(dict.fromkeys(check_texts(texts)))
        keys = text_keys(self.identity, role, items)
        found = self.cache.contains(self.identity, keys)
        missing = np.flatnonzero(~found)
        if len(missing):
            if strict:
                self.cache.check_writable(self.identity)  # before any model is loaded
                store = True
            else:
                store = can_store(self.cache, self.identity, warn=not self._warned, what="Vectors")
                self._warned |= not store
            todo = [items[j] for j in missing]
            stored_before = self.stats.stored
            for idx, fresh in (embed or self.encoder.encode_batches)(todo, role):
                if strict:
                    self._store_or_raise([keys[j] for j in missing[idx]], fresh, stored_before)
                elif store:
                    store = self._store(self.identity, [keys[j] for j in missing[idx]], fresh)
                if progress is not None:
                    progress(len(idx))
        return len(items), len(items) - len(missing), len(missing)

    def _store_or_raise(
        self, keys: list[bytes], fresh: NDArray[np.float32], stored_before: int
    ) -> None:
        """Put one batch for :meth:`fill` with ``strict``: a failure raises
        :class:`CacheWriteError` naming what was kept and the fix."""
        try:
            self.cache.put(self.identity, keys, fresh)
        except OSError as err:
            folder = self.cache.folder(self.identity)
            done = self.stats.stored - stored_before
            raise CacheWriteError(
                f"vector cache folder {folder} could not store vectors "
                f"({err.strerror or err}) after {done} were stored by this run (they are "
                f"kept): free space there or fix its permissions, or {FIX}; then run "
                "again, and only the rest is embedded",
                folder,
                done,
            ) from err
        self.stats.stored += len(keys)

    def _store(self, ident: EncoderIdentity, keys: list[bytes], fresh: NDArray[np.float32]) -> bool:
        """Put one batch; when the disk is full or the folder became unwritable,
        warn once (as for a read-only cache) and say so: the caller keeps the
        vectors and stops storing."""
        try:
            self.cache.put(ident, keys, fresh)
        except OSError as err:
            if not self._warned:
                warnings.warn(
                    f"vector cache folder {self.cache.folder(ident)} could not store "
                    f"vectors ({err.strerror or err}): free space there or fix its "
                    f"permissions, or {FIX}. Vectors are computed but not stored "
                    "from here on (this warning is shown once per encoder); those "
                    f"stored before ({self.stats.stored} by this encoder) are kept.",
                    CacheNotWritableWarning,
                    stacklevel=5,
                )
            self._warned = True
            return False
        self.stats.stored += len(keys)
        return True


def can_store(cache: VectorCache, identity: Identity, *, warn: bool, what: str) -> bool:
    """Whether ``cache`` can store what ``identity`` computes; when not and ``warn``,
    a :class:`CacheNotWritableWarning` saying ``what`` is computed but not stored.

    What :class:`CachedEncoder` (and :class:`~hierret.search.rerank.MaxSimReranker`) ask
    before computing anything, each warning once.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> blocker = Path(tmp.name) / "a-file"
    >>> _ = blocker.write_text("not a folder")
    >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
    >>> can_store(VectorCache(tmp.name), ident, warn=True, what="Vectors")
    True
    >>> can_store(VectorCache(blocker), ident, warn=False, what="Vectors")
    False
    >>> tmp.cleanup()
    """
    try:
        cache.check_writable(identity)
    except CacheNotWritableError as err:
        if warn:
            warnings.warn(
                f"{err}. {what} are computed but not stored (this warning is shown once "
                "per encoder).",
                CacheNotWritableWarning,
                stacklevel=4,
            )
        return False
    return True


def cached_encoder(name: str, cache: VectorCache | None = None, **kw: Any) -> CachedEncoder:
    """The encoder ``name`` behind ``cache``, its model loaded only if a text is missing.

    :func:`~hierret.encoders.load_encoder_lazily` with its identity manifests in
    the cache's ``identities/`` folder: when every vector a run asks for is
    cached, the model (and torch, for the sentence-transformers models) is
    never loaded.

    Parameters
    ----------
    name : str
        As for :func:`~hierret.encoders.load_encoder`.
    cache : VectorCache, optional
        Defaults to ``VectorCache()`` at :func:`default_cache_dir`.
    **kw
        Passed to the encoder's constructor.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> enc = cached_encoder("hash", VectorCache(tmp.name), dimension=8)
    >>> enc.encode_passages(["a cat"]).shape, enc.stats.misses
    ((1, 8), 1)
    >>> tmp.cleanup()
    """
    from hierret.encoders.registry import load_encoder_lazily

    store = cache if cache is not None else VectorCache()
    lazy = load_encoder_lazily(name, store.root / "identities", **kw)
    return CachedEncoder(lazy, store, source=(name, kw))
