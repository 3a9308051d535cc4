"""The vector cache: hits, misses, identity, corruption, atomic writes, compaction."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from hierret.cache import CachedEncoder, VectorCache, default_cache_dir, text_keys
from hierret.encoders import EncoderIdentity, HashEncoder

TEXTS = [f"passage number {i} about topic {i % 7}" for i in range(40)]


class CountingEncoder(HashEncoder):
    """A hash encoder that counts model calls and texts."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.calls: list[list[str]] = []

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        self.calls.append(list(texts))
        return super()._embed(texts)


def shards(root: Path) -> list[Path]:
    return sorted(root.rglob("*.hvc"))


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".tmp-")]


@pytest.fixture
def fake() -> CountingEncoder:
    return CountingEncoder(dimension=16)


def test_second_call_encodes_nothing(tmp_path: Path, fake: CountingEncoder) -> None:
    enc = CachedEncoder(fake, VectorCache(tmp_path))
    first = enc.encode_passages(TEXTS)
    assert len(fake.calls) == 1
    second = enc.encode_passages(TEXTS)
    assert len(fake.calls) == 1
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, fake.encode_passages(TEXTS))
    assert (enc.stats.hits, enc.stats.misses, enc.stats.stored) == (40, 40, 40)
    assert enc.stats.hit_rate == 0.5
    assert enc.stats.as_dict()["hit_rate"] == 0.5
    # a new cache object on the same folder (a later run) finds them too
    again = CachedEncoder(fake, VectorCache(tmp_path))
    np.testing.assert_array_equal(again.encode_passages(TEXTS[::-1]), first[::-1])
    assert len(fake.calls) == 2  # the direct fake.encode_passages above, nothing more
    assert again.cache.stats.hits == 40
    assert not leftovers(tmp_path)


def test_misses_are_deduplicated_and_batched(tmp_path: Path, fake: CountingEncoder) -> None:
    enc = CachedEncoder(fake, VectorCache(tmp_path))
    enc.encode_passages(["a", "b"])
    out = enc.encode_passages(["c", "a", "c", "d", "b", "c"])
    assert fake.calls == [["a", "b"], ["c", "d"]]
    assert enc.stats.duplicates == 2
    np.testing.assert_array_equal(out, fake.encode_passages(["c", "a", "c", "d", "b", "c"]))
    assert enc.encode_passages([]).shape == (0, 16)


