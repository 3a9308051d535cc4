"""The store: :class:`VectorCache`, a folder of vectors and token matrices keyed by
identity, role and text, one :mod:`shelf <hierret.encoders.cache._shelf>` per identity.

Private to :mod:`hierret.encoders.cache`, whose face lists every public name here.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret._env import default_cache_dir
from hierret._files import TEMP_PREFIX
from hierret._validate import check_texts, describe_rows
from hierret.encoders.base import EncoderIdentity, Role
from hierret.encoders.cache._errors import MissingVectorsError
from hierret.encoders.cache._format import KEYS_SUFFIX, SUFFIX, Values
from hierret.encoders.cache._keys import Identity, TokenIdentity, text_keys
from hierret.encoders.cache._shelf import CacheStats, Shelf, key_list

log = logging.getLogger(
    "hierret.encoders.cache"
)  # one logger for the whole cache, as before the split

_IDENTITY_FOLDER = re.compile(r"[0-9a-f]{16}")  # identity.key(): the folders of a root


class VectorCache:
    """A folder of vectors keyed by (encoder identity, role, text).

    Parameters
    ----------
    root : path, optional
        Cache folder; :func:`default_cache_dir` when omitted. Created on first write.
    max_shards : int
        When an identity has more shards than this, its smallest are merged,
        size tier by size tier, down to ``max(max_shards - 8, max_shards // 2)``
        shards (:meth:`compact` merges all of them into one).

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> cache = VectorCache(tmp.name)
    >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
    >>> keys = text_keys(ident, "passage", ["x", "y"])
    >>> cache.put(ident, keys[:1], np.array([[0.6, 0.8]], dtype=np.float32))
    >>> vecs, found = cache.get(ident, keys)
    >>> found.tolist(), vecs[0].tolist(), cache.count(ident)
    ([True, False], [0.6000000238418579, 0.800000011920929], 1)
    >>> tmp.cleanup()
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, max_shards: int = 32) -> None:
        if max_shards < 1:
            raise ValueError(f"max_shards must be positive, got {max_shards}")
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self.max_shards = max_shards
        self.stats = CacheStats()
        self._shelves: dict[str, Shelf] = {}

    def __repr__(self) -> str:
        return f"VectorCache({str(self.root)!r})"

    def _shelf(self, identity: Identity, ragged: bool | None = None) -> Shelf:
        """The shelf of ``identity``; ``ragged`` says which kind the caller expects."""
        if ragged is not None and ragged != isinstance(identity, TokenIdentity):
            want = "a TokenIdentity" if ragged else "an EncoderIdentity"
            raise TypeError(
                f"expected {want}, got {type(identity).__name__}: vectors go through "
                "get()/put(), token matrices through get_matrices()/put_matrices()"
            )
        key = identity.key()
        shelf = self._shelves.get(key)
        if shelf is None:
            shelf = self._shelves[key] = Shelf(self.root / key, identity)
        return shelf

    def folder(self, identity: Identity) -> Path:
        """Where the shards of ``identity`` live."""
        return self.root / identity.key()

    def get(
        self, identity: EncoderIdentity, keys: Sequence[bytes]
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """Stored vectors for ``keys`` (zeros where missing) and a found mask.

        Parameters
        ----------
        identity : EncoderIdentity
        keys : sequence of bytes
            From :func:`text_keys`.

        Returns
        -------
        vectors : ndarray of float32, shape (len(keys), dimension)
            Rows of keys not found are zeros: check ``found``, or use
            :meth:`lookup`, which raises :class:`MissingVectorsError` instead.
        found : ndarray of bool, shape (len(keys),)

        Raises
        ------
        CacheNotReadableError
            The identity's folder exists but cannot be listed.

        Notes
        -----
        When keys are missing, the folder is listed again for shards written by
        other processes since it was first read.
        """
        shelf = self._shelf(identity, ragged=False)
        vectors, found = shelf.get(keys, self.stats)
        if not found.all() and shelf.refresh():
            miss = np.flatnonzero(~found)
            more, more_found = shelf.get([keys[i] for i in miss.tolist()], self.stats)
            vectors[miss], found[miss] = more, more_found
        self._count(len(keys), int(found.sum()))
        return vectors, found

    def contains(self, identity: Identity, keys: Sequence[bytes]) -> NDArray[np.bool_]:
        """Which ``keys`` are stored, without reading their vectors (checksums are
        checked when the vectors are read).

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> cache = VectorCache(tmp.name)
        >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
        >>> keys = text_keys(ident, "passage", ["x", "y"])
        >>> cache.put(ident, keys[:1], np.ones((1, 2), dtype=np.float32))
        >>> cache.contains(ident, keys).tolist()
        [True, False]
        >>> tmp.cleanup()
        """
        shelf = self._shelf(identity)
        found = shelf.contains(keys)
        if not found.all() and shelf.refresh():
            found = shelf.contains(keys)
        return found

    def get_matrices(
        self, identity: TokenIdentity, keys: Sequence[bytes]
    ) -> list[NDArray[np.float32] | None]:
        """Stored token matrices for ``keys``, ``None`` where missing.

        What :meth:`get` is for vectors: damaged records are logged and left
        out (``None``), and a miss re-lists the folder once.

        Parameters
        ----------
        identity : TokenIdentity
        keys : sequence of bytes
            From :func:`text_keys` of ``identity``.

        Returns
        -------
        list of (ndarray of float32, shape (n_tokens, dimension)) or None
            Read-only arrays, bit for bit as :meth:`put_matrices` was given them.

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> cache = VectorCache(tmp.name)
        >>> ident = TokenIdentity(EncoderIdentity("m", "hash", "v1", "fp32", 2, 16), "v1")
        >>> keys = text_keys(ident, "passage", ["x", "y", "z"])
        >>> cache.put_matrices(ident, keys[:2], [np.ones((3, 2), np.float32),
        ...                                      np.zeros((0, 2), np.float32)])
        >>> [None if m is None else m.shape for m in cache.get_matrices(ident, keys)]
        [(3, 2), (0, 2), None]
        >>> tmp.cleanup()
        """
        shelf = self._shelf(identity, ragged=True)
        matrices = shelf.get_matrices(keys, self.stats)
        miss = [i for i, m in enumerate(matrices) if m is None]
        if miss and shelf.refresh():
            more = shelf.get_matrices([keys[i] for i in miss], self.stats)
            for i, m in zip(miss, more, strict=True):
                matrices[i] = m
        self._count(len(keys), sum(m is not None for m in matrices))
        return matrices

    def _count(self, asked: int, hits: int) -> None:
        self.stats.hits += hits
        self.stats.misses += asked - hits

    def lookup(
        self, identity: EncoderIdentity, texts: Sequence[str], role: Role = "passage"
    ) -> NDArray[np.float32]:
        """Stored vectors of ``texts``, all of which must be in the cache.

        Raises
        ------
        MissingVectorsError
            A :class:`KeyError` naming the identity, the role and how many texts
            were never stored (:meth:`put` them first, or embed through a
            :class:`CachedEncoder`, which fills the cache).

        Examples
        --------
        >>> import tempfile
        >>> from hierret.encoders.cache import CachedEncoder
        >>> from hierret.encoders import HashEncoder
        >>> tmp = tempfile.TemporaryDirectory()
        >>> enc = CachedEncoder(HashEncoder(dimension=4), VectorCache(tmp.name))
        >>> _ = enc.encode_passages(["kept"])
        >>> enc.cache.lookup(enc.identity, ["kept"]).shape
        (1, 4)
        >>> try:
        ...     enc.cache.lookup(enc.identity, ["kept", "never"])
        ... except MissingVectorsError as err:
        ...     print(err.missing, "1 of 2" in str(err))
        ['never'] True
        >>> tmp.cleanup()
        """
        items = check_texts(texts)
        vectors, found = self.get(identity, text_keys(identity, role, items))
        if not found.all():
            missing = [t for t, f in zip(items, found.tolist(), strict=True) if not f]
            raise MissingVectorsError(
                f"{len(missing)} of {len(items)} {role} text(s) are not in the vector cache "
                f"{self.folder(identity)} for {identity.describe()} (first: "
                f"{missing[0][:60]!r}); put() them first, or embed through "
                "CachedEncoder(encoder, cache), which stores what it computes",
                missing,
            )
        return vectors

    def check_writable(self, identity: Identity) -> None:
        """Create the folder of ``identity`` and probe it with a temporary file.

        Raises
        ------
        CacheNotWritableError
            Naming the folder and the fix (another ``$HIERRET_CACHE`` or ``root``).
        """
        self._shelf(identity).check_writable()

    def put(
        self, identity: EncoderIdentity, keys: Sequence[bytes], vectors: NDArray[np.float32]
    ) -> None:
        """Store ``vectors`` (rows matching ``keys``) as one new shard.

        Raises
        ------
        ValueError
            ``vectors`` do not have one row of ``identity.dimension`` per key, or
            a row holds NaN or an infinity (an index refuses them, and the cache
            would serve them to every later run); nothing of the call was stored.
        CacheNotWritableError
            The folder cannot be created or written; nothing was stored.

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> cache = VectorCache(tmp.name)
        >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
        >>> keys = text_keys(ident, "passage", ["x", "y"])
        >>> cache.put(ident, keys, np.array([[1.0, 0.0], [np.nan, 0.0]]))
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: vectors to store in the cache hold NaN or infinite values: 1 of 2 rows ...
        >>> cache.count(ident)
        0
        >>> tmp.cleanup()
        """
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(keys), identity.dimension):
            raise ValueError(
                f"vectors have shape {vectors.shape}, expected {(len(keys), identity.dimension)} "
                f"for {identity.describe()}"
            )
        _check_finite([vectors[i] for i in range(len(keys))], keys, "vectors")
        self._put(identity, keys, vectors)

    def put_matrices(
        self,
        identity: TokenIdentity,
        keys: Sequence[bytes],
        matrices: Sequence[NDArray[np.float32]],
    ) -> None:
        """Store token ``matrices`` (one per key, any number of rows) as one new shard.

        Raises
        ------
        ValueError
            A matrix is not 2-d with ``identity.dimension`` columns, there
            are not as many matrices as keys, or a matrix holds NaN or an
            infinity; nothing of the call was stored.
        CacheNotWritableError
            The folder cannot be created or written; nothing was stored.
        """
        if len(matrices) != len(keys):
            raise ValueError(f"{len(matrices)} matrices for {len(keys)} keys")
        for m in matrices:
            if m.ndim != 2 or m.shape[1] != identity.dimension:
                raise ValueError(
                    f"a token matrix has shape {m.shape}, expected (n, {identity.dimension}) "
                    f"for {identity.describe()}"
                )
        values = [np.asarray(m, dtype=np.float32) for m in matrices]
        _check_finite(values, keys, "token matrices")
        self._put(identity, keys, values)

    def _put(self, identity: Identity, keys: Sequence[bytes], values: Values) -> None:
        if any(len(k) != 32 for k in keys):
            raise ValueError("keys must be 32-byte digests from text_keys()")
        if not keys:
            return
        shelf = self._shelf(identity, ragged=not isinstance(values, np.ndarray))
        shelf.put(keys, values)
        self.stats.stored += len(keys)
        try:  # the new shard is in place: merging or repairing can wait for a later call
            if len(shelf.shards) > self.max_shards:
                shelf.merge_some(self.max_shards)
            else:
                self.repair(identity)
        except OSError as err:  # a full disk, a folder made read-only since
            log.warning(
                "vector cache: could not merge the shards in %s (%s); they are kept as they are",
                shelf.folder,
                err.strerror or err,
            )

    def mapped(
        self, identity: EncoderIdentity, verify: bool = True
    ) -> list[tuple[list[bytes], NDArray[np.float32]]]:
        """Every shard's keys and vectors, the vectors memory-mapped (read when used).

        For exact search over the whole cache without loading it
        (:class:`hierret.search.vectors.index.MappedIndex`). The vectors are
        :class:`numpy.memmap` views: a shard overwritten in place later (``cp``
        over a cache in use) makes :class:`~hierret.search.vectors.index.MappedIndex` raise
        :class:`~hierret._mapped.MappedFileShrankError` before reading it,
        instead of the process dying of SIGBUS. A key stored in several shards
        appears in each (same vector); with ``verify`` every record's checksum
        is checked first (reading each shard once) and damaged records are left
        out (their vectors are then a copy, not a mapping).

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> cache = VectorCache(tmp.name)
        >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
        >>> cache.put(ident, text_keys(ident, "passage", ["x"]), np.eye(2, dtype=np.float32)[:1])
        >>> [(len(keys), vecs.tolist()) for keys, vecs in cache.mapped(ident)]
        [(1, [[1.0, 0.0]])]
        >>> tmp.cleanup()
        """
        shelf = self._shelf(identity, ragged=False)
        shelf.refresh()
        shelf.drop_shrunk()
        out = []
        for shard in shelf.shards:
            rows = np.arange(len(shard), dtype=np.intp)
            vecs = shard.vectors()
            if verify:
                ok = shard.verify(rows)
                if not ok.all():
                    rows, vecs = rows[ok], vecs[ok]
            out.append((key_list(shard, rows), vecs))
        return out

    def count(self, identity: Identity) -> int:
        """Number of distinct texts stored for ``identity`` (any role)."""
        return self._shelf(identity).count()

    def compact(self, identity: Identity) -> None:
        """Merge the shards of ``identity`` into one, dropping damaged records.

        Raises
        ------
        CacheNotWritableError
            The folder cannot be written; nothing was changed on disk.
        """
        shelf = self._shelf(identity)
        if shelf.shards or shelf.broken:
            shelf.check_writable()
            shelf.compact(everything=True)

    def repair(self, identity: Identity) -> bool:
        """Rewrite the shards of ``identity`` found damaged so far without their
        damaged records, and delete unreadable ones; ``True`` if there were any.

        Raises
        ------
        CacheNotWritableError
            There is damage to repair but the folder cannot be written.
        """
        shelf = self._shelf(identity)
        if not (shelf.broken or any(s.damaged for s in shelf.shards)):
            return False
        shelf.check_writable()
        shelf.compact(everything=False)
        return True

    def clear(self, identity: Identity | None = None) -> None:
        """Delete the stored vectors of ``identity`` (of every identity when ``None``).

        Only the cache's own files are deleted: shards, key indexes, ``identity.json`` and
        temporary files, in identity folders (named by 16 hex digits). Anything
        else under the root (say, a project folder when the root was set to the
        wrong place) is left alone, and a folder that still holds it is kept.
        """
        if identity is not None:
            folders = [self.folder(identity)]
        else:
            folders = [p for p in self.root.glob("*") if _IDENTITY_FOLDER.fullmatch(p.name)]
        for folder in (f for f in folders if f.is_dir()):
            for path in folder.iterdir():
                ours = (
                    path.suffix in (SUFFIX, KEYS_SUFFIX)
                    or path.name == "identity.json"
                    or (path.name.startswith(TEMP_PREFIX) and path.suffix == ".part")
                )
                if ours and path.is_file():
                    path.unlink(missing_ok=True)
            if not any(folder.iterdir()):
                folder.rmdir()
        if identity is None:
            self._shelves.clear()
        else:
            self._shelves.pop(identity.key(), None)


