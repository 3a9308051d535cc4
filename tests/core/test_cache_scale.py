"""A cache that scales: it opens without reading vectors, and exact search over its
memory-mapped shards ranks bit for bit as :class:`VectorIndex` does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import hierret
import hierret.encoders.cache._shelf as shelf_module
from hierret.encoders import EncoderIdentity, HashEncoder
from hierret.encoders.cache import KEY_INDEX_BYTES, VectorCache, text_keys
from hierret.search.vectors.index import MappedIndex, VectorIndex

IDENT = EncoderIdentity("synthetic", "hash", "v1", "fp32", 8, 16)


def planted(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Vectors with many exact ties: rows drawn from a few distinct ones, ids shuffled."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((7, 8)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    vecs = base[rng.integers(0, 7, n)] * rng.choice([1.0, 2.0], (n, 1)).astype(np.float32)
    ids = [f"u{i:04d}" for i in rng.permutation(n)]
    return ids, vecs


@pytest.mark.parametrize("n_shards", [1, 2, 3, 4])
def test_search_over_mapped_shards_is_bit_identical(tmp_path: Path, n_shards: int) -> None:
    ids, vecs = planted(150, n_shards)
    cache = VectorCache(tmp_path)
    keys = text_keys(IDENT, "passage", ids)
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    for part in np.array_split(np.arange(len(ids)), n_shards):
        cache.put(IDENT, [keys[i] for i in part], unit[part])
    by_key = dict(zip(keys, ids, strict=True))
    parts = [([by_key[k] for k in ks], v) for ks, v in VectorCache(tmp_path).mapped(IDENT)]
    assert len(parts) == n_shards
    assert not any(v.flags.owndata or v.flags.writeable for _, v in parts)  # mapped views
    mapped = MappedIndex(parts, "synthetic", block_rows=16)
    whole = VectorIndex(ids, unit, "synthetic")
    queries = np.vstack([unit[:3], np.random.default_rng(9).standard_normal((2, 8))])
    for k in (1, 5, 40, 150, 500):
        want = whole.search(queries, k, "synthetic")
        got = mapped.search(queries, k, "synthetic")
        assert got == want  # ids, order and every float score
        assert [[np.float32(s).tobytes() for _, s in r] for r in got] == [
            [np.float32(s).tobytes() for _, s in r] for r in want
        ]


def test_key_index_costs_twelve_bytes_a_record(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    cache.put(
        IDENT,
        text_keys(IDENT, "passage", [str(i) for i in range(100)]),
        np.ones((100, 8), np.float32),
    )
    (index,) = cache.folder(IDENT).glob("*.hvk")
    assert index.stat().st_size == 16 + KEY_INDEX_BYTES * 100 == 16 + 12 * 100


def test_shards_without_key_index_are_read_and_indexed(tmp_path: Path) -> None:
    enc = HashEncoder(dimension=8)
    texts = [f"text {i}" for i in range(30)]
    cache = VectorCache(tmp_path)
    keys = text_keys(enc.identity, "passage", texts)
    cache.put(enc.identity, keys[:20], enc.encode_passages(texts[:20]))
    cache.put(enc.identity, keys[20:], enc.encode_passages(texts[20:]))
    for index in cache.folder(enc.identity).glob("*.hvk"):  # an older hierret's cache
        index.unlink()
    vecs, found = VectorCache(tmp_path).get(enc.identity, keys)
    assert found.all()
    assert vecs.tobytes() == enc.encode_passages(texts).tobytes()
    assert len(list(cache.folder(enc.identity).glob("*.hvk"))) == 2  # written on open


N_BIG = 2_000_000
MEASURE = """
import json, resource, sys
from pathlib import Path
import numpy as np
from hierret.encoders.cache import VectorCache
from hierret.encoders import EncoderIdentity

def io():
    fields = dict(l.split(": ") for l in Path("/proc/self/io").read_text().splitlines())
    status = dict(l.split(":", 1) for l in Path("/proc/self/status").read_text().splitlines())
    return int(fields["rchar"]), int(status["VmRSS"].split()[0]) * 1024
