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
0.1 byte a record; ``tests/core/test_cache_scale.py``). Pages of the key index and
of the records are mapped as lookups touch them (shared page cache, at most
the files' size). :meth:`VectorCache.mapped` gives every shard's vectors,
memory-mapped, for exact search over the whole cache
(:class:`hierret.search.vectors.index.MappedIndex`, bit-identical to
:class:`~hierret.search.vectors.index.VectorIndex`).

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
interaction: :class:`hierret.search.rerank.MaxSimReranker`) are kept the same way,
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

The package is four rooms behind this face, each private (every public name is
listed here; import from ``hierret.encoders.cache``):

- ``_format``: the bytes of a shard and of its key index, and one shard file
  opened memory-mapped (``_keys``: the identities and the 32-byte text keys
  records are found by);
- ``_shelf``: every shard of one identity in its folder: listing, reading,
  writing, repairing and merging (and :class:`CacheStats`, the counters);
- ``_store``: :class:`VectorCache`, one shelf per identity under a root;
- ``_encoder``: :class:`CachedEncoder`, the encoder users meet, and
  :func:`cached_encoder`;
- ``_plan``: a plan of what a run would embed, made without embedding
  (``$HIERRET_PLAN``; ``hierret embed --plan`` and ``docs/warm.py`` use it).

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

from hierret._env import CACHE_ENV, default_cache_dir
from hierret.encoders.cache._encoder import CachedEncoder, cached_encoder, can_store
from hierret.encoders.cache._errors import (
    CacheAccessError,
    CacheNotReadableError,
    CacheNotWritableError,
    CacheNotWritableWarning,
    CacheWriteError,
    MissingVectorsError,
)
from hierret.encoders.cache._format import KEY_INDEX_BYTES, write_key_index
from hierret.encoders.cache._format import (
    Values as Values,  # type aliases: importable, not in __all__
)
from hierret.encoders.cache._keys import Batches as Batches
from hierret.encoders.cache._keys import Identity as Identity
from hierret.encoders.cache._keys import TokenIdentity, text_keys
from hierret.encoders.cache._plan import PLAN_ENV, Plan, PlanGroup, read_plan
from hierret.encoders.cache._shelf import CacheStats
from hierret.encoders.cache._store import VectorCache

__all__ = [
    "CACHE_ENV",
    "KEY_INDEX_BYTES",
    "PLAN_ENV",
    "CacheAccessError",
    "CacheNotReadableError",
    "CacheNotWritableError",
    "CacheNotWritableWarning",
    "CacheStats",
    "CacheWriteError",
    "CachedEncoder",
    "MissingVectorsError",
    "Plan",
    "PlanGroup",
    "TokenIdentity",
    "VectorCache",
    "cached_encoder",
    "can_store",
    "default_cache_dir",
    "read_plan",
    "text_keys",
    "write_key_index",
]