def _check_finite(values: Sequence[NDArray[Any]], keys: Sequence[bytes], what: str) -> None:
    """Refuse values holding NaN or an infinity, naming how many and their keys.

    Each item of ``values`` is one key's vector (or token matrix). Checked
    before anything is written, so a refused call stores nothing.

    Examples
    --------
    >>> keys = [bytes([i]) * 32 for i in range(3)]
    >>> _check_finite([np.zeros(2), np.ones(2), np.zeros(2)], keys, "vectors")
    >>> _check_finite([np.zeros(2), np.array([np.inf, 0.0]), np.zeros(2)], keys, "vectors")
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: vectors to store in the cache hold NaN or infinite values: 1 of 3 rows hold
    them (row 1; key 0101010101010101...); nothing of this call was stored. A cache serves
    what it stores to every later run, and an index refuses such vectors: find why the
    encoder produced them (an empty or overlong text, a model in half precision that
    overflowed) and store finite vectors only
    """
    bad = np.flatnonzero([not np.isfinite(v).all() for v in values])
    if not len(bad):
        return
    rows = describe_rows(bad, len(values), "hold them")
    if what != "vectors":  # one item per key: a matrix, not a row
        rows = rows.replace(" rows ", f" {what} ", 1).replace("(row", "(item", 1)
    shown = ", ".join(keys[i].hex()[:16] + "..." for i in bad[:3].tolist())
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    rows = rows.removesuffix(")") + f"; key{'s' if len(bad) > 1 else ''} {shown}{more})"
    raise ValueError(
        f"{what} to store in the cache hold NaN or infinite values: {rows}; nothing of this "
        "call was stored. A cache serves what it stores to every later run, and an index "
        "refuses such vectors: find why the encoder produced them (an empty or overlong "
        "text, a model in half precision that overflowed) and store finite vectors only"
    )