def test_identity_and_role_change_are_misses(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    plain, prefixed = (
        CountingEncoder(dimension=16),
        CountingEncoder(dimension=16, query_prefix="q: "),
    )
    CachedEncoder(plain, cache).encode_passages(["x"])
    CachedEncoder(plain, cache).encode_queries(["x"])  # another role: another key
    CachedEncoder(prefixed, cache).encode_passages(["x"])  # another identity
    CachedEncoder(CountingEncoder(dimension=8), cache).encode_passages(["x"])
    assert len(plain.calls) == 2
    assert len(prefixed.calls) == 1
    assert len({p.parent for p in shards(tmp_path)}) == 3
    ident = plain.identity
    assert text_keys(ident, "query", ["x"]) != text_keys(ident, "passage", ["x"])


def corrupt_and_reencode(
    tmp_path: Path, damage: Any, caplog: pytest.LogCaptureFixture, says: str
) -> tuple[CountingEncoder, NDArray[np.float32]]:
    writer = CountingEncoder(dimension=16)
    CachedEncoder(writer, VectorCache(tmp_path)).encode_passages(TEXTS)
    (shard,) = shards(tmp_path)
    damage(shard)
    reader = CountingEncoder(dimension=16)
    enc = CachedEncoder(reader, VectorCache(tmp_path))
    out = enc.encode_passages(TEXTS)
    np.testing.assert_array_equal(out, HashEncoder(dimension=16).encode_passages(TEXTS))
    assert shard.name in caplog.text
    assert says in caplog.text
    assert len(reader.calls) == 1
    # repaired: a later run reads everything back without warnings or work
    caplog.clear()
    later = CountingEncoder(dimension=16)
    np.testing.assert_array_equal(
        CachedEncoder(later, VectorCache(tmp_path)).encode_passages(TEXTS), out
    )
    assert not later.calls
    assert "vector cache" not in caplog.text
    assert not leftovers(tmp_path)
    return reader, out


def test_flipped_bytes_are_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def flip(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[-30] ^= 0xFF  # inside the last record's vector
        data[-170] ^= 0x01  # inside the vector of the record before
        path.write_bytes(bytes(data))

    reader, _ = corrupt_and_reencode(tmp_path, flip, caplog, "checksum mismatch")
    assert len(reader.calls[0]) == 2


def test_truncated_shard_is_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def truncate(path: Path) -> None:
        size = path.stat().st_size
        with path.open("r+b") as f:
            f.truncate(size - 150)  # records are 100 bytes: one and a half lost

    reader, _ = corrupt_and_reencode(tmp_path, truncate, caplog, "truncated")
    assert len(reader.calls[0]) == 2


def test_broken_header_is_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def scramble(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[20] ^= 0xFF
        path.write_bytes(bytes(data))

    reader, _ = corrupt_and_reencode(tmp_path, scramble, caplog, "header checksum")
    assert len(reader.calls[0]) == len(TEXTS)


def test_empty_shard_file_is_detected_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reader, _ = corrupt_and_reencode(tmp_path, lambda p: p.write_bytes(b""), caplog, "unreadable")
    assert len(reader.calls[0]) == len(TEXTS)


def test_failed_write_leaves_nothing_behind(
    tmp_path: Path, fake: CountingEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    enc = CachedEncoder(fake, VectorCache(tmp_path))
    enc.encode_passages(["first"])
    before = sorted(p.name for p in tmp_path.rglob("*"))

    def boom(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        enc.encode_passages(["second"])
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert not leftovers(tmp_path)
    fresh = CountingEncoder(dimension=16)
    CachedEncoder(fresh, VectorCache(tmp_path)).encode_passages(["first", "second"])
    assert fresh.calls == [["second"]]


def test_many_batches_are_compacted(tmp_path: Path, fake: CountingEncoder) -> None:
    cache = VectorCache(tmp_path, max_shards=3)
    enc = CachedEncoder(fake, cache)
    for text in TEXTS[:10]:
        enc.encode_queries([text])
    assert len(shards(tmp_path)) <= 3
    assert cache.count(fake.identity) == 10
    cache.compact(fake.identity)
    assert len(shards(tmp_path)) == 1
    fresh = CountingEncoder(dimension=16)
    out = CachedEncoder(fresh, VectorCache(tmp_path)).encode_queries(TEXTS[:10])
    assert not fresh.calls
    np.testing.assert_array_equal(out, fake.encode_queries(TEXTS[:10]))
    assert not leftovers(tmp_path)


def test_put_get_validation_and_clear(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    ident = EncoderIdentity("m", "hash", "v1", "fp32", 2, 16)
    keys = text_keys(ident, "passage", ["x", "y"])
    with pytest.raises(ValueError, match="shape"):
        cache.put(ident, keys, np.zeros((1, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="32-byte"):
        cache.put(ident, [b"short"], np.zeros((1, 2), dtype=np.float32))
    cache.put(ident, keys, np.eye(2, dtype=np.float32))
    vecs, found = cache.get(ident, keys[::-1])
    assert found.all()
    assert vecs.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert (cache.folder(ident) / "identity.json").is_file()
    cache.clear(ident)
    assert not cache.folder(ident).exists()
    assert not VectorCache(tmp_path).get(ident, keys)[1].any()
    with pytest.raises(ValueError, match="max_shards"):
        VectorCache(tmp_path, max_shards=0)


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HIERRET_CACHE", str(tmp_path / "vec"))
    assert default_cache_dir() == (tmp_path / "vec").resolve()
    assert VectorCache().root == (tmp_path / "vec").resolve()
    monkeypatch.delenv("HIERRET_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == (tmp_path / "xdg" / "hierret" / "vectors").resolve()