ident = EncoderIdentity.from_dict(json.loads(sys.argv[2]))
cache = VectorCache(sys.argv[1])
r0, m0 = io()
shelf = cache._shelf(ident)
r1, m1 = io()
keys = [bytes.fromhex(k) for k in json.loads(sys.argv[3])]
vecs, found = cache.get(ident, keys)
r2, m2 = io()
print(json.dumps({"open_read": r1 - r0, "open_rss": m1 - m0, "records": len(shelf.shards[0]),
                  "found": found.tolist(), "vecs": vecs.tolist(), "get_rss": m2 - m1}))
"""


def write_synthetic(root: Path, n: int) -> tuple[list[bytes], np.ndarray]:
    """One shard of ``n`` records written directly (random keys and vectors), with its
    key index; checksums only for the 5 records the test reads."""
    shelf = shelf_module.Shelf(root / IDENT.key(), IDENT)
    shelf.folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    records = np.zeros(n, dtype=shelf.dtype)
    records["key"] = np.frombuffer(rng.bytes(32 * n), dtype="V32")
    records["vec"] = rng.standard_normal((n, 8), dtype=np.float32)
    probe = [0, 1, n // 2, n - 2, n - 1]
    for r in probe:
        records["crc"][r] = zlib.crc32(records[r : r + 1].tobytes()[:-4], shelf.seed)
    path = shelf.folder / "00000000000000000001-1-00000000.hvc"
    with path.open("wb") as f:
        f.write(shelf._prelude(n))
        f.write(records.tobytes())
    shelf_module.write_key_index(path.with_suffix(".hvk"), records["key"].tobytes())
    return [records["key"][r].tobytes() for r in probe], records["vec"][probe]


def test_two_million_records_open_without_reading_vectors(tmp_path: Path) -> None:
    keys, want = write_synthetic(tmp_path, N_BIG)
    src = str(Path(hierret.__file__).parents[1])
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            MEASURE,
            str(tmp_path),
            json.dumps(IDENT.as_dict()),
            json.dumps([k.hex() for k in keys]),
        ],
        env={**os.environ, "PYTHONPATH": src},
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got["records"] == N_BIG
    # opening reads the shard's header and its key index's header, never the
    # 136 MB of records (nor the 24 MB key index, which is memory-mapped)
    assert got["open_read"] < 64 * 1024
    assert got["open_rss"] < 0.5 * N_BIG  # stated bound: < 0.5 byte a record
    assert got["found"] == [True] * 5
    assert np.array_equal(np.asarray(got["vecs"], np.float32), want)
    print(
        f"2M records: opening read {got['open_read']} B, RSS +{got['open_rss']} B; "
        f"5 lookups RSS +{got['get_rss']} B"
    )


def test_many_small_batches_merge_by_tier(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, max_shards=8)
    texts = [f"t{i}" for i in range(200)]
    keys = text_keys(IDENT, "passage", texts)
    vecs = np.random.default_rng(1).standard_normal((200, 8)).astype(np.float32)
    for lo in range(0, 200, 2):  # 100 batches of 2
        cache.put(IDENT, keys[lo : lo + 2], vecs[lo : lo + 2])
        assert len(list(cache.folder(IDENT).glob("*.hvc"))) <= 8
    sizes = sorted(len(s) for s in VectorCache(tmp_path)._shelf(IDENT).shards)
    assert sizes[-1] < 200  # not everything merged into one each time
    assert cache.stats.stored == 200
    got, found = VectorCache(tmp_path).get(IDENT, keys)
    assert found.all()
    assert got.tobytes() == vecs.tobytes()
    cache.compact(IDENT)
    assert len(list(cache.folder(IDENT).glob("*.hvc"))) == 1
    assert len(list(cache.folder(IDENT).glob("*.hvk"))) == 1
