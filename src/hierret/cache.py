"""Vectors on disk: each text is embedded once per encoder identity, across runs.

Layout: one folder per encoder identity (``<root>/<identity.key()>/``) holding
an ``identity.json`` for people and *shard* files ``*.hvc``, one per batch of
new vectors. A shard is a small header followed by fixed-size records::

    b"HRVCACHE" | uint32 header length | header JSON | uint32 crc32(header JSON)
    record = 32-byte key | dimension x float32 (little-endian) | uint32 crc32

The key is SHA-256 of (identity key, precision, window, role, text); a record's
crc32 covers the identity key, the key and the vector bytes.

Each shard ``X.hvc`` has a key index ``X.hvk`` beside it (written first, so a
visible shard normally has one)::

    b"HRVKEYS1" | uint64 n | n x uint64 key prefix (sorted) | n x uint32 row

Opening a cache lists the folder, reads each shard's header and its key
index's header, and memory-maps both (:class:`numpy.memmap`): no record, so no
vector byte, is read. A lookup binary-searches the key indexes and reads only
the records it serves (checked by their crc32 on first use), so a cache larger
than memory can be used. Cost per record on disk: the record
(``32 + 4 x dimension + 4`` bytes) plus :data:`KEY_INDEX_BYTES` (12) of key
index; in memory once opened: nothing per record (measured: opening 2 M
records of dimension 8 read 10 KB and grew the resident set by 0.12 MB, under
0.1 byte a record; ``tests/test_cache_scale.py``). Pages of the key index and
of the records are mapped as lookups touch them (shared page cache, at most
the files' size). :meth:`VectorCache.mapped` gives every shard's vectors,
memory-mapped, for exact search over the whole cache
(:class:`hierret.index.MappedIndex`, bit-identical to
:class:`~hierret.index.VectorIndex`).

Every shard header carries the layout's ``format`` (1), checked where a shard
is read: a shard of another format (written by a newer hierret sharing the
folder) is logged as a warning naming the fix, left alone (never served,
never deleted by a repair or a merge), and its texts are recomputed.

Caches written before key indexes existed (the shard format is unchanged) are
read directly: a shard without a key index gets one on first open (reading its
keys once; written atomically beside it when the folder is writable, kept in
memory otherwise). The shards themselves are never rewritten for this, so an
older hierret keeps reading the same folder (it ignores ``*.hvk``).

Token matrices (one ``(n_tokens, dimension)`` matrix per text, for late
interaction: :class:`hierret.rerank.MaxSimReranker`) are kept the same way,
per :class:`TokenIdentity`, with :meth:`VectorCache.get_matrices` and
:meth:`VectorCache.put_matrices`. Their shards (header ``"layout": "ragged"``)
hold a table of fixed-size records followed by every matrix's rows, end to end::

    record = 32-byte key | uint64 first row | uint32 rows | uint32 crc32
    rows   = total rows x dimension x float32 (little-endian)

where a record's crc32 covers the identity key, the record and its matrix's
bytes. What follows holds for both kinds of shard. Every record is
checked before its vector is used: a record that fails (flipped bytes) or is
missing (truncated file) is logged as a warning naming the file and recomputed,
and the damaged shard is rewritten without it. Files are written to a temporary
name and moved into place with :func:`os.replace`, so no half-written shard is
ever visible. When there are more than ``max_shards`` shards the smallest
are merged, tier by tier (:meth:`VectorCache.compact`: all into one), shard
by shard: records are copied a block at a time (memory: 32 bytes a record for
the keys, to keep one copy of each).

Several processes may share one folder: a visible shard never changes, names
are unique, and a lookup that misses re-lists the folder for shards written by
others since. A shard that vanishes between listing and reading was merged into
a newer shard by another process's compaction; the folder is listed again
(a bounded number of times) and whatever is still missing is recomputed.
A mapped file that shrinks under a reader (``cp`` or ``rsync --inplace`` over
a cache in use: touching a page past its new end would kill the process with
SIGBUS) is noticed before its bytes are touched: every operation first checks
each mapped file's size (:mod:`hierret._mapped`, one ``fstat`` a file: about
70 µs a lookup for 32 shards, measured), and a shard found shorter is logged,
read again as it now is, and what it lost is recomputed.
Files and folders get the modes a plain :func:`open` and :func:`os.mkdir` would
give under the current umask (``0o666 & ~umask``, ``0o777 & ~umask``), so a
group-shared cache stays readable by its group.

Errors: a cache folder that cannot be written raises
:class:`CacheNotWritableError` from :meth:`VectorCache.put` before anything is
written, while :class:`CachedEncoder` checks *before* embedding and, when the
cache cannot be written, still returns the vectors it computes, with a single
:class:`CacheNotWritableWarning` per encoder (a read-only shared cache keeps
serving its hits); a write that fails during the call (a full disk) gives the
same warning, and what was stored before it is kept. A folder that exists but
cannot be listed raises :class:`CacheNotReadableError`. Both are :class:`PermissionError` subclasses
naming the folder. :meth:`VectorCache.lookup` raises
:class:`MissingVectorsError` (a :class:`KeyError`) for texts never stored.
Vectors or token matrices holding NaN or an infinity are refused by
:meth:`VectorCache.put` and :meth:`VectorCache.put_matrices` with a
:class:`ValueError` naming how many and their keys, before anything is written:
a cache serves what it stores to every later run.

Examples
--------
>>> import tempfile
>>> from hierret.encoders import HashEncoder
>>> tmp = tempfile.TemporaryDirectory()
>>> enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp.name))
>>> first = enc.encode_passages(["a cat", "a dog", "a cat"])
>>> enc.stats.misses, enc.stats.duplicates
(2, 1)
>>> again = enc.encode_passages(["a dog", "a cat"])
>>> enc.stats.hits, bool((again == first[[1, 0]]).all())
(2, True)
>>> tmp.cleanup()
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import struct
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._env import CACHE_ENV, default_cache_dir
from hierret._files import TEMP_PREFIX, atomic_write, create_temp
from hierret._mapped import MappedFileShrankError, check_extents, mapped_extent
from hierret._validate import check_texts, describe_rows
from hierret.encoders import Encoder, EncoderIdentity, Role

__all__ = [
    "CACHE_ENV",
    "KEY_INDEX_BYTES",
    "CacheAccessError",
    "CacheNotReadableError",
    "CacheNotWritableError",
    "CacheNotWritableWarning",
    "CacheStats",
    "CacheWriteError",
    "CachedEncoder",
    "MissingVectorsError",
    "TokenIdentity",
    "VectorCache",
    "cached_encoder",
    "can_store",
    "default_cache_dir",
    "text_keys",
    "write_key_index",
]

log = logging.getLogger(__name__)


_MAGIC = b"HRVCACHE"
_FORMAT = 1
_SUFFIX = ".hvc"
_STALE_TMP_S = 600.0
_LIST_TRIES = 5  # listings of a folder whose shards keep vanishing (others compacting)
_U32 = struct.Struct("<I")
_FIX = "set HIERRET_CACHE to a writable folder, or pass VectorCache(root=...)"
_IDENTITY_FOLDER = re.compile(r"[0-9a-f]{16}")  # identity.key(): the folders of a root


class CacheAccessError(OSError):
    """The vector cache folder cannot be used; :attr:`folder` names it."""

    def __init__(self, message: str, folder: Path) -> None:
        super().__init__(message)
        self.folder = folder


class CacheNotWritableError(CacheAccessError, PermissionError):
    """The vector cache folder cannot be created or written.

    Examples
    --------
    >>> import tempfile
    >>> from hierret.encoders import HashEncoder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> blocker = Path(tmp.name) / "a-file"
    >>> _ = blocker.write_text("not a folder")
    >>> cache = VectorCache(blocker)
    >>> try:
    ...     cache.check_writable(HashEncoder(dimension=4).identity)
    ... except CacheNotWritableError as err:
    ...     print(err.folder.parent == blocker, "HIERRET_CACHE" in str(err))
    True True
    >>> tmp.cleanup()
    """


class CacheNotReadableError(CacheAccessError, PermissionError):
    """A vector cache folder exists but cannot be listed."""


class CacheWriteError(CacheAccessError):
    """A write to the vector cache failed part way (a full disk, a folder made
    read-only meanwhile) when storing was the point of the call
    (:meth:`CachedEncoder.fill` with ``strict=True``: ``hierret embed``).

    Attributes
    ----------
    stored : int
        Vectors this call stored before the failure (kept).
    """

    def __init__(self, message: str, folder: Path, stored: int) -> None:
        super().__init__(message, folder)
        self.stored = stored


class CacheNotWritableWarning(UserWarning):
    """:class:`CachedEncoder` computed vectors it could not store."""


class MissingVectorsError(KeyError):
    """:meth:`VectorCache.lookup` was asked for texts that were never stored.

    Attributes
    ----------
    missing : list of str
        The texts not found, in request order.
    """

    def __init__(self, message: str, missing: list[str]) -> None:
        super().__init__(message)
        self.message = message
        self.missing = missing

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return self.message


@dataclass(frozen=True)
class TokenIdentity:
    """Everything that decides which token matrix a text gets (for late interaction).

    Parameters
    ----------
    encoder : EncoderIdentity
        The model whose token vectors are taken: weights, precision, window,
        prefixes and engine.
    tokens : str
        How the matrix is made from the model's output, with a version to
        change when that code changes: which tokens are dropped, how long
        texts are split (e.g. ``"st-tokens-v1: skip_punctuation=True, ..."``).
    normalized : bool, default True
        Whether rows are L2-normalised (as :class:`~hierret.rerank.MaxSimReranker`
        keeps them).

    Examples
    --------
    >>> enc = EncoderIdentity("m", "hash", "v1", "fp32", 8, 128)
    >>> ident = TokenIdentity(enc, "rules-v1")
    >>> len(ident.key()), ident.key() == TokenIdentity(enc, "rules-v2").key()
    (16, False)
    >>> ident.key() == enc.key(), ident.dimension, ident.label()
    (False, 8, 'm fp32 tokens')
    """

    encoder: EncoderIdentity
    tokens: str
    normalized: bool = True

    def key(self) -> str:
        """16 hex digits of SHA-256 over all fields (never an encoder identity's key)."""
        blob = json.dumps({"kind": "tokens", **self.as_dict()}, sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        """The model's name."""
        return self.encoder.name

    @property
    def dimension(self) -> int:
        """Columns of every matrix."""
        return self.encoder.dimension

    def label(self) -> str:
        """The encoder's label and ``tokens``, e.g. ``"all-MiniLM-L6-v2 fp32 tokens"``."""
        return f"{self.encoder.label()} tokens"

    def describe(self) -> str:
        """One line for logs and error messages."""
        return f"token vectors ({self.tokens}) of {self.encoder.describe()}"

    def as_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready ``dict``."""
        return {
            "encoder": self.encoder.as_dict(),
            "tokens": self.tokens,
            "normalized": self.normalized,
        }


#: What makes vectors batch by batch: ``f(texts, role)`` yields ``(positions, vectors)``.
Batches = Callable[[list[str], Role], Iterable[tuple[NDArray[np.intp], NDArray[np.float32]]]]

#: Identities of what a :class:`VectorCache` stores: vectors, or token matrices.
Identity = EncoderIdentity | TokenIdentity


def text_keys(identity: Identity, role: Role, texts: Sequence[str]) -> list[bytes]:
    """32-byte cache keys: SHA-256 of identity key, precision, window, role and text.

    For a :class:`TokenIdentity`: of its key (which covers everything), role and text.

    Examples
    --------
    >>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 8, 128)
    >>> a, b = text_keys(ident, "query", ["x", "x"])
    >>> a == b, len(a), a == text_keys(ident, "passage", ["x"])[0]
    (True, 32, False)
    >>> a == text_keys(TokenIdentity(ident, "rules-v1"), "query", ["x"])[0]
    False
    """
    if isinstance(identity, TokenIdentity):
        identity.encoder.prefix(role)  # validates role
        head = f"hierret-tokens-v1\0{identity.key()}\0{role}\0"
    else:
        identity.prefix(role)  # validates role
        head = (
            f"hierret-vector-v1\0{identity.key()}\0{identity.precision}\0"
            f"{identity.window}\0{role}\0"
        )
    base = hashlib.sha256(head.encode())
    keys = []
    for text in texts:
        h = base.copy()
        h.update(text.encode("utf-8", "surrogatepass"))
        keys.append(h.digest())
    return keys


@dataclass
class CacheStats:
    """Counters since creation.

    Attributes
    ----------
    hits, misses : int
        Distinct keys found / not found.
    duplicates : int
        Texts repeated within one request (served by the first copy).
    stored : int
        Vectors written.
    corrupt : int
        Records found damaged and ignored.
    """

    hits: int = 0
    misses: int = 0
    duplicates: int = 0
    stored: int = 0
    corrupt: int = 0

    @property
    def hit_rate(self) -> float:
        """``hits / (hits + misses)``; 0 before any lookup."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def as_dict(self) -> dict[str, int | float]:
        """Counters plus ``hit_rate``, for tables and logs."""
        return {**asdict(self), "hit_rate": self.hit_rate}


def _record_dtype(dimension: int, ragged: bool = False) -> np.dtype[Any]:
    if ragged:  # the rows follow the records
        return np.dtype([("key", "V32"), ("start", "<u8"), ("rows", "<u4"), ("crc", "<u4")])
    return np.dtype([("key", "V32"), ("vec", "<f4", (dimension,)), ("crc", "<u4")])


#: What a shard holds per key: a vector (a row of an array), or a token matrix.
Values = NDArray[np.float32] | list[NDArray[np.float32]]

_KEYS_MAGIC = b"HRVKEYS1"
_KEYS_SUFFIX = ".hvk"
#: Bytes per record of a shard's key index (``.hvk``): 8-byte key prefix + 4-byte row.
KEY_INDEX_BYTES = 12
_COPY_ROWS = 1 << 16  # records copied per step when shards are merged


def _prefixes(keys: NDArray[Any] | bytes) -> NDArray[np.uint64]:
    """The first 8 bytes of each 32-byte key, as integers (the key index's sort key)."""
    blob = keys if isinstance(keys, bytes) else np.ascontiguousarray(keys).tobytes()
    return np.frombuffer(blob, dtype="<u8").reshape(-1, 4)[:, 0].copy()


def _key_index(keys: NDArray[Any] | bytes) -> tuple[NDArray[np.uint64], NDArray[np.uint32]]:
    """Sorted key prefixes and the row of each: a shard's key index, made from its keys."""
    pre = _prefixes(keys)
    order = np.argsort(pre, kind="stable")
    return pre[order], order.astype(np.uint32)


def write_key_index(path: Path, keys: NDArray[Any] | bytes) -> None:
    """Write the key index of a shard whose records hold ``keys`` (32-byte digests, in
    row order) to ``path`` (the shard's name with ``.hvk``), atomically.

    Layout: ``b"HRVKEYS1" | uint64 n | n x uint64 key prefix (sorted) | n x uint32 row``,
    little-endian: :data:`KEY_INDEX_BYTES` (12) bytes per record.
    """
    pre, rows = _key_index(keys)
    head = _KEYS_MAGIC + struct.pack("<Q", len(pre))
    atomic_write(path, lambda f: f.writelines([head, pre.tobytes(), rows.tobytes()]))


def _read_key_index(path: Path, n: int) -> tuple[NDArray[np.uint64], NDArray[np.uint32]] | None:
    """The key index at ``path`` memory-mapped (nothing read yet), if it is one of ``n`` records."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if size != 16 + KEY_INDEX_BYTES * n or head[:8] != _KEYS_MAGIC:
        return None
    if struct.unpack("<Q", head[8:16])[0] != n:
        return None
    if not n:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint32)
    pre = np.memmap(path, dtype="<u8", mode="r", offset=16, shape=(n,))
    rows = np.memmap(path, dtype="<u4", mode="r", offset=16 + 8 * n, shape=(n,))
    return pre, rows


class _Shard:
    """One shard file, memory-mapped: opening it reads its header and its key index
    (also memory-mapped), never its records; each record is checked before its first use.

    ``payload`` holds the rows of a ragged shard's matrices (``row_bytes`` each).
    """

    def __init__(
        self,
        path: Path,
        raw: NDArray[np.uint8] | bytes | memoryview,
        dtype: np.dtype[Any],
        seed: int,
        payload: NDArray[np.uint8] | bytes | memoryview = b"",
        row_bytes: int = 0,
    ) -> None:
        self.path = path
        #: the memory-mapped files behind it, checked before their bytes are touched
        self.maps: list[object] = [m for m in (raw, payload) if isinstance(m, np.memmap)]
        self.raw_map = raw
        self._extents: list[tuple[Any, int, str]] | None = None  # found on first check
        self.raw = memoryview(raw).cast("B")  # type: ignore[arg-type]
        self.size = dtype.itemsize
        self.records = np.frombuffer(self.raw, dtype=dtype)
        self.seed = seed
        self.payload = memoryview(payload).cast("B")  # type: ignore[arg-type]
        self.row_bytes = row_bytes
        self._checked: NDArray[np.bool_] | None = None  # made on first use (1 byte a record)
        self.bad: set[int] = set()  # rows found corrupt: never served again
        self.damaged = False
        self.prefix: NDArray[np.uint64] = np.zeros(0, np.uint64)
        self.rows: NDArray[np.uint32] = np.zeros(0, np.uint32)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def checked(self) -> NDArray[np.bool_]:
        if self._checked is None:
            self._checked = np.zeros(len(self.records), dtype=bool)
        return self._checked

    def index_keys(self, keys_path: Path | None, persist: bool) -> None:
        """Map the key index at ``keys_path``, or make it from the records (reading
        every key once: a shard written before key indexes, or by an older
        hierret) and, when ``persist``, write it there (best effort)."""
        found = _read_key_index(keys_path, len(self)) if keys_path is not None else None
        if found is None:
            keys = np.ascontiguousarray(self.records["key"]).tobytes()
            found = _key_index(keys)
            if persist and keys_path is not None:
                try:
                    write_key_index(keys_path, keys)
                except OSError as err:  # a read-only cache: kept in memory
                    log.debug("vector cache: key index %s not written (%s)", keys_path, err)
        self.prefix, self.rows = found
        self.maps = _widest(self.maps + [m for m in found if isinstance(m, np.memmap)])

    def shrank(self) -> MappedFileShrankError | None:
        """The error to raise if a file behind this shard is now shorter than its
        mapping (reading it would SIGBUS), else ``None``: one ``fstat`` a file."""
        if self._extents is None:
            self._extents = [e for e in map(mapped_extent, self.maps) if e is not None]
        try:
            check_extents(self._extents, "vectors")
        except MappedFileShrankError as err:
            return err
        return None

    def vectors(self) -> NDArray[np.float32]:
        """Every record's vector: a view of the memory-mapped file (a
        :class:`numpy.memmap`, so :func:`~hierret._mapped.check_mapped` can check it)."""
        if isinstance(self.raw_map, np.memmap):
            return self.raw_map.view(self.records.dtype)["vec"]
        return np.asarray(self.records["vec"])

    def find(
        self, keys: Sequence[bytes], prefix: NDArray[np.uint64]
    ) -> tuple[NDArray[np.intp], NDArray[np.intp], int]:
        """Positions in ``keys`` stored here, their rows, and how many keys pointed at
        a record holding another key (damage)."""
        n = len(self.prefix)
        if not n or not len(keys):
            return np.zeros(0, np.intp), np.zeros(0, np.intp), 0
        at = np.searchsorted(self.prefix, prefix)
        hit = np.flatnonzero(at < n)
        hit = hit[self.prefix[at[hit]] == prefix[hit]]
        rows = self.rows[at[hit]].astype(np.intp)
        want = np.frombuffer(b"".join(keys[p] for p in hit.tolist()), dtype="V32")
        same = np.asarray(self.records["key"][rows]) == want
        if self.bad:
            same &= ~np.isin(rows, list(self.bad))
        if same.all():  # the usual case: one record per prefix, sound
            return hit, rows, 0
        pos_out, rows_out = hit[same].tolist(), rows[same].tolist()
        wrong = 0
        for p, a in zip(hit[~same].tolist(), at[hit[~same]].tolist(), strict=True):
            while a < n and int(self.prefix[a]) == int(prefix[p]):  # rarely more than one
                row = int(self.rows[a])
                if row not in self.bad and self.records["key"][row].tobytes() == keys[p]:
                    pos_out.append(p)
                    rows_out.append(row)
                    break
                a += 1
            else:
                wrong += 1
        order = np.argsort(pos_out)
        return np.asarray(pos_out, np.intp)[order], np.asarray(rows_out, np.intp)[order], wrong

    def _span(self, row: int) -> tuple[int, int]:
        """Byte range of a ragged record's matrix in :attr:`payload`."""
        start = int(self.records["start"][row]) * self.row_bytes
        return start, start + int(self.records["rows"][row]) * self.row_bytes

    def crc(self, row: int) -> int | None:
        """The checksum record ``row`` should carry (with its matrix's bytes, when
        ragged); ``None`` when the matrix runs past the end of :attr:`payload`."""
        size = self.size
        crc = zlib.crc32(self.raw[row * size : (row + 1) * size - 4], self.seed)
        if not self.row_bytes:
            return crc
        a, b = self._span(row)
        return zlib.crc32(self.payload[a:b], crc) if b <= len(self.payload) else None

    def values(self, rows: NDArray[np.intp]) -> Values:
        """The vectors of ``rows`` (an array), or their matrices (read-only views)."""
        if not self.row_bytes:
            return np.asarray(self.records["vec"][rows])
        d = self.row_bytes // 4
        out = []
        for r in rows.tolist():
            a, b = self._span(r)
            out.append(np.frombuffer(self.payload[a:b], dtype="<f4").reshape(-1, d))
        return out

    def verify(self, rows: NDArray[np.intp]) -> NDArray[np.bool_]:
        """``True`` for each row whose checksum holds."""
        ok = np.ones(len(rows), dtype=bool)
        crcs = self.records["crc"]
        checked = self.checked
        for j, r in enumerate(rows.tolist()):
            if checked[r]:
                continue
            if r not in self.bad and self.crc(r) == int(crcs[r]):
                checked[r] = True
            else:
                ok[j] = False
                self.bad.add(r)
        return ok


