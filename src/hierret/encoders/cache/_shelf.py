"""A shelf: every shard of one identity in its folder, listed, read, written and merged.

Private to :mod:`hierret.encoders.cache`: :class:`~hierret.encoders.cache.VectorCache` keeps one
shelf per identity. The bytes of each file are :mod:`hierret.encoders.cache._format`'s.
:class:`CacheStats` holds the counters a shelf adds to (corrupt records) and its
store and encoders keep.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import time
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret._files import TEMP_PREFIX, atomic_write, create_temp
from hierret.encoders.cache._errors import FIX, CacheNotReadableError, CacheNotWritableError
from hierret.encoders.cache._format import (
    COPY_ROWS,
    FORMAT,
    KEYS_SUFFIX,
    MAGIC,
    SUFFIX,
    U32,
    Shard,
    Values,
    key_index,
    key_index_path,
    prefixes,
    record_dtype,
    write_key_index,
)
from hierret.encoders.cache._keys import Identity, TokenIdentity

log = logging.getLogger(
    "hierret.encoders.cache"
)  # one logger for the whole cache, as before the split

_STALE_TMP_S = 600.0
_LIST_TRIES = 5  # listings of a folder whose shards keep vanishing (others compacting)


def _new_name() -> str:
    return f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}{SUFFIX}"


class _UnreadableShard(Exception):
    """:meth:`Shelf._read`: the shard exists but cannot be opened (logged, left alone)."""


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


class Shelf:
    """All shards of one identity, memory-mapped, each with its key index; token
    matrices (a :class:`TokenIdentity`) in ragged shards."""

    def __init__(self, folder: Path, identity: Identity) -> None:
        self.folder = folder
        self.identity = identity
        self.ident_key = identity.key()
        self.seed = zlib.crc32(self.ident_key.encode())
        self.ragged = isinstance(identity, TokenIdentity)
        self.row_bytes = 4 * identity.dimension if self.ragged else 0
        self.dtype = record_dtype(identity.dimension, self.ragged)
        self.shards: list[Shard] = []
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
                f"fix its permissions, or {FIX}",
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
            for name in sorted(n for n in names if n.endswith(SUFFIX) and n not in self.seen):
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
            k for k in self.folder.glob("*" + KEYS_SUFFIX) if not k.with_suffix(SUFFIX).exists()
        ]
        for tmp in stale:
            try:
                if now - tmp.stat().st_mtime > _STALE_TMP_S:
                    tmp.unlink()
            except OSError:  # pragma: no cover - raced or permissions
                pass

    def _read(self, path: Path) -> Shard | None:
        """The shard at ``path`` (memory-mapped); ``None`` if damaged (removed at the
        next write). Reads its header and its key index's header only.

        Raises :class:`FileNotFoundError` when it vanished (another process
        compacted it) and :class:`_UnreadableShard` when it cannot be opened.
        """
        try:
            with path.open("rb") as f:
                size = os.fstat(f.fileno()).st_size
                data = f.read(12)
                if len(data) == 12 and data[:8] == MAGIC:
                    data += f.read(U32.unpack_from(data, 8)[0] + 4)
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
            if data[:8] != MAGIC:
                raise ValueError("not a hierret vector shard")
            (hlen,) = U32.unpack_from(data, 8)
            head = data[12 : 12 + hlen]
            (hcrc,) = U32.unpack_from(data, 12 + hlen)
            if zlib.crc32(head) != hcrc:
                raise ValueError("header checksum mismatch")
            meta = json.loads(head)
            if meta.get("format") != FORMAT:
                log.warning(
                    "vector cache: shard %s is in format %r, and this hierret reads format "
                    "%d only: it is left alone (not read, not deleted) and the vectors it may "
                    "hold are recomputed here; upgrade hierret to the version that wrote it, "
                    "or give each version its own cache folder (HIERRET_CACHE or --cache-dir)",
                    path,
                    meta.get("format"),
                    FORMAT,
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
        shard = Shard(path, raw, self.dtype, self.seed, payload, self.row_bytes)
        damaged = whole != count or body != count * rec + total * self.row_bytes
        shard.index_keys(key_index_path(path), persist=not damaged)
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

    def _add(self, shard: Shard) -> None:
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
            prefix = prefixes(b"".join(keys))
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
    ) -> list[tuple[Shard, NDArray[np.intp], NDArray[np.intp]]]:
        """Per shard, the positions in ``keys`` found there with sound records, and
        those records' rows (a key in several shards: the newest); damaged records
        are logged, counted and never served again."""
        if not keys:
            return []
        self.drop_shrunk()
        prefix = prefixes(b"".join(keys))
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
                + FIX,
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
            "format": FORMAT,
            "identity": self.ident_key,
            "dimension": self.identity.dimension,
            "count": count,
            "name": self.identity.name,
        }
        if rows is not None:
            meta |= {"layout": "ragged", "rows": rows}
        head = json.dumps(meta, sort_keys=True).encode()
        return MAGIC + U32.pack(len(head)) + head + U32.pack(zlib.crc32(head))

    def _write(self, path: Path, keys: Sequence[bytes], values: Values) -> Shard:
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
        shard = Shard(path, records.tobytes(), self.dtype, self.seed, payload, self.row_bytes)
        records["crc"] = [shard.crc(r) for r in range(len(keys))]
        prelude = self._prelude(len(keys), total)
        body = records.tobytes()
        write_key_index(key_index_path(path), blob)
        try:
            atomic_write(path, lambda f: f.writelines([prelude, body, payload]))
        except BaseException:
            key_index_path(path).unlink(missing_ok=True)
            raise
        shard = Shard(path, body, self.dtype, self.seed, payload, self.row_bytes)
        shard.prefix, shard.rows = key_index(blob)
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
        plan: list[tuple[Shard, NDArray[np.intp]]] = []
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
                kk = [k for s, r in parts for k in key_list(s, r)]
                vals = [m for s, r in parts for m in s.values(r)]
                self._add(self._write(path, kk, vals))
            else:
                self._add(self._merge(path, keys[keep], parts))
        for path in old:
            path.unlink(missing_ok=True)
            key_index_path(path).unlink(missing_ok=True)

    def _merge(
        self, path: Path, keys: NDArray[Any], parts: list[tuple[Shard, NDArray[np.intp]]]
    ) -> Shard:
        """Copy the chosen records of vector shards into one new shard, a block at a time."""
        blob = np.ascontiguousarray(keys).tobytes()
        prelude = self._prelude(len(keys))

        def copy(f: Any) -> None:
            f.write(prelude)
            for shard, rows in parts:
                for lo in range(0, len(rows), COPY_ROWS):
                    f.write(shard.records[rows[lo : lo + COPY_ROWS]].tobytes())

        write_key_index(key_index_path(path), blob)
        try:
            atomic_write(path, copy)
        except BaseException:
            key_index_path(path).unlink(missing_ok=True)
            raise
        shard = self._read(path)
        assert shard is not None  # just written
        shard.checked[:] = True
        return shard


def _tier(records: int) -> int:
    """Size tier of a shard: floor(log4(records))."""
    return (max(records, 1).bit_length() - 1) // 2


def key_list(shard: Shard, rows: NDArray[np.intp]) -> list[bytes]:
    """The 32-byte keys of ``rows`` of ``shard``, as a list of ``bytes``."""
    blob = np.ascontiguousarray(shard.records["key"][rows]).tobytes()
    return [blob[i : i + 32] for i in range(0, len(blob), 32)]


def _map(path: Path, offset: int, length: int) -> NDArray[np.uint8] | bytes:
    """``length`` bytes of ``path`` from ``offset``, memory-mapped read-only (nothing read)."""
    if length <= 0:
        return b""
    return np.memmap(path, dtype=np.uint8, mode="r", offset=offset, shape=(length,))
