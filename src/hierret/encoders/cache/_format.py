"""The files of a vector cache: a shard's header and records, and its key index
(the layout :mod:`hierret.encoders.cache` draws); :class:`Shard` opens one shard file,
memory-mapped, and checks each record before its first use.

Private to :mod:`hierret.encoders.cache`. Nothing here lists or writes a folder's shards
(:mod:`hierret.encoders.cache._shelf` does); a change here changes the bytes on disk.
"""

from __future__ import annotations

import logging
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret._files import atomic_write
from hierret._mapped import MappedFileShrankError, check_extents, mapped_extent

log = logging.getLogger(
    "hierret.encoders.cache"
)  # one logger for the whole cache, as before the split

MAGIC = b"HRVCACHE"
FORMAT = 1
SUFFIX = ".hvc"
U32 = struct.Struct("<I")


def record_dtype(dimension: int, ragged: bool = False) -> np.dtype[Any]:
    """A record of a vector shard (key, vector, crc32), or of a ragged one (key, first
    row, rows, crc32): little-endian, no padding."""
    if ragged:  # the rows follow the records
        return np.dtype([("key", "V32"), ("start", "<u8"), ("rows", "<u4"), ("crc", "<u4")])
    return np.dtype([("key", "V32"), ("vec", "<f4", (dimension,)), ("crc", "<u4")])


#: What a shard holds per key: a vector (a row of an array), or a token matrix.
Values = NDArray[np.float32] | list[NDArray[np.float32]]

_KEYS_MAGIC = b"HRVKEYS1"
KEYS_SUFFIX = ".hvk"
#: Bytes per record of a shard's key index (``.hvk``): 8-byte key prefix + 4-byte row.
KEY_INDEX_BYTES = 12
COPY_ROWS = 1 << 16  # records copied per step when shards are merged


def prefixes(keys: NDArray[Any] | bytes) -> NDArray[np.uint64]:
    """The first 8 bytes of each 32-byte key, as integers (the key index's sort key)."""
    blob = keys if isinstance(keys, bytes) else np.ascontiguousarray(keys).tobytes()
    return np.frombuffer(blob, dtype="<u8").reshape(-1, 4)[:, 0].copy()


def key_index(keys: NDArray[Any] | bytes) -> tuple[NDArray[np.uint64], NDArray[np.uint32]]:
    """Sorted key prefixes and the row of each: a shard's key index, made from its keys."""
    pre = prefixes(keys)
    order = np.argsort(pre, kind="stable")
    return pre[order], order.astype(np.uint32)


def write_key_index(path: Path, keys: NDArray[Any] | bytes) -> None:
    """Write the key index of a shard whose records hold ``keys`` (32-byte digests, in
    row order) to ``path`` (the shard's name with ``.hvk``), atomically.

    Layout: ``b"HRVKEYS1" | uint64 n | n x uint64 key prefix (sorted) | n x uint32 row``,
    little-endian: :data:`KEY_INDEX_BYTES` (12) bytes per record.
    """
    pre, rows = key_index(keys)
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


class Shard:
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
            found = key_index(keys)
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


def key_index_path(shard: Path) -> Path:
    """The key index (``.hvk``) beside ``shard``."""
    return shard.with_suffix(KEYS_SUFFIX)