def _widest(maps: list[object]) -> list[object]:
    """One mapping per file, the one reaching furthest into it: checking its file's
    size covers the others (one ``fstat`` a file, not one a mapping)."""
    best: dict[str, tuple[int, object]] = {}
    for m in maps:
        found = mapped_extent(m)
        if found is not None and found[1] >= best.get(found[2], (-1, None))[0]:
            best[found[2]] = (found[1], m)
    return [m for _, m in best.values()]


def _keys_path(shard: Path) -> Path:
    return shard.with_suffix(_KEYS_SUFFIX)


def _new_name() -> str:
    return f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}{_SUFFIX}"


class _UnreadableShard(Exception):
    """:meth:`_Shelf._read`: the shard exists but cannot be opened (logged, left alone)."""


class _Shelf:
    """All shards of one identity, memory-mapped, each with its key index; token
    matrices (a :class:`TokenIdentity`) in ragged shards."""

    def __init__(self, folder: Path, identity: Identity) -> None:
        self.folder = folder
        self.identity = identity
        self.ident_key = identity.key()
        self.seed = zlib.crc32(self.ident_key.encode())
        self.ragged = isinstance(identity, TokenIdentity)
        self.row_bytes = 4 * identity.dimension if self.ragged else 0
        self.dtype = _record_dtype(identity.dimension, self.ragged)
        self.shards: list[_Shard] = []
        self.broken: list[Path] = []  # unreadable files, removed at the next write
        self.seen: set[str] = set()  # shard names read (or given up on) already
        self.writable = False  # probed once successfully
        if self._listing() is not None:
            self._remove_stale_tmp()
        self.refresh()

    def _listing(self) -> list[str] | None:
        """Names in the folder; ``None`` when there is no folder (nothing stored yet)."""
        try:
            return os.listdir(self.folder)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:
            raise CacheNotReadableError(
                f"vector cache folder {self.folder} cannot be read ({err.strerror or err}); "
                f"fix its permissions, or {_FIX}",
                self.folder,
            ) from err

    def refresh(self) -> bool:
        """Open the shards that appeared since the last listing; ``True`` if any.

        A shard that vanishes between listing and reading was compacted into a
        newer shard by another process: list again, at most ``_LIST_TRIES`` times.
        """
        added = False
        for _ in range(_LIST_TRIES):
            names = self._listing() or []
            vanished = False
            for name in sorted(n for n in names if n.endswith(_SUFFIX) and n not in self.seen):
                path = self.folder / name
                try:
                    shard = self._read(path)
                except FileNotFoundError:
                    vanished = True
                    continue
                except _UnreadableShard:
                    self.seen.add(name)
                    continue
                self.seen.add(name)
                if shard is None:
                    self.broken.append(path)
                else:
                    self._add(shard)
                    added = True
            if not vanished:
                break
        else:
            log.info(
                "vector cache: shards in %s keep vanishing; missing vectors recomputed", self.folder
            )
        return added

    def _remove_stale_tmp(self) -> None:
        """Remove old temporary files, and old key indexes whose shard is gone."""
        now = time.time()
        stale = list(self.folder.glob(TEMP_PREFIX + "*"))
        stale += [
            k for k in self.folder.glob("*" + _KEYS_SUFFIX) if not k.with_suffix(_SUFFIX).exists()
        ]
        for tmp in stale:
            try:
                if now - tmp.stat().st_mtime > _STALE_TMP_S:
                    tmp.unlink()
            except OSError:  # pragma: no cover - raced or permissions
                pass

    def _read(self, path: Path) -> _Shard | None:
        """The shard at ``path`` (memory-mapped); ``None`` if damaged (removed at the
        next write). Reads its header and its key index's header only.

        Raises :class:`FileNotFoundError` when it vanished (another process
        compacted it) and :class:`_UnreadableShard` when it cannot be opened.
        """
        try:
            with path.open("rb") as f:
                size = os.fstat(f.fileno()).st_size
                data = f.read(12)
                if len(data) == 12 and data[:8] == _MAGIC:
                    data += f.read(_U32.unpack_from(data, 8)[0] + 4)
        except FileNotFoundError:
            raise
        except OSError as err:  # another user's 0600 shard, a folder named *.hvc, EIO
            log.warning(
                "vector cache: cannot read shard %s (%s); its vectors will be recomputed",
                path,
                err.strerror or err,
            )
            raise _UnreadableShard(path) from err
        try:
            if data[:8] != _MAGIC:
                raise ValueError("not a hierret vector shard")
            (hlen,) = _U32.unpack_from(data, 8)
            head = data[12 : 12 + hlen]
            (hcrc,) = _U32.unpack_from(data, 12 + hlen)
            if zlib.crc32(head) != hcrc:
                raise ValueError("header checksum mismatch")
            meta = json.loads(head)
            if meta.get("format") != _FORMAT:
                log.warning(
                    "vector cache: shard %s is in format %r, and this hierret reads format "
                    "%d only: it is left alone (not read, not deleted) and the vectors it may "
                    "hold are recomputed here; upgrade hierret to the version that wrote it, "
                    "or give each version its own cache folder (HIERRET_CACHE or --cache-dir)",
                    path,
                    meta.get("format"),
                    _FORMAT,
                )
                raise _UnreadableShard(path)
            if meta.get("identity") != self.ident_key:
                raise ValueError(f"written for identity {meta.get('identity')!r}")
            if meta.get("dimension") != self.identity.dimension:
                raise ValueError(f"dimension {meta.get('dimension')}")
            if meta.get("layout", "fixed") != ("ragged" if self.ragged else "fixed"):
                raise ValueError(f"layout {meta.get('layout')!r}")
            count, total = int(meta["count"]), int(meta["rows"]) if self.ragged else 0
            if count < 0 or total < 0:
                raise ValueError(f"record count {count}, rows {total}")
        except (ValueError, KeyError, TypeError, AttributeError, struct.error) as err:
            log.warning("vector cache: ignoring unreadable shard %s (%s)", path, err)
            return None
        start = 16 + hlen
        body = max(size - start, 0)
        rec = self.dtype.itemsize
        whole = min(body // rec, count)
        pay_len = max(min(body - count * rec, total * self.row_bytes), 0)
        raw = _map(path, start, whole * rec)
        payload = _map(path, start + count * rec, pay_len) if self.ragged else b""
        shard = _Shard(path, raw, self.dtype, self.seed, payload, self.row_bytes)
        damaged = whole != count or body != count * rec + total * self.row_bytes
        shard.index_keys(_keys_path(path), persist=not damaged)
        if damaged:
            log.warning(
                "vector cache: shard %s is truncated or padded (%d bytes for %d records); "
                "missing records will be recomputed",
                path,
                body,
                count,
            )
            shard.damaged = True
        return shard

    def _add(self, shard: _Shard) -> None:
        self.shards.append(shard)

    def drop_shrunk(self) -> None:
        """Before the shards' mapped bytes are touched: forget each shard whose file
        became shorter than its mapping (overwritten in place under this process:
        reading it would SIGBUS), with a warning, and read it again as it is now."""
        shrunk = [(s, err) for s in self.shards if (err := s.shrank()) is not None]
        if not shrunk:
            return
        for shard, err in shrunk:
            log.warning(
                "vector cache: %s shrank from %d to %d bytes under this process (a cp or "
                "rsync --inplace over a cache in use?); it is read again as it is now and "
                "what it lost is recomputed. Copy a cache in use to a new folder, never over it",
                err.path,
                err.mapped,
                err.size,
            )
            self.seen.discard(shard.path.name)
        gone = {id(s) for s, _ in shrunk}
        self.shards = [s for s in self.shards if id(s) not in gone]
        self.refresh()

    def count(self) -> int:
        """Distinct keys stored (by their 8-byte prefixes; reads the key indexes only)."""
        self.drop_shrunk()
        parts = [s.prefix for s in self.shards if len(s.prefix)]
        return len(np.unique(np.concatenate(parts))) if parts else 0

    def contains(self, keys: Sequence[bytes]) -> NDArray[np.bool_]:
        """Which keys some shard holds (key indexes and keys only; no vector is copied)."""
        found = np.zeros(len(keys), dtype=bool)
        if keys:
            self.drop_shrunk()
            prefix = _prefixes(b"".join(keys))
            for shard in self.shards:
                found[shard.find(keys, prefix)[0]] = True
        return found

    def get(
        self, keys: Sequence[bytes], stats: CacheStats
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        out = np.zeros((len(keys), self.identity.dimension), dtype=np.float32)
        found = np.zeros(len(keys), dtype=bool)
        for shard, pos, rows in self._locate(keys, stats):
            out[pos] = shard.values(rows)
            found[pos] = True
        return out, found

    def get_matrices(
        self, keys: Sequence[bytes], stats: CacheStats
    ) -> list[NDArray[np.float32] | None]:
        out: list[NDArray[np.float32] | None] = [None] * len(keys)
        for shard, pos, rows in self._locate(keys, stats):
            for p, matrix in zip(pos.tolist(), shard.values(rows), strict=True):
                out[p] = matrix
        return out

    def _locate(
        self, keys: Sequence[bytes], stats: CacheStats
    ) -> list[tuple[_Shard, NDArray[np.intp], NDArray[np.intp]]]:
        """Per shard, the positions in ``keys`` found there with sound records, and
        those records' rows (a key in several shards: the newest); damaged records
        are logged, counted and never served again."""
        if not keys:
            return []
        self.drop_shrunk()
        prefix = _prefixes(b"".join(keys))
        owner = np.full(len(keys), -1, dtype=np.intp)
        where = np.zeros(len(keys), dtype=np.intp)
        for i, shard in enumerate(self.shards):  # later shards win
            pos, rows, wrong = shard.find(keys, prefix)
            owner[pos], where[pos] = i, rows
            if wrong:
                log.warning(
                    "vector cache: %d key(s) of %s's key index point at other keys; recomputing",
                    wrong,
                    shard.path,
                )
                stats.corrupt += wrong
                shard.damaged = True
        found = []
        for i in np.unique(owner[owner >= 0]).tolist():
            shard = self.shards[i]
            pos_a = np.flatnonzero(owner == i)
            rows_a = where[pos_a]
            ok = shard.verify(rows_a)  # rows found bad before are never found again
            if not ok.all():
                bad = int((~ok).sum())
                log.warning(
                    "vector cache: %d corrupt record(s) in %s (checksum mismatch); recomputing",
                    bad,
                    shard.path,
                )
                stats.corrupt += bad
                shard.damaged = True
            found.append((shard, pos_a[ok], rows_a[ok]))
        return found

    def check_writable(self) -> None:
        """Create the folder and a probe file in it, or raise :class:`CacheNotWritableError`."""
        if self.writable:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)  # 0o777 & ~umask
            fd, probe = create_temp(self.folder)
            os.close(fd)
            probe.unlink()
        except OSError as err:
            raise CacheNotWritableError(
                f"vector cache folder {self.folder} is not writable ({err.strerror or err}); "
                + _FIX,
                self.folder,
            ) from err
        self.writable = True

    def put(self, keys: Sequence[bytes], values: Values) -> None:
        self.check_writable()
        self.folder.mkdir(parents=True, exist_ok=True)  # in case it was cleared since
        ident_file = self.folder / "identity.json"
        if not ident_file.exists():
            doc = {"key": self.ident_key, **self.identity.as_dict()}
            atomic_write(ident_file, json.dumps(doc, indent=2).encode())
        name = _new_name()
        shard = self._write(self.folder / name, keys, values)
        self.seen.add(name)
        self._add(shard)

    def _prelude(self, count: int, rows: int | None = None) -> bytes:
        meta: dict[str, Any] = {
            "format": _FORMAT,
            "identity": self.ident_key,
            "dimension": self.identity.dimension,
            "count": count,
            "name": self.identity.name,
        }
        if rows is not None:
            meta |= {"layout": "ragged", "rows": rows}
        head = json.dumps(meta, sort_keys=True).encode()
        return _MAGIC + _U32.pack(len(head)) + head + _U32.pack(zlib.crc32(head))

    def _write(self, path: Path, keys: Sequence[bytes], values: Values) -> _Shard:
        """Write one shard (its key index first, so that a visible shard has one)."""
        records = np.zeros(len(keys), dtype=self.dtype)
        blob = b"".join(keys)
        records["key"] = np.frombuffer(blob, dtype="V32")
        payload = b""
        total = None
        if self.ragged:
            counts = np.asarray([len(m) for m in values], dtype=np.int64)
            records["rows"] = counts
            records["start"] = np.cumsum(counts) - counts
            payload = b"".join(np.ascontiguousarray(m, dtype="<f4").tobytes() for m in values)
            total = int(counts.sum())
        else:
            records["vec"] = values
        shard = _Shard(path, records.tobytes(), self.dtype, self.seed, payload, self.row_bytes)
        records["crc"] = [shard.crc(r) for r in range(len(keys))]
        prelude = self._prelude(len(keys), total)
        body = records.tobytes()
        write_key_index(_keys_path(path), blob)
        try:
            atomic_write(path, lambda f: f.writelines([prelude, body, payload]))
        except BaseException:
            _keys_path(path).unlink(missing_ok=True)
            raise
        shard = _Shard(path, body, self.dtype, self.seed, payload, self.row_bytes)
        shard.prefix, shard.rows = _key_index(blob)
        shard.checked[:] = True
        return shard

    def merge_some(self, max_shards: int) -> None:
        """Merge the smallest shards, size tier by size tier (powers of 4 records),
        until at most ``max(max_shards - 8, max_shards // 2)`` shards are left.

        A record is rewritten about once per tier, so embedding in many small
        batches costs a few rewrites of each vector (simulated: 3.9 writes per
        record for 10,000 batches, 11 for 300,000), not one rewrite of the whole
        cache per merge.
        """
        self.drop_shrunk()
        sizes = [len(s) for s in self.shards]
        if len(sizes) < 2:
            return
        target = max(max_shards - 8, max_shards // 2, 1)
        tier = min(_tier(n) for n in sizes)
        while True:
            chosen = [i for i, n in enumerate(sizes) if _tier(n) <= tier]
            if len(chosen) == len(sizes):
                break
            if len(chosen) >= 2 and len(sizes) - len(chosen) + 1 <= target:
                break
            tier += 1
        self.compact(everything=False, chosen=chosen)

    def compact(self, everything: bool, chosen: list[int] | None = None) -> None:
        """Rewrite the sound records of the damaged shards (of all shards when
        ``everything``; of ``chosen`` ones when given) into one new shard, shard by
        shard, and delete the old files.

        A key held by several of them is kept once (the newest). Vector records are
        copied a block at a time (memory: 32 bytes a record for the keys, plus one
        block); token matrices are gathered in memory.
        """
        if chosen is None:
            self.drop_shrunk()
            chosen = [i for i, s in enumerate(self.shards) if everything or s.damaged]
        plan: list[tuple[_Shard, NDArray[np.intp]]] = []
        for i in chosen:
            shard = self.shards[i]
            rows = np.arange(len(shard), dtype=np.intp)
            ok = shard.verify(rows)
            if not ok.all():
                log.warning(
                    "vector cache: dropping %d corrupt record(s) from %s",
                    int((~ok).sum()),
                    shard.path,
                )
            plan.append((shard, rows[ok]))
        keys = np.concatenate(
            [np.asarray(s.records["key"][r]) for s, r in plan] or [np.zeros(0, "V32")]
        )
        _, last = np.unique(keys[::-1], return_index=True)  # the newest copy of each key
        keep = np.zeros(len(keys), dtype=bool)
        keep[len(keys) - 1 - last] = True
        old = [self.shards[i].path for i in chosen] + self.broken
        kept = [s for i, s in enumerate(self.shards) if i not in set(chosen)]
        self.shards, self.broken = kept, []
        if keep.any():
            name = _new_name()
            self.seen.add(name)
            path = self.folder / name
            start, parts = 0, []
            for shard, rows in plan:
                parts.append((shard, rows[keep[start : start + len(rows)]]))
                start += len(rows)
            if self.ragged:
                kk = [k for s, r in parts for k in _key_list(s, r)]
                vals = [m for s, r in parts for m in s.values(r)]
                self._add(self._write(path, kk, vals))
            else:
                self._add(self._merge(path, keys[keep], parts))
        for path in old:
            path.unlink(missing_ok=True)
            _keys_path(path).unlink(missing_ok=True)

    def _merge(
        self, path: Path, keys: NDArray[Any], parts: list[tuple[_Shard, NDArray[np.intp]]]
    ) -> _Shard:
        """Copy the chosen records of vector shards into one new shard, a block at a time."""
        blob = np.ascontiguousarray(keys).tobytes()
        prelude = self._prelude(len(keys))

        def copy(f: Any) -> None:
            f.write(prelude)
            for shard, rows in parts:
                for lo in range(0, len(rows), _COPY_ROWS):
                    f.write(shard.records[rows[lo : lo + _COPY_ROWS]].tobytes())

        write_key_index(_keys_path(path), blob)
        try:
            atomic_write(path, copy)
        except BaseException:
            _keys_path(path).unlink(missing_ok=True)
            raise
        shard = self._read(path)
        assert shard is not None  # just written
        shard.checked[:] = True
        return shard


def _tier(records: int) -> int:
    """Size tier of a shard: floor(log4(records))."""
    return (max(records, 1).bit_length() - 1) // 2


def _key_list(shard: _Shard, rows: NDArray[np.intp]) -> list[bytes]:
    blob = np.ascontiguousarray(shard.records["key"][rows]).tobytes()
    return [blob[i : i + 32] for i in range(0, len(blob), 32)]


def _map(path: Path, offset: int, length: int) -> NDArray[np.uint8] | bytes:
    """``length`` bytes of ``path`` from ``offset``, memory-mapped read-only (nothing read)."""
    if length <= 0:
        return b""
    return np.memmap(path, dtype=np.uint8, mode="r", offset=offset, shape=(length,))


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
        self._shelves: dict[str, _Shelf] = {}

    def __repr__(self) -> str:
        return f"VectorCache({str(self.root)!r})"

    def _shelf(self, identity: Identity, ragged: bool | None = None) -> _Shelf:
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
            shelf = self._shelves[key] = _Shelf(self.root / key, identity)
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
        (:class:`hierret.index.MappedIndex`). The vectors are
        :class:`numpy.memmap` views: a shard overwritten in place later (``cp``
        over a cache in use) makes :class:`~hierret.index.MappedIndex` raise
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
            out.append((_key_list(shard, rows), vecs))
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
                    path.suffix in (_SUFFIX, _KEYS_SUFFIX)
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

    Attributes
    ----------
    stats : CacheStats
        Hits, misses and duplicates of this encoder's requests.
    """

    def __init__(self, encoder: Encoder, cache: VectorCache | None = None) -> None:
        self.encoder = encoder
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
        if len(missing):
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
            (:mod:`hierret.embed_ray`) while this process stays the only writer.
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
                f"kept): free space there or fix its permissions, or {_FIX}; then run "
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
                    f"permissions, or {_FIX}. Vectors are computed but not stored "
                    "from here on (this warning is shown once per encoder); those "
                    f"stored before ({self.stats.stored} by this encoder) are kept.",
                    CacheNotWritableWarning,
                    stacklevel=5,
                )
            self._warned = True
            return False
        self.stats.stored += len(keys)
        return True


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


def can_store(cache: VectorCache, identity: Identity, *, warn: bool, what: str) -> bool:
    """Whether ``cache`` can store what ``identity`` computes; when not and ``warn``,
    a :class:`CacheNotWritableWarning` saying ``what`` is computed but not stored.

    What :class:`CachedEncoder` (and :class:`~hierret.rerank.MaxSimReranker`) ask
    before computing anything, each warning once.

    Examples
    --------
    >>> import tempfile
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
    from hierret.encoders import load_encoder_lazily

    store = cache if cache is not None else VectorCache()
    return CachedEncoder(load_encoder_lazily(name, store.root / "identities", **kw), store)
